/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi_alltoall's second baseline: the bootstrap a per-process DC transport
 * makes, as UCX's dc_mlx5 does at MPI_Init. Each rank opens its NIC (device,
 * PD, UAR, MR), creates a send CQ, 8 DCIs, an SRQ with its CQ and one DC
 * target; the ranks swap (DCT number, address, memory) in one
 * MPI_Allgather; then each rank WRITEs 8 bytes to every peer through a DCI
 * (peer % 8) and READs them back. No per-peer QP and no per-peer handshake:
 * what is left is the per-process setup krcore's keepers keep warm. Same
 * devx code and firmware cost model as mpi_verbs.c; the rank's NIC is the
 * device it is given (on the sim, one per rank, on its node's command queue
 * when the name says cmdq=).
 */
#include <errno.h>
#include <mpi.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx/devx.h"
#include "sim/sim.h"
#include "mpi_verbs.h"

#define MD_DCIS	 8 /* UCX dc_mlx5's default DCI pool */
#define MD_KEY	 0x6b72646362617365ull
#define MD_WAIT	 (10ll * 1000 * 1000 * 1000)
#define MD_SRQ	 64u
#define MD_PSN	 0x2b2b2bu

/* What a rank tells the others. */
struct md_info {
	uint32_t dctn; /* 0: this rank failed before it had one */
	uint32_t rkey;
	struct kr_devx_addr port;
	uint64_t addr; /* its slots */
};

struct md_rank {
	struct mpi_nic nic;
	struct kr_devx_cq scq, rcq;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_qp dci[MD_DCIS];
	bool scq_ok, rcq_ok, srq_ok, dct_ok;
	int ndci;
};

static int md_dci(struct md_rank *r, struct kr_devx_qp *q)
{
	struct kr_devx_qp_attr qa = {.type = KR_DEVX_QP_DCI,
				     .pdn = r->nic.pd.pdn,
				     .send_cq = &r->scq,
				     .uar = r->nic.uar,
				     .sq_wqebb = 64};
	struct kr_devx_qp_conn c = {.port = 1,
				    .sgid_index = (uint8_t)r->nic.ctx->port.gid_index,
				    .hop_limit = 64,
				    .mtu = KR_MTU_1K,
				    .sq_psn = MD_PSN,
				    .ack_timeout = 14,
				    .retry_count = 7,
				    .rnr_retry = 7,
				    .log_sra_max = 4};
	int rc = kr_devx_qp_create(r->nic.ctx, &qa, q);

	if (!rc && (rc = kr_devx_qp_connect(q, &c)))
		kr_devx_qp_destroy(q);
	return rc;
}

/* The NIC, CQs, SRQ, DC target, DCIs: what dc_mlx5 sets up per process. */
static int md_open(struct md_rank *r, const char *dev, int ranks)
{
	struct kr_devx_cq_attr sca = {.ncqe = 1024}, rca = {.ncqe = MD_SRQ};
	struct kr_devx_srq_attr sa = {.nwqe = MD_SRQ, .max_sge = 1};
	struct kr_devx_dct_attr da = {.dc_key = MD_KEY,
				      .access = KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_WRITE,
				      .port = 1,
				      .mtu = KR_MTU_1K,
				      .min_rnr_nak = 12,
				      .hop_limit = 64};
	struct kr_devx_ctx *ctx;
	int rc = mpi_nic_open(&r->nic, dev, ranks);

	if (rc)
		return rc;
	ctx = r->nic.ctx;
	sca.uar = rca.uar = r->nic.uar;
	if (!(rc = kr_devx_cq_create(ctx, &sca, &r->scq)))
		r->scq_ok = true;
	if (!rc && !(rc = kr_devx_cq_create(ctx, &rca, &r->rcq)))
		r->rcq_ok = true;
	sa.pdn = da.pdn = r->nic.pd.pdn;
	if (!rc && !(rc = kr_devx_srq_create(ctx, &sa, &r->srq)))
		r->srq_ok = true;
	da.cq = &r->rcq;
	da.srq = &r->srq;
	da.gid_index = (uint8_t)ctx->port.gid_index;
	if (!rc && !(rc = kr_devx_dct_create(ctx, &da, &r->dct)))
		r->dct_ok = true;
	for (; !rc && r->ndci < MD_DCIS; r->ndci++)
		rc = md_dci(r, &r->dci[r->ndci]);
	return rc;
}

