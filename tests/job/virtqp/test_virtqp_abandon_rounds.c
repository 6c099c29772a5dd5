/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Randomised rounds of kr_disconnect() with requests in flight (issue: wrong
 * bytes after kr_disconnect with requests in flight). Two keepers on sim
 * hosts over RoCEv2 on UDP loopback (as test_virtqp_two_nodes), both wires
 * dropping 1 %, duplicating 1 % and reordering 2 % of packets; node 1's job
 * runs rounds against node 2's memory and its own (KR_NODE_SELF), keeping a
 * model of both:
 *
 *   every round WRITEs a fresh pattern into one block of the target and
 *   READs a block back into buffer dst, checked against the model; in 5 %
 *   of rounds it first leaves READs (into dst and the atomics' words),
 *   WRITEs and FAA/CAS (to blocks no round checks) in flight, half behind
 *   KR_POST_MORE, and disconnects, then connects again. kr_disconnect()
 *   promises that no request of the vQP touches its buffers once it
 *   returned, so the very next round READs into the same dst, often through
 *   the other target's DCI: an abandoned READ landing late (its answer lost
 *   and resent, or reordered) shows as a wrong block. A second vQP to each
 *   target stays connected, so the DCI stays with the job (the keeper does
 *   not reset it under the abandoned requests).
 *
 * Cases (argv[1]):
 *   dc       the above, on DC (vQPs to node 2 and to this node);
 *   rc       node 2's vQP promoted to RC (KR_PROMOTE_RATE=1000) and abandoned there;
 *   thread   the abandoning vQP is connected and posted on by a thread that
 *            exits with its requests in flight; the main thread disconnects it;
 *   recover  the abandoned requests include one that fails (a key without
 *            remote rights), and a second vQP on the same DCI has READs
 *            flushed behind it: the DCI is recovered with orphans and a redo
 *            list, and the second vQP's reposted READs are checked;
 *   batch    every abandoned request behind KR_POST_MORE (a batch left open).
 * argv[2] seconds (default 4), argv[3] seed (default 42).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_two_hosts.h"

#define BLK	  256u /* bytes per block */
#define NBLK	  32u  /* blocks the rounds write and check */
#define NSCRATCH  8u   /* blocks abandoned WRITEs and atomics go to */
#define REGION	  ((NBLK + NSCRATCH) * BLK)
#define ABANDON_N 4u /* requests left in flight at a disconnect */
#define TAG	  (1ull << 40)

enum abandon_case { CASE_DC, CASE_RC, CASE_THREAD, CASE_RECOVER, CASE_BATCH };

static int side_b(const struct kp_keeper *kb, int wfd, int rfd)
{
	return vq_lend_zeroed(kb, wfd, rfd, REGION);
}

/* One target: its memory, the vQP in use, and the model of its checked blocks. */
struct target {
	uint32_t node;
	uint64_t addr;
	uint32_t rkey;
	struct kr_vqp *v;
	struct kr_vqp *keep; /* connected all along: the DCI stays with the job */
	uint8_t model[NBLK][BLK];
	uint64_t rounds, abandons, reads, wrong, reposted;
};

struct run {
	struct kr_ctx *ctx;
	enum abandon_case c;
	uint64_t rng;
	uint8_t *src;	   /* heap: a round's pattern; abandoned WRITEs send from it too */
	uint8_t *dst;	   /* heap: [ABANDON_N + 1][BLK]: READs back, abandoned READs too */
	uint64_t *atom;	   /* heap: [ABANDON_N] abandoned atomics' results */
	uint64_t bad_addr; /* memory without remote rights: a READ of it fails */
	uint32_t bad_rkey;
	/* dst slots 0, 1 and the atomics' words as last left by a completed
	 * request or a returned kr_disconnect(): nothing may change them after */
	uint8_t snap[2 * BLK + ABANDON_N * 8];
	uint64_t late; /* times they changed anyway: an abandoned request landed late */
};

/* The job's buffers as of now: every request that may write them is done. */
static void snap_take(struct run *r)
{
	memcpy(r->snap, r->dst, 2 * BLK);
	memcpy(r->snap + 2 * BLK, r->atom, ABANDON_N * 8);
}

