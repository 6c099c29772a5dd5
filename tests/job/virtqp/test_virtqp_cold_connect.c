/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cold_connect: a thread's first connect calls nobody. A keeper under the
 * connectx4 firmware cost model (a DCI reset is four modelled firmware
 * commands, milliseconds); a second job leases and gives back DCIs 100
 * times, so the keeper is busy resetting them; meanwhile 1,000 fresh
 * threads of the first job each connect (a thread's first connect, holding
 * no DCI), WRITE and READ 8 bytes, check them, and disconnect. Every connect
 * succeeds and the keeper served no lease request from the first job: the
 * first thread used the DCI granted with the attach, each later one the DCI
 * its predecessor let go. Connect latencies are printed, not asserted
 * (krbench connect --profile connectx4 is the measurement).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define THREADS 1000
#define CHURN	100

struct fresh {
	struct kr_ctx *ctx;
	uint64_t *src, *dst;
	uint32_t rkey;
	uint32_t i;
	double connect_us;
	int rc;
};

static void *fresh_thread(void *p)
{
	struct fresh *f = p;
	double t0 = kp_now_ms();
	struct kr_vqp *v = kr_connect(f->ctx, KR_NODE_SELF, NULL);
	uint64_t want = 0x5eed0000ull + f->i;

	f->connect_us = (kp_now_ms() - t0) * 1000.0;
	f->rc = -1;
	if (!v)
		return NULL;
	*f->src = want;
	if (kr_post_write(v, f->src, 8, (uintptr_t)f->dst, f->rkey, 1, 0) || vq_wait_ok(v, 1) ||
	    kr_post_read(v, f->src + 1, 8, (uintptr_t)f->dst, f->rkey, 2, 0) || vq_wait_ok(v, 2) ||
	    f->src[1] != want || kr_disconnect(v))
		return NULL;
	f->rc = 0;
	return NULL;
}

/* Lease requests the second job sent (shared with the parent). */
static uint64_t *g_churn_calls;

/* The second job: lease and give back DCIs, each one a reset for the keeper. */
static int churn(const struct kp_keeper *k)
{
	struct kr_ctx *ctx = kp_attach(k, 10000);

	if (!ctx)
		return 1;
	for (int i = 0; i < CHURN; i++) {
		uint64_t takes = ctx->ready_ring_takes;
		struct kr_lease l;
		int rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &l);

		/* a DCI its ready ring held (the attach's among them) is no call */
		if (ctx->ready_ring_takes == takes)
			__atomic_fetch_add(g_churn_calls, 1, __ATOMIC_RELAXED);
		if (rc == -ENOSPC) { /* all of them being reset: wait for one */
			usleep(1000);
			i--;
			continue;
		}
		if (rc || kr_lease_free(ctx, &l))
			return 1;
	}
	return kr_detach(ctx) ? 1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	static const char *const args[] = {"--device",	  "sim:cold,profile=connectx4",
					   "--tenants",	  "1",
					   "--dcis",	  "8",
					   "--jobs",	  "2",
					   "--heap-mb",	  "2",
					   "--hugepages", "64",
					   NULL};
	static double lat[THREADS];
	uint64_t calls0, resets0;
	struct kp_keeper k;
	struct kr_ctx *ctx;
	struct kr_mr *mr;
	struct kr_mr_key key;
	uint64_t *buf;
	pid_t pid;
	int st, go[2];

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	/* the second job is forked before this process attaches (one attach per process) */
	g_churn_calls = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(g_churn_calls != MAP_FAILED);
	CHECK_OK(pipe(go));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		char c;

		close(go[1]);
		_exit(read(go[0], &c, 1) == 1 ? churn(&k) : 1);
	}
	close(go[0]);
	ctx = kp_attach(&k, 10000);
	CHECK(ctx != NULL);
	buf = kr_malloc(ctx, 64);
	CHECK(buf != NULL);
	mr = kr_reg_mr(ctx, buf, 64, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	calls0 = ctx->seg->lease_calls;
	resets0 = ctx->seg->resets;

	CHECK_EQ(write(go[1], "g", 1), 1); /* the churn starts */
	for (uint32_t i = 0; i < THREADS; i++) {
		struct fresh f = {ctx, buf, buf + 4, key.rkey, i, 0, -1};
		pthread_t t;

		CHECK_OK(pthread_create(&t, NULL, fresh_thread, &f));
		CHECK_OK(pthread_join(t, NULL));
		if (f.rc)
			KR_FAIL("fresh thread %u: connect, WRITE+READ or disconnect failed", i);
		lat[i] = f.connect_us;
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* the churn's leases were the only calls; the threads made none */
	CHECK_EQ(ctx->seg->lease_calls - calls0, *g_churn_calls);
	qsort(lat, THREADS, sizeof(lat[0]), cmp_double);
	printf("%d fresh threads' first connects while the keeper reset %llu DCIs: p50 %.2f us, "
	       "p99 %.2f us, max %.1f us; no lease request from this job\n",
	       THREADS, (unsigned long long)(ctx->seg->resets - resets0), lat[THREADS / 2],
	       lat[THREADS * 99 / 100], lat[THREADS - 1]);
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("virtqp_cold_connect");
}
