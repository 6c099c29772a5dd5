/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test fixture over the devx layer (see devx_fixture.h). Rings, doorbell
 * records and registered memory are MAP_SHARED anonymous pages, so a forked
 * child sees the same bytes and can post.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define FX_CQE	       1024u
#define FX_SQ_WQEBB    256u
#define FX_RQ_WQE      64u
#define FX_RQ_SGE      4u
#define FX_SRQ_WQE     256u
#define FX_SRQ_SGE     4u
#define FX_HOP_LIMIT   64u
#define FX_MIN_RNR_NAK 12u /* 0.64 ms */
#define FX_PSN	       0x123456u
#define FX_LOG_RA      4u
#define FX_PORT	       1u

#define FX_ACCESS_ALL                                                                              \
	(KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ |                  \
	 KR_ACCESS_REMOTE_ATOMIC)

static size_t fx_page_align(size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (len + pg - 1) & ~(pg - 1);
}

void *kr_fx_alloc_shared(size_t len)
{
	void *p;

	if (len == 0)
		return NULL;
	p = mmap(NULL, fx_page_align(len), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		 0);
	return p == MAP_FAILED ? NULL : p;
}

void kr_fx_free_shared(void *p, size_t len)
{
	if (p && len)
		munmap(p, fx_page_align(len));
}

static int fx_cq_create(struct kr_fx_host *h, struct kr_devx_cq *cq)
{
	struct kr_devx_cq_attr attr = {
	    .ncqe = FX_CQE,
	    .uar = h->uar,
	    .buf_len = kr_devx_cq_buf_size(FX_CQE),
	};
	int rc;

	attr.buf = kr_fx_alloc_shared(attr.buf_len);
	if (!attr.buf)
		return -ENOMEM;
	rc = kr_devx_cq_create(h->ctx, &attr, cq);
	if (rc)
		kr_fx_free_shared(attr.buf, attr.buf_len);
	return rc;
}

static void fx_cq_destroy(struct kr_devx_cq *cq)
{
	void *buf = cq->buf;
	size_t len = kr_devx_cq_buf_size(cq->ncqe);

	if (!cq->ctx)
		return;
	if (kr_devx_cq_destroy(cq) == 0)
		kr_fx_free_shared(buf, len);
}

int kr_fx_host_open(struct kr_fx_host *h, const char *devname, size_t mem_len)
{
	int rc;

	if (!h || !devname || !mem_len)
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	rc = kr_devx_backend_add(&kr_sim_backend);
	if (!rc)
		rc = kr_devx_open(devname, &h->ctx);
	if (rc)
		return rc;
	rc = kr_devx_pd_alloc(h->ctx, &h->pd);
	if (rc)
		goto err_close;
	rc = h->ctx->ops->alloc_uar(h->ctx, 0, &h->uar);
	if (rc)
		goto err_free_pd;
	rc = fx_cq_create(h, &h->scq);
	if (rc)
		goto err_free_uar;
	rc = fx_cq_create(h, &h->rcq);
	if (rc)
		goto err_destroy_scq;
	h->mem_len = mem_len;
	h->mem = kr_fx_alloc_shared(mem_len);
	if (!h->mem) {
		rc = -ENOMEM;
		goto err_destroy_rcq;
	}
	rc = kr_devx_mr_reg(h->ctx, &h->pd, h->mem, mem_len, FX_ACCESS_ALL, &h->mr);
	if (rc)
		goto err_free_mem;
	return 0;

err_free_mem:
	kr_fx_free_shared(h->mem, mem_len);
err_destroy_rcq:
	fx_cq_destroy(&h->rcq);
err_destroy_scq:
	fx_cq_destroy(&h->scq);
err_free_uar:
	h->ctx->ops->free_uar(h->uar);
err_free_pd:
	kr_devx_pd_free(&h->pd);
err_close:
	kr_devx_close(h->ctx);
	memset(h, 0, sizeof(*h));
	return rc;
}

