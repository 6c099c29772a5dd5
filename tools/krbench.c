/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench: perftest-style benchmarks.
 *   krbench attach [-n CYCLES] [--busy N] [--json] [--socket PATH] [--krpoold PATH]
 * times kr_attach() and kr_detach() over CYCLES attach/detach cycles. Without
 * --socket it starts a keeper on the sim in a temporary directory (krpoold
 * next to this binary, or --krpoold) and stops it at the end. --busy N times
 * the cycles again while jobs keep N DCIs resetting (krbench_busy.c), and
 * prints both p99s and their ratio (busy_p99_ratio).
 *   krbench read [-n ITERS] [--json] [--socket PATH] [--krpoold PATH]
 * sync 8-byte RDMA READ latency (p50/p99) and async READ rate (a window of
 * 64 in flight) to the node's own keeper, through a vQP (kr_post_read +
 * kr_poll: the checks, credits and dispatch) and through a raw leased DCI
 * (devx post + ring + CQ poll) in the same run.
 *   krbench connect [-n ITERS] [--json] [--socket PATH] [--krpoold PATH]
 * kr_connect() latency (p50/p99) and connects/s to the node's own keeper:
 * warm (the thread already holds its DCI: resolve + credits), cold (a
 * thread's first connect, holding no DCI: it takes one its process kept
 * from an earlier thread) and cold with nothing kept (it leases a DCI over
 * the keeper socket, and its disconnect gives the DCI back for a reset).
 * --profile NAME runs the keeper's sim under that firmware cost model
 * (none, connectx4; named in the table and the JSON).
 *   krbench connect --nodes N [-n ITERS] [--json] [--profile NAME]
 * connecting to other nodes beside the verbs way (krbench_remote.c).
 *   krbench read --peer [--promote] [-n ITERS] [--json] [--profile NAME]
 * READs to another node beside a UDP ping-pong (krbench_peer.c); --promote: and
 * the same vQP promoted to RC (rc_over_dc).
 *   krbench send [-n ITERS] [--json] [--socket PATH] [--krpoold PATH]
 * two-sided messages to ports of this node, vQP vs raw DCI -> DCT
 * (krbench_send.c); with --peer to node 2 of two keepers (krbench_send_peer.c).
 *   krbench all [-n ITERS] [--json] [FILE]
 * every bench, one JSON document (krbench_all.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "krbench.h"
#include "job/job.h"
#include "keeper/keeper.h"
#include "job/virtqp/virtqp.h"

struct keeper {
	pid_t pid;
	char dir[64];
	char sock[128];
	char device[64];
	int dcis; /* 0: 4 */
};

static int keeper_start(struct keeper *k, const char *krpoold)
{
	char path[PATH_MAX];
	int rc = kb_tool_path("krpoold", krpoold, path, sizeof(path));

	if (rc)
		return rc;
	krpoold = path;
	snprintf(k->dir, sizeof(k->dir), "/tmp/krbench.XXXXXX");
	if (!mkdtemp(k->dir))
		return -errno;
	snprintf(k->sock, sizeof(k->sock), "%s/krpoold.sock", k->dir);
	if (strcmp(g_profile, "none"))
		snprintf(k->device, sizeof(k->device), "sim:krbench,profile=%s", g_profile);
	else
		snprintf(k->device, sizeof(k->device), "sim:krbench");
	k->pid = fork();
	if (k->pid < 0)
		return -errno;
	if (k->pid == 0) {
		char dcis[16];

		snprintf(dcis, sizeof(dcis), "%d", k->dcis ? k->dcis : 4);
		execl(krpoold, krpoold, "--foreground", "--socket", k->sock, "--device", k->device,
		      "--tenants", "1", "--dcis", dcis, "--jobs", k->dcis ? "8" : "4", "--heap-mb",
		      "2", "--hugepages", "64", (char *)NULL);
		fprintf(stderr, "krbench: cannot run %s: %s\n", krpoold, strerror(errno));
		_exit(127);
	}
	for (double t0 = kb_now_us(); kb_now_us() - t0 < 20e6;) {
		int status, fd;

		if (waitpid(k->pid, &status, WNOHANG) == k->pid) {
			k->pid = 0;
			return -ECHILD;
		}
		fd = kr_msg_connect(k->sock);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

static void keeper_stop(struct keeper *k)
{
	char lock[160];

	if (k->pid > 0) {
		kill(k->pid, SIGTERM);
		waitpid(k->pid, NULL, 0);
	}
	snprintf(lock, sizeof(lock), "%s.lock", k->sock);
	unlink(lock);
	unlink(k->sock);
	rmdir(k->dir);
}

/* The keeper to bench: the one at *sock, else one started here on the sim. 0 or -errno (reported).
 */
static int keeper_use(struct keeper *k, const char **sock, const char *krpoold)
{
	int rc;

	if (*sock)
		return 0;
	rc = keeper_start(k, krpoold);
	if (rc) {
		fprintf(stderr, "krbench: cannot start a keeper: %s\n", strerror(-rc));
		keeper_stop(k);
		return rc;
	}
	*sock = k->sock;
	return 0;
}

/* cycles timed attach/detach cycles into ta/td (sorted); *busy counts untimed ENOSPC retries. */
static int attach_cycles(const char *sock, int cycles, double *ta, double *td, int *busy)
{
	struct kr_attach_opts o = {.socket_path = sock};

	for (int i = 0; i < cycles;) {
		struct kr_ctx *ctx;
		double t0 = kb_now_us(), t1, t2;

		ctx = kr_attach(&o);
		t1 = kb_now_us();
		if (!ctx) {
			if (errno == ENOSPC && (*busy)++ < 1000000) {
				usleep(20); /* no free slot or warm heap yet: not timed */
				continue;
			}
			fprintf(stderr, "krbench: attach %d: %s\n", i, strerror(errno));
			return -1;
		}
		if (kr_detach(ctx)) {
			fprintf(stderr, "krbench: detach %d failed\n", i);
			return -1;
		}
		t2 = kb_now_us();
		ta[i] = t1 - t0;
		td[i] = t2 - t1;
		i++;
	}
	qsort(ta, (size_t)cycles, sizeof(*ta), kb_cmp_double);
	qsort(td, (size_t)cycles, sizeof(*td), kb_cmp_double);
	return 0;
}

/* QP resets the keeper at sock has done; 0 if it cannot be asked. */
static uint64_t keeper_resets(const char *sock)
{
	struct kr_ctx *obs = kr_job_observe(sock);
	uint64_t n;

	if (!obs)
		return 0;
	n = obs->seg->resets;
	kr_detach(obs);
	return n;
}

/* The same cycles while jobs keep ndci DCIs resetting: tb sorted, *resets during them. */
static int attach_busy(const char *sock, int cycles, int ndci, double *tb, double *td,
		       uint64_t *resets)
{
	struct kb_churn ch;
	uint64_t r0;
	int busy = 0, rc;

	rc = kb_churn_start(&ch, sock, ndci);
	if (rc) {
		fprintf(stderr, "krbench: churn jobs: %s\n", strerror(-rc));
		kb_churn_stop(&ch);
		return -1;
	}
	r0 = keeper_resets(sock);
	rc = attach_cycles(sock, cycles, tb, td, &busy);
	*resets = keeper_resets(sock) - r0;
	if (kb_churn_stop(&ch)) {
		fprintf(stderr, "krbench: a churn job failed\n");
		rc = -1;
	}
	return rc;
}

static int bench_attach(int cycles, int ndci, bool json, const char *sock, const char *krpoold)
{
	struct keeper k = {.dcis = ndci ? ndci + 8 : 0};
	double *ta, *td, *tb = NULL;
	uint64_t resets = 0;
	int busy = 0, rc = 0;

	ta = calloc((size_t)cycles, sizeof(*ta));
	td = calloc((size_t)cycles, sizeof(*td));
	if (ndci)
		tb = calloc((size_t)cycles, sizeof(*tb));
	if (!ta || !td || (ndci && !tb) || keeper_use(&k, &sock, krpoold)) {
		free(ta);
		free(td);
		free(tb);
		return 1;
	}
	if (attach_cycles(sock, cycles, ta, td, &busy))
		rc = 1;
	if (!rc && json && !ndci)
		printf("{\"bench\": \"attach\", \"cycles\": %d, \"p50_us\": %.1f, "
		       "\"p99_us\": %.1f, \"min_us\": %.1f, \"max_us\": %.1f, "
		       "\"detach_p50_us\": %.1f, \"detach_p99_us\": %.1f, "
		       "\"busy_retries\": %d}\n",
		       cycles, kb_pct(ta, cycles, 50), kb_pct(ta, cycles, 99), ta[0],
		       ta[cycles - 1], kb_pct(td, cycles, 50), kb_pct(td, cycles, 99), busy);
	else if (!rc && !json)
		printf("attach over %d cycles: p50 %.1f us, p99 %.1f us, min %.1f us, max "
		       "%.1f us; detach p50 %.1f us, p99 %.1f us\n",
		       cycles, kb_pct(ta, cycles, 50), kb_pct(ta, cycles, 99), ta[0],
		       ta[cycles - 1], kb_pct(td, cycles, 50), kb_pct(td, cycles, 99));
	if (!rc && ndci) {
		double *tdb = calloc((size_t)cycles, sizeof(*tdb));

		if (!tdb || attach_busy(sock, cycles, ndci, tb, tdb, &resets))
			rc = 1;
		free(tdb);
	}
	if (!rc && ndci) {
		double p99 = kb_pct(ta, cycles, 99), bp99 = kb_pct(tb, cycles, 99);

		if (json)
			printf("{\"bench\": \"attach\", \"cycles\": %d, \"profile\": \"%s\", "
			       "\"p50_us\": %.1f, \"p99_us\": %.1f, \"busy_dcis\": %d, "
			       "\"busy_resets\": %llu, \"busy_p50_us\": %.1f, "
			       "\"busy_p99_us\": %.1f, \"busy_p99_ratio\": %.2f}\n",
			       cycles, g_profile, kb_pct(ta, cycles, 50), p99, ndci,
			       (unsigned long long)resets, kb_pct(tb, cycles, 50), bp99,
			       bp99 / p99);
		else
			printf("%-26s %10s %10s\n%-26s %10.1f %10.1f\n%-26s %10.1f %10.1f\n"
			       "busy/idle p99: %.2f (%llu QP resets during the busy cycles, "
			       "profile %s)\n",
			       "attach", "p50 us", "p99 us", "idle", kb_pct(ta, cycles, 50), p99,
			       "while DCIs reset", kb_pct(tb, cycles, 50), bp99, bp99 / p99,
			       (unsigned long long)resets, g_profile);
	}
	if (k.dir[0])
		keeper_stop(&k);
	free(ta);
	free(td);
	free(tb);
	return rc;
}

/* ---- krbench read: vQP vs raw DCI (loops in krbench_read.c) ---- */

static int bench_read(int iters, bool json, const char *sock, const char *krpoold)
{
	struct kr_connect_opts co = {.credits = 2 * KB_RD_WINDOW};
	struct kr_attach_opts o;
	struct keeper k = {0};
	struct kb_rd_res rv, rr, ratio;
	struct kb_rd_raw raw;
	struct kr_lease l;
	struct kr_mr_key key;
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	struct kr_mr *mr = NULL;
	uint8_t *local, *remote;
	double *lat;
	int rc = 1;

	lat = calloc((size_t)iters, sizeof(*lat));
	if (!lat)
		return 1;
	if (keeper_use(&k, &sock, krpoold)) {
		free(lat);
		return 1;
	}
	o = (struct kr_attach_opts){.socket_path = sock};
	ctx = kr_attach(&o);
	if (!ctx) {
		fprintf(stderr, "krbench: attach: %s\n", strerror(errno));
		goto out_keeper;
	}
	local = kr_malloc(ctx, 8 * KB_RD_WINDOW);
	remote = kr_malloc(ctx, 4096);
	mr = remote ? kr_reg_mr(ctx, remote, 4096, KR_MR_REMOTE_READ) : NULL;
	if (!local || !mr || kr_mr_key(mr, &key)) {
		fprintf(stderr, "krbench: memory: %s\n", strerror(errno));
		goto out_detach;
	}
	v = kr_connect(ctx, KR_NODE_SELF, &co);
	if (!v) {
		fprintf(stderr, "krbench: kr_connect: %s\n", strerror(errno));
		goto out_detach;
	}
	memset(&raw, 0, sizeof(raw));
	raw.lkey = kr_job_heap_lkey(ctx);
	if (kr_lease_alloc(ctx, KR_LEASE_DCI, &l) || kr_job_dci_qp(ctx, &l, &raw.qp, &raw.cq) ||
	    kr_job_tenant_av(ctx, &raw.av)) {
		fprintf(stderr, "krbench: raw DCI lease failed\n");
		goto out_vqp;
	}
	rc =
	    kb_rd_rounds(v, &raw, local, (uintptr_t)remote, key.rkey, iters, lat, &rv, &rr, &ratio);
	if (rc) {
		fprintf(stderr, "krbench: read: %s\n", strerror(-rc));
		rc = 1;
		goto out_lease;
	}
	if (json) {
		printf("{\"bench\": \"read\", \"iters\": %d, \"bytes\": 8, \"window\": %d, "
		       "\"rounds\": %d, "
		       "\"vqp\": {\"p50_us\": %.2f, \"p99_us\": %.2f, \"mops\": %.3f}, "
		       "\"raw_dci\": {\"p50_us\": %.2f, \"p99_us\": %.2f, \"mops\": %.3f}, "
		       "\"rate_ratio\": %.3f, \"p50_ratio\": %.3f}\n",
		       iters, KB_RD_WINDOW, KB_RD_ROUNDS, rv.p50, rv.p99, rv.mops, rr.p50, rr.p99,
		       rr.mops, ratio.mops, ratio.p50);
	} else {
		printf("8-byte READ to this node's keeper, %d iterations (async window %d), "
		       "median of %d alternating rounds\n",
		       iters, KB_RD_WINDOW, KB_RD_ROUNDS);
		printf("%-10s %10s %10s %12s\n", "path", "p50 us", "p99 us", "async Mop/s");
		printf("%-10s %10.2f %10.2f %12.3f\n", "vqp", rv.p50, rv.p99, rv.mops);
		printf("%-10s %10.2f %10.2f %12.3f\n", "raw_dci", rr.p50, rr.p99, rr.mops);
		printf("rate_ratio (vqp / raw_dci, async, median of the rounds' ratios): %.3f; "
		       "p50_ratio: %.3f\n",
		       ratio.mops, ratio.p50);
	}
out_lease:
	kr_lease_free(ctx, &l);
out_vqp:
	kr_disconnect(v);
out_detach:
	if (mr)
		kr_dereg_mr(mr);
	kr_detach(ctx);
out_keeper:
	if (k.dir[0])
		keeper_stop(&k);
	free(lat);
	return rc;
}

/* ---- krbench send (krbench_send.c) ---- */

static int bench_send(int iters, bool json, const char *sock, const char *krpoold)
{
	struct kr_attach_opts o;
	struct keeper k = {0};
	struct kr_ctx *ctx;
	int rc = 1;

	if (keeper_use(&k, &sock, krpoold))
		return 1;
	o = (struct kr_attach_opts){.socket_path = sock};
	ctx = kr_attach(&o);
	if (!ctx) {
		fprintf(stderr, "krbench: attach: %s\n", strerror(errno));
	} else {
		rc = kb_bench_send(ctx, iters, json);
		kr_detach(ctx);
	}
	if (k.dir[0])
		keeper_stop(&k);
	return rc;
}

/* ---- krbench connect ---- */

static int bench_connect(int iters, bool json, const char *sock, const char *krpoold)
{
	struct kr_connect_opts one = {.credits = 2};
	struct kr_attach_opts o;
	struct keeper k = {0};
	double *lat, t0, total, w50, w99, c50, c99, l50, l99;
	int nfirst = iters < 200 ? iters : 200, rc = 1;
	struct kr_vqp *hold, *v;
	struct kr_ctx *ctx;

	lat = calloc((size_t)iters, sizeof(*lat));
	if (!lat)
		return 1;
	if (keeper_use(&k, &sock, krpoold)) {
		free(lat);
		return 1;
	}
	o = (struct kr_attach_opts){.socket_path = sock};
	ctx = kr_attach(&o);
	if (!ctx) {
		fprintf(stderr, "krbench: attach: %s\n", strerror(errno));
		goto out_keeper;
	}
	/* warm: a vQP held open keeps the thread's DCI leased */
	hold = kr_connect(ctx, KR_NODE_SELF, &one);
	if (!hold) {
		fprintf(stderr, "krbench: kr_connect: %s\n", strerror(errno));
		goto out_detach;
	}
	total = kb_now_us();
	for (int i = 0; i < iters; i++) {
		t0 = kb_now_us();
		v = kr_connect(ctx, KR_NODE_SELF, NULL);
		lat[i] = kb_now_us() - t0;
		if (!v || kr_disconnect(v)) {
			fprintf(stderr, "krbench: kr_connect: %s\n", strerror(errno));
			kr_disconnect(hold);
			goto out_detach;
		}
	}
	total = kb_now_us() - total;
	qsort(lat, (size_t)iters, sizeof(*lat), kb_cmp_double);
	w50 = kb_pct(lat, iters, 50);
	w99 = kb_pct(lat, iters, 99);
	kr_disconnect(hold);

	/* cold: every connect is its thread's first (the last disconnect let the DCI go) */
	if (kb_cold_loop(ctx, KR_NODE_SELF, lat, nfirst, 8, &c50, &c99) ||
	    kb_cold_loop(ctx, KR_NODE_SELF, lat, nfirst, 0, &l50, &l99))
		goto out_detach;
	kr_vq_spare_max(8);
	if (json) {
		printf("{\"bench\": \"connect\", \"profile\": \"%s\", \"iters\": %d, "
		       "\"p50_us\": %.3f, \"p99_us\": %.3f, \"connects_per_s\": %.0f, "
		       "\"cold_iters\": %d, \"cold_p50_us\": %.3f, \"cold_p99_us\": %.3f, "
		       "\"cold_leased_p50_us\": %.1f, \"cold_leased_p99_us\": %.1f}\n",
		       g_profile, iters, w50, w99, iters / total * 1e6, nfirst, c50, c99, l50, l99);
	} else {
		printf(
		    "kr_connect to this node (KR_NODE_SELF), %d iterations, firmware cost model: "
		    "%s\n",
		    iters, g_profile);
		printf("%-44s %10s %10s %14s\n", "case", "p50 us", "p99 us", "connects/s");
		printf("%-44s %10.3f %10.3f %14.0f\n", "warm (thread holds its DCI)", w50, w99,
		       iters / total * 1e6);
		printf("%-44s %10.3f %10.3f %14s\n",
		       "cold (thread's first; a DCI the process kept)", c50, c99, "-");
		printf("%-44s %10.1f %10.1f %14s\n", "cold, nothing kept (leases from the keeper)",
		       l50, l99, "-");
		printf("(connects/s: connect + disconnect pairs, one thread; cold: %d each)\n",
		       nfirst);
	}
	rc = 0;
out_detach:
	kr_detach(ctx);
out_keeper:
	if (k.dir[0])
		keeper_stop(&k);
	free(lat);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: krbench attach [-n CYCLES] [--busy N] [--json] [--socket PATH]\n"
		   "                     [--krpoold PATH] [--profile M]\n"
		   "  -n, --cycles N    attach/detach cycles (default 1000)\n"
		   "      --busy N      time them again while jobs keep N DCIs resetting\n"
		   "  -j, --json        one JSON object (p50_us, p99_us, ...)\n"
		   "  -s, --socket PATH an existing keeper (default: start one on the sim)\n"
		   "      --krpoold P   the keeper binary to start (default: next to krbench)\n"
		   "       krbench read [-n ITERS] [--json] [--socket PATH] [--krpoold PATH]\n"
		   "  8-byte READ latency and rate, vQP vs raw DCI (default 10000 iterations)\n"
		   "       krbench read --peer [--promote] [-n ITERS] [--json] [--profile M]\n"
		   "  the same to node 2 of two keepers started here, beside a UDP ping-pong;\n"
		   "  --promote: and the same vQP promoted to an RC QP (rc_over_dc)\n"
		   "       krbench send [-n ITERS] [--json] [--socket PATH] [--krpoold PATH]\n"
		   "  SEND ping-pong latency and message rate at 64 B and 4 KiB to ports of this\n"
		   "  node, vQP vs raw DCI -> DCT in the same run (default 10000)\n"
		   "       krbench send --peer [-n ITERS] [--json] [--profile M]\n"
		   "  the same to node 2 of two keepers started here, through its echo job\n"
		   "       krbench fanout [--peers N] [-n ITERS] [--json] [--profile M]\n"
		   "  async READs from one thread to N peers round-robin (default 8) with 1, 2\n"
		   "  and 4 DCIs per thread, N + 1 keepers started here (default 20000)\n"
		   "       krbench all [-n ITERS] [--json] [FILE]\n"
		   "  every bench above, each in its own process, one JSON document to FILE\n"
		   "       krbench connect [-n ITERS] [--json] [--socket PATH] [--krpoold PATH]\n"
		   "  kr_connect latency and connects/s, warm and cold (default 10000)\n"
		   "       krbench connect --nodes N [-n ITERS] [--json] [--profile M]\n"
		   "  to nodes 2..N of N keepers started here on sim hosts over UDP loopback,\n"
		   "  beside the verbs way (CQ+QP, TCP exchange, RTS, READ) in the same run\n"
		   "       krbench elastic [--nodes N] [-n PROCS] [--json] [--profile M]\n"
		   "  PROCS fresh processes (default 200) with the peer's record cached and\n"
		   "  PROCS without, one at a time: attach to node 1, connect to a node of\n"
		   "  2..N (default N 2), READ 8 bytes, detach; beside a warm job's READ\n"
		   "      --profile M   a keeper started here models firmware costs M (none,\n"
		   "                    connectx4)\n"
		   "  -h, --help        this text\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cycles", required_argument, NULL, 'n'}, {"json", no_argument, NULL, 'j'},
	    {"socket", required_argument, NULL, 's'}, {"krpoold", required_argument, NULL, 'k'},
	    {"help", no_argument, NULL, 'h'},	      {"profile", required_argument, NULL, 'p'},
	    {"nodes", required_argument, NULL, 'N'},  {"peer", no_argument, NULL, 'P'},
	    {"busy", required_argument, NULL, 'B'},   {"peers", required_argument, NULL, 'M'},
	    {"promote", no_argument, NULL, 'R'},      {NULL, 0, NULL, 0},
	};
	const char *sock = NULL, *krpoold = NULL, *n_arg = NULL;
	int cycles = 1000, nodes = 0, ndci = 0, peers = 0, opt;
	bool json = false, n_set = false, peer = false, promote = false;

	while ((opt = getopt_long(argc, argv, "n:js:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			cycles = atoi(optarg);
			n_arg = optarg;
			n_set = true;
			break;
		case 'j':
			json = true;
			break;
		case 's':
			sock = optarg;
			break;
		case 'k':
			krpoold = optarg;
			break;
		case 'p':
			g_profile = optarg;
			break;
		case 'N':
			nodes = atoi(optarg);
			if (nodes < 2 || nodes > KB_MAX_NODES) {
				fprintf(stderr, "krbench: --nodes must be 2..%d\n", KB_MAX_NODES);
				return 2;
			}
			break;
		case 'P':
			peer = true;
			break;
		case 'R':
			promote = true;
			break;
		case 'M':
			peers = atoi(optarg);
			if (peers < 1 || peers > KB_MAX_NODES - 1) {
				fprintf(stderr, "krbench: --peers must be 1..%d\n",
					KB_MAX_NODES - 1);
				return 2;
			}
			break;
		case 'B':
			ndci = atoi(optarg);
			if (ndci < 1 || ndci > KB_CHURN_MAX * 50) {
				fprintf(stderr, "krbench: --busy must be 1..%d\n",
					KB_CHURN_MAX * 50);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (kb_launch_env()) {
		fprintf(stderr, "krbench: cannot set KR_LAUNCH_KEY\n");
		return 1;
	}
	if (optind < argc && !strcmp(argv[optind], "all") && argc - optind <= 2 && cycles >= 1 &&
	    cycles <= 1000000 && !nodes && !peer && !sock)
		return kb_bench_all(optind + 1 < argc ? argv[optind + 1] : NULL,
				    n_set ? n_arg : NULL, json, krpoold);
	if (optind == argc - 1 && !strcmp(argv[optind], "elastic") && cycles >= 1 &&
	    cycles <= 100000 && !peer && !sock)
		return kb_bench_elastic(nodes ? nodes : 2, n_set ? cycles : 200, json, krpoold);
	if (optind == argc - 1 && !strcmp(argv[optind], "connect") && cycles >= 1 &&
	    cycles <= 1000000 && nodes)
		return kb_bench_connect_remote(nodes, n_set ? cycles : 10000, json, krpoold);
	if (optind == argc - 1 && !strcmp(argv[optind], "connect") && cycles >= 1 &&
	    cycles <= 1000000)
		return bench_connect(n_set ? cycles : 10000, json, sock, krpoold);
	if (optind == argc - 1 && !strcmp(argv[optind], "send") && cycles >= 1 &&
	    cycles <= 1000000 && peer)
		return kb_bench_send_peer(n_set ? cycles : 10000, json, krpoold);
	if (optind == argc - 1 && !strcmp(argv[optind], "send") && cycles >= 1 && cycles <= 1000000)
		return bench_send(n_set ? cycles : 10000, json, sock, krpoold);
	if (optind == argc - 1 && !strcmp(argv[optind], "fanout") && cycles >= 1 &&
	    cycles <= 1000000 && !sock)
		return kb_bench_fanout(peers ? peers : 8, n_set ? cycles : 20000, json, krpoold);
	if (optind == argc - 1 && !strcmp(argv[optind], "read") && cycles >= 1 &&
	    cycles <= 1000000 && peer)
		return kb_bench_read_peer(n_set ? cycles : 10000, json, promote, krpoold);
	if (optind == argc - 1 && !strcmp(argv[optind], "read") && cycles >= 1 && cycles <= 1000000)
		return bench_read(n_set ? cycles : 10000, json, sock, krpoold);
	if (optind != argc - 1 || strcmp(argv[optind], "attach") || cycles < 1 ||
	    cycles > 1000000 || (ndci && sock)) {
		usage(stderr);
		return 2;
	}
	return bench_attach(cycles, ndci, json, sock, krpoold);
}
