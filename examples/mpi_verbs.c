/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs way of mpi_alltoall's bootstrap, what it is measured against:
 * each rank opens its NIC (device, PD, UAR, MR), creates a CQ and an RC QP
 * for every other rank, swaps (QPN, PSN, GID/MAC, address, rkey) with every
 * rank in one MPI_Alltoall, brings each QP through RST->INIT->RTR->RTS,
 * waits in a barrier until every QP of the job is ready to receive, then
 * WRITEs 8 bytes to each peer and READs them back. Through the same devx
 * code krcore's keeper uses (here on a sim device of the rank's own, with
 * the firmware cost model it is given), not through libibverbs, so both
 * sides pay the same modelled firmware costs.
 *
 * On the sim each rank has a NIC of its own, so the firmware commands of
 * two ranks of one node run in parallel: on a real node they would share
 * one NIC's command interface, so this baseline is if anything optimistic.
 */
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <krcore/krcore.h>

#include "devx/devx.h"
#include "sim/sim.h"
#include "mpi_verbs.h"

#define MV_PSN	0x2a2a2aU
#define MV_WAIT (10ll * 1000 * 1000 * 1000)

/* What a rank sends each peer about the QP it made for that peer. */
struct mv_msg {
	uint32_t qpn; /* 0: this rank failed before it had one */
	uint32_t psn;
	struct kr_devx_addr port; /* the sender's GID and MAC */
	uint64_t addr;		  /* the sender's slots */
	uint32_t rkey;
	uint32_t pad;
};

struct mv_conn {
	struct kr_devx_rc rc;
	bool made;
	bool up;
};

struct mv_rank {
	struct mpi_nic nic;
	struct mv_conn *conn;
};

/* mpi_now_ns() - see mpi_verbs.h. */
int64_t mpi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* mpi_nic_open() - see mpi_verbs.h. */
int mpi_nic_open(struct mpi_nic *n, const char *dev, int ranks)
{
	int rc = kr_devx_backend_add(&kr_sim_backend); /* "sim:<host>" names */

	if (!rc)
		rc = kr_devx_open(dev, &n->ctx);
	if (rc)
		return rc;
	rc = kr_devx_pd_alloc(n->ctx, &n->pd);
	if (rc)
		return rc;
	n->pd_ok = true;
	rc = n->ctx->ops->alloc_uar(n->ctx, 0, &n->uar);
	if (rc)
		return rc;
	n->mem = aligned_alloc(4096, (24 * (size_t)ranks + 4095) & ~(size_t)4095);
	if (!n->mem)
		return -ENOMEM;
	memset(n->mem, 0, 24 * (size_t)ranks);
	rc = kr_devx_mr_reg(n->ctx, &n->pd, n->mem, 24 * (size_t)ranks,
			    KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_WRITE,
			    &n->mr);
	n->mr_ok = !rc;
	return rc;
}

/* mpi_nic_close() - see mpi_verbs.h. */
void mpi_nic_close(struct mpi_nic *n)
{
	if (n->mr_ok)
		kr_devx_mr_dereg(&n->mr);
	if (n->uar)
		n->ctx->ops->free_uar(n->uar);
	if (n->pd_ok)
		kr_devx_pd_free(&n->pd);
	if (n->ctx)
		kr_devx_close(n->ctx);
	free(n->mem);
}

static int mv_post(struct mv_conn *k, enum kr_devx_wr_opcode op, uint64_t *local, uint32_t lkey,
		   uint64_t raddr, uint32_t rkey, uint64_t id)
{
	struct kr_devx_sge sge = {.addr = (uintptr_t)local, .length = 8, .lkey = lkey};
	struct kr_devx_wr wr = {.wr_id = id,
				.opcode = op,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = raddr,
				.rkey = rkey};
	int rc = kr_devx_qp_post_send(&k->rc.qp, &wr);

	if (!rc)
		kr_devx_qp_ring(&k->rc.qp);
	return rc;
}

/* The WRITE's and the READ's completions of one peer's QP. 0 or -EIO. */
static int mv_wait_two(struct mv_conn *k)
{
	int64_t t0 = mpi_now_ns();
	int got = 0;

	while (got < 2 && mpi_now_ns() - t0 < MV_WAIT) {
		struct kr_devx_wc wc;
		int n = kr_devx_cq_poll(&k->rc.cq, &wc, 1);

		if (n < 0 || (n == 1 && wc.status != KR_WC_SUCCESS))
			return -EIO;
		got += n;
		if (!n)
			sched_yield();
	}
	return got == 2 ? 0 : -EIO;
}

