/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_port_publish: another launch's ports never hide a launch's port from
 * the MetaServer (issue: another user on the node...; item 5). A node's
 * MetaServer row has room for --ports port records; they used to be filled
 * walking the tenant slots in order, so uid 65534's launch, first on node 2
 * with two ports bound, took both and root's port there went unpublished:
 * root's senders on node 1 got ECONNREFUSED. Now publication takes each
 * launch's first port, then each one's second...
 *
 * Two keepers on sim hosts over UDP loopback: node 1 the MetaServer
 * (--ports 2: two port records per node), node 2 registered. On node 2, uid
 * 65534 binds 4801 and 4802 first; then root's launch binds 4800 there. A
 * rank of root's launch on node 1 connects to node 2's port 4800 through
 * the MetaServer and its message arrives (the control: the mechanism is
 * the one the attack used).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"
#include "sim_mp.h"
#include "job/virtqp/virtqp.h"

#define PORT  4800
#define BUFSZ 256

static struct kp_keeper K1, K2;

/* As uid 65534 on node 2: bind two ports, say so, hold them until killed. */
static int hog(void *arg)
{
	int *wfd = arg;
	struct kr_ctx *ctx;

	unsetenv("KR_LAUNCH_KEY"); /* a launch of its own */
	ctx = kp_attach(&K2, 5000);
	SEC_EXPECT(ctx != NULL);
	SEC_EXPECT(kr_bind(ctx, PORT + 1, NULL) != NULL);
	SEC_EXPECT(kr_bind(ctx, PORT + 2, NULL) != NULL);
	SEC_EXPECT(write(*wfd, "h", 1) == 1);
	pause();
	return 0;
}

/* Root's rank on node 2: bind PORT, then wait for one message (exit 0 when it came). */
static pid_t binder_start(int wfd)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		struct kr_ctx *ctx = kp_attach(&K2, 5000);
		struct kr_port *p;
		struct kr_wc wc;
		uint8_t *buf;
		int got = 0;

		if (!ctx || !(buf = kr_malloc(ctx, BUFSZ)) || !(p = kr_bind(ctx, PORT, NULL)) ||
		    kr_post_recv(p, buf, BUFSZ, 1))
			_exit(2);
		if (write(wfd, "b", 1) != 1)
			_exit(3);
		for (double t0 = kp_now_ms(); !got && kp_now_ms() - t0 < 20000;)
			got = kr_poll_recv(p, &wc, 1);
		_exit(got == 1 && wc.status == KR_WC_SUCCESS && buf[0] == 0x5a ? 0 : 4);
	}
	return pid;
}

int main(void)
{
	static const char *const addrs[] = {"127.0.0.2", "127.0.0.3"};
	char dev1[64], dev2[64], ms[32], c;
	struct kr_connect_opts co = {.port = PORT};
	struct kr_ctx *ctx;
	struct kr_vqp *v = NULL;
	struct kr_wc wc;
	pid_t hog_pid, binder;
	uint8_t *src;
	uint16_t port;
	int p[2], rc, status;

	sec_require_root();
	kp_require_hugepages(80);
	port = mp_pick_port(addrs, 2);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.2-3");
	snprintf(dev1, sizeof(dev1), "sim:pp1@127.0.0.2:%u", port);
	snprintf(dev2, sizeof(dev2), "sim:pp2@127.0.0.3:%u", port);
	snprintf(ms, sizeof(ms), "127.0.0.2:%u", port + 1);
#define COMMON                                                                                     \
	"--tenants", "3", "--dcis", "4", "--jobs", "2", "--ports", "2", "--heap-mb", "2",          \
	    "--hugepages", "48", "--group", "65534"
	{
		const char *const a1[] = {"--device",	   dev1, "--node-id", "1", "--metaserver",
					  "--meta-listen", ms,	 COMMON,      NULL};
		const char *const a2[] = {"--device",	       dev2, "--node-id", "2",
					  "--metaserver-addr", ms,   COMMON,	  NULL};

		sec_keeper_start(&K1, a1);
		sec_keeper_start(&K2, a2);
	}
	CHECK_OK(pipe(p));
	hog_pid = sec_spawn_nobody(hog, &p[1]);
	CHECK_EQ(read(p[0], &c, 1), 1); /* its two ports are bound, its launch first */
	binder = binder_start(p[1]);
	CHECK_EQ(read(p[0], &c, 1), 1);

	ctx = kp_attach(&K1, 5000);
	CHECK(ctx != NULL);
	src = kr_malloc(ctx, 64);
	CHECK(src != NULL);
	/* registrations go every 250 ms: the port is published within a few */
	for (double t0 = kp_now_ms(); !(v = kr_connect(ctx, 2, &co)) && kp_now_ms() - t0 < 5000;)
		if (errno != ECONNREFUSED && errno != ENOENT)
			break;
		else
			usleep(20000);
	if (!v)
		KR_FAIL("node 2's port %u of root's launch: %s (another launch's ports hid it)",
			PORT, strerror(errno));
	memset(src, 0x5a, 64);
	for (double t0 = kp_now_ms(); (rc = kr_post_send(v, src, 64, 1, 0)) == -EAGAIN;) {
		CHECK(kp_now_ms() - t0 < 10000);
		CHECK(kr_poll(v, &wc, 1) >= 0);
	}
	CHECK_OK(rc);
	for (double t0 = kp_now_ms(); kr_poll(v, &wc, 1) == 0;)
		CHECK(kp_now_ms() - t0 < 10000);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(waitpid(binder, &status, 0), binder);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_detach(ctx));
	kill(hog_pid, SIGKILL);
	sec_wait(hog_pid);
	CHECK_EQ(kp_keeper_stop(&K2, SIGTERM), 0);
	CHECK_EQ(kp_keeper_stop(&K1, SIGTERM), 0);
	kp_keeper_fini(&K2);
	kp_keeper_fini(&K1);
	KR_PASS("sec_port_publish");
}
