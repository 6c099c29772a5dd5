/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliable transport under loss: two hosts that each drop 5%, duplicate 5%,
 * reorder 5% and delay 2% of the packets they send (requests, ACKs and
 * READ/atomic responses alike), one RC pair each way. 100,000 mixed
 * requests (WRITE, READ, SEND, fetch-and-add, compare-and-swap) must all
 * complete successfully, in order (wr_ids strictly consecutive per QP), with
 * every payload verified at the other end, every SEND received exactly once
 * and in order, and the atomics exactly once: each returns the value the ones
 * before it left, and the counters end at the exact totals.
 *
 * Built twice: test_sim_loss runs both hosts in this process (the in-process
 * wire); test_sim_loss_udp (-DKR_LOSS_UDP) runs each host in its own process,
 * RoCEv2 over UDP on the loopback (127.0.0.1 and 127.0.0.2). Registered
 * memory and the bookkeeping live in MAP_SHARED memory mapped before fork,
 * so either way each side checks the other's memory directly.
 *
 * The seed is fixed and printed; KR_TEST_SEED=<n> replays another run,
 * KR_TEST_OPS=<n> changes the number of requests. At the end the engine
 * statistics of both hosts (retransmissions, timeouts, duplicates seen,
 * sequence NAKs, RNR NAKs) and the time per request are printed.
 */
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"
#include "sim_mp.h"

#define MEM_LEN	   (8u << 20)
#define WINDOW	   32u	     /* requests in flight per QP */
#define SLOT	   8192u     /* largest request */
#define LOC	   0x000000u /* requester: local buffers, WINDOW slots */
#define WTGT	   0x100000u /* responder: WRITE targets, WINDOW slots */
#define RSRC	   0x200000u /* responder: READ source, fixed pattern */
#define RSRC_LEN   0x100000u
#define ATOM	   0x300000u /* responder: the atomic counter */
#define RCV	   0x400000u /* responder: receive buffers */
#define NRECV	   64u	     /* receives kept posted (the fixture's RQ) */
#define SENDQ	   256u	     /* SENDs posted and not yet received, at most */
#define STALL_NS   30000000000ull
#define SEND_MAGIC 0x6b72736eu
#define BAR_MS	   60000

/*
 * 4.096 us * 2^12 = 16.8 ms: a lost tail is resent soon enough, and the 8
 * expiries retry_count 7 allows (134 ms) outlast an engine thread descheduled
 * on a loaded 2-core machine (at 2^10, 33 ms, one run in ~100 failed that
 * way; at 2^11, 67 ms, one full suite in a few once the security and mesh
 * tests ran beside it).
 */
#ifndef LOSS_ACK_TIMEOUT
#define LOSS_ACK_TIMEOUT 12
#endif

#define FAULTS "drop=0.05,dup=0.05,reorder=0.05,delay=0.02,delay_us=300"

#ifdef KR_LOSS_UDP
#define TEST_NAME "test_sim_loss_udp"
#else
#define TEST_NAME "test_sim_loss"
#endif

enum op { OP_WRITE, OP_READ, OP_SEND, OP_FAA, OP_CAS };

struct req {
	uint32_t idx;
	enum op op;
	uint32_t len;
	uint32_t roff;	 /* READ: offset in the source */
	uint64_t expect; /* atomics: the original value that must come back */
};

/* Direction i: host i requests, host 1 - i responds. Shared by both processes. */
struct dir {
	char name[32];
	int src, dst;
	uint32_t total;
	uint32_t posted;	    /* requester's */
	_Atomic uint32_t completed; /* requester's; the peer watches it */
	struct req inflight[WINDOW];
	uint64_t rng;
	uint64_t counter; /* what dst's counter holds once everything posted ran */
	uint64_t n_op[5];
	/* SENDs posted and not yet received: (idx, len); tail by the requester, head
	 * by the receiver; an entry is written before the SEND is posted */
	uint32_t send_q[SENDQ][2];
	_Atomic uint32_t send_head, send_tail;
	_Atomic uint64_t recvs;
};

