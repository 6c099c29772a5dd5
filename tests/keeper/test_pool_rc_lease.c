/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Spare RC QPs are leasable (KR_LEASE_RC): a job leases both spares of its
 * tenant (each with its QP number, recorded with its pid in the pool
 * segment), a third lease gets -ENOSPC, a stale release -EINVAL; a freed RC
 * QP is reset by the keeper (back to INIT) and leasable again; when the job
 * is SIGKILLed holding both, they come back FREE within 5 s (bounded, not
 * timed), krctl lists no RC lease, and another job leases them again.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

static const char *const args[] = {"--tenants",	  "1",	    "--dcis", "2",	   "--rc-spares",
				   "2",		  "--jobs", "2",      "--heap-mb", "2",
				   "--hugepages", "64",	    NULL};

static int job(const struct kp_keeper *k, int to_parent, int from_parent)
{
	struct kr_lease l[2], extra, stale;
	struct kr_ctx *ctx = kp_attach(k, 5000);
	char c;

	CHECK(ctx != NULL);
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_RC, &l[0]));
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_RC, &l[1]));
	CHECK_EQ(l[0].kind, KR_LEASE_RC);
	CHECK(l[0].qpn != 0 && l[1].qpn != 0 && l[0].qpn != l[1].qpn);
	CHECK(l[0].index != l[1].index);
	CHECK_ERR(kr_lease_alloc(ctx, KR_LEASE_RC, &extra), -ENOSPC);
	stale = l[0];
	stale.gen++;
	CHECK_ERR(kr_lease_free(ctx, &stale), -EINVAL);
	stale = l[0];
	stale.kind = KR_LEASE_DCI; /* an RC slot is not a DCI lease */
	CHECK_ERR(kr_lease_free(ctx, &stale), -EINVAL);
	/* give one back: the keeper resets it and it can be leased again */
	CHECK_OK(kr_lease_free(ctx, &l[0]));
	CHECK_ERR(kr_lease_free(ctx, &l[0]), -EINVAL);
	CHECK_OK(kp_lease_wait(ctx, KR_LEASE_RC, &l[0], 5000)); /* once the keeper reset it */
	CHECK(l[0].gen > stale.gen);
	/* the parent checks the segment, then kills us holding both */
	CHECK_EQ(write(to_parent, "1", 1), 1);
	CHECK_EQ(read(from_parent, &c, 1), 1);
	for (;;)
		pause();
}

static uint32_t rc_held_by(const struct kr_pool_seg *s, pid_t pid)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->rc_spares; i++) {
		const struct kr_pool_slot *sl = kr_seg_rc(s, 0, i);

		n += sl->state == KR_SLOT_LEASED && sl->owner_pid == pid && sl->kind == KR_SLOT_RC;
	}
	return n;
}

static bool rc_all_free(const struct kr_pool_seg *s)
{
	const struct kr_pool_tenant *t = kr_seg_tenant(s, 0);

	for (uint32_t i = 0; i < s->rc_spares; i++) {
		const struct kr_pool_slot *sl = kr_seg_rc(s, 0, i);

		if (sl->state != KR_SLOT_FREE || sl->owner_pid || sl->owner_job)
			return false;
	}
	return kr_keeper_seg_ring_count(s, t->rc_ring_off) == s->rc_spares;
}

int main(void)
{
	int up[2], down[2], status;
	struct kp_keeper k;
	struct kr_ctx *obs, *ctx;
	struct kr_lease l[2];
	uint32_t resets0;
	double t0;
	char c, out[8192];
	pid_t pid;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	obs = kr_job_observe(k.sock);
	CHECK(obs != NULL);
	CHECK_EQ(obs->seg->rc_spares, 2);
	CHECK(rc_all_free(obs->seg));
	resets0 = kr_seg_rc(obs->seg, 0, 0)->resets + kr_seg_rc(obs->seg, 0, 1)->resets;

	CHECK_OK(pipe(up));
	CHECK_OK(pipe(down));
	pid = kp_fork_job();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(job(&k, up[1], down[0]));
	close(up[1]); /* a job that fails gives EOF here, not a hang */
	close(down[0]);
	CHECK_EQ(read(up[0], &c, 1), 1);
	CHECK_OK(kr_job_observe_refresh(obs));
	CHECK_EQ(rc_held_by(obs->seg, pid), 2);
	/* the freed one went through a reset before it was leased again */
	CHECK(kr_seg_rc(obs->seg, 0, 0)->resets + kr_seg_rc(obs->seg, 0, 1)->resets >= resets0 + 1);
	{
		const char *argj[] = {kp_tool("KRCTL"), "--socket", k.sock,
				      "--json",		"leases",   NULL};

		CHECK_EQ(kp_run(argj, out, sizeof(out), 10), 0);
		CHECK(strstr(out, "\"kind\": \"rc\"") != NULL);
	}

	CHECK_OK(kill(pid, SIGKILL));
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status));
	t0 = kp_now_ms();
	while ((kr_job_observe_refresh(obs), !rc_all_free(obs->seg)) && kp_now_ms() - t0 < 5000)
		usleep(1000);
	if (!rc_all_free(obs->seg))
		KR_FAIL("RC leases of the killed job not back within 5 s");
	CHECK(kr_seg_rc(obs->seg, 0, 0)->resets + kr_seg_rc(obs->seg, 0, 1)->resets >= resets0 + 3);
	{
		const char *argj[] = {kp_tool("KRCTL"), "--socket", k.sock,
				      "--json",		"leases",   NULL};

		CHECK_EQ(kp_run(argj, out, sizeof(out), 10), 0);
		CHECK(strstr(out, "\"count\": 0") != NULL);
	}

	/* another job gets both again */
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_RC, &l[0]));
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_RC, &l[1]));
	CHECK_OK(kr_lease_free(ctx, &l[0]));
	CHECK_OK(kr_detach(ctx)); /* l[1] comes back with the detach */
	t0 = kp_now_ms();
	while ((kr_job_observe_refresh(obs), !rc_all_free(obs->seg)) && kp_now_ms() - t0 < 5000)
		usleep(1000);
	CHECK(rc_all_free(obs->seg));
	kr_detach(obs);
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("pool_rc_lease");
}
