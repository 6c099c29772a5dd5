/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_port_namespace: ports belong to a launch (issue: another user on the
 * node...; item 4, and the rebound port). Ports used to be node-wide: uid
 * 65534 bound port P first and root's launch got EADDRINUSE.
 *   1. uid 65534 (a launch of its own) binds port 4700 and polls it; root's
 *      launch binds 4700 as well, connects to it and exchanges messages:
 *      each arrives at root's binding, none at the other launch's.
 *   2. Bindings never share a generation (it is in their DC key): a second
 *      port bound while the first is, on another endpoint, gets another
 *      (endpoints used to count on their own, so the port bound again on
 *      another endpoint than its first came back with the same generation,
 *      the same DC key, and the old binding's sender reached it).
 *   3. A rebound port refuses a sender of its earlier binding: root's
 *      sender connected to 4700 stays while the port is unbound and bound
 *      again (the device may give the new binding the old DCT number); its
 *      next SEND fails (the new DC target drops the old binding's key) and
 *      nothing lands in the new binding's buffers; a sender that connects
 *      now reaches it (the control).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"
#include "job/virtqp/virtqp.h"

#define PORT  4700
#define BUFSZ 256
#define NBUF  16

static struct kp_keeper K;

/* Post NBUF receive buffers of BUFSZ from bufs. */
static void post_bufs(struct kr_port *p, uint8_t *bufs)
{
	for (int i = 0; i < NBUF; i++)
		CHECK_OK(kr_post_recv(p, bufs + (size_t)i * BUFSZ, BUFSZ, (uint64_t)i));
}

/* Messages p received within ms (none expected, or up to n). */
static int recv_for(struct kr_port *p, struct kr_wc *wc, int n, double ms)
{
	int got = 0;

	for (double t0 = kp_now_ms(); got < n && kp_now_ms() - t0 < ms;) {
		int r = kr_poll_recv(p, wc + got, n - got);

		if (r < 0)
			return r;
		got += r;
	}
	return got;
}

/* One SEND of a byte pattern through v to p, received and checked. */
static void send_one(struct kr_vqp *v, struct kr_port *p, uint8_t *src, uint8_t fill)
{
	struct kr_wc wc, rwc;
	int got = 0, rc;

	memset(src, fill, 64);
	for (double t0 = kp_now_ms(); (rc = kr_post_send(v, src, 64, fill, 0)) == -EAGAIN;) {
		CHECK(kp_now_ms() - t0 < 10000); /* the first waits for the receiver's credit */
		got += kr_poll_recv(p, &rwc, 1);
		CHECK(kr_poll(v, &wc, 1) >= 0);
	}
	CHECK_OK(rc);
	if (!got)
		got = recv_for(p, &rwc, 1, 10000);
	CHECK_EQ(got, 1);
	CHECK_EQ(rwc.status, KR_WC_SUCCESS);
	CHECK_EQ(rwc.byte_len, 64);
	for (double t0 = kp_now_ms(); kr_poll(v, &wc, 1) == 0;)
		CHECK(kp_now_ms() - t0 < 10000);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
}

/* As uid 65534, its own launch: bind PORT, report, count what lands until told to stop. */
static int squatter(void *arg)
{
	int *fds = arg, got = 0;
	struct kr_ctx *ctx;
	struct kr_port *p;
	uint8_t *bufs, c = 0;
	struct kr_wc wc[NBUF];

	unsetenv("KR_LAUNCH_KEY");
	ctx = kp_attach(&K, 5000);
	SEC_EXPECT(ctx != NULL);
	bufs = kr_malloc(ctx, NBUF * BUFSZ);
	SEC_EXPECT(bufs != NULL);
	p = kr_bind(ctx, PORT, NULL);
	SEC_EXPECT(p != NULL);
	for (int i = 0; i < NBUF; i++)
		SEC_EXPECT(kr_post_recv(p, bufs + (size_t)i * BUFSZ, BUFSZ, (uint64_t)i) == 0);
	SEC_EXPECT(write(fds[1], "b", 1) == 1);
	while (read(fds[2], &c, 1) != 1 || c != 's') {
		int r = kr_poll_recv(p, wc, NBUF);

		SEC_EXPECT(r >= 0);
		got += r;
	}
	got += kr_poll_recv(p, wc, NBUF);
	SEC_EXPECT(got == 0); /* nothing of root's launch */
	SEC_EXPECT(kr_unbind(p) == 0);
	SEC_EXPECT(kr_detach(ctx) == 0);
	return 0;
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "3", "--dcis",	     "4",  "--jobs",  "2",     "--ports", "2",
	    "--heap-mb", "2", "--hugepages", "48", "--group", "65534", NULL};
	struct kr_connect_opts co = {.port = PORT};
	int up[2], down[2], fds[3], fl;
	struct kr_port *p, *p2, *q;
	struct kr_vqp *v, *v2;
	struct kr_ctx *ctx;
	uint8_t *bufs, *src;
	struct kr_wc wc[NBUF];
	struct kr_zone_ep old, now;
	uint32_t idx;
	pid_t pid;
	char c;

	sec_keeper_start(&K, args);
	CHECK_OK(pipe(up));
	CHECK_OK(pipe(down));
	fds[1] = up[1];
	fds[2] = down[0];
	fl = fcntl(down[0], F_GETFL);
	CHECK_OK(fcntl(down[0], F_SETFL, fl | O_NONBLOCK));
	pid = sec_spawn_nobody(squatter, fds);
	CHECK_EQ(read(up[0], &c, 1), 1); /* it holds its PORT */

	/* 1. root's launch binds the same port number: its own */
	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	bufs = kr_malloc(ctx, NBUF * BUFSZ);
	src = kr_malloc(ctx, 64);
	CHECK(bufs && src);
	p = kr_bind(ctx, PORT, NULL);
	if (!p)
		KR_FAIL("root's launch binds port %u: %s (another launch holds it)", PORT,
			strerror(errno));
	post_bufs(p, bufs);
	v = kr_connect(ctx, KR_NODE_SELF, &co);
	CHECK(v != NULL);
	for (int i = 0; i < 4; i++)
		send_one(v, p, src, (uint8_t)(0x10 + i));

	/* 2. another port, on the other endpoint: a generation of its own (q
	 * stays bound: the rebind below then has only the old endpoint, and the
	 * device only the old DCT number, to give) */
	q = kr_bind(ctx, PORT + 1, NULL);
	CHECK(q != NULL);
	{
		struct kr_zone_ep a, b;
		uint32_t ia, ib;

		CHECK_OK(kr_job_port_find(ctx, PORT, &a, &ia));
		CHECK_OK(kr_job_port_find(ctx, PORT + 1, &b, &ib));
		CHECK(ia != ib);
		if (a.gen == b.gen)
			KR_FAIL("ports %u and %u (endpoints %u, %u) share generation %u", PORT,
				PORT + 1, ia, ib, a.gen);
	}

	/* 3. the port bound again (the other launch still holds its own: the
	 * device's only free DCT number is the old binding's, and the sim gives
	 * it again): the old binding's sender is refused */
	CHECK_OK(kr_job_port_find(ctx, PORT, &old, &idx));
	CHECK_OK(kr_unbind(p));
	/* the endpoint comes back once the keeper's worker rebuilt its queues */
	for (double t0 = kp_now_ms(); !(p2 = kr_bind(ctx, PORT, NULL)) && errno == ENOSPC;)
		CHECK(kp_now_ms() - t0 < 10000);
	CHECK(p2 != NULL);
	CHECK_OK(kr_job_port_find(ctx, PORT, &now, &idx));
	CHECK_EQ(now.dctn, old.dctn); /* the case that matters: the number came back */
	CHECK(now.gen != old.gen);
	post_bufs(p2, bufs);
	memset(src, 0x66, 64);
	{
		int rc = kr_post_send(v, src, 64, 0x66, 0), n = 0;

		if (rc == 0) { /* it had credit left: the SEND goes, and fails */
			for (double t0 = kp_now_ms(); (n = kr_poll(v, wc, 1)) == 0;)
				CHECK(kp_now_ms() - t0 < 10000);
			CHECK_EQ(n, 1);
			if (wc[0].status == KR_WC_SUCCESS)
				KR_FAIL("a SEND of the earlier binding completed at the new one");
		}
	}
	CHECK_EQ(recv_for(p2, wc, NBUF, 300), 0); /* nothing landed */
	v2 = kr_connect(ctx, KR_NODE_SELF, &co);  /* the control: a sender of this binding */
	CHECK(v2 != NULL);
	send_one(v2, p2, src, 0x77);
	CHECK_EQ(write(down[1], "s", 1), 1);
	CHECK_EQ(sec_wait(pid), 0); /* the other launch got none of root's messages */
	kr_disconnect(v);
	CHECK_OK(kr_disconnect(v2));
	CHECK_OK(kr_unbind(p2));
	CHECK_OK(kr_unbind(q));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_port_namespace");
}
