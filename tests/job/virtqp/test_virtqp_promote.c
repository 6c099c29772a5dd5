/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DC->RC promotion between two keepers on two simulated hosts (as
 * test_virtqp_two_nodes: node 1 at 127.0.0.2, node 2 at 127.0.0.3, RoCEv2
 * over UDP loopback). Node 2's keeper has one spare RC QP per tenant.
 *
 *   1. A vQP to node 2 runs 100,000 mixed WRITE/READ/CAS (8 in flight, three
 *      in four behind KR_POST_MORE) with KR_PROMOTE_RATE=1000: it is promoted
 *      mid-run. Every completion comes
 *      in posting order with its own wr_id, every READ and CAS returns what
 *      the model of node 2's memory says, and node 2's memory equals the
 *      model at the end.
 *   2. Spares exhausted: node 2's one spare is the first vQP's; a pair asked
 *      for now is refused (link FAILED), and a second hot vQP to node 2
 *      stays on DC and runs its 5,000 requests exactly.
 *   3. Demotion: idle for longer than four rate windows, the first vQP goes
 *      back to DC at its next kr_poll(); node 2's spare comes back (a pair
 *      asked for now is UP); then 20,000 more requests, exact (promoted
 *      again on the way).
 *   4. Node 2's keeper stopped (SIGSTOP) while a pair is asked for: the link
 *      fails after the keepers' timeout, the job goes on; once it runs
 *      again its late answer is turned down, and node 2 gets its spare back.
 *   5. After node 1's job detached, node 2's job sees every RC slot of its
 *      tenant free again (the pairs were undone).
 *   6. Node 2's keeper killed while a pair is asked for: the link fails,
 *      node 1's keeper takes its RC slot back, and node 1's job goes on (a
 *      vQP to its own node: WRITE, READ, bytes checked).
 *   7. No post waits for its keeper: the job's socket is swapped for one
 *      end of a socket pair that no keeper reads. A hot vQP runs 3,000
 *      requests (a watchdog fails the test if any call blocks), exact, on
 *      DC, and leaves one pair request in the socket; relayed to the keeper,
 *      its answer comes to the job slot and the vQP is promoted.
 *
 * "loss": both wires drop 5 % of packets each way, and duplicate and reorder
 * 2 %; the counts are 10x smaller (every DC and RC request, and each pairing
 * message, is retransmitted by the transport; duplicates are dropped by PSN).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_two_hosts.h"

#define NWORDS	 512u /* node 2's words: the first vQP uses 0..255, the second 256..511 */
#define INFLIGHT 8u

static uint64_t scale = 1; /* 10 under loss */

/* Node 2: the memory, then (after A detached) its RC slots all free again. */
static int side_b(const struct kp_keeper *kb, int wfd, int rfd)
{
	struct kr_ctx *ctx = kp_attach(kb, 5000);
	struct kr_mr *mr;
	uint64_t *words;
	uint8_t go;
	bool all_free = false;

	CHECK(ctx != NULL);
	words = kr_malloc(ctx, NWORDS * 8);
	CHECK(words != NULL);
	memset(words, 0, NWORDS * 8);
	mr = vq_lend(ctx, words, NWORDS * 8, wfd);
	CHECK_EQ(read(rfd, &go, 1), 1); /* A detached */
	for (double t0 = kp_now_ms(); !all_free && kp_now_ms() - t0 < 10000; usleep(10000)) {
		all_free = true;
		for (uint32_t i = 0; i < ctx->seg->rc_spares; i++) {
			const struct kr_pool_slot *s = kr_seg_rc(ctx->seg, ctx->tenant, i);

			if (s->state == KR_SLOT_EMPTY)
				continue; /* never built */
			if (s->state != KR_SLOT_FREE || s->link != KR_LINK_NONE)
				all_free = false;
		}
	}
	CHECK(all_free);
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	return 0;
}

