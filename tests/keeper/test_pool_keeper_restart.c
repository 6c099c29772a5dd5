/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper is SIGKILLed while a job is attached and holds a DCI, an RC QP,
 * an MR and a vQP: the vQP's next post or poll says -ENOTCONN (no success
 * after the death; the time is printed), kr_malloc alone notices (stale
 * heartbeat, then one socket check) and returns ENOTCONN; every control call
 * returns -ENOTCONN or -EPIPE (bounded: the test fails on a hang), kr_free of
 * heap memory and kr_mr_key still work locally, nothing crashes; kr_detach
 * still releases everything; after a new keeper starts on the same socket,
 * the same process attaches again (the time is printed), leases and posts. A
 * second keeper on a live socket is refused with a message.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "2",
				   "--heap-mb", "2", "--hugepages", "64", NULL};

static bool is_gone(int rc)
{
	return rc == -ENOTCONN || rc == -EPIPE;
}

static int job(struct kp_keeper *k, int to_parent, int from_parent)
{
	struct kr_lease l, l2, rcl;
	struct kr_vqp *v;
	struct kr_wc wc;
	struct kr_mr *mr;
	struct kr_ctx_attr attr;
	struct kr_ctx *ctx;
	uint8_t *src, *dst, *chk;
	char c;
	int rc;

	ctx = kp_attach(k, 5000);
	CHECK(ctx != NULL);
	src = kr_malloc(ctx, 1024);
	dst = kr_malloc(ctx, 1024);
	chk = kr_malloc(ctx, 1024);
	CHECK(src && dst && chk);
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l));
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_RC, &rcl));
	mr = kr_reg_mr(ctx, dst, 512, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_WRITE);
	if (!mr)
		KR_FAIL("kr_reg_mr on the heap: %s", strerror(errno));
	CHECK_OK(kp_dci_write_read(ctx, &l, src, dst, chk, 1024, 4, 1));
	v = kr_connect(ctx, KR_NODE_SELF, NULL);
	CHECK(v != NULL);
	CHECK_OK(kr_post_read(v, chk, 8, (uintptr_t)dst, ctx->heap_rkey, 1, 0));
	for (double t0 = kp_now_ms(); (rc = kr_poll(v, &wc, 1)) == 0 && kp_now_ms() - t0 < 5000;)
		;
	CHECK_EQ(rc, 1);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	/* the keeper dies now */
	CHECK_EQ(write(to_parent, "1", 1), 1);
	CHECK_EQ(read(from_parent, &c, 1), 1);

	/*
	 * A vQP's next post or poll says -ENOTCONN, never a success: the device
	 * went with the keeper, the heartbeat goes stale, one socket check
	 * confirms. Reported (the goal, 100 ms, is a bench number), bounded at 5 s.
	 */
	{
		double t0 = kp_now_ms();

		rc = kr_post_read(v, chk, 8, (uintptr_t)dst, ctx->heap_rkey, 2, 0);
		CHECK(rc == 0 || rc == -ENOTCONN);
		while (rc == 0 && kp_now_ms() - t0 < 5000) {
			rc = kr_poll(v, &wc, 1);
			CHECK(rc <= 0); /* no completion after the keeper died */
		}
		CHECK_EQ(rc, -ENOTCONN);
		printf("vQP after the keeper's death: -ENOTCONN after %.1f ms\n",
		       kp_now_ms() - t0);
		fflush(stdout);
		kr_disconnect(v); /* local state only: nothing to tell a dead keeper */
	}

	/*
	 * kr_malloc notices on its own, before any control call: the keeper's
	 * heartbeat goes stale and one socket check confirms (bounded wait).
	 */
	{
		double t0 = kp_now_ms();
		void *p;

		while ((p = kr_malloc(ctx, 64)) != NULL && kp_now_ms() - t0 < 5000) {
			kr_free(ctx, p);
			usleep(1000);
		}
		CHECK(p == NULL && errno == ENOTCONN);
	}
	kr_free(ctx, chk); /* heap memory is still mapped: freeing it is fine */
	chk = NULL;
	CHECK_ERR(kr_ctx_query(ctx, &attr), -ENOTCONN);
	rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &l2);
	if (!is_gone(rc))
		KR_FAIL("lease after keeper death returned %d", rc);
	rc = kr_lease_free(ctx, &l);
	CHECK(is_gone(rc) || rc == -EINVAL); /* the view was dropped first, then -ENOTCONN */
	CHECK(is_gone(kr_lease_alloc(ctx, KR_LEASE_RC, &l2)));
	CHECK(is_gone(kr_lease_free(ctx, &rcl)));
	{
		struct kr_mr_key key;
		struct kr_devx_dc_av av;

		CHECK_OK(kr_mr_key(mr, &key)); /* local: still answers */
		CHECK(is_gone(kr_dereg_mr(mr)));
		CHECK(is_gone(kr_job_tenant_av(ctx, &av)));
	}
	CHECK(kr_malloc(ctx, 64) == NULL && errno == ENOTCONN);
	CHECK(kr_reg_mr(ctx, src, 64, KR_MR_REMOTE_READ) == NULL);
	CHECK(errno == ENOTCONN || errno == EPIPE);
	/* a post on the old DCI does not crash (no engine serves it any more) */
	{
		struct kr_devx_qp *qp;
		struct kr_devx_cq *cq;

		CHECK(is_gone(kr_job_dci_qp(ctx, &l, &qp, &cq)) ||
		      kr_job_dci_qp(ctx, &l, &qp, &cq) == -EINVAL);
	}
	kr_free(ctx, src);
	kr_free(ctx, dst);
	CHECK_ERR(kr_detach(ctx), -ENOTCONN);

	/* a new keeper */
	CHECK_EQ(write(to_parent, "2", 1), 1);
	CHECK_EQ(read(from_parent, &c, 1), 1);
	{
		double t0 = kp_now_ms();

		ctx = kp_attach(k, 5000);
		if (!ctx)
			KR_FAIL("attach to the restarted keeper: %s", strerror(errno));
		/* reported, never judged here (a bench number) */
		printf("re-attach to the restarted keeper: %.0f us\n", (kp_now_ms() - t0) * 1e3);
		fflush(stdout);
	}
	src = kr_malloc(ctx, 1024);
	dst = kr_malloc(ctx, 1024);
	chk = kr_malloc(ctx, 1024);
	CHECK(src && dst && chk);
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l));
	CHECK_OK(kp_dci_write_read(ctx, &l, src, dst, chk, 1024, 8, 100));
	CHECK_OK(kr_lease_free(ctx, &l));
	CHECK_OK(kr_detach(ctx));
	return 0;
}

