/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ready-DCI ring (keeper_ready.c, job_lease.c): DCIs the keeper leases
 * to a job ahead of its threads' first connects.
 *   refill    the attach's grant is on the ring; once the job claimed it,
 *             the keeper's tick offers two more; two threads take them at
 *             once with no lease request
 *   threads   four threads lease and give back DCIs while the keeper
 *             refills the ring: every lease is the job's in the segment,
 *             never one held by two threads at once
 *   release   a DCI given back refills the ring before the release returns
 *             (not at a tick): ten rounds of take and give back, every take
 *             from the ring, no lease request
 *   killed    a job killed while it takes from its ring and gives back:
 *             every DCI it held or was offered comes back FREE
 *   pressure  another job leases every DCI this one does not hold: the
 *             offers nobody claimed are taken back (reset) and handed to
 *             it; their claim words say revoked, and this job's next
 *             lease skips them
 *   hostile   garbage in the claim words changes nothing for the keeper
 *             or other jobs
 * At the end, with every job gone, all DCIs are FREE. Waits are bounded;
 * time never decides pass/fail.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "kr_test.h"
#include "pool_fixture.h"

#define NDCI	 8
#define NTHREADS 4
#define ROUNDS	 100

static struct kp_keeper K;

/* Wait (bounded) until cond holds. */
#define WAIT_FOR(cond, ms, what)                                                                   \
	do {                                                                                       \
		double t0_ = kp_now_ms();                                                          \
		while (!(cond) && kp_now_ms() - t0_ < (ms))                                        \
			usleep(500);                                                               \
		if (!(cond))                                                                       \
			KR_FAIL("not within %d ms: %s", (int)(ms), what);                          \
	} while (0)

static const struct kr_pool_job *my_job(const struct kr_ctx *ctx)
{
	return kr_seg_job(ctx->seg, ctx->job);
}

static uint32_t ring_prod(const struct kr_ctx *ctx)
{
	return __atomic_load_n(&my_job(ctx)->ready_prod, __ATOMIC_ACQUIRE);
}

static uint32_t *claims(const struct kr_ctx *ctx)
{
	return (uint32_t *)((uint8_t *)ctx->heap + KR_HEAP_READY_CLAIM_OFF);
}

/* l is ctx's lease in the segment: the slot names the job at l's generation. */
static void check_mine(const struct kr_ctx *ctx, const struct kr_lease *l)
{
	const struct kr_pool_slot *s = kr_seg_dci(ctx->seg, ctx->tenant, l->index);

	CHECK(l->index < NDCI);
	CHECK_EQ(s->state, KR_SLOT_LEASED);
	CHECK_EQ(s->owner_job, ctx->job + 1);
	CHECK_EQ(s->gen, l->gen);
	CHECK_EQ(s->qpn, l->qpn);
}

/* A lease, retried while the pool is empty (DCIs being reset). */
static int lease_wait(struct kr_ctx *ctx, struct kr_lease *l)
{
	int rc;

	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 10000; usleep(200)) {
		rc = kr_lease_alloc(ctx, KR_LEASE_DCI, l);
		if (rc != -ENOSPC)
			return rc;
	}
	return -ENOSPC;
}

/* ---- the jobs in children (attached before this process attaches) ---- */

/* Killed mid-take: fill the ring, then take and give back until killed. */
static void job_churn(int out, int in, void *arg)
{
	struct kr_ctx *ctx = kp_attach(&K, 10000);
	struct kr_lease l;
	char c;

	(void)arg;
	if (!ctx || read(in, &c, 1) != 1 || lease_wait(ctx, &l))
		_exit(1);
	if (write(out, "r", 1) != 1)
		_exit(1);
	for (;;) {
		struct kr_lease m;

		if (!lease_wait(ctx, &m))
			kr_lease_free(ctx, &m);
	}
}

