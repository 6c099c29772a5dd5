/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A keeper on the sim and two jobs in separate processes. Each attaches,
 * leases two DCIs (one per posting thread in a real job) and a vQP slot,
 * finds its leases recorded in the pool segment with its pid and generation,
 * posts WRITEs through each DCI to the keeper's own DCT from its kr_malloc
 * heap, reads them back and checks every byte; then gives the leases back
 * and detaches. The keeper's counters show two attaches, two detaches.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

#define LEN 3000

static int job(const struct kp_keeper *k, int id)
{
	struct kr_lease dci[2], vqp;
	struct kr_ctx_attr attr;
	struct kr_ctx *ctx;
	uint8_t *src, *dst, *chk;

	ctx = kp_attach(k, 5000);
	CHECK(ctx != NULL);
	CHECK_OK(kr_ctx_query(ctx, &attr));
	CHECK_EQ(attr.heap_len, 2u << 20);
	src = kr_malloc(ctx, LEN);
	dst = kr_malloc(ctx, LEN);
	chk = kr_malloc(ctx, LEN);
	CHECK(src && dst && chk);
	/* heap memory is the job's own hugepages */
	CHECK((uintptr_t)src >= (uintptr_t)ctx->heap &&
	      (uintptr_t)src < (uintptr_t)ctx->heap + ctx->heap_len);

	for (int i = 0; i < 2; i++) {
		const struct kr_pool_slot *s;

		CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &dci[i]));
		s = kr_seg_dci(ctx->seg, ctx->tenant, dci[i].index);
		CHECK_EQ(s->state, KR_SLOT_LEASED);
		CHECK_EQ(s->owner_pid, getpid());
		CHECK_EQ(s->owner_job, ctx->job + 1);
		CHECK_EQ(s->gen, dci[i].gen);
		CHECK_EQ(s->qpn, dci[i].qpn);
	}
	CHECK(dci[0].index != dci[1].index);
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_VQP, &vqp));
	CHECK_EQ(kr_seg_vqp(ctx->seg, ctx->tenant, vqp.index)->owner_pid, getpid());

	for (int i = 0; i < 2; i++)
		CHECK_OK(kp_dci_write_read(ctx, &dci[i], src, dst, chk, LEN, 50,
					   (uint64_t)id * 1000000u + (uint64_t)i * 1000u));

	/* a stale generation is refused, the right one accepted */
	{
		struct kr_lease stale = vqp;

		stale.gen++;
		CHECK_ERR(kr_lease_free(ctx, &stale), -EINVAL);
	}
	CHECK_OK(kr_lease_free(ctx, &vqp));
	for (int i = 0; i < 2; i++)
		CHECK_OK(kr_lease_free(ctx, &dci[i]));
	kr_free(ctx, src);
	kr_free(ctx, dst);
	kr_free(ctx, chk);
	CHECK_OK(kr_detach(ctx));
	return 0;
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "2",
					   "--heap-mb", "2", "--hugepages", "64", NULL};
	struct kp_keeper k;
	pid_t pid[2];
	struct kr_ctx *obs;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));

	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		CHECK(pid[i] >= 0);
		if (pid[i] == 0)
			_exit(job(&k, i + 1));
	}
	for (int i = 0; i < 2; i++) {
		int status;

		CHECK_EQ(waitpid(pid[i], &status, 0), pid[i]);
		CHECK(WIFEXITED(status));
		CHECK_EQ(WEXITSTATUS(status), 0);
	}

	obs = kr_job_observe(k.sock);
	CHECK(obs != NULL);
	CHECK_EQ(obs->seg->attaches, 2);
	CHECK_EQ(obs->seg->detaches, 2);
	CHECK_EQ(obs->seg->deaths, 0);
	/* every DCI back in the free ring once the keeper reset them */
	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 5000;) {
		const struct kr_pool_tenant *t;

		CHECK_OK(kr_job_observe_refresh(obs));
		t = kr_seg_tenant(obs->seg, 0);
		if (kr_keeper_seg_ring_count(obs->seg, t->dci_ring_off) == 4)
			break;
	}
	CHECK_EQ(kr_keeper_seg_ring_count(obs->seg, kr_seg_tenant(obs->seg, 0)->dci_ring_off), 4);
	CHECK(obs->seg->resets >= 4);
	kr_detach(obs);

	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("pool_two_jobs");
}
