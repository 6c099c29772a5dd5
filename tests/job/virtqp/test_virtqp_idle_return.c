/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DCI given back idle goes back FREE with no reset, and its next holder
 * goes on from the counters the last one left (keeper_dci_idle.c). Two
 * keepers on sim hosts over UDP loopback, every wire dropping 1 %,
 * duplicating 1 % and reordering 2 % of packets; node 1's job keeps no spare
 * DCI (kr_vq_spare_max(0)), so each disconnect gives its thread's DCI back:
 *
 *   rounds  connect to node 2, WRITE a fresh pattern into node 2's memory,
 *           READ it back and check it, disconnect. Every DCI comes back
 *           idle: the keeper's idle_returns grows by one per round and its
 *           resets not at all, and every round's bytes are right although
 *           each holder starts at the send counter the last one left (the
 *           keeper has 4 DCIs: they go round).
 *   unused  a DCI leased and given back with nothing posted (a ready-ring
 *           offer a thread never used), before and after rounds: no reset.
 *   error   a READ under a key without rights fails: that DCI comes back
 *           with no idle claim (the job saw the error) and is reset; the
 *           one that replaced it comes back idle.
 *   unread  the job claims idle while a completion sits unread in the
 *           DCI's CQ (a READ posted, its completion not polled): the
 *           keeper's look at the rings disagrees and resets it. Before,
 *           unknown release flags: refused (library and keeper), lease kept.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_two_hosts.h"

#define LEN    4096
#define BLOCK  64
#define ROUNDS 60

static int side_b(const struct kp_keeper *kb, int wfd, int rfd)
{
	return vq_lend_zeroed(kb, wfd, rfd, LEN);
}

/* Wait up to 10 s for the keeper's reset count to pass n. */
static int resets_past(const struct kr_ctx *ctx, uint64_t n)
{
	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 10000; usleep(1000))
		if (__atomic_load_n(&ctx->seg->resets, __ATOMIC_RELAXED) > n)
			return 0;
	return -ETIMEDOUT;
}

static int rounds(struct kr_ctx *ctx, const struct vq_lent *b, uint8_t *src, uint8_t *dst)
{
	uint64_t idle0 = ctx->seg->idle_returns, resets0 = ctx->seg->resets;

	for (uint32_t r = 0; r < ROUNDS; r++) {
		uint64_t off = (uint64_t)(r % (LEN / BLOCK)) * BLOCK;
		struct kr_vqp *v = kr_connect(ctx, 2, NULL);

		CHECK(v != NULL);
		for (int i = 0; i < BLOCK; i++)
			src[i] = (uint8_t)(r * 31 + (uint32_t)i);
		memset(dst, 0, BLOCK);
		CHECK_OK(kr_post_write(v, src, BLOCK, b->addr + off, b->rkey, 1, 0));
		CHECK_OK(vq_wait_ok(v, 1));
		CHECK_OK(kr_post_read(v, dst, BLOCK, b->addr + off, b->rkey, 2, 0));
		CHECK_OK(vq_wait_ok(v, 2));
		CHECK(memcmp(src, dst, BLOCK) == 0);
		CHECK_OK(kr_disconnect(v));
	}
	printf("rounds: %u, %llu DCIs back idle, %llu resets\n", ROUNDS,
	       (unsigned long long)(ctx->seg->idle_returns - idle0),
	       (unsigned long long)(ctx->seg->resets - resets0));
	CHECK_EQ(ctx->seg->idle_returns - idle0, ROUNDS);
	usleep(20 * 1000); /* a reset would be the worker's, a moment later */
	CHECK_EQ(ctx->seg->resets, resets0);
	return 0;
}

static int error(struct kr_ctx *ctx, const struct vq_lent *b, uint8_t *dst)
{
	uint64_t idle0 = ctx->seg->idle_returns, resets0 = ctx->seg->resets;
	struct kr_vqp *v = kr_connect(ctx, 2, NULL);
	struct kr_wc wc;

	CHECK(v != NULL);
	CHECK_OK(kr_post_read(v, dst, BLOCK, b->addr, b->rkey ^ 0x5a5a00, 1, 0));
	CHECK_EQ(vq_wait(v, &wc, 1), 1);
	CHECK(wc.status != KR_WC_SUCCESS);
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(resets_past(ctx, resets0)); /* the failed DCI */
	/* (the DCI that replaced it on the vQP layer's recovery came back idle) */
	CHECK(ctx->seg->idle_returns - idle0 <= 1);
	return 0;
}

