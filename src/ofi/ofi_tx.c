/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sending. The application's buffer may be any memory, a krcore SEND posts
 * only from the heap (or inline), so the provider copies: a message up to
 * KR_OFI_EAGER_MAX goes as one EAGER SEND (inline up to KR_OFI_INLINE,
 * else from a heap copy), done when krcore completes the SEND. A larger one
 * is announced at once (RTS, so it keeps its place among the peer's
 * messages) and then staged KR_OFI_CHUNK at a time in the endpoint's
 * staging slots, which peers READ under one key; each chunk's ACK frees its
 * slot for the next, the last ACK completes the send. A message holds at
 * most KR_OFI_MSG_STAGES slots, so several large sends share the slots.
 * A large send from registered memory that has a krcore key peers may READ
 * (heap or sealed memfd memory registered with FI_SEND, ofi_mr.c) is not
 * staged: its chunks are announced where they are, under that key, at most
 * KR_OFI_MSG_STAGES at a time, and the receiver READs them in place.
 */
#include <stdlib.h>
#include <string.h>

#include "common/kr_clock.h"
#include "ofi/ofi.h"

/*
 * An inject is never called back: nothing would make the application
 * progress a queued one (under manual progress fi_pingpong turns to its TCP
 * control socket after its last inject). So an inject is posted now, its
 * peer's vQP polled for up to this long for a credit (the credit READ is a
 * round trip), or refused with -FI_EAGAIN (the caller progresses and
 * retries, as fi_inject(3) allows).
 */
#define KR_OFI_INJECT_SPIN_NS (200ull * 1000)

static int tx_inject(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const struct kr_ofi_wire *w,
		     const void *buf, uint32_t len)
{
	struct kr_ofi_wsend *ws;
	uint64_t t0;
	int rc;

	if (p->queued.head) /* older SENDs first (send-after-send order) */
		kr_ofi_peer_progress(ep, p);
	if (p->queued.head)
		return p->err ? p->err : -FI_EAGAIN;
	rc = kr_ofi_peer_send(ep, p, w, buf, len, NULL, NULL);
	for (t0 = kr_now_ns();
	     !rc && p->queued.head && !p->err && kr_now_ns() - t0 < KR_OFI_INJECT_SPIN_NS;)
		kr_ofi_peer_progress(ep, p);
	if (rc || !(ws = kr_ofi_wq_pop(&p->queued))) /* it was the only one: not sent, refused */
		return rc ? rc : p->err;
	kr_free(ep->dom->ctx, ws->bounce);
	free(ws);
	return -FI_EAGAIN;
}

static void tx_unlink(struct kr_ofi_ep *ep, struct kr_ofi_tx *tx)
{
	for (struct kr_ofi_tx **pp = &ep->rndv_tx; *pp; pp = &(*pp)->next)
		if (*pp == tx) {
			*pp = tx->next;
			return;
		}
}

static void tx_release_stages(struct kr_ofi_ep *ep, struct kr_ofi_tx *tx)
{
	for (uint32_t i = 0; i < KR_OFI_STAGES; i++)
		if (ep->stage_slot[i].tx == tx)
			ep->stage_slot[i].tx = NULL;
	tx->stages = 0;
	tx->place_busy = 0;
}

/* tx is done with its registration: the application may close it again. */
static void tx_place_end(struct kr_ofi_tx *tx)
{
	if (tx->place_mr)
		tx->place_mr->sends--;
	tx->place_mr = NULL;
}

/* kr_ofi_tx_complete() - see ofi.h. */
void kr_ofi_tx_complete(struct kr_ofi_ep *ep, struct kr_ofi_tx *tx)
{
	struct fi_cq_tagged_entry e = {.op_context = tx->context,
				       .flags = tx->flags & (FI_SEND | FI_MSG | FI_TAGGED)};

	kr_ofi_cntr_count(ep, KR_OFI_CNTR_SEND, tx->err);
	if (ep->tx_cq && (tx->flags & FI_COMPLETION || tx->err)) {
		if (tx->err)
			kr_ofi_cq_fail(ep->tx_cq, &e, -tx->err, 0, 0);
		else
			kr_ofi_cq_done(ep->tx_cq, &e, FI_ADDR_NOTAVAIL);
	}
	tx_place_end(tx);
	free(tx);
}

