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

/* krctl pool --json: tenant 0's dct_key_violations, or -1. */
static long long violations(const struct kp_keeper *k)
{
	const char *const argv[] = {kp_tool("KRCTL"), "--socket", k->sock, "--json", "pool", NULL};
	static char out[16384];
	const char *p;

	if (kp_run(argv, out, sizeof(out), 10) != 0)
		return -1;
	p = strstr(out, "\"dct_key_violations\": ");
	return p ? atoll(p + strlen("\"dct_key_violations\": ")) : -1;
}

/* One READ of 8 heap bytes through the DCI with av; the completion status. */
static int read_with(struct kr_ctx *ctx, struct kr_devx_qp *qp, struct kr_devx_cq *cq,
		     const struct kr_devx_dc_av *av, uint8_t *dst, const uint8_t *src)
{
	struct kr_devx_sge sge = {
	    .addr = (uintptr_t)dst, .length = 8, .lkey = kr_pool_heap_lkey(ctx)};
	struct kr_devx_wr wr = {.wr_id = 7,
				.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = (uintptr_t)src,
				.rkey = ctx->heap_rkey,
				.av = av};
	struct kr_devx_wc wc;

	CHECK_OK(kr_devx_qp_post_send(qp, &wr));
	kr_devx_qp_ring(qp);
	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 30000;)
		if (kr_devx_cq_poll(cq, &wc, 1) == 1)
			return (int)wc.status;
	KR_FAIL("no completion in 30 s");
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "2",
					   "--heap-mb", "2", "--hugepages", "32", NULL};
	struct kr_devx_dc_av av;
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
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
	CHECK_OK(kr_pool_dci_qp(ctx, &l, &qp, &cq));
	CHECK_OK(kr_pool_tenant_av(ctx, &av));

	CHECK_EQ(read_with(ctx, qp, cq, &av, buf + 32, buf), KR_WC_SUCCESS);
	CHECK(!memcmp(buf + 32, "krcore:8", 8));
	usleep(1500000); /* a watch period passes */
	CHECK_EQ(violations(&k), 0);

	av.dc_key ^= 1;
	memset(buf + 32, 0, 8);
	st = read_with(ctx, qp, cq, &av, buf + 32, buf);
	printf("READ with a wrong DC key: %s\n", kr_strerror(st));
	CHECK_EQ(st, KR_WC_RETRY_EXC_ERR);
	CHECK(buf[32] == 0); /* nothing came back */
	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 10000 && n <= 0; usleep(100000))
		n = violations(&k);
	printf("krctl pool: dct_key_violations %lld\n", n);
	CHECK(n > 0);

	CHECK_OK(kr_lease_free(ctx, &l));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("pool_key_violations");
}
