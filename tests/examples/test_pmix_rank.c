/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kr_pmix_exchange / kr_connect_rank under a real PMIx launcher (run by
 * test_mpi_alltoall.sh: mpirun -np 2 over two sim nodes). Every rank:
 * kr_connect_rank before the exchange: ENXIO; bad arguments (NULL ctx, a
 * port): EINVAL; after the exchange a rank past the job: ENOENT; a vQP to
 * every rank, itself included (its own node: the KR_NODE_SELF vQP), READs
 * the peer's greeting. A new attachment must exchange again (ENXIO until
 * it does). Exit 0, 1 on a failed check, 77 when built without PMIx.
 */
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

static int g_rank;

#define EXPECT(c)                                                                                  \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "rank %d: %s:%d: FAIL: %s (errno %d)\n", g_rank, __FILE__, \
				__LINE__, #c, errno);                                              \
			MPI_Abort(MPI_COMM_WORLD, 1);                                              \
		}                                                                                  \
	} while (0)

struct greeting {
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

static uint64_t hello(int rank)
{
	return 0x6b72706d69780000ull | (uint32_t)rank; /* "krpmix" + rank */
}

/* One READ of 8 bytes on v into buf: the completion's status. */
static int read8(struct kr_vqp *v, uint64_t *buf, const struct greeting *g)
{
	struct timespec t0, t;
	struct kr_wc wc;
	int n = 0;

	if (kr_post_read(v, buf, 8, g->addr, g->rkey, 7, 0))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = kr_poll(v, &wc, 1);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!n && t.tv_sec - t0.tv_sec < 10);
	return n == 1 ? (int)wc.status : -1;
}

/* kr_attach, asking again while ENOSPC (the tenant a previous job left being renewed): 10 s. */
static struct kr_ctx *attach(void)
{
	struct kr_ctx *ctx;

	for (int i = 0; !(ctx = kr_attach(NULL)) && errno == ENOSPC && i < 1000; i++)
		usleep(10000);
	return ctx;
}

int main(int argc, char **argv)
{
	struct kr_connect_opts port = {.port = 5};
	struct greeting me, *all;
	struct kr_mr_key key;
	struct kr_ctx *ctx;
	struct kr_mr *mr;
	uint64_t *mine, *buf;
	int ranks, rc;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	ctx = attach();
	EXPECT(ctx != NULL);
	errno = 0;
	EXPECT(kr_connect_rank(ctx, 0, NULL) == NULL && errno == ENXIO); /* no exchange yet */
	rc = kr_pmix_exchange(ctx);
	if (rc == -EOPNOTSUPP) {
		if (g_rank == 0)
			printf("SKIP: libkrcore built without PMIx\n");
		kr_detach(ctx);
		MPI_Finalize();
		return 77;
	}
	EXPECT(rc == 0);
	EXPECT(kr_pmix_exchange(NULL) == -EINVAL);
	errno = 0;
	EXPECT(kr_connect_rank(NULL, 0, NULL) == NULL && errno == EINVAL);
	errno = 0;
	EXPECT(kr_connect_rank(ctx, 0, &port) == NULL && errno == EINVAL);
	errno = 0;
	EXPECT(kr_connect_rank(ctx, (uint32_t)ranks + 3, NULL) == NULL && errno == ENOENT);

	mine = kr_malloc(ctx, 8);
	buf = kr_malloc(ctx, 8);
	EXPECT(mine && buf);
	*mine = hello(g_rank);
	mr = kr_reg_mr(ctx, mine, 8, KR_MR_REMOTE_READ);
	EXPECT(mr && !kr_mr_key(mr, &key));
	me = (struct greeting){.addr = key.addr, .rkey = key.rkey};
	all = calloc((size_t)ranks, sizeof(*all));
	EXPECT(all != NULL);
	MPI_Allgather(&me, sizeof(me), MPI_BYTE, all, sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
	for (int p = 0; p < ranks; p++) { /* itself too */
		struct kr_vqp *v = kr_connect_rank(ctx, (uint32_t)p, NULL);

		EXPECT(v != NULL);
		*buf = 0;
		EXPECT(read8(v, buf, &all[p]) == KR_WC_SUCCESS);
		EXPECT(*buf == hello(p));
		EXPECT(kr_disconnect(v) == 0);
	}
	MPI_Barrier(MPI_COMM_WORLD); /* nobody deregisters while another READs */
	EXPECT(kr_dereg_mr(mr) == 0);
	EXPECT(kr_detach(ctx) == 0);

	/* a new attachment: its own exchange first */
	ctx = attach();
	EXPECT(ctx != NULL);
	errno = 0;
	EXPECT(kr_connect_rank(ctx, 0, NULL) == NULL && errno == ENXIO);
	EXPECT(kr_pmix_exchange(ctx) == 0);
	{
		struct kr_vqp *v = kr_connect_rank(ctx, 0, NULL);

		EXPECT(v != NULL);
		EXPECT(kr_disconnect(v) == 0);
	}
	EXPECT(kr_detach(ctx) == 0);
	free(all);
	if (g_rank == 0)
		printf("pmix: %d ranks: ENXIO before the exchange, EINVAL, ENOENT past the job, a "
		       "READ to every rank through the store, a new attachment exchanges again\n",
		       ranks);
	MPI_Finalize();
	return 0;
}