static int unread(struct kr_ctx *ctx, const struct vq_lent *b, uint8_t *dst)
{
	uint64_t idle0 = ctx->seg->idle_returns, resets0 = ctx->seg->resets;
	struct kr_devx_sge sge = {
	    .addr = (uintptr_t)dst, .length = BLOCK, .lkey = kr_job_heap_lkey(ctx)};
	struct kr_devx_wr wr = {.wr_id = 1,
				.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = b->addr,
				.rkey = b->rkey,
				.av = &b->av};
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
	struct kr_lease l;

	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l));
	CHECK_OK(kr_job_dci_qp(ctx, &l, &qp, &cq));
	CHECK_OK(kr_devx_qp_post_send(qp, &wr));
	kr_devx_qp_ring(qp);
	for (double t0 = kp_now_ms(); !vq_cqe_written(cq, 0) && kp_now_ms() - t0 < 10000;)
		usleep(100);
	CHECK(vq_cqe_written(cq, 0));
	/* unknown flags: refused by the library, and by the keeper when sent raw; the lease stays
	 */
	CHECK_ERR(kr_job_lease_give_back(ctx, &l, 0x80), -EINVAL);
	{
		struct kr_msg_lease rel = {
		    .kind = KR_LEASE_DCI, .index = l.index, .gen = l.gen, .flags = 0x80};
		struct kr_msg_reply rep;

		kr_msg_init(&rel.hdr, KR_MSG_RELEASE, sizeof(rel), 0);
		pthread_mutex_lock(&ctx->lock);
		CHECK_ERR(kr_job_call(ctx, &rel, sizeof(rel), &rep), -EINVAL);
		pthread_mutex_unlock(&ctx->lock);
	}
	CHECK_OK(kr_job_lease_give_back(ctx, &l, KR_RELEASE_F_IDLE)); /* not so */
	CHECK_OK(resets_past(ctx, resets0));
	CHECK_EQ(ctx->seg->idle_returns, idle0);
	return 0;
}

/* A DCI leased and given back unused (as a ready-ring offer a thread never posted on). */
static int unused(struct kr_ctx *ctx)
{
	uint64_t idle0 = ctx->seg->idle_returns, resets0 = ctx->seg->resets;
	struct kr_lease l;

	for (int i = 0; i < 8; i++) {
		CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l));
		CHECK_OK(kr_job_lease_give_back(ctx, &l, KR_RELEASE_F_IDLE));
	}
	CHECK_EQ(ctx->seg->idle_returns - idle0, 8);
	usleep(20 * 1000);
	CHECK_EQ(ctx->seg->resets, resets0);
	return 0;
}

int main(void)
{
	struct vq_two_hosts h;
	struct kr_ctx *ctx;
	uint8_t *src, *dst;

	vq_two_hosts_start(&h, ",drop=0.01,dup=0.01,reorder=0.02", NULL, side_b);
	kr_vq_spare_max(0); /* every thread's last disconnect gives its DCI back */
	ctx = kp_attach(&h.a, 5000);
	CHECK(ctx != NULL);
	CHECK(ctx->seg->trusted);
	src = kr_malloc(ctx, BLOCK);
	dst = kr_malloc(ctx, BLOCK);
	CHECK(src && dst);
	CHECK_OK(unused(ctx));
	CHECK_OK(rounds(ctx, &h.lent, src, dst));
	CHECK_OK(unused(ctx));
	CHECK_OK(error(ctx, &h.lent, dst));
	CHECK_OK(unread(ctx, &h.lent, dst));
	CHECK_OK(rounds(ctx, &h.lent, src, dst)); /* and on after the resets */
	kr_free(ctx, src);
	kr_free(ctx, dst);
	CHECK_OK(kr_detach(ctx));
	vq_two_hosts_join(&h);
	vq_two_hosts_stop(&h);
	KR_PASS("virtqp_idle_return");
}
