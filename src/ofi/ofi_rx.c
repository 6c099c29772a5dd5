/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receiving and matching, in software. Posted receives wait in two queues
 * (untagged, tagged) in the order posted; messages that find none wait in
 * two unexpected queues in arrival order, an EAGER one copied out of the
 * port's buffer (which goes back to the port at once), an RTS as its header
 * and the chunks announced so far. A tagged receive takes the first message
 * whose tag equals its own outside the ignore bits; with FI_DIRECTED_RECV a
 * source address narrows it to one peer. A large message's chunks are READ
 * from the sender's staging slots (or its registered buffer, ofi_tx.c) into
 * the endpoint's read slots (heap), copied to the application's buffer, and
 * acknowledged; into the application's buffer itself when the NIC reaches
 * it (heap memory, a memfd registered with FI_RECV). A message longer
 * than the buffer fills it and completes with FI_ETRUNC. Probes: ofi_probe.c.
 */
#include <stdlib.h>
#include <string.h>

#include "common/kr_clock.h"
#include "ofi/ofi.h"

static int queue_of(uint8_t wflags)
{
	return (wflags & KR_OFI_WF_TAGGED) ? 1 : 0;
}

/* kr_ofi_rx_matches() - see ofi.h. */
bool kr_ofi_rx_matches(const struct kr_ofi_rx *rx, const struct kr_ofi_wire *w, fi_addr_t src)
{
	if (rx->src != FI_ADDR_UNSPEC && rx->src != src)
		return false;
	return !(rx->flags & FI_TAGGED) || !((w->tag ^ rx->tag) & ~rx->ignore);
}

/* kr_ofi_rx_complete() - see ofi.h. */
void kr_ofi_rx_complete(struct kr_ofi_ep *ep, struct kr_ofi_rx *rx)
{
	size_t len = rx->w.len < rx->len ? rx->w.len : rx->len;
	struct fi_cq_tagged_entry e = {
	    .op_context = rx->context,
	    .flags = FI_RECV | (rx->flags & (FI_MSG | FI_TAGGED)) |
		     ((rx->w.flags & KR_OFI_WF_DATA) ? FI_REMOTE_CQ_DATA : 0),
	    .len = len,
	    .buf = rx->buf,
	    .data = (rx->w.flags & KR_OFI_WF_DATA) ? rx->w.data : 0,
	    .tag = (rx->flags & FI_TAGGED) ? rx->w.tag : 0,
	};

	kr_ofi_cntr_count(ep, KR_OFI_CNTR_RECV, rx->err || (!rx->discard && rx->w.len > rx->len));
	if (rx->discard) { /* no bytes wanted: no truncation either */
		e.len = 0;
		e.buf = NULL;
		if (ep->rx_cq && !rx->err && (rx->flags & FI_COMPLETION))
			kr_ofi_cq_done(ep->rx_cq, &e, rx->msrc);
		free(rx);
		return;
	}
	if (ep->rx_cq) {
		if (rx->err)
			kr_ofi_cq_fail(ep->rx_cq, &e, -rx->err, 0, 0);
		else if (rx->w.len > rx->len)
			kr_ofi_cq_fail(ep->rx_cq, &e, FI_ETRUNC, 0, rx->w.len - rx->len);
		else if (rx->flags & FI_COMPLETION)
			kr_ofi_cq_done(ep->rx_cq, &e, rx->msrc);
	}
	free(rx);
}

/* kr_ofi_rx_take() - see ofi.h. */
void kr_ofi_rx_take(struct kr_ofi_ep *ep, struct kr_ofi_rx *rx, const struct kr_ofi_wire *w,
		    fi_addr_t src, struct kr_ofi_peer *p, const uint8_t *payload,
		    const struct kr_ofi_ann *ann, uint32_t nann)
{
	rx->w = *w;
	rx->msrc = src;
	rx->peer = p;
	if (w->op == KR_OFI_W_EAGER) {
		if (payload && w->len && rx->len) /* a discard keeps nothing */
			memcpy(rx->buf, payload, w->len < rx->len ? w->len : rx->len);
		kr_ofi_rx_complete(ep, rx);
		return;
	}
	if (nann)
		memcpy(rx->ann, ann, nann * sizeof(*ann));
	rx->nann = nann;
	rx->next = ep->rndv_rx;
	ep->rndv_rx = rx;
	kr_ofi_rx_progress(ep);
}