/* Nothing wrote the buffers since snap_take(). */
static void snap_check(struct run *r, const char *when)
{
	if (!memcmp(r->snap, r->dst, 2 * BLK) && !memcmp(r->snap + 2 * BLK, r->atom, ABANDON_N * 8))
		return;
	if (++r->late <= 5)
		fprintf(stderr,
			"%s: a buffer of an abandoned request changed after kr_disconnect()\n",
			when);
	snap_take(r);
}

static uint64_t next_rand(struct run *r)
{
	return kr_test_splitmix64(&r->rng);
}

static struct kr_vqp *connect_to(struct run *r, const struct target *t)
{
	struct kr_vqp *v = kp_connect_wait(r->ctx, t->node);

	if (!v)
		KR_FAIL("connect to node %u: %s", t->node, strerror(errno));
	return v;
}

/* The next completion of v: wr_id and status as given. */
static void wait_one(struct kr_vqp *v, uint64_t wr_id, struct kr_wc *out)
{
	struct kr_wc wc;
	int n = vq_wait(v, &wc, 1);

	if (n != 1)
		KR_FAIL("no completion for %llu (%d)", (unsigned long long)wr_id, n);
	if (wc.wr_id != wr_id || wc.status != KR_WC_SUCCESS)
		KR_FAIL("completion %llu status %s, expected %llu", (unsigned long long)wc.wr_id,
			kr_strerror(wc.status), (unsigned long long)wr_id);
	if (out)
		*out = wc;
}

/* A READ of block blk into buf, checked against the model. */
static void check_read(struct target *t, const uint8_t *buf, uint32_t blk, const char *what)
{
	t->reads++;
	if (!memcmp(buf, t->model[blk], BLK))
		return;
	t->wrong++;
	if (t->wrong <= 5)
		fprintf(stderr,
			"node %u round %llu block %u (%s): read 0x%016llx.., the model says "
			"0x%016llx..\n",
			t->node, (unsigned long long)t->rounds, blk, what,
			(unsigned long long)((const uint64_t *)buf)[0],
			(unsigned long long)((const uint64_t *)t->model[blk])[0]);
}

/* Post with -EAGAIN (credits, a vQP changing queues) waited out by polling nothing. */
#define POST_RETRY(call)                                                                           \
	do {                                                                                       \
		int rc_;                                                                           \
		double t0_ = kp_now_ms();                                                          \
		while ((rc_ = (call)) == -EAGAIN) {                                                \
			struct kr_wc wc_;                                                          \
			CHECK(kp_now_ms() - t0_ < 10000);                                          \
			CHECK(kr_poll(t->v, &wc_, 0) >= 0);                                        \
		}                                                                                  \
		CHECK_OK(rc_);                                                                     \
	} while (0)

/* One verified round: a fresh pattern WRITTEN to a block, a block READ back into dst. */
static void round_verified(struct run *r, struct target *t)
{
	uint32_t wblk = (uint32_t)(next_rand(r) % NBLK), rblk = (uint32_t)(next_rand(r) % NBLK);
	uint64_t pat = next_rand(r);

	uint8_t *dst = r->dst + (t->rounds % 2) * BLK;

	snap_check(r, "round start");
	for (uint32_t i = 0; i < BLK / 8; i++)
		((uint64_t *)r->src)[i] = pat + i;
	memset(dst, 0xee, BLK);
	POST_RETRY(kr_post_write(t->v, r->src, BLK, t->addr + (uint64_t)wblk * BLK, t->rkey, 1, 0));
	memcpy(t->model[wblk], r->src, BLK);
	POST_RETRY(kr_post_read(t->v, dst, BLK, t->addr + (uint64_t)rblk * BLK, t->rkey, 2, 0));
	wait_one(t->v, 1, NULL);
	wait_one(t->v, 2, NULL);
	check_read(t, dst, rblk, "round");
	/* the round wrote its slot only: the rest must be as it was */
	memcpy(r->snap + (t->rounds % 2) * BLK, dst, BLK);
	snap_check(r, "round end");
	t->rounds++;
}

