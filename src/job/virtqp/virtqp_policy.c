/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A thread's DCIs and which one a new vQP goes on (kr_connect(3)'s policy).
 *
 * A DCI talks to one DC target at a time and switches only when idle, so a
 * thread that sends to several peers over one DCI waits a round trip at
 * each switch. Like UCX's pool of DCIs per worker, a thread holds up to
 * ctx->dcis_per_thread DCIs and spreads its targets over them: a new vQP
 * joins the DCI already serving its target (adding no switch), else takes
 * a DCI of its own while the thread is below its limit, else shares the
 * DCI serving the fewest targets. A thread's second and later DCIs come
 * from the process's spares, or from the keeper only while more than a
 * quarter of the tenant's DCIs are free, so that fan-out never starves
 * another thread's first connect; or when none of its DCIs has the credits
 * a new vQP asks for (taking from the reserve beats failing). A vQP never
 * moves (its order is its DCI's). Placement is decided at connect, never
 * on the data path.
 *
 * The set lives in heap memory named by thread-local storage; at thread
 * exit its DCIs are orphaned (owner NULL), not freed: vQPs the thread left
 * connected still hold them until kr_disconnect().
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "job/virtqp/virtqp.h"

struct kr_vq_thread {
	const struct kr_ctx *ctx; /* the attachment the set belongs to */
	uint64_t attach_id;
	uint32_t n;
	struct kr_vq_dci *dci[KR_DCIS_PER_THREAD_MAX];
};

static __thread struct kr_vq_thread *kr_vq_me;
static pthread_key_t kr_vq_me_key;
static pthread_once_t kr_vq_me_once = PTHREAD_ONCE_INIT;

static void thread_forget(struct kr_vq_thread *me)
{
	for (uint32_t i = 0; i < me->n; i++)
		me->dci[i]->owner = NULL;
	me->n = 0;
}

static void thread_exit(void *p)
{
	struct kr_vq_thread *me = p;

	thread_forget(me);
	free(me);
}

static void thread_key_init(void)
{
	(void)pthread_key_create(&kr_vq_me_key, thread_exit);
}

/* The calling thread's set for ctx: a set of another attachment is forgotten. */
static struct kr_vq_thread *thread_set(struct kr_ctx *ctx)
{
	struct kr_vq_thread *me = kr_vq_me;

	if (!me) {
		pthread_once(&kr_vq_me_once, thread_key_init);
		me = calloc(1, sizeof(*me));
		if (!me)
			return NULL;
		if (pthread_setspecific(kr_vq_me_key, me)) {
			free(me);
			return NULL;
		}
		kr_vq_me = me;
	}
	if (me->ctx != ctx || me->attach_id != ctx->attach_id) {
		thread_forget(me); /* their vQPs were to be disconnected before kr_detach() */
		me->ctx = ctx;
		me->attach_id = ctx->attach_id;
	}
	return me;
}

static struct kr_vq_tgt *dci_tgt(struct kr_vq_dci *d, uint64_t key)
{
	for (uint32_t i = 0; i < d->ntgt; i++)
		if (d->tgt[i].key == key)
			return &d->tgt[i];
	return NULL;
}

static void thread_drop(struct kr_vq_dci *d)
{
	struct kr_vq_thread *me = d->owner;

	d->owner = NULL;
	if (!me)
		return;
	for (uint32_t i = 0; i < me->n; i++)
		if (me->dci[i] == d) {
			me->dci[i] = me->dci[--me->n];
			return;
		}
}

/* A new DCI into the thread's set (spare_only: no keeper lease). NULL + errno. */
static struct kr_vq_dci *thread_add(struct kr_ctx *ctx, struct kr_vq_thread *me, uint32_t credits,
				    bool spare_only)
{
	struct kr_vq_dci *d = kr_vq_dci_new(ctx, spare_only);

	if (!d)
		return NULL;
	if (credits > d->cnt) {
		kr_vq_dci_unpick(d);
		errno = EINVAL;
		return NULL;
	}
	d->owner = me;
	me->dci[me->n++] = d;
	return d;
}

struct kr_vq_dci *kr_vq_dci_pick(struct kr_ctx *ctx, uint64_t key, uint32_t credits)
{
	struct kr_vq_thread *me = thread_set(ctx);
	struct kr_vq_dci *d, *best = NULL;
	bool below, short_pool = false;
	int err = ENOSPC;

	if (!me) {
		errno = ENOMEM;
		return NULL;
	}
	/* 1. the DCI already serving the target */
	for (uint32_t i = 0; i < me->n; i++) {
		d = me->dci[i];
		if (d->credits_free >= credits && dci_tgt(d, key))
			return d;
	}
	/* 2. a DCI of its own while below the limit (a spare only, if the pool is short) */
	below = me->n < ctx->dcis_per_thread;
	if (below) {
		/* an offer on the job's ready ring is its own already: no pool cost */
		short_pool = me->n && !kr_seg_dci_room(ctx->seg, ctx->tenant) &&
			     !kr_job_ready_offered(ctx);
		d = thread_add(ctx, me, credits, short_pool);
		if (d)
			return d;
		/* the pool is short or the job's share exhausted: share one held */
		if (!me->n || (errno != ENOSPC && errno != EMFILE))
			return NULL;
		err = errno;
	}
	/* 3. the one serving the fewest targets, then with the most room */
	for (uint32_t i = 0; i < me->n; i++) {
		d = me->dci[i];
		if (d->credits_free < credits)
			continue;
		if (!best || d->ntgt < best->ntgt ||
		    (d->ntgt == best->ntgt && d->credits_free > best->credits_free))
			best = d;
	}
	if (best)
		return best;
	/* none has the room: from the reserve, rather than fail */
	if (short_pool && (d = thread_add(ctx, me, credits, false)))
		return d;
	if (short_pool && errno != ENOSPC && errno != EMFILE)
		return NULL;
	errno = me->n && credits > me->dci[0]->cnt ? EINVAL : err;
	return NULL;
}

int kr_vq_dci_hold(struct kr_vq_dci *d, uint64_t key, uint32_t credits)
{
	struct kr_vq_tgt *t = dci_tgt(d, key);

	if (!t) {
		if (d->ntgt == d->tgt_cap) {
			uint32_t cap = d->tgt_cap ? 2 * d->tgt_cap : 4;
			struct kr_vq_tgt *n = realloc(d->tgt, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			d->tgt = n;
			d->tgt_cap = cap;
		}
		t = &d->tgt[d->ntgt++];
		t->key = key;
		t->nvqp = 0;
	}
	t->nvqp++;
	d->nvqp++;
	d->credits_free -= credits;
	return 0;
}

static void dci_release(struct kr_vq_dci *d)
{
	thread_drop(d);
	if (kr_vq_spare_put(d))
		return; /* the next thread's first connect takes it */
	kr_vq_dci_free(d);
}

void kr_vq_dci_unpick(struct kr_vq_dci *d)
{
	if (!d->nvqp)
		dci_release(d);
}

void kr_vq_dci_put(struct kr_vq_dci *d, uint64_t key)
{
	struct kr_vq_tgt *t = dci_tgt(d, key);

	if (t && !--t->nvqp)
		*t = d->tgt[--d->ntgt];
	if (d->nvqp)
		d->nvqp--;
	if (!d->nvqp)
		dci_release(d);
}
