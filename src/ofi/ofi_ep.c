/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Endpoints. Opening one binds a krcore port on this node for it (the
 * first free one from a per-process starting point: the ranks of a launch
 * on one node each need their own), posts its receive buffers there and
 * sets up its staging and read slots in the heap; its address (fi_getname)
 * is then fixed: (node, port, launch). fi_ep_bind takes the AV and the CQs
 * (FI_SELECTIVE_COMPLETION: only operations flagged FI_COMPLETION
 * complete); fi_enable needs the AV. Progress (kr_ofi_ep_progress) polls
 * the port, delivers what came, and moves each peer's queue on.
 *
 * Heap an endpoint holds: KR_OFI_RX_BUFS x KR_OFI_RX_BUF of receive
 * buffers, and KR_OFI_STAGES x KR_OFI_CHUNK twice (staging, read slots):
 * about 1.2 MiB of the job's heap (krpoold --heap-mb), plus a copy of each
 * EAGER message above KR_OFI_INLINE bytes while it is in flight.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ofi/ofi.h"

#define KR_OFI_PORT_FIRST 20000u /* ports an endpoint may bind: FIRST .. FIRST + SPAN - 1 */
#define KR_OFI_PORT_SPAN  40000u
#define KR_OFI_PORT_TRIES 256u
#define KR_OFI_SENDERS	  256u /* peers that may send to one endpoint at once */
#define KR_OFI_POLL_RECV  16

/*
 * A port does not take back credits it granted while their sender holds
 * its slot: a sender that got a share while few were sending keeps it when
 * it stops sending, and a sender admitted later gets only what is left. So
 * the endpoint keeps KR_OFI_WINDOW buffers posted for every address of its
 * AV (and itself), adding KR_OFI_RX_BUFS at a time up to KR_PORT_MAX_RECV:
 * up to KR_PORT_MAX_RECV / KR_OFI_WINDOW - 1 peers every peer can always get
 * a credit; beyond, a sender waits until a quiet one lets go of its slot
 * (ofi_peer.c: KR_OFI_LOOK_NS).
 */
static void ep_rx_grow(struct kr_ofi_ep *ep)
{
	uint32_t want = KR_OFI_WINDOW * ((ep->av ? kr_ofi_av_count(ep->av) : 0) + 1);
	uint8_t *chunk;

	if (ep->rx_short && want <= ep->rx_tried)
		return; /* refused for as many: not on every progress again */
	while (ep->rx_nchunks * KR_OFI_RX_BUFS < want && ep->rx_nchunks < KR_OFI_RX_CHUNKS) {
		chunk = kr_malloc(ep->dom->ctx, (size_t)KR_OFI_RX_BUFS * KR_OFI_RX_BUF);
		if (!chunk) {
			ep->rx_tried = want;
			if (!ep->rx_short)
				FI_WARN(
				    &kr_ofi_prov, FI_LOG_EP_CTRL,
				    "no heap for more receive buffers (%u posted for %u peers): "
				    "peers may wait for credits (krpoold --heap-mb)\n",
				    ep->rx_nchunks * KR_OFI_RX_BUFS, want / KR_OFI_WINDOW);
			ep->rx_short = true;
			return;
		}
		for (uint32_t i = 0; i < KR_OFI_RX_BUFS; i++)
			if (kr_post_recv(ep->port, chunk + (size_t)i * KR_OFI_RX_BUF, KR_OFI_RX_BUF,
					 ep->rx_nchunks * KR_OFI_RX_BUFS + i))
				FI_WARN(&kr_ofi_prov, FI_LOG_EP_CTRL,
					"kr_post_recv refused a buffer\n");
		ep->rx_chunk[ep->rx_nchunks++] = chunk;
	}
}

static uint8_t *ep_rx_buf(const struct kr_ofi_ep *ep, uint64_t wr_id)
{
	return ep->rx_chunk[wr_id / KR_OFI_RX_BUFS] + (wr_id % KR_OFI_RX_BUFS) * KR_OFI_RX_BUF;
}

