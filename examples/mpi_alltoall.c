/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_alltoall: every rank of an MPI job attaches to its node's keeper,
 * connects to every other rank, WRITEs 8 bytes into each peer's memory and
 * READs them back, then checks what every other rank wrote into its own.
 *
 *   mpirun -np N [-x KR_LAUNCH_KEY] [-x KR_KEEPER_SOCKET] mpi_alltoall [--json]
 *          [--verbs-dev DEV | --verbs-port PORT [--profile MODEL]] [--pmix]
 *          [--soak MS [--ready FILE]]
 *
 * The ranks of one job are one launch: they share KR_LAUNCH_KEY (export it
 * to every rank). Each rank finds its keeper at $KR_KEEPER_SOCKET, else the
 * default socket (one keeper per node, the usual cluster setup); a launcher
 * that runs several simulated nodes on one machine sets it per rank
 * (scripts/sim-rank.sh). Nothing else is launcher-specific: the ranks swap
 * (node, address, rkey) once with MPI_Allgather and connect by node id
 * (the peer's DC target from the node cache or one MetaServer READ); with
 * --pmix they publish their endpoints in the launcher's PMIx store
 * (kr_pmix_exchange) and connect by rank (kr_connect_rank), no MetaServer.
 *
 * Bootstrap time: from a barrier before kr_attach to the first completion
 * from every peer (attach, the exchange, every connect and one WRITE + READ
 * to each). Rank 0 prints the slowest rank's, since a job is ready when its
 * last rank is, and the slowest rank's time in each phase (attach, the
 * exchange, connects with their first completions); --json prints one
 * object (ranks, nodes, krcore_bootstrap_ms, attach_ms, exchange_ms,
 * connect_ms, and per_rank: each rank's node, phases and kr_connect calls
 * in microseconds, connect_us, one per other rank).
 *
 * With --verbs-dev (a device every rank opens, e.g. mlx5_0) or --verbs-port
 * (rank r opens sim:vr<r>@127.0.0.<20 + r>:PORT under the cost model
 * --profile, default connectx4) the same job then bootstraps the verbs way
 * (mpi_verbs.c) and as a per-process DC transport would (mpi_dc.c), and rank
 * 0 prints each and its ratio to krcore_bootstrap_ms: verbs_bootstrap_ms
 * (bootstrap_ratio), dc_bootstrap_ms (dc_ratio). With --verbs-port the verbs
 * way runs twice, with a NIC per rank and then with the ranks of a node on
 * one firmware command queue (sim cmdq=, as one NIC per node):
 * verbs_serial_bootstrap_ms (serial_ratio); the DC baseline runs on the
 * node's queue.
 * --soak MS keeps every rank doing WRITE + READ rounds with every peer for
 * MS ms after the bootstrap (rank 0 creates FILE of --ready when they all
 * are in): a rank that dies meanwhile is reported lost by each other rank,
 * which goes on with its other peers until the launcher takes the job down
 * (SIGTERM), then exits 1.
 * Exit 0 when every byte checked out on every rank, 1 otherwise; 2 for bad
 * usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "mpi_verbs.h"

#define WAIT_NS (10ll * 1000 * 1000 * 1000) /* any single step: far above its goal */

