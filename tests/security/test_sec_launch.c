/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_launch: a launch reaches its own ranks on other nodes and nothing
 * else. Two keepers on simulated hosts over UDP loopback (node 1 the
 * MetaServer, 127.0.0.2; node 2, 127.0.0.3). Root's launch A has a rank on
 * each node: rank A2 lends a region, rank A1 connects to node 2 by node id
 * (one MetaServer READ) and WRITEs and READs it. Then launch C, a job of
 * uid 65534 on node 1 with a launch of its own, holding every leak it could
 * want (A2's region address and rkey, A's DCT number on node 2, node 2's
 * GID; A1's region on its own node):
 *   - kr_connect to node 2 fails with ENOENT: C has no rank there, and the
 *     MetaServer row names only A's tag;
 *   - a READ of A2's region through A's DCT on node 2 with C's DC key and
 *     with 8 guessed keys: the DCT drops every one (an error completion,
 *     nothing read) and node 2 counts key violations (krctl pool);
 *   - a READ of A1's region with its leaked rkey through C's own DCT:
 *     remote access error (another PD).
 * A2 then finds exactly the bytes A1 wrote.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "sec_fixture.h"
#include "sim_mp.h"

#define LEN 256u

static struct kp_keeper K1, K2;

/* Rank A1's work on node 1: connect to node 2, WRITE 0x5a over A2's region, READ it back. */
static int rank_a1(const struct sec_lent *a2)
{
	struct kr_ctx *ctx = kp_attach(&K1, 5000);
	struct kr_vqp *v;
	struct kr_wc wc;
	uint8_t *src, *chk;
	int got = 0;

	CHECK(ctx != NULL);
	src = kr_malloc(ctx, LEN);
	chk = kr_malloc(ctx, LEN);
	CHECK(src && chk);
	memset(src, 0x5a, LEN);
	v = kr_connect(ctx, 2, NULL);
	CHECK(v != NULL);
	CHECK_OK(kr_post_write(v, src, LEN, a2->addr, a2->rkey, 1, 0));
	CHECK_OK(kr_post_read(v, chk, LEN, a2->addr, a2->rkey, 2, 0));
	for (double t0 = kp_now_ms(); got < 2 && kp_now_ms() - t0 < 10000;) {
		int n = kr_poll(v, &wc, 1);

		CHECK(n >= 0);
		if (n)
			CHECK_EQ(wc.status, KR_WC_SUCCESS);
		got += n;
	}
	CHECK_EQ(got, 2);
	CHECK(!memcmp(src, chk, LEN));
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_detach(ctx));
	return 0;
}

struct leaks {
	struct sec_lent a1, a2;
	struct kr_devx_addr node2; /* 127.0.0.3: GID, and the MAC the sim answers to there */
};

static int launch_c(void *arg)
{
	const struct leaks *lk = arg;
	struct kr_ctx *ctx = kp_attach(&K1, 5000);
	struct kr_devx_dc_av av = {.dctn = lk->a2.dctn};
	uint64_t guess = 0x9e3779b97f4a7c15ull;
	struct kr_lease l;
	struct kr_vqp *v;
	struct kr_wc wc;
	uint8_t *dst;
	int got = 0;

	SEC_EXPECT(ctx != NULL);
	SEC_EXPECT(ctx->tenant != 0); /* A holds slot 0 on node 1 */
	dst = kr_malloc(ctx, LEN);
	SEC_EXPECT(dst != NULL);
	/* node 2 has no rank of C */
	errno = 0;
	SEC_EXPECT(kr_connect(ctx, 2, NULL) == NULL && errno == ENOENT);
	/* A's DCT on node 2 with C's key, then guessed keys: dropped, nothing read */
	kr_devx_dc_av_path(&av, &ctx->zone->port, &lk->node2, ctx->zone->dctn, av.dctn);
	for (int i = 0; i < 9; i++) {
		int st;

		av.dc_key = i ? sec_rnd(&guess) : sec_launch()->dc_key;
		memset(dst, 0, LEN);
		SEC_EXPECT(kr_lease_alloc(ctx, KR_LEASE_DCI, &l) == 0);
		st = kp_dci_read(ctx, &l, &av, dst, LEN, lk->a2.addr, lk->a2.rkey);
		SEC_EXPECT(st > 0 && st != KR_WC_SUCCESS);
		for (uint32_t b = 0; b < LEN; b++)
			SEC_EXPECT(dst[b] == 0);
		if (i == 0)
			printf("launch C, its own key at A's DCT on node 2: %s\n", kr_strerror(st));
		kr_lease_free(ctx, &l); /* in error: the keeper resets it */
	}
	/* A1's region with its leaked rkey, through C's own DCT on node 1 */
	v = kr_connect(ctx, KR_NODE_SELF, NULL);
	SEC_EXPECT(v != NULL);
	SEC_EXPECT(kr_post_read(v, dst, LEN, lk->a1.addr, lk->a1.rkey, 3, 0) == 0);
	for (double t0 = kp_now_ms(); !got && kp_now_ms() - t0 < 10000;)
		got = kr_poll(v, &wc, 1);
	SEC_EXPECT(got == 1 && wc.status == KR_WC_REM_ACCESS_ERR);
	printf("launch C, A1's leaked rkey at its own DCT: %s\n", kr_strerror(wc.status));
	fflush(stdout);
	kr_disconnect(v);
	kr_detach(ctx);
	return 0;
}

