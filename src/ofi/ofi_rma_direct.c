/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RMA by the NIC: fi_read and fi_write on a peer's region that is heap
 * memory with a krcore key (ofi_mr.c) go as krcore READs and WRITEs straight
 * to the peer's memory, with no call on its side. The initiator learns a
 * region from the target's MR_INFO, which the target's provider sends before
 * answering a request that asked (KR_OFI_WF_WANT: a READ or WRITE on a key
 * this peer has no entry for); later operations within it go direct, in
 * pieces of KR_OFI_DIRECT_PIECE, at most KR_OFI_RMA_OUT of one operation out,
 * from the local buffer when it is heap memory, else through a heap copy of
 * each piece (a WRITE of up to KR_POST_MAX_INLINE bytes inline).
 *
 * The direct requests go on a vQP of their own to the peer's node (one-sided,
 * no port), so a key the NIC refuses (the region closed since, or registered
 * again elsewhere under the same key) breaks only that vQP: it is let go,
 * the peer's entries are forgotten, and every operation that had requests on
 * it starts again through the target's provider (ofi_rma.c), which answers
 * with the region as it is now, or FI_EACCES. READ and WRITE are idempotent,
 * so doing a piece twice is harmless. A peer whose direct operations failed
 * KR_OFI_DIRECT_FAILS times is served by its provider from then on.
 *
 * What the target does not see: a direct operation raises no remote counter
 * and no completion there (FI_RMA_EVENT is not offered); fi_writedata and
 * atomics always go through its provider.
 */
#include <errno.h>
#include <string.h>

#include "ofi/ofi.h"

#define KR_OFI_DIRECT_PIECE (64u << 10)
#define KR_OFI_DIRECT_FAILS 3u
#define KR_OFI_DIRECT_POLL  16

static struct kr_ofi_dkey *dkey_find(struct kr_ofi_peer *p, uint64_t key)
{
	for (uint32_t i = 0; i < KR_OFI_DKEYS; i++)
		if (p->dk[i].rights && p->dk[i].key == key)
			return &p->dk[i];
	return NULL;
}

/* kr_ofi_direct_choose() - see ofi.h. */
void kr_ofi_direct_choose(struct kr_ofi_rma *r)
{
	struct kr_ofi_peer *p = r->peer;
	const struct kr_ofi_dkey *d;
	uint8_t need;

	r->direct = r->want = false;
	if ((r->op != KR_OFI_W_RMA_READ && r->op != KR_OFI_W_RMA_WRITE) || !r->len ||
	    (r->flags & FI_REMOTE_CQ_DATA) || p->rv_fails >= KR_OFI_DIRECT_FAILS)
		return;
	d = dkey_find(p, r->key);
	if (!d) {
		r->want = true;
		return;
	}
	need = r->op == KR_OFI_W_RMA_READ ? KR_OFI_DK_READ : KR_OFI_DK_WRITE;
	if (!(d->rights & need) || r->addr < d->offset || r->addr - d->offset > d->len ||
	    r->len > d->len - (r->addr - d->offset))
		return; /* not within it: the target's provider refuses it (FI_EACCES) */
	r->direct = true;
	r->rva = d->va + (r->addr - d->offset);
	r->rkey = d->rkey;
}

/* kr_ofi_direct_learn() - see ofi.h (kr_ofi_rma_wire_sane() checked w). */
void kr_ofi_direct_learn(struct kr_ofi_peer *p, const struct kr_ofi_wire *w)
{
	struct kr_ofi_dkey *d = dkey_find(p, w->tag);

	if (!d) {
		d = &p->dk[p->dk_next];
		p->dk_next = (p->dk_next + 1) % KR_OFI_DKEYS;
	}
	*d =
	    (struct kr_ofi_dkey){.key = w->tag,
				 .offset = w->off,
				 .len = w->len,
				 .va = w->addr,
				 .rkey = w->rkey,
				 .rights = (uint8_t)(w->data & (KR_OFI_DK_READ | KR_OFI_DK_WRITE))};
}

/* p's direct vQP, made if need be: 0, -FI_EAGAIN (not now), or -FI_EIO (not at all). */
static int direct_connect(struct kr_ofi_ep *ep, struct kr_ofi_peer *p)
{
	uint32_t node = p->node == ep->dom->node ? KR_NODE_SELF : p->node;

	if (p->rv)
		return 0;
	p->rv = kr_connect(ep->dom->ctx, node, NULL);
	if (p->rv)
		return 0;
	switch (errno) {
	case EAGAIN:
	case ENOSPC:
	case EBUSY:
	case EHOSTUNREACH:
		return -FI_EAGAIN;
	}
	return -FI_EIO;
}