struct world {
	struct mp_barrier bar;
	uint16_t port;
	_Atomic int failed;
	uint8_t *mem[2]; /* host i's registered memory, same address in every process */
	uint32_t lkey[2], rkey[2];
	uint32_t qpn_req[2];  /* host i's QP of direction i */
	uint32_t qpn_resp[2]; /* host i's QP of direction 1 - i */
	uint8_t gid[2][16];
	struct dir d[2];
};

/* Process-local: this process's host(s). */
struct host {
	struct kr_fx_host fx;
	struct kr_devx_mr mr;
	struct kr_devx_qp req;	/* QP of direction me */
	struct kr_devx_qp resp; /* QP of direction 1 - me */
};

static uint64_t seed;
static struct world *W;
static struct kr_fx_host *hosts_here[2]; /* for the statistics on failure */
static struct kr_devx_qp *req_qp[2];	 /* requester QP of direction i, if here */
static struct kr_devx_qp *resp_qp[2];	 /* responder QP of direction i, if here */

static uint8_t pat(uint32_t idx, uint32_t k)
{
	return (uint8_t)(idx * 131u + k * 7u + (k >> 8) * 13u + 1u);
}

static uint8_t rsrc_pat(uint32_t k)
{
	return (uint8_t)(k * 31u + (k >> 9) + 5u);
}

static void dump_stats(void);

#define FAIL_SEED(...)                                                                             \
	do {                                                                                       \
		atomic_store(&W->failed, 1);                                                       \
		dump_stats();                                                                      \
		fprintf(stderr, "seed %" PRIu64 " (replay: KR_TEST_SEED=%" PRIu64 "): ", seed,     \
			seed);                                                                     \
		KR_FAIL(__VA_ARGS__);                                                              \
	} while (0)

static struct kr_devx_sge sge_of(int host, size_t off, uint32_t len)
{
	return (struct kr_devx_sge){
	    .addr = (uintptr_t)W->mem[host] + off, .length = len, .lkey = W->lkey[host]};
}

static uint32_t pick_len(struct dir *d)
{
	uint64_t r = kr_test_splitmix64(&d->rng) % 100;

	if (r < 75)
		return 1 + (uint32_t)(kr_test_splitmix64(&d->rng) % 256);
	if (r < 95)
		return 1 + (uint32_t)(kr_test_splitmix64(&d->rng) % 2048);
	return 1 + (uint32_t)(kr_test_splitmix64(&d->rng) % SLOT);
}

static size_t loc_off(uint32_t idx)
{
	return LOC + (idx % WINDOW) * SLOT;
}

