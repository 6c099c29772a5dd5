/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asking the keeper for a paired RC slot without waiting (DC->RC
 * promotion, virtqp_promote.c, runs inside kr_poll). The request is one
 * message; the keeper answers in the job slot (kr_pool_pair_ans, written
 * fields first and the request's seq last), which the asking thread reads at
 * its later polls with no call. So no poll waits on the keeper: it sends at
 * most one message and otherwise loads one word.
 *
 * An ask holds entry a of pair_ans until its answer is taken; an ask its
 * vQP gave up on (disconnected while asking) is waited for, bounded, and
 * the slot it got given back (kr_job_rc_forget), so none is left leased.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/kr_clock.h"
#include "job/job.h"

#define KR_PAIR_WAIT_MS 5000u /* the keeper answers from its event loop */

static int lock_ctx(struct kr_ctx *ctx, bool wait)
{
	if (wait) {
		pthread_mutex_lock(&ctx->lock);
		return 0;
	}
	return pthread_mutex_trylock(&ctx->lock) ? -EAGAIN : 0;
}

/* kr_job_rc_ask() - see job.h. */
int kr_job_rc_ask(struct kr_ctx *ctx, uint32_t node, const struct kr_devx_dc_av *av, bool wait,
		  uint32_t *ask)
{
	struct kr_msg_pair req = {.node = node};
	uint32_t a;
	int rc;

	if (!ctx || !av || !ask || ctx->observer)
		return -EINVAL;
	req.dctn = av->dctn;
	memcpy(req.addr.gid, av->rgid, sizeof(req.addr.gid));
	memcpy(req.addr.mac, av->rmac, sizeof(req.addr.mac));
	req.addr.lid = av->grh ? av->rlid : 0; /* RoCE: rlid is the UDP source port */
	rc = lock_ctx(ctx, wait);
	if (rc)
		return rc;
	for (a = 0; a < KR_JOB_PAIR_ASKS && (ctx->pair_out & (1u << a)); a++)
		;
	if (ctx->dead) {
		rc = -ENOTCONN;
	} else if (a == KR_JOB_PAIR_ASKS) {
		rc = -EBUSY;
	} else {
		req.ans = a;
		kr_msg_init(&req.hdr, KR_MSG_PAIR, sizeof(req), ++ctx->seq);
		rc = kr_job_lost(ctx, kr_msg_send(ctx->sock, &req, sizeof(req), NULL, 0));
	}
	if (!rc) {
		ctx->pair_seq[a] = req.hdr.seq;
		ctx->pair_out |= 1u << a;
		*ask = a;
	}
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/* kr_job_rc_take() - see job.h. */
int kr_job_rc_take(struct kr_ctx *ctx, uint32_t ask, bool wait, struct kr_lease *lease)
{
	const struct kr_pool_pair_ans *ans;
	struct kr_pool_pair_ans got;
	int rc;

	if (!ctx || !lease || ask >= KR_JOB_PAIR_ASKS)
		return -EINVAL;
	ans = &kr_seg_job(ctx->seg, ctx->job)->pair_ans[ask];
	/* no lock for the look: pair_seq[ask] changes only once this ask is taken */
	if (__atomic_load_n(&ans->seq, __ATOMIC_ACQUIRE) != ctx->pair_seq[ask])
		return __atomic_load_n(&ctx->dead, __ATOMIC_RELAXED) ? -ENOTCONN : -EINPROGRESS;
	if (lock_ctx(ctx, wait))
		return -EINPROGRESS;
	if (!(ctx->pair_out & (1u << ask))) {
		pthread_mutex_unlock(&ctx->lock);
		return -EINVAL; /* not an ask out */
	}
	got = *ans;
	ctx->pair_out &= ~(1u << ask);
	rc = got.status;
	if (rc > 0 || rc < -4095)
		rc = -EPROTO;
	if (!rc) {
		*lease = (struct kr_lease){
		    .kind = KR_LEASE_RC, .index = got.index, .gen = got.gen, .qpn = got.qpn};
		rc = kr_job_rc_view_locked(ctx, lease, got.token);
	}
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/* Wait for ask's answer, up to KR_PAIR_WAIT_MS: kr_job_rc_take's result, or -ETIMEDOUT. */
static int rc_wait(struct kr_ctx *ctx, uint32_t ask, struct kr_lease *lease)
{
	uint64_t until = kr_now_ns() + KR_PAIR_WAIT_MS * 1000000ull;
	int rc;

	while ((rc = kr_job_rc_take(ctx, ask, true, lease)) == -EINPROGRESS) {
		if (kr_job_keeper_gone_fast(ctx))
			return -ENOTCONN;
		if (kr_now_ns() > until)
			return -ETIMEDOUT;
		usleep(50);
	}
	return rc;
}

/* kr_job_rc_forget() - see job.h. */
void kr_job_rc_forget(struct kr_ctx *ctx, uint32_t ask)
{
	struct kr_lease lease;

	/* no answer in time: the entry stays taken; the keeper reclaims at detach */
	if (rc_wait(ctx, ask, &lease) == 0)
		kr_lease_free(ctx, &lease);
}

/* kr_job_rc_pair() - see job.h. */
int kr_job_rc_pair(struct kr_ctx *ctx, uint32_t node, const struct kr_devx_dc_av *av,
		   struct kr_lease *lease)
{
	uint32_t ask;
	int rc;

	if (!lease)
		return -EINVAL;
	rc = kr_job_rc_ask(ctx, node, av, true, &ask);
	return rc ? rc : rc_wait(ctx, ask, lease);
}
