/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scripts/ofi-rma-bench.sh's program: RMA through the krcore provider served
 * by the NIC (a region of heap memory, fi_krcore.h) beside the same served
 * by the target's provider (a malloc'ed region), in one run, alternating
 * rounds. A, this process, on node 1; B, a child, on node 2, which only
 * progresses its endpoint (the best case for the served path).
 *   read8, write8  an 8-byte fi_read / fi_write into / from a heap buffer,
 *                  posted and waited for one at a time: p50 round trip (us)
 *   read1m         a 1 MiB fi_read: MB/s
 * Ratios served / direct (latency) and direct / served (bandwidth) are the
 * medians of the rounds' ratios. Prints a table, and with --json one line.
 * Usage: ofi_rma_bench NODE1_SOCKET NODE2_SOCKET [--rounds R] [--json]
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <krcore/fi_krcore.h>

#include "kr_test.h"
#include "ofi_test.h"
#include "ofi/ofi.h"

#define REG_LEN	   (1u << 20)
#define SMALL_OPS  2000
#define BIG_OPS	   40
#define MAX_ROUNDS 9
enum { M_DIRECT, M_SERVED, M_N }; /* the region's key is the mode + 1 */
enum { R_READ8, R_WRITE8, R_READ1M, R_N };

static const struct ofi_how g_how = {
    .caps = FI_MSG | FI_RMA, .cq = FI_CQ_FORMAT_CONTEXT, .av = FI_AV_MAP, .ext = true};
static const char *const row_name[R_N] = {"read8_p50_us", "write8_p50_us", "read1m_mbps"};

/* B: a heap region (key 1) and a malloc'ed one (key 2), progress until A closes the pipe. */
static void peer_main(const char *sock, int out, int in)
{
	struct pollfd pf = {.fd = in, .events = POLLIN};
	struct fid_mr *mr[M_N];
	struct ofi_node n = {0};
	uint8_t *reg[M_N];

	ofi_node_open(&n, sock, &g_how);
	reg[M_DIRECT] = n.ops->heap_alloc(n.dom, REG_LEN);
	reg[M_SERVED] = malloc(REG_LEN);
	CHECK(reg[M_DIRECT] && reg[M_SERVED]);
	for (int m = 0; m < M_N; m++) {
		fill(reg[m], REG_LEN, 3);
		CHECK_OK(fi_mr_reg(n.dom, reg[m], REG_LEN, FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
				   (uint64_t)m + 1, 0, &mr[m], NULL));
	}
	n.peer = ofi_meet(n.ep, n.av, out, in);
	while (poll(&pf, 1, 0) == 0)
		fi_cq_read(n.cq, NULL, 0);
	_exit(0);
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return v[n / 2];
}

static void one(struct ofi_node *n, bool rd, uint8_t *buf, size_t len, uint64_t key)
{
	struct fi_context2 c;
	struct fi_cq_entry e;

	if (rd)
		CHECK_OK(fi_read(n->ep, buf, len, NULL, n->peer, 0, key, &c));
	else
		CHECK_OK(fi_write(n->ep, buf, len, NULL, n->peer, 0, key, &c));
	CHECK_OK(cq_wait(n->cq, &e, NULL, NULL, 30, "ofi_rma_bench"));
}

/* p50 microseconds of ops one at a time of len bytes. */
static double lat(struct ofi_node *n, bool rd, uint8_t *buf, uint64_t key, double *t)
{
	for (int i = 0; i < SMALL_OPS; i++) {
		double t0 = now_s();

		one(n, rd, buf, 8, key);
		t[i] = (now_s() - t0) * 1e6;
	}
	return median(t, SMALL_OPS);
}

static double bw(struct ofi_node *n, uint8_t *buf, uint64_t key)
{
	double t0 = now_s();

	for (int i = 0; i < BIG_OPS; i++)
		one(n, true, buf, REG_LEN, key);
	return (double)BIG_OPS * REG_LEN / (now_s() - t0) / 1e6;
}

int main(int argc, char **argv)
{
	double v[MAX_ROUNDS][M_N][R_N], ratio[R_N][MAX_ROUNDS], best[M_N][R_N], *t;
	int rounds = 3, to, from, st;
	struct ofi_node n = {0};
	bool json = false;
	uint8_t *buf;
	pid_t b;

	if (argc < 3) {
		fprintf(stderr, "usage: ofi_rma_bench NODE1_SOCKET NODE2_SOCKET [--rounds R] "
				"[--json]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
	}
	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "ofi_rma_bench: --rounds 1..%d\n", MAX_ROUNDS);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	b = ofi_spawn(peer_main, argv[2], &to, &from);
	ofi_node_open(&n, argv[1], &g_how);
	buf = n.ops->heap_alloc(n.dom, REG_LEN);
	t = malloc(SMALL_OPS * sizeof(*t));
	CHECK(buf && t);
	n.peer = ofi_meet(n.ep, n.av, to, from);
	for (int m = 0; m < M_N; m++) { /* warm: vQPs made, the heap region learnt */
		for (int i = 0; i < 100; i++)
			one(&n, true, buf, 8, (uint64_t)m + 1);
		one(&n, true, buf, REG_LEN, (uint64_t)m + 1);
		CHECK(same(buf, REG_LEN, 3));
	}
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < M_N; k++) {
			int m = (r + k) % M_N; /* alternate which goes first */
			uint64_t key = (uint64_t)m + 1;

			v[r][m][R_READ8] = lat(&n, true, buf, key, t);
			v[r][m][R_WRITE8] = lat(&n, false, buf, key, t);
			v[r][m][R_READ1M] = bw(&n, buf, key);
		}
	for (int w = 0; w < R_N; w++) {
		for (int r = 0; r < rounds; r++)
			ratio[w][r] = w == R_READ1M ? v[r][M_DIRECT][w] / v[r][M_SERVED][w]
						    : v[r][M_SERVED][w] / v[r][M_DIRECT][w];
		for (int m = 0; m < M_N; m++) {
			double c[MAX_ROUNDS];

			for (int r = 0; r < rounds; r++)
				c[r] = v[r][m][w];
			best[m][w] = median(c, rounds);
		}
	}
	printf("%-16s %12s %12s %10s   (%d rounds, medians)\n", "", "direct", "served", "ratio",
	       rounds);
	for (int w = 0; w < R_N; w++)
		printf("%-16s %12.1f %12.1f %10.2f\n", row_name[w], best[M_DIRECT][w],
		       best[M_SERVED][w], median(ratio[w], rounds));
	if (json) {
		printf("{\"bench\": \"ofi_rma\", \"rounds\": %d", rounds);
		for (int w = 0; w < R_N; w++)
			printf(", \"direct_%s\": %.1f, \"served_%s\": %.1f, \"%.*s_ratio\": %.2f",
			       row_name[w], best[M_DIRECT][w], row_name[w], best[M_SERVED][w],
			       (int)strcspn(row_name[w], "_"), row_name[w],
			       median(ratio[w], rounds));
		printf("}\n");
	}
	close(to); /* B stops */
	CHECK(waitpid(b, &st, 0) == b && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}
