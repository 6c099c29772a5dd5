/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The guest's side of the soft-RoCE interop (rxe_guest_lib.sh puts it in
 * the guest with libibverbs, the rxe provider and its driver file). Plain
 * libibverbs, nothing of krcore: the kernel's RoCE v2 is the oracle.
 *
 *   rxe_peer selftest DEV   two RC QPs of DEV connected to each other through
 *                           its GID (the packets go through rxe's RoCE v2
 *                           path, loopback): a SEND of 3000 bytes (three 1024
 *                           MTU packets) received whole, an RDMA WRITE and a
 *                           READ of 5000 bytes checked, a CAS and an FAA on an
 *                           8-byte word. Exit 0, or 1 with what failed.
 *
 * This is what the interop's guest needs to do with an RC QP of a remote
 * peer; the step that connects one to a krcore QP on the sim comes next.
 */
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF_LEN	 16384
#define SEND_LEN 3000
#define RDMA_LEN 5000
#define PSN	 0x1234

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "rxe_peer: " __VA_ARGS__);                                         \
		fputc('\n', stderr);                                                               \
		exit(1);                                                                           \
	} while (0)

struct end {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static void end_open(struct ibv_context *ctx, struct ibv_pd *pd, struct end *e)
{
	struct ibv_qp_init_attr qa = {
	    .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = IBV_QPT_RC};

	e->buf = aligned_alloc(4096, BUF_LEN);
	if (!e->buf)
		FAIL("no memory");
	memset(e->buf, 0, BUF_LEN);
	e->mr = ibv_reg_mr(pd, e->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	e->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!e->mr || !e->cq)
		FAIL("ibv_reg_mr / ibv_create_cq failed");
	qa.send_cq = qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(pd, &qa);
	if (!e->qp)
		FAIL("ibv_create_qp failed");
}

/* INIT -> RTR -> RTS toward remote QP number rqpn at GID gid (index 1 of port 1). */
static void end_connect(struct end *e, uint32_t rqpn, const union ibv_gid *gid)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
				.port_num = 1,
				.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						   IBV_ACCESS_REMOTE_READ |
						   IBV_ACCESS_REMOTE_ATOMIC};

	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		FAIL("INIT failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = rqpn;
	a.rq_psn = PSN;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		FAIL("RTR failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = PSN;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(e->qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		FAIL("RTS failed");
}

/* One completion of e's CQ, successful and of opcode op, within 5 s. */
static void end_wait(struct end *e, enum ibv_wc_opcode op, const char *what)
{
	struct timespec t0, t;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((n = ibv_poll_cq(e->cq, 1, &wc)) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 5)
			FAIL("%s: no completion in 5 s", what);
	}
	if (n < 0 || wc.status != IBV_WC_SUCCESS || wc.opcode != op)
		FAIL("%s: %s (opcode %d)", what,
		     n < 0 ? "poll failed" : ibv_wc_status_str(wc.status), (int)wc.opcode);
}

static void post(struct end *e, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(e->qp, wr, &bad))
		FAIL("%s: ibv_post_send failed", what);
}

static int selftest(const char *dev)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct end a, b;
	union ibv_gid gid;
	struct ibv_pd *pd;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		FAIL("no device %s (is the rxe provider loadable?)", dev);
	pd = ibv_alloc_pd(ctx);
	if (!pd || ibv_query_gid(ctx, 1, 1, &gid))
		FAIL("ibv_alloc_pd / ibv_query_gid failed");
	end_open(ctx, pd, &a);
	end_open(ctx, pd, &b);
	end_connect(&a, b.qp->qp_num, &gid);
	end_connect(&b, a.qp->qp_num, &gid);

	/* SEND -> RECV, three packets */
	{
		struct ibv_sge rs = {(uintptr_t)b.buf, SEND_LEN, b.mr->lkey};
		struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *bad;
		struct ibv_sge ss = {(uintptr_t)a.buf, SEND_LEN, a.mr->lkey};
		struct ibv_send_wr sw = {
		    .wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND};

		for (int i = 0; i < SEND_LEN; i++)
			a.buf[i] = (uint8_t)(i * 7 + 1);
		if (ibv_post_recv(b.qp, &rw, &bad))
			FAIL("ibv_post_recv failed");
		post(&a, &sw, "send");
		end_wait(&a, IBV_WC_SEND, "send");
		end_wait(&b, IBV_WC_RECV, "recv");
		if (memcmp(a.buf, b.buf, SEND_LEN))
			FAIL("send: the bytes differ");
	}
	/* WRITE, then READ back */
	{
		struct ibv_sge s = {(uintptr_t)a.buf, RDMA_LEN, a.mr->lkey};
		struct ibv_send_wr w = {.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE};

		for (int i = 0; i < RDMA_LEN; i++)
			a.buf[i] = (uint8_t)(i * 13 + 5);
		w.wr.rdma.remote_addr = (uintptr_t)b.buf + 4096;
		w.wr.rdma.rkey = b.mr->rkey;
		post(&a, &w, "write");
		end_wait(&a, IBV_WC_RDMA_WRITE, "write");
		if (memcmp(a.buf, b.buf + 4096, RDMA_LEN))
			FAIL("write: the bytes differ");
		s.addr = (uintptr_t)a.buf + 8192;
		w.opcode = IBV_WR_RDMA_READ;
		post(&a, &w, "read");
		end_wait(&a, IBV_WC_RDMA_READ, "read");
		if (memcmp(a.buf + 8192, b.buf + 4096, RDMA_LEN))
			FAIL("read: the bytes differ");
	}
	/* CAS, then FAA, on b's word at 12288 */
	{
		uint64_t *word = (uint64_t *)(void *)(b.buf + 12288),
			 *old = (uint64_t *)(void *)a.buf;
		struct ibv_sge s = {(uintptr_t)old, 8, a.mr->lkey};
		struct ibv_send_wr w = {
		    .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_ATOMIC_CMP_AND_SWP};

		*word = 41;
		w.wr.atomic.remote_addr = (uintptr_t)word;
		w.wr.atomic.rkey = b.mr->rkey;
		w.wr.atomic.compare_add = 41;
		w.wr.atomic.swap = 100;
		post(&a, &w, "cas");
		end_wait(&a, IBV_WC_COMP_SWAP, "cas");
		if (*old != 41 || *word != 100)
			FAIL("cas: old %llu, word %llu", (unsigned long long)*old,
			     (unsigned long long)*word);
		w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		w.wr.atomic.compare_add = 5;
		post(&a, &w, "faa");
		end_wait(&a, IBV_WC_FETCH_ADD, "faa");
		if (*old != 100 || *word != 105)
			FAIL("faa: old %llu, word %llu", (unsigned long long)*old,
			     (unsigned long long)*word);
	}
	printf("rxe_peer: selftest on %s: send, write, read, cas, faa ok\n", dev);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "selftest"))
		return selftest(argv[2]);
	fprintf(stderr, "usage: rxe_peer selftest DEV\n");
	return 2;
}