static void mv_close(struct mv_rank *r, int ranks)
{
	for (int p = 0; r->conn && p < ranks; p++)
		if (r->conn[p].made)
			kr_devx_rc_destroy(&r->conn[p].rc);
	mpi_nic_close(&r->nic);
	free(r->conn);
}

/* mpi_verbs_bootstrap() - see mpi_verbs.h. */
int mpi_verbs_bootstrap(const char *dev, int rank, int ranks, double *ms)
{
	struct mv_rank r = {0};
	struct mv_msg *out = calloc((size_t)ranks, sizeof(*out));
	struct mv_msg *in = calloc((size_t)ranks, sizeof(*in));
	uint64_t *slots, *wr, *rd;
	int failed = 0, rc;
	int64_t t0;

	r.conn = calloc((size_t)ranks, sizeof(*r.conn));
	if (!out || !in || !r.conn)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = mpi_now_ns();
	rc = mpi_nic_open(&r.nic, dev, ranks);
	if (rc) {
		fprintf(stderr, "rank %d: verbs: opening %s: %s\n", rank, dev, strerror(-rc));
		failed++;
	}
	slots = r.nic.mem;
	wr = slots ? slots + ranks : NULL;
	rd = slots ? slots + 2 * ranks : NULL;
	for (int p = 0; !rc && p < ranks; p++) {
		if (p == rank)
			continue;
		rc = kr_devx_rc_create(r.nic.ctx, &r.nic.pd, r.nic.uar, 16, 4, &r.conn[p].rc);
		r.conn[p].made = !rc;
		if (rc) {
			fprintf(stderr, "rank %d: verbs: RC QP for rank %d: %s\n", rank, p,
				strerror(-rc));
			failed++;
			break;
		}
		out[p] = (struct mv_msg){.qpn = r.conn[p].rc.qp.qpn,
					 .psn = MV_PSN,
					 .port = r.nic.ctx->port.addr,
					 .addr = (uintptr_t)slots,
					 .rkey = r.nic.mr.rkey};
	}
	/* every rank takes part in the collectives, failed or not: nobody hangs */
	MPI_Alltoall(out, sizeof(*out), MPI_BYTE, in, sizeof(*in), MPI_BYTE, MPI_COMM_WORLD);
	for (int p = 0; p < ranks; p++) {
		if (p == rank || !r.conn[p].made || !in[p].qpn)
			continue;
		rc = kr_devx_rc_connect(&r.conn[p].rc, &in[p].port, in[p].qpn, in[p].psn, MV_PSN);
		if (rc) {
			fprintf(stderr, "rank %d: verbs: connecting to rank %d: %s\n", rank, p,
				strerror(-rc));
			failed++;
		}
		r.conn[p].up = !rc;
	}
	MPI_Barrier(MPI_COMM_WORLD); /* every QP of the job can receive now */
	for (int p = 0; p < ranks; p++) {
		uint64_t raddr = in[p].addr + 8 * (uint64_t)rank;

		if (!r.conn[p].up)
			continue;
		wr[p] = 0x7600000000000000ull | (uint64_t)(uint32_t)rank << 24 | (uint32_t)p;
		if (mv_post(&r.conn[p], KR_WR_RDMA_WRITE, &wr[p], r.nic.mr.lkey, raddr, in[p].rkey,
			    1) ||
		    mv_post(&r.conn[p], KR_WR_RDMA_READ, &rd[p], r.nic.mr.lkey, raddr, in[p].rkey,
			    2)) {
			r.conn[p].up = false;
			failed++;
		}
	}
	for (int p = 0; p < ranks; p++)
		if (r.conn[p].up && (mv_wait_two(&r.conn[p]) || rd[p] != wr[p])) {
			fprintf(stderr, "rank %d: verbs: WRITE + READ to rank %d failed\n", rank,
				p);
			failed++;
		}
	*ms = (double)(mpi_now_ns() - t0) / 1e6;
	MPI_Barrier(MPI_COMM_WORLD); /* every QP idle before any is destroyed */
	mv_close(&r, ranks);
	free(in);
	free(out);
	return failed;
}