/* Build and post request number d->posted of direction i. */
static void post_one(int i)
{
	struct dir *d = &W->d[i];
	struct req *q = &d->inflight[d->posted % WINDOW];
	uint64_t r = kr_test_splitmix64(&d->rng) % 100;
	uint8_t *l, *dmem = W->mem[d->dst];
	struct kr_devx_sge sge;
	struct kr_devx_wr wr;
	uint32_t t;
	int rc;

	memset(q, 0, sizeof(*q));
	q->idx = d->posted;
	q->op = r < 30 ? OP_WRITE : r < 60 ? OP_READ : r < 85 ? OP_SEND : r < 95 ? OP_FAA : OP_CAS;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = q->idx;
	wr.flags = KR_WR_SIGNALED;
	wr.sge = &sge;
	wr.num_sge = 1;
	l = W->mem[d->src] + loc_off(q->idx);

	switch (q->op) {
	case OP_WRITE:
		q->len = pick_len(d);
		for (uint32_t k = 0; k < q->len; k++)
			l[k] = pat(q->idx, k);
		wr.opcode = KR_WR_RDMA_WRITE;
		wr.remote_addr = (uintptr_t)dmem + WTGT + (q->idx % WINDOW) * SLOT;
		wr.rkey = W->rkey[d->dst];
		break;
	case OP_READ:
		q->len = pick_len(d);
		q->roff = (uint32_t)(kr_test_splitmix64(&d->rng) % (RSRC_LEN - q->len));
		memset(l, 0xee, q->len);
		wr.opcode = KR_WR_RDMA_READ;
		wr.remote_addr = (uintptr_t)dmem + RSRC + q->roff;
		wr.rkey = W->rkey[d->dst];
		break;
	case OP_SEND:
		q->len = 16 + pick_len(d) % (SLOT - 16);
		for (uint32_t k = 0; k < q->len; k++)
			l[k] = pat(q->idx, k);
		((uint32_t *)l)[0] = SEND_MAGIC;
		((uint32_t *)l)[1] = q->idx;
		((uint32_t *)l)[2] = q->len;
		wr.opcode = KR_WR_SEND;
		t = atomic_load(&d->send_tail);
		if (t - atomic_load(&d->send_head) == SENDQ)
			FAIL_SEED("%s: more than %u SENDs not received", d->name, SENDQ);
		d->send_q[t % SENDQ][0] = q->idx;
		d->send_q[t % SENDQ][1] = q->len;
		atomic_store(&d->send_tail, t + 1); /* before the post: the receiver may look */
		break;
	case OP_FAA:
		q->len = 8;
		wr.opcode = KR_WR_ATOMIC_FA;
		wr.compare_add = 1 + kr_test_splitmix64(&d->rng) % 1000;
		q->expect = d->counter;
		d->counter += wr.compare_add;
		memset(l, 0xee, 8);
		wr.remote_addr = (uintptr_t)dmem + ATOM;
		wr.rkey = W->rkey[d->dst];
		break;
	case OP_CAS:
		q->len = 8;
		wr.opcode = KR_WR_ATOMIC_CS;
		wr.compare_add = d->counter; /* always the current value: must swap */
		wr.swap = kr_test_splitmix64(&d->rng) >> 8;
		q->expect = d->counter;
		d->counter = wr.swap;
		memset(l, 0xee, 8);
		wr.remote_addr = (uintptr_t)dmem + ATOM;
		wr.rkey = W->rkey[d->dst];
		break;
	}
	sge = sge_of(d->src, loc_off(q->idx), q->len);
	rc = kr_devx_qp_post_send(req_qp[i], &wr);
	if (rc)
		FAIL_SEED("%s: post of request %u: %d", d->name, q->idx, rc);
	d->n_op[q->op]++;
	d->posted++;
}

static void check_completion(int i, const struct kr_devx_wc *wc)
{
	struct dir *d = &W->d[i];
	uint32_t done = atomic_load(&d->completed);
	struct req *q = &d->inflight[done % WINDOW];
	const uint8_t *l = W->mem[d->src] + loc_off(q->idx);
	const uint8_t *rem;
	uint64_t v;

	if (wc->status != KR_WC_SUCCESS)
		FAIL_SEED("%s: request %" PRIu64 " (op %d): %s (syndrome %#x)", d->name, wc->wr_id,
			  q->op, kr_strerror(wc->status), wc->syndrome);
	if (wc->wr_id != done)
		FAIL_SEED("%s: completion for wr_id %" PRIu64 ", expected %u (lost, duplicated or "
			  "out of order)",
			  d->name, wc->wr_id, done);
	if (wc->qpn != req_qp[i]->qpn)
		FAIL_SEED("%s: completion of qpn %#x on the requester's CQ", d->name, wc->qpn);

	switch (q->op) {
	case OP_WRITE:
		CHECK_EQ(wc->opcode, KR_WC_RDMA_WRITE);
		rem = W->mem[d->dst] + WTGT + (q->idx % WINDOW) * SLOT;
		if (memcmp(rem, l, q->len))
			FAIL_SEED("%s: WRITE %u of %u bytes: target differs", d->name, q->idx,
				  q->len);
		break;
	case OP_READ:
		CHECK_EQ(wc->opcode, KR_WC_RDMA_READ);
		CHECK_EQ(wc->byte_len, q->len);
		for (uint32_t k = 0; k < q->len; k++)
			if (l[k] != rsrc_pat(q->roff + k))
				FAIL_SEED(
				    "%s: READ %u of %u bytes at %#x: byte %u is %#x, expected "
				    "%#x",
				    d->name, q->idx, q->len, q->roff, k, l[k],
				    rsrc_pat(q->roff + k));
		break;
	case OP_SEND:
		CHECK_EQ(wc->opcode, KR_WC_SEND);
		break;
	case OP_FAA:
	case OP_CAS:
		CHECK_EQ(wc->opcode, q->op == OP_FAA ? KR_WC_FETCH_ADD : KR_WC_COMP_SWAP);
		memcpy(&v, l, 8);
		if (v != q->expect)
			FAIL_SEED("%s: %s %u returned %#" PRIx64 ", expected %#" PRIx64
				  " (executed twice, or out of order)",
				  d->name, q->op == OP_FAA ? "FAA" : "CAS", q->idx, v, q->expect);
		break;
	}
	atomic_store(&d->completed, done + 1);
}

