/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receiver side of a port: kr_bind() takes a receive endpoint from the
 * keeper (an SRQ and CQ in the tenant zone, a DCT made for the binding,
 * keeper_port.c); kr_post_recv() writes receive WQEs into that SRQ and
 * kr_poll_recv() reaps its CQ, both in this process: the keeper is not on
 * the path.
 *
 * A message lands in the user's buffer alone; its immediate (krcore's,
 * virtqp.h) names the sender's slot and sequence, so a completion names its
 * sender and a stray message (no holder in that slot) is put back instead of
 * delivered. A message that carries the user's own imm has a 16-byte
 * trailer after it in the buffer, read out here.
 *
 * Senders and credits (virtqp.h, virtqp_send.c): senders claim slots of the
 * table with remote atomics; the table's change counter tells this side to
 * look. An admitted sender gets up to window credits, each backed by a
 * posted buffer no other sender was promised: posted >= promised always,
 * so no message ever finds the SRQ empty. A sender that lets its slot go is
 * reclaimed once the CQ has been drained after the release was seen (its
 * messages' CQEs were written before its release).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/kr_log.h"
#include "job/virtqp/virtqp.h"

#define PORT_DEFAULT_SENDERS 16u
#define PORT_DEFAULT_WINDOW  16u
#define PORT_MAX_SENDERS     1024u
#define PORT_POLL_BATCH	     16

/* ---- the endpoint's queues, from its descriptor ---- */

static bool ep_desc_ok(const struct kr_ctx *ctx, const struct kr_zone_ep *d)
{
	uint64_t srq_len = (uint64_t)d->srq_nwqe << d->srq_log_stride;
	uint64_t cq_len = (uint64_t)d->ncqe * sizeof(struct mlx5_cqe64);
	uint64_t zl = ctx->zone_len;

	return d->srq_nwqe && !(d->srq_nwqe & (d->srq_nwqe - 1)) &&
	       d->srq_nwqe <= KR_PORT_MAX_RECV && d->srq_log_stride >= 5 &&
	       d->srq_log_stride <= 15 && d->ncqe >= d->srq_nwqe && !(d->ncqe & (d->ncqe - 1)) &&
	       d->srq_off <= zl && srq_len <= zl - d->srq_off && d->srq_dbrec_off <= zl - 4 &&
	       d->cqe_off <= zl && cq_len <= zl - d->cqe_off && d->cq_dbrec_off <= zl - 8 &&
	       d->user_index && d->user_index < (1u << 24);
}

static int port_views(struct kr_port *p, const struct kr_zone_ep *d)
{
	struct kr_ctx *ctx = p->ctx;
	uint8_t *z = (uint8_t *)ctx->zone;
	int rc;

	if (!ep_desc_ok(ctx, d))
		return -EPROTO;
	p->cq.ctx = ctx->dev;
	p->cq.cqn = d->cqn;
	p->cq.cqes = (struct mlx5_cqe64 *)(z + d->cqe_off);
	p->cq.ncqe = d->ncqe;
	p->cq.log_ncqe = (uint32_t)__builtin_ctz(d->ncqe);
	p->cq.cons_index = 0; /* rebuilt on zeroed memory before every binding */
	p->cq.dbrec = (volatile uint32_t *)(z + d->cq_dbrec_off);

	p->srq.ctx = ctx->dev;
	p->srq.srqn = d->srqn;
	p->srq.wq_buf = z + d->srq_off;
	p->srq.nwqe = d->srq_nwqe;
	p->srq.log_stride = d->srq_log_stride;
	p->srq.dbrec = (volatile uint32_t *)(z + d->srq_dbrec_off);
	p->srq.wrid = calloc(d->srq_nwqe, sizeof(*p->srq.wrid));
	p->rx = calloc(d->srq_nwqe, sizeof(*p->rx));
	if (!p->srq.wrid || !p->rx)
		return -ENOMEM;

	p->dct.ctx = ctx->dev;
	p->dct.dctn = d->dctn;
	p->dct.user_index = d->user_index;
	p->dct.srq = &p->srq;
	p->dct.cq = &p->cq;
	rc = kr_devx_rsc_set(ctx->dev, d->user_index, KR_DEVX_RSC_DCT, &p->dct);
	if (rc)
		return rc;
	p->rsc_set = true;
	return 0;
}

static void port_free(struct kr_port *p)
{
	if (p->rsc_set)
		kr_devx_rsc_free(p->ctx->dev, p->dct.user_index);
	kr_job_krmin_unmap_ep(p->ctx, p->krmin_map, p->krmin_len);
	if (p->table_mr)
		kr_dereg_mr(p->table_mr);
	kr_free(p->ctx, p->table);
	free(p->srq.wrid);
	free(p->rx);
	free(p->snd);
	free(p->active);
	free(p->want);
	free(p);
}

static int port_call(struct kr_port *p, uint16_t type, struct kr_msg_reply *rep)
{
	struct kr_msg_bind req = {.port = p->port};

	if (type == KR_MSG_BIND) {
		struct kr_mr_key key;

		kr_mr_key(p->table_mr, &key);
		req.nslots = p->nslots;
		req.table_va = (uintptr_t)p->table;
		req.table_rkey = key.rkey;
	} else {
		req.index = p->index;
		req.gen = p->gen;
	}
	return kr_job_port_call(p->ctx, type, &req, rep);
}

struct kr_port *kr_bind(struct kr_ctx *ctx, uint32_t port, const struct kr_bind_opts *opts)
{
	struct kr_msg_reply rep;
	struct kr_zone_ep d;
	struct kr_port *p;
	size_t table_len;
	int rc;

	if (!ctx || ctx->observer || !port || port > 0xffff ||
	    (opts && (opts->flags || opts->senders > PORT_MAX_SENDERS ||
		      opts->window > KR_PORT_MAX_RECV))) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->ctx = ctx;
	p->port = port;
	p->nslots = opts && opts->senders ? opts->senders : PORT_DEFAULT_SENDERS;
	p->window = opts && opts->window ? opts->window : PORT_DEFAULT_WINDOW;
	table_len = sizeof(struct kr_port_table) + (size_t)p->nslots * sizeof(struct kr_port_slot);
	p->snd = calloc(p->nslots, sizeof(*p->snd));
	p->active = calloc(p->nslots, sizeof(*p->active));
	/* a power of two past nslots: the queue's index is a mask */
	p->want_mask = (1u << (32 - __builtin_clz(p->nslots | 1))) - 1;
	p->want = calloc((size_t)p->want_mask + 1, sizeof(*p->want));
	p->table = kr_malloc(ctx, table_len);
	rc = -ENOMEM;
	if (!p->snd || !p->active || !p->want || !p->table)
		goto err_free;
	memset(p->table, 0, table_len);
	p->table_mr = kr_reg_mr(ctx, p->table, table_len,
				KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_ATOMIC);
	if (!p->table_mr) {
		rc = -errno;
		goto err_free;
	}
	rc = port_call(p, KR_MSG_BIND, &rep);
	if (rc)
		goto err_free;
	p->index = rep.index;
	p->gen = rep.gen;
	rc = kr_job_ep_read(ctx, p->index, &d);
	if (!rc &&
	    (d.port != port || d.gen != p->gen || d.dctn != rep.qpn || d.owner_job != ctx->job + 1))
		rc = -EPROTO;
	if (!rc && ctx->krmin_fd >= 0) /* fenced: its pages come through kmod-min */
		rc = rep.token
			 ? kr_job_krmin_map_ep(ctx, rep.token, &d, &p->krmin_map, &p->krmin_len)
			 : -EPROTO;
	if (!rc)
		rc = port_views(p, &d);
	if (rc)
		goto err_unbind;
	return p;

err_unbind:
	port_call(p, KR_MSG_UNBIND, &rep);
err_free:
	port_free(p);
	errno = -rc;
	return NULL;
}

int kr_unbind(struct kr_port *p)
{
	struct kr_msg_reply rep;
	int rc;

	if (!p)
		return -EINVAL;
	rc = port_call(p, KR_MSG_UNBIND, &rep);
	port_free(p);
	return rc == -EPIPE ? -ENOTCONN : rc;
}

/* ---- receive buffers ---- */

static int port_post(struct kr_port *p, void *buf, uint32_t len, uint64_t wr_id)
{
	uint32_t i = p->srq.pi & (p->srq.nwqe - 1);
	struct kr_devx_sge sge = {
	    .addr = (uintptr_t)buf, .length = len, .lkey = kr_job_heap_lkey(p->ctx)};
	int rc;

	p->rx[i] = (struct port_rx){.wr_id = wr_id, .buf = buf, .len = len};
	rc = kr_devx_srq_post_recv(&p->srq, &sge, 1, i);
	if (rc)
		return rc;
	p->posted++;
	if (p->want_len || p->posted >= p->grant_next)
		p->grant_due = true;
	return 0;
}

int kr_post_recv(struct kr_port *p, void *buf, uint32_t len, uint64_t wr_id)
{
	if (!p || !buf || !len || len > KR_POST_MAX_LEN || !kr_job_in_heap(p->ctx, buf, len))
		return -EINVAL;
	if (p->ctx->dead)
		return -ENOTCONN;
	return port_post(p, buf, len, wr_id);
}

/* ---- senders: admission, release, credits ---- */

/* Sender s (slot i) may lack credits: onto the want queue, once (port_grant takes it off). */
static inline void port_want_snd(struct kr_port *p, struct port_snd *s, uint32_t i)
{
	if (s->queued)
		return;
	s->queued = 1;
	p->want[(p->want_head + p->want_len++) & p->want_mask] = i;
}

static inline void port_want(struct kr_port *p, uint32_t i)
{
	port_want_snd(p, &p->snd[i], i);
}

static inline uint32_t port_want_pop(struct kr_port *p)
{
	uint32_t i = p->want[p->want_head++ & p->want_mask];

	p->want_len--;
	p->snd[i].queued = 0;
	return i;
}

/* The senders changed: the next grant pass takes the share anew and queues them all. */
static inline void port_share_changed(struct kr_port *p)
{
	p->grant_cap = 0;
	p->grant_next = 0;
}

/* Read the owner words: admit new holders, mark released ones GONE. */
static void port_scan(struct kr_port *p)
{
	for (uint32_t i = 0; i < p->nslots; i++) {
		struct port_snd *s = &p->snd[i];
		uint64_t owner = __atomic_load_n(&p->table->slot[i].owner, __ATOMIC_ACQUIRE);

		if (s->state == SND_ACTIVE && owner != s->owner) {
			s->state = SND_GONE;
			p->gone++;
		} else if (s->state == SND_FREE && owner) {
			/* (a slot its last holder left on the want queue stays there once) */
			*s = (struct port_snd){.owner = owner,
					       .nonce = (uint32_t)(owner >> 32),
					       .state = SND_ACTIVE,
					       .queued = s->queued};
			__atomic_store_n(&p->table->slot[i].granted, (uint64_t)s->nonce << 32,
					 __ATOMIC_RELEASE);
			p->active[p->nactive++] = i;
			port_want(p, i);
			port_share_changed(p);
			p->grant_due = true;
		}
	}
}

/* The CQ was drained after the releases were seen: their credits come home. */
static void port_reap_gone(struct kr_port *p)
{
	uint32_t j = 0;

	for (uint32_t k = 0; k < p->nactive; k++) {
		struct port_snd *s = &p->snd[p->active[k]];

		if (s->state != SND_GONE) {
			p->active[j++] = p->active[k];
			continue;
		}
		p->promised -= s->granted - s->recv;
		s->state = SND_FREE;
	}
	p->nactive = j;
	p->gone = 0;
	port_share_changed(p);
	p->rescan = true; /* a slot let go may already have a new holder */
	p->grant_due = true;
}

/*
 * The share grew past the largest since the senders changed (more buffers
 * posted, fewer senders): every admitted sender may take more.
 */
static void port_share_grows(struct kr_port *p)
{
	uint32_t cap = p->nactive ? p->posted / p->nactive : 0;

	cap = cap < 1 ? 1 : cap > p->window ? p->window : cap;
	if (cap > p->grant_cap) {
		for (uint32_t k = 0; k < p->nactive; k++)
			port_want(p, p->active[k]);
		p->grant_cap = cap;
	}
	p->grant_next = cap >= p->window ? UINT32_MAX : (cap + 1) * p->nactive;
}

/*
 * Give admitted senders credits up to their window and their share of the
 * posted buffers (the largest share since the senders changed: a repost
 * that lifts the share back after a completion lowered it changes nothing),
 * from buffers nobody was promised: a sender that holds credits and does
 * not send (stopped, failed) keeps no more than that share. Only the
 * senders on the want queue are looked at (admitted, or a message of theirs
 * came since), in queue order; one a short supply left short goes to the
 * back, so the supply is shared. A pass costs what the messages since the
 * last one cost, not the number of senders.
 */
static void port_grant(struct kr_port *p)
{
	uint32_t avail = p->posted > p->promised ? p->posted - p->promised : 0;

	p->grant_due = false;
	if (!avail)
		return; /* nothing to give: the queue waits for buffers */
	if (p->posted >= p->grant_next)
		port_share_grows(p);
	while (avail && p->want_len) {
		uint32_t i = p->want[p->want_head & p->want_mask];
		struct port_snd *s = &p->snd[i];
		uint32_t ahead = s->granted - s->recv, give;

		p->grant_looks++;
		if (s->state != SND_ACTIVE || ahead >= p->grant_cap) {
			port_want_pop(p);
			continue;
		}
		give = p->grant_cap - ahead < avail ? p->grant_cap - ahead : avail;
		s->granted += give;
		p->promised += give;
		avail -= give;
		__atomic_store_n(&p->table->slot[i].granted, (uint64_t)s->nonce << 32 | s->granted,
				 __ATOMIC_RELEASE);
		if (ahead + give < p->grant_cap) {
			/* short (the supply ran out): after the others, if any */
			if (p->want_len > 1)
				port_want(p, port_want_pop(p));
			break;
		}
		port_want_pop(p);
	}
}

/* ---- completions ---- */

/* The sender krcore's immediate names, or NULL: no immediate, or no holder in that slot. */
static struct port_snd *port_sender_of(struct kr_port *p, const struct kr_devx_wc *dwc)
{
	uint32_t slot = (dwc->imm & ~KR_MSG_IMM_TAIL) >> KR_MSG_SEQ_BITS;

	if (!dwc->has_imm || slot >= p->nslots || p->snd[slot].state == SND_FREE)
		return NULL;
	return &p->snd[slot];
}

/*
 * A message with the user's imm: its trailer is the last KR_SEND_HDR_LEN
 * bytes of what landed, in the user's buffer. false when it does not name
 * the slot's holder (a message of no sender of ours).
 */
static bool port_tail(const struct port_rx *rx, uint32_t byte_len, const struct port_snd *s,
		      struct kr_msg_tail *t)
{
	if (byte_len < KR_SEND_HDR_LEN || byte_len > rx->len)
		return false;
	memcpy(t, (const uint8_t *)rx->buf + byte_len - KR_SEND_HDR_LEN, sizeof(*t));
	return t->nonce == s->nonce;
}

/* One receive CQE into wc; false when it was a stray (its buffer is posted again). */
static bool port_complete(struct kr_port *p, const struct kr_devx_wc *dwc, struct kr_wc *wc)
{
	uint32_t i = (uint32_t)dwc->wr_id & (p->srq.nwqe - 1);
	struct port_rx rx = p->rx[i];
	struct port_snd *s = port_sender_of(p, dwc);
	bool tail = s && (dwc->imm & KR_MSG_IMM_TAIL);
	struct kr_msg_tail t = {0};
	uint32_t len = dwc->byte_len;

	p->posted--;
	if (dwc->status == KR_WC_SUCCESS &&
	    (!s || (tail && !port_tail(&rx, dwc->byte_len, s, &t)))) {
		p->strays++;
		port_post(p, rx.buf, rx.len, rx.wr_id);
		return false;
	}
	if (s) {
		if ((dwc->imm & KR_MSG_SEQ_MASK) != (s->recv & KR_MSG_SEQ_MASK))
			p->misordered++;
		s->recv++;
		p->promised--;
		port_want_snd(p, s, (uint32_t)(s - p->snd));
		p->grant_due = true;
	}
	/* an error CQE names no sender (no imm): its credit stays promised until that sender goes
	 */
	if (dwc->status != KR_WC_SUCCESS)
		len = 0;
	else if (tail)
		len -= KR_SEND_HDR_LEN;
	*wc = (struct kr_wc){.wr_id = rx.wr_id,
			     .status = (uint32_t)dwc->status,
			     .opcode = KR_WC_OP_RECV,
			     .byte_len = len,
			     .imm = t.imm,
			     .flags = tail ? KR_WC_F_IMM : 0,
			     .src = s ? (uint32_t)(s - p->snd) : UINT32_MAX};
	return true;
}

int kr_poll_recv(struct kr_port *p, struct kr_wc *wc, int n)
{
	struct kr_devx_wc dwc[PORT_POLL_BATCH];
	uint64_t changes;
	bool drained = false;
	int got = 0, m;

	if (!p || !wc || n < 0)
		return -EINVAL;
	changes = __atomic_load_n(&p->table->changes, __ATOMIC_ACQUIRE);
	if (changes != p->changes_seen || p->rescan) {
		p->changes_seen = changes;
		p->rescan = false;
		port_scan(p);
	}
	while (got < n) {
		int want = n - got < PORT_POLL_BATCH ? n - got : PORT_POLL_BATCH;

		m = kr_devx_cq_poll(&p->cq, dwc, want);
		if (m < 0)
			return got ? got : m;
		for (int k = 0; k < m; k++)
			if (port_complete(p, &dwc[k], &wc[got]))
				got++;
		if (m < want) {
			drained = true;
			break;
		}
	}
	if (drained && p->gone)
		port_reap_gone(p);
	if (p->grant_due)
		port_grant(p);
	if (!got && kr_job_keeper_gone_fast(p->ctx))
		return -ENOTCONN;
	return got;
}

int kr_port_sender(const struct kr_port *p, uint32_t src, struct kr_port_sender *out)
{
	const struct port_snd *s;

	if (!p || !out || src >= p->nslots)
		return -EINVAL;
	s = &p->snd[src];
	if (s->state != SND_ACTIVE)
		return -ENOENT;
	out->node = (uint32_t)(s->owner >> 16) & 0xffff;
	out->reply_port = (uint32_t)s->owner & 0xffff;
	return 0;
}
