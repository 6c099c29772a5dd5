/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SIGKILL a job in the middle of posting. Job A leases two DCIs and posts
 * WRITEs in a loop; job B leases one and posts a fixed number, checking every
 * completion and payload. The parent kills A while both post, then watches
 * the pool segment: A's leases must come back (slots FREE, in the free ring,
 * no owner) within 5 s (the time is reported, not judged), B must finish
 * with no lost completion, and `krctl leases` must list nothing of A's.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

#define B_ROUNDS 400

static int job_a(const struct kp_keeper *k, int ready_fd)
{
	struct kr_lease l[2];
	struct kr_ctx *ctx = kp_attach(k, 5000);
	uint8_t *src, *dst, *chk;

	if (!ctx)
		return 2;
	src = kr_malloc(ctx, 4096);
	dst = kr_malloc(ctx, 4096);
	chk = kr_malloc(ctx, 4096);
	if (!src || !dst || !chk || kr_lease_alloc(ctx, KR_LEASE_DCI, &l[0]) ||
	    kr_lease_alloc(ctx, KR_LEASE_DCI, &l[1]))
		return 3;
	for (uint64_t r = 0;; r++) {
		if (kp_dci_write_read(ctx, &l[r & 1], src, dst, chk, 4096, 4, r * 16))
			return 4;
		if (r == 8 && write(ready_fd, "A", 1) != 1)
			return 5;
	}
}

static int job_b(const struct kp_keeper *k, int ready_fd, int go_fd)
{
	struct kr_lease l;
	struct kr_ctx *ctx = kp_attach(k, 5000);
	uint8_t *src, *dst, *chk;
	char c;

	if (!ctx)
		return 2;
	src = kr_malloc(ctx, 2048);
	dst = kr_malloc(ctx, 2048);
	chk = kr_malloc(ctx, 2048);
	if (!src || !dst || !chk || kr_lease_alloc(ctx, KR_LEASE_DCI, &l))
		return 3;
	for (int r = 0; r < B_ROUNDS; r++) {
		if (kp_dci_write_read(ctx, &l, src, dst, chk, 2048, 2,
				      0x1000000u + (uint64_t)r * 4))
			return 10;
		if (r == 4) {
			if (write(ready_fd, "B", 1) != 1 || read(go_fd, &c, 1) != 1)
				return 5;
		}
	}
	if (kr_lease_free(ctx, &l) || kr_detach(ctx))
		return 6;
	return 0;
}

static bool a_leases_back(const struct kr_pool_seg *s, pid_t a, uint32_t ndci)
{
	const struct kr_pool_tenant *t = kr_seg_tenant(s, 0);
	uint32_t leased = 0;

	for (uint32_t i = 0; i < s->dcis; i++) {
		const struct kr_pool_slot *sl = kr_seg_dci(s, 0, i);

		if (sl->owner_pid == a)
			return false;
		leased += sl->state == KR_SLOT_LEASED;
	}
	return kr_keeper_seg_ring_count(s, t->dci_ring_off) + leased == ndci;
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "2",
					   "--heap-mb", "2", "--hugepages", "64", NULL};
	int ready[2], go[2], status;
	struct kp_keeper k;
	struct kr_ctx *obs;
	pid_t a, b;
	double t_kill, t_back = -1;
	char c, out[8192];

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	CHECK_OK(pipe(ready));
	CHECK_OK(pipe(go));

	a = kp_fork_job();
	CHECK(a >= 0);
	if (a == 0)
		_exit(job_a(&k, ready[1]));
	b = kp_fork_job();
	CHECK(b >= 0);
	if (b == 0)
		_exit(job_b(&k, ready[1], go[0]));
	CHECK_EQ(read(ready[0], &c, 1), 1);
	CHECK_EQ(read(ready[0], &c, 1), 1);

	obs = kr_job_observe(k.sock);
	CHECK(obs != NULL);
	CHECK(!a_leases_back(obs->seg, a, 4));
	CHECK_OK(kill(a, SIGKILL));
	t_kill = kp_now_ms();
	CHECK_EQ(write(go[1], "g", 1), 1); /* B keeps posting while A is reclaimed */
	CHECK_EQ(waitpid(a, &status, 0), a);
	CHECK(WIFSIGNALED(status));
	while (kp_now_ms() - t_kill < 5000) {
		CHECK_OK(kr_job_observe_refresh(obs));
		if (a_leases_back(obs->seg, a, 4)) {
			t_back = kp_now_ms() - t_kill;
			break;
		}
	}
	if (t_back < 0)
		KR_FAIL("job A's leases not back within 5 s");
	CHECK_EQ(waitpid(b, &status, 0), b);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK_OK(kr_job_observe_refresh(obs));
	CHECK_EQ(obs->seg->deaths, 1);
	CHECK(obs->seg->reclaims >= 2);
	printf("reclaim after SIGKILL: %.2f ms seen by a watcher (keeper: EOF -> free ring %.1f "
	       "us)\n",
	       t_back, (double)obs->seg->last_reclaim_ns / 1e3);
	kr_detach(obs);

	{
		char pid[32];
		const char *argv[] = {kp_tool("KRCTL"), "--socket", k.sock, "leases", NULL};
		const char *argj[] = {kp_tool("KRCTL"), "--socket", k.sock,
				      "--json",		"leases",   NULL};

		snprintf(pid, sizeof(pid), " %d ", (int)a);
		CHECK_EQ(kp_run(argv, out, sizeof(out), 10), 0);
		CHECK(strstr(out, "0 leases held") != NULL);
		CHECK(strstr(out, pid) == NULL);
		CHECK_EQ(kp_run(argj, out, sizeof(out), 10), 0);
		CHECK(strstr(out, "\"count\": 0") != NULL);
	}
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("pool_reclaim");
}