/* kr_ofi_ep_progress() - see ofi.h. */
void kr_ofi_ep_progress(struct kr_ofi_ep *ep)
{
	struct kr_wc wc[KR_OFI_POLL_RECV];
	int n;

	ep_rx_grow(ep);
	while ((n = kr_poll_recv(ep->port, wc, KR_OFI_POLL_RECV)) > 0) {
		for (int i = 0; i < n; i++) {
			uint8_t *buf = ep_rx_buf(ep, wc[i].wr_id);
			struct kr_port_sender s;
			struct kr_ofi_peer *p = NULL;

			if (wc[i].status != KR_WC_SUCCESS)
				FI_WARN(&kr_ofi_prov, FI_LOG_EP_DATA, "a receive failed: %s\n",
					kr_strerror((int)wc[i].status));
			else if (!kr_port_sender(ep->port, wc[i].src, &s))
				p = kr_ofi_peer_of(ep, s.node, (uint16_t)s.reply_port);
			if (wc[i].status == KR_WC_SUCCESS)
				kr_ofi_rx_arrived(ep, p, buf, wc[i].byte_len);
			/* back to the port at once: what stays unexpected was copied */
			if (kr_post_recv(ep->port, buf, KR_OFI_RX_BUF, wc[i].wr_id))
				FI_WARN(&kr_ofi_prov, FI_LOG_EP_DATA,
					"kr_post_recv refused a buffer back\n");
		}
	}
	if (n < 0)
		FI_WARN(&kr_ofi_prov, FI_LOG_EP_DATA, "kr_poll_recv: %s\n", strerror(-n));
	for (struct kr_ofi_peer *p = ep->peers; p; p = p->next)
		kr_ofi_peer_progress(ep, p);
	kr_ofi_tx_progress(ep);
	kr_ofi_rx_progress(ep);
	if (ep->rma)
		kr_ofi_rma_progress(ep);
	kr_ofi_peers_keepalive(ep);
}

/* kr_ofi_ep_set_add() - see ofi.h. */
int kr_ofi_ep_set_add(struct kr_ofi_ep_set *s, struct kr_ofi_ep *ep)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->ep[i] == ep)
			return 0;
	if (s->n == sizeof(s->ep) / sizeof(s->ep[0]))
		return -FI_ENOSPC;
	s->ep[s->n++] = ep;
	return 0;
}

/* kr_ofi_ep_set_del() - see ofi.h. */
void kr_ofi_ep_set_del(struct kr_ofi_ep_set *s, const struct kr_ofi_ep *ep)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->ep[i] == ep) {
			s->ep[i] = s->ep[--s->n];
			return;
		}
}

/* kr_ofi_ep_set_progress() - see ofi.h. */
void kr_ofi_ep_set_progress(const struct kr_ofi_ep_set *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		kr_ofi_ep_progress(s->ep[i]);
}

static void ep_release(struct kr_ofi_ep *ep)
{
	struct kr_ctx *ctx = ep->dom->ctx;

	kr_ofi_rma_free(ep);   /* before the peers it names */
	kr_ofi_peers_free(ep); /* disconnects: no READ or SEND of ours in flight after */
	kr_ofi_tx_free(ep);
	kr_ofi_rx_free(ep);
	if (ep->port)
		kr_unbind(ep->port);
	if (ep->stage_mr)
		kr_dereg_mr(ep->stage_mr);
	for (uint32_t i = 0; i < ep->rx_nchunks; i++)
		kr_free(ctx, ep->rx_chunk[i]);
	kr_free(ctx, ep->stage);
	kr_free(ctx, ep->rslots);
}

static int ep_close(struct fid *fid)
{
	struct kr_ofi_ep *ep = container_of(fid, struct kr_ofi_ep, ep.fid);
	struct kr_ofi_domain *d = ep->dom;

	pthread_mutex_lock(&d->lock);
	if (ep->tx_cq)
		kr_ofi_ep_set_del(&ep->tx_cq->eps, ep);
	if (ep->rx_cq && ep->rx_cq != ep->tx_cq)
		kr_ofi_ep_set_del(&ep->rx_cq->eps, ep);
	kr_ofi_cntr_unbind(ep);
	ep_release(ep);
	d->refs--;
	pthread_mutex_unlock(&d->lock);
	free(ep);
	return 0;
}