void kr_fx_host_close(struct kr_fx_host *h)
{
	if (!h || !h->ctx)
		return;
	kr_devx_mr_dereg(&h->mr);
	kr_fx_free_shared(h->mem, h->mem_len);
	fx_cq_destroy(&h->rcq);
	fx_cq_destroy(&h->scq);
	h->ctx->ops->free_uar(h->uar);
	kr_devx_pd_free(&h->pd);
	kr_devx_close(h->ctx);
	memset(h, 0, sizeof(*h));
}

void kr_fx_conn_default(struct kr_devx_qp_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->port = FX_PORT;
	c->access = KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC;
	c->sgid_index = 0;
	c->hop_limit = FX_HOP_LIMIT;
	c->udp_sport = 0;
	c->mtu = KR_MTU_1K;
	c->rq_psn = FX_PSN;
	c->sq_psn = FX_PSN;
	c->min_rnr_nak = FX_MIN_RNR_NAK;
	c->ack_timeout = 12;
	c->retry_count = 7;
	c->rnr_retry = 7;
	c->log_sra_max = FX_LOG_RA;
	c->log_rra_max = FX_LOG_RA;
}

/* The QP attributes the fixture uses; buf/buf_len filled by fx_qp_create. */
static void fx_qp_attr(struct kr_fx_host *h, enum kr_devx_qp_type type, struct kr_devx_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->pdn = h->pd.pdn;
	a->send_cq = &h->scq;
	a->uar = h->uar;
	a->sq_wqebb = FX_SQ_WQEBB;
	if (type == KR_DEVX_QP_RC) {
		a->recv_cq = &h->rcq;
		a->rq_wqe = FX_RQ_WQE;
		a->max_recv_sge = FX_RQ_SGE;
	}
}

static int fx_qp_create(struct kr_fx_host *h, struct kr_devx_qp_attr *a, struct kr_devx_qp *qp)
{
	int rc;

	a->buf_len = kr_devx_qp_buf_size(a);
	a->buf = kr_fx_alloc_shared(a->buf_len);
	if (!a->buf)
		return -ENOMEM;
	rc = kr_devx_qp_create(h->ctx, a, qp);
	if (rc)
		kr_fx_free_shared(a->buf, a->buf_len);
	return rc;
}

/* Rebuild the attributes a fixture QP was created with, to size its buffer. */
static size_t fx_qp_buf_len(const struct kr_devx_qp *qp)
{
	struct kr_devx_qp_attr a = {
	    .type = qp->type,
	    .sq_wqebb = qp->sq_wqebb_cnt,
	    .rq_wqe = qp->rq_wqe_cnt,
	    .max_recv_sge = qp->rq_wqe_cnt ? (1u << qp->rq_log_stride) / 16u : 0,
	};

	return kr_devx_qp_buf_size(&a);
}

void kr_fx_qp_destroy(struct kr_devx_qp *qp)
{
	void *buf;
	size_t len;
	bool own;

	if (!qp || !qp->ctx)
		return;
	buf = qp->buf;
	own = qp->own_buf;
	len = fx_qp_buf_len(qp);
	if (kr_devx_qp_destroy(qp) == 0 && !own)
		kr_fx_free_shared(buf, len);
}

int kr_fx_rc_create(struct kr_fx_host *h, struct kr_devx_qp *qp)
{
	struct kr_devx_qp_attr attr;

	if (!h || !qp)
		return -EINVAL;
	fx_qp_attr(h, KR_DEVX_QP_RC, &attr);
	return fx_qp_create(h, &attr, qp);
}

int kr_fx_rc_pair(struct kr_fx_host *a, struct kr_devx_qp *qa, struct kr_fx_host *b,
		  struct kr_devx_qp *qb, const struct kr_devx_qp_conn *tmpl)
{
	struct kr_devx_qp_conn ca, cb;
	int rc;

