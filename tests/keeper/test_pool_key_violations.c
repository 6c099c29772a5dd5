/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A request with a wrong DC access key reaches nothing, and the keeper
 * sees it: a job READs its own tenant's DCT through a raw leased DCI, once
 * with the right key (it completes, no violation counted) and once with the
 * key off by one bit (the DCT drops it as mlx5 does, the requester ends in
 * retry exhaustion); the keeper's worker reads the DCT's violation counter
 * and `krctl pool --json` shows it within a few seconds.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "2",
					   "--heap-mb", "2", "--hugepages", "32", NULL};
	struct kr_devx_dc_av av;
	struct kr_lease l;
	struct kp_keeper k;
	struct kr_ctx *ctx;
	uint8_t *buf;
	long long n = -1;
	int st;

	kp_require_hugepages(40);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	buf = kr_malloc(ctx, 64);
	CHECK(buf != NULL);
	memcpy(buf, "krcore:8", 8);
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l));
	CHECK_OK(kr_job_tenant_av(ctx, &av));

	CHECK_EQ(kp_dci_read(ctx, &l, &av, buf + 32, 8, (uintptr_t)buf, ctx->heap_rkey),
		 KR_WC_SUCCESS);
	CHECK(!memcmp(buf + 32, "krcore:8", 8));
	usleep(1500000); /* a watch period passes */
	CHECK_EQ(kp_krctl_json(&k, "pool", "dct_key_violations", 0), 0);

	av.dc_key ^= 1;
	memset(buf + 32, 0, 8);
	st = kp_dci_read(ctx, &l, &av, buf + 32, 8, (uintptr_t)buf, ctx->heap_rkey);
	printf("READ with a wrong DC key: %s\n", kr_strerror(st));
	CHECK_EQ(st, KR_WC_RETRY_EXC_ERR);
	CHECK(buf[32] == 0); /* nothing came back */
	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 10000 && n <= 0; usleep(100000))
		n = kp_krctl_json(&k, "pool", "dct_key_violations", 0);
	printf("krctl pool: dct_key_violations %lld\n", n);
	CHECK(n > 0);

	CHECK_OK(kr_lease_free(ctx, &l));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("pool_key_violations");
}