/* Leave ABANDON_N requests of every kind in flight on v, into the buffers rounds reuse. */
static void abandon_post(struct run *r, struct target *t, struct kr_vqp *v, bool batch)
{
	for (uint32_t i = 0; i < ABANDON_N; i++) {
		uint32_t more = batch || next_rand(r) % 2 ? KR_POST_MORE : 0;
		uint64_t scratch = t->addr + (NBLK + next_rand(r) % NSCRATCH) * BLK;
		int rc;

		switch (next_rand(r) % 4) {
		case 0: /* a checked block, into dst (the next round READs there) */
			rc = kr_post_read(v, r->dst + (i % 2) * BLK, BLK,
					  t->addr + (next_rand(r) % NBLK) * BLK, t->rkey, TAG | i,
					  more);
			break;
		case 1:
			rc = kr_post_write(v, r->src, BLK, scratch, t->rkey, TAG | i, more);
			break;
		case 2:
			rc = kr_post_faa(v, &r->atom[i], scratch, t->rkey, 1, TAG | i, more);
			break;
		default:
			rc = kr_post_cas(v, &r->atom[i], scratch, t->rkey, 0, 1, TAG | i, more);
			break;
		}
		if (rc == -EAGAIN)
			break;
		CHECK_OK(rc);
	}
}

struct thread_arg {
	struct run *r;
	struct target *t;
	struct kr_vqp *v;
};

/* "thread": connect, leave requests in flight, exit; the vQP outlives the thread. */
static void *abandon_thread(void *p)
{
	struct thread_arg *a = p;

	a->v = connect_to(a->r, a->t);
	abandon_post(a->r, a->t, a->v, false);
	return NULL;
}

/*
 * "recover": v's requests around one that fails, and READs of a second vQP
 * on the same DCI behind them (flushed, kept for the redo list); v is
 * disconnected while they wait; they are posted again on a fresh DCI and
 * return the model's bytes.
 */
static void abandon_recover(struct run *r, struct target *t)
{
	struct kr_vqp *w = connect_to(r, t);
	uint32_t blk[2];

	CHECK(w->dci == t->v->dci);
	abandon_post(r, t, t->v, false);
	CHECK_OK(kr_post_read(t->v, r->dst, 8, r->bad_addr, r->bad_rkey, TAG | 9, 0));
	for (uint32_t i = 0; i < 2; i++) {
		blk[i] = (uint32_t)(next_rand(r) % NBLK);
		memset(r->dst + (2 + i) * BLK, 0xdd, BLK);
		CHECK_OK(kr_post_read(w, r->dst + (2 + i) * BLK, BLK,
				      t->addr + (uint64_t)blk[i] * BLK, t->rkey, 20 + i, 0));
	}
	abandon_post(r, t, t->v, false);
	CHECK_OK(kr_disconnect(t->v));
	snap_take(r);
	t->v = w;
	for (uint32_t i = 0; i < 2; i++) {
		struct kr_wc wc;

		wait_one(w, 20 + i, &wc);
		t->reposted += !!(wc.flags & KR_WC_F_REPOSTED);
		check_read(t, r->dst + (2 + i) * BLK, blk[i], "redo");
	}
}