/* Post the next len bytes of r as piece dp: 0, -FI_EAGAIN (no credit or heap now), -FI_E*. */
static int piece_post(struct kr_ofi_ep *ep, struct kr_ofi_rma *r, struct kr_ofi_dpiece *dp,
		      uint32_t len)
{
	bool rd = r->op == KR_OFI_W_RMA_READ;
	uint8_t *local = (rd ? r->dst : (uint8_t *)(uintptr_t)r->src) + r->sent;
	uint32_t flags = 0;
	int rc;

	dp->bounce = NULL;
	if (!rd && len <= KR_POST_MAX_INLINE) {
		flags = KR_POST_INLINE; /* any memory: copied into the request */
	} else if (r->bounce_local) {
		dp->bounce = kr_malloc(ep->dom->ctx, len);
		if (!dp->bounce)
			return -FI_EAGAIN; /* pieces in flight give theirs back */
		if (!rd)
			memcpy(dp->bounce, local, len);
		local = dp->bounce;
	}
	rc = rd ? kr_post_read(r->peer->rv, local, len, r->rva + r->sent, r->rkey, (uintptr_t)dp, 0)
		: kr_post_write(r->peer->rv, local, len, r->rva + r->sent, r->rkey, (uintptr_t)dp,
				flags);
	if (rc == -EINVAL && !dp->bounce && !flags) {
		r->bounce_local = true; /* not heap memory: the NIC reaches only the heap */
		return piece_post(ep, r, dp, len);
	}
	if (rc) {
		kr_free(ep->dom->ctx, dp->bounce);
		dp->bounce = NULL;
	}
	return rc == -EAGAIN ? -FI_EAGAIN : rc == -ENOTCONN ? -FI_ENOTCONN : rc ? -FI_EIO : 0;
}

/* kr_ofi_direct_post() - see ofi.h. */
void kr_ofi_direct_post(struct kr_ofi_ep *ep, struct kr_ofi_rma *r)
{
	struct kr_ofi_peer *p = r->peer;
	int rc = direct_connect(ep, p);

	if (rc) {
		if (rc != -FI_EAGAIN)
			r->direct = false; /* no vQP for it: its provider serves it */
		return;
	}
	while (!r->err && r->out < KR_OFI_RMA_OUT && r->sent < r->len) {
		struct kr_ofi_dpiece *dp = r->dp;
		uint32_t len = r->len - r->sent < KR_OFI_DIRECT_PIECE ? (uint32_t)(r->len - r->sent)
								      : KR_OFI_DIRECT_PIECE;

		while (dp->busy) /* out < KR_OFI_RMA_OUT: one is free */
			dp++;
		rc = piece_post(ep, r, dp, len);
		if (rc == -FI_EAGAIN)
			return;
		if (rc == -FI_ENOTCONN) {
			r->err = rc;
			return;
		}
		if (rc) { /* the vQP is in error: all on it goes the other way */
			p->rv_fails++;
			kr_ofi_direct_drop(ep, p);
			return;
		}
		dp->kind = KR_OFI_REQ_DIRECT;
		dp->busy = true;
		dp->r = r;
		dp->off = r->sent;
		dp->len = len;
		r->sent += len;
		r->sent_any = true;
		r->out++;
		p->rv_out++;
		p->sends++; /* in use: not quiet at the next keepalive look */
	}
}

/* kr_ofi_direct_reap() - see ofi.h. */
void kr_ofi_direct_reap(struct kr_ofi_ep *ep, struct kr_ofi_peer *p)
{
	struct kr_wc wc[KR_OFI_DIRECT_POLL];
	bool failed = false;
	int n;

	while (p->rv && p->rv_out && (n = kr_poll(p->rv, wc, KR_OFI_DIRECT_POLL)) != 0) {
		if (n < 0) {
			failed = true;
			break;
		}
		for (int i = 0; i < n; i++) {
			struct kr_ofi_dpiece *dp = (struct kr_ofi_dpiece *)(uintptr_t)wc[i].wr_id;
			struct kr_ofi_rma *r = dp->r;

			p->rv_out--;
			r->out--;
			dp->busy = false;
			if (wc[i].status != KR_WC_SUCCESS) {
				failed = true;
			} else {
				if (dp->bounce && r->op == KR_OFI_W_RMA_READ)
					memcpy(r->dst + dp->off, dp->bounce, dp->len);
				r->done += dp->len;
			}
			kr_free(ep->dom->ctx, dp->bounce);
			dp->bounce = NULL;
		}
	}
	if (failed) {
		FI_INFO(&kr_ofi_prov, FI_LOG_EP_DATA,
			"a direct RMA to node %u failed: its regions are asked for again\n",
			p->node);
		p->rv_fails++;
		kr_ofi_direct_drop(ep, p);
	}
}

/* kr_ofi_direct_drop() - see ofi.h. */
void kr_ofi_direct_drop(struct kr_ofi_ep *ep, struct kr_ofi_peer *p)
{
	bool gone = true;

	if (p->rv) /* waits for what is in flight: then no request of it touches a piece */
		gone = kr_disconnect(p->rv) != -ETIMEDOUT;
	p->rv = NULL;
	p->rv_out = 0;
	memset(p->dk, 0, sizeof(p->dk));
	for (struct kr_ofi_rma *r = ep->rma; r; r = r->next) {
		if (r->peer != p || !r->direct)
			continue;
		for (uint32_t i = 0; i < KR_OFI_RMA_OUT; i++) {
			if (!r->dp[i].busy)
				continue;
			if (gone) /* else the NIC may still write it: leaked, not reused */
				kr_free(ep->dom->ctx, r->dp[i].bounce);
			r->dp[i] = (struct kr_ofi_dpiece){0};
		}
		if (r->sent == r->len && r->done == r->len)
			continue; /* all of it done: complete as it is */
		r->direct = false;
		r->want = p->rv_fails < KR_OFI_DIRECT_FAILS;
		r->sent = r->done = 0;
		r->out = 0;
		r->sent_any = false;
	}
}