/* One vQP's requests over its words of node 2, checked against a model of them. */
struct drive {
	struct kr_vqp *v;
	const struct vq_lent *b;
	uint32_t first, nwords; /* its words */
	uint64_t *model;	/* [NWORDS] */
	uint64_t *loc;		/* heap: [INFLIGHT] READ/CAS results */
	uint64_t expect[INFLIGHT];
	bool check[INFLIGHT];
	uint64_t posted, done;
	uint64_t on_rc; /* completions polled while the vQP was on RC */
};

/*
 * Post request i: 0, or -EAGAIN (no credits, or the vQP is changing queues).
 * Three in four go with KR_POST_MORE, so batches span DC, RC and the moves
 * between them; one left open when the loop stops posting is rung by the
 * poll that finds nothing.
 */
static int drive_post(struct drive *d, uint64_t i)
{
	uint32_t more = i % 4 != 3 ? KR_POST_MORE : 0;
	uint32_t w = d->first + (uint32_t)((i * 2654435761u) % d->nwords);
	uint64_t raddr = d->b->addr + (uint64_t)w * 8, *m = &d->model[w];
	uint32_t slot = i % INFLIGHT;
	uint64_t val, cmp;
	int rc;

	switch (i % 3) {
	case 0:
		val = i << 8 | 0xa5;
		rc = kr_post_write(d->v, &val, 8, raddr, d->b->rkey, i, KR_POST_INLINE | more);
		if (!rc)
			*m = val;
		d->check[slot] = false;
		return rc;
	case 1:
		d->loc[slot] = ~0ull;
		rc = kr_post_read(d->v, &d->loc[slot], 8, raddr, d->b->rkey, i, more);
		d->expect[slot] = *m;
		d->check[slot] = true;
		return rc;
	default:
		cmp = i % 9 == 2 ? *m + 1 : *m; /* now and then one that fails */
		val = i * 7 + 1;
		d->loc[slot] = ~0ull;
		rc = kr_post_cas(d->v, &d->loc[slot], raddr, d->b->rkey, cmp, val, i, more);
		d->expect[slot] = *m;
		d->check[slot] = true;
		if (!rc && cmp == *m)
			*m = val;
		return rc;
	}
}

/* Poll what came: each in order, each READ/CAS value as the model said. */
static void drive_poll(struct drive *d)
{
	struct kr_wc wc[INFLIGHT];
	struct kr_vqp_attr a;
	int n = kr_poll(d->v, wc, INFLIGHT);

	CHECK(n >= 0);
	CHECK_OK(kr_vqp_query(d->v, &a));
	for (int j = 0; j < n; j++, d->done++) {
		uint32_t slot = d->done % INFLIGHT;

		if (wc[j].status != KR_WC_SUCCESS || wc[j].wr_id != d->done)
			KR_FAIL("request %llu: status %u wr_id %llu", (unsigned long long)d->done,
				wc[j].status, (unsigned long long)wc[j].wr_id);
		if (d->check[slot] && d->loc[slot] != d->expect[slot])
			KR_FAIL("request %llu: read 0x%llx, the model says 0x%llx",
				(unsigned long long)d->done, (unsigned long long)d->loc[slot],
				(unsigned long long)d->expect[slot]);
		d->on_rc += a.transport == KR_VQP_RC;
	}
}

static void drive(struct drive *d, uint64_t n)
{
	uint64_t end = d->posted + n;
	double t0 = kp_now_ms();

	while (d->done < end) {
		CHECK(kp_now_ms() - t0 < 300000); /* a hang, not a slow run */
		while (d->posted < end && d->posted - d->done < INFLIGHT) {
			int rc = drive_post(d, d->posted);

			if (rc == -EAGAIN)
				break;
			CHECK_OK(rc);
			d->posted++;
		}
		drive_poll(d);
	}
}

