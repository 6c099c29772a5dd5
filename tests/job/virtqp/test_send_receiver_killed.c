/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A receiver SIGKILLed with buffers posted while a sender streams to it:
 * the keeper takes its endpoint back (the DCT goes: the port is free), the
 * sender's vQP fails within a bound, never a hang: its SENDs in flight
 * complete in error and its next post returns -EIO; once another job binds
 * the port again the sender reconnects and its messages arrive.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define PORT 5002
#define NBUF 32
#define MSG  32

static struct kp_keeper g_k;

/* A receiver job: attach, wait for the go, bind, post, say so, receive until killed (or n). */
static void receiver(int out, int in, void *arg)
{
	uint32_t n = (uint32_t)(uintptr_t)arg, got = 0;
	struct kr_ctx *ctx = kp_attach(&g_k, 10000);
	struct kr_wc wc[8];
	struct kr_port *p;
	uint8_t *bufs;
	int rc = 0;

	if (!ctx || read(in, &(char){0}, 1) != 1)
		_exit(3);
	bufs = kr_malloc(ctx, NBUF * MSG);
	p = bufs ? kr_bind(ctx, PORT, NULL) : NULL;
	if (!p)
		_exit(4);
	for (int i = 0; i < NBUF; i++)
		if (kr_post_recv(p, bufs + i * MSG, MSG, (uint64_t)i))
			_exit(5);
	if (write(out, &rc, sizeof(rc)) != sizeof(rc))
		_exit(6);
	for (double t0 = kp_now_ms(); got < n && kp_now_ms() - t0 < 30000;) {
		int r = kr_poll_recv(p, wc, 8);

		if (r < 0)
			_exit(7);
		for (int i = 0; i < r; i++) {
			if (wc[i].status != KR_WC_SUCCESS ||
			    *(uint32_t *)(bufs + wc[i].wr_id * MSG) != got)
				_exit(8);
			got++;
			kr_post_recv(p, bufs + wc[i].wr_id * MSG, MSG, wc[i].wr_id);
		}
	}
	rc = got == n ? 0 : -ETIMEDOUT;
	if (write(out, &rc, sizeof(rc)) != sizeof(rc))
		_exit(9);
	kr_unbind(p);
	kr_detach(ctx);
	_exit(0);
}

/* Send until n accepted (polling), or an error. Returns sent, or -errno. */
static int stream(struct kr_vqp *v, uint32_t *buf, uint32_t n, uint32_t *errors)
{
	struct kr_wc wc[8];
	uint32_t sent = 0;

	for (double t0 = kp_now_ms(); sent < n && kp_now_ms() - t0 < 20000;) {
		int rc, r;

		buf[sent % 16] = sent;
		rc = kr_post_send(v, &buf[sent % 16], 4, sent, 0);
		if (!rc)
			sent++;
		else if (rc != -EAGAIN)
			return rc;
		r = kr_poll(v, wc, 8);
		if (r < 0)
			return r;
		for (int i = 0; i < r; i++)
			*errors += wc[i].status != KR_WC_SUCCESS;
	}
	return (int)sent;
}

int main(void)
{
	const char *args[] = {"--tenants", "1", "--dcis", "8", NULL};
	struct kr_connect_opts co = {.port = PORT};
	uint32_t errors = 0, *buf;
	struct kp_child r1, r2;
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	int rc, st;
	double t_kill, t_err;

	signal(SIGPIPE, SIG_IGN);
	kp_require_hugepages(16);
	kp_keeper_init(&g_k);
	CHECK_OK(kp_keeper_start(&g_k, args));
	r1 = kp_spawn(receiver, (void *)(uintptr_t)UINT32_MAX);
	r2 = kp_spawn(receiver, (void *)(uintptr_t)100);
	ctx = kp_attach(&g_k, 5000);
	CHECK(ctx != NULL);
	buf = kr_malloc(ctx, 16 * sizeof(uint32_t));
	CHECK(buf != NULL);

	CHECK_EQ(write(r1.to, "g", 1), 1);
	CHECK_EQ(read(r1.from, &rc, sizeof(rc)), sizeof(rc));
	v = kr_connect(ctx, KR_NODE_SELF, &co);
	CHECK(v != NULL);
	CHECK_EQ(stream(v, buf, 1000, &errors), 1000);
	CHECK_EQ(errors, 0);

	/* the receiver dies with its buffers posted: the sender must hear of it */
	CHECK_OK(kill(r1.pid, SIGKILL));
	CHECK_EQ(waitpid(r1.pid, &st, 0), r1.pid);
	close(r1.to);
	close(r1.from);
	t_kill = kp_now_ms();
	rc = stream(v, buf, UINT32_MAX, &errors);
	/* the SENDs in flight at the kill complete in error (flushed or not acknowledged) */
	for (struct kr_wc wc; v->used && kp_now_ms() - t_kill < 20000;) {
		int r = kr_poll(v, &wc, 1);

		CHECK(r >= 0);
		errors += r == 1 && wc.status != KR_WC_SUCCESS;
	}
	t_err = kp_now_ms();
	printf("after the kill: kr_post_send %d, %u error completions, in %.1f ms\n", rc, errors,
	       t_err - t_kill);
	/* the vQP failed: its next post says so, and any SEND that was in flight
	 * completed in error (there may be none: the sender can have been
	 * waiting for credits, its pull being what failed) */
	CHECK_EQ(rc, -EIO);
	CHECK_EQ(v->state, KR_VQP_ERR);
	CHECK_EQ(v->used, 0);
	CHECK_OK(kr_disconnect(v));
	/* the keeper took the endpoint back: nobody holds the port */
	errno = 0;
	CHECK(kr_connect(ctx, KR_NODE_SELF, &co) == NULL);
	CHECK_EQ(errno, ECONNREFUSED);

	/* bound again by another job: reconnect, and the messages arrive */
	CHECK_EQ(write(r2.to, "g", 1), 1);
	CHECK_EQ(read(r2.from, &rc, sizeof(rc)), sizeof(rc));
	v = kr_connect(ctx, KR_NODE_SELF, &co);
	CHECK(v != NULL);
	errors = 0;
	CHECK_EQ(stream(v, buf, 100, &errors), 100);
	CHECK_OK(kp_child_run(&r2, "", 0, &rc, sizeof(rc)));
	CHECK_OK(rc); /* all 100, in order */
	/* what is left in flight, the library's own credit READs too (no user completion) */
	for (double t0 = kp_now_ms(); v->used && kp_now_ms() - t0 < 10000;) {
		struct kr_wc wc;
		int n = kr_poll(v, &wc, 1);

		CHECK(n >= 0);
		if (n)
			CHECK_EQ(wc.status, KR_WC_SUCCESS);
	}
	CHECK_EQ(v->used, 0);
	CHECK_EQ(errors, 0);
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&g_k, SIGTERM), 0);
	kp_keeper_fini(&g_k);
	printf("PASS: test_send_receiver_killed\n");
	return 0;
}