static void md_close(struct md_rank *r)
{
	for (int i = 0; i < r->ndci; i++)
		kr_devx_qp_destroy(&r->dci[i]);
	if (r->dct_ok)
		kr_devx_dct_destroy(&r->dct);
	if (r->srq_ok)
		kr_devx_srq_destroy(&r->srq);
	if (r->rcq_ok)
		kr_devx_cq_destroy(&r->rcq);
	if (r->scq_ok)
		kr_devx_cq_destroy(&r->scq);
	mpi_nic_close(&r->nic);
}

/* A WRITE or READ of 8 bytes to peer p's slot for us, through DCI p % MD_DCIS. */
static int md_post(struct md_rank *r, const struct md_info *peer, int p, int rank,
		   enum kr_devx_wr_opcode op, uint64_t *local)
{
	struct kr_devx_qp *q = &r->dci[p % MD_DCIS];
	struct kr_devx_sge sge = {.addr = (uintptr_t)local, .length = 8, .lkey = r->nic.mr.lkey};
	struct kr_devx_dc_av av = {.dctn = peer->dctn, .dc_key = MD_KEY};
	struct kr_devx_wr wr = {.wr_id = (uint64_t)p << 1 | (op == KR_WR_RDMA_READ),
				.opcode = op,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = peer->addr + 8 * (uint64_t)rank,
				.rkey = peer->rkey,
				.av = &av};
	int rc;

	kr_devx_dc_av_path(&av, &r->nic.ctx->port, &peer->port, q->qpn, peer->dctn);
	rc = kr_devx_qp_post_send(q, &wr);
	if (!rc)
		kr_devx_qp_ring(q);
	return rc;
}

/* mpi_dc_bootstrap() - see mpi_verbs.h. */
int mpi_dc_bootstrap(const char *dev, int rank, int ranks, double *ms)
{
	struct md_info me = {0}, *all = calloc((size_t)ranks, sizeof(*all));
	struct md_rank r = {0};
	uint64_t *wr = NULL, *rd = NULL;
	int failed = 0, want = 0, got = 0, rc;
	int64_t t0;

	if (!all)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = mpi_now_ns();
	rc = md_open(&r, dev, ranks);
	if (rc) {
		fprintf(stderr, "rank %d: dc: setting up %s: %s\n", rank, dev, strerror(-rc));
		failed++;
	} else {
		me = (struct md_info){.dctn = r.dct.dctn,
				      .rkey = r.nic.mr.rkey,
				      .port = r.nic.ctx->port.addr,
				      .addr = (uintptr_t)r.nic.mem};
		wr = r.nic.mem + ranks;
		rd = r.nic.mem + 2 * ranks;
	}
	/* every rank takes part, failed or not: nobody hangs */
	MPI_Allgather(&me, sizeof(me), MPI_BYTE, all, sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
	for (int p = 0; !rc && p < ranks; p++) {
		if (p == rank || !all[p].dctn)
			continue;
		wr[p] = 0x6400000000000000ull | (uint64_t)(uint32_t)rank << 24 | (uint32_t)p;
		if (md_post(&r, &all[p], p, rank, KR_WR_RDMA_WRITE, &wr[p]) ||
		    md_post(&r, &all[p], p, rank, KR_WR_RDMA_READ, &rd[p])) {
			fprintf(stderr, "rank %d: dc: post to rank %d failed\n", rank, p);
			failed++;
			break;
		}
		want += 2;
	}
	while (got < want && mpi_now_ns() - t0 < MD_WAIT) {
		struct kr_devx_wc wc[16];
		int n = kr_devx_cq_poll(&r.scq, wc, 16);

		for (int i = 0; i < n; i++)
			if (wc[i].status != KR_WC_SUCCESS) {
				fprintf(stderr, "rank %d: dc: to rank %d: %s\n", rank,
					(int)(wc[i].wr_id >> 1), kr_strerror((int)wc[i].status));
				failed++;
			}
		got += n > 0 ? n : 0;
		if (n <= 0)
			sched_yield();
	}
	if (got < want) {
		fprintf(stderr, "rank %d: dc: %d of %d completions in 10 s\n", rank, got, want);
		failed++;
	}
	for (int p = 0; !rc && p < ranks; p++)
		if (p != rank && all[p].dctn && rd[p] != wr[p]) {
			fprintf(stderr, "rank %d: dc: READ back from rank %d differs\n", rank, p);
			failed++;
		}
	*ms = (double)(mpi_now_ns() - t0) / 1e6;
	MPI_Barrier(MPI_COMM_WORLD); /* every DCT idle before any goes */
	md_close(&r);
	free(all);
	return failed;
}
