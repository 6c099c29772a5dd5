/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krping: RC and DC ping-pong between two simulated hosts in one process.
 * The demo of the devx layer: SEND/RECV round trips as ibv_rc_pingpong does,
 * then WRITE, READ, CAS and FAA checks, then SEND and READ through a DCI.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"

#define KRPING_MEM (4u << 20)
#define KRPING_MAX_SIZE (1u << 20)
#define KRPING_DC_KEY 0x6b72706e67ull
#define KRPING_TIMEOUT_MS 5000

static int failures;

static void report(const char *what, bool ok, const char *detail)
{
	printf("  %-34s %s%s%s\n", what, ok ? "ok" : "FAILED", detail ? "  " : "",
	       detail ? detail : "");
	if (!ok)
		failures++;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Post one WR, ring, and wait for its completion on cq. */
static int post_and_wait(struct kr_devx_qp *qp, const struct kr_devx_wr *wr, struct kr_devx_cq *cq,
			 struct kr_devx_wc *wc)
{
	int rc = kr_devx_qp_post_send(qp, wr);

	if (rc)
		return rc;
	kr_devx_qp_ring(qp);
	rc = kr_fx_poll_one(cq, wc, KRPING_TIMEOUT_MS);
	if (rc)
		return rc;
	return wc->status == KR_WC_SUCCESS ? 0 : -EIO;
}

static int pingpong(struct kr_fx_host *a, struct kr_devx_qp *qa, struct kr_fx_host *b,
		    struct kr_devx_qp *qb, unsigned int iters, uint32_t size)
{
	struct kr_devx_sge a_tx = kr_fx_sge(a, 0, size), a_rx = kr_fx_sge(a, KRPING_MAX_SIZE, size);
	struct kr_devx_sge b_tx = kr_fx_sge(b, 0, size), b_rx = kr_fx_sge(b, KRPING_MAX_SIZE, size);
	struct kr_devx_wr wa = {.opcode = KR_WR_SEND, .flags = KR_WR_SIGNALED, .sge = &a_tx,
				.num_sge = 1};
	struct kr_devx_wr wb = {.opcode = KR_WR_SEND, .flags = KR_WR_SIGNALED, .sge = &b_tx,
				.num_sge = 1};
	struct kr_devx_wc wc;
	double t0, t1;
	unsigned int i;
	char line[96];
	int rc;

	t0 = now_us();
	for (i = 0; i < iters; i++) {
		memset(a->mem, (int)(i & 0xff), size);
		rc = kr_devx_qp_post_recv(qb, &b_rx, 1, i);
		if (!rc)
			rc = kr_devx_qp_post_recv(qa, &a_rx, 1, i);
		if (!rc)
			rc = post_and_wait(qa, &wa, &a->scq, &wc);
		if (!rc)
			rc = kr_fx_poll_one(&b->rcq, &wc, KRPING_TIMEOUT_MS);
		if (rc || wc.status != KR_WC_SUCCESS || wc.byte_len != size)
			goto fail;
		memcpy(b->mem, (uint8_t *)b->mem + KRPING_MAX_SIZE, size);
		rc = post_and_wait(qb, &wb, &b->scq, &wc);
		if (!rc)
			rc = kr_fx_poll_one(&a->rcq, &wc, KRPING_TIMEOUT_MS);
		if (rc || wc.status != KR_WC_SUCCESS ||
		    memcmp(a->mem, (uint8_t *)a->mem + KRPING_MAX_SIZE, size))
			goto fail;
	}
	t1 = now_us();
	snprintf(line, sizeof(line), "%u round trips of %u B, %.2f us each", iters, size,
		 (t1 - t0) / iters);
	report("RC SEND/RECV ping-pong", true, line);
	return 0;
fail:
	snprintf(line, sizeof(line), "iteration %u: rc %d, status %s", i, rc,
		 kr_strerror(wc.status));
	report("RC SEND/RECV ping-pong", false, line);
	return -EIO;
}

static void one_sided(struct kr_fx_host *a, struct kr_devx_qp *qa, struct kr_fx_host *b)
{
	uint8_t *remote = (uint8_t *)b->mem + 2 * KRPING_MAX_SIZE;
	uint8_t *local = (uint8_t *)a->mem + 2 * KRPING_MAX_SIZE;
	uint64_t raddr = (uint64_t)(uintptr_t)remote;
	struct kr_devx_sge sge = kr_fx_sge(a, 2 * KRPING_MAX_SIZE, 4096);
	struct kr_devx_sge sge8 = kr_fx_sge(a, 2 * KRPING_MAX_SIZE, 8);
	struct kr_devx_wr wr = {.flags = KR_WR_SIGNALED, .sge = &sge, .num_sge = 1,
				.remote_addr = raddr, .rkey = b->mr.rkey};
	struct kr_devx_wc wc;
	uint64_t v;
	int i;

	for (i = 0; i < 4096; i++)
		local[i] = (uint8_t)(i * 7);
	wr.opcode = KR_WR_RDMA_WRITE;
	report("RC RDMA WRITE 4 KiB", !post_and_wait(qa, &wr, &a->scq, &wc) &&
					      !memcmp(local, remote, 4096), NULL);

	for (i = 0; i < 4096; i++)
		remote[i] = (uint8_t)(i * 13);
	wr.opcode = KR_WR_RDMA_READ;
	report("RC RDMA READ 4 KiB", !post_and_wait(qa, &wr, &a->scq, &wc) &&
					     !memcmp(local, remote, 4096), NULL);

	memcpy(remote, &(uint64_t){41}, 8);
	wr = (struct kr_devx_wr){.opcode = KR_WR_ATOMIC_CS, .flags = KR_WR_SIGNALED,
				 .sge = &sge8, .num_sge = 1, .remote_addr = raddr,
				 .rkey = b->mr.rkey, .compare_add = 41, .swap = 99};
	{
		bool ok = !post_and_wait(qa, &wr, &a->scq, &wc);

		memcpy(&v, local, 8);
		ok = ok && v == 41;
		memcpy(&v, remote, 8);
		report("RC compare-and-swap", ok && v == 99, NULL);
	}
	wr.opcode = KR_WR_ATOMIC_FA;
	wr.compare_add = 1000;
	{
		bool ok = !post_and_wait(qa, &wr, &a->scq, &wc);

		memcpy(&v, local, 8);
		ok = ok && v == 99;
		memcpy(&v, remote, 8);
		report("RC fetch-and-add", ok && v == 1099, NULL);
	}
}

static void dc_checks(struct kr_fx_host *a, struct kr_fx_host *b)
{
	struct kr_devx_qp dci;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_dc_av av;
	struct kr_devx_sge tx = kr_fx_sge(a, 3 * KRPING_MAX_SIZE, 256);
	struct kr_devx_sge rx = kr_fx_sge(b, 3 * KRPING_MAX_SIZE, 256);
	uint8_t *src = (uint8_t *)a->mem + 3 * KRPING_MAX_SIZE;
	uint8_t *dst = (uint8_t *)b->mem + 3 * KRPING_MAX_SIZE;
	struct kr_devx_wr wr = {.opcode = KR_WR_SEND, .flags = KR_WR_SIGNALED, .sge = &tx,
				.num_sge = 1, .av = &av};
	struct kr_devx_wc wc;
	bool ok;

	if (kr_fx_dct_create(b, &srq, &dct, KRPING_DC_KEY) || kr_fx_dci_create(a, &dci, NULL)) {
		report("DC setup (DCT, SRQ, DCI)", false, NULL);
		return;
	}
	kr_fx_dc_av(a, b, &dct, &av);
	memset(src, 0x5a, 256);
	ok = !kr_devx_srq_post_recv(&srq, &rx, 1, 7) && !post_and_wait(&dci, &wr, &a->scq, &wc) &&
	     !kr_fx_poll_one(&b->rcq, &wc, KRPING_TIMEOUT_MS) && wc.wr_id == 7 &&
	     wc.byte_len == 256 && wc.src_qpn == dci.qpn && !memcmp(src, dst, 256);
	report("DC SEND through a DCI to a DCT", ok, NULL);

	memset(dst, 0xa5, 256);
	wr.opcode = KR_WR_RDMA_READ;
	wr.remote_addr = (uint64_t)(uintptr_t)dst;
	wr.rkey = b->mr.rkey;
	report("DC RDMA READ through a DCI", !post_and_wait(&dci, &wr, &a->scq, &wc) &&
						     !memcmp(src, dst, 256), NULL);
	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: krping [-n iters] [-s size]\n"
		   "  RC and DC ping-pong between two simulated hosts (sim:krping_a, sim:krping_b)\n");
}