/* Node 2's memory over d's words equals the model. */
static void drive_verify(struct drive *d, uint64_t *buf)
{
	CHECK_OK(kr_post_read(d->v, buf, d->nwords * 8, d->b->addr + (uint64_t)d->first * 8,
			      d->b->rkey, 1ull << 40, 0));
	CHECK_OK(vq_wait_ok(d->v, 1ull << 40));
	CHECK(memcmp(buf, d->model + d->first, d->nwords * 8) == 0);
}

/*
 * A pair asked for straight from the keeper until its link is want (a spare
 * on either side may still be being reset): the link it last ended at, the
 * slot given back each time. Bounded.
 */
static int pair_until(struct kr_ctx *ctx, const struct vq_lent *b, int want)
{
	int link = -1;

	for (double t0 = kp_now_ms(); link != want && kp_now_ms() - t0 < 20000;) {
		struct kr_lease l;
		int rc = kr_job_rc_pair(ctx, 2, &b->av, &l);

		if (rc == -ENOSPC) { /* ours: still being reset */
			usleep(10000);
			continue;
		}
		CHECK_OK(rc);
		CHECK_EQ(l.kind, KR_LEASE_RC);
		link = KR_LINK_PAIRING;
		while (link == KR_LINK_PAIRING && kp_now_ms() - t0 < 20000) {
			usleep(1000);
			link = kr_job_rc_link(ctx, &l);
		}
		CHECK_OK(kr_lease_free(ctx, &l));
	}
	return link;
}

static void wait_transport(struct kr_vqp *v, uint32_t want)
{
	struct kr_vqp_attr a = {0};
	struct kr_wc wc;

	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 10000; usleep(1000)) {
		CHECK(kr_poll(v, &wc, 1) == 0); /* nothing in flight: runs the step */
		CHECK_OK(kr_vqp_query(v, &a));
		if (a.transport == want)
			return;
	}
	KR_FAIL("vQP still on transport %u", a.transport);
}

/* Has node 1's keeper counted an event of the tenant's DC target CQ (within ms)? */
static bool dct_event_seen(struct kr_ctx *ctx, double ms)
{
	const volatile uint32_t *n = &kr_seg_tenant(ctx->seg, ctx->tenant)->dct_events;

	for (double t0 = kp_now_ms(); *n == 0 && kp_now_ms() - t0 < ms;)
		usleep(1000);
	return *n > 0;
}

