/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tenants' DC target CQs wake the event loop. A pairing message from
 * another keeper (keeper_pair.c) lands on a tenant's DCT; polled only at the
 * loop's tick it waited up to KR_TICK_NS on each side of a pairing. Each
 * tenant's CQ is armed and subscribed to an eventfd of its own in the
 * loop's epoll set: the loop takes the message when it arrives, then arms
 * the CQ again (devx_event.c). The tick still polls every CQ, so a device
 * without events (or a lost one) costs a tick, never a message.
 *
 * Threads: the channel and the eventfds are the loop's, made once at start;
 * a CQ is subscribed where it is built (at start, or by the worker when a
 * slot is renewed, while the loop keeps off the tenant) and armed there;
 * after that arming is the loop's, after each poll of the CQ.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "keeper/keeper.h"

/* kr_keeper_dct_event_cq() - see keeper.h. */
void kr_keeper_dct_event_cq(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	int rc;

	t->dct_armed = false;
	if (!k->ev_ch || t->dct_ev_fd < 0)
		return;
	rc = kr_devx_cq_notify(k->ev_ch, &t->dct_cq, t->dct_ev_fd);
	if (rc)
		KR_WARN("pool", "tenant %u: DC target CQ events: %s (polled at each tick)", t->idx,
			strerror(-rc));
	t->dct_notify = !rc;
	/* armed now, not at the first poll: a message before the first tick raises its event */
	kr_keeper_dct_arm(k, t);
}

/* kr_keeper_dct_events_open() - see keeper.h. */
int kr_keeper_dct_events_open(struct kr_keeper *k, uint64_t ev_kind)
{
	int rc;

	for (uint32_t i = 0; i < k->cfg.tenants; i++)
		k->tenant[i].dct_ev_fd = -1;
	rc = kr_devx_event_ch_open(k->ctx, &k->ev_ch);
	if (rc) {
		k->ev_ch = NULL;
		KR_INFO("pool", "no completion events on %s (%s): DC targets polled at each tick",
			k->ctx->name, strerror(-rc));
		return 0;
	}
	for (uint32_t i = 0; i < k->cfg.tenants; i++) {
		struct kr_keeper_tenant *t = &k->tenant[i];
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = ev_kind << 32 | i};

		t->dct_ev_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (t->dct_ev_fd < 0 || epoll_ctl(k->epoll_fd, EPOLL_CTL_ADD, t->dct_ev_fd, &ev))
			return -errno;
		if (t->srq_ok)
			kr_keeper_dct_event_cq(k, t);
	}
	return 0;
}

/* kr_keeper_dct_arm() - see keeper.h. */
void kr_keeper_dct_arm(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	(void)k;
	if (t->dct_notify && !t->dct_armed && !kr_devx_cq_arm(&t->dct_cq))
		t->dct_armed = true;
}

/* kr_keeper_dct_event() - see keeper.h. */
void kr_keeper_dct_event(struct kr_keeper *k, uint32_t tenant)
{
	struct kr_keeper_tenant *t;
	uint64_t n;

	if (tenant >= k->cfg.tenants)
		return;
	t = &k->tenant[tenant];
	if (read(t->dct_ev_fd, &n, sizeof(n)) != sizeof(n))
		return; /* none after all (a spurious wake) */
	kr_seg_tenant(k->seg, tenant)->dct_events++;
	if (t->dct_armed) {
		kr_devx_cq_event_taken(&t->dct_cq);
		t->dct_armed = false;
	}
	kr_keeper_tenant_poll_dct(k, t); /* and arms it again */
}

/* kr_keeper_dct_events_close() - see keeper.h. */
void kr_keeper_dct_events_close(struct kr_keeper *k)
{
	for (uint32_t i = 0; k->tenant && k->ev_ch && i < k->cfg.tenants; i++)
		if (k->tenant[i].dct_ev_fd >= 0) {
			close(k->tenant[i].dct_ev_fd);
			k->tenant[i].dct_ev_fd = -1;
		}
	kr_devx_event_ch_close(k->ev_ch);
	k->ev_ch = NULL;
}
