/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A peer killed across processes, and its return.
 *
 * Host A (this process, "sim:ka@127.0.0.1:<port>") and host B (a child,
 * "sim:kb@127.0.0.2:<port>") connect RC QPs; a WRITE goes through. Then B is
 * killed with SIGKILL: its engine, its socket, everything goes at once. A's
 * next WRITE is retransmitted on every timeout (ack_timeout 14, 67 ms) until
 * retry_count (3) is spent, then completes with TRANSPORT_RETRY_EXC and the
 * QP is in ERR; A's statistics show retry_count + 1 timeouts. A later WRITE
 * is flushed. Then B comes back (a new process on the same address and port,
 * a new QP), A takes its QP through 2RST, INIT, RTR, RTS towards it, and a
 * WRITE and a READ go through; B checks the bytes.
 *
 * Both lives of B are forked before A opens its host: a child forked from a
 * process whose engine threads run may inherit a lock one of them held (an
 * allocator lock under ASan) and hang at its first packet.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim/sim.h"
#include "sim_mp.h"

#define MEM_LEN	    (64u << 10)
#define TMO_MS	    15000
#define ACK_TIMEOUT 16u /* 4.096 us << 16 = 268 ms: room for a starved peer on a loaded box */
#define RETRY_COUNT 3u
#define WLEN	    512u

struct shm {
	struct mp_barrier bar;
	uint16_t port;
	uint32_t gen; /* which life of B */
	uint32_t a_qpn;
	uint8_t a_gid[16];
	uint32_t b_qpn;
	uint8_t b_gid[16];
	uint64_t b_mem;
	uint32_t b_rkey;
};

static uint8_t pat(uint32_t gen, uint32_t k)
{
	return (uint8_t)(gen * 53u + k * 7u + 1u);
}

static void conn_tmpl(struct kr_devx_qp_conn *c)
{
	kr_fx_conn_default(c);
	c->ack_timeout = ACK_TIMEOUT;
	c->retry_count = RETRY_COUNT;
}

#define BAR(s, who)                                                                                \
	do {                                                                                       \
		if (mp_barrier_wait(&(s)->bar, TMO_MS))                                            \
			KR_FAIL("%s: barrier timed out", who);                                     \
	} while (0)

/* Host B: publish, connect, let A write, check the bytes; the first life then waits to die. */
static int peer_main(int gen, void *arg)
{
	struct shm *s = arg;
	uint64_t deadline = mp_now_ms() + 4 * TMO_MS;

	/* a later life waits, forked, until A calls it */
	while (__atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) < (uint32_t)gen)
		if (mp_now_ms() > deadline || usleep(1000))
			KR_FAIL("B life %d: never called", gen);
	struct kr_devx_qp_conn c;
	struct kr_devx_qp qp;
	struct kr_fx_host h;
	char dev[64];

	snprintf(dev, sizeof(dev), "sim:kb@127.0.0.2:%u", s->port);
	CHECK_OK(kr_fx_host_open(&h, dev, MEM_LEN));
	CHECK_OK(mp_rc_create(&h, &qp));
	for (uint32_t k = 0; k < WLEN; k++)
		((uint8_t *)h.mem)[4096 + k] = pat(gen + 100, k); /* what A READs */
	s->b_qpn = qp.qpn;
	s->b_mem = (uint64_t)(uintptr_t)h.mem;
	s->b_rkey = h.mr.rkey;
	mp_gid(&h, s->b_gid);
	BAR(s, "B"); /* 1: both published */
	conn_tmpl(&c);
	CHECK_OK(mp_rc_connect(&qp, s->a_qpn, s->a_gid, &c));
	BAR(s, "B"); /* 2: both connected */
	BAR(s, "B"); /* 3: A wrote */
	for (uint32_t k = 0; k < WLEN; k++)
		if (((uint8_t *)h.mem)[k] != pat(gen, k))
			KR_FAIL("B life %d: byte %u of A's WRITE wrong", gen, k);
	BAR(s, "B"); /* 4: checked */
	if (gen == 1)
		for (;;)
			pause(); /* A kills us here */
	kr_fx_qp_destroy(&qp);
	kr_fx_host_close(&h);
	return 0;
}

static int write_wait(struct kr_fx_host *a, struct kr_devx_qp *qp, struct shm *s, uint32_t gen,
		      uint64_t id)
{
	struct kr_devx_sge sge = kr_fx_sge(a, 0, WLEN);
	struct kr_devx_wr wr = {.wr_id = id,
				.opcode = KR_WR_RDMA_WRITE,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = s->b_mem,
				.rkey = s->b_rkey};

	for (uint32_t k = 0; k < WLEN; k++)
		((uint8_t *)a->mem)[k] = pat(gen, k);
	return kr_fx_post_wait(a, qp, &wr, TMO_MS);
}

