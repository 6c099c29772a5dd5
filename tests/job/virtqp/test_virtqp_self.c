/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A job connects a virtual QP to its own node (KR_NODE_SELF: the keeper's
 * DCT) and checks READ, WRITE (inline, with immediate), CAS and FAA with
 * their payloads; then the request checks: every malformed request is
 * refused with -EINVAL and nothing is posted (the DCI's producer index and
 * the vQP's ring do not move); a request beyond the vQP's credits gets
 * -EAGAIN and nothing is overwritten; credits beyond what the thread's DCI
 * has left put the vQP on another DCI, beyond a whole DCI's are refused
 * (EINVAL); a vQP disconnected with requests in flight gives their
 * credits back when their CQEs arrive, and no completion of it reaches
 * another vQP. Two vQPs of one thread to one target share one DCI lease;
 * another thread gets its own.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define LEN 4096

static int one_sided(struct kr_ctx *ctx, struct kr_vqp *v, uint8_t *src, uint8_t *dst, uint8_t *chk,
		     uint32_t rkey)
{
	uint64_t *atom = (uint64_t *)(dst + LEN), *old = (uint64_t *)(chk + LEN);
	uint8_t inl[100];
	struct kr_wc wc;

	(void)ctx;
	for (int i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	CHECK_OK(kr_post_write(v, src, LEN, (uintptr_t)dst, rkey, 1, 0));
	CHECK_EQ(vq_wait(v, &wc, 1), 1);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 1);
	CHECK_EQ(wc.opcode, KR_WC_OP_WRITE);
	CHECK_EQ(wc.byte_len, LEN);
	CHECK(memcmp(src, dst, LEN) == 0);

	memset(chk, 0, LEN);
	CHECK_OK(kr_post_read(v, chk, LEN, (uintptr_t)dst, rkey, 2, 0));
	CHECK_EQ(vq_wait(v, &wc, 1), 1);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(wc.opcode, KR_WC_OP_READ);
	CHECK(memcmp(chk, dst, LEN) == 0);

	/* inline from any memory (a stack buffer), copied at post time */
	memset(inl, 0x5a, sizeof(inl));
	CHECK_OK(kr_post_write(v, inl, sizeof(inl), (uintptr_t)dst, rkey, 3, KR_POST_INLINE));
	memset(inl, 0, sizeof(inl));
	CHECK_OK(vq_wait_ok(v, 3));
	for (size_t i = 0; i < sizeof(inl); i++)
		CHECK_EQ(dst[i], 0x5a);

	CHECK_OK(kr_post_write_imm(v, src, 64, (uintptr_t)dst + 512, rkey, 0xabcd, 4, 0));
	CHECK_EQ(vq_wait(v, &wc, 1), 1);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(wc.opcode, KR_WC_OP_WRITE_IMM);
	CHECK(wc.flags & KR_WC_F_IMM);
	CHECK_EQ(wc.imm, 0xabcd);

	*atom = 5;
	CHECK_OK(kr_post_cas(v, old, (uintptr_t)atom, rkey, 5, 9, 5, 0));
	CHECK_OK(vq_wait_ok(v, 5));
	CHECK_EQ(*old, 5);
	CHECK_EQ(*atom, 9);
	CHECK_OK(kr_post_cas(v, old, (uintptr_t)atom, rkey, 5, 11, 6, 0)); /* no swap */
	CHECK_OK(vq_wait_ok(v, 6));
	CHECK_EQ(*old, 9);
	CHECK_EQ(*atom, 9);
	CHECK_OK(kr_post_faa(v, old, (uintptr_t)atom, rkey, 3, 7, 0));
	CHECK_EQ(vq_wait(v, &wc, 1), 1);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(wc.opcode, KR_WC_OP_FAA);
	CHECK_EQ(*old, 9);
	CHECK_EQ(*atom, 12);
	return 0;
}

static int malformed(struct kr_ctx *ctx, struct kr_vqp *v, uint8_t *src, uint8_t *dst,
		     uint32_t rkey)
{
	struct kr_vq_dci *d = v->dci;
	uint32_t pi = d->qp->sq_pi;
	uint64_t tail = d->tail;
	uint8_t stack[64];
	uint8_t *heap_end = (uint8_t *)ctx->heap + ctx->heap_len;
	uint64_t r = (uintptr_t)dst;

	CHECK_ERR(kr_post_read(NULL, src, 8, r, rkey, 0, 0), -EINVAL);
	CHECK_ERR(kr_post_read(v, NULL, 8, r, rkey, 0, 0), -EINVAL);
	CHECK_ERR(kr_post_read(v, src, 0, r, rkey, 0, 0), -EINVAL); /* length */
	CHECK_ERR(kr_post_read(v, src, KR_POST_MAX_LEN + 1, r, rkey, 0, 0), -EINVAL);
	CHECK_ERR(kr_post_write(v, src, 8, r, rkey, 0, 1u << 7), -EINVAL);	 /* flags */
	CHECK_ERR(kr_post_read(v, src, 8, r, rkey, 0, KR_POST_INLINE), -EINVAL); /* inline READ */
	CHECK_ERR(kr_post_write(v, src, KR_POST_MAX_INLINE + 1, r, rkey, 0, KR_POST_INLINE),
		  -EINVAL);							   /* inline size */
	CHECK_ERR(kr_post_write(v, stack, sizeof(stack), r, rkey, 0, 0), -EINVAL); /* not our MR */
	CHECK_ERR(kr_post_read(v, heap_end - 8, 16, r, rkey, 0, 0), -EINVAL);	   /* past the MR */
	CHECK_ERR(kr_post_read(v, heap_end, 8, r, rkey, 0, 0), -EINVAL);
	CHECK_ERR(kr_post_read(v, src, 16, UINT64_MAX - 8, rkey, 0, 0), -EINVAL);    /* wraps */
	CHECK_ERR(kr_post_faa(v, (uint64_t *)(src + 4), r, rkey, 1, 0, 0), -EINVAL); /* align */
	CHECK_ERR(kr_post_cas(v, (uint64_t *)src, r + 4, rkey, 1, 2, 0, 0), -EINVAL);
	CHECK_ERR(kr_post_faa(v, (uint64_t *)stack, r, rkey, 1, 0, 0), -EINVAL);
	CHECK_ERR(kr_post_faa(v, (uint64_t *)src, r, rkey, 1, 0, KR_POST_INLINE), -EINVAL);
	CHECK_ERR(kr_post_send(NULL, src, 8, 0, 0), -EINVAL);
	CHECK_ERR(kr_post_send(v, src, 0, 0, 0), -EINVAL);
	CHECK_ERR(kr_post_send(v, src, 8, 0, 0), -EDESTADDRREQ); /* connected without a port */
	CHECK_ERR(kr_post_send_imm(v, src, 8, 7, 0, 0), -EDESTADDRREQ);
	CHECK_ERR(kr_post_recv(NULL, src, 8, 0), -EINVAL);
	CHECK_EQ(d->qp->sq_pi, pi);
	CHECK_EQ(d->tail, tail);
	{
		struct kr_wc wc;

		CHECK_EQ(kr_poll(v, &wc, 1), 0);
		CHECK_ERR(kr_poll(v, NULL, 1), -EINVAL);
		CHECK_ERR(kr_poll(NULL, &wc, 1), -EINVAL);
	}
	return 0;
}

static int credits(struct kr_ctx *ctx, struct kr_vqp *v1, uint8_t *src, uint8_t *dst, uint32_t rkey)
{
	struct kr_connect_opts o = {.credits = 4};
	struct kr_vqp_attr a;
	struct kr_wc wc[2];
	struct kr_vqp *v;
	uint32_t pi;

	v = kr_connect(ctx, KR_NODE_SELF, &o);
	CHECK(v != NULL);
	CHECK(v->dci == v1->dci); /* the same target: the DCI already serving it */
	CHECK_OK(kr_vqp_query(v, &a));
	CHECK_EQ(a.transport, KR_VQP_DC);
	CHECK_EQ(a.state, KR_VQP_RTS);
	CHECK_EQ(a.credits, 4);
	CHECK_EQ(a.peer, KR_NODE_SELF);
	/* an 8-byte READ takes 2 WQEBBs (ctrl, DC address vector, raddr, data) */
	CHECK_EQ(kr_vq_wqebbs(KR_WR_RDMA_READ, false, 8, 1), 2);
	CHECK_OK(kr_post_read(v, src, 8, (uintptr_t)dst, rkey, 10, 0));
	CHECK_OK(kr_post_read(v, src + 8, 8, (uintptr_t)dst, rkey, 11, 0));
	pi = v->dci->qp->sq_pi;
	CHECK_ERR(kr_post_read(v, src + 16, 8, (uintptr_t)dst, rkey, 12, 0), -EAGAIN);
	CHECK_EQ(v->dci->qp->sq_pi, pi);
	/* credits come back only when the completions are taken */
	CHECK_EQ(vq_wait(v, wc, 2), 2);
	CHECK_EQ(wc[0].wr_id, 10);
	CHECK_EQ(wc[1].wr_id, 11);
	CHECK_OK(kr_post_read(v, src + 16, 8, (uintptr_t)dst, rkey, 12, 0));
	CHECK_OK(vq_wait_ok(v, 12));

	/*
	 * The DCI's send queue is shared out: more than what is left goes on
	 * another DCI of the thread (test_virtqp_policy runs out of them);
	 * more than a whole DCI's, nowhere.
	 */
	{
		struct kr_connect_opts big = {.credits = v1->dci->credits_free + 1};
		struct kr_connect_opts whole = {.credits = v1->dci->cnt + 1};
		struct kr_connect_opts huge = {.credits = 100000};
		struct kr_connect_opts bad = {.flags = 1};
		struct kr_vqp *vb = kr_connect(ctx, KR_NODE_SELF, &big);

		CHECK(vb != NULL);
		CHECK(vb->dci != v1->dci);
		CHECK_OK(kr_disconnect(vb));
		errno = 0;
		CHECK(kr_connect(ctx, KR_NODE_SELF, &whole) == NULL);
		CHECK_EQ(errno, EINVAL);
		CHECK(kr_connect(ctx, KR_NODE_SELF, &huge) == NULL);
		CHECK_EQ(errno, EINVAL);
		CHECK(kr_connect(ctx, KR_NODE_SELF, &bad) == NULL);
		CHECK_EQ(errno, EINVAL);
		CHECK(kr_connect(NULL, KR_NODE_SELF, NULL) == NULL);
		CHECK_EQ(errno, EINVAL);
	}
	CHECK_OK(kr_disconnect(v));
	CHECK_ERR(kr_disconnect(NULL), -EINVAL);

	/* a vQP disconnected with requests in flight: their credits come home with their CQEs */
	{
		struct kr_vq_dci *d = v1->dci;
		uint32_t before = d->credits_free;
		struct kr_wc w;

		v = kr_connect(ctx, KR_NODE_SELF, &o);
		CHECK(v != NULL);
		CHECK_EQ(d->credits_free, before - 4);
		CHECK_OK(kr_post_read(v, src, 8, (uintptr_t)dst, rkey, 20, 0));
		CHECK_OK(kr_post_read(v, src + 8, 8, (uintptr_t)dst, rkey, 21, 0));
		CHECK_OK(kr_disconnect(v));
		for (double t0 = kp_now_ms(); d->credits_free != before;) {
			CHECK(kr_poll(v1, &w, 1) == 0); /* nothing of the other vQP arrives here */
			if (kp_now_ms() - t0 > 10000)
				KR_FAIL("credits of a disconnected vQP never came back");
		}
	}
	return 0;
}

struct thr_arg {
	struct kr_ctx *ctx;
	struct kr_vq_dci *main_dci;
	uint8_t *src, *dst;
	uint32_t rkey;
	int rc;
};

/* A second thread gets its own DCI at its first connect. */
static void *other_thread(void *p)
{
	struct thr_arg *a = p;
	struct kr_vqp *v = kr_connect(a->ctx, KR_NODE_SELF, NULL);

	a->rc = -1;
	if (!v || v->dci == a->main_dci)
		return NULL;
	memset(a->src, 0x77, 256);
	if (kr_post_write(v, a->src, 256, (uintptr_t)a->dst, a->rkey, 42, 0) || vq_wait_ok(v, 42) ||
	    a->dst[255] != 0x77 || kr_disconnect(v))
		return NULL;
	a->rc = 0;
	return NULL;
}

struct fresh_arg {
	struct kr_ctx *ctx;
	uint8_t *src, *dst;
	uint32_t rkey;
	struct kr_lease lease; /* of the DCI its first connect got */
	int rc;
};

/* A fresh thread's first connect: a WRITE through it, then its last disconnect. */
static void *fresh_thread(void *p)
{
	struct fresh_arg *a = p;
	struct kr_vqp *v = kr_connect(a->ctx, KR_NODE_SELF, NULL);

	a->rc = -1;
	if (!v)
		return NULL;
	a->lease = v->dci->lease;
	memset(a->src, 0x78, 256);
	if (kr_post_write(v, a->src, 256, (uintptr_t)a->dst, a->rkey, 43, 0) || vq_wait_ok(v, 43) ||
	    a->dst[255] != 0x78 || kr_disconnect(v))
		return NULL;
	a->rc = 0;
	return NULL;
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "1",
					   "--heap-mb", "4", "--hugepages", "64", NULL};
	struct kr_ctx_attr ca;
	struct kr_lease lease;
	struct kp_keeper k;
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	struct kr_mr *mr;
	struct kr_mr_key key;
	uint8_t *src, *dst, *chk;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	src = kr_malloc(ctx, 2 * LEN);
	dst = kr_malloc(ctx, 2 * LEN);
	chk = kr_malloc(ctx, 2 * LEN);
	CHECK(src && dst && chk);
	mr = kr_reg_mr(ctx, dst, 2 * LEN,
		       KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE |
			   KR_MR_REMOTE_ATOMIC);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));

	v = kr_connect(ctx, KR_NODE_SELF, NULL);
	CHECK(v != NULL);
	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.dci_leases, 1);
	CHECK_EQ(ca.flags, KR_CTX_F_HOST_CPU); /* the sim runs on this host's cores */
	CHECK_OK(one_sided(ctx, v, src, dst, chk, key.rkey));
	CHECK_OK(malformed(ctx, v, src, dst, key.rkey));
	CHECK_OK(credits(ctx, v, src, dst, key.rkey));
	{
		struct thr_arg ta = {ctx, v->dci, src, dst, key.rkey, -1};
		pthread_t t;

		CHECK_OK(pthread_create(&t, NULL, other_thread, &ta));
		CHECK_OK(pthread_join(t, NULL));
		CHECK_OK(ta.rc);
	}
	lease = v->dci->lease;
	/* the last vQP: the process keeps the DCI (the other thread's too) for its next thread */
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.dci_leases, 2);
	{
		/* a new thread's first connect takes one: no lease from the keeper */
		pthread_t t;
		struct fresh_arg fa = {ctx, src, dst, key.rkey, {0}, -1};

		CHECK_OK(pthread_create(&t, NULL, fresh_thread, &fa));
		CHECK_OK(pthread_join(t, NULL));
		CHECK_OK(fa.rc);
		CHECK_EQ(kr_seg_dci(ctx->seg, ctx->tenant, fa.lease.index)->gen, fa.lease.gen);
		CHECK_EQ(kr_seg_dci(ctx->seg, ctx->tenant, fa.lease.index)->owner_job,
			 ctx->job + 1);
	}
	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.dci_leases, 2);
	CHECK_EQ(kr_seg_dci(ctx->seg, ctx->tenant, lease.index)->gen, lease.gen);
	CHECK(kr_vq_spare_held() >= 1); /* the other thread's DCI, kept */
	/* with no spare kept, a last disconnect gives its DCI back */
	kr_vq_spare_max(0);
	v = kr_connect(ctx, KR_NODE_SELF, NULL);
	CHECK(v != NULL);
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.dci_leases, 1);

	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	/* the spares went with the attachment (a provider unloaded after its
	 * detach, as libfabric unloads libkrcore-fi.so, would have lost them) */
	CHECK_EQ(kr_vq_spare_held(), 0);
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("virtqp_self");
}
