/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Peers: the other endpoints one endpoint talks to, each (node, port). The
 * vQP to a peer's port is made at the first SEND to it (kr_connect with the
 * peer's port, naming ours as the reply port), so an AV insert costs
 * nothing. SENDs to a peer wait in its queue, in the order the application
 * made them (send-after-send order), until the receiver grants a credit;
 * a connect the peer refuses because its port is not published yet is
 * retried by progress for KR_OFI_REFUSED_MS before the peer fails.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/kr_clock.h"
#include "ofi/ofi.h"

#define KR_OFI_REFUSED_MS 5000u			 /* a port still not there after this is gone */
#define KR_OFI_QUIET_NS	  (500ull * 1000 * 1000) /* a waited-on peer this silent gets a NOP */
/*
 * How often to look for such peers, and for quiet ones: a port never takes
 * back a credit it granted while the sender holds its slot, so a sender
 * that went quiet keeps up to a window of the receiver's buffers.
 * Disconnecting gives the slot, and so the credits, back: a peer nothing
 * was posted to over a whole look is let go, so a receiver whose buffers
 * are all promised to quiet senders serves others after one to two looks.
 */
#define KR_OFI_LOOK_NS (100ull * 1000 * 1000)
#define KR_OFI_POLL    16

_Static_assert(offsetof(struct kr_ofi_wsend, inl) ==
		   offsetof(struct kr_ofi_wsend, w) + sizeof(struct kr_ofi_wire),
	       "an inline SEND posts header and payload as one run of bytes");

/* kr_ofi_peer_of() - see ofi.h. */
struct kr_ofi_peer *kr_ofi_peer_of(struct kr_ofi_ep *ep, uint32_t node, uint16_t port)
{
	struct kr_ofi_peer *p;

	for (p = ep->peers; p; p = p->next)
		if (p->node == node && p->port == port)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->node = node;
	p->port = port;
	p->fi_addr = FI_ADDR_NOTAVAIL;
	p->av_gen = ep->av ? kr_ofi_av_gen(ep->av) - 1 : 0; /* not looked up yet */
	p->next = ep->peers;
	ep->peers = p;
	return p;
}

/* kr_ofi_peer_at() - see ofi.h. */
struct kr_ofi_peer *kr_ofi_peer_at(struct kr_ofi_ep *ep, fi_addr_t fi_addr, int *err)
{
	struct kr_ofi_addr a;
	struct kr_ofi_peer *p;

	if (!ep->av || kr_ofi_av_get(ep->av, fi_addr, &a)) {
		*err = -FI_EINVAL;
		return NULL;
	}
	p = kr_ofi_peer_of(ep, a.node, a.port);
	if (!p)
		*err = -FI_ENOMEM;
	return p;
}

/* kr_ofi_peer_addr() - see ofi.h. */
fi_addr_t kr_ofi_peer_addr(struct kr_ofi_ep *ep, struct kr_ofi_peer *p)
{
	if (!ep->av || !p)
		return FI_ADDR_NOTAVAIL;
	if (p->av_gen != kr_ofi_av_gen(ep->av))
		p->fi_addr = kr_ofi_av_find(ep->av, p->node, p->port, &p->av_gen);
	return p->fi_addr;
}

static void peer_post(struct kr_ofi_ep *ep, struct kr_ofi_peer *p);

/* kr_ofi_peer_send() - see ofi.h. */
int kr_ofi_peer_send(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const struct kr_ofi_wire *w,
		     const void *payload, uint32_t len, struct kr_ofi_tx *tx,
		     struct kr_ofi_rx *done_rx)
{
	struct kr_ofi_wsend *ws;

	if (p->err)
		return p->err;
	ws = malloc(sizeof(*ws));
	if (!ws)
		return -FI_ENOMEM;
	ws->kind = KR_OFI_REQ_SEND;
	ws->tx = tx;
	ws->done_rx = done_rx;
	ws->w = *w;
	ws->len = (uint32_t)sizeof(*w) + len;
	ws->bounce = NULL;
	if (len <= KR_OFI_INLINE) {
		if (len)
			memcpy(ws->inl, payload, len);
	} else {
		ws->bounce = kr_malloc(ep->dom->ctx, ws->len); /* a SEND posts from the heap */
		if (!ws->bounce) {
			free(ws);
			return -FI_EAGAIN; /* the heap is full of messages in flight */
		}
		memcpy(ws->bounce, w, sizeof(*w));
		memcpy(ws->bounce + sizeof(*w), payload, len);
	}
	kr_ofi_wq_push(&p->queued, ws);
	peer_post(ep, p); /* only posts: callers are inside completions of their own */
	return 0;
}