int main(void)
{
	static const char *const addrs[] = {"127.0.0.2", "127.0.0.3"};
	char dev1[64], dev2[64], ms[32];
	struct leaks lk = {.node2 = {.gid = {[10] = 0xff, [11] = 0xff, [12] = 127, [15] = 3},
				     .mac = {0x02, 0x6b, 127, 0, 0, 3}}};
	int go1, go2;
	pid_t p1, p2;
	uint16_t port;
	long long viol;

	sec_require_root();
	kp_require_hugepages(64);
	port = mp_pick_port(addrs, 2);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.2-3");
	snprintf(dev1, sizeof(dev1), "sim:la1@127.0.0.2:%u", port);
	snprintf(dev2, sizeof(dev2), "sim:la2@127.0.0.3:%u", port);
	snprintf(ms, sizeof(ms), "127.0.0.2:%u", port + 1);
#define COMMON                                                                                     \
	"--tenants", "2", "--dcis", "4", "--jobs", "2", "--heap-mb", "2", "--hugepages", "48",     \
	    "--group", "65534"
	{
		const char *const a1[] = {"--device",	   dev1, "--node-id", "1", "--metaserver",
					  "--meta-listen", ms,	 COMMON,      NULL};
		const char *const a2[] = {"--device",	       dev2, "--node-id", "2",
					  "--metaserver-addr", ms,   COMMON,	  NULL};

		sec_keeper_start(&K1, a1);
		sec_keeper_start(&K2, a2);
	}
	/* launch A: a lender on each node; A1's work from node 1 reaches A2 */
	p2 = sec_lender_start(&K2, LEN, 0x11, 0x5a, &lk.a2, &go2);
	p1 = sec_lender_start(&K1, LEN, 0x22, 0x22, &lk.a1, &go1);
	CHECK_EQ(rank_a1(&lk.a2), 0);
	printf("launch A: node 1 -> node 2 WRITE + READ of %u bytes verified\n", LEN);
	fflush(stdout);

	/* node 2's violations, summed over its tenant slots */
	viol = kp_krctl_json(&K2, "pool", "dct_key_violations", -1);
	CHECK_EQ(viol, 0);
	CHECK_EQ(sec_as_nobody(launch_c, &lk), 0);
	viol = sec_violations_wait(&K2, -1, viol + 1);
	printf("node 2 counted %lld DC key violations\n", viol);
	CHECK(viol >= 9);

	/* A2 holds exactly what A1 wrote, A1 its own bytes */
	sec_lender_done(p2, go2);
	sec_lender_done(p1, go1);
	CHECK_EQ(kp_keeper_stop(&K2, SIGTERM), 0);
	CHECK_EQ(kp_keeper_stop(&K1, SIGTERM), 0);
	kp_keeper_fini(&K2);
	kp_keeper_fini(&K1);
	KR_PASS("sec_launch");
}