static void post_recv(int i, uint32_t slot)
{
	struct kr_devx_sge sge = sge_of(W->d[i].dst, RCV + (size_t)slot * SLOT, SLOT);
	int rc = kr_devx_qp_post_recv(resp_qp[i], &sge, 1, slot);

	if (rc)
		FAIL_SEED("%s: post_recv: %d", W->d[i].name, rc);
}

static void check_recv(int i, const struct kr_devx_wc *wc)
{
	struct dir *d = &W->d[i];
	const uint8_t *b = W->mem[d->dst] + RCV + wc->wr_id * SLOT;
	uint32_t h = atomic_load(&d->send_head), idx, len, hdr[3];

	if (wc->status != KR_WC_SUCCESS)
		FAIL_SEED("%s: receive: %s", d->name, kr_strerror(wc->status));
	if (wc->qpn != resp_qp[i]->qpn)
		FAIL_SEED("%s: receive for qpn %#x", d->name, wc->qpn);
	if (h == atomic_load(&d->send_tail))
		FAIL_SEED("%s: a SEND received that was never posted (duplicate)", d->name);
	idx = d->send_q[h % SENDQ][0];
	len = d->send_q[h % SENDQ][1];
	atomic_store(&d->send_head, h + 1);
	memcpy(hdr, b, sizeof(hdr));
	if (hdr[0] != SEND_MAGIC || hdr[1] != idx || hdr[2] != len || wc->byte_len != len)
		FAIL_SEED("%s: received SEND %u (len %u, byte_len %u), expected SEND %u (len %u)",
			  d->name, hdr[1], hdr[2], wc->byte_len, idx, len);
	for (uint32_t k = 12; k < len; k++)
		if (b[k] != pat(idx, k))
			FAIL_SEED("%s: SEND %u: byte %u differs", d->name, idx, k);
	atomic_fetch_add(&d->recvs, 1);
	post_recv(i, (uint32_t)wc->wr_id);
}

/* Requester of direction i: post what the window allows, reap completions. */
static bool progress_req(int i)
{
	struct dir *d = &W->d[i];
	struct kr_devx_wc wc[16];
	bool moved = false;
	int n;

	if (d->posted < d->total && d->posted - atomic_load(&d->completed) < WINDOW) {
		while (d->posted < d->total && d->posted - atomic_load(&d->completed) < WINDOW)
			post_one(i);
		kr_devx_qp_ring(req_qp[i]);
		moved = true;
	}
	n = kr_devx_cq_poll(req_qp[i]->send_cq, wc, 16);
	if (n < 0)
		FAIL_SEED("%s: cq_poll: %d", d->name, n);
	for (int k = 0; k < n; k++)
		check_completion(i, &wc[k]);
	return moved || n > 0;
}

