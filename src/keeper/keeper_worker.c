/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper's worker thread: every firmware command that answers no
 * request. It pairs RC slots with other keepers' (keeper_pair.c), resets DCIs
 * and RC QPs that came back (DIRTY), rebuilds BROKEN
 * ones and the queues of unbound receive endpoints (keeper_port.c), empties
 * the heaps of jobs that left and keeps --warm-heaps of them warm
 * (keeper_heap.c), and grows tenants below their low-water mark
 * (keeper_grow.c), so that a lease or an attach never waits behind a reset
 * (~7 ms of firmware on a ConnectX-4, and a job's exit can return dozens at
 * once).
 *
 * Who owns a slot:
 *   event loop   LEASED -> DIRTY (release, reclaim) and wakes the worker;
 *                adopts a slot whose q->ready is set: FREE, into the free
 *                ring (only the loop touches the rings).
 *   worker       DIRTY, BROKEN and EMPTY slots until it sets q->ready; it
 *                never touches a slot it made ready again before the loop
 *                adopted it, and the loop never touches DIRTY or BROKEN ones.
 * Each firmware step holds k->cmd_lock, which the loop takes only for a
 * job's MR commands and try-locks for heap scrubs.
 *
 * A slot is handed out only after its reset completed and left it in RTS
 * (DCI) or INIT (RC): a failed reset is a rebuild, a failed rebuild leaves
 * the slot BROKEN and is retried after a back-off. A tenant slot whose
 * launch left is renewed whole here (kr_keeper_tenant_renew) and the loop
 * puts it back in service.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

#define KR_WORKER_IDLE_MS    100 /* no wake-up lost: this only bounds growth checks */
#define KR_WORKER_BACKOFF_NS (200ull * 1000 * 1000)
#define KR_WORKER_WATCH_MS   1000 /* DCT key violations are read this often */

static void worker_signal_loop(struct kr_keeper *k)
{
	if (write(k->adopt_fd, &(uint64_t){1}, sizeof(uint64_t)) < 0 && errno != EAGAIN)
		KR_ERR_RATELIMITED("pool", "adopt eventfd: %s", strerror(errno));
}

/*
 * Reset a DIRTY slot, or rebuild it (BROKEN, or the reset failed). 0,
 * -EALREADY (neither: not ours to touch; the caller's look at it was stale),
 * or -errno. Never a slot the loop may have leased: see the adopt order.
 */