/* What a rank tells the others about itself. */
struct rank_info {
	uint32_t node;
	uint32_t rkey;
	uint64_t addr; /* uint64_t slots[ranks]: slot i is rank i's to WRITE */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What rank `from` writes into rank `to`'s slot: both ranks and a mark. */
static uint64_t mark(int from, int to)
{
	return 0x6b72000000000000ull | (uint64_t)(uint32_t)from << 24 | (uint32_t)to;
}

/* One completion of vqp within WAIT_NS: 0, or -1 (reported). */
/* Up to want completions of vqp into wc within WAIT_NS: how many came, or -errno. */
static int poll_for(struct kr_vqp *vqp, struct kr_wc *wc, int want)
{
	int64_t t0 = now_ns();
	int got = 0, n;

	while (got < want && now_ns() - t0 < WAIT_NS) {
		n = kr_poll(vqp, wc + got, want - got);
		if (n < 0)
			return n;
		got += n;
		if (!n) /* yield: ranks may share cores (and, on the sim, with the NIC) */
			sched_yield();
	}
	return got;
}

/* Our slot at the peer (raddr): WRITE pair[0] there, READ it back into pair[1]. 0 or -errno. */
static int post_write_read(struct kr_vqp *vqp, uint64_t *pair, uint64_t raddr, uint32_t rkey)
{
	int rc = kr_post_write(vqp, &pair[0], 8, raddr, rkey, 1, 0);

	return rc ? rc : kr_post_read(vqp, &pair[1], 8, raddr, rkey, 2, 0);
}

static int wait_one(struct kr_vqp *vqp, int rank, int peer, const char *what)
{
	struct kr_wc wc;
	int n = poll_for(vqp, &wc, 1);

	if (n == 1 && wc.status == KR_WC_SUCCESS)
		return 0;
	fprintf(stderr, "rank %d: %s to rank %d: %s\n", rank, what, peer,
		n < 0 ? strerror(-n)
		: n   ? kr_strerror(wc.status)
		      : "no completion in 10 s");
	return -1;
}

/*
 * kr_connect, retried while the peer's node is not registered yet (keepers
 * start together). 8 credits (WQEBBs): room for 4 requests in flight, all
 * this job keeps per peer, so one DCI carries 32 peers' vQPs, not 8.
 */
static const struct kr_connect_opts opts = {.credits = 8};

static struct kr_vqp *connect_node(struct kr_ctx *ctx, uint32_t node)
{
	int64_t t0 = now_ns();
	struct kr_vqp *vqp;

