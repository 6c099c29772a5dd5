/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Growth: a keeper with 2 DCIs (up to 5) and 1 RC spare (up to 2), low-water
 * 2, on a sim whose CREATE_QP takes 300 ms. A job leases both DCIs and the RC
 * QP: the keeper grows the pool in the background (krctl pool --json shows
 * "built" rising, never above "max"). While a build is in flight, other
 * processes attach and detach: each attach completes while the same build is
 * still running (checked from the segment: same slot being built, same
 * number built before and after), so the attach path never waited on a
 * firmware command. Leasing past the low-water mark again grows to the max
 * and stops there; after SIGKILL of the job every slot comes back FREE.
 * Waits are bounded; time never decides pass/fail.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

static const char *const args[] = {
    "--tenants", "1",		"--dcis", "2",		 "--dcis-max",
    "5",	 "--low-water", "2",	  "--rc-spares", "1",
    "--rc-max",	 "2",		"--jobs", "8",		 "--heap-mb",
    "2",	 "--hugepages", "64",	  "--device",	 "sim:growk,cmd_create_qp_us=300000",
    NULL};

static uint32_t built(const struct kr_pool_seg *s, uint32_t kind)
{
	uint32_t n = 0, cnt = kind == KR_SLOT_DCI ? s->dcis : s->rc_spares;

	for (uint32_t i = 0; i < cnt; i++) {
		const struct kr_pool_slot *sl =
		    kind == KR_SLOT_DCI ? kr_seg_dci(s, 0, i) : kr_seg_rc(s, 0, i);

		n += __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) != KR_SLOT_EMPTY;
	}
	return n;
}

static uint32_t growing(const struct kr_pool_seg *s)
{
	return __atomic_load_n(&kr_seg_tenant(s, 0)->growing, __ATOMIC_ACQUIRE);
}

/* Job A: lease on command ('d': 2 DCIs, 'r': 1 RC QP), answer 'k' or 'e'. */
static int job_a(const struct kp_keeper *k, int to_parent, int from_parent)
{
	struct kr_ctx *ctx = kp_attach(k, 10000);
	struct kr_lease l;
	char c;

	if (!ctx)
		return 2;
	while (read(from_parent, &c, 1) == 1) {
		int rc = 0;

		if (c == 'd')
			rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &l)
				 ?: kr_lease_alloc(ctx, KR_LEASE_DCI, &l);
		else if (c == 'r')
			rc = kr_lease_alloc(ctx, KR_LEASE_RC, &l);
		if (rc)
			fprintf(stderr, "job A: lease '%c': %s\n", c, strerror(-rc));
		if (write(to_parent, rc ? "e" : "k", 1) != 1)
			return 3;
	}
	return 0;
}

/* Job B: one attach + detach per byte from the parent, answer 'k' or 'e'. */
static int job_b(const struct kp_keeper *k, int to_parent, int from_parent)
{
	struct kr_attach_opts o = {.socket_path = k->sock};
	char c;

	while (read(from_parent, &c, 1) == 1) {
		struct kr_ctx *ctx = kr_attach(&o);

		if (!ctx)
			fprintf(stderr, "job B: attach: %s\n", strerror(errno));
		if (write(to_parent, ctx ? "k" : "e", 1) != 1)
			return 3;
		if (ctx)
			kr_detach(ctx);
	}
	return 0;
}

static pid_t spawn(const struct kp_keeper *k, int (*fn)(const struct kp_keeper *, int, int),
		   int *to, int *from)
{
	int up[2], down[2];
	pid_t pid;

	CHECK_OK(pipe(up));
	CHECK_OK(pipe(down));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		_exit(fn(k, up[1], down[0]));
	}
	close(up[1]);
	close(down[0]);
	*to = down[1];
	*from = up[0];
	return pid;
}

static char ask(int to, int from, char cmd)
{
	char c = 0;

	CHECK_EQ(write(to, &cmd, 1), 1);
	CHECK_EQ(read(from, &c, 1), 1);
	return c;
}

static struct kr_ctx *obs;

/* A fresh copy of the pool segment (an observer holds a copy, not a mapping). */
static void look(void)
{
	CHECK_OK(kr_job_observe_refresh(obs));
}