/* kr_ofi_rx_post() - see ofi.h. */
int kr_ofi_rx_post(struct kr_ofi_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		   uint64_t ignore, uint64_t flags, void *context)
{
	int q = (flags & FI_TAGGED) ? 1 : 0;
	struct kr_ofi_unexp **pu, *u;
	struct kr_ofi_rx *rx;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (!buf && len)
		return -FI_EINVAL;
	rx = calloc(1, sizeof(*rx));
	if (!rx)
		return -FI_ENOMEM;
	rx->context = context;
	rx->flags = FI_RECV | (flags & (FI_MSG | FI_TAGGED | FI_COMPLETION));
	rx->tag = tag;
	rx->ignore = ignore;
	rx->src = (ep->caps & FI_DIRECTED_RECV) ? src : FI_ADDR_UNSPEC;
	rx->buf = buf;
	rx->len = len;
	for (pu = &ep->unexp[q]; (u = *pu); pu = &u->next)
		if (kr_ofi_rx_matches(rx, &u->w, kr_ofi_peer_addr(ep, u->peer)))
			break;
	if (!u) {
		rx->next = NULL;
		*ep->posted_tail[q] = rx;
		ep->posted_tail[q] = &rx->next;
		return 0;
	}
	*pu = u->next;
	if (ep->unexp_tail[q] == &u->next)
		ep->unexp_tail[q] = pu;
	kr_ofi_rx_take(ep, rx, &u->w, kr_ofi_peer_addr(ep, u->peer), u->peer, u->payload, u->ann,
		       u->nann);
	free(u->payload);
	free(u);
	return 0;
}

/* The first posted receive of queue q that matches w from src, taken off the queue. */
static struct kr_ofi_rx *rx_find_posted(struct kr_ofi_ep *ep, int q, const struct kr_ofi_wire *w,
					fi_addr_t src)
{
	struct kr_ofi_rx **pp, *rx;

	for (pp = &ep->posted[q]; (rx = *pp); pp = &rx->next)
		if (kr_ofi_rx_matches(rx, w, src))
			break;
	if (!rx)
		return NULL;
	*pp = rx->next;
	if (ep->posted_tail[q] == &rx->next)
		ep->posted_tail[q] = pp;
	return rx;
}

static bool wire_sane(const struct kr_ofi_wire *w, uint32_t plen)
{
	switch (w->op) {
	case KR_OFI_W_EAGER:
		return w->len == plen && plen <= KR_OFI_EAGER_MAX;
	case KR_OFI_W_RTS:
		return !plen && w->len > KR_OFI_EAGER_MAX && w->len <= KR_OFI_MSG_MAX;
	case KR_OFI_W_CHUNK:
		return !plen && w->clen && w->clen <= KR_OFI_CHUNK && w->off < w->len &&
		       w->clen <= w->len - w->off && w->len <= KR_OFI_MSG_MAX;
	case KR_OFI_W_ACK:
	case KR_OFI_W_NOP:
		return !plen;
	default:
		return kr_ofi_rma_wire_sane(w, plen);
	}
}

/* A CHUNK announcement of message w->msg_id from p: to its receive, or its unexpected RTS. */
static bool rx_announce(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const struct kr_ofi_wire *w)
{
	struct kr_ofi_ann a = {.off = w->off, .addr = w->addr, .clen = w->clen, .rkey = w->rkey};

	for (struct kr_ofi_rx *rx = ep->rndv_rx; rx; rx = rx->next)
		if (rx->peer == p && rx->w.msg_id == w->msg_id && rx->nann < KR_OFI_MSG_STAGES) {
			rx->ann[rx->nann++] = a;
			kr_ofi_rx_progress(ep);
			return true;
		}
	for (int q = 0; q < 3; q++)
		for (struct kr_ofi_unexp *u = q < 2 ? ep->unexp[q] : ep->claimed; u; u = u->next)
			if (u->peer == p && u->w.op == KR_OFI_W_RTS && u->w.msg_id == w->msg_id &&
			    u->nann < KR_OFI_MSG_STAGES) {
				u->ann[u->nann++] = a;
				return true;
			}
	return false;
}

