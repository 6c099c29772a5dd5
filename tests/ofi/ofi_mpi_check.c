/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An MPI program as users write them: it includes only mpi.h and knows
 * nothing of krcore; test_ofi_mpi.sh runs it with mpirun over Open MPI's
 * cm pml + ofi mtl + the krcore provider. Every result is checked:
 *   p2p        a ring with tags, received with MPI_ANY_SOURCE/MPI_ANY_TAG
 *              (status names the sender and tag), then from a named source
 *   nonblock   Isend/Irecv to every rank at once, sizes 1 B .. 16 MiB
 *   probe      MPI_Probe then MPI_Recv of the size it gave; MPI_Iprobe until
 *              found; MPI_Mprobe + MPI_Mrecv; a probe that finds nothing
 *   colls      Barrier, Bcast of 1 MiB, Allreduce, Alltoall, Alltoallv
 * Prints "ofi_mpi: N ranks, every check passed" on rank 0; exit 1 on a failure.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size, g_fail;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", g_rank, __FILE__,    \
				__LINE__, #c);                                                     \
			g_fail = 1;                                                                \
		}                                                                                  \
	} while (0)

static uint8_t pattern(int from, int to, size_t i)
{
	return (uint8_t)(from * 131 + to * 31 + i * 7 + (i >> 12));
}

static void fill(uint8_t *b, size_t n, int from, int to)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pattern(from, to, i);
}

static int same(const uint8_t *b, size_t n, int from, int to)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pattern(from, to, i))
			return 0;
	return 1;
}

static void test_p2p(void)
{
	int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
	uint8_t out[300], in[300];
	MPI_Status st;
	int n;

	fill(out, sizeof(out), g_rank, next);
	MPI_Send(out, sizeof(out), MPI_BYTE, next, 100 + g_rank, MPI_COMM_WORLD);
	MPI_Recv(in, sizeof(in), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &n);
	CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 100 + prev && n == (int)sizeof(in));
	if (st.MPI_SOURCE != prev || st.MPI_TAG != 100 + prev || n != (int)sizeof(in))
		fprintf(stderr, "rank %d: the ring's message came from %d, tag %d, %d bytes\n",
			g_rank, st.MPI_SOURCE, st.MPI_TAG, n);
	CHECK(same(in, sizeof(in), prev, g_rank));
	/* two tags in one direction, received in the other order by tag */
	MPI_Send(out, 10, MPI_BYTE, next, 1, MPI_COMM_WORLD);
	MPI_Send(out, 20, MPI_BYTE, next, 2, MPI_COMM_WORLD);
	MPI_Recv(in, sizeof(in), MPI_BYTE, prev, 2, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &n);
	CHECK(n == 20 && st.MPI_TAG == 2);
	MPI_Recv(in, sizeof(in), MPI_BYTE, prev, 1, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &n);
	CHECK(n == 10 && st.MPI_TAG == 1 && same(in, 10, prev, g_rank));
}

static void test_nonblocking(void)
{
	static const size_t sizes[] = {1, 64, 4096, 4097, 300000, 16u << 20};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];
		/* 16 MiB only with the two neighbours: the sim's wire is slow */
		int all = len < (1u << 20);
		int npeer = all ? g_size : 2;
		MPI_Request *rq = calloc(2 * (size_t)npeer, sizeof(*rq));
		uint8_t **in = calloc(npeer, sizeof(*in)), **out = calloc(npeer, sizeof(*out));
		int k = 0;

		for (int i = 0; i < npeer; i++) {
			int peer = all ? i : (g_rank + (i ? 1 : g_size - 1)) % g_size;
			int to = all ? i : (g_rank + (i ? g_size - 1 : 1)) % g_size;

			in[i] = malloc(len);
			out[i] = malloc(len);
			fill(out[i], len, g_rank, to);
			MPI_Irecv(in[i], (int)len, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[k++]);
			MPI_Isend(out[i], (int)len, MPI_BYTE, to, 7, MPI_COMM_WORLD, &rq[k++]);
		}
		MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
		for (int i = 0; i < npeer; i++) {
			int peer = all ? i : (g_rank + (i ? 1 : g_size - 1)) % g_size;

			if (!same(in[i], len, peer, g_rank)) {
				fprintf(stderr, "rank %d: %zu bytes from %d wrong\n", g_rank, len,
					peer);
				g_fail = 1;
			}
			free(in[i]);
			free(out[i]);
		}
		free(in);
		free(out);
		free(rq);
	}
}

