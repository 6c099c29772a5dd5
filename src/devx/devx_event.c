/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion events: a CQ armed once raises one event at its next CQE, which
 * the kernel turns into a write to the eventfd the caller subscribed (DEVX
 * event channel, event number 0, as DPDK's mlx5 receive interrupts). A loop
 * that sleeps in epoll then learns of a message at its DC target at once,
 * not at its next timer tick.
 *
 * Arming, as libmlx5's mlx5_arm_cq: the arm word (2-bit sequence number,
 * command "any next CQE", 24-bit consumer index) goes to the doorbell
 * record's second word, then with the CQN to the UAR page's CQ doorbell
 * register. The sequence number moves on with each event taken, so the
 * device tells a new arm from a late copy of the old one.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"

#define KR_CQ_ARM_DB	   1u	  /* dbrec word of the arm */
#define KR_CQ_DB_REQ_NOT   0u	  /* an event at any next CQE (not only solicited) */
#define KR_EVENT_TYPE_COMP 0x0u /* completion event number */

/* kr_devx_event_ch_open() - see devx.h. */
int kr_devx_event_ch_open(struct kr_devx_ctx *ctx, struct kr_devx_event_ch **chp)
{
	struct kr_devx_event_ch *ch;
	int rc;

	if (!ctx || !chp)
		return -EINVAL;
	if (!ctx->ops->event_ch_open)
		return -EOPNOTSUPP;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->ctx = ctx;
	rc = ctx->ops->event_ch_open(ctx, &ch->priv);
	if (rc) {
		free(ch);
		return rc;
	}
	*chp = ch;
	return 0;
}

/* kr_devx_event_ch_close() - see devx.h. */
void kr_devx_event_ch_close(struct kr_devx_event_ch *ch)
{
	if (!ch)
		return;
	ch->ctx->ops->event_ch_close(ch->ctx, ch->priv);
	free(ch);
}

/* kr_devx_cq_notify() - see devx.h. */
int kr_devx_cq_notify(struct kr_devx_event_ch *ch, struct kr_devx_cq *cq, int efd)
{
	if (!ch || !cq || !cq->obj || cq->ctx != ch->ctx || efd < 0)
		return -EINVAL;
	return ch->ctx->ops->event_subscribe_fd(ch->ctx, ch->priv, cq->obj, KR_EVENT_TYPE_COMP,
						efd);
}

/* kr_devx_cq_arm() - see devx.h. */
int kr_devx_cq_arm(struct kr_devx_cq *cq)
{
	uint32_t word, db[2];
	uint64_t val;

	if (!cq || !cq->ctx || !cq->uar)
		return -EINVAL;
	if (!cq->ctx->ops->cq_doorbell)
		return -EOPNOTSUPP;
	word = (cq->arm_sn & 3u) << 28 | KR_CQ_DB_REQ_NOT << 24 | (cq->cons_index & 0xffffffu);
	/* the record first: the device reads it if the doorbell itself is lost */
	__atomic_store_n(&cq->dbrec[KR_CQ_ARM_DB], htobe32(word), __ATOMIC_RELEASE);
	db[0] = htobe32(word);
	db[1] = htobe32(cq->cqn);
	memcpy(&val, db, sizeof(val));
	cq->ctx->ops->cq_doorbell(cq->uar, val);
	return 0;
}

/* kr_devx_cq_event_taken() - see devx.h. */
void kr_devx_cq_event_taken(struct kr_devx_cq *cq)
{
	if (cq)
		cq->arm_sn++;
}