/* kr_ofi_rx_arrived() - see ofi.h. */
void kr_ofi_rx_arrived(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const uint8_t *msg,
		       uint32_t len)
{
	uint32_t plen = len >= sizeof(struct kr_ofi_wire) ? len - sizeof(struct kr_ofi_wire) : 0;
	const uint8_t *payload = msg + sizeof(struct kr_ofi_wire);
	struct kr_ofi_wire w;
	struct kr_ofi_unexp *u;
	struct kr_ofi_rx *rx;
	fi_addr_t src;
	int q;

	if (len < sizeof(w))
		goto bad;
	memcpy(&w, msg, sizeof(w));
	if (!wire_sane(&w, plen) || (!p && w.op != KR_OFI_W_EAGER))
		goto bad; /* a large message's steps need the sender's reply port */
	if (p)
		p->heard_ns = kr_now_ns();
	if (w.op == KR_OFI_W_NOP)
		return; /* a keepalive: arriving was all it had to do */
	if (w.op == KR_OFI_W_ACK) {
		kr_ofi_tx_acked(ep, p, &w);
		return;
	}
	if (w.op == KR_OFI_W_CHUNK) {
		if (!rx_announce(ep, p, &w))
			goto bad;
		return;
	}
	if (w.op >= KR_OFI_W_RMA_WRITE) { /* RMA and atomics: ofi_rma.c */
		kr_ofi_rma_arrived(ep, p, &w, payload, plen);
		return;
	}
	q = queue_of(w.flags);
	src = kr_ofi_peer_addr(ep, p);
	rx = rx_find_posted(ep, q, &w, src);
	if (rx) {
		kr_ofi_rx_take(ep, rx, &w, src, p, payload, NULL, 0);
		return;
	}
	u = calloc(1, sizeof(*u));
	if (!u || (plen && !(u->payload = malloc(plen)))) {
		free(u);
		FI_WARN(&kr_ofi_prov, FI_LOG_EP_DATA,
			"no memory for an unexpected message: lost\n");
		return;
	}
	u->w = w;
	u->peer = p;
	if (plen)
		memcpy(u->payload, payload, plen);
	*ep->unexp_tail[q] = u;
	ep->unexp_tail[q] = &u->next;
	return;
bad:
	FI_WARN(&kr_ofi_prov, FI_LOG_EP_DATA, "malformed message of %u bytes (op %u): dropped\n",
		len, len ? msg[0] : 0);
}

/* Unlink rx from the large receives under way. */
static void rx_rndv_unlink(struct kr_ofi_ep *ep, struct kr_ofi_rx *rx)
{
	for (struct kr_ofi_rx **pp = &ep->rndv_rx; *pp; pp = &(*pp)->next)
		if (*pp == rx) {
			*pp = rx->next;
			return;
		}
}

/*
 * Acknowledge clen bytes at off of rx's message. The last ACK takes rx off
 * the large receives and carries it: rx completes once that ACK is posted
 * (kr_ofi_rx_complete from ofi_peer.c), so the sender's completion never
 * waits for progress the application may not make after its receive
 * completed. Returns true when rx went with it (the caller must not touch it).
 */
static bool rx_ack(struct kr_ofi_ep *ep, struct kr_ofi_rx *rx, uint64_t off, uint32_t clen)
{
	struct kr_ofi_wire ack = {
	    .op = KR_OFI_W_ACK, .msg_id = rx->w.msg_id, .off = off, .clen = clen, .len = rx->w.len};
	bool last;

	rx->got += clen;
	last = rx->got == rx->w.len;
	if (last)
		rx_rndv_unlink(ep, rx);
	if (!kr_ofi_peer_send(ep, rx->peer, &ack, NULL, 0, NULL, last ? rx : NULL))
		return last;
	rx->err = -FI_EIO; /* the sender would wait for it for ever */
	if (last)
		kr_ofi_rx_complete(ep, rx);
	return last;
}

/*
 * READ rx's first announced chunk for r: in place when it fits in the
 * buffer and the NIC reaches it, else into slot. 0 or kr_post_read's -errno.
 */
static int rx_post_read(struct kr_ofi_rx *rx, struct kr_ofi_read *r, uint8_t *slot)
{
	const struct kr_ofi_ann *a = &rx->ann[0];
	int rc;

	r->in_place = !rx->bounce && a->off < rx->len && a->clen <= rx->len - a->off;
	if (r->in_place) {
		rc = kr_post_read(rx->peer->v, rx->buf + a->off, a->clen, a->addr, a->rkey,
				  (uintptr_t)r, 0);
		if (rc != -EINVAL)
			return rc;
		rx->bounce = true; /* not the heap nor a registered file */
		r->in_place = false;
	}
	return kr_post_read(rx->peer->v, slot, a->clen, a->addr, a->rkey, (uintptr_t)r, 0);
}

