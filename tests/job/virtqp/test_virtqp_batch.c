/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * KR_POST_MORE: a batch of posts behind one doorbell.
 *  1. WRITEs posted with KR_POST_MORE do not reach the device (no CQE, the
 *     peer's memory unchanged 50 ms later: the sim executes only what a
 *     doorbell published); the next post without it sends them all, each
 *     completes once, in order, with its bytes in place.
 *  2. A batch left open is not lost: a poll that finds nothing rings it.
 *  3. One doorbell covers the DCI: two vQPs on it, one's KR_POST_MORE
 *     requests go with the other's post.
 *  4. Credits run out inside a batch (-EAGAIN): polling brings them back.
 *  5. An error inside a batch: the failing vQP gets its error, the other's
 *     requests behind it are posted again (KR_WC_F_REPOSTED) and complete.
 *  6. kr_disconnect() with a batch open: its requests go out and complete
 *     as orphans; the other vQP on the DCI keeps working, every credit back.
 *  7. Unknown flags next to KR_POST_MORE: -EINVAL, nothing posted.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define N 8 /* a batch: 8 WRITEs of 8 bytes, 16 WQEBBs */

static struct kr_mr_key key;
static uint64_t *remote, *src;

/* n completions of v, wr_ids first..first+n-1 in order, each a success. */
static void expect_done(struct kr_vqp *v, uint64_t first, int n, uint32_t flags)
{
	struct kr_wc wc[2 * N];

	CHECK(n <= 2 * N);
	CHECK_EQ(vq_wait(v, wc, n), n);
	for (int i = 0; i < n; i++) {
		CHECK_EQ(wc[i].wr_id, first + (uint64_t)i);
		CHECK_EQ(wc[i].status, KR_WC_SUCCESS);
		CHECK_EQ(wc[i].flags & flags, flags);
	}
	CHECK_EQ(kr_poll(v, wc, 1), 0);
}

static void post_write(struct kr_vqp *v, uint32_t i, uint64_t val, uint64_t wr_id, uint32_t flags)
{
	src[i] = val;
	CHECK_OK(kr_post_write(v, &src[i], 8, (uintptr_t)&remote[i], key.rkey, wr_id, flags));
}

static void credits_back(struct kr_vqp *v)
{
	struct kr_vqp_attr attr;

	CHECK_OK(kr_vqp_query(v, &attr));
	CHECK_EQ(attr.credits_used, 0);
}

/* 1: nothing goes out until a post without KR_POST_MORE; then all, in order. */
static void batch_one_doorbell(struct kr_vqp *v)
{
	memset(remote, 0, 2 * N * 8);
	for (uint32_t i = 0; i + 1 < N; i++)
		post_write(v, i, 0x1000 + i, 10 + i, KR_POST_MORE);
	usleep(50000);
	CHECK(!vq_cqe_written(v->dci->cq, 0));
	for (uint32_t i = 0; i + 1 < N; i++)
		CHECK_EQ(remote[i], 0);
	post_write(v, N - 1, 0x1000 + N - 1, 10 + N - 1, 0);
	expect_done(v, 10, N, 0);
	for (uint32_t i = 0; i < N; i++)
		CHECK_EQ(remote[i], 0x1000 + i);
	credits_back(v);
}

/* 2: the batch is never closed; the poll that finds nothing rings it. */
static void batch_left_open(struct kr_vqp *v)
{
	struct kr_wc wc;

	for (uint32_t i = 0; i < 4; i++)
		post_write(v, i, 0x2000 + i, 20 + i, KR_POST_MORE);
	CHECK(!vq_cqe_written(v->dci->cq, 0));
	CHECK_EQ(kr_poll(v, &wc, 1), 0); /* found nothing: rings */
	expect_done(v, 20, 4, 0);
	for (uint32_t i = 0; i < 4; i++)
		CHECK_EQ(remote[i], 0x2000 + i);
	credits_back(v);
}

/* 3: a's requests go with b's doorbell; each vQP gets its own completions. */
static void batch_two_vqps(struct kr_vqp *a, struct kr_vqp *b)
{
	for (uint32_t i = 0; i < 3; i++)
		post_write(a, i, 0x3000 + i, 30 + i, KR_POST_MORE);
	post_write(b, 3, 0x3003, 33, 0);
	expect_done(b, 33, 1, 0);
	expect_done(a, 30, 3, 0);
	for (uint32_t i = 0; i < 4; i++)
		CHECK_EQ(remote[i], 0x3000 + i);
	credits_back(a);
	credits_back(b);
}