/* Wait (bounded) until cond(s) holds, looking again each time. */
#define WAIT_UNTIL(cond, ms, what)                                                                 \
	do {                                                                                       \
		double t0_ = kp_now_ms();                                                          \
		while ((look(), !(cond)) && kp_now_ms() - t0_ < (ms))                              \
			usleep(1000);                                                              \
		if (!(cond))                                                                       \
			KR_FAIL("not within %d ms: %s", (int)(ms), what);                          \
	} while (0)

static bool all_free(const struct kr_pool_seg *s)
{
	for (uint32_t i = 0; i < s->dcis; i++)
		if (kr_seg_dci(s, 0, i)->state != KR_SLOT_FREE)
			return false;
	for (uint32_t i = 0; i < s->rc_spares; i++)
		if (kr_seg_rc(s, 0, i)->state != KR_SLOT_FREE)
			return false;
	return true;
}

int main(void)
{
	const struct kr_pool_seg *s;
	struct kp_keeper k;
	int a_to, a_from, b_to, b_from, status, in_flight = 0;
	char out[8192];
	pid_t a, b;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	obs = kr_job_observe(k.sock);
	CHECK(obs != NULL);
	s = obs->seg;
	CHECK_EQ(s->dcis, 5); /* slots laid out for the max */
	CHECK_EQ(s->rc_spares, 2);
	CHECK_EQ(built(s, KR_SLOT_DCI), 2);
	CHECK_EQ(built(s, KR_SLOT_RC), 1);

	a = spawn(&k, job_a, &a_to, &a_from);
	b = spawn(&k, job_b, &b_to, &b_from);
	CHECK_EQ(ask(a_to, a_from, 'd'), 'k'); /* 0 free DCIs < low-water 2 */
	CHECK_EQ(ask(a_to, a_from, 'r'), 'k'); /* 0 free RC < 1 */

	/* attaches complete while a build is in flight */
	for (int round = 0; round < 40 && in_flight < 3; round++) {
		uint32_t g0, b0, g1, b1;

		WAIT_UNTIL(growing(s) || built(s, KR_SLOT_DCI) + built(s, KR_SLOT_RC) == 6, 10000,
			   "a build starts");
		g0 = growing(s);
		b0 = built(s, KR_SLOT_DCI) + built(s, KR_SLOT_RC);
		if (!g0)
			break;
		CHECK_EQ(ask(b_to, b_from, 'a'), 'k');
		look();
		g1 = growing(s);
		b1 = built(s, KR_SLOT_DCI) + built(s, KR_SLOT_RC);
		in_flight += g0 == g1 && b0 == b1;
	}
	if (!in_flight)
		KR_FAIL("no attach completed while a build was in flight");

	WAIT_UNTIL(built(s, KR_SLOT_DCI) == 4 && built(s, KR_SLOT_RC) == 2 && !growing(s), 15000,
		   "the pool grows to 4 DCIs and 2 RC QPs");
	WAIT_UNTIL(kr_keeper_seg_ring_count(s, kr_seg_tenant(s, 0)->dci_ring_off) == 2, 5000,
		   "grown DCIs in the free ring");
	{
		const char *argj[] = {kp_tool("KRCTL"), "--socket", k.sock, "--json", "pool", NULL};

		CHECK_EQ(kp_run(argj, out, sizeof(out), 10), 0);
		if (!strstr(out, "\"built\": 4, \"max\": 5"))
			KR_FAIL("krctl pool --json: %s", out);
	}
	/* two more leases: free 0 again, grows to the max (5) and stops there */
	CHECK_EQ(ask(a_to, a_from, 'd'), 'k');
	WAIT_UNTIL(built(s, KR_SLOT_DCI) == 5 && !growing(s), 15000, "the pool grows to its max");
	usleep(50 * 1000);
	CHECK_EQ(built(s, KR_SLOT_DCI), 5);
	{
		const char *argj[] = {kp_tool("KRCTL"), "--socket", k.sock, "--json", "pool", NULL};

		CHECK_EQ(kp_run(argj, out, sizeof(out), 10), 0);
		CHECK(strstr(out, "\"built\": 5, \"max\": 5") != NULL);
	}

	/* the holder dies: everything comes back FREE */
	CHECK_OK(kill(a, SIGKILL));
	CHECK_EQ(waitpid(a, &status, 0), a);
	WAIT_UNTIL(all_free(s), 10000, "every slot FREE after the job's death");
	close(b_to);
	CHECK_EQ(waitpid(b, &status, 0), b);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("grow: %d attaches completed during a 300 ms QP build\n", in_flight);
	kr_detach(obs);
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("pool_grow");
}
