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

#endif
