/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DCI that reaches the error state is recovered by the keeper: a job posts
 * a WRITE with a bad rkey through its only DCI and sees the error completion
 * (remote access error), then a flush for the next request; it gives the
 * lease back; the keeper resets the DCI to RTS, and the next holder (another
 * process) gets the same DCI, empty and working, with no stale completion.
 */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

static int poll_wc(struct kr_devx_cq *cq, struct kr_devx_wc *wc)
{
	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 5000;) {
		int n = kr_devx_cq_poll(cq, wc, 1);

		if (n)
			return n;
	}
	return 0;
}

static int breaker(const struct kp_keeper *k, uint32_t *qpn)
{
	struct kr_ctx *ctx = kp_attach(k, 5000);
	struct kr_devx_dc_av av;
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
	struct kr_devx_wc wc;
	struct kr_lease l;
	uint8_t *buf;

	CHECK(ctx != NULL);
	buf = kr_malloc(ctx, 256);
	CHECK(buf != NULL);
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l));
	*qpn = l.qpn;
	CHECK_OK(kr_job_dci_qp(ctx, &l, &qp, &cq));
	CHECK_OK(kr_job_tenant_av(ctx, &av));
	for (int i = 0; i < 2; i++) {
		struct kr_devx_sge s = {
		    .addr = (uintptr_t)buf, .length = 256, .lkey = kr_job_heap_lkey(ctx)};
		struct kr_devx_wr wr = {.wr_id = 0xbad0u + (uint64_t)i,
					.opcode = KR_WR_RDMA_WRITE,
					.flags = KR_WR_SIGNALED,
					.sge = &s,
					.num_sge = 1,
					.remote_addr = (uintptr_t)buf + 1024,
					.rkey = ctx->heap_rkey ^ 0x5500u, /* no such key */
					.av = &av};

		CHECK_OK(kr_devx_qp_post_send(qp, &wr));
		kr_devx_qp_ring(qp);
		CHECK_EQ(poll_wc(cq, &wc), 1);
		CHECK_EQ(wc.wr_id, wr.wr_id);
		CHECK_EQ(wc.status, i == 0 ? KR_WC_REM_ACCESS_ERR : KR_WC_WR_FLUSH_ERR);
	}
	CHECK_OK(kr_lease_free(ctx, &l));
	CHECK_OK(kr_detach(ctx));
	return 0;
}

static int healthy(const struct kp_keeper *k, uint32_t qpn)
{
	struct kr_ctx *ctx = kp_attach(k, 5000);
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
	struct kr_devx_wc wc;
	struct kr_lease l;
	uint8_t *src, *dst, *chk;

	CHECK(ctx != NULL);
	src = kr_malloc(ctx, 4096);
	dst = kr_malloc(ctx, 4096);
	chk = kr_malloc(ctx, 4096);
	CHECK(src && dst && chk);
	/* the keeper resets in the background: retry until the DCI is back */
	for (double t0 = kp_now_ms();;) {
		int rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &l);

		if (!rc)
			break;
		CHECK_EQ(rc, -ENOSPC);
		if (kp_now_ms() - t0 > 5000)
			KR_FAIL("the DCI did not come back");
	}
	CHECK_EQ(l.qpn, qpn);
	CHECK(l.gen >= 2);
	CHECK_OK(kr_job_dci_qp(ctx, &l, &qp, &cq));
	CHECK_EQ(qp->sq_pi, 0);
	CHECK_EQ(kr_devx_cq_poll(cq, &wc, 1), 0); /* nothing of the old holder */
	CHECK_OK(kp_dci_write_read(ctx, &l, src, dst, chk, 4096, 20, 77));
	CHECK_OK(kr_lease_free(ctx, &l));
	CHECK_OK(kr_detach(ctx));
	return 0;
}

static void run(int (*fn)(const struct kp_keeper *), const struct kp_keeper *k)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(fn(k));
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

static uint32_t the_qpn;

static int run_breaker(const struct kp_keeper *k)
{
	return breaker(k, &the_qpn);
}

static int run_healthy(const struct kp_keeper *k)
{
	return healthy(k, the_qpn);
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	  "1", "--low-water", "0",
					   "--jobs",	"2", "--heap-mb", "2", "--hugepages", "64",
					   NULL};
	struct kp_keeper k;
	struct kr_ctx *obs;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	obs = kr_job_observe(k.sock);
	CHECK(obs != NULL);
	the_qpn = kr_seg_dci(obs->seg, 0, 0)->qpn;
	run(run_breaker, &k);
	run(run_healthy, &k);
	CHECK_OK(kr_job_observe_refresh(obs));
	CHECK(kr_seg_dci(obs->seg, 0, 0)->resets >= 2);
	kr_detach(obs);
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("pool_recovery");
}