/* Make p's vQP. 0, -FI_EAGAIN (try again later), or the peer's failure. */
static int peer_connect(struct kr_ofi_ep *ep, struct kr_ofi_peer *p)
{
	struct kr_connect_opts o = {.port = p->port, .reply_port = ep->port_no};
	uint32_t node = p->node == ep->dom->node ? KR_NODE_SELF : p->node;
	int e;

	p->v = kr_connect(ep->dom->ctx, node, &o);
	if (p->v) {
		p->refused_ns = 0;
		p->sends++; /* in use from now: not quiet at the next look */
		return 0;
	}
	e = errno;
	switch (e) {
	case ECONNREFUSED: /* its port is not published yet, or it is gone */
		if (!p->refused_ns)
			p->refused_ns = kr_now_ns();
		if (kr_now_ns() - p->refused_ns < KR_OFI_REFUSED_MS * 1000000ull)
			return -FI_EAGAIN;
		break;
	case EAGAIN:
	case ENOSPC:
	case EBUSY:
	case EHOSTUNREACH:
	case ETIMEDOUT:
		return -FI_EAGAIN;
	}
	FI_WARN(&kr_ofi_prov, FI_LOG_EP_DATA, "kr_connect to node %u port %u: %s\n", p->node,
		(unsigned int)p->port, strerror(e));
	return e == ENOENT ? -FI_EHOSTUNREACH : e == ECONNREFUSED ? -FI_ECONNREFUSED : -e;
}

/* The peer failed (err): every SEND queued to it, and its large transfers, fail. */
static void peer_fail(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, int err)
{
	struct kr_ofi_wsend *ws;

	if (!p->err)
		FI_WARN(&kr_ofi_prov, FI_LOG_EP_DATA, "peer node %u port %u failed: %s\n", p->node,
			(unsigned int)p->port, fi_strerror(-err));
	p->err = err;
	while ((ws = kr_ofi_wq_pop(&p->queued)))
		kr_ofi_tx_sent(ep, ws, KR_WC_WR_FLUSH_ERR);
	kr_ofi_tx_peer_failed(ep, p, err);
	kr_ofi_rx_peer_failed(ep, p, err);
	kr_ofi_rma_peer_failed(ep, p, err);
}

/* Take p's vQP completions: its SENDs and chunk READs. */
static void peer_reap(struct kr_ofi_ep *ep, struct kr_ofi_peer *p)
{
	struct kr_wc wc[KR_OFI_POLL];
	bool failed = false;
	int n;

	/* queued SENDs wait for credits, whose READ completes in kr_poll too */
	while ((p->inflight || p->queued.head) && (n = kr_poll(p->v, wc, KR_OFI_POLL)) != 0) {
		if (n < 0) {
			peer_fail(ep, p, n == -ENOTCONN ? -FI_ENOTCONN : -FI_EIO);
			return;
		}
		for (int i = 0; i < n; i++) {
			uint8_t kind = *(const uint8_t *)(uintptr_t)wc[i].wr_id;

			p->inflight--;
			if (wc[i].status != KR_WC_SUCCESS)
				failed = true;
			else
				p->heard_ns = kr_now_ns();
			if (kind == KR_OFI_REQ_SEND) {
				struct kr_ofi_wsend *ws =
				    (struct kr_ofi_wsend *)(uintptr_t)wc[i].wr_id;

				kr_ofi_wq_pop(
				    &p->posted); /* a vQP completes in post order: it is ws */
				if (ws->w.op == KR_OFI_W_NOP)
					p->nop_out = false;
				kr_ofi_tx_sent(ep, ws, wc[i].status);
			} else
				kr_ofi_rx_read_done(
				    ep, (struct kr_ofi_read *)(uintptr_t)wc[i].wr_id, wc[i].status);
		}
	}
	if (failed)
		peer_fail(ep, p, -FI_EIO);
}

/*
 * kr_ofi_peer_ready() - see ofi.h. Called deep inside completions, so a
 * hard failure is only noted (fail_err); the next progress fails the peer.
 */
int kr_ofi_peer_ready(struct kr_ofi_ep *ep, struct kr_ofi_peer *p)
{
	int rc;

	if (p->err || p->fail_err || p->v)
		return p->err ? p->err : p->fail_err;
	rc = peer_connect(ep, p);
	if (rc && rc != -FI_EAGAIN)
		p->fail_err = rc;
	return rc;
}