	if (!a || !qa || !b || !qb)
		return -EINVAL;
	if (tmpl)
		ca = *tmpl;
	else
		kr_fx_conn_default(&ca);
	/* b receives what a sends and the other way round: swap the PSNs. */
	cb = ca;
	cb.sq_psn = ca.rq_psn;
	cb.rq_psn = ca.sq_psn;

	rc = kr_fx_rc_create(a, qa);
	if (rc)
		return rc;
	rc = kr_fx_rc_create(b, qb);
	if (rc)
		goto err_destroy_qa;

	ca.remote_qpn = qb->qpn;
	cb.remote_qpn = qa->qpn;
	kr_devx_qp_conn_path(&ca, &a->ctx->port, &b->ctx->port.addr, qa->qpn, qb->qpn);
	kr_devx_qp_conn_path(&cb, &b->ctx->port, &a->ctx->port.addr, qb->qpn, qa->qpn);
	rc = kr_devx_qp_connect(qa, &ca);
	if (rc)
		goto err_destroy_qb;
	rc = kr_devx_qp_connect(qb, &cb);
	if (rc)
		goto err_destroy_qb;
	return 0;

err_destroy_qb:
	kr_fx_qp_destroy(qb);
err_destroy_qa:
	kr_fx_qp_destroy(qa);
	return rc;
}

int kr_fx_dci_create(struct kr_fx_host *h, struct kr_devx_qp *dci,
		     const struct kr_devx_qp_conn *tmpl)
{
	struct kr_devx_qp_attr attr;
	struct kr_devx_qp_conn c;
	int rc;

	if (!h || !dci)
		return -EINVAL;
	if (tmpl)
		c = *tmpl;
	else
		kr_fx_conn_default(&c);
	c.sgid_index = (uint8_t)h->ctx->port.gid_index;
	fx_qp_attr(h, KR_DEVX_QP_DCI, &attr);
	rc = fx_qp_create(h, &attr, dci);
	if (rc)
		return rc;
	rc = kr_devx_qp_connect(dci, &c);
	if (rc)
		kr_fx_qp_destroy(dci);
	return rc;
}

int kr_fx_dct_create(struct kr_fx_host *h, struct kr_devx_srq *srq, struct kr_devx_dct *dct,
		     uint64_t dc_key)
{
	struct kr_devx_srq_attr sattr = {
	    .pdn = h ? h->pd.pdn : 0,
	    .nwqe = FX_SRQ_WQE,
	    .max_sge = FX_SRQ_SGE,
	};
	struct kr_devx_dct_attr dattr;
	int rc;

	if (!h || !srq || !dct)
		return -EINVAL;
	sattr.buf_len = kr_devx_srq_buf_size(&sattr);
	sattr.buf = kr_fx_alloc_shared(sattr.buf_len);
	if (!sattr.buf)
		return -ENOMEM;
	rc = kr_devx_srq_create(h->ctx, &sattr, srq);
	if (rc)
		goto err_free_buf;

	memset(&dattr, 0, sizeof(dattr));
	dattr.pdn = h->pd.pdn;
	dattr.cq = &h->rcq;
	dattr.srq = srq;
	dattr.dc_key = dc_key;
	dattr.access = KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC;
	dattr.port = FX_PORT;
	dattr.mtu = KR_MTU_1K;
	dattr.min_rnr_nak = FX_MIN_RNR_NAK;
	dattr.gid_index = (uint8_t)h->ctx->port.gid_index;
	dattr.hop_limit = FX_HOP_LIMIT;
	rc = kr_devx_dct_create(h->ctx, &dattr, dct);
	if (rc)
		goto err_destroy_srq;
	return 0;

err_destroy_srq:
	kr_devx_srq_destroy(srq);
err_free_buf:
	kr_fx_free_shared(sattr.buf, sattr.buf_len);
	return rc;
}

