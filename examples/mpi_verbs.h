/* SPDX-License-Identifier: BSD-3-Clause */
/* mpi_alltoall's baseline: the same bootstrap the verbs way (mpi_verbs.c). */
#ifndef MPI_VERBS_H
#define MPI_VERBS_H

/*
 * Collective over MPI_COMM_WORLD: open device dev (this rank's), an RC QP
 * per peer, one MPI_Alltoall of QP numbers and addresses, every QP to RTS,
 * a barrier, one WRITE + READ checked per peer. *ms: this rank's time from
 * the first barrier to its last completion. Returns the failures (0: all
 * bytes checked).
 */
int mpi_verbs_bootstrap(const char *dev, int rank, int ranks, double *ms);

/*
 * The same job bootstrapped as a per-process DC transport would (mpi_dc.c):
 * device, 8 DCIs, an SRQ and a DC target per rank, one MPI_Allgather, then a
 * WRITE + READ checked per peer through the DCIs. Collective; *ms and the
 * return value as mpi_verbs_bootstrap's.
 */
int mpi_dc_bootstrap(const char *dev, int rank, int ranks, double *ms);

#endif