/* Responder of direction i: check what was received, post receives again. */
static bool progress_recv(int i)
{
	struct kr_devx_wc wc[16];
	int n = kr_devx_cq_poll(resp_qp[i]->recv_cq, wc, 16);

	if (n < 0)
		FAIL_SEED("%s: recv cq_poll: %d", W->d[i].name, n);
	for (int k = 0; k < n; k++)
		check_recv(i, &wc[k]);
	return n > 0;
}

static bool dir_done(int i)
{
	const struct dir *d = &W->d[i];

	return atomic_load(&d->completed) == d->total &&
	       atomic_load(&d->send_head) == atomic_load(&d->send_tail);
}

static void print_stats(struct kr_fx_host *h)
{
	struct sim_stats s;

	CHECK_OK(sim_stats_query(h->ctx, &s));
	printf("  %s: packets tx %" PRIu64 " rx %" PRIu64 "; injected: drop %" PRIu64
	       " dup %" PRIu64 " reorder %" PRIu64 " delay %" PRIu64 "\n",
	       h->ctx->name, s.pkts_tx, s.pkts_rx, s.fault_drops, s.fault_dups, s.fault_reorders,
	       s.fault_delays);
	printf("  %s: requester: retransmitted packets %" PRIu64 " timeouts %" PRIu64
	       " retry_exc %" PRIu64 "; responder: duplicate requests %" PRIu64
	       " sequence NAKs %" PRIu64 " RNR NAKs %" PRIu64 " ICRC drops %" PRIu64 "\n",
	       h->ctx->name, s.retransmits, s.timeouts, s.retry_exc, s.dup_requests, s.seq_naks,
	       s.rnr_naks, s.icrc_drops);
}

static void dump_stats(void)
{
	for (int i = 0; i < 2; i++)
		if (hosts_here[i])
			print_stats(hosts_here[i]);
}

/* ---- one host: open, register the shared memory, two QPs ---- */

static void host_open(int me, struct host *h)
{
	char name[200];

#ifdef KR_LOSS_UDP
	snprintf(name, sizeof(name), "sim:lossu_%c@127.0.0.%d:%u,seed=%" PRIu64 "," FAULTS,
		 'a' + me, me + 1, W->port, seed);
#else
	snprintf(name, sizeof(name), "sim:loss_%c,seed=%" PRIu64 "," FAULTS, 'a' + me, seed);
#endif
	CHECK_OK(kr_fx_host_open(&h->fx, name, 4096));
	hosts_here[me] = &h->fx;
	CHECK_OK(kr_devx_mr_reg(h->fx.ctx, &h->fx.pd, W->mem[me], MEM_LEN,
				KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE |
				    KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC,
				&h->mr));
	W->lkey[me] = h->mr.lkey;
	W->rkey[me] = h->mr.rkey;
	CHECK_OK(mp_rc_create(&h->fx, &h->req));
	CHECK_OK(mp_rc_create(&h->fx, &h->resp));
	W->qpn_req[me] = h->req.qpn;
	W->qpn_resp[me] = h->resp.qpn;
	mp_gid(&h->fx, W->gid[me]);
	req_qp[me] = &h->req;
	resp_qp[1 - me] = &h->resp;
}

/* After both hosts are open: connect, post receives for the peer's SENDs. */
static void host_connect(int me, struct host *h)
{
	struct kr_devx_qp_conn conn;
	int peer = 1 - me;

	/* a short timer so that a lost tail is resent quickly (see LOSS_ACK_TIMEOUT) */
	kr_fx_conn_default(&conn);
	conn.ack_timeout = LOSS_ACK_TIMEOUT;
	conn.retry_count = 7;
	conn.rnr_retry = 7;
	CHECK_OK(mp_rc_connect(&h->req, W->qpn_resp[peer], W->gid[peer], &conn));
	CHECK_OK(mp_rc_connect(&h->resp, W->qpn_req[peer], W->gid[peer], &conn));
	for (uint32_t r = 0; r < NRECV; r++)
		post_recv(peer, r);
}

