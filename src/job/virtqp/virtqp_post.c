/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kr_post_*: the three checks before anything touches the shared ring.
 *   1. malformed requests: flags, lengths, inline size, local range inside
 *      the job's own MR (the heap MR, which every kr_reg_mr region lies in:
 *      the lkey is always the caller's), 8-byte alignment for atomics;
 *   2. queue overflow: the request's WQEBBs must fit the vQP's credits;
 *   3. dispatch: the ring entry records (vQP, user wr_id) before the post
 *      (virtqp_dci.c).
 * Any failed check returns before the ring entry or the send queue is
 * written: the DCI's producer index does not move.
 */
#include <errno.h>
#include <string.h>

#include "job/virtqp/virtqp.h"

static inline bool vq_is_atomic(enum kr_devx_wr_opcode op)
{
	return op == KR_WR_ATOMIC_CS || op == KR_WR_ATOMIC_FA;
}

/*
 * [p, p+len) inside the job's heap, which its own MR covers, or else inside
 * a file it registered (kr_reg_mr_fd): *lkey is the key that covers it.
 */
static inline bool vq_local_ok(const struct kr_ctx *ctx, const void *p, uint32_t len,
			       uint32_t *lkey)
{
	int64_t k;

	if (__builtin_expect(kr_job_in_heap(ctx, p, len), 1)) {
		*lkey = kr_job_heap_lkey(ctx);
		return true;
	}
	k = kr_job_file_lkey(ctx, p, len); /* out of line: *lkey never goes to memory */
	*lkey = (uint32_t)k;
	return k >= 0;
}

/*
 * The ring entry's scatter list (e->wr is built, with one SGE): local[, tail
 * (heap memory)]; inline: copied into the entry.
 */
static inline void vq_ent_data(const struct kr_ctx *ctx, struct kr_vq_ent *e,
			       const struct kr_vq_req *r, bool inl, uint32_t lkey)
{
	uint32_t tl = r->tail ? KR_SEND_HDR_LEN : 0;

	if (inl) {
		memcpy(e->inl, r->local, r->len);
		if (tl)
			memcpy(e->inl + r->len, r->tail, tl);
		e->sge[0] = (struct kr_devx_sge){
		    .addr = (uintptr_t)e->inl, .length = r->len + tl, .lkey = lkey};
		return;
	}
	e->sge[0] =
	    (struct kr_devx_sge){.addr = (uintptr_t)r->local, .length = r->len, .lkey = lkey};
	if (tl)
		e->sge[e->wr.num_sge++] = (struct kr_devx_sge){
		    .addr = (uintptr_t)r->tail, .length = tl, .lkey = kr_job_heap_lkey(ctx)};
}

static inline __attribute__((always_inline)) int vq_post(struct kr_vqp *v,
							 const struct kr_vq_req *r)
{
	bool inl = r->flags & KR_POST_INLINE;
	uint32_t hl = r->tail ? KR_SEND_HDR_LEN : 0;
	struct kr_vq_dci *d;
	struct kr_vq_ent *e;
	struct kr_ctx *ctx;
	uint32_t cost, lkey = 0;
	int rc;

	/* 1. malformed */
	if (!v || !r->local ||
	    (r->flags & ~(uint32_t)(KR_POST_INLINE | KR_POST_FENCE | KR_POST_MORE)))
		return -EINVAL;
	if (!r->len || r->len > KR_POST_MAX_LEN || r->raddr + r->len < r->raddr)
		return -EINVAL;
	d = v->dci;
	ctx = d->ctx;
	if (inl) {
		if (r->op == KR_WR_RDMA_READ || vq_is_atomic(r->op) ||
		    r->len > KR_POST_MAX_INLINE - hl)
			return -EINVAL;
	} else if (!vq_local_ok(ctx, r->local, r->len, &lkey)) {
		return -EINVAL;
	}
	if (vq_is_atomic(r->op) && (((uintptr_t)r->local | r->raddr) & 7u))
		return -EINVAL;
	if (v->state != KR_VQP_RTS && r->wc_op != KR_VQ_OP_INTERNAL)
		return -EIO; /* the library still lets a port slot go from a failed vQP */
	if (ctx->dead)
		return -ENOTCONN;
	/* 2. credits (and a DCI under recovery has none to give, nor a vQP changing queues) */
	if (__builtin_expect(v->promo != KR_PROMO_NONE && v->promo != KR_PROMO_RC, 0)) {
		if (kr_vq_promote_step(v, true))
			return -EAGAIN;
		d = v->dci;
	}
	cost = kr_vq_wqebbs(r->op, inl, r->len + hl, inl || !hl ? 1 : 2);
	if (d->broken || !d->leased || v->used + cost > v->credits)
		return -EAGAIN;

	/* 3. the ring entry names the vQP and the user's wr_id */
	e = &d->ent[d->tail & (d->cnt - 1)];
	e->vqp = v;
	e->wqebbs = cost;
	/* a SEND's imm is ours (the port protocol's), a WRITE's the user's */
	e->wc = (struct kr_wc){.wr_id = r->wr_id,
			       .opcode = r->wc_op,
			       .byte_len = r->len,
			       .imm = r->op == KR_WR_RDMA_WRITE_IMM ? r->imm : 0,
			       .flags = r->op == KR_WR_RDMA_WRITE_IMM ? KR_WC_F_IMM : 0};
	e->wr = (struct kr_devx_wr){
	    .wr_id = d->tail, /* the dispatch check's sequence */
	    .opcode = r->op,
	    .flags = KR_WR_SIGNALED | (inl ? KR_WR_INLINE : 0) |
		     ((r->flags & KR_POST_FENCE) ? KR_WR_FENCE : 0),
	    .sge = e->sge,
	    .num_sge = 1,
	    .imm = r->imm,
	    .remote_addr = r->raddr,
	    .rkey = r->rkey,
	    .compare_add = r->compare_add,
	    .swap = r->swap,
	    .av_wqe = d->rc ? NULL : &v->av_wqe, /* an RC QP knows its peer */
	};
	if (!r->tail) { /* one-sided and plain SENDs: the common case, kept short */
		e->sge[0] = (struct kr_devx_sge){
		    .addr = (uintptr_t)r->local, .length = r->len, .lkey = lkey};
		if (inl) /* the WQE is the copy: a re-post takes it from there */
			e->sq_pi = (uint16_t)d->qp->sq_pi;
	} else {
		vq_ent_data(ctx, e, r, inl, inl ? kr_job_heap_lkey(ctx) : lkey);
	}
	v->used += cost;
	rc = kr_vq_dci_post(d, e, !(r->flags & KR_POST_MORE));
	if (rc) {
		v->used -= cost;
		return rc;
	}
	if (__builtin_expect(++v->posts % KR_VQ_RATE_POSTS == 0, 0))
		kr_vq_promote_tick(v);
	return 0;
}