int main(void)
{
	int up[2], down[2], status;
	struct kp_keeper k;
	char c, log[4096] = "", second[160];
	pid_t pid;
	FILE *f;

	kp_require_hugepages(24);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));

	/* a second keeper on the same socket is refused (exit 3), with a reason */
	snprintf(second, sizeof(second), "%s/second.log", k.dir);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (!freopen(second, "w", stderr))
			_exit(126);
		alarm(30);
		execl(kp_tool("KRPOOLD"), "krpoold", "--foreground", "--socket", k.sock,
		      "--tenants", "1", "--hugepages", "64", (char *)NULL);
		_exit(127);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 3);
	f = fopen(second, "r");
	CHECK(f != NULL);
	CHECK(fread(log, 1, sizeof(log) - 1, f) > 0);
	fclose(f);
	unlink(second);
	CHECK(strstr(log, "another keeper") != NULL);

	CHECK_OK(pipe(up));
	CHECK_OK(pipe(down));
	pid = kp_fork_job();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(job(&k, up[1], down[0]));
	close(up[1]); /* a job that fails gives EOF here, not a hang */
	close(down[0]);
	CHECK_EQ(read(up[0], &c, 1), 1);
	CHECK(WIFSIGNALED(kp_keeper_stop(&k, SIGKILL)));
	CHECK_EQ(write(down[1], "k", 1), 1);
	CHECK_EQ(read(up[0], &c, 1), 1);
	CHECK_OK(kp_keeper_start(&k, args));
	CHECK_EQ(write(down[1], "s", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("pool_keeper_restart");
}
