/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kr_poll's two paths on one shared DCI. Two vQPs of one thread to one
 * target share a DCI; their requests interleave on its send queue, so the
 * fast path (a vQP's own successful completions straight from the CQ)
 * stops at the other's and the queue path takes over, and the other way
 * round. For 4,000 requests in random interleavings (READs of known bytes,
 * WRITEs with immediate, CAS), polled with random batch sizes from random
 * vQPs: every completion reaches the vQP that posted it, in its posting
 * order, exactly once, with its wr_id, opcode, byte_len, imm and flags;
 * every READ and CAS returns what the memory held; every credit comes back
 * (credits_used 0 at the end); a poll of the other vQP never sees one of
 * them. Then a request that fails (bad rkey) between the other vQP's good
 * ones: the failing vQP gets its error, the other's flushed requests are
 * posted again (KR_WC_F_REPOSTED) and complete, in order.
 */
#include <signal.h>
#include <string.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define TOTAL	 4000
#define INFLIGHT 8 /* per vQP, within its credits */

struct track {
	struct kr_vqp *v;
	uint64_t next_post, next_done; /* wr_id = vQP index << 32 | sequence */
	uint32_t op[1024];	       /* by sequence % 1024: 0 READ, 1 WRITE_IMM, 2 CAS */
	uint64_t *slot;		       /* this vQP's READ/CAS targets and results */
};

static uint64_t seed = 20;

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)(kr_test_splitmix64(&seed) % n);
}

static void post_one(struct track *t, int idx, uint64_t *remote, uint32_t rkey)
{
	uint64_t seq = t->next_post, id = (uint64_t)idx << 32 | seq;
	uint32_t op = rnd(3);
	uint64_t *res = &t->slot[seq % 64];
	uint64_t *tgt = &remote[idx * 64 + seq % 64];

	t->op[seq % 1024] = op;
	switch (op) {
	case 0:
		*tgt = id ^ 0x5a5a;
		CHECK_OK(kr_post_read(t->v, res, 8, (uintptr_t)tgt, rkey, id, 0));
		break;
	case 1:
		CHECK_OK(
		    kr_post_write_imm(t->v, res, 8, (uintptr_t)tgt, rkey, (uint32_t)seq, id, 0));
		break;
	default:
		*tgt = seq;
		CHECK_OK(kr_post_cas(t->v, res, (uintptr_t)tgt, rkey, seq, seq + 1, id, 0));
	}
	t->next_post++;
}