	while (!(vqp = kr_connect(ctx, node, &opts)) &&
	       (errno == ENOENT || errno == EAGAIN || errno == EHOSTUNREACH) &&
	       now_ns() - t0 < WAIT_NS)
		usleep(1000);
	return vqp;
}

/*
 * Connect to every other rank and post a WRITE of its slot for us and a READ
 * of it back, all before waiting for any (the peers work in parallel), then
 * take each peer's two completions. 0 or the failures.
 */
static int talk_to_all(struct kr_ctx *ctx, const struct rank_info *all, int rank, int ranks,
		       bool pmix, struct kr_vqp **vqp, uint64_t *scratch, double *conn_us)
{
	int failed = 0;

	for (int p = 0; p < ranks; p++) {
		uint64_t raddr = all[p].addr + 8 * (uint64_t)rank;
		int64_t t;

		if (p == rank)
			continue;
		/* by node id (MetaServer or node cache), or by rank (the PMIx store) */
		t = now_ns();
		vqp[p] = pmix ? kr_connect_rank(ctx, (uint32_t)p, &opts)
			      : connect_node(ctx, all[p].node);
		conn_us[p] = (double)(now_ns() - t) / 1e3;
		if (!vqp[p]) {
			fprintf(stderr, "rank %d: kr_connect(node %" PRIu32 ") for rank %d: %s\n",
				rank, all[p].node, p, strerror(errno));
			failed++;
			continue;
		}
		scratch[2 * p] = mark(rank, p);
		scratch[2 * p + 1] = 0;
		if (post_write_read(vqp[p], &scratch[2 * p], raddr, all[p].rkey)) {
			fprintf(stderr, "rank %d: post to rank %d failed\n", rank, p);
			kr_disconnect(vqp[p]);
			vqp[p] = NULL;
			failed++;
		}
	}
	for (int p = 0; p < ranks; p++) {
		if (!vqp[p])
			continue;
		if (wait_one(vqp[p], rank, p, "WRITE") || wait_one(vqp[p], rank, p, "READ")) {
			failed++;
		} else if (scratch[2 * p + 1] != mark(rank, p)) {
			fprintf(stderr, "rank %d: READ back from rank %d: %016" PRIx64 "\n", rank,
				p, scratch[2 * p + 1]);
			failed++;
		}
	}
	return failed;
}

static volatile sig_atomic_t g_term;

static void on_term(int sig)
{
	(void)sig;
	g_term = 1;
}

/*
 * --soak: WRITE + READ rounds to every peer for ms, or until SIGTERM (a
 * launcher sends it to every rank when it takes the job down, say because a
 * rank died). A peer whose request fails is reported once, on the spot, and
 * left alone; the others go on. Nothing is reported once SIGTERM came: by
 * then the peers are being taken down too. rank 0 creates ready (if not
 * NULL) when every rank is in. Returns the peers lost.
 */
static int soak(const struct rank_info *all, int rank, int ranks, struct kr_vqp **vqp,
		uint64_t *scratch, int ms, const char *ready)
{
	int64_t end = now_ns() + (int64_t)ms * 1000000;
	uint64_t round = 0;
	int lost = 0;

	signal(SIGTERM, on_term);
	if (rank == 0) {
		FILE *f = ready ? fopen(ready, "w") : NULL;

		if (f)
			fclose(f);
		printf("soak: %d ms of WRITE + READ rounds to every peer\n", ms);
	}
	fflush(stdout);
	while (!g_term && now_ns() < end) {
		round++;
		for (int p = 0; p < ranks; p++) {
			uint64_t raddr = all[p].addr + 8 * (uint64_t)rank;
			struct kr_wc wc[2];
			int got;

			if (!vqp[p])
				continue;
			scratch[2 * p] = mark(rank, p) ^ round << 48;
			got = post_write_read(vqp[p], &scratch[2 * p], raddr, all[p].rkey);
			if (!got)
				got = poll_for(vqp[p], wc, 2);
			if (got == 2 && wc[0].status == KR_WC_SUCCESS &&
			    wc[1].status == KR_WC_SUCCESS && scratch[2 * p + 1] == scratch[2 * p])
				continue;
			if (g_term)
				break; /* the job is being taken down: not this peer's doing */
			printf("rank %d: lost rank %d in round %" PRIu64 ": %s\n", rank, p, round,
			       got == 2	 ? kr_strerror(wc[0].status ? wc[0].status : wc[1].status)
			       : got < 0 ? strerror(-got)
					 : "no completion");
			fflush(stdout);
			kr_disconnect(vqp[p]);
			vqp[p] = NULL;
			lost++;
		}
	}
	printf("rank %d: soak: %" PRIu64 " rounds, %d peers lost\n", rank, round, lost);
	fflush(stdout);
	return lost;
}

/* What the krcore bootstrap measured on this rank (ms), and the job's nodes. */
struct boot {
	double total;
	double phase[3]; /* attach, exchange, connects with first completions */
	int nodes;
	int node;	 /* this rank's */
	double *conn_us; /* [ranks]: each kr_connect call (0 for itself) */
};

static int count_nodes(const struct rank_info *all, int ranks)
{
	int nodes = 0;

	for (int p = 0; p < ranks; p++) {
		int q = 0;

		while (q < p && all[q].node != all[p].node)
			q++;
		nodes += q == p;
	}
	return nodes;
}

/*
 * The krcore bootstrap (collective), peers found by node id or, with pmix,
 * through the launcher's PMIx store; then soak_ms of soak(). Returns this
 * rank's failures.
 */
static int krcore_bootstrap(int rank, int ranks, bool pmix, int soak_ms, const char *ready,
			    struct boot *b)
{
	struct rank_info me, *all = calloc((size_t)ranks, sizeof(*all));
	struct kr_vqp **vqp = calloc((size_t)ranks, sizeof(*vqp));
	uint64_t *slots, *scratch;
	struct kr_ctx_attr attr;
	struct kr_mr_key key;
	struct kr_ctx *ctx;
	struct kr_mr *mr;
	int failed;
	int64_t t0;