/* Pressure: lease the number of DCIs ordered, report how many it got, detach. */
static void job_taker(int out, int in, void *arg)
{
	struct kr_ctx *ctx = kp_attach(&K, 10000);
	struct kr_lease l[NDCI];
	uint32_t want = 0, got = 0;

	(void)arg;
	if (!ctx || read(in, &want, sizeof(want)) != sizeof(want) || want > NDCI)
		_exit(1);
	while (got < want && !lease_wait(ctx, &l[got]))
		got++;
	if (write(out, &got, sizeof(got)) != sizeof(got))
		_exit(1);
	kr_detach(ctx);
	_exit(0);
}

/* ---- this process: job A ---- */

struct racer {
	struct kr_ctx *ctx;
	pthread_barrier_t *go;
	struct kr_lease l;
	int rc;
};

static void *race_take(void *p)
{
	struct racer *r = p;

	pthread_barrier_wait(r->go);
	r->rc = kr_lease_alloc(r->ctx, KR_LEASE_DCI, &r->l);
	return NULL;
}

static void test_refill(struct kr_ctx *ctx)
{
	pthread_barrier_t go;
	struct racer r[2];
	pthread_t th[2];
	struct kr_lease first;
	uint64_t calls0, takes0;

	/* the attach's grant is on the ring; nothing more before the job uses it */
	CHECK_EQ(ring_prod(ctx), KR_POOL_READY_DCIS);
	usleep(30000); /* three of the keeper's ticks */
	CHECK_EQ(ring_prod(ctx), KR_POOL_READY_DCIS);
	calls0 = ctx->seg->lease_calls;
	takes0 = ctx->ready_ring_takes;
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &first));
	check_mine(ctx, &first);
	CHECK_EQ(ctx->ready_ring_takes, takes0 + 1);
	/* the keeper sees the claim at its next tick and offers two more */
	WAIT_FOR(ring_prod(ctx) == KR_POOL_READY_DCIS + KR_JOB_READY_FILL, 5000,
		 "the keeper offers two DCIs");
	takes0 = ctx->ready_ring_takes;
	CHECK_OK(pthread_barrier_init(&go, NULL, 2));
	for (int i = 0; i < 2; i++) {
		r[i] = (struct racer){.ctx = ctx, .go = &go, .rc = -1};
		CHECK_OK(pthread_create(&th[i], NULL, race_take, &r[i]));
	}
	for (int i = 0; i < 2; i++)
		CHECK_OK(pthread_join(th[i], NULL));
	pthread_barrier_destroy(&go);
	for (int i = 0; i < 2; i++) {
		CHECK_OK(r[i].rc);
		check_mine(ctx, &r[i].l);
		CHECK(r[i].l.index != first.index);
	}
	CHECK(r[0].l.index != r[1].l.index);
	CHECK_EQ(ctx->ready_ring_takes, takes0 + 2);
	CHECK_EQ(ctx->seg->lease_calls, calls0); /* no request to the keeper */
	for (int i = 0; i < 2; i++)
		CHECK_OK(kr_lease_free(ctx, &r[i].l));
	CHECK_OK(kr_lease_free(ctx, &first));
}

static _Atomic int g_held[NDCI];

static void *churn_thread(void *p)
{
	struct racer *r = p;

	r->rc = 0;
	pthread_barrier_wait(r->go); /* all four at once */
	for (int i = 0; i < ROUNDS && !r->rc; i++) {
		struct kr_lease l;
		int zero = 0;

		r->rc = lease_wait(r->ctx, &l);
		if (r->rc)
			break;
		check_mine(r->ctx, &l);
		/* never a DCI another thread holds */
		if (!atomic_compare_exchange_strong(&g_held[l.index], &zero, 1))
			KR_FAIL("DCI %u handed to two threads", l.index);
		atomic_store(&g_held[l.index], 0);
		r->rc = kr_lease_free(r->ctx, &l);
	}
	return NULL;
}