static void host_close(struct host *h)
{
	for (int i = 0; i < 2; i++)
		if (hosts_here[i] == &h->fx)
			hosts_here[i] = NULL;
	kr_fx_qp_destroy(&h->req);
	kr_fx_qp_destroy(&h->resp);
	CHECK_OK(kr_devx_mr_dereg(&h->mr));
	kr_fx_host_close(&h->fx);
}

/*
 * Run the directions this process serves until both are done. When nothing
 * moved the loop naps: on a 2-core machine a polling loop would take the CPU
 * from the engine threads it waits for.
 */
static void run_loop(bool req0, bool req1, bool recv0, bool recv1)
{
	const struct timespec nap = {.tv_nsec = 50000};
	uint64_t last_move = kr_test_now_ns();
	uint32_t idle = 0;

	while (!dir_done(0) || !dir_done(1)) {
		bool moved = false;

		if (req0)
			moved |= progress_req(0);
		if (req1)
			moved |= progress_req(1);
		if (recv0)
			moved |= progress_recv(0);
		if (recv1)
			moved |= progress_recv(1);
		if (atomic_load(&W->failed))
			exit(1); /* the other side failed and said why */
		if (moved) {
			last_move = kr_test_now_ns();
			idle = 0;
			continue;
		}
		if (++idle > 16)
			nanosleep(&nap, NULL);
		else
			sched_yield();
		if (kr_test_now_ns() - last_move > STALL_NS) {
			FAIL_SEED("no progress for 30 s: %s %u/%u completed, %s %u/%u",
				  W->d[0].name, atomic_load(&W->d[0].completed), W->d[0].total,
				  W->d[1].name, atomic_load(&W->d[1].completed), W->d[1].total);
		}
	}
}

/* The counter of direction i sits on its responder. */
static void check_counter(int i)
{
	uint64_t v;

	memcpy(&v, W->mem[W->d[i].dst] + ATOM, 8);
	if (v != W->d[i].counter)
		FAIL_SEED("%s: counter %#" PRIx64 ", expected %#" PRIx64, W->d[i].name, v,
			  W->d[i].counter);
}

static void print_dir(int i)
{
	const struct dir *d = &W->d[i];

	printf("  %s: %u requests (WRITE %" PRIu64 " READ %" PRIu64 " SEND %" PRIu64 " FAA %" PRIu64
	       " CAS %" PRIu64 "), %" PRIu64 " SENDs received in order\n",
	       d->name, atomic_load(&d->completed), d->n_op[OP_WRITE], d->n_op[OP_READ],
	       d->n_op[OP_SEND], d->n_op[OP_FAA], d->n_op[OP_CAS], atomic_load(&d->recvs));
}

#ifdef KR_LOSS_UDP
#define BAR()                                                                                      \
	do {                                                                                       \
		if (mp_barrier_wait(&W->bar, BAR_MS))                                              \
			FAIL_SEED("host %d: barrier timed out", me);                               \
	} while (0)

static int host_main(int me, void *arg)
{
	struct host h;

	(void)arg;
	host_open(me, &h);
	BAR();
	host_connect(me, &h);
	BAR();
	run_loop(me == 0, me == 1, me == 1, me == 0);
	BAR();
	/* nothing more may arrive: no duplicated completion or receive */
	CHECK_EQ(kr_fx_poll_none(&h.fx.scq, 50), 0);
	CHECK_EQ(kr_fx_poll_none(&h.fx.rcq, 50), 0);
	check_counter(1 - me);
	print_dir(me);
	print_stats(&h.fx);
	BAR();
	host_close(&h);
	return 0;
}
#endif

