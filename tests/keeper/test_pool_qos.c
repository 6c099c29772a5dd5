/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krpoold --traffic-class and --priority reach the jobs: a job's view of
 * the keeper's port carries both, so the address vectors it builds carry
 * them too (stat_rate_sl = priority << 1 on RoCE, tclass), and DC traffic
 * through a leased DCI still moves every byte right. A priority past 7 on
 * the sim's Ethernet port stops the keeper at start with a message naming
 * it. (The bytes each path writes: conformance_qos, conformance_av_bytes.)
 */
#include <signal.h>
#include <string.h>

#include "kr_test.h"
#include "pool_fixture.h"

#define LEN 2048

int main(void)
{
	const char *const bad[] = {"--priority", "8", NULL};
	const char *const args[] = {"--traffic-class", "184", "--priority", "3", NULL};
	struct kp_keeper k;
	struct kr_devx_dc_av av;
	struct kr_lease dci;
	struct kr_ctx *ctx;
	uint8_t *src, *dst, *chk;

	kp_keeper_init(&k);
	CHECK(kp_keeper_start(&k, bad) > 0);
	CHECK(kp_log_has(&k, "--priority 8: an Ethernet priority is 0..7"));

	CHECK_OK(kp_keeper_start(&k, args));
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	CHECK_EQ(ctx->zone->port.tclass, 184);
	CHECK_EQ(ctx->zone->port.sl, 3);
	CHECK(ctx->zone->port.roce);
	kr_devx_dc_av_path(&av, &ctx->zone->port, &ctx->zone->port.addr, ctx->zone->dctn,
			   ctx->zone->dctn);
	CHECK_EQ(av.tclass, 184);
	CHECK_EQ(av.stat_rate_sl, 3 << 1);

	src = kr_malloc(ctx, LEN);
	dst = kr_malloc(ctx, LEN);
	chk = kr_malloc(ctx, LEN);
	CHECK(src && dst && chk);
	CHECK_OK(kp_lease_wait(ctx, KR_LEASE_DCI, &dci, 5000));
	CHECK_OK(kp_dci_write_read(ctx, &dci, src, dst, chk, LEN, 20, 7000));
	CHECK_OK(kr_lease_free(ctx, &dci));
	kr_free(ctx, src);
	kr_free(ctx, dst);
	kr_free(ctx, chk);
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("test_pool_qos");
}
