/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_tenant_quota: one uid cannot take every tenant slot or port of the
 * node (issue: another user on the node...; item 2). A keeper with 4
 * unpinned tenant slots (default --uid-launches: 2) and --uid-ports 1:
 *   - uid 65534 attaches jobs without a launch key, each its own launch:
 *     the first two bind slots, the third gets EDQUOT (and a fourth: the
 *     limit holds), so root's new launch still attaches (the control) and
 *     krctl shows uid 65534 at 2/2;
 *   - a job of uid 65534 binds one port, the second is EDQUOT, and once it
 *     unbinds the first the second goes; root binds two (root is not
 *     limited).
 * Before the quota, the third and fourth attaches of uid 65534 bound the
 * remaining slots and root's new launch got ENOSPC.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "kr_test.h"
#include "sec_fixture.h"

static struct kp_keeper K;

/* A raw attach of a launch of its own (a random key): the status; *conn kept on success. */
static int lone_attach(int *conn)
{
	uint8_t key[KR_LAUNCH_KEY_BYTES];

	randombytes_buf(key, sizeof(key));
	return sec_attach_launch(K.sock, key, NULL, conn);
}

/* As uid 65534: two launches, then EDQUOT; a byte on the pipe, then wait to be killed. */
static int hog(void *arg)
{
	int *pfd = arg, conn[4];

	SEC_EXPECT(sodium_init() >= 0);
	SEC_EXPECT(lone_attach(&conn[0]) == 0);
	SEC_EXPECT(lone_attach(&conn[1]) == 0);
	SEC_EXPECT(lone_attach(&conn[2]) == -EDQUOT);
	SEC_EXPECT(lone_attach(&conn[3]) == -EDQUOT);
	SEC_EXPECT(write(pfd[1], "q", 1) == 1);
	pause(); /* holds its two launches until killed */
	return 0;
}

/* As uid 65534: a job of its own launch binds one port; the second is over its quota. */
static int port_hog(void *arg)
{
	struct kr_ctx *ctx;
	struct kr_port *p;

	(void)arg;
	unsetenv("KR_LAUNCH_KEY"); /* a launch of its own */
	ctx = kp_attach(&K, 5000);
	SEC_EXPECT(ctx != NULL);
	p = kr_bind(ctx, 4001, NULL);
	SEC_EXPECT(p != NULL);
	errno = 0;
	SEC_EXPECT(kr_bind(ctx, 4002, NULL) == NULL && errno == EDQUOT);
	SEC_EXPECT(kr_unbind(p) == 0);
	p = kr_bind(ctx, 4002, NULL); /* its one port back: the next may go */
	SEC_EXPECT(p != NULL);
	SEC_EXPECT(kr_unbind(p) == 0);
	SEC_EXPECT(kr_detach(ctx) == 0);
	return 0;
}

static bool krctl_says(const char *what)
{
	const char *argv[] = {kp_tool("KRCTL"), "--socket", K.sock, "pool", NULL};
	char out[8192];

	CHECK_EQ(kp_run(argv, out, sizeof(out), 10), 0);
	return strstr(out, what) != NULL;
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants",   "4", "--dcis",    "2",     "--jobs",	     "2",
	    "--ports",	   "2", "--heap-mb", "2",     "--hugepages", "48",
	    "--uid-ports", "1", "--group",   "65534", NULL};
	struct kr_ctx *ctx;
	struct kr_port *p1, *p2;
	int pfd[2];
	pid_t pid;
	char c;

	sec_keeper_start(&K, args);
	CHECK(krctl_says("at most 2 launches, 1 ports"));

	/* one uid's launches */
	CHECK_OK(pipe(pfd));
	pid = sec_spawn_nobody(hog, pfd);
	CHECK_EQ(read(pfd[0], &c, 1), 1);
	CHECK(krctl_says("launches 2/2, ports 0/1"));
	ctx = kp_attach(&K, 5000); /* root's launch: a slot is left for it */
	if (!ctx)
		KR_FAIL("root's launch: %s (one uid took the node)", strerror(errno));
	/* root is not limited: two ports in its one launch */
	p1 = kr_bind(ctx, 5001, NULL);
	p2 = kr_bind(ctx, 5002, NULL);
	CHECK(p1 && p2);
	CHECK_OK(kr_unbind(p1));
	CHECK_OK(kr_unbind(p2));
	CHECK_OK(kr_detach(ctx));
	kill(pid, SIGKILL);
	sec_wait(pid);
	close(pfd[0]);
	close(pfd[1]);

	/* one uid's ports */
	for (double t0 = kp_now_ms(); krctl_says("uid 65534"); usleep(20000))
		CHECK(kp_now_ms() - t0 < 10000); /* its launches leave (reclaimed, then linger) */
	CHECK_EQ(sec_as_nobody(port_hog, NULL), 0);

	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_tenant_quota");
}