static void watchdog_fired(int sig)
{
	static const char msg[] = "FAIL: a post or poll waited for the keeper (60 s)\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

/* 7. The keeper gets no request until the test relays it: the posts go on regardless. */
static void keeper_unread(struct kr_ctx *ctx, struct drive *d)
{
	union {
		struct kr_msg_pair pair;
		uint8_t raw[512];
	} m;
	struct kr_vqp_attr a;
	uint64_t on_rc = d->on_rc;
	int sv[2], real;
	ssize_t n;

	CHECK_OK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	pthread_mutex_lock(&ctx->lock);
	real = ctx->sock;
	ctx->sock = sv[0];
	pthread_mutex_unlock(&ctx->lock);
	signal(SIGALRM, watchdog_fired);
	alarm(60);
	drive(d, 3000);
	alarm(0);
	CHECK_OK(kr_vqp_query(d->v, &a));
	CHECK_EQ(a.transport, KR_VQP_DC);
	CHECK_EQ(d->on_rc, on_rc);
	n = recv(sv[1], &m, sizeof(m), MSG_DONTWAIT);
	CHECK_EQ(n, (ssize_t)sizeof(m.pair));
	CHECK_EQ(m.pair.hdr.type, KR_MSG_PAIR);
	CHECK(recv(sv[1], &m, sizeof(m), MSG_DONTWAIT) < 0); /* asked once */
	pthread_mutex_lock(&ctx->lock);
	ctx->sock = real;
	CHECK_EQ(send(real, &m.pair, sizeof(m.pair), 0), (ssize_t)sizeof(m.pair));
	pthread_mutex_unlock(&ctx->lock);
	close(sv[0]);
	close(sv[1]);
	for (double t0 = kp_now_ms(); a.transport != KR_VQP_RC && kp_now_ms() - t0 < 20000;) {
		drive(d, 200);
		CHECK_OK(kr_vqp_query(d->v, &a));
	}
	CHECK_EQ(a.transport, KR_VQP_RC);
	printf("keeper unread: %llu requests on DC while the ask waited, then promoted\n",
	       3000ull);
}

static int side_a(const struct kp_keeper *ka, const struct kp_keeper *kb, const struct vq_lent *b)
{
	struct drive d1 = {.b = b, .first = 0, .nwords = NWORDS / 2};
	struct drive d2 = {.b = b, .first = NWORDS / 2, .nwords = NWORDS / 2};
	uint64_t model[NWORDS] = {0}, *buf;
	struct kr_ctx_attr ca;
	struct kr_vqp_attr a;
	struct kr_ctx *ctx;

	CHECK_OK(setenv("KR_PROMOTE_RATE", "1000", 1)); /* 64 posts within 64 ms is hot */
	ctx = kp_attach(ka, 5000);
	CHECK(ctx != NULL);
	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.promote_rate, 1000);
	buf = kr_malloc(ctx, NWORDS * 8);
	d1.loc = kr_malloc(ctx, INFLIGHT * 8);
	d2.loc = kr_malloc(ctx, INFLIGHT * 8);
	CHECK(buf && d1.loc && d2.loc);
	d1.model = d2.model = model;

	/* 1. promoted under traffic */
	d1.v = kr_connect(ctx, 2, NULL);
	CHECK(d1.v != NULL);
	CHECK_OK(kr_vqp_query(d1.v, &a));
	CHECK_EQ(a.transport, KR_VQP_DC);
	drive(&d1, 100000 / scale);
	CHECK_OK(kr_vqp_query(d1.v, &a));
	printf("promotion: %llu of %llu completions on RC, %u promotion(s)\n",
	       (unsigned long long)d1.on_rc, (unsigned long long)d1.done, a.promotions);
	CHECK_EQ(a.transport, KR_VQP_RC);
	CHECK(a.promotions >= 1);
	CHECK(d1.on_rc > 0 && d1.on_rc < d1.done); /* it started on DC */
	/* node 2's answer raised an event on this keeper's DC target CQ (not only its tick) */
	if (!dct_event_seen(ctx, 10000)) {
		kp_log_dump(ka);
		KR_FAIL("no DC target CQ event counted on node 1 in 10 s");
	}
	drive_verify(&d1, buf);

	/* 2. node 2 has no spare left: refused, and a hot vQP stays on DC */
	CHECK_EQ(pair_until(ctx, b, KR_LINK_FAILED), KR_LINK_FAILED);
	d2.v = kr_connect(ctx, 2, NULL);
	CHECK(d2.v != NULL);
	drive(&d2, 5000 / scale);
	CHECK_OK(kr_vqp_query(d2.v, &a));
	CHECK_EQ(a.transport, KR_VQP_DC);
	CHECK_EQ(a.promotions, 0);
	CHECK_EQ(d2.on_rc, 0);
	drive_verify(&d2, buf);
	CHECK_OK(kr_disconnect(d2.v));

	/* 3. cold: back on DC, and node 2's spare is free again */
	usleep(400 * 1000); /* 4 windows of 64 ms, and some */
	wait_transport(d1.v, KR_VQP_DC);
	CHECK_OK(kr_vqp_query(d1.v, &a));
	CHECK_EQ(a.demotions, 1);
	drive_verify(&d1, buf);
	CHECK_EQ(pair_until(ctx, b, KR_LINK_UP), KR_LINK_UP);
	drive(&d1, 20000 / scale);
	drive_verify(&d1, buf);
	CHECK_OK(kr_vqp_query(d1.v, &a));
	printf("after demotion: %u promotion(s), %u demotion(s), %llu on RC\n", a.promotions,
	       a.demotions, (unsigned long long)d1.on_rc);

	/* 4. node 2's keeper does not answer: the pair fails, the job goes on */
	usleep(400 * 1000);
	wait_transport(d1.v, KR_VQP_DC); /* its spare free for node 2's late answer */
	CHECK_OK(kill(kb->pid, SIGSTOP));
	CHECK_EQ(pair_until(ctx, b, KR_LINK_FAILED), KR_LINK_FAILED);
	CHECK_OK(kill(kb->pid, SIGCONT));
	drive(&d1, 2000 / scale);
	drive_verify(&d1, buf);

	/* 7. (after 4: node 2's spare must be free) its own keeper reads nothing */
	usleep(400 * 1000);
	wait_transport(d1.v, KR_VQP_DC);
	keeper_unread(ctx, &d1);
	drive_verify(&d1, buf);

	CHECK_OK(kr_disconnect(d1.v));
	CHECK_OK(kr_detach(ctx));
	return 0;
}