/* Post p's queued SENDs while credits last. No completion handled here. */
static void peer_post(struct kr_ofi_ep *ep, struct kr_ofi_peer *p)
{
	struct kr_ofi_wsend *ws;

	if (!p->queued.head || kr_ofi_peer_ready(ep, p))
		return;
	while ((ws = p->queued.head)) {
		int rc = ws->bounce
			     ? kr_post_send(p->v, ws->bounce, ws->len, (uintptr_t)ws, 0)
			     : kr_post_send(p->v, &ws->w, ws->len, (uintptr_t)ws, KR_POST_INLINE);

		if (rc == -EAGAIN)
			break; /* no credit or no room: the next progress tries again */
		if (rc) {
			p->fail_err = rc == -ENOTCONN ? -FI_ENOTCONN : -FI_EIO;
			return;
		}
		kr_ofi_wq_push(&p->posted, kr_ofi_wq_pop(&p->queued));
		p->inflight++;
		p->sends++;
		if (ws->done_rx) { /* the NIC delivers it now without us */
			kr_ofi_rx_complete(ep, ws->done_rx);
			ws->done_rx = NULL;
		}
	}
}

/* kr_ofi_peer_progress() - see ofi.h. */
void kr_ofi_peer_progress(struct kr_ofi_ep *ep, struct kr_ofi_peer *p)
{
	if (p->fail_err && !p->err)
		peer_fail(ep, p, p->fail_err);
	if (p->err)
		return;
	if (p->rv)
		kr_ofi_direct_reap(ep, p);
	if (p->v)
		peer_reap(ep, p);
	if (!p->err)
		peer_post(ep, p);
}

/* Does a large transfer or an RMA operation of ep wait on p? */
static bool peer_awaited(const struct kr_ofi_ep *ep, const struct kr_ofi_peer *p)
{
	for (const struct kr_ofi_tx *tx = ep->rndv_tx; tx; tx = tx->next)
		if (tx->peer == p)
			return true;
	for (const struct kr_ofi_rx *rx = ep->rndv_rx; rx; rx = rx->next)
		if (rx->peer == p && !rx->reading)
			return true;
	return kr_ofi_rma_awaits(ep, p);
}

/* kr_ofi_peers_keepalive() - see ofi.h. */
void kr_ofi_peers_keepalive(struct kr_ofi_ep *ep)
{
	struct kr_ofi_wire nop = {.op = KR_OFI_W_NOP};
	uint64_t now = kr_now_ns();

	if (now < ep->keepalive_ns)
		return;
	ep->keepalive_ns = now + KR_OFI_LOOK_NS;
	for (struct kr_ofi_peer *p = ep->peers; p; p = p->next) {
		bool quiet = p->sends == p->sends_seen; /* nothing posted since the last look */

		p->sends_seen = p->sends;
		if (p->err || (!p->v && !p->rv))
			continue;
		if (quiet && !p->inflight && !p->queued.head && !p->rv_out &&
		    !peer_awaited(ep, p)) {
			if (p->v) /* nothing in flight: it returns the slot at once */
				kr_disconnect(p->v);
			if (p->rv)
				kr_disconnect(p->rv);
			p->v = p->rv = NULL;
			continue;
		}
		if (!p->v)
			continue;
		if (p->nop_out || now - p->heard_ns < KR_OFI_QUIET_NS || !peer_awaited(ep, p))
			continue;
		if (!kr_ofi_peer_send(ep, p, &nop, NULL, 0, NULL, NULL))
			p->nop_out = true;
	}
}

/* kr_ofi_peers_free() - see ofi.h. */
void kr_ofi_peers_free(struct kr_ofi_ep *ep)
{
	struct kr_ofi_peer *p;
	struct kr_ofi_wsend *ws;

	while ((p = ep->peers)) {
		ep->peers = p->next;
		if (p->v)
			kr_disconnect(p->v); /* waits for what is in flight; drops completions */
		while ((ws = kr_ofi_wq_pop(&p->posted)) || (ws = kr_ofi_wq_pop(&p->queued))) {
			if (ws->w.op == KR_OFI_W_EAGER)
				free(ws->tx); /* a large send's is on the endpoint's list */
			free(ws->done_rx);
			kr_free(ep->dom->ctx, ws->bounce);
			free(ws);
		}
		free(p);
	}
}
