/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sender side of a port: a vQP aimed at the port's receive endpoint
 * holds a slot in the receiver's sender table (virtqp.h), sends messages
 * as SENDs with krcore's immediate (slot and sequence; the user's own imm
 * in a trailer), and spends credits the receiver grants.
 *
 * Credits are pulled, not pushed: the receiver only stores the count it
 * grants a slot in its own memory, and the sender reads it with one 8-byte
 * READ on the same vQP when half of what it last saw is used (or when it ran
 * out: then no sooner than a back-off, 1 to 64 us, after a READ that brought
 * nothing). So a receiver needs no connection back to its senders, a dead
 * sender costs it nothing but its slot, and a credit is never spent twice:
 * the sender counts its sends, the receiver its grants, both from 0 for each
 * slot holder (the nonce in the granted word tells holders apart).
 *
 * Every internal request (claim, announce, credit READ, release) is posted
 * like the user's, signaled, and completes here instead of in kr_poll().
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "job/job.h"
#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "job/virtqp/virtqp.h"

#define SEND_WAIT_NS	      (5ull * 1000 * 1000 * 1000) /* a claim or release never waits longer */
#define CREDIT_BACKOFF_MIN_NS 1000ull
#define CREDIT_BACKOFF_MAX_NS (64ull * 1000)

static uint64_t slot_va(const struct kr_vq_send *s, uint32_t slot)
{
	return s->table_va + sizeof(struct kr_port_table) +
	       (uint64_t)slot * sizeof(struct kr_port_slot);
}

/* Post one internal request (an 8-byte atomic or READ on the receiver's table). */
static int send_internal(struct kr_vqp *v, enum kr_vq_internal what, enum kr_devx_wr_opcode op,
			 uint64_t *local, uint64_t raddr, uint64_t compare_add, uint64_t swap)
{
	struct kr_vq_send *s = v->snd;
	struct kr_vq_req r = {.op = op,
			      .wc_op = KR_VQ_OP_INTERNAL,
			      .local = local,
			      .len = 8,
			      .raddr = raddr,
			      .rkey = s->rkey,
			      .compare_add = compare_add,
			      .swap = swap,
			      .wr_id = what};
	int rc = kr_vq_post_req(v, &r);

	if (!rc)
		s->pending++;
	return rc;
}

/* Progress until no internal request is in flight (bounded). 0, the failure, or -ETIMEDOUT. */
static int send_wait(struct kr_vqp *v)
{
	struct kr_vq_send *s = v->snd;
	uint64_t end = kr_now_ns() + SEND_WAIT_NS;
	uint32_t spins = 0;
	int rc;

	while (s->pending) {
		rc = kr_vq_dci_progress(v->dci);
		if (rc)
			return rc;
		if (!s->pending)
			break;
		if (++spins % 64 == 0) {
			if (kr_job_keeper_gone_fast(v->dci->ctx))
				return -ENOTCONN;
			if (kr_now_ns() > end)
				return -ETIMEDOUT;
			sched_yield();
		}
	}
	return s->failed;
}

void kr_vq_send_internal(struct kr_vqp *v, const struct kr_vq_ent *e, int status)
{
	struct kr_vq_send *s = v->snd;
	uint64_t g;

	if (!s)
		return;
	if (s->pending)
		s->pending--;
	if (status != KR_WC_SUCCESS) {
		s->failed = -kr_wc_status_errno(status);
		if (e->wc.wr_id == KR_VQ_CREDIT)
			s->reading = false;
		return;
	}
	switch (e->wc.wr_id) {
	case KR_VQ_CREDIT:
		s->reading = false;
		g = __atomic_load_n(&s->scratch[2], __ATOMIC_RELAXED);
		/* another holder's count (the receiver has not admitted us yet) means none */
		if ((uint32_t)(g >> 32) == s->nonce && (uint32_t)g - s->granted < (1u << 31) &&
		    (uint32_t)g != s->granted) {
			s->granted = (uint32_t)g;
			if (s->granted - s->sent > s->best)
				s->best = s->granted - s->sent;
			s->backoff_ns = 0;
		} else {
			s->backoff_ns = s->backoff_ns ? s->backoff_ns * 2 : CREDIT_BACKOFF_MIN_NS;
			if (s->backoff_ns > CREDIT_BACKOFF_MAX_NS)
				s->backoff_ns = CREDIT_BACKOFF_MAX_NS;
			s->next_read_ns = kr_now_ns() + s->backoff_ns;
		}
		break;
	case KR_VQ_CLAIM:
		s->claimed = __atomic_load_n(&s->scratch[0], __ATOMIC_RELAXED) == 0;
		break;
	default: /* KR_VQ_ANNOUNCE, KR_VQ_RELEASE */
		break;
	}
}