static int ep_bind_cq(struct kr_ofi_ep *ep, struct kr_ofi_cq *q, uint64_t flags)
{
	int rc;

	if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EINVAL;
	if (((flags & FI_TRANSMIT) && ep->tx_cq) || ((flags & FI_RECV) && ep->rx_cq))
		return -FI_EINVAL; /* one CQ per direction */
	rc = kr_ofi_ep_set_add(&q->eps, ep);
	if (rc)
		return rc;
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = q;
		ep->tx_sel = flags & FI_SELECTIVE_COMPLETION;
	}
	if (flags & FI_RECV) {
		ep->rx_cq = q;
		ep->rx_sel = flags & FI_SELECTIVE_COMPLETION;
	}
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct kr_ofi_ep *ep = container_of(fid, struct kr_ofi_ep, ep.fid);
	int rc = 0;

	if (!bfid)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->dom->lock);
	if (ep->enabled) {
		rc = -FI_EOPBADSTATE;
	} else {
		switch (bfid->fclass) {
		case FI_CLASS_AV:
			if (flags)
				rc = -FI_EBADFLAGS;
			else if (ep->av)
				rc = -FI_EINVAL;
			else
				ep->av = container_of(bfid, struct fid_av, fid);
			break;
		case FI_CLASS_CQ:
			rc = ep_bind_cq(ep, container_of(bfid, struct kr_ofi_cq, cq.fid), flags);
			break;
		case FI_CLASS_CNTR:
			rc = kr_ofi_cntr_bind(ep, container_of(bfid, struct kr_ofi_cntr, cntr.fid),
					      flags);
			break;
		case FI_CLASS_EQ:
			break; /* an RDM endpoint raises no events */
		default:
			rc = -FI_ENOSYS; /* stx/srx contexts */
		}
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct kr_ofi_ep *ep = container_of(fid, struct kr_ofi_ep, ep.fid);
	uint64_t *flags = arg;
	int rc = 0;

	pthread_mutex_lock(&ep->dom->lock);
	switch (command) {
	case FI_ENABLE:
		if (!ep->av)
			rc = -FI_ENOAV;
		else
			ep->enabled = true;
		break;
	case FI_GETOPSFLAG:
	case FI_SETOPSFLAG:
		if (!flags || !(*flags & (FI_TRANSMIT | FI_RECV)) ||
		    (*flags & (FI_TRANSMIT | FI_RECV)) == (FI_TRANSMIT | FI_RECV)) {
			rc = -FI_EINVAL;
			break;
		}
		{
			uint64_t *side = (*flags & FI_TRANSMIT) ? &ep->tx_flags : &ep->rx_flags;
			uint64_t dir = *flags & (FI_TRANSMIT | FI_RECV);

			if (command == FI_GETOPSFLAG)
				*flags = *side | dir;
			else
				*side = *flags & ~dir;
		}
		break;
	default:
		rc = -FI_ENOSYS;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static ssize_t ep_cancel(fid_t fid, void *context)
{
	struct kr_ofi_ep *ep = container_of(fid, struct kr_ofi_ep, ep.fid);
	int rc;

	pthread_mutex_lock(&ep->dom->lock);
	rc = kr_ofi_rx_cancel(ep, context);
	pthread_mutex_unlock(&ep->dom->lock);
	return rc; /* a send cannot be called back once it is queued to its peer */
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	(void)fid;
	(void)level;
	(void)optname;
	(void)optval;
	(void)optlen;
	return -FI_ENOPROTOOPT;
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	(void)fid;
	(void)level;
	(void)optname;
	(void)optval;
	(void)optlen;
	return -FI_ENOPROTOOPT;
}

static int ep_no_ctx(struct fid_ep *sep, int index, void *attr, struct fid_ep **ctx_ep,
		     void *context)
{
	(void)sep;
	(void)index;
	(void)attr;
	(void)ctx_ep;
	(void)context;
	return -FI_ENOSYS; /* not a scalable endpoint */
}

static int ep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx_ep,
		     void *context)
{
	return ep_no_ctx(sep, index, attr, tx_ep, context);
}

static int ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
		     void *context)
{
	return ep_no_ctx(sep, index, attr, rx_ep, context);
}

static ssize_t ep_size_left(struct fid_ep *ep)
{
	(void)ep;
	return KR_OFI_QUEUE; /* queues grow: never full */
}

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct kr_ofi_ep *ep = container_of(fid, struct kr_ofi_ep, ep.fid);
	struct kr_ofi_addr a = {
	    .node = ep->dom->node, .port = ep->port_no, .launch_tag = ep->dom->launch_tag};
	size_t cap;

	if (!addrlen || (!addr && *addrlen))
		return -FI_EINVAL;
	cap = *addrlen;
	*addrlen = sizeof(a);
	if (cap < sizeof(a))
		return -FI_ETOOSMALL;
	memcpy(addr, &a, sizeof(a));
	return 0;
}

static int ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid;
	(void)addr;
	(void)addrlen;
	return -FI_ENOSYS; /* the address is the port the endpoint bound */
}

static int ep_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep;
	(void)addr;
	(void)addrlen;
	return -FI_ENOSYS; /* connectionless */
}

static int ep_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	(void)ep;
	(void)addr;
	(void)param;
	(void)paramlen;
	return -FI_ENOSYS;
}

static int ep_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep;
	(void)param;
	(void)paramlen;
	return -FI_ENOSYS;
}

static int ep_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep;
	(void)flags;
	return -FI_ENOSYS;
}

static int ep_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
		   void *context)
{
	(void)ep;
	(void)addr;
	(void)flags;
	(void)mc;
	(void)context;
	return -FI_ENOSYS;
}

static struct fi_ops ep_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = ep_close,
    .bind = ep_bind,
    .control = ep_control,
    .ops_open = kr_ofi_no_ops_open,
    .tostr = kr_ofi_no_tostr,
    .ops_set = kr_ofi_no_ops_set,
};

