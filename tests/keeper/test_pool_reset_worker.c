/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reset_worker: a lease never waits behind a DCI reset, and a DCI is handed
 * out again only once its reset completed. A keeper with 3 DCIs on a sim
 * whose QUERY commands take 400 ms (a reset issues two: QUERY_QP for the
 * PSN, QUERY_CQ for the producer counter; building a DCI issues none).
 *
 * A job holds all three DCIs (one granted with the attach), gives one back
 * and asks for one at once. The answer is -ENOSPC, and the returned slot is
 * still DIRTY when it arrives: the keeper answered while the worker was in
 * the middle of the reset. (When the event loop ran resets itself it
 * answered only after the reset, with the reset DCI.) Once the worker is done
 * the slot is FREE with one more reset, and the next lease gets that DCI,
 * whose WRITEs and READs complete. Waits are bounded; time never decides.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

static const char *const args[] = {"--tenants",	  "1",
				   "--dcis",	  "3",
				   "--jobs",	  "1",
				   "--heap-mb",	  "2",
				   "--hugepages", "32",
				   "--rc-spares", "0",
				   "--device",	  "sim:rstw,cmd_query_us=400000",
				   NULL};

/* The state and reset count of DCI slot i, from a fresh copy of the segment. */
static uint32_t dci_state(struct kr_ctx *obs, uint32_t i, uint32_t *resets)
{
	const struct kr_pool_slot *s;

	CHECK_OK(kr_job_observe_refresh(obs));
	s = kr_seg_dci(obs->seg, 0, i);
	if (resets)
		*resets = s->resets;
	return s->state;
}

int main(void)
{
	struct kr_lease l[3], again;
	struct kp_keeper k;
	struct kr_ctx *obs, *ctx;
	uint32_t resets0, resets1, state;
	uint8_t *src, *dst, *chk;
	double t0;
	int rc;

	kp_require_hugepages(8);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	obs = kr_job_observe(k.sock);
	CHECK(obs != NULL);
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	src = kr_malloc(ctx, 256);
	dst = kr_malloc(ctx, 256);
	chk = kr_malloc(ctx, 256);
	CHECK(src && dst && chk);
	for (int i = 0; i < 3; i++)
		CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l[i]));
	CHECK_EQ(kr_lease_alloc(ctx, KR_LEASE_DCI, &again), -ENOSPC);
	CHECK_OK(kp_dci_write_read(ctx, &l[1], src, dst, chk, 256, 4, 1));

	dci_state(obs, l[1].index, &resets0);
	CHECK_OK(kr_lease_free(ctx, &l[1]));
	t0 = kp_now_ms();
	rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &again);
	state = dci_state(obs, l[1].index, NULL);
	printf("lease during the reset: %s in %.2f ms, returned DCI %s\n",
	       rc ? strerror(-rc) : "granted", kp_now_ms() - t0,
	       state == KR_SLOT_DIRTY ? "still DIRTY" : "reset already");
	CHECK_EQ(rc, -ENOSPC); /* nothing handed out before its reset completed */
	CHECK_EQ(state, KR_SLOT_DIRTY);

	t0 = kp_now_ms();
	while (dci_state(obs, l[1].index, &resets1) != KR_SLOT_FREE && kp_now_ms() - t0 < 10000)
		usleep(2000);
	CHECK_EQ(dci_state(obs, l[1].index, &resets1), KR_SLOT_FREE);
	CHECK_EQ(resets1, resets0 + 1);
	printf("reset on the worker: %.0f ms\n", kp_now_ms() - t0);

	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &again));
	CHECK_EQ(again.index, l[1].index);
	CHECK(again.gen != l[1].gen);
	CHECK_OK(kp_dci_write_read(ctx, &again, src, dst, chk, 256, 4, 100));

	CHECK_OK(kr_lease_free(ctx, &again));
	CHECK_OK(kr_lease_free(ctx, &l[0]));
	CHECK_OK(kr_lease_free(ctx, &l[2]));
	CHECK_OK(kr_detach(ctx));
	kr_detach(obs);
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("pool_reset_worker");
}