static int worker_restore(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t kind,
			  uint32_t i)
{
	bool dci = kind == KR_SLOT_DCI;
	struct kr_pool_slot *s = dci ? kr_seg_dci(k->seg, t->idx, i) : kr_seg_rc(k->seg, t->idx, i);
	struct kr_keeper_qp *q = dci ? &t->dci[i] : &t->rc[i];
	uint32_t st;
	int rc = -ENODEV;

	/* only this thread takes a slot out of DIRTY or BROKEN, and sets ready */
	st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&q->ready, __ATOMIC_ACQUIRE) ||
	    (st != KR_SLOT_DIRTY && st != KR_SLOT_BROKEN))
		return -EALREADY;
	/* a paired QP: its peer's goes back to its spares too; before cmd_lock,
	 * which resetting a broken control DCI takes */
	if (!dci)
		kr_keeper_pair_unlink(k, t, q);
	pthread_mutex_lock(&k->cmd_lock);
	if (st == KR_SLOT_DIRTY && q->built) {
		rc = dci ? kr_keeper_dci_reset(k, q) : kr_keeper_rc_reset(k, q);
		if (rc)
			KR_WARN("pool", "tenant %u %s %u: reset failed (%s); rebuilding", t->idx,
				dci ? "DCI" : "RC", i, strerror(-rc));
	}
	if (rc) {
		kr_keeper_qp_destroy(k, q);
		rc = dci ? kr_keeper_dci_build(k, t, i) : kr_keeper_rc_build(k, t, i);
		if (rc) {
			kr_keeper_qp_destroy(k, q);
			s->state = KR_SLOT_BROKEN;
		}
	}
	pthread_mutex_unlock(&k->cmd_lock);
	if (rc)
		return rc;
	s->resets++;
	/* QP, CQ, zone descriptor and slot written before the loop adopts it */
	__atomic_store_n(&q->ready, true, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Empty t's heaps whose job left and warm free ones (keeper_heap.c). After a
 * failure (no hugepage) only when retry says the back-off has passed.
 * Returns heaps done.
 */
static uint32_t worker_heaps(struct kr_keeper *k, struct kr_keeper_tenant *t, bool retry,
			     bool *failed)
{
	int rc;

	if (k->heaps_failed && !retry)
		return 0;
	rc = kr_keeper_heaps_restore(k, t);
	if (rc < 0) {
		*failed = k->heaps_failed = true;
		return 0;
	}
	k->heaps_failed = false;
	return (uint32_t)rc;
}

/*
 * One pass over every tenant: restore what came back, then grow. BROKEN slots
 * only once *retry_ns has passed. Returns slots made ready; *failed is set
 * when a rebuild or a build failed.
 */
static uint32_t worker_pass(struct kr_keeper *k, uint64_t *retry_ns, bool *failed)
{
	bool retry = kr_now_ns() >= *retry_ns;
	uint32_t done = 0;

	for (uint32_t t = 0; t < k->cfg.tenants; t++) {
		struct kr_keeper_tenant *kt = &k->tenant[t];
		int renew = __atomic_load_n(&kt->renew, __ATOMIC_ACQUIRE);

		if (renew == KR_RENEW_WANTED && retry) {
			if (kr_keeper_tenant_renew(k, kt)) {
				*failed = true; /* again after the back-off */
			} else {
				__atomic_store_n(&kt->renew, KR_RENEW_DONE, __ATOMIC_RELEASE);
				done++;
			}
		}
		if (renew != KR_RENEW_NONE)
			continue; /* the loop puts it back in service first */
		/* pairing first: a job waits on it, and a peer keeper's timer runs */
		done += kr_keeper_pair_work(k, kt);
		/* heaps next: an attach waits for a warm one, a lease has other DCIs */
		done += worker_heaps(k, kt, retry, failed);
		for (uint32_t e = 0; e < k->cfg.ports; e++) {
			int rc = kr_keeper_ep_restore(k, kt, e);

			if (rc > 0)
				done++;
			else if (rc < 0)
				*failed = true;
		}
		for (uint32_t kind = KR_SLOT_DCI; kind <= KR_SLOT_RC; kind++) {
			bool dci = kind == KR_SLOT_DCI;
			uint32_t n = dci ? k->seg->dcis : k->seg->rc_spares;

			for (uint32_t i = 0; i < n; i++) {
				struct kr_pool_slot *s =
				    dci ? kr_seg_dci(k->seg, t, i) : kr_seg_rc(k->seg, t, i);
				struct kr_keeper_qp *q = dci ? &kt->dci[i] : &kt->rc[i];
				uint32_t st;
				int rc;

				/* ready first: the loop marks FREE before it clears ready */
				if (__atomic_load_n(&q->ready, __ATOMIC_ACQUIRE))
					continue;
				st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
				if (st != KR_SLOT_DIRTY && (st != KR_SLOT_BROKEN || !retry))
					continue;
				/* a heap an attach waits for goes before each reset */
				done += worker_heaps(k, kt, false, failed);
				rc = worker_restore(k, kt, kind, i);
				if (!rc)
					done++;
				else if (rc != -EALREADY)
					*failed = true;
			}
			switch (kr_keeper_grow_one(k, kt, kind)) {
			case 0:
				break;
			case 1:
				done++;
				break;
			default:
				*failed = true;
			}
		}
	}
	if (*failed && retry)
		*retry_ns = kr_now_ns() + KR_WORKER_BACKOFF_NS;
	return done;
}

/*
 * Each tenant's DCT key violations (requests with a wrong DC key: another
 * tenant's, a forged or a stale one), read from the device once a period
 * into the pool segment (krctl pool).
 */
static void worker_watch_dcts(struct kr_keeper *k, uint64_t *next_ns)
{
	uint64_t now = kr_now_ns();

	if (now < *next_ns)
		return;
	*next_ns = now + KR_WORKER_WATCH_MS * 1000000ull;
	for (uint32_t t = 0; t < k->cfg.tenants; t++) {
		struct kr_keeper_tenant *kt = &k->tenant[t];
		struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t);
		uint32_t n = 0, fresh = 0;
		int rc = -ENOENT;

		/* a launch's DCT comes and goes on the event loop, under cmd_lock */
		pthread_mutex_lock(&k->cmd_lock);
		if (kt->dct_ok)
			rc = kr_devx_dct_key_violations(&kt->dct, &n);
		if (!rc && n > kt->dct_viol_seen) {
			fresh = n - kt->dct_viol_seen;
			kt->dct_viol_seen = n;
		}
		pthread_mutex_unlock(&k->cmd_lock);
		if (!fresh)
			continue;
		KR_WARN_RATELIMITED("pool",
				    "tenant %u: its DC target dropped %u requests with a wrong "
				    "DC key",
				    t, fresh);
		__atomic_fetch_add(&tr->dct_key_violations, fresh, __ATOMIC_RELAXED);
	}
}