static void test_probe(void)
{
	int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
	size_t big = 200000;
	uint8_t *out = malloc(big), *in = malloc(big);
	MPI_Message msg;
	MPI_Request rq;
	MPI_Status st;
	int n, flag = 0;

	fill(out, big, g_rank, next);
	/* Probe, then a receive of exactly what it said */
	MPI_Send(out, 1234, MPI_BYTE, next, 11, MPI_COMM_WORLD);
	MPI_Probe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &n);
	CHECK(n == 1234 && st.MPI_SOURCE == prev);
	MPI_Recv(in, n, MPI_BYTE, st.MPI_SOURCE, 11, MPI_COMM_WORLD, &st);
	CHECK(same(in, 1234, prev, g_rank));
	/* Iprobe until it shows (a large one), then receive it; the send is
	 * non-blocking: a large MPI_Send may wait for its receive (MPI 3.1, 3.4) */
	MPI_Isend(out, (int)big, MPI_BYTE, next, 12, MPI_COMM_WORLD, &rq);
	while (!flag)
		MPI_Iprobe(prev, 12, MPI_COMM_WORLD, &flag, &st);
	MPI_Get_count(&st, MPI_BYTE, &n);
	CHECK(n == (int)big);
	MPI_Recv(in, n, MPI_BYTE, prev, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Wait(&rq, MPI_STATUS_IGNORE);
	CHECK(same(in, big, prev, g_rank));
	/* Mprobe + Mrecv: the message is ours once probed; one small, one large */
	for (int t = 0; t < 2; t++) {
		int len = t ? (int)big : 77;

		MPI_Isend(out, len, MPI_BYTE, next, 13, MPI_COMM_WORLD, &rq);
		MPI_Mprobe(MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, &msg, &st);
		MPI_Get_count(&st, MPI_BYTE, &n);
		CHECK(n == len && st.MPI_SOURCE == prev);
		memset(in, 0, big);
		MPI_Mrecv(in, n, MPI_BYTE, &msg, &st);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		CHECK(same(in, (size_t)len, prev, g_rank));
	}
	/* nothing was sent with tag 14: Iprobe says so */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Iprobe(MPI_ANY_SOURCE, 14, MPI_COMM_WORLD, &flag, &st);
	CHECK(!flag);
	free(out);
	free(in);
}

static void test_collectives(void)
{
	size_t blen = 1u << 20;
	uint8_t *b = malloc(blen);
	int *a2a_in = malloc(sizeof(int) * g_size), *a2a_out = malloc(sizeof(int) * g_size);
	int *sc = malloc(sizeof(int) * g_size), *sd = malloc(sizeof(int) * g_size);
	int *rc = malloc(sizeof(int) * g_size), *rd = malloc(sizeof(int) * g_size);
	long sum = 0, want = 0;
	int *vin, *vout, stot = 0, rtot = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	if (g_rank == 0)
		fill(b, blen, 0, 0);
	else
		memset(b, 0, blen);
	MPI_Bcast(b, (int)blen, MPI_BYTE, 0, MPI_COMM_WORLD);
	CHECK(same(b, blen, 0, 0));
	{
		long mine = g_rank + 1;

		MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		want = (long)g_size * (g_size + 1) / 2;
		CHECK(sum == want);
	}
	for (int i = 0; i < g_size; i++)
		a2a_out[i] = g_rank * 1000 + i;
	MPI_Alltoall(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, MPI_COMM_WORLD);
	for (int i = 0; i < g_size; i++)
		CHECK(a2a_in[i] == i * 1000 + g_rank);
	/* Alltoallv: rank r sends r + i + 1 ints to rank i */
	for (int i = 0; i < g_size; i++) {
		sc[i] = g_rank + i + 1;
		sd[i] = stot;
		stot += sc[i];
		rc[i] = i + g_rank + 1;
		rd[i] = rtot;
		rtot += rc[i];
	}
	vout = malloc(sizeof(int) * stot);
	vin = malloc(sizeof(int) * rtot);
	for (int i = 0; i < g_size; i++)
		for (int j = 0; j < sc[i]; j++)
			vout[sd[i] + j] = g_rank * 100000 + i * 100 + j;
	MPI_Alltoallv(vout, sc, sd, MPI_INT, vin, rc, rd, MPI_INT, MPI_COMM_WORLD);
	for (int i = 0; i < g_size; i++)
		for (int j = 0; j < rc[i]; j++)
			CHECK(vin[rd[i] + j] == i * 100000 + g_rank * 100 + j);
	free(b);
	free(a2a_in);
	free(a2a_out);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
	free(vin);
	free(vout);
}

int main(int argc, char **argv)
{
	int bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g_size);
	static const struct {
		const char *name;
		void (*fn)(void);
	} steps[] = {{"p2p", test_p2p},
		     {"nonblocking", test_nonblocking},
		     {"probe", test_probe},
		     {"collectives", test_collectives}};
	int verbose = getenv("OFI_MPI_VERBOSE") != NULL;
	const char *only = getenv("OFI_MPI_ONLY");

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (only && strcmp(only, steps[i].name))
			continue;
		if (verbose)
			fprintf(stderr, "rank %d: %s\n", g_rank, steps[i].name);
		steps[i].fn();
		/*
		 * a faster rank's next step must not feed this one's wildcard
		 * receives (MPI may match them: seen as the ring's first
		 * receive taking a 1-byte tag-7 message of the next step)
		 */
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Allreduce(&g_fail, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (g_rank == 0)
		printf(bad ? "ofi_mpi: %d ranks, a check FAILED\n"
			   : "ofi_mpi: %d ranks, every check passed\n",
		       g_size);
	MPI_Finalize();
	return bad ? 1 : 0;
}