/* kr_ofi_rx_progress() - see ofi.h. */
void kr_ofi_rx_progress(struct kr_ofi_ep *ep)
{
	for (struct kr_ofi_rx *rx = ep->rndv_rx, *next; rx; rx = next) {
		bool gone = false;

		next = rx->next;
		/* acknowledged unread; gone: rx went with its last ACK (freed) */
		while (!gone && rx->discard && rx->nann && !rx->err) {
			struct kr_ofi_ann a = rx->ann[0];

			memmove(rx->ann, rx->ann + 1, --rx->nann * sizeof(rx->ann[0]));
			gone = rx_ack(ep, rx, a.off, a.clen);
		}
		if (gone || rx->discard)
			continue;
		while (rx->nann && !rx->err && !kr_ofi_peer_ready(ep, rx->peer)) {
			struct kr_ofi_read *r = NULL;
			uint32_t i;
			int rc;

			for (i = 0; i < KR_OFI_STAGES && !r; i++)
				if (!ep->reads[i].rx)
					r = &ep->reads[i];
			if (!r)
				return; /* every read slot busy */
			i = (uint32_t)(r - ep->reads);
			rc = rx_post_read(rx, r, ep->rslots + (size_t)i * KR_OFI_CHUNK);
			if (rc == -EAGAIN)
				break;
			if (rc) {
				rx->err = -FI_EIO;
				break;
			}
			r->kind = KR_OFI_REQ_READ;
			r->rx = rx;
			r->off = rx->ann[0].off;
			r->clen = rx->ann[0].clen;
			rx->peer->inflight++;
			rx->reading++;
			memmove(rx->ann, rx->ann + 1, --rx->nann * sizeof(rx->ann[0]));
		}
	}
	/* failed ones with nothing in flight end here */
	for (struct kr_ofi_rx *rx = ep->rndv_rx, *next; rx; rx = next) {
		next = rx->next;
		if (rx->err && !rx->reading) {
			rx_rndv_unlink(ep, rx);
			kr_ofi_rx_complete(ep, rx);
		}
	}
}

/* kr_ofi_rx_read_done() - see ofi.h. */
void kr_ofi_rx_read_done(struct kr_ofi_ep *ep, struct kr_ofi_read *r, uint32_t status)
{
	struct kr_ofi_rx *rx = r->rx;
	uint32_t i = (uint32_t)(r - ep->reads);

	r->rx = NULL;
	rx->reading--;
	if (status != KR_WC_SUCCESS && !rx->err)
		rx->err = -FI_EIO;
	if (!rx->err) {
		if (r->in_place)
			ep->dom->copies.rx_in_place += r->clen;
		else if (r->off < rx->len)
			ep->dom->copies.rx_copied += r->clen;
		if (r->off < rx->len && !r->in_place)
			memcpy(rx->buf + r->off, ep->rslots + (size_t)i * KR_OFI_CHUNK,
			       rx->len - r->off < r->clen ? rx->len - r->off : r->clen);
		rx_ack(ep, rx, r->off, r->clen);
	} else if (!rx->reading) {
		rx_rndv_unlink(ep, rx);
		kr_ofi_rx_complete(ep, rx);
	}
	kr_ofi_rx_progress(ep);
}

/* kr_ofi_rx_peer_failed() - see ofi.h. */
void kr_ofi_rx_peer_failed(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, int err)
{
	for (struct kr_ofi_rx *rx = ep->rndv_rx; rx; rx = rx->next)
		if (rx->peer == p && !rx->err)
			rx->err = err; /* the next progress ends those with no READ in flight */
}

/* kr_ofi_rx_cancel() - see ofi.h. */
int kr_ofi_rx_cancel(struct kr_ofi_ep *ep, void *context)
{
	for (int q = 0; q < 2; q++) {
		struct kr_ofi_rx **pp, *rx;

		for (pp = &ep->posted[q]; (rx = *pp); pp = &rx->next)
			if (rx->context == context)
				break;
		if (!rx)
			continue;
		*pp = rx->next;
		if (ep->posted_tail[q] == &rx->next)
			ep->posted_tail[q] = pp;
		if (ep->rx_cq) {
			struct fi_cq_tagged_entry e = {.op_context = context,
						       .flags = rx->flags &
								(FI_RECV | FI_MSG | FI_TAGGED),
						       .buf = rx->buf,
						       .tag = rx->tag};

			kr_ofi_cq_fail(ep->rx_cq, &e, FI_ECANCELED, 0, 0);
		}
		free(rx);
		return 0;
	}
	return -FI_ENOENT;
}

/* kr_ofi_rx_free() - see ofi.h. */
void kr_ofi_rx_free(struct kr_ofi_ep *ep)
{
	for (int q = 0; q < 2; q++) {
		while (ep->posted[q]) {
			struct kr_ofi_rx *rx = ep->posted[q];

			ep->posted[q] = rx->next;
			free(rx);
		}
		while (ep->unexp[q]) {
			struct kr_ofi_unexp *u = ep->unexp[q];

			ep->unexp[q] = u->next;
			free(u->payload);
			free(u);
		}
		ep->posted_tail[q] = &ep->posted[q];
		ep->unexp_tail[q] = &ep->unexp[q];
	}
	while (ep->claimed) {
		struct kr_ofi_unexp *u = ep->claimed;

		ep->claimed = u->next;
		free(u->payload);
		free(u);
	}
	while (ep->rndv_rx) {
		struct kr_ofi_rx *rx = ep->rndv_rx;

		ep->rndv_rx = rx->next;
		free(rx);
	}
	memset(ep->reads, 0, sizeof(ep->reads));
}
