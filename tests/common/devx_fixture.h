/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test fixture over the devx layer: a simulated host with a PD, a UAR, send
 * and receive CQs and a registered buffer, and helpers that build connected
 * RC pairs, DCIs and DCTs. All rings and buffers are MAP_SHARED so a forked
 * child can post into them.
 */
#ifndef KR_DEVX_FIXTURE_H
#define KR_DEVX_FIXTURE_H

#include "devx/devx.h"

struct kr_fx_host {
	struct kr_devx_ctx *ctx;
	struct kr_devx_pd pd;
	struct kr_devx_uar *uar;
	struct kr_devx_cq scq;   /* send completions */
	struct kr_devx_cq rcq;   /* receive completions */
	void *mem;               /* registered with every access right */
	size_t mem_len;
	struct kr_devx_mr mr;
};

/* Open devname ("sim:<name>"), PD, UAR, two 1024-entry CQs, mem_len bytes of MR. */
int kr_fx_host_open(struct kr_fx_host *h, const char *devname, size_t mem_len);
void kr_fx_host_close(struct kr_fx_host *h);

/* Default connection parameters: port 1, MTU 1K, all remote access, retry 7/7, ack_timeout 12. */
void kr_fx_conn_default(struct kr_devx_qp_conn *c);

/* MAP_SHARED|MAP_ANONYMOUS memory, page aligned; kr_fx_free_shared to release. */
void *kr_fx_alloc_shared(size_t len);
void kr_fx_free_shared(void *p, size_t len);

/*
 * kr_fx_rc_create() - one RC QP of h (its CQs, the fixture's sizes), in
 * RESET, for a peer the caller connects it to (kr_devx_qp_connect).
 */
int kr_fx_rc_create(struct kr_fx_host *h, struct kr_devx_qp *qp);

/*
 * Create an RC QP on each host (256 WQEBBs, 64 receive WQEs, 4 SGEs) with caller-
 * shared buffers, and bring both to RTS pointing at each other. tmpl: optional
 * overrides (ack_timeout, retry_count, rnr_retry, min_rnr_nak...) applied to both.
 */
int kr_fx_rc_pair(struct kr_fx_host *a, struct kr_devx_qp *qa, struct kr_fx_host *b,
		  struct kr_devx_qp *qb, const struct kr_devx_qp_conn *tmpl);
void kr_fx_qp_destroy(struct kr_devx_qp *qp);

/* A DCI (256 WQEBBs) on h, in RTS. tmpl optional. */
int kr_fx_dci_create(struct kr_fx_host *h, struct kr_devx_qp *dci,
		     const struct kr_devx_qp_conn *tmpl);

/* An SRQ (256 WQEs, 4 SGEs) and a DCT over it with key dc_key, completions on h->rcq. */
int kr_fx_dct_create(struct kr_fx_host *h, struct kr_devx_srq *srq, struct kr_devx_dct *dct,
		     uint64_t dc_key);
void kr_fx_dct_destroy(struct kr_devx_dct *dct, struct kr_devx_srq *srq);

/* The address vector from host from to dct on host target. */
void kr_fx_dc_av(const struct kr_fx_host *from, const struct kr_fx_host *target,
		 const struct kr_devx_dct *dct, struct kr_devx_dc_av *av);

/* Poll cq until one completion arrives; -ETIMEDOUT after timeout_ms. */
int kr_fx_poll_one(struct kr_devx_cq *cq, struct kr_devx_wc *wc, int timeout_ms);
/*
 * Post wr signaled on qp (a QP of host h), ring, and wait for its completion
 * on h->scq: the completion's status, a post error (-errno), -ETIMEDOUT, or
 * -EPROTO when another request completes.
 */
int kr_fx_post_wait(struct kr_fx_host *h, struct kr_devx_qp *qp, struct kr_devx_wr *wr,
		    int timeout_ms);
/*
 * Poll one completion from cq (5 s) and fail the test unless it has this
 * wr_id, status and local qpn; the completion goes to *out when out is set.
 */
void kr_fx_expect_wc(struct kr_devx_cq *cq, uint64_t wr_id, int status, uint32_t qpn,
		     struct kr_devx_wc *out);

/* Poll cq for timeout_ms and return how many completions arrived (expect none). */
int kr_fx_poll_none(struct kr_devx_cq *cq, int timeout_ms);

/* An SGE over [off, off+len) of h's registered buffer. */
struct kr_devx_sge kr_fx_sge(struct kr_fx_host *h, size_t off, uint32_t len);
/* A signaled DC WRITE of *sge through *av to raddr in target's registered buffer. */
struct kr_devx_wr kr_fx_dc_write(const struct kr_fx_host *target, const struct kr_devx_sge *sge,
				 const struct kr_devx_dc_av *av, uint64_t raddr, uint64_t wr_id);

#endif /* KR_DEVX_FIXTURE_H */
