/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_keys: another launch's rkey, leaked or guessed, reaches nothing. On
 * one node, root's launch A lends a region holding a marker; an attacker of
 * uid 65534 (a launch of its own, the other tenant slot) holds A's leaked
 * address, rkey and DCT number, and tries:
 *   - the leaked rkey through its own launch's DCT (READ and WRITE): remote
 *     access error, the MKEY is in A's PD;
 *   - 32 guessed rkeys (other indexes and variants) the same way: all fail;
 *   - the leaked rkey at A's DCT with its own DC key and with guessed keys:
 *     the DCT drops each request (retry exhaustion for the requester) and
 *     counts a key violation (krctl pool);
 * nothing comes back and A's bytes are unchanged.
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

#define LEN    256u
#define MARKER 0xa7

static struct kp_keeper K;

/* One request through the attacker's own launch's DCT; its completion status. */
static int own_dct(struct kr_ctx *ctx, bool write_op, uint8_t *buf, uint64_t addr, uint32_t rkey)
{
	struct kr_vqp *v = kp_connect_wait(ctx, KR_NODE_SELF);
	struct kr_wc wc;
	int got = 0, rc;

	if (!v)
		return -errno;
	rc = write_op ? kr_post_write(v, buf, LEN, addr, rkey, 1, 0)
		      : kr_post_read(v, buf, LEN, addr, rkey, 1, 0);
	for (double t0 = kp_now_ms(); !rc && !got && kp_now_ms() - t0 < 10000;)
		got = kr_poll(v, &wc, 1);
	kr_disconnect(v);
	return rc ? rc : got == 1 ? (int)wc.status : -ETIMEDOUT;
}

static int attacker(void *arg)
{
	const struct sec_lent *a = arg;
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	struct kr_devx_dc_av av = {.dctn = a->dctn};
	uint64_t seed = 0x5eed5eed1234ull;
	struct kr_lease l;
	uint8_t *buf;
	int st;

	SEC_EXPECT(ctx != NULL);
	SEC_EXPECT(ctx->tenant == 1);
	buf = kr_malloc(ctx, LEN);
	SEC_EXPECT(buf != NULL);
	/* the leaked rkey, and guesses around it, through its own DCT */
	for (int i = 0; i < 33; i++) {
		uint32_t rkey = a->rkey;

		if (i)
			rkey = (i & 1) ? (a->rkey & ~0xffu) | (uint32_t)(sec_rnd(&seed) & 0xff)
				       : a->rkey + ((uint32_t)(i / 2) << 8);
		memset(buf, 0, LEN);
		st = own_dct(ctx, false, buf, a->addr, rkey);
		SEC_EXPECT(st == KR_WC_REM_ACCESS_ERR);
		for (uint32_t b = 0; b < LEN; b++)
			SEC_EXPECT(buf[b] == 0);
	}
	memset(buf, 0x11, LEN);
	SEC_EXPECT(own_dct(ctx, true, buf, a->addr, a->rkey) == KR_WC_REM_ACCESS_ERR);
	printf("attacker: leaked rkey and 32 guesses at its own DCT: remote access error\n");
	/* A's DCT, its own key and guessed ones: dropped */
	kr_devx_dc_av_path(&av, &ctx->zone->port, &ctx->zone->port.addr, ctx->zone->dctn, av.dctn);
	for (int i = 0; i < 4; i++) {
		av.dc_key = i ? sec_rnd(&seed) : sec_launch()->dc_key;
		memset(buf, 0, LEN);
		/* each failed READ gave its DCI back in error: leasable once reset */
		SEC_EXPECT(kp_lease_wait(ctx, KR_LEASE_DCI, &l, 10000) == 0);
		st = kp_dci_read(ctx, &l, &av, buf, LEN, a->addr, a->rkey);
		SEC_EXPECT(st == KR_WC_RETRY_EXC_ERR);
		for (uint32_t b = 0; b < LEN; b++)
			SEC_EXPECT(buf[b] == 0);
		kr_lease_free(ctx, &l);
	}
	printf("attacker: leaked rkey at A's DCT with 4 wrong DC keys: %s\n",
	       kr_strerror(KR_WC_RETRY_EXC_ERR));
	fflush(stdout);
	kr_detach(ctx);
	return 0;
}

int main(void)
{
	const char *const args[] = {"--tenants", "2",	      "--dcis", "4",	       "--jobs",
				    "2",	 "--heap-mb", "2",	"--hugepages", "48",
				    "--group",	 "65534",     NULL};
	struct sec_lent a;
	long long v;
	int go;
	pid_t pid;

	sec_keeper_start(&K, args);
	pid = sec_lender_start(&K, LEN, MARKER, MARKER, &a, &go);
	/* tenant slot 0's violations (launch A's: the first slot bound) */
	CHECK_EQ(kp_krctl_json(&K, "pool", "dct_key_violations", 0), 0);
	CHECK_EQ(sec_as_nobody(attacker, &a), 0);
	v = sec_violations_wait(&K, 0, 4);
	printf("tenant 0 (launch A) counted %lld DC key violations\n", v);
	CHECK(v >= 4);
	sec_lender_done(pid, go); /* A's bytes are unchanged */
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_keys");
}
