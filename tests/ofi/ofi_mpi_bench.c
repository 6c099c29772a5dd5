/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An MPI benchmark as users write them (mpi.h only; scripts/mpi-ofi-bench.sh
 * runs it over krcore's provider and over Open MPI's own ob1 + tcp):
 *   ofi_mpi_bench pingpong [ITERS]   ranks 0 and 1: 8-byte MPI_Send/MPI_Recv
 *                                    round trips, after 100 warm-up ones;
 *                                    rank 0 prints each round trip's p50 and
 *                                    p99 in microseconds
 *   ofi_mpi_bench bootstrap          every rank: from main() to the end of
 *                                    MPI_Init, and to the end of a first
 *                                    MPI_Alltoall of one int per peer (checked);
 *                                    rank 0 prints the slowest rank's figures
 * Output: one JSON line from rank 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int pingpong(int rank, int iters)
{
	double *rtt = malloc(sizeof(double) * (size_t)iters);
	char buf[8] = {0};

	if (!rtt)
		return 1;
	for (int i = -100; i < iters; i++) {
		double t0 = now_us();

		if (rank == 0) {
			MPI_Send(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
		}
		if (i >= 0)
			rtt[i] = now_us() - t0;
	}
	if (rank == 0) {
		qsort(rtt, (size_t)iters, sizeof(double), cmp_double);
		printf("{\"bench\": \"mpi_pingpong\", \"bytes\": 8, \"iters\": %d, "
		       "\"rtt_p50_us\": %.2f, \"rtt_p99_us\": %.2f}\n",
		       iters, rtt[iters / 2], rtt[(size_t)iters * 99 / 100]);
	}
	free(rtt);
	return 0;
}

int main(int argc, char **argv)
{
	double t0 = now_us(), t_init, t_a2a, mine[2], worst[2];
	int rank, size, bad = 0, anybad = 0, *in, *out;

	MPI_Init(&argc, &argv);
	t_init = now_us();
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc >= 2 && !strcmp(argv[1], "pingpong")) {
		bad = size < 2 || pingpong(rank, argc >= 3 ? atoi(argv[2]) : 2000);
		MPI_Finalize();
		return bad;
	}
	in = malloc(sizeof(int) * (size_t)size);
	out = malloc(sizeof(int) * (size_t)size);
	for (int i = 0; i < size; i++)
		out[i] = rank * 1000 + i;
	MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
	t_a2a = now_us();
	for (int i = 0; i < size; i++)
		bad |= in[i] != i * 1000 + rank;
	mine[0] = (t_init - t0) / 1e3;
	mine[1] = (t_a2a - t0) / 1e3;
	MPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("{\"bench\": \"mpi_bootstrap_ofi\", \"ranks\": %d, \"init_ms\": %.2f, "
		       "\"init_alltoall_ms\": %.2f, \"checked\": %s}\n",
		       size, worst[0], worst[1], anybad ? "false" : "true");
	free(in);
	free(out);
	MPI_Finalize();
	return anybad;
}