/* 6. Node 2's keeper dies (stopped first, so it cannot answer) while node 1 asks for a pair. */
static void peer_killed(const struct kp_keeper *ka, struct kp_keeper *kb, const struct vq_lent *b)
{
	struct kr_ctx *ctx = kp_attach(ka, 5000);
	const struct kr_pool_slot *s;
	struct kr_mr_key key;
	struct kr_lease l;
	struct kr_vqp *v;
	struct kr_mr *mr;
	uint64_t *mem;
	int link = KR_LINK_PAIRING;

	CHECK(ctx != NULL);
	CHECK_OK(kill(kb->pid, SIGSTOP));
	CHECK_OK(kr_job_rc_pair(ctx, 2, &b->av, &l));
	kp_keeper_stop(kb, SIGKILL);
	for (double t0 = kp_now_ms(); link == KR_LINK_PAIRING && kp_now_ms() - t0 < 20000;
	     usleep(1000))
		link = kr_job_rc_link(ctx, &l);
	CHECK_EQ(link, KR_LINK_FAILED);
	CHECK_OK(kr_lease_free(ctx, &l));
	s = kr_seg_rc(ctx->seg, ctx->tenant, l.index);
	for (double t0 = kp_now_ms(); s->state != KR_SLOT_FREE && kp_now_ms() - t0 < 10000;)
		usleep(1000);
	CHECK_EQ(s->state, KR_SLOT_FREE);
	CHECK_EQ(s->link, KR_LINK_NONE);
	/* this node goes on */
	mem = kr_malloc(ctx, 32);
	CHECK(mem != NULL);
	mr = kr_reg_mr(ctx, mem, 32, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	v = kr_connect(ctx, KR_NODE_SELF, NULL);
	CHECK(v != NULL);
	mem[0] = 0x5eed;
	CHECK_OK(kr_post_write(v, &mem[0], 8, key.addr + 8, key.rkey, 1, 0));
	CHECK_OK(vq_wait_ok(v, 1));
	CHECK_OK(kr_post_read(v, &mem[2], 8, key.addr + 8, key.rkey, 2, 0));
	CHECK_OK(vq_wait_ok(v, 2));
	CHECK_EQ(mem[1], 0x5eed);
	CHECK_EQ(mem[2], 0x5eed);
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
}

int main(int argc, char **argv)
{
	static const char *const b_extra[] = {"--rc-spares", "1", NULL};
	struct vq_two_hosts h;
	const char *opts = "";

	if (argc > 1 && !strcmp(argv[1], "loss")) {
		opts = ",drop=0.05,dup=0.02,reorder=0.02";
		scale = 10;
	}
	vq_two_hosts_start(&h, opts, b_extra, side_b);
	CHECK_OK(side_a(&h.a, &h.b, &h.lent));
	vq_two_hosts_join(&h);
	peer_killed(&h.a, &h.b, &h.lent);
	vq_two_hosts_stop(&h);
	KR_PASS(scale > 1 ? "virtqp_promote_loss" : "virtqp_promote");
}