/* kr_ofi_tx_start() - see ofi.h. */
int kr_ofi_tx_start(struct kr_ofi_ep *ep, fi_addr_t dest, const void *buf, size_t len, uint64_t tag,
		    uint64_t data, uint64_t flags, void *context)
{
	struct kr_ofi_wire w = {
	    .op = KR_OFI_W_EAGER, .tag = tag, .len = len, .data = (uint32_t)data};
	struct kr_ofi_peer *p;
	struct kr_ofi_tx *tx = NULL;
	int rc;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if ((!buf && len) || len > KR_OFI_MSG_MAX)
		return len > KR_OFI_MSG_MAX ? -FI_EMSGSIZE : -FI_EINVAL;
	p = kr_ofi_peer_at(ep, dest, &rc);
	if (!p)
		return rc;
	if (p->err)
		return p->err;
	if (flags & FI_TAGGED)
		w.flags |= KR_OFI_WF_TAGGED;
	if (flags & FI_REMOTE_CQ_DATA)
		w.flags |= KR_OFI_WF_DATA;
	if (len > KR_OFI_EAGER_MAX || (flags & FI_COMPLETION)) {
		tx = calloc(1, sizeof(*tx));
		if (!tx)
			return -FI_ENOMEM;
		tx->context = context;
		tx->flags = FI_SEND | (flags & (FI_MSG | FI_TAGGED | FI_COMPLETION));
		tx->tag = tag;
		tx->data = w.data;
		tx->wflags = w.flags;
		tx->buf = buf;
		tx->len = len;
		tx->peer = p;
	}
	if (len <= KR_OFI_EAGER_MAX && !tx)
		return tx_inject(ep, p, &w, buf, (uint32_t)len);
	if (len <= KR_OFI_EAGER_MAX) {
		rc = kr_ofi_peer_send(ep, p, &w, buf, (uint32_t)len, tx, NULL);
		if (rc)
			free(tx);
		return rc;
	}
	/* large: announce now (its place in the peer's order), stage as slots free */
	tx->place_mr = kr_ofi_mr_send_key(ep->dom, buf, len);
	if (tx->place_mr)
		tx->place_mr->sends++;
	w.op = KR_OFI_W_RTS;
	w.msg_id = tx->msg_id = ++ep->next_msg_id;
	rc = kr_ofi_peer_send(ep, p, &w, NULL, 0, tx, NULL);
	if (rc) {
		free(tx);
		return rc;
	}
	tx->next = NULL;
	{
		struct kr_ofi_tx **pp = &ep->rndv_tx;

		while (*pp)
			pp = &(*pp)->next;
		*pp = tx; /* the oldest stages first */
	}
	kr_ofi_tx_progress(ep);
	return 0;
}

/* Announce tx's next chunk, which the receiver READs at addr under rkey. 0 or -FI_E*. */
static int tx_announce(struct kr_ofi_ep *ep, struct kr_ofi_tx *tx, const void *addr, uint32_t rkey,
		       size_t clen)
{
	struct kr_ofi_wire w = {.op = KR_OFI_W_CHUNK,
				.flags = tx->wflags,
				.len = tx->len,
				.off = tx->staged,
				.addr = (uintptr_t)addr,
				.clen = (uint32_t)clen,
				.rkey = rkey,
				.msg_id = tx->msg_id};
	int rc = kr_ofi_peer_send(ep, tx->peer, &w, NULL, 0, tx, NULL);

	if (rc)
		return rc;
	tx->staged += clen;
	tx->stages++;
	return 0;
}

static size_t tx_next_clen(const struct kr_ofi_tx *tx)
{
	return tx->len - tx->staged < KR_OFI_CHUNK ? tx->len - tx->staged : KR_OFI_CHUNK;
}

/* Stage tx's next chunk in slot i and announce it. 0 or -FI_E*. */
static int tx_stage(struct kr_ofi_ep *ep, struct kr_ofi_tx *tx, uint32_t i)
{
	size_t off = tx->staged, clen = tx_next_clen(tx);
	uint8_t *slot = ep->stage + (size_t)i * KR_OFI_CHUNK;
	int rc;

	memcpy(slot, tx->buf + off, clen);
	rc = tx_announce(ep, tx, slot, ep->stage_rkey, clen);
	if (rc)
		return rc;
	ep->dom->copies.tx_staged += clen;
	ep->stage_slot[i].tx = tx;
	ep->stage_slot[i].off = off;
	return 0;
}

/* Announce an in-place send's next chunks, up to KR_OFI_MSG_STAGES unacknowledged. */
static void tx_in_place(struct kr_ofi_ep *ep, struct kr_ofi_tx *tx)
{
	for (uint32_t i = 0; i < KR_OFI_MSG_STAGES && tx->staged < tx->len; i++) {
		size_t off = tx->staged;

		if (tx->place_busy & (1u << i))
			continue;
		if (tx_announce(ep, tx, tx->buf + off, tx->place_mr->rkey, tx_next_clen(tx)))
			return; /* the peer's queue is full or failed: later */
		ep->dom->copies.tx_in_place += tx->staged - off;
		tx->place_off[i] = off;
		tx->place_busy |= 1u << i;
	}
}