/* Pull credits when half of the best window is used; when out, after the back-off. */
static void send_pull(struct kr_vqp *v)
{
	struct kr_vq_send *s = v->snd;
	uint32_t left = s->granted - s->sent;

	if (s->reading || left > s->best / 2)
		return;
	if (!left && s->backoff_ns && kr_now_ns() < s->next_read_ns)
		return;
	if (!send_internal(v, KR_VQ_CREDIT, KR_WR_RDMA_READ, &s->scratch[2],
			   slot_va(s, s->slot) + 8, 0, 0))
		s->reading = true;
}

static int send_post(struct kr_vqp *v, const void *local, uint32_t len, uint32_t imm, bool has_imm,
		     uint64_t wr_id, uint32_t flags)
{
	struct kr_msg_tail *tail = NULL;
	struct kr_vq_send *s;
	int rc;

	if (!v || !local || !len || len > KR_POST_MAX_LEN)
		return -EINVAL;
	s = v->snd;
	if (!s)
		return -EDESTADDRREQ;
	if (s->granted == s->sent) {
		if (v->state == KR_VQP_RTS)
			send_pull(v);
		kr_vq_dci_progress(v->dci); /* a pull that already came back counts now */
		if (s->granted == s->sent)
			return v->state == KR_VQP_RTS ? -EAGAIN : -EIO;
	}
	if (has_imm) { /* the user's imm rides in a trailer */
		tail = &s->tails[s->sent % s->ntails];
		*tail = (struct kr_msg_tail){.nonce = s->nonce, .seq = s->sent, .imm = imm};
	}
	rc = kr_vq_post_msg(v, local, len, kr_msg_imm(s->slot, s->sent, has_imm), tail, wr_id,
			    flags);
	if (rc)
		return rc;
	s->sent++;
	send_pull(v);
	return 0;
}

int kr_post_send(struct kr_vqp *vqp, const void *local, uint32_t len, uint64_t wr_id,
		 uint32_t flags)
{
	return send_post(vqp, local, len, 0, false, wr_id, flags);
}

int kr_post_send_imm(struct kr_vqp *vqp, const void *local, uint32_t len, uint32_t imm,
		     uint64_t wr_id, uint32_t flags)
{
	return send_post(vqp, local, len, imm, true, wr_id, flags);
}

/* Claim a free slot of the table, starting at a random one. 0, -EUSERS, or an error. */
static int send_claim(struct kr_vqp *v, uint32_t nslots)
{
	struct kr_vq_send *s = v->snd;
	int rc;

	for (uint32_t k = 0; k < nslots; k++) {
		uint32_t i = (s->nonce + k) % nslots;

		rc = send_internal(v, KR_VQ_CLAIM, KR_WR_ATOMIC_CS, &s->scratch[0], slot_va(s, i),
				   0, s->cookie);
		if (!rc)
			rc = send_wait(v);
		if (rc)
			return rc;
		if (s->claimed) {
			s->slot = i;
			rc = send_internal(v, KR_VQ_ANNOUNCE, KR_WR_ATOMIC_FA, &s->scratch[1],
					   s->table_va, 1, 0);
			return rc ? rc : send_wait(v);
		}
	}
	return -EUSERS;
}

/* kr_vq_send_free() - see virtqp.h. */
void kr_vq_send_free(struct kr_ctx *ctx, struct kr_vq_send *s, bool quiet)
{
	if (quiet) {
		kr_free(ctx, s->scratch);
		kr_free(ctx, s->tails);
	}
	free(s);
}

/*
 * Where port of node lives: its DC target's address vector, and in ep the
 * binder's table (table_va, table_rkey, nslots). This node's ports come from
 * the zone; another node's from one READ of its MetaServer row. 0 or -errno.
 */
static int send_port_av(struct kr_ctx *ctx, uint32_t node, uint32_t self, uint32_t port,
			struct kr_zone_ep *ep, struct kr_devx_dc_av *av)
{
	struct kr_dct_port_rec prec;
	struct kr_dct_rec rec;
	uint32_t index;
	int rc;

