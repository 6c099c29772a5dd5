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
 *   rxe_peer serve DEV N    N sessions, one after another, each with a new RC
 *                           QP of DEV and the host program on the tap
 *                           (rxe_sim_side.c: a devx RC QP on the sim):
 *                           addresses swapped and commands taken over TCP
 *                           port RX_PORT (rxe_wire.h); each command is one
 *                           work request of this QP, answered with its
 *                           completion. Exit 0 after N sessions that ended
 *                           with RX_QUIT, else 1.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rxe_wire.h"

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
	struct ibv_cq *cq;  /* send completions */
	struct ibv_cq *rcq; /* receive completions */
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
};

static void end_open(struct ibv_context *ctx, struct ibv_pd *pd, struct end *e, size_t len)
{
	struct ibv_qp_init_attr qa = {
	    .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = IBV_QPT_RC};

	e->len = len;
	e->buf = aligned_alloc(4096, len);
	if (!e->buf)
		FAIL("no memory");
	memset(e->buf, 0, len);
	e->mr = ibv_reg_mr(pd, e->buf, len,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	e->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	e->rcq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!e->mr || !e->cq || !e->rcq)
		FAIL("ibv_reg_mr / ibv_create_cq failed");
	qa.send_cq = e->cq;
	qa.recv_cq = e->rcq;
	e->qp = ibv_create_qp(pd, &qa);
	if (!e->qp)
		FAIL("ibv_create_qp failed");
}

static void end_close(struct end *e)
{
	if (ibv_destroy_qp(e->qp) || ibv_destroy_cq(e->cq) || ibv_destroy_cq(e->rcq) ||
	    ibv_dereg_mr(e->mr))
		FAIL("destroying a session's QP, CQs or MR failed");
	free(e->buf);
}

/*
 * INIT -> RTR -> RTS toward remote QP number rqpn at GID gid (index 1 of
 * port 1), receiving from rq_psn on and sending from PSN on.
 */
static void end_connect(struct end *e, uint32_t rqpn, const union ibv_gid *gid, uint32_t rq_psn)
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
	a.rq_psn = rq_psn;
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

/* The next completion of cq within ms: 1, 0 (none), -1 (the poll failed). */
static int cq_next(struct ibv_cq *cq, struct ibv_wc *wc, long ms)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((n = ibv_poll_cq(cq, 1, wc)) == 0) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return 0;
	}
	return n < 0 ? -1 : 1;
}

/* One completion of e's send or receive CQ (by op), successful and of opcode op, within 5 s. */
static void end_wait(struct end *e, enum ibv_wc_opcode op, const char *what)
{
	struct ibv_wc wc;
	int n = cq_next(op & IBV_WC_RECV ? e->rcq : e->cq, &wc, 5000);

	if (n == 0)
		FAIL("%s: no completion in 5 s", what);
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

static struct ibv_context *dev_open(const char *dev)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		FAIL("no device %s (is the rxe provider loadable?)", dev);
	return ctx;
}

