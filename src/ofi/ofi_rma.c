/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RMA (fi_read, fi_write, fi_writedata) and atomics, served by the target's
 * provider. The initiator sends requests in pieces of up to
 * KR_OFI_RMA_PIECE bytes, at most KR_OFI_RMA_OUT of one operation
 * unanswered; the target's provider, at its next progress (manual progress:
 * fi_cq_read, fi_cntr_read or any data call on the target endpoint), looks
 * the key up among its domain's registrations (ofi_mr.c), checks the rights
 * and the range, copies (or applies the atomic, ofi_atomic.c) and answers
 * each piece with RESP: its status and, for a READ or a fetch, the bytes.
 * The operation completes when every piece is answered: a WRITE completes
 * once its bytes are in the target's memory (delivery complete), and a
 * refused one (a wrong key, rights or range: FI_EACCES) completes in error
 * at the initiator, the target's memory untouched.
 *
 * Why the target's CPU and not the NIC: a registered region is whatever
 * the application registered (malloc, stack, mmap), and krcore's NIC
 * reaches only a job's heap and sealed memfds. Requests and answers travel
 * on the peers' vQPs as the provider's messages do (ofi_peer.c), so they
 * keep their order with the messages around them. The exception: READ and
 * WRITE on a region that is the target's heap memory go by the NIC once the
 * initiator knows it (ofi_rma_direct.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ofi/ofi.h"

/* Report a finished operation (tx CQ, counters) and free it; the caller unlinked it. */
static void rma_complete(struct kr_ofi_ep *ep, struct kr_ofi_rma *r)
{
	struct fi_cq_tagged_entry e = {.op_context = r->context,
				       .flags =
					   r->flags & (FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE)};

	/* an inject reports nothing, as an injected message does: its counter counts it */
	if (ep->tx_cq && !(r->flags & FI_INJECT) && (r->err || (r->flags & FI_COMPLETION))) {
		if (r->err)
			kr_ofi_cq_fail(ep->tx_cq, &e, -r->err, 0, 0);
		else
			kr_ofi_cq_done(ep->tx_cq, &e, FI_ADDR_NOTAVAIL);
	}
	kr_ofi_cntr_count(ep, (r->flags & FI_READ) ? KR_OFI_CNTR_READ : KR_OFI_CNTR_WRITE, r->err);
	free(r->copy);
	free(r);
}

/* Is r over: every piece answered, or failed with none still out? */
static bool rma_over(const struct kr_ofi_rma *r)
{
	return !r->out && (r->err || (r->sent == r->len && r->done == r->len && r->sent_any));
}

/* Take the operations that are over off ep's list and report them. */
static void rma_reap(struct kr_ofi_ep *ep)
{
	struct kr_ofi_rma **pp = &ep->rma, *r;

	while ((r = *pp)) {
		if (rma_over(r)) {
			*pp = r->next;
			rma_complete(ep, r);
		} else {
			pp = &r->next;
		}
	}
}

/* Request r's next pieces while it may have more out. */
static void rma_post(struct kr_ofi_ep *ep, struct kr_ofi_rma *r)
{
	size_t total = r->len;

	if (r->direct) {
		kr_ofi_direct_post(ep, r);
		if (r->direct)
			return;
	}
	while (!r->err && r->out < KR_OFI_RMA_OUT && (r->sent < total || !r->sent_any)) {
		size_t piece =
		    total - r->sent < KR_OFI_RMA_PIECE ? total - r->sent : KR_OFI_RMA_PIECE;
		bool last = r->sent + piece == total;
		struct kr_ofi_wire w = {.op = r->op,
					.tag = r->key,
					.len = total,
					.off = r->sent,
					.addr = r->addr,
					.clen = (uint32_t)piece,
					.msg_id = r->id};
		const uint8_t *payload = NULL;
		uint32_t plen = 0;
		int rc;

		if (r->want && !r->sent)
			w.flags |= KR_OFI_WF_WANT;
		if (r->op == KR_OFI_W_ATOMIC) {
			w.data = r->atype;
		} else if (last && (r->flags & FI_REMOTE_CQ_DATA)) {
			w.flags |= KR_OFI_WF_DATA;
			w.data = r->data;
		}
		if (r->op == KR_OFI_W_RMA_WRITE) {
			payload = r->src + r->sent;
			plen = (uint32_t)piece;
		} else if (r->op == KR_OFI_W_ATOMIC) {
			payload = r->src;
			plen = (uint32_t)r->src_len;
		}
		rc = kr_ofi_peer_send(ep, r->peer, &w, payload, plen, NULL, NULL);
		if (rc == -FI_EAGAIN)
			return; /* the heap is full of messages in flight: the next progress */
		if (rc) {
			r->err = rc;
			return;
		}
		r->sent += piece;
		r->sent_any = true;
		r->out++;
	}
}

/* kr_ofi_rma_progress() - see ofi.h. */
void kr_ofi_rma_progress(struct kr_ofi_ep *ep)
{
	for (struct kr_ofi_rma *r = ep->rma; r; r = r->next)
		if (!r->peer->err)
			rma_post(ep, r);
		else if (!r->err)
			r->err = r->peer->err;
	rma_reap(ep);
}

/* kr_ofi_rma_start() - see ofi.h. */
int kr_ofi_rma_start(struct kr_ofi_ep *ep, struct kr_ofi_rma *r)
{
	struct kr_ofi_rma **pp = &ep->rma;

	if (r->peer->err) {
		int err = r->peer->err;

		free(r->copy);
		free(r);
		return err;
	}
	r->id = ++ep->next_rma_id;
	r->next = NULL;
	kr_ofi_direct_choose(r);
	while (*pp) /* oldest first: requests go out in the order the calls came */
		pp = &(*pp)->next;
	*pp = r;
	rma_post(ep, r);
	rma_reap(ep);
	return 0;
}

/* kr_ofi_rma_wire_sane() - see ofi.h. */
bool kr_ofi_rma_wire_sane(const struct kr_ofi_wire *w, uint32_t plen)
{
	bool range;

	if (w->op == KR_OFI_W_MR_INFO) /* a region: neither end may wrap */
		return !plen && w->len && w->len - 1 <= UINT64_MAX - w->addr &&
		       w->len - 1 <= UINT64_MAX - w->off &&
		       (w->data & (KR_OFI_DK_READ | KR_OFI_DK_WRITE)) && !(w->data >> 2);
	range = w->clen <= KR_OFI_RMA_PIECE && w->len <= KR_OFI_MSG_MAX && w->off <= w->len &&
		w->clen <= w->len - w->off;

	switch (w->op) {
	case KR_OFI_W_RMA_WRITE:
		return range && plen == w->clen;
	case KR_OFI_W_RMA_READ:
		return range && !plen;
	case KR_OFI_W_ATOMIC:
		return range && !w->off && w->clen == w->len && plen <= KR_OFI_RMA_PIECE;
	case KR_OFI_W_RESP:
		return range && plen <= w->clen;
	default:
		return false;
	}
}

/* The target's side of an atomic: status 0 or a positive FI_E*; *olen old bytes at old. */
static int serve_atomic(struct kr_ofi_ep *ep, const struct kr_ofi_wire *w, const uint8_t *payload,
			uint32_t plen, uint8_t *old, uint32_t *olen)
{
	enum fi_op op = (enum fi_op)(w->data & 0xff);
	enum fi_datatype dt = (enum fi_datatype)((w->data >> 8) & 0xff);
	uint32_t kind = (w->data >> 16) & 0xff;
	size_t sz = kr_ofi_atomic_size(dt, op, kind);
	uint64_t rights = kind == KR_OFI_ATOMIC_WRITE ? FI_REMOTE_WRITE
			  : op == FI_ATOMIC_READ      ? FI_REMOTE_READ
						      : FI_REMOTE_READ | FI_REMOTE_WRITE;
	uint32_t want;
	uint8_t *dst;

	if (!sz || !w->clen || w->clen % sz || (w->data >> 24))
		return FI_EOPNOTSUPP;
	want = op == FI_ATOMIC_READ ? 0 : kind == KR_OFI_ATOMIC_COMPARE ? 2 * w->clen : w->clen;
	if (plen != want)
		return FI_EINVAL;
	dst = kr_ofi_mr_reach(ep->dom, w->tag, w->addr, w->clen, rights);
	if (!dst)
		return FI_EACCES;
	kr_ofi_atomic_apply(dt, op, dst, want ? payload : NULL,
			    kind == KR_OFI_ATOMIC_COMPARE ? payload + w->clen : NULL,
			    kind == KR_OFI_ATOMIC_WRITE ? NULL : old, w->clen / sz);
	*olen = kind == KR_OFI_ATOMIC_WRITE ? 0 : w->clen;
	return 0;
}

/*
 * The initiator asked (KR_OFI_WF_WANT) whether key's region is heap or memfd
 * memory with a krcore key: if so tell it where and under which key, before the
 * answer, so its later READs and WRITEs go by the NIC.
 */
static void rma_tell_region(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, uint64_t key)
{
	const struct kr_ofi_mr *m = kr_ofi_mr_find(ep->dom, key);
	struct kr_ofi_wire i = {.op = KR_OFI_W_MR_INFO, .tag = key};
	int rc;

	if (!m || !m->kmr || !(m->access & (FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return; /* a key for sends in place or receives only: not for peers' RMA */
	i.addr = (uintptr_t)m->base;
	i.len = m->len;
	i.off = m->offset;
	i.rkey = m->rkey;
	i.data = ((m->access & FI_REMOTE_READ) ? KR_OFI_DK_READ : 0) |
		 ((m->access & FI_REMOTE_WRITE) ? KR_OFI_DK_WRITE : 0);
	rc = kr_ofi_peer_send(ep, p, &i, NULL, 0, NULL, NULL);
	if (rc) /* it asks again with its next operation */
		FI_INFO(&kr_ofi_prov, FI_LOG_EP_DATA, "a region's key to node %u was lost: %s\n",
			p->node, fi_strerror(-rc));
}

/* Serve a request of p's (the target's side) and answer it. */
static void rma_serve(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const struct kr_ofi_wire *w,
		      const uint8_t *payload, uint32_t plen)
{
	struct kr_ofi_wire a = {.op = KR_OFI_W_RESP,
				.len = w->len,
				.off = w->off,
				.clen = w->clen,
				.msg_id = w->msg_id};
	bool last = w->off + w->clen == w->len;
	uint8_t old[KR_OFI_RMA_PIECE];
	const uint8_t *out = NULL;
	uint32_t olen = 0;
	uint8_t *mem;
	int st = 0, rc;

	switch (w->op) {
	case KR_OFI_W_RMA_WRITE:
		mem = kr_ofi_mr_reach(ep->dom, w->tag, w->addr + w->off, w->clen, FI_REMOTE_WRITE);
		if (!mem || w->addr + w->off < w->addr)
			st = FI_EACCES;
		else if (w->clen)
			memcpy(mem, payload, w->clen);
		break;
	case KR_OFI_W_RMA_READ:
		mem = kr_ofi_mr_reach(ep->dom, w->tag, w->addr + w->off, w->clen, FI_REMOTE_READ);
		if (!mem || w->addr + w->off < w->addr)
			st = FI_EACCES;
		out = mem;
		olen = w->clen;
		break;
	default: /* KR_OFI_W_ATOMIC */
		st = serve_atomic(ep, w, payload, plen, old, &olen);
		out = old;
		break;
	}
	if (st) {
		out = NULL;
		olen = 0;
	} else if ((w->flags & KR_OFI_WF_WANT) && w->op != KR_OFI_W_ATOMIC) {
		rma_tell_region(ep, p, w->tag);
	}
	a.data = (uint32_t)st;
	if (last) {
		bool rd =
		    w->op == KR_OFI_W_RMA_READ ||
		    (w->op == KR_OFI_W_ATOMIC && ((w->data >> 16) & 0xff) != KR_OFI_ATOMIC_WRITE);

		kr_ofi_cntr_count(ep, rd ? KR_OFI_CNTR_REMOTE_READ : KR_OFI_CNTR_REMOTE_WRITE, st);
		if (!st && (w->flags & KR_OFI_WF_DATA) && ep->rx_cq) {
			struct fi_cq_tagged_entry e = {.flags = FI_RMA | FI_REMOTE_WRITE |
								FI_REMOTE_CQ_DATA,
						       .len = w->len,
						       .data = w->data};

			kr_ofi_cq_done(ep->rx_cq, &e, kr_ofi_peer_addr(ep, p));
		}
	}
	rc = kr_ofi_peer_send(ep, p, &a, out, olen, NULL, NULL);
	if (rc == -FI_EAGAIN && olen) { /* no heap for the bytes: say so, in the header alone */
		FI_WARN(&kr_ofi_prov, FI_LOG_EP_DATA,
			"no heap to answer a read of %u bytes: refused (krpoold --heap-mb)\n",
			olen);
		a.data = FI_ENOMEM;
		rc = kr_ofi_peer_send(ep, p, &a, NULL, 0, NULL, NULL);
	}
	if (rc)
		FI_WARN(&kr_ofi_prov, FI_LOG_EP_DATA, "an RMA answer to node %u was lost: %s\n",
			p->node, fi_strerror(-rc));
}

/* An answer to a piece of one of our operations. */
static void rma_answered(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const struct kr_ofi_wire *w,
			 const uint8_t *payload, uint32_t plen)
{
	struct kr_ofi_rma *r;

	for (r = ep->rma; r; r = r->next)
		if (r->peer == p && r->id == w->msg_id)
			break;
	if (!r || !r->out || w->len != r->len) {
		FI_WARN(&kr_ofi_prov, FI_LOG_EP_DATA, "an RMA answer for no operation: dropped\n");
		return;
	}
	if (w->data) {
		if (!r->err)
			r->err = w->data < 4096 ? -(int)w->data : -FI_EIO;
	} else if (r->op == KR_OFI_W_RMA_READ) {
		if (plen != w->clen)
			r->err = -FI_EIO;
		else if (plen)
			memcpy(r->dst + w->off, payload, plen);
	} else if (r->op == KR_OFI_W_ATOMIC && r->dst) {
		if (plen != r->len)
			r->err = -FI_EIO;
		else
			memcpy(r->dst, payload, plen);
	}
	r->done += w->clen;
	r->out--;
	rma_post(ep, r);
	rma_reap(ep);
}

/* kr_ofi_rma_arrived() - see ofi.h. */
void kr_ofi_rma_arrived(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const struct kr_ofi_wire *w,
			const uint8_t *payload, uint32_t plen)
{
	if (w->op == KR_OFI_W_RESP)
		rma_answered(ep, p, w, payload, plen);
	else if (w->op == KR_OFI_W_MR_INFO)
		kr_ofi_direct_learn(p, w);
	else
		rma_serve(ep, p, w, payload, plen);
}

/* kr_ofi_rma_awaits() - see ofi.h. */
bool kr_ofi_rma_awaits(const struct kr_ofi_ep *ep, const struct kr_ofi_peer *p)
{
	for (const struct kr_ofi_rma *r = ep->rma; r; r = r->next)
		if (r->peer == p && r->out && !r->direct) /* a direct one waits on the NIC */
			return true;
	return false;
}

/* kr_ofi_rma_peer_failed() - see ofi.h. */
void kr_ofi_rma_peer_failed(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, int err)
{
	kr_ofi_direct_drop(ep, p); /* no direct request of p's in flight after */
	for (struct kr_ofi_rma *r = ep->rma; r; r = r->next)
		if (r->peer == p) {
			if (!r->err)
				r->err = err;
			r->out = 0; /* no answer will come */
		}
	rma_reap(ep);
}

/* kr_ofi_rma_free() - see ofi.h. */
void kr_ofi_rma_free(struct kr_ofi_ep *ep)
{
	struct kr_ofi_rma *r;

	for (struct kr_ofi_peer *p = ep->peers; p; p = p->next)
		kr_ofi_direct_drop(ep, p); /* no direct request in flight: pieces may go */
	while ((r = ep->rma)) {
		ep->rma = r->next;
		free(r->copy);
		free(r);
	}
}
