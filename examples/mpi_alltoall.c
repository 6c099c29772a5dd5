/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_alltoall: every rank of an MPI job attaches to its node's keeper,
 * connects to every other rank, WRITEs 8 bytes into each peer's memory and
 * READs them back, then checks what every other rank wrote into its own.
 *
 *   mpirun -np N [-x KR_LAUNCH_KEY] [-x KR_KEEPER_SOCKET] mpi_alltoall [--json]
 *
 * The ranks of one job are one launch: they share KR_LAUNCH_KEY (export it
 * to every rank). Each rank finds its keeper at $KR_KEEPER_SOCKET, else the
 * default socket (one keeper per node, the usual cluster setup); a launcher
 * that runs several simulated nodes on one machine sets it per rank
 * (scripts/sim-rank.sh). Nothing else is launcher-specific: the ranks swap
 * (node, address, rkey) once with MPI_Allgather and connect by node id.
 *
 * Bootstrap time: from a barrier before kr_attach to the first completion
 * from every peer (attach, the exchange, every connect and one WRITE + READ
 * to each). Rank 0 prints the slowest rank's, since a job is ready when its
 * last rank is, and the slowest rank's time in each phase (attach, the
 * exchange, connects with their first completions); --json prints one
 * object (ranks, nodes, krcore_bootstrap_ms, attach_ms, exchange_ms,
 * connect_ms).
 * Exit 0 when every byte checked out on every rank, 1 otherwise.
 */
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

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
static int wait_one(struct kr_vqp *vqp, int rank, int peer, const char *what)
{
	int64_t t0 = now_ns();
	struct kr_wc wc;
	int n;

	/* yield while waiting: ranks may share cores (and, on the sim, with the NIC) */
	while ((n = kr_poll(vqp, &wc, 1)) == 0 && now_ns() - t0 < WAIT_NS)
		sched_yield();
	if (n == 1 && wc.status == KR_WC_SUCCESS)
		return 0;
	fprintf(stderr, "rank %d: %s to rank %d: %s\n", rank, what, peer,
		n < 0 ? strerror(-n)
		: n   ? kr_strerror(wc.status)
		      : "no completion in 10 s");
	return -1;
}

/* kr_connect, retried while the peer's node is not registered yet (keepers start together). */
static struct kr_vqp *connect_node(struct kr_ctx *ctx, uint32_t node)
{
	int64_t t0 = now_ns();
	struct kr_vqp *vqp;

	while (!(vqp = kr_connect(ctx, node, NULL)) &&
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
		       struct kr_vqp **vqp, uint64_t *scratch)
{
	int failed = 0;

	for (int p = 0; p < ranks; p++) {
		uint64_t raddr = all[p].addr + 8 * (uint64_t)rank;

		if (p == rank)
			continue;
		vqp[p] = connect_node(ctx, all[p].node);
		if (!vqp[p]) {
			fprintf(stderr, "rank %d: kr_connect(node %" PRIu32 ") for rank %d: %s\n",
				rank, all[p].node, p, strerror(errno));
			failed++;
			continue;
		}
		scratch[2 * p] = mark(rank, p);
		scratch[2 * p + 1] = 0;
		if (kr_post_write(vqp[p], &scratch[2 * p], 8, raddr, all[p].rkey, 1, 0) ||
		    kr_post_read(vqp[p], &scratch[2 * p + 1], 8, raddr, all[p].rkey, 2, 0)) {
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

int main(int argc, char **argv)
{
	int rank, ranks, failed = 0, total_failed = 0,
			 json = argc > 1 && !strcmp(argv[1], "--json");
	double boot_ms, max_ms = 0, min_ms = 0, phase[3], phase_max[3] = {0};
	struct kr_ctx_attr attr;
	struct rank_info me = {0}, *all;
	struct kr_vqp **vqp;
	struct kr_mr_key key;
	struct kr_ctx *ctx;
	struct kr_mr *mr;
	uint64_t *slots, *scratch;
	int64_t t0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	all = calloc((size_t)ranks, sizeof(*all));
	vqp = calloc((size_t)ranks, sizeof(*vqp));
	if (!all || !vqp)
		MPI_Abort(MPI_COMM_WORLD, 1);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_ns();
	ctx = kr_attach(NULL);
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
	phase[0] = (double)(now_ns() - t0) / 1e6;
	me = (struct rank_info){.node = attr.node, .rkey = key.rkey, .addr = key.addr};
	MPI_Allgather(&me, sizeof(me), MPI_BYTE, all, sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
	phase[1] = (double)(now_ns() - t0) / 1e6 - phase[0];
	failed = talk_to_all(ctx, all, rank, ranks, vqp, scratch);
	boot_ms = (double)(now_ns() - t0) / 1e6;
	phase[2] = boot_ms - phase[0] - phase[1];

	/* every WRITE to us landed before the others passed the barrier */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int p = 0; p < ranks; p++)
		if (p != rank && slots[p] != mark(p, rank)) {
			fprintf(stderr, "rank %d: slot of rank %d holds %016" PRIx64 "\n", rank, p,
				slots[p]);
			failed++;
		}
	MPI_Reduce(&boot_ms, &max_ms, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&boot_ms, &min_ms, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
	MPI_Reduce(phase, phase_max, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Allreduce(&failed, &total_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		int nodes = 0;

		for (int p = 0; p < ranks; p++) {
			int q = 0;

			while (q < p && all[q].node != all[p].node)
				q++;
			nodes += q == p;
		}
		if (json)
			printf("{\"bench\": \"mpi_alltoall\", \"ranks\": %d, \"nodes\": %d, "
			       "\"krcore_bootstrap_ms\": %.3f, \"krcore_bootstrap_min_ms\": %.3f, "
			       "\"attach_ms\": %.3f, \"exchange_ms\": %.3f, \"connect_ms\": %.3f, "
			       "\"failed\": %d}\n",
			       ranks, nodes, max_ms, min_ms, phase_max[0], phase_max[1],
			       phase_max[2], total_failed);
		else
			printf("mpi_alltoall: %d ranks on %d nodes, each connected to all others "
			       "with a WRITE + READ checked: bootstrap %.3f ms (slowest rank; "
			       "fastest %.3f ms; slowest attach %.3f, exchange %.3f, connects and "
			       "first completions %.3f ms), %d failures\n",
			       ranks, nodes, max_ms, min_ms, phase_max[0], phase_max[1],
			       phase_max[2], total_failed);
	}
	for (int p = 0; p < ranks; p++)
		if (vqp[p])
			kr_disconnect(vqp[p]);
	kr_dereg_mr(mr);
	kr_detach(ctx);
	free(vqp);
	free(all);
	MPI_Finalize();
	return total_failed ? 1 : 0;
}