static void abandon(struct run *r, struct target *t)
{
	struct thread_arg a = {r, t, NULL};
	pthread_t th;

	t->abandons++;
	switch (r->c) {
	case CASE_THREAD:
		CHECK_OK(kr_disconnect(t->v)); /* nothing in flight on it */
		CHECK_OK(pthread_create(&th, NULL, abandon_thread, &a));
		CHECK_OK(pthread_join(th, NULL));
		t->v = a.v;
		break;
	case CASE_RECOVER:
		abandon_recover(r, t);
		return; /* the second vQP goes on */
	default:
		abandon_post(r, t, t->v, r->c == CASE_BATCH);
		break;
	}
	CHECK_OK(kr_disconnect(t->v));
	snap_take(r);
	t->v = connect_to(r, t);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "dc";
	double seconds = argc > 2 ? atof(argv[2]) : 4;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 42;
	static struct target tg[2];
	struct vq_two_hosts h;
	struct run r = {.rng = seed};
	struct kr_mr_key key, bad;
	struct kr_mr *self_mr, *bad_mr;
	uint8_t *self_mem, *bad_mem;
	uint64_t wrong = 0, on_rc = 0;
	char opts[32];

	r.c = !strcmp(name, "rc")	 ? CASE_RC
	      : !strcmp(name, "thread")	 ? CASE_THREAD
	      : !strcmp(name, "recover") ? CASE_RECOVER
	      : !strcmp(name, "batch")	 ? CASE_BATCH
					 : CASE_DC;
	/* the seed through the environment: a device name holds 63 bytes */
	snprintf(opts, sizeof(opts), "seed=%llu", (unsigned long long)seed);
	CHECK_OK(setenv("KR_SIM_OPTIONS", opts, 1));
	vq_two_hosts_start(&h, ",drop=0.01,dup=0.01,reorder=0.02", NULL, side_b);
	CHECK_OK(setenv("KR_PROMOTE_RATE", r.c == CASE_RC ? "1000" : "off", 1));
	r.ctx = kp_attach(&h.a, 5000);
	CHECK(r.ctx != NULL);
	r.src = kr_malloc(r.ctx, BLK);
	r.dst = kr_malloc(r.ctx, (ABANDON_N + 1) * BLK);
	r.atom = kr_malloc(r.ctx, ABANDON_N * 8);
	self_mem = kr_malloc(r.ctx, REGION);
	bad_mem = kr_malloc(r.ctx, 64);
	CHECK(r.src && r.dst && r.atom && self_mem && bad_mem);
	memset(self_mem, 0, REGION);
	self_mr = kr_reg_mr(r.ctx, self_mem, REGION,
			    KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE |
				KR_MR_REMOTE_ATOMIC);
	bad_mr = kr_reg_mr(r.ctx, bad_mem, 64, KR_MR_LOCAL_WRITE);
	CHECK(self_mr && bad_mr);
	CHECK_OK(kr_mr_key(self_mr, &key));
	CHECK_OK(kr_mr_key(bad_mr, &bad));
	r.bad_addr = bad.addr;
	r.bad_rkey = bad.rkey;
	tg[0].node = 2;
	tg[0].addr = h.lent.addr;
	tg[0].rkey = h.lent.rkey;
	tg[1].node = KR_NODE_SELF;
	tg[1].addr = key.addr;
	tg[1].rkey = key.rkey;
	for (int i = 0; i < 2; i++) {
		tg[i].keep = connect_to(&r, &tg[i]);
		tg[i].v = connect_to(&r, &tg[i]);
	}

	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < seconds * 1000;) {
		struct target *t = &tg[next_rand(&r) % 2];

		if (r.c == CASE_RC && t->node != KR_NODE_SELF) {
			struct kr_vqp_attr a;

			/* on node 2's vQP: abandon only once it is on RC */
			CHECK_OK(kr_vqp_query(t->v, &a));
			if (a.transport == KR_VQP_RC) {
				on_rc++;
				if (next_rand(&r) % 20 == 0)
					abandon(&r, t);
			}
		} else if (next_rand(&r) % 100 < 5) {
			abandon(&r, t);
		}
		round_verified(&r, t);
	}
	for (int i = 0; i < 2; i++) {
		printf("%s node %d: %llu rounds, %llu disconnects with requests in flight, %llu "
		       "READs checked (%llu reposted), %llu wrong\n",
		       name, (int)tg[i].node, (unsigned long long)tg[i].rounds,
		       (unsigned long long)tg[i].abandons, (unsigned long long)tg[i].reads,
		       (unsigned long long)tg[i].reposted, (unsigned long long)tg[i].wrong);
		wrong += tg[i].wrong;
		CHECK_OK(kr_disconnect(tg[i].v));
		CHECK_OK(kr_disconnect(tg[i].keep));
	}
	usleep(100 * 1000); /* answers resent after a loss come within 17 ms */
	snap_check(&r, "end");
	printf("%s: %llu times a buffer changed after kr_disconnect() returned\n", name,
	       (unsigned long long)r.late);
	CHECK_OK(kr_dereg_mr(self_mr));
	CHECK_OK(kr_dereg_mr(bad_mr));
	CHECK_OK(kr_detach(r.ctx));
	vq_two_hosts_join(&h);
	vq_two_hosts_stop(&h);
	CHECK_EQ(wrong, 0);
	CHECK_EQ(r.late, 0);
	CHECK(tg[0].abandons > 0 && tg[1].abandons > 0); /* every case did what it is named for */
	if (r.c == CASE_RECOVER)
		CHECK(tg[0].reposted + tg[1].reposted > 0);
	if (r.c == CASE_RC)
		CHECK(on_rc > 0);
	return 0;
}