/* Free what held tx's chunk at off once the receiver has it: false if nothing did. */
static bool tx_chunk_acked(struct kr_ofi_ep *ep, struct kr_ofi_tx *tx, uint64_t off)
{
	if (tx->place_mr) {
		for (uint32_t i = 0; i < KR_OFI_MSG_STAGES; i++)
			if ((tx->place_busy & (1u << i)) && tx->place_off[i] == off) {
				tx->place_busy &= ~(1u << i);
				return true;
			}
		return false;
	}
	for (uint32_t i = 0; i < KR_OFI_STAGES; i++)
		if (ep->stage_slot[i].tx == tx && ep->stage_slot[i].off == off) {
			ep->stage_slot[i].tx = NULL;
			return true;
		}
	return false;
}

/* kr_ofi_tx_progress() - see ofi.h. */
void kr_ofi_tx_progress(struct kr_ofi_ep *ep)
{
	for (struct kr_ofi_tx *tx = ep->rndv_tx; tx; tx = tx->next) {
		if (tx->place_mr) {
			tx_in_place(ep, tx);
			continue;
		}
		for (uint32_t i = 0; i < KR_OFI_STAGES; i++) {
			if (tx->staged == tx->len || tx->stages == KR_OFI_MSG_STAGES)
				break;
			if (!ep->stage_slot[i].tx && tx_stage(ep, tx, i))
				break; /* the peer's queue is full or failed: later */
		}
	}
}

/* A large send ends: in error (err) or with every chunk acknowledged. */
static void tx_rndv_end(struct kr_ofi_ep *ep, struct kr_ofi_tx *tx, int err)
{
	struct kr_ofi_peer *p = tx->peer;

	if (err && !tx->err)
		tx->err = err;
	/* its announcements still queued or in flight no longer name it */
	for (struct kr_ofi_wsend *ws = p->queued.head; ws; ws = ws->next)
		if (ws->tx == tx)
			ws->tx = NULL;
	for (struct kr_ofi_wsend *ws = p->posted.head; ws; ws = ws->next)
		if (ws->tx == tx)
			ws->tx = NULL;
	tx_unlink(ep, tx);
	tx_release_stages(ep, tx);
	kr_ofi_tx_complete(ep, tx);
	kr_ofi_tx_progress(ep);
}

/* kr_ofi_tx_sent() - see ofi.h. */
void kr_ofi_tx_sent(struct kr_ofi_ep *ep, struct kr_ofi_wsend *ws, uint32_t status)
{
	struct kr_ofi_tx *tx = ws->tx;
	int err = status == KR_WC_SUCCESS ? 0 : -FI_EIO;

	if (ws->w.op == KR_OFI_W_EAGER) {
		if (tx) {
			tx->err = err;
			kr_ofi_tx_complete(ep, tx);
		} else { /* an inject: no completion, but it counts */
			kr_ofi_cntr_count(ep, KR_OFI_CNTR_SEND, err);
		}
	} else if (err && tx) { /* an RTS or CHUNK of a large send still under way */
		tx_rndv_end(ep, tx, err);
	}
	if (ws->done_rx) /* its bytes all arrived: only the sender missed the last ACK */
		kr_ofi_rx_complete(ep, ws->done_rx);
	kr_free(ep->dom->ctx, ws->bounce);
	free(ws);
}

/* kr_ofi_tx_acked() - see ofi.h. */
void kr_ofi_tx_acked(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const struct kr_ofi_wire *w)
{
	struct kr_ofi_tx *tx;

	for (tx = ep->rndv_tx; tx; tx = tx->next)
		if (tx->peer == p && tx->msg_id == w->msg_id)
			break;
	if (!tx || w->clen > tx->len - tx->acked || !tx_chunk_acked(ep, tx, w->off))
		goto bad;
	tx->stages--;
	tx->acked += w->clen;
	if (tx->acked == tx->len)
		tx_rndv_end(ep, tx, 0);
	else
		kr_ofi_tx_progress(ep);
	return;
bad:
	FI_WARN(
	    &kr_ofi_prov, FI_LOG_EP_DATA,
	    "ACK from node %u port %u for no chunk we staged (message %u offset %llu): dropped\n",
	    p->node, (unsigned int)p->port, w->msg_id, (unsigned long long)w->off);
}

/* kr_ofi_tx_peer_failed() - see ofi.h. */
void kr_ofi_tx_peer_failed(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, int err)
{
	struct kr_ofi_tx *tx = ep->rndv_tx, *next;

	for (; tx; tx = next) {
		next = tx->next;
		if (tx->peer == p)
			tx_rndv_end(ep, tx, err);
	}
}

/* Free the large sends still under way (endpoint close): no completions. */
void kr_ofi_tx_free(struct kr_ofi_ep *ep)
{
	struct kr_ofi_tx *tx;

	while ((tx = ep->rndv_tx)) {
		ep->rndv_tx = tx->next;
		tx_place_end(tx);
		free(tx);
	}
	memset(ep->stage_slot, 0, sizeof(ep->stage_slot));
}