/* kr_vq_post_req() - see virtqp.h: the same checks and post, out of line (internal requests). */
int kr_vq_post_req(struct kr_vqp *v, const struct kr_vq_req *r)
{
	return vq_post(v, r);
}

/* kr_vq_post_msg() - see virtqp.h: a port message, its opcode known to the build of its WQE. */
int kr_vq_post_msg(struct kr_vqp *v, const void *local, uint32_t len, uint32_t imm,
		   const void *tail, uint64_t wr_id, uint32_t flags)
{
	struct kr_vq_req r = {.op = KR_WR_SEND_IMM,
			      .wc_op = KR_WC_OP_SEND,
			      .local = local,
			      .len = len,
			      .imm = imm,
			      .wr_id = wr_id,
			      .flags = flags,
			      .tail = tail};

	return vq_post(v, &r);
}

int kr_post_read(struct kr_vqp *vqp, void *local, uint32_t len, uint64_t raddr, uint32_t rkey,
		 uint64_t wr_id, uint32_t flags)
{
	struct kr_vq_req r = {.op = KR_WR_RDMA_READ,
			      .wc_op = KR_WC_OP_READ,
			      .local = local,
			      .len = len,
			      .raddr = raddr,
			      .rkey = rkey,
			      .wr_id = wr_id,
			      .flags = flags};

	return vq_post(vqp, &r);
}

int kr_post_write(struct kr_vqp *vqp, const void *local, uint32_t len, uint64_t raddr,
		  uint32_t rkey, uint64_t wr_id, uint32_t flags)
{
	struct kr_vq_req r = {.op = KR_WR_RDMA_WRITE,
			      .wc_op = KR_WC_OP_WRITE,
			      .local = local,
			      .len = len,
			      .raddr = raddr,
			      .rkey = rkey,
			      .wr_id = wr_id,
			      .flags = flags};

	return vq_post(vqp, &r);
}

int kr_post_write_imm(struct kr_vqp *vqp, const void *local, uint32_t len, uint64_t raddr,
		      uint32_t rkey, uint32_t imm, uint64_t wr_id, uint32_t flags)
{
	struct kr_vq_req r = {.op = KR_WR_RDMA_WRITE_IMM,
			      .wc_op = KR_WC_OP_WRITE_IMM,
			      .local = local,
			      .len = len,
			      .raddr = raddr,
			      .rkey = rkey,
			      .imm = imm,
			      .wr_id = wr_id,
			      .flags = flags};

	return vq_post(vqp, &r);
}

int kr_post_cas(struct kr_vqp *vqp, uint64_t *local, uint64_t raddr, uint32_t rkey,
		uint64_t compare, uint64_t swap, uint64_t wr_id, uint32_t flags)
{
	struct kr_vq_req r = {.op = KR_WR_ATOMIC_CS,
			      .wc_op = KR_WC_OP_CAS,
			      .local = local,
			      .len = 8,
			      .raddr = raddr,
			      .rkey = rkey,
			      .compare_add = compare,
			      .swap = swap,
			      .wr_id = wr_id,
			      .flags = flags};

	return vq_post(vqp, &r);
}

int kr_post_faa(struct kr_vqp *vqp, uint64_t *local, uint64_t raddr, uint32_t rkey, uint64_t add,
		uint64_t wr_id, uint32_t flags)
{
	struct kr_vq_req r = {.op = KR_WR_ATOMIC_FA,
			      .wc_op = KR_WC_OP_FAA,
			      .local = local,
			      .len = 8,
			      .raddr = raddr,
			      .rkey = rkey,
			      .compare_add = add,
			      .wr_id = wr_id,
			      .flags = flags};

	return vq_post(vqp, &r);
}
