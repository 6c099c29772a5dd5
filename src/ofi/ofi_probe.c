/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Probes: fi_trecvmsg with FI_PEEK (MPI_Probe, MPI_Iprobe), FI_PEEK |
 * FI_CLAIM then FI_CLAIM (MPI_Mprobe, MPI_Mrecv), FI_DISCARD. A probe looks
 * at the unexpected tagged messages only (what has arrived with no receive
 * posted for it); a claimed message waits on the endpoint's claimed list,
 * where its large transfer's announcements still find it.
 */
#include <stdlib.h>

#include "ofi/ofi.h"

/*
 * kr_ofi_rx_peek() - see ofi.h. A found message completes the peek with its
 * length, tag, data and source (no bytes); none gives FI_ENOMSG. FI_CLAIM
 * moves it to the claimed list, named from the peek's fi_context, for a
 * later FI_CLAIM receive; FI_DISCARD drops it.
 */
int kr_ofi_rx_peek(struct kr_ofi_ep *ep, fi_addr_t src, uint64_t tag, uint64_t ignore,
		   uint64_t flags, void *context)
{
	struct kr_ofi_rx probe = {.flags = FI_TAGGED,
				  .tag = tag,
				  .ignore = ignore,
				  .src = (ep->caps & FI_DIRECTED_RECV) ? src : FI_ADDR_UNSPEC};
	struct fi_cq_tagged_entry e = {.op_context = context, .flags = FI_RECV | FI_TAGGED};
	struct kr_ofi_unexp **pu, *u;
	fi_addr_t from;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if ((flags & FI_CLAIM) && !context)
		return -FI_EINVAL; /* the claimed message is kept in its fi_context */
	kr_ofi_ep_progress(ep);	   /* what has arrived by now */
	for (pu = &ep->unexp[1]; (u = *pu); pu = &u->next)
		if (kr_ofi_rx_matches(&probe, &u->w, kr_ofi_peer_addr(ep, u->peer)))
			break;
	if (!u) {
		e.tag = tag;
		return ep->rx_cq ? kr_ofi_cq_fail(ep->rx_cq, &e, FI_ENOMSG, 0, 0) : 0;
	}
	from = kr_ofi_peer_addr(ep, u->peer);
	e.len = u->w.len;
	e.tag = u->w.tag;
	if (u->w.flags & KR_OFI_WF_DATA) {
		e.flags |= FI_REMOTE_CQ_DATA;
		e.data = u->w.data;
	}
	if (flags & (FI_CLAIM | FI_DISCARD)) {
		*pu = u->next;
		if (ep->unexp_tail[1] == &u->next)
			ep->unexp_tail[1] = pu;
		if (flags & FI_DISCARD) {
			kr_ofi_unexp_drop(ep, u);
		} else {
			u->next = ep->claimed; /* still found by its chunks' announcements */
			ep->claimed = u;
			((struct fi_context *)context)->internal[0] = u;
		}
	}
	return ep->rx_cq ? kr_ofi_cq_done(ep->rx_cq, &e, from) : 0;
}

/* kr_ofi_rx_claim() - see ofi.h. */
int kr_ofi_rx_claim(struct kr_ofi_ep *ep, void *buf, size_t len, uint64_t flags, void *context)
{
	struct kr_ofi_unexp **pu, *u = context ? ((struct fi_context *)context)->internal[0] : NULL;
	struct kr_ofi_rx *rx;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	for (pu = &ep->claimed; u && *pu && *pu != u; pu = &(*pu)->next)
		;
	if (!u || !*pu)
		return -FI_EINVAL; /* no message claimed with this context */
	if (!buf && len && !(flags & FI_DISCARD))
		return -FI_EINVAL;
	rx = calloc(1, sizeof(*rx));
	if (!rx)
		return -FI_ENOMEM;
	*pu = u->next;
	((struct fi_context *)context)->internal[0] = NULL;
	rx->context = context;
	rx->flags = FI_RECV | FI_TAGGED | (flags & FI_COMPLETION);
	rx->src = FI_ADDR_UNSPEC;
	rx->discard = flags & FI_DISCARD;
	rx->buf = rx->discard ? NULL : buf;
	rx->len = rx->discard ? 0 : len;
	kr_ofi_rx_take(ep, rx, &u->w, kr_ofi_peer_addr(ep, u->peer), u->peer, u->payload, u->ann,
		       u->nann);
	free(u->payload);
	free(u);
	return 0;
}

/* kr_ofi_unexp_drop() - see ofi.h. */
void kr_ofi_unexp_drop(struct kr_ofi_ep *ep, struct kr_ofi_unexp *u)
{
	struct kr_ofi_rx *rx;

	if (u->w.op == KR_OFI_W_RTS && (rx = calloc(1, sizeof(*rx)))) {
		/* its sender waits for every chunk's ACK: acknowledge them unread */
		rx->discard = true;
		rx->src = FI_ADDR_UNSPEC;
		kr_ofi_rx_take(ep, rx, &u->w, FI_ADDR_NOTAVAIL, u->peer, NULL, u->ann, u->nann);
	}
	free(u->payload);
	free(u);
}