	if (node == self) {
		rc = kr_job_port_find(ctx, port, ep, &index);
		if (!rc && (!ep->nslots || ep->nslots > 1024 || (ep->table_va & 7u)))
			rc = -EPROTO;
		if (!rc)
			rc = kr_job_tenant_av(ctx, av);
		if (rc)
			return rc;
		av->dctn = ep->dctn;
		av->dc_key = kr_port_dc_key(ctx->launch.dc_key, port, ep->gen);
		kr_devx_dc_av_path(av, &ctx->zone->port, &ctx->zone->port.addr, ep->dctn, ep->dctn);
		return 0;
	}
	rc = kr_dct_resolve_port(ctx, node, port, &rec, &prec);
	if (rc)
		return rc;
	memset(ep, 0, sizeof(*ep));
	ep->port = port;
	ep->dctn = prec.dctn;
	ep->nslots = prec.nslots;
	ep->table_va = prec.table_va;
	ep->table_rkey = prec.table_rkey;
	memset(av, 0, sizeof(*av));
	av->dctn = prec.dctn;
	av->dc_key = kr_port_dc_key(ctx->launch.dc_key, port, prec.gen); /* this binding's */
	kr_devx_dc_av_path(av, &ctx->zone->port, &rec.addr, ctx->zone->dctn, prec.dctn);
	return 0;
}

struct kr_vqp *kr_vq_connect_port(struct kr_ctx *ctx, uint32_t peer,
				  const struct kr_connect_opts *opts)
{
	struct kr_connect_opts o = *opts;
	struct kr_devx_dc_av av;
	struct kr_dct_rec self;
	struct kr_zone_ep ep;
	struct kr_vq_send *s;
	struct kr_vqp *v;
	int rc;

	rc = kr_dct_resolve(ctx, KR_NODE_SELF, &self);
	if (rc)
		goto err;
	rc = send_port_av(ctx, peer == KR_NODE_SELF ? self.node_id : peer, self.node_id, opts->port,
			  &ep, &av);
	if (rc)
		goto err;
	o.port = o.reply_port = 0;
	v = kr_vq_connect_av(ctx, peer, &av, &o);
	if (!v)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		kr_disconnect(v);
		errno = ENOMEM;
		return NULL;
	}
	v->snd = s;
	s->port = opts->port;
	s->table_va = ep.table_va;
	s->rkey = ep.table_rkey;
	s->ntails = v->credits;
	s->scratch = kr_malloc(ctx, 3 * sizeof(uint64_t));
	s->tails = kr_malloc(ctx, (size_t)s->ntails * sizeof(*s->tails));
	while (!s->nonce)
		if (getrandom(&s->nonce, sizeof(s->nonce), 0) != sizeof(s->nonce))
			s->nonce = (uint32_t)kr_now_ns();
	s->cookie = kr_port_cookie(s->nonce, self.node_id, opts->reply_port);
	rc = s->scratch && s->tails ? send_claim(v, ep.nslots) : -ENOMEM;
	if (rc) {
		v->snd = NULL; /* nothing to let go: no slot; its requests are waited for */
		kr_vq_send_free(ctx, s, kr_disconnect(v) == 0);
		errno = -rc;
		return NULL;
	}
	return v;

err:
	errno = -rc;
	return NULL;
}

/* A failed vQP's DCI is replaced before anything more is posted: wait for it (bounded). */
static int send_recovered(struct kr_vqp *v)
{
	struct kr_vq_dci *d = v->dci;
	uint64_t end = kr_now_ns() + SEND_WAIT_NS;
	int rc;

	while (d->broken || !d->leased) {
		rc = kr_vq_dci_progress(d);
		if (rc)
			return rc;
		if (kr_now_ns() > end)
			return -ETIMEDOUT;
		sched_yield();
	}
	return 0;
}

struct kr_vq_send *kr_vq_send_close(struct kr_vqp *v)
{
	struct kr_vq_send *s = v->snd;
	struct kr_ctx *ctx = v->dci->ctx;

	/* after our SENDs on the same vQP: the receiver sees them all before the release */
	if (s->claimed && !ctx->dead && !send_recovered(v)) {
		s->failed = 0;
		if (!send_internal(v, KR_VQ_RELEASE, KR_WR_ATOMIC_CS, &s->scratch[0],
				   slot_va(s, s->slot), s->cookie, 0) &&
		    !send_wait(v) &&
		    !send_internal(v, KR_VQ_ANNOUNCE, KR_WR_ATOMIC_FA, &s->scratch[1], s->table_va,
				   1, 0))
			send_wait(v);
	}
	v->snd = NULL;
	if (s->pending) /* gave up waiting: kr_disconnect waits for them once more */
		KR_WARN_RATELIMITED("virtqp",
				    "vqp %u: port %u slot %u let go with %u requests in flight",
				    v->id, s->port, s->slot, s->pending);
	return s;
}