static void test_threads(struct kr_ctx *ctx)
{
	pthread_barrier_t go;
	struct racer r[NTHREADS];
	pthread_t th[NTHREADS];
	uint64_t takes0 = ctx->ready_ring_takes;

	CHECK_OK(pthread_barrier_init(&go, NULL, NTHREADS));
	for (int i = 0; i < NTHREADS; i++) {
		r[i] = (struct racer){.ctx = ctx, .go = &go, .rc = -1};
		CHECK_OK(pthread_create(&th[i], NULL, churn_thread, &r[i]));
	}
	for (int i = 0; i < NTHREADS; i++) {
		CHECK_OK(pthread_join(th[i], NULL));
		CHECK_OK(r[i].rc);
	}
	pthread_barrier_destroy(&go);
	CHECK(ctx->ready_ring_takes > takes0); /* some came from the ring */
	/* all given back: the job holds just the offers ahead of it */
	WAIT_FOR(my_job(ctx)->dci_leases == ring_prod(ctx) - ctx->ready_taken, 5000,
		 "the job holds only its unclaimed offers");
}

static bool settled(const struct kr_ctx *ctx);

static void test_release(struct kr_ctx *ctx)
{
	for (int i = 0; i < 10; i++) {
		uint64_t calls0, takes0;
		struct kr_lease l;

		/* the DCIs given back are FREE again: the pool has room to offer */
		WAIT_FOR(settled(ctx), 5000, "the pool settles");
		calls0 = __atomic_load_n(&ctx->seg->lease_calls, __ATOMIC_RELAXED);
		takes0 = ctx->ready_ring_takes;
		CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l));
		check_mine(ctx, &l);
		CHECK_EQ(ctx->ready_ring_takes, takes0 + 1);
		CHECK_EQ(__atomic_load_n(&ctx->seg->lease_calls, __ATOMIC_RELAXED), calls0);
		CHECK_OK(kr_lease_free(ctx, &l));
		/* the release's reply comes after the refill: an offer ahead now */
		if (ring_prod(ctx) - ctx->ready_taken < 1)
			KR_FAIL("round %d: the ring is empty after a release", i);
	}
}

/* The DCIs job j holds or was offered. */
static uint32_t held_by(const struct kr_ctx *ctx, uint32_t j)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < NDCI; i++)
		n += kr_seg_dci(ctx->seg, ctx->tenant, i)->owner_job == j + 1;
	return n;
}

static void test_killed(struct kr_ctx *ctx, struct kp_child *c)
{
	uint32_t cj = UINT32_MAX;
	uint64_t calls0;
	int status;
	char r;

	CHECK_EQ(write(c->to, "g", 1), 1);
	CHECK_EQ(read(c->from, &r, 1), 1);
	calls0 = __atomic_load_n(&ctx->seg->lease_calls, __ATOMIC_RELAXED);
	/* its job slot: the one whose pid is the child's */
	for (uint32_t j = 0; j < ctx->seg->jobs; j++)
		if (kr_seg_job(ctx->seg, j)->pid == c->pid)
			cj = j;
	CHECK(cj != UINT32_MAX);
	/* it holds its first DCI and is busy leasing and giving back another (a
	 * second one is held only for moments: sampling it raced a loaded machine) */
	WAIT_FOR(held_by(ctx, cj) >= 1 &&
		     __atomic_load_n(&ctx->seg->lease_calls, __ATOMIC_RELAXED) - calls0 >= 20,
		 5000, "the churning job holds DCIs and churns");
	usleep(20000);
	CHECK_OK(kill(c->pid, SIGKILL));
	CHECK_EQ(waitpid(c->pid, &status, 0), c->pid);
	close(c->to);
	close(c->from);
	WAIT_FOR(held_by(ctx, cj) == 0, 5000, "the dead job's DCIs taken back");
}

static uint32_t free_dcis(const struct kr_ctx *ctx)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < NDCI; i++)
		n += __atomic_load_n(&kr_seg_dci(ctx->seg, ctx->tenant, i)->state,
				     __ATOMIC_RELAXED) == KR_SLOT_FREE;
	return n;
}

