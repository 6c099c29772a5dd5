/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keeper: remote errors per job. A job that guesses memory keys (or keeps
 * talking to what is gone) makes its requests fail; each failure breaks the
 * DCI it posted on, and the job gives it back for a fresh one. The worker
 * finds the returned DCI in error when it resets it, and the loop counts
 * that against the job that held it (keeper_worker.c).
 *
 * Each job has a bucket of KR_POOL_ERR_BURST errors, refilled at
 * KR_POOL_ERR_RATE a second. A job whose bucket is empty is throttled: its
 * lease requests are answered -EBUSY for KR_POOL_ERR_THROTTLE_MS, so it
 * cannot get the next DCI to fail on. The KR_POOL_ERR_DETACH-th throttle
 * detaches it (its connection is closed as if it died: leases, MRs and heap
 * taken back). A job with a real dead peer makes a few errors, not hundreds a
 * second; krctl jobs shows the counts.
 */
#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

static void guard_refill(struct kr_pool_job *job, uint64_t now)
{
	uint64_t add = (now - job->bucket_ns) * KR_POOL_ERR_RATE / 1000000000ull;

	if (!add)
		return;
	job->bucket = add >= KR_POOL_ERR_BURST - job->bucket ? KR_POOL_ERR_BURST
							     : job->bucket + (uint32_t)add;
	job->bucket_ns = now;
}

/* Close job j's connection as if the process had died. */
static void guard_detach(struct kr_keeper *k, uint32_t j)
{
	for (uint32_t slot = 0; slot < KR_POOL_MAX_CONNS; slot++)
		if (k->conn[slot] && k->conn[slot]->job_plus1 == j + 1) {
			kr_keeper_conn_close(k, slot, true);
			return;
		}
}

/* kr_keeper_guard_error() - see keeper.h. */
void kr_keeper_guard_error(struct kr_keeper *k, uint32_t j)
{
	struct kr_pool_job *job = kr_seg_job(k->seg, j);
	uint64_t now = kr_now_ns();

	if (job->state != KR_JOB_ATTACHED)
		return;
	if (!job->bucket_ns) { /* its first error: a full bucket */
		job->bucket = KR_POOL_ERR_BURST;
		job->bucket_ns = now;
	}
	job->remote_errors++;
	guard_refill(job, now);
	if (job->bucket) {
		job->bucket--;
		return;
	}
	if (job->throttle_until_ns > now)
		return; /* errors of requests posted before the throttle */
	job->throttles++;
	job->throttle_until_ns = now + KR_POOL_ERR_THROTTLE_MS * 1000000ull;
	KR_WARN_RATELIMITED("pool",
			    "job pid %d (uid %u): %u remote errors, throttled (%u of %u before "
			    "detach)",
			    job->pid, job->uid, job->remote_errors, job->throttles,
			    KR_POOL_ERR_DETACH);
	if (job->throttles >= KR_POOL_ERR_DETACH) {
		KR_WARN("pool", "job pid %d (uid %u): detached after %u remote errors", job->pid,
			job->uid, job->remote_errors);
		guard_detach(k, j);
	}
}

/* kr_keeper_guard_busy() - see keeper.h. */
bool kr_keeper_guard_busy(struct kr_keeper *k, uint32_t j)
{
	return kr_seg_job(k->seg, j)->throttle_until_ns > kr_now_ns();
}
