/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection on in-process hosts:
 *   - corrupt=1: nothing reaches the responder, its ICRC-drop counter grows,
 *     the requester ends with TRANSPORT_RETRY_EXC after retry_count retries;
 *   - a killed engine: the peer's requester gets RETRY_EXC within its retry
 *     budget, the dead host's doorbells are not served;
 *   - sim_fault_qp_error(): flush CQEs for what was posted, QP in ERR, then
 *     2RST..RTS brings it back and traffic flows both ways;
 *   - replay: the same seed drops the same packets, another seed others.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define MEM_LEN (1u << 20)
#define TMO_MS	10000

static void conn_fast(struct kr_devx_qp_conn *c, uint8_t ack_timeout, uint8_t retry)
{
	kr_fx_conn_default(c);
	c->ack_timeout = ack_timeout;
	c->retry_count = retry;
}

static struct kr_devx_wr write_wr(uint64_t wr_id, const struct kr_devx_sge *sge,
				  const struct kr_fx_host *dst, size_t off)
{
	struct kr_devx_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = KR_WR_RDMA_WRITE;
	wr.flags = KR_WR_SIGNALED;
	wr.sge = sge;
	wr.num_sge = 1;
	wr.remote_addr = (uintptr_t)dst->mem + off;
	wr.rkey = dst->mr.rkey;
	return wr;
}

static void get_stats(struct kr_fx_host *h, struct sim_stats *st)
{
	CHECK_OK(sim_stats_query(h->ctx, st));
}

static void print_stats(const char *who, const struct sim_stats *s)
{
	printf("  %-6s tx %" PRIu64 " rx %" PRIu64 " retransmits %" PRIu64 " timeouts %" PRIu64
	       " retry_exc %" PRIu64 " dup_req %" PRIu64 " seq_naks %" PRIu64 " icrc_drops %" PRIu64
	       " | injected drop %" PRIu64 " corrupt %" PRIu64 "\n",
	       who, s->pkts_tx, s->pkts_rx, s->retransmits, s->timeouts, s->retry_exc,
	       s->dup_requests, s->seq_naks, s->icrc_drops, s->fault_drops, s->fault_corrupts);
}

/* ---- every packet corrupt ---- */

static void test_corrupt(void)
{
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_conn conn;
	struct kr_devx_qp_info info;
	struct sim_stats sa, sb;
	struct kr_devx_sge sge;
	struct kr_devx_wr wr;
	struct kr_devx_wc wc;
	uint8_t zero[256] = {0};

	CHECK_OK(kr_fx_host_open(&a, "sim:fc_a,corrupt=1,seed=1", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&b, "sim:fc_b", MEM_LEN));
	conn_fast(&conn, 8, 3); /* 1 ms timer, 3 retries */
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, &conn));
	memset(a.mem, 0x3c, 256);
	memset(b.mem, 0, 256);

	sge = kr_fx_sge(&a, 0, 256);
	wr = write_wr(1, &sge, &b, 0);
	CHECK_OK(kr_devx_qp_post_send(&qa, &wr));
	kr_devx_qp_ring(&qa);
	CHECK_OK(kr_fx_poll_one(&a.scq, &wc, TMO_MS));
	CHECK_EQ(wc.wr_id, 1);
	if (wc.status != KR_WC_RETRY_EXC_ERR)
		KR_FAIL("corrupt=1: status %s, expected retry exceeded", kr_strerror(wc.status));
	CHECK_EQ(wc.syndrome, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	CHECK_OK(kr_devx_qp_query(&qa, &info));
	CHECK_EQ(info.state, KR_QPC_STATE_ERR);
	CHECK(memcmp(b.mem, zero, sizeof(zero)) == 0); /* nothing delivered */

	get_stats(&a, &sa);
	get_stats(&b, &sb);
	printf("corrupt=1:\n");
	print_stats("fc_a", &sa);
	print_stats("fc_b", &sb);
	CHECK(sa.fault_corrupts >= 4); /* the first send and 3 retries */
	CHECK(sa.retransmits >= 3);
	CHECK(sa.timeouts >= 4);
	CHECK_EQ(sa.retry_exc, 1);
	CHECK(sb.icrc_drops >= 4);
	CHECK_EQ(sb.dup_requests, 0);

	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
}

/* ---- a host whose engine dies ---- */

#define KILL_ACK_TIMEOUT 14 /* 4.096 us * 2^14 = 67 ms */

