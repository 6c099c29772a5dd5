/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Instructions per post+poll of one 8-byte request (READ by default; argv[1]
 * "write": an inline WRITE, "cas": a compare-and-swap, "batch": 16 READs
 * posted with one doorbell, KR_POST_MORE on all but the last, and polled
 * with one call; "send": an 8-byte SEND to a port of this node, its send
 * completion, its receive completion and the buffer posted again: through
 * a vQP connected to the port (kr_post_send, kr_poll, kr_poll_recv and
 * kr_post_recv: the port's credits included) against the raw DCI sending
 * to another port's DC target and taking the message from that port's CQ
 * and SRQ itself), vQP vs raw DCI, for callgrind (scripts/insn.sh): each op
 * posts, waits (without polling) until the CQE is visible (a batch's last),
 * then calls the poll function exactly once, so an empty poll is never
 * counted. The functions to collect are vq_post*, vq_poll and vq_recv (vQP), or
 * raw_post*, raw_poll and raw_recv (the raw DCI: it builds its kr_devx_wr from the same
 * arguments a kr_post_* takes, as a verbs user builds an ibv_send_wr, and
 * posts it with kr_devx_qp_post_send); the wait between them, whose spin
 * count depends on timing, is outside both:
 *   valgrind --tool=callgrind --toggle-collect='vq_post*' --toggle-collect=vq_poll
 *     bench_virtqp_insn
 * then the total Ir / 2000 is one post+poll (scripts/insn.sh does this for
 * both paths, scripts/krmin-insn.sh under kmod-min). Without valgrind it
 * checks that both paths work (exit 0).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define OPS	  2000
#define BATCH	  16	/* 16 8-byte READs: 32 WQEBBs, a vQP's default credits */
#define PORT_VQ	  7700u /* "send": the vQP's port, and the raw DCI's */
#define PORT_RAW  7701u
#define RECV_BUFS 16u

/* The n-th CQE from the consumer index is written (nothing consumed). */
static void wait_ready(const struct kr_devx_cq *cq, uint32_t n)
{
	for (double t0 = kp_now_ms(); !vq_cqe_written(cq, n - 1);)
		if (kp_now_ms() - t0 > 10000)
			KR_FAIL("no completion");
}

/* The collected functions: a post, and a poll that finds its completion. */
enum insn_op { OP_READ, OP_WRITE, OP_CAS, OP_BATCH, OP_SEND };
static enum insn_op g_op;

/* "send": the two ports, their receive buffers, and the vQP to the first */
static struct kr_port *g_pv, *g_pr;
static uint8_t *g_rbuf;
static struct kr_vqp *g_vs;

/* One collected post function per request (callgrind: --toggle-collect='vq_post*'). */
__attribute__((noinline)) int vq_post_read(struct kr_vqp *v, void *l, uint64_t r, uint32_t k);
__attribute__((noinline)) int vq_post_read(struct kr_vqp *v, void *l, uint64_t r, uint32_t k)
{
	return kr_post_read(v, l, 8, r, k, 1, 0);
}

__attribute__((noinline)) int vq_post_write(struct kr_vqp *v, void *l, uint64_t r, uint32_t k);
__attribute__((noinline)) int vq_post_write(struct kr_vqp *v, void *l, uint64_t r, uint32_t k)
{
	return kr_post_write(v, l, 8, r, k, 1, KR_POST_INLINE);
}

__attribute__((noinline)) int vq_post_cas(struct kr_vqp *v, void *l, uint64_t r, uint32_t k);
__attribute__((noinline)) int vq_post_cas(struct kr_vqp *v, void *l, uint64_t r, uint32_t k)
{
	return kr_post_cas(v, l, r, k, 0, 0, 1, 0);
}

/* A batch: one doorbell, rung by the last post (8 bytes apart in local and remote). */
__attribute__((noinline)) int vq_post_send(struct kr_vqp *v, void *l, uint64_t r, uint32_t k);
__attribute__((noinline)) int vq_post_send(struct kr_vqp *v, void *l, uint64_t r, uint32_t k)
{
	(void)v, (void)r, (void)k;
	return kr_post_send(g_vs, l, 8, 1, 0);
}

__attribute__((noinline)) int vq_post_batch(struct kr_vqp *v, void *l, uint64_t r, uint32_t k);
__attribute__((noinline)) int vq_post_batch(struct kr_vqp *v, void *l, uint64_t r, uint32_t k)
{
	for (uint32_t i = 0; i < BATCH; i++) {
		int rc = kr_post_read(v, (uint8_t *)l + 8 * i, 8, r + 8 * i, k, i,
				      i + 1 < BATCH ? KR_POST_MORE : 0);

		if (rc)
			return rc;
	}
	return 0;
}

static int (*const vq_post[])(struct kr_vqp *, void *, uint64_t,
			      uint32_t) = {[OP_READ] = vq_post_read,
					   [OP_WRITE] = vq_post_write,
					   [OP_SEND] = vq_post_send,
					   [OP_CAS] = vq_post_cas,
					   [OP_BATCH] = vq_post_batch};

/* The message taken and its buffer posted again: what a receiver does per message. */
__attribute__((noinline)) int vq_recv(struct kr_port *p, struct kr_wc *wc);
__attribute__((noinline)) int vq_recv(struct kr_port *p, struct kr_wc *wc)
{
	int n = kr_poll_recv(p, wc, 1);

	if (n == 1 && kr_post_recv(p, g_rbuf + 8 * wc->wr_id, 8, wc->wr_id))
		return -1;
	return n;
}

__attribute__((noinline)) int raw_recv(struct kr_port *p, struct kr_devx_wc *wc, uint32_t lkey);
__attribute__((noinline)) int raw_recv(struct kr_port *p, struct kr_devx_wc *wc, uint32_t lkey)
{
	int n = kr_devx_cq_poll(&p->cq, wc, 1);

	if (n == 1) {
		struct kr_devx_sge sge = {.addr = (uintptr_t)(g_rbuf + 8 * (RECV_BUFS + wc->wr_id)),
					  .length = 8,
					  .lkey = lkey};

		if (kr_devx_srq_post_recv(&p->srq, &sge, 1, wc->wr_id))
			return -1;
	}
	return n;
}

__attribute__((noinline)) int vq_poll(struct kr_vqp *v, struct kr_wc *wc, int n);
__attribute__((noinline)) int vq_poll(struct kr_vqp *v, struct kr_wc *wc, int n)
{
	return kr_poll(v, wc, n);
}

/* The raw post builds its request from the same arguments as kr_post_*, as a verbs user does. */
__attribute__((noinline)) int raw_post(struct kr_devx_qp *qp, const struct kr_devx_sge *sge,
				       const struct kr_devx_dc_av *av, uint64_t r, uint32_t k);
__attribute__((noinline)) int raw_post(struct kr_devx_qp *qp, const struct kr_devx_sge *sge,
				       const struct kr_devx_dc_av *av, uint64_t r, uint32_t k)
{
	struct kr_devx_wr wr = {.wr_id = 1,
				.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = sge,
				.num_sge = 1,
				.remote_addr = r,
				.rkey = k,
				.av = av};
	int rc;

	if (g_op == OP_WRITE) {
		wr.opcode = KR_WR_RDMA_WRITE;
		wr.flags |= KR_WR_INLINE;
	} else if (g_op == OP_SEND) {
		wr.opcode = KR_WR_SEND;
	} else if (g_op == OP_CAS) {
		wr.opcode = KR_WR_ATOMIC_CS;
	}
	rc = kr_devx_qp_post_send(qp, &wr);
	if (!rc)
		kr_devx_qp_ring(qp);
	return rc;
}

/* A post list: each request built as kr_post_read's, one doorbell after the last. */
__attribute__((noinline)) int raw_post_batch(struct kr_devx_qp *qp, const struct kr_devx_sge *sge,
					     const struct kr_devx_dc_av *av, uint64_t r,
					     uint32_t k);
__attribute__((noinline)) int raw_post_batch(struct kr_devx_qp *qp, const struct kr_devx_sge *sge,
					     const struct kr_devx_dc_av *av, uint64_t r, uint32_t k)
{
	for (uint32_t i = 0; i < BATCH; i++) {
		struct kr_devx_sge s = {.addr = sge->addr + 8 * i, .length = 8, .lkey = sge->lkey};
		struct kr_devx_wr wr = {.wr_id = i,
					.opcode = KR_WR_RDMA_READ,
					.flags = KR_WR_SIGNALED,
					.sge = &s,
					.num_sge = 1,
					.remote_addr = r + 8 * i,
					.rkey = k,
					.av = av};
		int rc = kr_devx_qp_post_send(qp, &wr);

		if (rc)
			return rc;
	}
	kr_devx_qp_ring(qp);
	return 0;
}

__attribute__((noinline)) int raw_poll(struct kr_devx_cq *cq, struct kr_devx_wc *wc, int n);
__attribute__((noinline)) int raw_poll(struct kr_devx_cq *cq, struct kr_devx_wc *wc, int n)
{
	return kr_devx_cq_poll(cq, wc, n);
}

/* Not collected: the wait in between spins for as long as the engine takes. */
static uint32_t per_op(void)
{
	return g_op == OP_BATCH ? BATCH : 1;
}

static int vq_post_poll(struct kr_vqp *v, void *l, uint64_t r, uint32_t k)
{
	uint32_t n = per_op();
	struct kr_wc wc[BATCH];

	if (g_op == OP_SEND)
		v = g_vs;
	if (vq_post[g_op](v, l, r, k))
		return -1;
	if (g_op == OP_SEND) {
		struct kr_wc rwc;

		/* the message in, then its send completion behind any credit READ's */
		wait_ready(&g_pv->cq, 1);
		if (vq_recv(g_pv, &rwc) != 1 || rwc.status != KR_WC_SUCCESS || rwc.byte_len != 8)
			return -1;
		wait_ready(v->dci->cq, 1 + v->snd->pending);
	} else {
		wait_ready(v->dci->cq, n);
	}
	if (vq_poll(v, wc, (int)n) != (int)n)
		return -1;
	for (uint32_t i = 0; i < n; i++) /* in posting order, each its own */
		if (wc[i].status != KR_WC_SUCCESS || wc[i].wr_id != (n > 1 ? i : 1))
			return -1;
	return 0;
}

static int raw_post_poll(struct kr_devx_qp *qp, struct kr_devx_cq *cq,
			 const struct kr_devx_sge *sge, const struct kr_devx_dc_av *av, uint64_t r,
			 uint32_t k)
{
	uint32_t n = per_op();
	struct kr_devx_wc wc[BATCH];

	if ((g_op == OP_BATCH ? raw_post_batch : raw_post)(qp, sge, av, r, k))
		return -1;
	if (g_op == OP_SEND) {
		struct kr_devx_wc rwc;

		wait_ready(&g_pr->cq, 1);
		if (raw_recv(g_pr, &rwc, sge->lkey) != 1 || rwc.status != KR_WC_SUCCESS ||
		    rwc.byte_len != 8)
			return -1;
	}
	wait_ready(cq, n);
	if (raw_poll(cq, wc, (int)n) != (int)n)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (wc[i].status != KR_WC_SUCCESS || wc[i].wr_id != (n > 1 ? i : 1))
			return -1;
	return 0;
}

/*
 * "send": bind the two ports and post their buffers, connect a vQP to the
 * first, and aim av (the raw DCI's) at the second's DC target: this
 * binding's DC key, as krbench send's raw mode.
 */
static void send_setup(struct kr_ctx *ctx, struct kr_devx_dc_av *av)
{
	struct kr_bind_opts bo = {.senders = 1, .window = RECV_BUFS};
	struct kr_connect_opts co = {.port = PORT_VQ};
	struct kr_zone_ep ep;
	uint32_t idx;

	g_rbuf = kr_malloc(ctx, 8 * 2 * RECV_BUFS);
	g_pv = kr_bind(ctx, PORT_VQ, &bo);
	g_pr = kr_bind(ctx, PORT_RAW, &bo);
	CHECK(g_rbuf && g_pv && g_pr);
	for (uint32_t i = 0; i < RECV_BUFS; i++) {
		struct kr_devx_sge s = {.addr = (uintptr_t)(g_rbuf + 8 * (RECV_BUFS + i)),
					.length = 8,
					.lkey = kr_job_heap_lkey(ctx)};

		CHECK_OK(kr_post_recv(g_pv, g_rbuf + 8 * i, 8, i));
		CHECK_OK(kr_devx_srq_post_recv(&g_pr->srq, &s, 1, i));
	}
	g_vs = kr_connect(ctx, KR_NODE_SELF, &co);
	CHECK(g_vs != NULL);
	/* not collected: the slot claimed and the first credits pulled (a post says
	 * EAGAIN until they come), then messages until the pulls run in step */
	for (uint32_t sent = 0, got = 0; got < 4 * RECV_BUFS;) {
		struct kr_wc wc;
		int rc = sent - got < RECV_BUFS ? kr_post_send(g_vs, g_rbuf, 8, 1, 0) : -EAGAIN;

		CHECK(rc == 0 || rc == -EAGAIN);
		sent += !rc;
		CHECK(kr_poll(g_vs, &wc, 1) >= 0);
		if (vq_recv(g_pv, &wc) == 1)
			got++;
	}
	for (struct kr_wc wc; g_vs->snd->pending || g_vs->used;)
		CHECK(kr_poll(g_vs, &wc, 1) >= 0);
	CHECK_OK(kr_job_port_find(ctx, PORT_RAW, &ep, &idx));
	av->dctn = ep.dctn;
	av->dc_key = kr_port_dc_key(ctx->launch.dc_key, PORT_RAW, ep.gen); /* the binding's */
}

int main(int argc, char **argv)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "1",
					   "--heap-mb", "2", "--hugepages", "64", NULL};
	struct kr_devx_dc_av av;
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
	struct kr_devx_sge sge;
	struct kr_mr_key key;
	struct kp_keeper k;
	struct kr_lease l;
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	struct kr_mr *mr;
	uint8_t *local, *remote;

	if (argc > 1 && !strcmp(argv[1], "write"))
		g_op = OP_WRITE;
	else if (argc > 1 && !strcmp(argv[1], "cas"))
		g_op = OP_CAS;
	else if (argc > 1 && !strcmp(argv[1], "batch"))
		g_op = OP_BATCH;
	else if (argc > 1 && !strcmp(argv[1], "send"))
		g_op = OP_SEND;
	else if (argc > 1 && strcmp(argv[1], "read"))
		KR_FAIL("usage: bench_virtqp_insn [read|write|cas|batch|send]");
	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	local = kr_malloc(ctx, 8 * BATCH);
	remote = kr_malloc(ctx, 8 * BATCH);
	CHECK(local && remote);
	mr = kr_reg_mr(ctx, remote, 8 * BATCH,
		       KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE | KR_MR_REMOTE_ATOMIC |
			   KR_MR_LOCAL_WRITE);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	v = kr_connect(ctx, KR_NODE_SELF, NULL);
	CHECK(v != NULL);
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l));
	CHECK_OK(kr_job_dci_qp(ctx, &l, &qp, &cq));
	CHECK_OK(kr_job_tenant_av(ctx, &av));
	sge = (struct kr_devx_sge){
	    .addr = (uintptr_t)local, .length = 8, .lkey = kr_job_heap_lkey(ctx)};
	if (g_op == OP_SEND)
		send_setup(ctx, &av);
	for (uint32_t i = 0; i < OPS / per_op(); i++) {
		CHECK_OK(vq_post_poll(v, local, key.addr, key.rkey));
		CHECK_OK(raw_post_poll(qp, cq, &sge, &av, key.addr, key.rkey));
	}
	if (g_op == OP_SEND) {
		CHECK_OK(kr_disconnect(g_vs));
		CHECK_OK(kr_unbind(g_pv));
		CHECK_OK(kr_unbind(g_pr));
	}
	CHECK_OK(kr_lease_free(ctx, &l));
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("virtqp_insn");
}