static int selftest(const char *dev)
{
	struct ibv_context *ctx = dev_open(dev);
	struct end a, b;
	union ibv_gid gid;
	struct ibv_pd *pd;

	pd = ibv_alloc_pd(ctx);
	if (!pd || ibv_query_gid(ctx, 1, 1, &gid))
		FAIL("ibv_alloc_pd / ibv_query_gid failed");
	end_open(ctx, pd, &a, BUF_LEN);
	end_open(ctx, pd, &b, BUF_LEN);
	end_connect(&a, b.qp->qp_num, &gid, PSN);
	end_connect(&b, a.qp->qp_num, &gid, PSN);

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

static void io_all(int fd, void *p, size_t len, int out)
{
	if (rx_io(fd, p, len, out))
		FAIL("side channel to the host: closed or failed");
}

/* One command of the host on e: its work request, and the completion's answer. */
static void serve_cmd(struct end *e, const struct rx_info *host, const struct rx_cmd *c,
		      struct rx_ans *ans)
{
	struct ibv_sge sge = {(uintptr_t)e->buf + c->off, c->len, e->mr->lkey};
	struct ibv_send_wr w = {.wr_id = c->op, .sg_list = &sge, .num_sge = 1}, *bad;
	struct ibv_recv_wr rw = {.wr_id = c->off, .sg_list = &sge, .num_sge = 1}, *rbad;
	bool imm = c->flags & RX_F_IMM;
	struct ibv_wc wc;
	int n;

	memset(ans, 0, sizeof(*ans));
	if (c->off > e->len || c->len > e->len - c->off) {
		ans->status = -2; /* outside the buffer */
		return;
	}
	switch (c->op) {
	case RX_POST_RECV:
		ans->status = ibv_post_recv(e->qp, &rw, &rbad) ? -3 : 0;
		return;
	case RX_WAIT_RECV:
		n = cq_next(e->rcq, &wc, 20000);
		ans->status = n == 1 ? (int32_t)wc.status : -1;
		ans->byte_len = n == 1 ? wc.byte_len : 0;
		ans->has_imm = n == 1 && (wc.wc_flags & IBV_WC_WITH_IMM);
		ans->imm = ans->has_imm ? be32toh(wc.imm_data) : 0;
		return;
	case RX_SEND:
		w.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		w.imm_data = htobe32(c->imm);
		break;
	case RX_WRITE:
		w.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		w.imm_data = htobe32(c->imm);
		w.wr.rdma.remote_addr = c->raddr;
		w.wr.rdma.rkey = host->rkey;
		break;
	case RX_READ:
		w.opcode = IBV_WR_RDMA_READ;
		w.wr.rdma.remote_addr = c->raddr;
		w.wr.rdma.rkey = host->rkey;
		break;
	case RX_CAS:
	case RX_FAA:
		w.opcode =
		    c->op == RX_CAS ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
		sge.length = 8;
		w.wr.atomic.remote_addr = c->raddr;
		w.wr.atomic.rkey = host->rkey;
		w.wr.atomic.compare_add = c->a;
		w.wr.atomic.swap = c->b;
		break;
	default:
		ans->status = -4; /* unknown command */
		return;
	}
	w.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(e->qp, &w, &bad)) {
		ans->status = -3;
		return;
	}
	n = cq_next(e->cq, &wc, 20000);
	ans->status = n == 1 ? (int32_t)wc.status : -1;
	if (n == 1 && (c->op == RX_CAS || c->op == RX_FAA))
		memcpy(&ans->val, e->buf + c->off, 8);
}

/* One session: a new RC QP toward the host's, commands until RX_QUIT. */
static void serve_session(struct ibv_context *ctx, struct ibv_pd *pd, int lfd)
{
	struct rx_info me = {.psn = PSN, .len = RX_MEM_LEN}, host;
	union ibv_gid gid, hgid;
	struct end e;
	int fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		FAIL("accept failed");
	end_open(ctx, pd, &e, RX_MEM_LEN);
	if (ibv_query_gid(ctx, 1, 1, &gid))
		FAIL("ibv_query_gid failed");
	me.qpn = e.qp->qp_num;
	me.rkey = e.mr->rkey;
	me.addr = (uintptr_t)e.buf;
	memcpy(me.gid, gid.raw, 16);
	/* ready to receive before the host learns where: its first packet finds RTR */
	io_all(fd, &host, sizeof(host), 0);
	rx_info_order(&host, 0);
	memcpy(hgid.raw, host.gid, 16);
	end_connect(&e, host.qpn, &hgid, host.psn);
	rx_info_order(&me, 1);
	io_all(fd, &me, sizeof(me), 1);
	for (;;) {
		struct rx_cmd c;
		struct rx_ans ans;

		io_all(fd, &c, sizeof(c), 0);
		rx_cmd_order(&c, 0);
		if (c.op == RX_QUIT)
			break;
		serve_cmd(&e, &host, &c, &ans);
		rx_ans_order(&ans, 1);
		io_all(fd, &ans, sizeof(ans), 1);
	}
	close(fd);
	end_close(&e);
}

/* DEV's hw_counters, each as "RXE-SESSION-COUNTER <session> <name> <value>" on stdout. */
static void print_counters(const char *dev, int session)
{
	char path[256], val[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters", dev);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		int fd = d->d_name[0] == '.' ? -1 : openat(dirfd(dir), d->d_name, O_RDONLY);
		FILE *f = fd < 0 ? NULL : fdopen(fd, "r");

		if (f && fgets(val, sizeof(val), f))
			printf("RXE-SESSION-COUNTER %d %s %s", session, d->d_name, val);
		if (f)
			fclose(f);
		else if (fd >= 0)
			close(fd);
	}
	if (dir)
		closedir(dir);
	fflush(stdout);
}

static int serve(const char *dev, int sessions)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(RX_PORT)};
	struct ibv_context *ctx = dev_open(dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);

	if (!pd || lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		FAIL("ibv_alloc_pd or the TCP listener failed");
	printf("RXE-SERVING %d\n", RX_PORT);
	fflush(stdout);
	for (int i = 0; i < sessions; i++) {
		serve_session(ctx, pd, lfd);
		printf("RXE-SESSION-DONE %d\n", i + 1);
		print_counters(dev, i + 1);
	}
	close(lfd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "selftest"))
		return selftest(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "serve"))
		return serve(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: rxe_peer selftest DEV | rxe_peer serve DEV SESSIONS\n");
	return 2;
}