int main(int argc, char **argv)
{
	unsigned long iters = 1000, size = 64;
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	int opt;

	while ((opt = getopt(argc, argv, "n:s:h")) != -1) {
		switch (opt) {
		case 'n':
			iters = strtoul(optarg, NULL, 0);
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (iters == 0 || iters > 100000000ul || size == 0 || size > KRPING_MAX_SIZE) {
		fprintf(stderr, "krping: -n must be 1..100000000 and -s 1..%u\n", KRPING_MAX_SIZE);
		return 1;
	}
	if (kr_fx_host_open(&a, "sim:krping_a", KRPING_MEM) ||
	    kr_fx_host_open(&b, "sim:krping_b", KRPING_MEM)) {
		fprintf(stderr, "krping: cannot open the simulated hosts\n");
		return 1;
	}
	printf("krping: %s <-> %s\n", a.ctx->name, b.ctx->name);
	if (kr_fx_rc_pair(&a, &qa, &b, &qb, NULL)) {
		report("RC connect", false, NULL);
	} else {
		printf("  RC QP %#x <-> %#x connected\n", qa.qpn, qb.qpn);
		pingpong(&a, &qa, &b, &qb, (unsigned int)iters, (uint32_t)size);
		one_sided(&a, &qa, &b);
		kr_fx_qp_destroy(&qa);
		kr_fx_qp_destroy(&qb);
	}
	dc_checks(&a, &b);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
	printf("krping: %s\n", failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}