void kr_fx_dct_destroy(struct kr_devx_dct *dct, struct kr_devx_srq *srq)
{
	if (dct && dct->obj)
		kr_devx_dct_destroy(dct);
	if (srq && srq->ctx) {
		struct kr_devx_srq_attr sattr = {
		    .nwqe = srq->nwqe,
		    .max_sge = (1u << srq->log_stride) / 16u,
		};
		void *buf = srq->buf;
		bool own = srq->own_buf;

		if (kr_devx_srq_destroy(srq) == 0 && !own)
			kr_fx_free_shared(buf, kr_devx_srq_buf_size(&sattr));
	}
}

void kr_fx_dc_av(const struct kr_fx_host *from, const struct kr_fx_host *target,
		 const struct kr_devx_dct *dct, struct kr_devx_dc_av *av)
{
	memset(av, 0, sizeof(*av));
	av->dctn = dct->dctn;
	av->dc_key = dct->dc_key;
	kr_devx_dc_av_path(av, &from->ctx->port, &target->ctx->port.addr, 1, dct->dctn);
}

static uint64_t fx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int kr_fx_poll_one(struct kr_devx_cq *cq, struct kr_devx_wc *wc, int timeout_ms)
{
	uint64_t deadline = fx_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	int n;

	for (;;) {
		n = kr_devx_cq_poll(cq, wc, 1);
		if (n < 0)
			return n;
		if (n == 1)
			return 0;
		if (fx_now_ms() >= deadline)
			return -ETIMEDOUT;
		sched_yield();
	}
}

int kr_fx_post_wait(struct kr_fx_host *h, struct kr_devx_qp *qp, struct kr_devx_wr *wr,
		    int timeout_ms)
{
	struct kr_devx_wc wc;
	int rc;

	wr->flags |= KR_WR_SIGNALED;
	rc = kr_devx_qp_post_send(qp, wr);
	if (rc)
		return rc;
	kr_devx_qp_ring(qp);
	rc = kr_fx_poll_one(&h->scq, &wc, timeout_ms);
	if (rc)
		return rc;
	if (wc.wr_id != wr->wr_id)
		return -EPROTO;
	return wc.status;
}

void kr_fx_expect_wc(struct kr_devx_cq *cq, uint64_t wr_id, int status, uint32_t qpn,
		     struct kr_devx_wc *out)
{
	struct kr_devx_wc wc;

	memset(&wc, 0, sizeof(wc));
	CHECK_OK(kr_fx_poll_one(cq, &wc, 5000));
	if (wc.status != status)
		KR_FAIL("wr_id %#llx: status %d (%s, syndrome %#x), expected %d (%s)",
			(unsigned long long)wc.wr_id, wc.status, kr_strerror(wc.status),
			wc.syndrome, status, kr_strerror(status));
	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.qpn, qpn);
	if (out)
		*out = wc;
}

int kr_fx_poll_none(struct kr_devx_cq *cq, int timeout_ms)
{
	uint64_t deadline = fx_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	struct kr_devx_wc wc[16];
	int n, total = 0;

	do {
		n = kr_devx_cq_poll(cq, wc, 16);
		if (n > 0)
			total += n;
		else
			sched_yield();
	} while (fx_now_ms() < deadline);
	return total;
}

struct kr_devx_sge kr_fx_sge(struct kr_fx_host *h, size_t off, uint32_t len)
{
	struct kr_devx_sge sge = {
	    .addr = (uint64_t)(uintptr_t)h->mem + off,
	    .length = len,
	    .lkey = h->mr.lkey,
	};

	return sge;
}

struct kr_devx_wr kr_fx_dc_write(const struct kr_fx_host *target, const struct kr_devx_sge *sge,
				 const struct kr_devx_dc_av *av, uint64_t raddr, uint64_t wr_id)
{
	struct kr_devx_wr wr = {.wr_id = wr_id,
				.opcode = KR_WR_RDMA_WRITE,
				.flags = KR_WR_SIGNALED,
				.sge = sge,
				.num_sge = 1,
				.remote_addr = raddr,
				.rkey = target->mr.rkey,
				.av = av};

	return wr;
}
