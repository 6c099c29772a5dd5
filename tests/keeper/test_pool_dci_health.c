/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dci_health: a job never receives a DCI in error. Job A leases all 8 DCIs
 * and drives each into the error state (a READ with a key that does not
 * exist: remote access error); it gives half of them back and is SIGKILLed
 * holding the other half. Job B, attached meanwhile, leases DCIs as fast as
 * the keeper hands them out (ENOSPC while the worker resets them: the keeper
 * queries each QP, moves it to RST and back to RTS before it is free again)
 * and posts a WRITE + READ on each at once: every one completes successfully
 * with the bytes checked, none carries a stale completion, none is BROKEN,
 * and the keeper counted a reset for each. Waits are bounded; time never
 * decides.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

#define NDCI 8

static struct kp_keeper K;

/* Job A: all DCIs into error, half given back, then wait to be killed. */
static void job_a(int out, int in, void *arg)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	struct kr_devx_dc_av av;
	struct kr_lease l[NDCI];
	int bad = 0;
	uint8_t *buf;

	(void)arg;
	if (read(in, &(char){0}, 1) != 1 || !ctx)
		_exit(3);
	buf = kr_malloc(ctx, 64);
	if (!buf || kr_job_tenant_av(ctx, &av))
		_exit(4);
	for (int i = 0; i < NDCI; i++) {
		int rc;

		for (double t0 = kp_now_ms();
		     (rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &l[i])) == -ENOSPC &&
		     kp_now_ms() - t0 < 10000;)
			usleep(1000); /* the parent's grant, being reset */
		if (rc)
			_exit(5);
		/* a key no region has: the READ fails, the DCI goes to error */
		bad += kp_dci_read(ctx, &l[i], &av, buf, 8, (uintptr_t)buf,
				   ctx->heap_rkey ^ 0x5500u) != KR_WC_SUCCESS;
	}
	for (int i = 0; i < NDCI / 2; i++)
		if (kr_lease_free(ctx, &l[i]))
			_exit(6);
	if (write(out, &bad, sizeof(bad)) != sizeof(bad))
		_exit(2);
	pause();
	_exit(0);
}

static uint64_t keeper_resets(void)
{
	struct kr_pool_seg s;

	kp_seg_header(&K, &s);
	return s.resets;
}

int main(void)
{
	/* ConnectX-4 firmware costs: a reset takes ~7 ms, so leases meet resets in flight */
	static const char *const args[] = {
	    "--tenants", "1", "--dcis",	     "8",  "--jobs",   "3",
	    "--heap-mb", "2", "--hugepages", "32", "--device", "sim:dcih,profile=connectx4",
	    NULL};
	struct kr_lease l[NDCI];
	struct kp_child a;
	struct kr_ctx *ctx;
	uint8_t *src, *dst, *chk;
	uint64_t r0;
	int bad, got = 0, busy = 0, status;

	kp_require_hugepages(16);
	kp_keeper_init(&K);
	CHECK_OK(kp_keeper_start(&K, args));
	a = kp_spawn(job_a, NULL);
	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	src = kr_malloc(ctx, 4096);
	dst = kr_malloc(ctx, 4096);
	chk = kr_malloc(ctx, 4096);
	CHECK(src && dst && chk);
	/* the DCI granted with our attach goes back first: A wants all eight */
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l[0]));
	CHECK_OK(kr_lease_free(ctx, &l[0]));
	r0 = keeper_resets();

	CHECK_EQ(write(a.to, "g", 1), 1);
	CHECK_EQ(read(a.from, &bad, sizeof(bad)), (ssize_t)sizeof(bad));
	CHECK_EQ(bad, NDCI); /* every DCI of A is in error now */
	CHECK_OK(kill(a.pid, SIGKILL));
	CHECK_EQ(waitpid(a.pid, &status, 0), a.pid);

	/* take them as they come back, and use each at once */
	for (double t0 = kp_now_ms(); got < NDCI && kp_now_ms() - t0 < 20000;) {
		int rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &l[got]);

		if (rc == -ENOSPC) {
			busy++;
			usleep(200);
			continue;
		}
		CHECK_OK(rc);
		CHECK_OK(kp_dci_write_read(ctx, &l[got], src, dst, chk, 4096, 3,
					   (uint64_t)(got + 1) << 8));
		got++;
	}
	CHECK_EQ(got, NDCI);
	CHECK_EQ(kp_krctl_json(&K, "pool", "broken", 0), 0);
	CHECK(keeper_resets() - r0 >= NDCI);
	printf("dci_health: %d DCIs back from errors, each reset and working (%d ENOSPC while "
	       "the worker reset them, %llu resets)\n",
	       NDCI, busy, (unsigned long long)(keeper_resets() - r0));
	for (int i = 0; i < NDCI; i++)
		CHECK_OK(kr_lease_free(ctx, &l[i]));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("pool_dci_health");
}