static void test_kill_engine(void)
{
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_conn conn;
	struct sim_stats sa;
	struct kr_devx_sge sge, sge_b;
	struct kr_devx_wr wr;
	struct kr_devx_wc wc;
	uint64_t t0, dt, budget;

	CHECK_OK(kr_fx_host_open(&a, "sim:fk_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&b, "sim:fk_b", MEM_LEN));
	/*
	 * 67 ms a try, 3 retries: the WRITE before the kill must be answered
	 * within 268 ms, under valgrind too (with 1 ms tries it was not, once)
	 */
	conn_fast(&conn, KILL_ACK_TIMEOUT, 3);
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, &conn));
	memset(a.mem, 0x11, 128);
	sge = kr_fx_sge(&a, 0, 128);

	wr = write_wr(1, &sge, &b, 0);
	CHECK_OK(kr_devx_qp_post_send(&qa, &wr));
	kr_devx_qp_ring(&qa);
	CHECK_OK(kr_fx_poll_one(&a.scq, &wc, TMO_MS));
	CHECK_EQ(wc.status, KR_WC_SUCCESS);

	CHECK_OK(sim_fault_kill_engine(b.ctx));
	CHECK_ERR(sim_fault_kill_engine(b.ctx), -ESRCH);
	CHECK_ERR(sim_fault_kill_engine(NULL), -EINVAL);

	wr = write_wr(2, &sge, &b, 4096);
	t0 = kr_test_now_ns();
	CHECK_OK(kr_devx_qp_post_send(&qa, &wr));
	kr_devx_qp_ring(&qa);
	CHECK_OK(kr_fx_poll_one(&a.scq, &wc, TMO_MS));
	dt = kr_test_now_ns() - t0;
	CHECK_EQ(wc.wr_id, 2);
	if (wc.status != KR_WC_RETRY_EXC_ERR)
		KR_FAIL("peer killed: status %s, expected retry exceeded", kr_strerror(wc.status));
	budget =
	    4 * (4096ull << KILL_ACK_TIMEOUT); /* (retry_count + 1) timeouts of 4.096 us * 2^t */
	printf("killed peer: RETRY_EXC after %.2f ms (retry budget %.2f ms)\n", dt / 1e6,
	       budget / 1e6);
	CHECK(dt >= budget);
	get_stats(&a, &sa);
	CHECK_EQ(sa.retry_exc, 1);
	CHECK(sa.timeouts >= 4);

	/* the dead host serves no doorbell */
	memset(b.mem, 0x22, 64);
	sge_b = kr_fx_sge(&b, 0, 64);
	wr = write_wr(3, &sge_b, &a, 8192);
	CHECK_OK(kr_devx_qp_post_send(&qb, &wr));
	kr_devx_qp_ring(&qb);
	CHECK_EQ(kr_fx_poll_none(&b.scq, 100), 0);

	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
}

/* ---- a QP forced to error, then recovered ---- */

static void test_qp_error(void)
{
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_conn conn;
	struct kr_devx_qp_info ia, ib;
	struct kr_devx_sge sge, rsge[3];
	struct kr_devx_wr wr;
	struct kr_devx_wc wc;
	int i;

	CHECK_OK(kr_fx_host_open(&a, "sim:fq_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&b, "sim:fq_b", MEM_LEN));
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, NULL));

	for (i = 0; i < 3; i++) {
		rsge[i] = kr_fx_sge(&a, 0x10000 + (size_t)i * 0x1000, 256);
		CHECK_OK(kr_devx_qp_post_recv(&qa, &rsge[i], 1, 0x100 + (uint64_t)i));
	}
	CHECK_OK(sim_fault_qp_error(a.ctx, qa.qpn));
	for (i = 0; i < 3; i++) {
		CHECK_OK(kr_fx_poll_one(&a.rcq, &wc, TMO_MS));
		CHECK_EQ(wc.wr_id, 0x100 + i);
		CHECK_EQ(wc.status, KR_WC_WR_FLUSH_ERR);
	}
	CHECK_OK(kr_devx_qp_query(&qa, &ia));
	CHECK_EQ(ia.state, KR_QPC_STATE_ERR);

	/* what is posted in ERR is flushed too */
	sge = kr_fx_sge(&a, 0, 64);
	wr = write_wr(7, &sge, &b, 0);
	CHECK_OK(kr_devx_qp_post_send(&qa, &wr));
	kr_devx_qp_ring(&qa);
	CHECK_OK(kr_fx_poll_one(&a.scq, &wc, TMO_MS));
	CHECK_EQ(wc.wr_id, 7);
	CHECK_EQ(wc.status, KR_WC_WR_FLUSH_ERR);

	CHECK_OK(sim_fault_qp_error(a.ctx, qa.qpn)); /* already in ERR */
	CHECK_ERR(sim_fault_qp_error(a.ctx, 0xfffff), -ENOENT);
	CHECK_ERR(sim_fault_qp_error(NULL, qa.qpn), -EINVAL);

	/* recovery: 2RST, then INIT..RTS where the peer's PSNs are */
	CHECK_OK(kr_devx_qp_modify(&qa, KR_QP_2RST, NULL));
	CHECK_ERR(sim_fault_qp_error(a.ctx, qa.qpn), -EINVAL); /* nothing to fail in RST */
	CHECK_OK(kr_devx_qp_query(&qb, &ib));
	kr_fx_conn_default(&conn);
	conn.remote_qpn = qb.qpn;
	kr_devx_qp_conn_path(&conn, &a.ctx->port, &b.ctx->port.addr, qa.qpn, qb.qpn);
	conn.sq_psn = ib.next_rcv_psn;
	conn.rq_psn = ib.next_send_psn;
	CHECK_OK(kr_devx_qp_connect(&qa, &conn));
	CHECK_OK(kr_devx_qp_query(&qa, &ia));
	CHECK_EQ(ia.state, KR_QPC_STATE_RTS);

	memset(a.mem, 0x6b, 512);
	memset(b.mem, 0, 512);
	sge = kr_fx_sge(&a, 0, 512);
	wr = write_wr(8, &sge, &b, 0);
	CHECK_OK(kr_devx_qp_post_send(&qa, &wr));
	kr_devx_qp_ring(&qa);
	CHECK_OK(kr_fx_poll_one(&a.scq, &wc, TMO_MS));
	CHECK_EQ(wc.wr_id, 8);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK(memcmp(a.mem, b.mem, 512) == 0);

	/* and back: a SEND from the peer lands in a fresh receive */
	rsge[0] = kr_fx_sge(&a, 0x20000, 1024);
	CHECK_OK(kr_devx_qp_post_recv(&qa, &rsge[0], 1, 0x200));
	memset((uint8_t *)b.mem + 0x4000, 0x9d, 300);
	sge = kr_fx_sge(&b, 0x4000, 300);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 9;
	wr.opcode = KR_WR_SEND;
	wr.flags = KR_WR_SIGNALED;
	wr.sge = &sge;
	wr.num_sge = 1;
	CHECK_OK(kr_devx_qp_post_send(&qb, &wr));
	kr_devx_qp_ring(&qb);
	CHECK_OK(kr_fx_poll_one(&b.scq, &wc, TMO_MS));
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_OK(kr_fx_poll_one(&a.rcq, &wc, TMO_MS));
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 0x200);
	CHECK_EQ(wc.byte_len, 300);
	CHECK(memcmp((uint8_t *)a.mem + 0x20000, (uint8_t *)b.mem + 0x4000, 300) == 0);

	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
}