/* No DCI on its way back (DIRTY, being reset): each is FREE or someone's. */
static bool settled(const struct kr_ctx *ctx)
{
	for (uint32_t i = 0; i < NDCI; i++) {
		uint32_t st = __atomic_load_n(&kr_seg_dci(ctx->seg, ctx->tenant, i)->state,
					      __ATOMIC_RELAXED);

		if (st != KR_SLOT_FREE && st != KR_SLOT_LEASED)
			return false;
	}
	return true;
}

static void test_pressure(struct kr_ctx *ctx, struct kp_child *taker)
{
	struct kr_lease mine, more;
	uint32_t want, got = 0, revoked = 0, prod;

	WAIT_FOR(settled(ctx), 5000, "the pool settles");
	CHECK_OK(lease_wait(ctx, &mine));
	/* offers ahead of this job: claimed by nobody */
	WAIT_FOR(ring_prod(ctx) - ctx->ready_taken >= 1, 5000, "an offer on the ring");
	prod = ring_prod(ctx);
	want = NDCI - 1; /* all but the one this job holds (its attach grant among them) */
	CHECK_OK(kp_child_run(taker, &want, sizeof(want), &got, sizeof(got)));
	CHECK_EQ(got, want);
	for (uint32_t i = ctx->ready_taken; i != prod; i++)
		revoked += claims(ctx)[i % KR_JOB_READY_RING] == KR_READY_REVOKED(i);
	CHECK(revoked >= 1);
	/* the revoked offers are skipped: no DCI of the other job, ENOSPC */
	WAIT_FOR(settled(ctx) && free_dcis(ctx) + held_by(ctx, ctx->job) == NDCI, 5000,
		 "the taker's DCIs back");
	CHECK_OK(kr_lease_free(ctx, &mine));
	CHECK_OK(lease_wait(ctx, &more));
	check_mine(ctx, &more);
	CHECK_OK(kr_lease_free(ctx, &more));
}

static void test_hostile(struct kr_ctx *ctx)
{
	struct kr_ctx_attr attr;
	struct kr_lease l;

	for (uint32_t i = 0; i < KR_JOB_READY_RING; i++)
		claims(ctx)[i] = 0xffffffffu - i; /* garbage */
	usleep(30000); /* the keeper's ticks read them */
	/* the keeper goes on: leases still work, the job is still attached */
	CHECK_OK(lease_wait(ctx, &l));
	check_mine(ctx, &l);
	CHECK_OK(kr_lease_free(ctx, &l));
	CHECK_OK(kr_ctx_query(ctx, &attr));
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1",  "--dcis",	   "8",
					   "--jobs",	"4",  "--heap-mb",   "2",
					   "--hugepages", "64", NULL};
	struct kp_child churn, taker;
	struct kr_ctx *ctx, *obs;

	kp_require_hugepages(64);
	kp_keeper_init(&K);
	CHECK_OK(kp_keeper_start(&K, args));
	churn = kp_spawn(job_churn, NULL);
	taker = kp_spawn(job_taker, NULL);
	ctx = kp_attach(&K, 10000);
	CHECK(ctx != NULL);

	test_refill(ctx);
	test_threads(ctx);
	test_release(ctx);
	test_killed(ctx, &churn);
	test_pressure(ctx, &taker);
	test_hostile(ctx);
	CHECK(ctx->seg->ready_grants > 0);
	CHECK_OK(kr_detach(ctx));

	/* every job gone: every DCI FREE again, none leaked to a ring */
	obs = kr_job_observe(K.sock);
	CHECK(obs != NULL);
	WAIT_FOR((kr_job_observe_refresh(obs), free_dcis(obs) == NDCI), 5000,
		 "all DCIs free after the last detach");
	kr_detach(obs);
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("pool_ready_ring");
}