int main(void)
{
	uint64_t total = 100000, t0, dt;
	const char *env;

	setvbuf(stdout, NULL, _IONBF, 0);
	seed = 0x5eed2024u;
	env = getenv("KR_TEST_SEED");
	if (env)
		seed = strtoull(env, NULL, 0);
	env = getenv("KR_TEST_OPS");
	if (env)
		total = strtoull(env, NULL, 0);

	W = kr_fx_alloc_shared(sizeof(*W));
	CHECK(W != NULL);
	memset(W, 0, sizeof(*W));
	for (int i = 0; i < 2; i++) {
		struct dir *d = &W->d[i];

		W->mem[i] = kr_fx_alloc_shared(MEM_LEN);
		CHECK(W->mem[i] != NULL);
		snprintf(d->name, sizeof(d->name), "%c->%c", 'a' + i, 'b' - i);
		d->src = i;
		d->dst = 1 - i;
		d->total = (uint32_t)(total / 2 + (i == 0 ? total % 2 : 0));
		d->rng = seed * 2 + (uint64_t)i + 1;
		d->counter = 1000000ull * (uint64_t)(i + 1);
	}
	for (int i = 0; i < 2; i++) {
		uint8_t *rs = W->mem[W->d[i].dst] + RSRC;

		memcpy(W->mem[W->d[i].dst] + ATOM, &W->d[i].counter, 8);
		for (uint32_t k = 0; k < RSRC_LEN; k++)
			rs[k] = rsrc_pat(k);
	}

#ifdef KR_LOSS_UDP
	{
		const char *addrs[2] = {"127.0.0.1", "127.0.0.2"};
		pid_t pids[2];
		int rc;

		W->port = mp_pick_port(addrs, 2);
		if (!W->port)
			KR_SKIP("no free UDP port on 127.0.0.1 and 127.0.0.2");
		mp_barrier_init(&W->bar, 2);
		printf(TEST_NAME ": seed %" PRIu64 ", %" PRIu64 " requests, hosts in two processes "
				 "over UDP port %u, faults on both: %s\n",
		       seed, total, W->port, FAULTS);
		t0 = kr_test_now_ns();
		for (int i = 0; i < 2; i++) {
			pids[i] = mp_spawn(host_main, i, NULL);
			CHECK(pids[i] > 0);
		}
		rc = mp_wait(pids, 2, 150000);
		dt = kr_test_now_ns() - t0;
		if (rc)
			return rc;
	}
#else
	{
		static struct host h[2];

		printf(TEST_NAME ": seed %" PRIu64 ", %" PRIu64 " requests, in-process hosts, "
				 "faults on both: %s\n",
		       seed, total, FAULTS);
		host_open(0, &h[0]);
		host_open(1, &h[1]);
		host_connect(0, &h[0]);
		host_connect(1, &h[1]);
		t0 = kr_test_now_ns();
		run_loop(true, true, true, true);
		dt = kr_test_now_ns() - t0;
		/* nothing more may arrive: no duplicated completion or receive */
		for (int i = 0; i < 2; i++) {
			CHECK_EQ(kr_fx_poll_none(&h[i].fx.scq, 50), 0);
			CHECK_EQ(kr_fx_poll_none(&h[i].fx.rcq, 50), 0);
		}
		for (int i = 0; i < 2; i++) {
			check_counter(i);
			print_dir(i);
		}
		print_stats(&h[0].fx);
		print_stats(&h[1].fx);
		host_close(&h[1]);
		host_close(&h[0]);
	}
#endif
	printf("  %" PRIu64 " requests in %.2f s: %.1f us per request, %.0f requests/s\n", total,
	       dt / 1e9, dt / 1e3 / (double)total, (double)total * 1e9 / (double)dt);
	for (int i = 0; i < 2; i++)
		kr_fx_free_shared(W->mem[i], MEM_LEN);
	kr_fx_free_shared(W, sizeof(*W));
	KR_PASS(TEST_NAME);
}