/* 4: KR_POST_MORE until the credits are gone, then poll them back. */
static void batch_past_credits(struct kr_vqp *v)
{
	uint32_t posted = 0;
	int rc;

	for (;; posted++) {
		src[posted % (2 * N)] = posted;
		rc = kr_post_write(v, &src[posted % (2 * N)], 8, (uintptr_t)&remote[posted % N],
				   key.rkey, 40 + posted, KR_POST_MORE);
		if (rc)
			break;
	}
	CHECK_EQ(rc, -EAGAIN);
	CHECK(posted > 0);
	expect_done(v, 40, (int)posted, 0);
	credits_back(v);
}

/* 5: b's good, a's bad rkey, b's good, one doorbell: the error stays a's. */
static void batch_error(struct kr_vqp *a, struct kr_vqp *b)
{
	struct kr_wc wc;

	post_write(b, 0, 0x5000, 50, KR_POST_MORE);
	src[1] = 0x5001;
	/* the key's variant byte wrong: the same MKEY, never another live key */
	CHECK_OK(
	    kr_post_write(a, &src[1], 8, (uintptr_t)&remote[1], key.rkey ^ 0x5a, 51, KR_POST_MORE));
	post_write(b, 2, 0x5002, 52, 0);
	CHECK_EQ(vq_wait(a, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, 51);
	CHECK(wc.status != KR_WC_SUCCESS);
	CHECK_EQ(vq_wait(b, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, 50);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	expect_done(b, 52, 1, KR_WC_F_REPOSTED); /* behind the error: flushed, posted again */
	CHECK_EQ(remote[0], 0x5000);
	CHECK_EQ(remote[2], 0x5002);
	CHECK_EQ(kr_post_write(a, src, 8, (uintptr_t)remote, key.rkey, 53, 0), -EIO);
}

/* 6: a's open batch goes out at its disconnect; b on the same DCI carries on. */
static void batch_disconnect(struct kr_vqp *a, struct kr_vqp *b)
{
	struct kr_vq_dci *d = b->dci;

	CHECK(a->dci == d);
	for (uint32_t i = 0; i < 3; i++)
		post_write(a, i, 0x6000 + i, 60 + i, KR_POST_MORE);
	CHECK_OK(kr_disconnect(a));
	for (double t0 = kp_now_ms(); remote[2] != 0x6002;)
		if (kp_now_ms() - t0 > 10000)
			KR_FAIL("a disconnected vQP's batch never went out");
	post_write(b, 3, 0x6003, 63, 0);
	expect_done(b, 63, 1, 0); /* the orphans' completions on the way went to no one */
	CHECK_EQ(d->head, d->tail);
	CHECK_EQ(remote[0], 0x6000);
	CHECK_EQ(remote[1], 0x6001);
	credits_back(b);
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis", "4", "--jobs", "1", NULL};
	struct kr_connect_opts o = {.credits = 2 * N};
	struct kr_vqp *a, *b;
	struct kp_keeper k;
	struct kr_ctx *ctx;
	struct kr_mr *mr;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	remote = kr_malloc(ctx, 2 * N * 8);
	src = kr_malloc(ctx, 2 * N * 8);
	CHECK(remote && src);
	mr = kr_reg_mr(ctx, remote, 2 * N * 8,
		       KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	a = kr_connect(ctx, KR_NODE_SELF, &o);
	b = kr_connect(ctx, KR_NODE_SELF, &o);
	CHECK(a && b);
	CHECK(a->dci == b->dci); /* one DCI, one doorbell */

	/* 7 first: a refused request leaves nothing behind for the batches */
	CHECK_EQ(kr_post_write(a, src, 8, (uintptr_t)remote, key.rkey, 1, KR_POST_MORE | 1u << 3),
		 -EINVAL);
	CHECK_EQ(a->dci->tail, a->dci->head);

	batch_one_doorbell(a);
	batch_left_open(a);
	batch_two_vqps(a, b);
	batch_past_credits(a);
	batch_error(a, b);
	CHECK_OK(kr_disconnect(a)); /* in error: a fresh one for the disconnect case */
	a = kr_connect(ctx, KR_NODE_SELF, &o);
	CHECK(a != NULL);
	batch_disconnect(a, b);

	CHECK_OK(kr_disconnect(b));
	kr_dereg_mr(mr);
	kr_detach(ctx);
	kp_keeper_stop(&k, SIGTERM);
	kp_keeper_fini(&k);
	KR_PASS("virtqp_batch");
}