int main(void)
{
	const char *addrs[] = {"127.0.0.1", "127.0.0.2"};
	struct shm *s = kr_fx_alloc_shared(sizeof(*s));
	struct sim_stats st0, st1;
	struct kr_devx_qp_info info;
	struct kr_devx_qp_conn c;
	struct kr_devx_qp qp;
	struct kr_fx_host a;
	struct kr_devx_wc wc;
	uint64_t t0, elapsed, budget;
	char dev[64];
	pid_t pid, pid2;
	int st;

	setvbuf(stdout, NULL, _IONBF, 0);
	CHECK(s);
	memset(s, 0, sizeof(*s));
	s->port = mp_pick_port(addrs, 2);
	if (!s->port)
		KR_SKIP("no free UDP port on 127.0.0.1 and 127.0.0.2");
	mp_barrier_init(&s->bar, 2);
	s->gen = 1;
	pid = mp_spawn(peer_main, 1, s);
	pid2 = mp_spawn(peer_main, 2, s);
	CHECK(pid > 0 && pid2 > 0);
	snprintf(dev, sizeof(dev), "sim:ka@127.0.0.1:%u", s->port);
	CHECK_OK(kr_fx_host_open(&a, dev, MEM_LEN));
	CHECK_OK(mp_rc_create(&a, &qp));
	s->a_qpn = qp.qpn;
	mp_gid(&a, s->a_gid);
	conn_tmpl(&c);

	/* B, first life */
	BAR(s, "A");
	CHECK_OK(mp_rc_connect(&qp, s->b_qpn, s->b_gid, &c));
	BAR(s, "A");
	CHECK_EQ(write_wait(&a, &qp, s, 1, 1), KR_WC_SUCCESS);
	BAR(s, "A");
	BAR(s, "A");

	/* kill it: nothing answers any more */
	CHECK_OK(kill(pid, SIGKILL));
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK_OK(sim_stats_query(a.ctx, &st0));
	t0 = mp_now_ms();
	CHECK_EQ(write_wait(&a, &qp, s, 2, 2), KR_WC_RETRY_EXC_ERR);
	elapsed = mp_now_ms() - t0;
	CHECK_OK(sim_stats_query(a.ctx, &st1));
	CHECK_OK(kr_devx_qp_query(&qp, &info));
	CHECK_EQ(info.state, KR_QPC_STATE_ERR);
	/* the first send and retry_count retransmissions, each after a timeout */
	CHECK_EQ(st1.timeouts - st0.timeouts, RETRY_COUNT + 1);
	CHECK_EQ(st1.retry_exc - st0.retry_exc, 1);
	budget = ((4096ull << ACK_TIMEOUT) * (RETRY_COUNT + 1)) / 1000000u;
	printf("peer killed: RETRY_EXC after %llu ms (budget %u x %llu ms = %llu ms), %llu "
	       "retransmitted packets\n",
	       (unsigned long long)elapsed, RETRY_COUNT + 1,
	       (unsigned long long)((4096ull << ACK_TIMEOUT) / 1000000u),
	       (unsigned long long)budget, (unsigned long long)(st1.retransmits - st0.retransmits));
	if (elapsed < budget * 9 / 10)
		KR_FAIL("retry budget cut short: %llu ms", (unsigned long long)elapsed);
	if (elapsed > budget * 4 + 2000)
		KR_FAIL("QP still retrying %llu ms after the budget",
			(unsigned long long)(elapsed - budget));
	/* in ERR, what is posted next is flushed */
	{
		struct kr_devx_sge sge = kr_fx_sge(&a, 0, 8);
		struct kr_devx_wr wr = {.wr_id = 3,
					.opcode = KR_WR_RDMA_WRITE,
					.flags = KR_WR_SIGNALED,
					.sge = &sge,
					.num_sge = 1,
					.remote_addr = s->b_mem,
					.rkey = s->b_rkey};

		CHECK_OK(kr_devx_qp_post_send(&qp, &wr));
		kr_devx_qp_ring(&qp);
		CHECK_OK(kr_fx_poll_one(&a.scq, &wc, TMO_MS));
		CHECK_EQ(wc.wr_id, 3);
		CHECK_EQ(wc.status, KR_WC_WR_FLUSH_ERR);
	}

	/* B comes back: same address and port, a new QP; A recovers through 2RST */
	__atomic_store_n(&s->gen, 2, __ATOMIC_RELEASE);
	pid = pid2;
	BAR(s, "A");
	CHECK_OK(kr_devx_qp_modify(&qp, KR_QP_2RST, NULL));
	CHECK_OK(mp_rc_connect(&qp, s->b_qpn, s->b_gid, &c));
	CHECK_OK(kr_devx_qp_query(&qp, &info));
	CHECK_EQ(info.state, KR_QPC_STATE_RTS);
	BAR(s, "A");
	CHECK_EQ(write_wait(&a, &qp, s, 2, 4), KR_WC_SUCCESS);
	{
		struct kr_devx_sge sge = kr_fx_sge(&a, 8192, WLEN);
		struct kr_devx_wr wr = {.wr_id = 5,
					.opcode = KR_WR_RDMA_READ,
					.sge = &sge,
					.num_sge = 1,
					.remote_addr = s->b_mem + 4096,
					.rkey = s->b_rkey};

		CHECK_EQ(kr_fx_post_wait(&a, &qp, &wr, TMO_MS), KR_WC_SUCCESS);
		for (uint32_t k = 0; k < WLEN; k++)
			if (((uint8_t *)a.mem)[8192 + k] != pat(102, k))
				KR_FAIL("READ from B's second life: byte %u wrong", k);
	}
	BAR(s, "A");
	BAR(s, "A");
	CHECK_EQ(mp_wait(&pid, 1, TMO_MS), 0);

	kr_fx_qp_destroy(&qp);
	kr_fx_host_close(&a);
	kr_fx_free_shared(s, sizeof(*s));
	KR_PASS("sim_killed_peer");
}