static void check_one(struct track *t, int idx, const struct kr_wc *wc, uint64_t *remote)
{
	uint64_t seq = t->next_done, id = (uint64_t)idx << 32 | seq;
	uint32_t op = t->op[seq % 1024];

	CHECK_EQ(wc->wr_id, id); /* its own, in posting order */
	CHECK_EQ(wc->status, KR_WC_SUCCESS);
	CHECK_EQ(wc->byte_len, 8);
	switch (op) {
	case 0:
		CHECK_EQ(wc->opcode, KR_WC_OP_READ);
		CHECK_EQ(wc->flags, 0);
		CHECK_EQ(t->slot[seq % 64], id ^ 0x5a5a);
		break;
	case 1:
		CHECK_EQ(wc->opcode, KR_WC_OP_WRITE_IMM);
		CHECK_EQ(wc->flags, KR_WC_F_IMM);
		CHECK_EQ(wc->imm, (uint32_t)seq);
		break;
	default:
		CHECK_EQ(wc->opcode, KR_WC_OP_CAS);
		CHECK_EQ(t->slot[seq % 64], seq);		/* the old value */
		CHECK_EQ(remote[idx * 64 + seq % 64], seq + 1); /* swapped */
	}
	t->next_done++;
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis", "4", "--jobs", "1", NULL};
	struct kr_connect_opts o = {.credits = 4 * INFLIGHT};
	struct track t[2] = {{0}};
	struct kr_vqp_attr attr;
	struct kr_mr_key key;
	struct kp_keeper k;
	struct kr_ctx *ctx;
	struct kr_mr *mr;
	uint64_t *remote;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	remote = kr_malloc(ctx, 2 * 64 * 8);
	CHECK(remote != NULL);
	mr = kr_reg_mr(ctx, remote, 2 * 64 * 8,
		       KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE |
			   KR_MR_REMOTE_ATOMIC);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	for (int i = 0; i < 2; i++) {
		t[i].v = kr_connect(ctx, KR_NODE_SELF, &o);
		CHECK(t[i].v != NULL);
		t[i].slot = kr_malloc(ctx, 64 * 8);
		CHECK(t[i].slot != NULL);
	}
	CHECK(t[0].v->dci == t[1].v->dci); /* one DCI: their requests interleave */

	while (t[0].next_done + t[1].next_done < TOTAL) {
		int i = (int)rnd(2);
		struct track *p = &t[i];

		/* post a few on random vQPs, then poll a random one with a random batch */
		for (uint32_t m = rnd(4); m > 0; m--) {
			int j = (int)rnd(2);

			if (t[j].next_post - t[j].next_done < INFLIGHT &&
			    t[j].next_post < TOTAL / 2)
				post_one(&t[j], j, remote, key.rkey);
		}
		if (p->next_post == p->next_done)
			continue;
		{
			struct kr_wc wc[INFLIGHT];
			int want = 1 + (int)rnd(INFLIGHT), got = 0;

			for (double t0 = kp_now_ms(); !got;) {
				got = kr_poll(p->v, wc, want);
				CHECK(got >= 0);
				if (kp_now_ms() - t0 > 10000)
					KR_FAIL("vqp %d: no completion in 10 s", i);
			}
			CHECK(got <= want && (uint64_t)got <= p->next_post - p->next_done);
			for (int w = 0; w < got; w++)
				check_one(p, i, &wc[w], remote);
		}
	}
	for (int i = 0; i < 2; i++) {
		struct kr_wc wc;

		CHECK_EQ(t[i].next_done, TOTAL / 2);
		CHECK_EQ(kr_poll(t[i].v, &wc, 1), 0);
		CHECK_OK(kr_vqp_query(t[i].v, &attr));
		CHECK_EQ(attr.credits_used, 0);
	}

	/* a failing request of vQP 0 between vQP 1's: 1 is flushed, posted again, completes */
	{
		struct kr_wc wc[4];
		uint64_t *res = t[1].slot;

		remote[64] = 0x1111;
		remote[65] = 0x2222;
		CHECK_OK(
		    kr_post_read(t[1].v, &res[0], 8, (uintptr_t)&remote[64], key.rkey, 100, 0));
		/* its key's variant byte wrong: the same MKEY, never another live key
		 * (an index bit flipped could name the heap's own MR) */
		CHECK_OK(
		    kr_post_read(t[0].v, t[0].slot, 8, (uintptr_t)remote, key.rkey ^ 0x5a, 200, 0));
		CHECK_OK(
		    kr_post_read(t[1].v, &res[1], 8, (uintptr_t)&remote[65], key.rkey, 101, 0));
		CHECK_EQ(vq_wait(t[0].v, wc, 1), 1);
		CHECK_EQ(wc[0].wr_id, 200);
		CHECK(wc[0].status != KR_WC_SUCCESS);
		CHECK_EQ(vq_wait(t[1].v, wc, 2), 2);
		for (int w = 0; w < 2; w++)
			if (wc[w].wr_id != 100u + (unsigned)w || wc[w].status != KR_WC_SUCCESS)
				KR_FAIL("vQP 1's completion %d: wr_id %llu, %s, flags 0x%x", w,
					(unsigned long long)wc[w].wr_id, kr_strerror(wc[w].status),
					wc[w].flags);
		CHECK(wc[1].flags & KR_WC_F_REPOSTED); /* behind the error: flushed, posted again */
		CHECK_EQ(res[0], 0x1111);
		CHECK_EQ(res[1], 0x2222);
		CHECK_EQ(kr_poll(t[1].v, wc, 1), 0);
	}
	for (int i = 0; i < 2; i++)
		CHECK_OK(kr_disconnect(t[i].v));
	kr_dereg_mr(mr);
	kr_detach(ctx);
	kp_keeper_stop(&k, SIGTERM);
	kp_keeper_fini(&k);
	return 0;
}