	if (!all || !vqp)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_ns();
	/*
	 * ENOSPC: no slot free yet, e.g. the keeper still renews the tenant the
	 * previous job left (new memory, new DC target): ask again, bounded.
	 */
	while (!(ctx = kr_attach(NULL)) && errno == ENOSPC && now_ns() - t0 < WAIT_NS)
		usleep(10000);
	if (!ctx) {
		const char *sock = getenv("KR_KEEPER_SOCKET");

		fprintf(stderr, "rank %d: kr_attach to the keeper at %s: %s\n", rank,
			sock && *sock ? sock : "the default socket /run/krcore/krpoold.sock",
			strerror(errno));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	/* our slots (others WRITE them) and what we write and read back, in the heap */
	slots = kr_malloc(ctx, 8 * (size_t)ranks);
	scratch = kr_malloc(ctx, 16 * (size_t)ranks);
	mr = slots ? kr_reg_mr(ctx, slots, 8 * (size_t)ranks,
			       KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE)
		   : NULL;
	if (!scratch || !mr || kr_mr_key(mr, &key) || kr_ctx_query(ctx, &attr) || !attr.node) {
		fprintf(stderr, "rank %d: memory or node id: %s\n", rank, strerror(errno));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(slots, 0, 8 * (size_t)ranks);
	b->phase[0] = (double)(now_ns() - t0) / 1e6;
	me = (struct rank_info){.node = attr.node, .rkey = key.rkey, .addr = key.addr};
	if (pmix && (errno = -kr_pmix_exchange(ctx))) {
		fprintf(stderr, "rank %d: kr_pmix_exchange: %s\n", rank, strerror(errno));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Allgather(&me, sizeof(me), MPI_BYTE, all, sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
	b->phase[1] = (double)(now_ns() - t0) / 1e6 - b->phase[0];
	failed = talk_to_all(ctx, all, rank, ranks, pmix, vqp, scratch, b->conn_us);
	b->total = (double)(now_ns() - t0) / 1e6;
	b->phase[2] = b->total - b->phase[0] - b->phase[1];
	b->nodes = count_nodes(all, ranks);
	b->node = (int)attr.node;

	/* every WRITE to us landed before the others passed the barrier */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int p = 0; p < ranks; p++)
		if (p != rank && slots[p] != mark(p, rank)) {
			fprintf(stderr, "rank %d: slot of rank %d holds %016" PRIx64 "\n", rank, p,
				slots[p]);
			failed++;
		}
	if (soak_ms > 0) {
		/* the soak WRITEs into these slots again: every rank checks them first */
		MPI_Barrier(MPI_COMM_WORLD);
		if (soak(all, rank, ranks, vqp, scratch, soak_ms, ready) || g_term)
			exit(1);	     /* a rank is gone: no collective can complete */
		MPI_Barrier(MPI_COMM_WORLD); /* nobody detaches while another still soaks */
	}
	for (int p = 0; p < ranks; p++)
		if (vqp[p])
			kr_disconnect(vqp[p]);
	kr_dereg_mr(mr);
	kr_detach(ctx);
	free(vqp);
	free(all);
	return failed;
}

/* Every rank's figures at rank 0: [rank] = total, attach, exchange, connects, node; connects. */
static void gather_ranks(const struct boot *b, int ranks, double **per, double **conns)
{
	double mine[5] = {b->total, b->phase[0], b->phase[1], b->phase[2], (double)b->node};

	*per = calloc(5 * (size_t)ranks, sizeof(double));
	*conns = calloc((size_t)ranks * (size_t)ranks, sizeof(double));
	if (!*per || !*conns)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Gather(mine, 5, MPI_DOUBLE, *per, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Gather(b->conn_us, ranks, MPI_DOUBLE, *conns, ranks, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

/* The slowest rank's figures at rank 0; the job's failures on every rank. */
static int gather(const struct boot *b, int failed, struct boot *max, double *min_total)
{
	int total = 0;

	MPI_Reduce(&b->total, &max->total, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&b->total, min_total, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
	MPI_Reduce(b->phase, max->phase, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	max->nodes = b->nodes;
	return total;
}

/* The baselines' times at rank 0 (0: not run). */
struct base {
	double verbs;	     /* RC QP per peer, a NIC per rank */
	double verbs_serial; /* the same, the ranks of a node on one command queue */
	double dc;	     /* per-process DC, a node's ranks on one command queue */
};

/* The per_rank array: each rank's phases and each of its kr_connect calls. */
static void report_ranks(int ranks, const double *per, const double *conns)
{
	printf(", \"per_rank\": [");
	for (int r = 0; r < ranks; r++) {
		const double *x = per + 5 * r;

		printf("%s{\"rank\": %d, \"node\": %d, \"bootstrap_ms\": %.3f, \"attach_ms\": %.3f, "
		       "\"exchange_ms\": %.3f, \"connect_ms\": %.3f, \"connect_us\": [",
		       r ? ", " : "", r, (int)x[4], x[0], x[1], x[2], x[3]);
		for (int p = 0, first = 1; p < ranks; p++) {
			if (p == r)
				continue;
			printf("%s%.1f", first ? "" : ", ", conns[(size_t)r * ranks + p]);
			first = 0;
		}
		printf("]}");
	}
	printf("]");
}

static void report(int ranks, const struct boot *k, double k_min, int failed,
		   const struct base *v, bool pmix, bool json, const double *per,
		   const double *conns)
{
	const char *lookup = pmix ? "pmix" : "metaserver";

	if (json) {
		printf("{\"bench\": \"mpi_alltoall\", \"lookup\": \"%s\", \"ranks\": %d, "
		       "\"nodes\": %d, "
		       "\"krcore_bootstrap_ms\": %.3f, \"krcore_bootstrap_min_ms\": %.3f, "
		       "\"attach_ms\": %.3f, \"exchange_ms\": %.3f, \"connect_ms\": %.3f",
		       lookup, ranks, k->nodes, k->total, k_min, k->phase[0], k->phase[1],
		       k->phase[2]);
		if (v->verbs > 0)
			printf(", \"verbs_bootstrap_ms\": %.3f, \"bootstrap_ratio\": %.2f",
			       v->verbs, v->verbs / k->total);
		if (v->verbs_serial > 0)
			printf(", \"verbs_serial_bootstrap_ms\": %.3f, \"serial_ratio\": %.2f",
			       v->verbs_serial, v->verbs_serial / k->total);
		if (v->dc > 0)
			printf(", \"dc_bootstrap_ms\": %.3f, \"dc_ratio\": %.2f", v->dc,
			       v->dc / k->total);
		report_ranks(ranks, per, conns);
		printf(", \"failed\": %d}\n", failed);
		return;
	}
	printf("mpi_alltoall: %d ranks on %d nodes, each connected to all others with a WRITE + "
	       "READ checked, peers found by %s, %d failures (times: the slowest rank)\n",
	       ranks, k->nodes, pmix ? "rank in the PMIx store" : "node id", failed);
	printf("%-8s %-52s %12s\n", "path", "what", "bootstrap ms");
	printf("%-8s %-52s %12.3f\n", "krcore", "kr_attach, Allgather, kr_connect, WRITE+READ",
	       k->total);
	printf("%-8s   attach %.3f, exchange %.3f, connects and first completions %.3f; fastest "
	       "rank %.3f\n",
	       "", k->phase[0], k->phase[1], k->phase[2], k_min);
	if (v->verbs > 0) {
		printf("%-8s %-52s %12.3f\n", "verbs",
		       "open, RC QP per peer, Alltoall, RTS, WRITE+READ", v->verbs);
		printf("bootstrap_ratio (verbs / krcore): %.2f\n", v->verbs / k->total);
	}
	if (v->verbs_serial > 0) {
		printf("%-8s %-52s %12.3f\n", "verbs1q",
		       "the same, one command queue per node", v->verbs_serial);
		printf("serial_ratio (verbs, one queue per node / krcore): %.2f\n",
		       v->verbs_serial / k->total);
	}
	if (v->dc > 0) {
		printf("%-8s %-52s %12.3f\n", "dc",
		       "open, 8 DCIs + SRQ + DCT, Allgather, WRITE+READ", v->dc);
		printf("dc_ratio (per-process DC, one queue per node / krcore): %.2f\n",
		       v->dc / k->total);
	}
}

int main(int argc, char **argv)
{
	const char *verbs_dev = NULL, *profile = "connectx4", *ready = NULL;
	struct boot b = {0}, max = {0};
	int rank, ranks, failed, verbs_port = 0, soak_ms = 0;
	double k_min = 0, ms[3] = {0}, ms_max[3] = {0}, *per = NULL, *conns = NULL;
	struct base base = {0};
	bool json = false, pmix = false;
	char dev[96];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--verbs-dev") && i + 1 < argc) {
			verbs_dev = argv[++i];
		} else if (!strcmp(argv[i], "--verbs-port") && i + 1 < argc) {
			verbs_port = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
			profile = argv[++i];
		} else if (!strcmp(argv[i], "--pmix")) {
			pmix = true;
		} else if (!strcmp(argv[i], "--soak") && i + 1 < argc) {
			soak_ms = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--ready") && i + 1 < argc) {
			ready = argv[++i];
		} else {
			if (rank == 0)
				fprintf(stderr, "usage: mpi_alltoall [--json] [--verbs-dev DEV | "
						"--verbs-port PORT [--profile MODEL]] [--pmix] "
						"[--soak MS [--ready FILE]]\n");
			MPI_Finalize();
			return 2;
		}
	}
	b.conn_us = calloc((size_t)ranks, sizeof(double));
	if (!b.conn_us)
		MPI_Abort(MPI_COMM_WORLD, 1);
	failed = krcore_bootstrap(rank, ranks, pmix, soak_ms, ready, &b);
	if (verbs_port > 0 && ranks <= 200) {
		/* a NIC per rank; then the ranks of a node on one command queue, as one NIC */
		const char *sep = strcmp(profile, "none") ? ",profile=" : "";
		const char *prof = strcmp(profile, "none") ? profile : "";

		snprintf(dev, sizeof(dev), "sim:vr%d@127.0.0.%d:%d%s%s", rank, 20 + rank,
			 verbs_port, sep, prof);
		failed += mpi_verbs_bootstrap(dev, rank, ranks, &ms[0]);
		snprintf(dev, sizeof(dev), "sim:vs%d@127.0.0.%d:%d%s%s,cmdq=n%dp%d", rank, 20 + rank,
			 verbs_port, sep, prof, b.node, verbs_port);
		failed += mpi_verbs_bootstrap(dev, rank, ranks, &ms[1]);
		snprintf(dev, sizeof(dev), "sim:dc%d@127.0.0.%d:%d%s%s,cmdq=n%dp%d", rank, 20 + rank,
			 verbs_port, sep, prof, b.node, verbs_port);
		failed += mpi_dc_bootstrap(dev, rank, ranks, &ms[2]);
	} else if (verbs_dev) {
		failed += mpi_verbs_bootstrap(verbs_dev, rank, ranks, &ms[0]);
		failed += mpi_dc_bootstrap(verbs_dev, rank, ranks, &ms[2]);
	}
	MPI_Reduce(ms, ms_max, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	base = (struct base){.verbs = ms_max[0], .verbs_serial = ms_max[1], .dc = ms_max[2]};
	gather_ranks(&b, ranks, &per, &conns);
	failed = gather(&b, failed, &max, &k_min);
	if (rank == 0)
		report(ranks, &max, k_min, failed, &base, pmix, json, per, conns);
	free(per);
	free(conns);
	free(b.conn_us);
	MPI_Finalize();
	return failed ? 1 : 0;
}
