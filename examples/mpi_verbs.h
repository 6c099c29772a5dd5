/* SPDX-License-Identifier: BSD-3-Clause */
/* mpi_alltoall's baseline: the same bootstrap the verbs way (mpi_verbs.c). */
#ifndef MPI_VERBS_H
#define MPI_VERBS_H

#include <stdbool.h>
#include <stdint.h>

#include "devx/devx.h"

/*
 * A rank's NIC in the baselines (mpi_verbs.c): device dev, a PD, a UAR and
 * 24 * ranks bytes registered with every right (slots[ranks], then what it
 * WRITEs and READs back, ranks each). 0 or -errno; close what was opened
 * either way.
 */
struct mpi_nic {
	struct kr_devx_ctx *ctx;
	struct kr_devx_pd pd;
	struct kr_devx_uar *uar;
	uint64_t *mem;
	struct kr_devx_mr mr;
	bool pd_ok, mr_ok;
};
int mpi_nic_open(struct mpi_nic *n, const char *dev, int ranks);
void mpi_nic_close(struct mpi_nic *n);
int64_t mpi_now_ns(void);

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
