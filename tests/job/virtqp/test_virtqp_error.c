/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion dispatch and recovery: eight vQPs of one thread share one DCI
 * (8 x 32 credits = its whole send queue). Each posts rounds of a WRITE of
 * its own pattern and an FAA on its own counter, interleaved with the
 * others; the odd vQPs' WRITEs are inline (40 bytes: the same two WQEBBs),
 * their source overwritten as soon as all is posted (inline means copied
 * at once: a re-post must not read it again); one request of vQP 3
 * carries a bad rkey. Then:
 *   - vQP 3 gets its earlier completions, KR_WC_REM_ACCESS_ERR for the bad
 *     one and KR_WC_WR_FLUSH_ERR for its later ones, moves to KR_VQP_ERR and
 *     refuses new posts with -EIO;
 *   - the 7 others get every completion, successful and in their order
 *     (those flushed behind the error are posted again on a fresh DCI,
 *     flagged KR_WC_F_REPOSTED), every payload is in place and every counter
 *     was added exactly once per round (no re-posted atomic ran twice);
 *   - the DCI was swapped through the keeper (recoveries >= 1) and the 7
 *     keep working. Run with a pool of 4 DCIs (a fresh one is free at once)
 *     and of 1 (the broken one must come back from the keeper's reset first:
 *     kr_poll retries the lease, posts get -EAGAIN meanwhile).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define NVQP   8
#define ROUNDS 8
#define SLOT   64
#define BAD    3
#define BAD_R  2
#define INL    40 /* an odd vQP's inline WRITE: ctrl, AV, raddr, header and 40 bytes fit 128 */