static struct fi_ops_ep ep_ops = {
    .size = sizeof(struct fi_ops_ep),
    .cancel = ep_cancel,
    .getopt = ep_getopt,
    .setopt = ep_setopt,
    .tx_ctx = ep_tx_ctx,
    .rx_ctx = ep_rx_ctx,
    .rx_size_left = ep_size_left,
    .tx_size_left = ep_size_left,
};

static struct fi_ops_cm ep_cm_ops = {
    .size = sizeof(struct fi_ops_cm),
    .setname = ep_setname,
    .getname = ep_getname,
    .getpeer = ep_getpeer,
    .connect = ep_connect,
    .listen = NULL,
    .accept = ep_accept,
    .reject = NULL,
    .shutdown = ep_shutdown,
    .join = ep_join,
};

/* Bind a free port of this node for ep, post its receive buffers, set up its slots. */
static int ep_setup(struct kr_ofi_ep *ep)
{
	struct kr_ctx *ctx = ep->dom->ctx;
	struct kr_bind_opts bo = {.senders = KR_OFI_SENDERS, .window = KR_OFI_WINDOW};
	static uint32_t opened; /* endpoints this process opened: a new start for each */
	uint32_t start =
	    ((uint32_t)getpid() * 131u + __atomic_fetch_add(&opened, 1, __ATOMIC_RELAXED) * 7919u) %
	    KR_OFI_PORT_SPAN;
	struct kr_mr_key key;

	for (uint32_t k = 0; k < KR_OFI_PORT_TRIES && !ep->port; k++) {
		uint32_t port = KR_OFI_PORT_FIRST + (start + k) % KR_OFI_PORT_SPAN;

		ep->port = kr_bind(ctx, port, &bo);
		if (ep->port)
			ep->port_no = (uint16_t)port;
		else if (errno != EADDRINUSE)
			break;
	}
	if (!ep->port) {
		FI_WARN(&kr_ofi_prov, FI_LOG_EP_CTRL, "kr_bind: %s\n", strerror(errno));
		return errno == ENOMEM ? -FI_ENOMEM : -FI_EADDRINUSE;
	}
	ep_rx_grow(ep);
	ep->stage = kr_malloc(ctx, (size_t)KR_OFI_STAGES * KR_OFI_CHUNK);
	ep->rslots = kr_malloc(ctx, (size_t)KR_OFI_STAGES * KR_OFI_CHUNK);
	if (!ep->rx_nchunks || !ep->stage || !ep->rslots) {
		FI_WARN(&kr_ofi_prov, FI_LOG_EP_CTRL,
			"the job's heap is too small for an endpoint (krpoold --heap-mb)\n");
		return -FI_ENOMEM;
	}
	/* peers READ our staged chunks, and nothing else of ours */
	ep->stage_mr =
	    kr_reg_mr(ctx, ep->stage, (size_t)KR_OFI_STAGES * KR_OFI_CHUNK, KR_MR_REMOTE_READ);
	if (!ep->stage_mr || kr_mr_key(ep->stage_mr, &key)) {
		FI_WARN(&kr_ofi_prov, FI_LOG_EP_CTRL, "kr_reg_mr: %s\n", strerror(errno));
		return -FI_EIO;
	}
	ep->stage_rkey = key.rkey;
	return 0;
}

/* kr_ofi_ep_open() - see ofi.h. */
int kr_ofi_ep_open(struct fid_domain *dom, struct fi_info *info, struct fid_ep **out, void *context)
{
	struct kr_ofi_domain *d = container_of(dom, struct kr_ofi_domain, dom);
	struct kr_ofi_ep *ep;
	int rc;

	if (!info || !out)
		return -FI_EINVAL;
	if (info->ep_attr && info->ep_attr->type != FI_EP_RDM &&
	    info->ep_attr->type != FI_EP_UNSPEC)
		return -FI_ENOPROTOOPT;
	if (info->caps & ~KR_OFI_CAPS)
		return -FI_ENOSYS;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->dom = d;
	ep->caps = info->caps ? info->caps : KR_OFI_CAPS;
	ep->tx_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	for (int q = 0; q < 2; q++) {
		ep->posted_tail[q] = &ep->posted[q];
		ep->unexp_tail[q] = &ep->unexp[q];
	}
	pthread_mutex_lock(&d->lock);
	rc = ep_setup(ep);
	if (rc) {
		ep_release(ep);
		pthread_mutex_unlock(&d->lock);
		free(ep);
		return rc;
	}
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &ep_cm_ops;
	ep->ep.msg = &kr_ofi_msg_ops;
	ep->ep.tagged = &kr_ofi_tagged_ops;
	ep->ep.rma = &kr_ofi_rma_ops;
	ep->ep.atomic = &kr_ofi_atomic_ops;
	*out = &ep->ep;
	return 0;
}