static void *worker_main(void *arg)
{
	struct kr_keeper *k = arg;
	uint64_t retry_ns = 0, watch_ns = 0;

	while (!__atomic_load_n(&k->worker_stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p = {.fd = k->work_fd, .events = POLLIN};
		bool failed = false;
		uint64_t n;

		worker_watch_dcts(k, &watch_ns);
		if (worker_pass(k, &retry_ns, &failed)) {
			worker_signal_loop(k);
			continue; /* what came back meanwhile, before sleeping */
		}
		if (poll(&p, 1,
			 failed ? (int)(KR_WORKER_BACKOFF_NS / 1000000) : KR_WORKER_IDLE_MS) > 0)
			(void)!read(k->work_fd, &n, sizeof(n));
	}
	return NULL;
}

/*
 * Wakes asked for while this thread holds them (the loop, serving a request)
 * wait for kr_keeper_worker_release(): per thread, so the worker's own and
 * another thread's wakes never wait on the loop.
 */
static __thread bool wake_held, wake_due;

static void worker_kick(struct kr_keeper *k)
{
	if (k->work_fd >= 0 && write(k->work_fd, &(uint64_t){1}, sizeof(uint64_t)) < 0 &&
	    errno != EAGAIN)
		KR_ERR_RATELIMITED("pool", "worker eventfd: %s", strerror(errno));
}

/* kr_keeper_worker_wake() - see keeper.h. */
void kr_keeper_worker_wake(struct kr_keeper *k)
{
	if (wake_held)
		wake_due = true;
	else
		worker_kick(k);
}

/* kr_keeper_worker_hold() - see keeper.h. */
void kr_keeper_worker_hold(void)
{
	wake_held = true;
}

/* kr_keeper_worker_release() - see keeper.h. */
void kr_keeper_worker_release(struct kr_keeper *k)
{
	wake_held = false;
	if (wake_due) {
		wake_due = false;
		worker_kick(k);
	}
}

/* A QP the worker found in error counts against the job that gave it back. */
static void adopt_blame(struct kr_keeper *k, struct kr_keeper_qp *q)
{
	if (q->came_back_err && q->from_job_plus1 &&
	    kr_seg_job(k->seg, q->from_job_plus1 - 1)->gen == q->from_job_gen)
		kr_keeper_guard_error(k, q->from_job_plus1 - 1);
	q->came_back_err = false;
	q->from_job_plus1 = 0;
}

/* kr_keeper_worker_adopt() - see keeper.h. */
void kr_keeper_worker_adopt(struct kr_keeper *k)
{
	uint64_t n;

	if (read(k->adopt_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		KR_ERR_RATELIMITED("pool", "adopt eventfd: %s", strerror(errno));
	for (uint32_t t = 0; t < k->cfg.tenants; t++) {
		struct kr_keeper_tenant *kt = &k->tenant[t];
		struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t);

		/* being renewed: what is ready now is about to be destroyed */
		if (__atomic_load_n(&kt->renew, __ATOMIC_ACQUIRE) == KR_RENEW_WANTED)
			continue;
		/*
		 * FREE before ready is cleared: a worker that sees ready clear then
		 * sees FREE (or later) and leaves the slot alone (worker_pass). In
		 * the free ring before ready is cleared too: growth counts ready
		 * slots, then the ring (kr_keeper_grow_one), so a slot being adopted
		 * is counted once or twice, never missed (a miss grew the pool past
		 * its low-water mark).
		 */
		for (uint32_t i = 0; i < k->seg->dcis; i++)
			if (__atomic_load_n(&kt->dci[i].ready, __ATOMIC_ACQUIRE)) {
				struct kr_keeper_qp *q = &kt->dci[i];

				__atomic_store_n(&kr_seg_dci(k->seg, t, i)->state, KR_SLOT_FREE,
						 __ATOMIC_RELEASE);
				kr_keeper_ring_put(k, tr->dci_ring_off, i);
				__atomic_store_n(&q->ready, false, __ATOMIC_RELEASE);
				adopt_blame(k, q);
			}
		for (uint32_t i = 0; i < k->seg->rc_spares; i++)
			if (__atomic_load_n(&kt->rc[i].ready, __ATOMIC_ACQUIRE)) {
				__atomic_store_n(&kr_seg_rc(k->seg, t, i)->state, KR_SLOT_FREE,
						 __ATOMIC_RELEASE);
				kr_keeper_ring_put(k, tr->rc_ring_off, i);
				__atomic_store_n(&kt->rc[i].ready, false, __ATOMIC_RELEASE);
				adopt_blame(k, &kt->rc[i]);
			}
		if (__atomic_load_n(&kt->renew, __ATOMIC_ACQUIRE) == KR_RENEW_DONE)
			kr_keeper_launch_renewed(k, kt);
	}
}

/* kr_keeper_worker_start() - see keeper.h. */
int kr_keeper_worker_start(struct kr_keeper *k)
{
	int rc;

	rc = kr_keeper_grow_reserve(k);
	if (rc)
		return rc;
	k->work_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (k->work_fd < 0)
		return -errno;
	rc = pthread_create(&k->worker, NULL, worker_main, k);
	if (rc) {
		KR_ERR("pool", "worker thread: %s", strerror(rc));
		return -rc;
	}
	k->worker_up = true;
	return 0;
}

/* kr_keeper_worker_stop() - see keeper.h. */
void kr_keeper_worker_stop(struct kr_keeper *k)
{
	if (k->worker_up) {
		__atomic_store_n(&k->worker_stop, 1, __ATOMIC_RELEASE);
		kr_keeper_worker_wake(k);
		pthread_join(k->worker, NULL);
		k->worker_up = false;
	}
	if (k->work_fd >= 0)
		close(k->work_fd);
	k->work_fd = -1;
}