int main(int argc, char **argv)
{
	/* argv[1]: DCIs in the pool; with 1 the recovery must wait for the keeper's reset */
	const char *dcis = argc > 1 ? argv[1] : "4";
	const char *const args[] = {"--tenants",   "1",	     "--dcis", dcis,	    "--low-water",
				    "0",	   "--jobs", "1",      "--heap-mb", "2",
				    "--hugepages", "64",     NULL};
	struct kr_vqp *v[NVQP];
	struct kp_keeper k;
	struct kr_ctx *ctx;
	struct kr_mr *mr;
	struct kr_mr_key key;
	struct kr_vqp_attr a;
	uint8_t *src, *dst;
	uint64_t *cnt, *old;
	uint32_t first_qpn;
	int reposted = 0;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	src = kr_malloc(ctx, NVQP * ROUNDS * SLOT);
	dst = kr_malloc(ctx, NVQP * ROUNDS * SLOT + NVQP * 8);
	old = kr_malloc(ctx, NVQP * ROUNDS * 8);
	CHECK(src && dst && old);
	cnt = (uint64_t *)(dst + NVQP * ROUNDS * SLOT);
	memset(dst, 0, NVQP * ROUNDS * SLOT + NVQP * 8);
	mr = kr_reg_mr(ctx, dst, NVQP * ROUNDS * SLOT + NVQP * 8,
		       KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE | KR_MR_REMOTE_ATOMIC |
			   KR_MR_LOCAL_WRITE);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	for (int i = 0; i < NVQP; i++) {
		v[i] = kr_connect(ctx, KR_NODE_SELF, NULL);
		CHECK(v[i] != NULL);
		CHECK(v[i]->dci == v[0]->dci);
	}
	CHECK_EQ(v[0]->dci->credits_free, 0);
	first_qpn = v[0]->dci->qpn;

	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < NVQP; i++) {
			uint8_t *s = src + (i * ROUNDS + r) * SLOT;
			uint32_t rkey = (i == BAD && r == BAD_R) ? key.rkey ^ 0x5500u : key.rkey;

			memset(s, (uint8_t)(i * 16 + r + 1), SLOT);
			CHECK_OK(kr_post_write(v[i], s, i % 2 ? INL : SLOT,
					       (uintptr_t)dst + (uint64_t)(i * ROUNDS + r) * SLOT,
					       rkey, (uint64_t)r * 2, i % 2 ? KR_POST_INLINE : 0));
			CHECK_OK(kr_post_faa(v[i], old + i * ROUNDS + r, (uintptr_t)(cnt + i),
					     key.rkey, 1, (uint64_t)r * 2 + 1, 0));
		}
	/* the credits are all in use: one more is refused, nothing overwritten */
	CHECK_ERR(kr_post_read(v[0], src, 8, (uintptr_t)dst, key.rkey, 99, 0), -EAGAIN);
	for (int i = 1; i < NVQP; i += 2) /* inline sources are the caller's again */
		memset(src + i * ROUNDS * SLOT, 0xee, ROUNDS * SLOT);

	for (int i = 0; i < NVQP; i++) {
		struct kr_wc wc[2 * ROUNDS];

		CHECK_EQ(vq_wait(v[i], wc, 2 * ROUNDS), 2 * ROUNDS);
		for (int j = 0; j < 2 * ROUNDS; j++) {
			CHECK_EQ(wc[j].wr_id, (uint64_t)j);
			CHECK_EQ(wc[j].opcode, (j & 1) ? KR_WC_OP_FAA : KR_WC_OP_WRITE);
			if (i != BAD || j < 2 * BAD_R) {
				CHECK_EQ(wc[j].status, KR_WC_SUCCESS);
				reposted += !!(wc[j].flags & KR_WC_F_REPOSTED);
			} else if (j == 2 * BAD_R) {
				CHECK_EQ(wc[j].status, KR_WC_REM_ACCESS_ERR);
			} else {
				CHECK_EQ(wc[j].status, KR_WC_WR_FLUSH_ERR);
			}
		}
	}
	for (int i = 0; i < NVQP; i++) {
		int ok_rounds = i == BAD ? BAD_R : ROUNDS;

		CHECK_OK(kr_vqp_query(v[i], &a));
		CHECK_EQ(a.state, i == BAD ? KR_VQP_ERR : KR_VQP_RTS);
		CHECK_EQ(a.credits_used, 0);
		CHECK_EQ(cnt[i], (uint64_t)ok_rounds); /* each FAA ran exactly once */
		for (int r = 0; r < ok_rounds; r++) {
			const uint8_t *d = dst + (i * ROUNDS + r) * SLOT;

			for (int b = 0; b < SLOT; b++)
				CHECK_EQ(d[b], i % 2 && b >= INL ? 0 : (uint8_t)(i * 16 + r + 1));
			CHECK_EQ(old[i * ROUNDS + r], (uint64_t)r);
		}
	}
	CHECK_ERR(kr_post_read(v[BAD], src, 8, (uintptr_t)dst, key.rkey, 0, 0), -EIO);
	CHECK_OK(kr_vqp_query(v[0], &a));
	CHECK(a.dci_recoveries >= 1);
	printf("# recovered DCI 0x%x -> 0x%x, %d completions re-posted\n", first_qpn, a.dci_qpn,
	       reposted);

	/* the survivors keep working on the new DCI */
	for (int i = 0; i < NVQP; i++) {
		uint8_t *c = src + i * ROUNDS * SLOT;

		if (i == BAD)
			continue;
		memset(c, 0, SLOT);
		CHECK_OK(kr_post_read(v[i], c, SLOT, (uintptr_t)dst + (uint64_t)i * ROUNDS * SLOT,
				      key.rkey, 1000 + (uint64_t)i, 0));
		CHECK_OK(vq_wait_ok(v[i], 1000 + (uint64_t)i));
		for (int b = 0; b < SLOT; b++)
			CHECK_EQ(c[b], i % 2 && b >= INL ? 0 : (uint8_t)(i * 16 + 1));
	}
	for (int i = 0; i < NVQP; i++)
		CHECK_OK(kr_disconnect(v[i]));
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("virtqp_error");
}
