/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A response held on the wire until after kr_disconnect() must not land in
 * a buffer the job uses again (issue: wrong bytes after kr_disconnect with
 * requests in flight). Deterministic: two keepers on sim hosts over RoCEv2
 * on UDP loopback (as test_virtqp_two_nodes), node 2's host holding every
 * packet it sends for HOLD_MS (the sim's delay fault), node 1's wire clean.
 *
 * Node 1's job posts a READ of node 2's memory into buffer B and an FAA whose
 * old value lands in word L, disconnects the vQP at once, then reuses B and L
 * for a READ and an FAA to its own node (answered in microseconds, on a DCI
 * of their own) and, after the held answers' time has passed twice, checks
 * that B and L hold what the later requests returned. With kr_disconnect()
 * returning before the held answers came, they overwrote B and L whenever
 * the DCI stayed with the job (another vQP on it): the bug, case 1. Then a
 * batch left open (KR_POST_MORE), the DCI's last vQP (the DCI goes back to
 * the keeper), and a disconnect with nothing in flight (it must not wait).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_two_hosts.h"

#define HOLD_MS 50u
#define LEN	256u

static int side_b(const struct kp_keeper *kb, int wfd, int rfd)
{
	struct kr_ctx *ctx = kp_attach(kb, 5000);
	struct kr_mr *mr;
	uint8_t *mem, go;

	CHECK(ctx != NULL);
	mem = kr_malloc(ctx, 2 * LEN);
	CHECK(mem != NULL);
	memset(mem, 0xb2, LEN); /* what node 2's READs return */
	memset(mem + LEN, 0, LEN);
	*(uint64_t *)(mem + LEN) = 0x2222ull << 48; /* the FAA word: node 2's old values */
	mr = vq_lend(ctx, mem, 2 * LEN, wfd);
	CHECK_EQ(read(rfd, &go, 1), 1);
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	return 0;
}

struct self_mem {
	uint8_t *mem; /* [0, LEN): 0x51 bytes; LEN: the FAA word */
	uint64_t addr;
	uint32_t rkey;
};

/* B and L reused at once by requests to this node: they must keep what those returned. */
static void reuse_and_check(struct kr_ctx *ctx, struct self_mem *sm, uint8_t *b, uint64_t *l,
			    const char *what)
{
	struct kr_vqp *vs = kr_connect(ctx, KR_NODE_SELF, NULL);
	uint64_t faa_old;
	uint8_t want[LEN];

	CHECK(vs != NULL);
	memset(want, 0x51, LEN);
	memset(b, 0, LEN);
	*l = 0;
	faa_old = *(uint64_t *)(sm->mem + LEN);
	CHECK_OK(kr_post_read(vs, b, LEN, sm->addr, sm->rkey, 1, 0));
	CHECK_OK(kr_post_faa(vs, l, sm->addr + LEN, sm->rkey, 1, 2, 0));
	CHECK_OK(vq_wait_ok(vs, 1));
	CHECK_OK(vq_wait_ok(vs, 2));
	CHECK(memcmp(b, want, LEN) == 0);
	CHECK_EQ(*l, faa_old);
	usleep(3 * HOLD_MS * 1000); /* the held answers' time, twice over */
	if (memcmp(b, want, LEN) || *l != faa_old)
		KR_FAIL("%s: B starts 0x%02x (want 0x51), L 0x%llx (want 0x%llx): an abandoned "
			"request's answer landed after kr_disconnect()",
			what, b[0], (unsigned long long)*l, (unsigned long long)faa_old);
	CHECK_OK(kr_disconnect(vs));
}

/* READ into b and FAA into l on v (flags: KR_POST_MORE or 0), then disconnect at once. */
static void abandon(struct kr_vqp *v, const struct vq_lent *lent, uint8_t *b, uint64_t *l,
		    uint32_t flags)
{
	double t0;

	CHECK_OK(kr_post_read(v, b, LEN, lent->addr, lent->rkey, 10, flags));
	CHECK_OK(kr_post_faa(v, l, lent->addr + LEN, lent->rkey, 1, 11, flags));
	t0 = kp_now_ms();
	CHECK_OK(kr_disconnect(v));
	printf("kr_disconnect with 2 requests in flight (answers held %u ms): %.1f ms\n", HOLD_MS,
	       kp_now_ms() - t0);
}

int main(void)
{
	char b_opts[48];
	struct vq_two_hosts h;
	struct self_mem sm;
	struct kr_mr_key key;
	struct kr_ctx *ctx;
	struct kr_mr *self_mr;
	struct kr_vqp *v, *keep;
	uint8_t *b;
	uint64_t *l;
	double t0;

	snprintf(b_opts, sizeof(b_opts), ",delay=1,delay_us=%u", HOLD_MS * 1000);
	vq_two_hosts_start2(&h, "", b_opts, NULL, side_b);
	CHECK_OK(setenv("KR_PROMOTE_RATE", "off", 1));
	ctx = kp_attach(&h.a, 5000);
	CHECK(ctx != NULL);
	b = kr_malloc(ctx, LEN);
	l = kr_malloc(ctx, sizeof(*l));
	sm.mem = kr_malloc(ctx, 2 * LEN);
	CHECK(b && l && sm.mem);
	memset(sm.mem, 0x51, LEN);
	memset(sm.mem + LEN, 0, LEN);
	self_mr = kr_reg_mr(ctx, sm.mem, 2 * LEN,
			    KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_ATOMIC);
	CHECK(self_mr != NULL);
	CHECK_OK(kr_mr_key(self_mr, &key));
	sm.addr = key.addr;
	sm.rkey = key.rkey;

	/* 1. another vQP to node 2 keeps the DCI with the job: the abandoned
	 * requests stay outstanding on it (this failed before the fix, every run) */
	keep = kr_connect(ctx, 2, NULL);
	CHECK(keep != NULL);
	v = kr_connect(ctx, 2, NULL);
	CHECK(v != NULL);
	CHECK(v->dci == keep->dci);
	abandon(v, &h.lent, b, l, 0);
	reuse_and_check(ctx, &sm, b, l, "DCI kept by another vQP");

	/* 2. the same with a batch left open: the disconnect rings it, then waits */
	v = kr_connect(ctx, 2, NULL);
	CHECK(v != NULL);
	abandon(v, &h.lent, b, l, KR_POST_MORE);
	reuse_and_check(ctx, &sm, b, l, "batch left open");
	CHECK_OK(kr_disconnect(keep));

	/* 3. the DCI's last vQP: the DCI goes back to the keeper after the wait */
	v = kp_connect_wait(ctx, 2);
	CHECK(v != NULL);
	CHECK_OK(kr_post_read(v, b, LEN, h.lent.addr, h.lent.rkey, 5, 0));
	CHECK_OK(vq_wait_ok(v, 5));
	CHECK_EQ(b[0], 0xb2);
	abandon(v, &h.lent, b, l, 0);
	reuse_and_check(ctx, &sm, b, l, "the DCI's last vQP");

	/* 4. nothing in flight: no wait (a bound far above a round trip, never timing) */
	v = kp_connect_wait(ctx, 2);
	CHECK(v != NULL);
	t0 = kp_now_ms();
	CHECK_OK(kr_disconnect(v));
	CHECK(kp_now_ms() - t0 < 10 * HOLD_MS);

	CHECK_OK(kr_dereg_mr(self_mr));
	CHECK_OK(kr_detach(ctx));
	vq_two_hosts_join(&h);
	vq_two_hosts_stop(&h);
	return 0;
}