/* ---- replay ---- */

#define REPLAY_OPS 16

/*
 * One host drops 30% of what it sends, seeded; the other is clean. WRITEs one
 * at a time, so the packets the lossy host sends are the same in every run:
 * the number of retransmissions each WRITE needed is the drop pattern.
 */
static void drop_pattern(uint64_t seed, uint32_t pattern[REPLAY_OPS])
{
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_conn conn;
	struct sim_stats st;
	struct kr_devx_sge sge;
	struct kr_devx_wr wr;
	struct kr_devx_wc wc;
	uint64_t before;
	char name[96];

	snprintf(name, sizeof(name), "sim:rp_a,drop=0.3,seed=%" PRIu64, seed);
	CHECK_OK(kr_fx_host_open(&a, name, MEM_LEN));
	CHECK_OK(kr_fx_host_open(&b, "sim:rp_b", MEM_LEN));
	/* 67 ms timer: no spurious timeout (which would draw once more) */
	conn_fast(&conn, 14, 7);
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, &conn));
	sge = kr_fx_sge(&a, 0, 64);
	for (int i = 0; i < REPLAY_OPS; i++) {
		get_stats(&a, &st);
		before = st.retransmits;
		wr = write_wr((uint64_t)i, &sge, &b, (size_t)i * 64);
		CHECK_OK(kr_devx_qp_post_send(&qa, &wr));
		kr_devx_qp_ring(&qa);
		CHECK_OK(kr_fx_poll_one(&a.scq, &wc, TMO_MS));
		if (wc.status != KR_WC_SUCCESS)
			KR_FAIL("seed %" PRIu64 ": WRITE %d: %s", seed, i, kr_strerror(wc.status));
		get_stats(&a, &st);
		pattern[i] = (uint32_t)(st.retransmits - before);
	}
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
}

static void print_pattern(uint64_t seed, const uint32_t p[REPLAY_OPS])
{
	printf("seed %" PRIu64 ": retransmissions per WRITE:", seed);
	for (int i = 0; i < REPLAY_OPS; i++)
		printf(" %u", p[i]);
	printf("\n");
}

static void test_replay(void)
{
	const uint64_t s1 = 20240611, s2 = 7;
	uint32_t p1[REPLAY_OPS], p2[REPLAY_OPS], p3[REPLAY_OPS];
	uint32_t total = 0;

	drop_pattern(s1, p1);
	print_pattern(s1, p1);
	drop_pattern(s1, p2);
	print_pattern(s1, p2);
	drop_pattern(s2, p3);
	print_pattern(s2, p3);
	for (int i = 0; i < REPLAY_OPS; i++)
		total += p1[i];
	if (!total)
		KR_FAIL("seed %" PRIu64 ": drop=0.3 dropped nothing in %d WRITEs", s1, REPLAY_OPS);
	if (memcmp(p1, p2, sizeof(p1)))
		KR_FAIL("seed %" PRIu64 " did not replay the same drop pattern", s1);
	if (!memcmp(p1, p3, sizeof(p1)))
		KR_FAIL("seeds %" PRIu64 " and %" PRIu64 " gave the same drop pattern", s1, s2);
}

int main(void)
{
	test_corrupt();
	test_kill_engine();
	test_qp_error();
	test_replay();
	KR_PASS("test_sim_faults");
}
