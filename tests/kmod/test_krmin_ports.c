/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_krmin_ports (in the qemu guest, after insmod krmin.ko): ports on a
 * keeper that fences its jobs. krpoold on the sim with --require-kmod; a
 * receiver job binds a port (its endpoint's CQ and SRQ pages come to it as a
 * kmod-min slot, claimed with the bind's token), a sender job of the same
 * launch connects and sends 2,000 messages, each checked at the receiver.
 * Another job of the launch that writes where the receiver's SRQ is in its
 * own address space faults (SIGSEGV): it never had those pages. The module's
 * owned slots go up by the receiver's endpoint while bound and back down
 * after it unbinds; a receiver SIGKILLed while bound gives its slot back too
 * (the module's exit event and the keeper's reclaim), and the port is bound
 * again at once by the next job.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <krcore/krmin_uapi.h>

#include "kr_test.h"
#include "kt_jobs.h"
#include "job/virtqp/virtqp.h"

#define PORT 6100
#define N    2000
#define NBUF 32
#define MSG  96

static struct kp_keeper K;

/* The receiver: bind, post, report the SRQ's address, take N messages checked, wait, unbind. */
static int job_recv(struct kr_ctx *ctx, int in, int out)
{
	struct kr_wc wc[16];
	uint64_t srq_addr;
	struct kr_port *p;
	uint8_t *bufs = kr_malloc(ctx, NBUF * MSG);
	uint32_t got = 0;
	int rc = 0;
	char c;

	p = bufs ? kr_bind(ctx, PORT, NULL) : NULL;
	if (!p) {
		fprintf(stderr, "recv: kr_bind: %s\n", strerror(errno));
		return 2;
	}
	for (int i = 0; i < NBUF; i++)
		if (kr_post_recv(p, bufs + i * MSG, MSG, (uint64_t)i))
			return 3;
	srq_addr = (uintptr_t)p->srq.wq_buf;
	if (kt_put(out, &srq_addr, sizeof(srq_addr)) || kt_get(in, &c, 1))
		return 4;
	if (c == 'k') /* to be killed while bound */
		for (;;)
			pause();
	for (double t0 = kp_now_ms(); got < N && !rc && kp_now_ms() - t0 < 60000;) {
		int r = kr_poll_recv(p, wc, 16);

		if (r < 0)
			return 5;
		for (int i = 0; i < r; i++) {
			uint32_t *m = (uint32_t *)(bufs + wc[i].wr_id * MSG);

			if (wc[i].status != KR_WC_SUCCESS || wc[i].byte_len != MSG || m[0] != got ||
			    m[MSG / 4 - 1] != ~got)
				rc = 6;
			got++;
			kr_post_recv(p, m, MSG, wc[i].wr_id);
		}
	}
	if (!rc && got != N)
		rc = 7;
	if (kt_put(out, &rc, sizeof(rc)) || kt_get(in, &c, 1))
		return 8;
	return kr_unbind(p) ? 9 : rc;
}

/* The sender: connect to the port, N messages {seq, ..., ~seq}. */
static int job_send(struct kr_ctx *ctx, int in, int out)
{
	struct kr_connect_opts co = {.port = PORT};
	uint32_t *buf = kr_malloc(ctx, 16 * MSG), sent = 0;
	struct kr_wc wc[16];
	struct kr_vqp *v;
	int rc = 0;

	(void)in;
	v = buf ? kr_connect(ctx, KR_NODE_SELF, &co) : NULL;
	if (!v) {
		fprintf(stderr, "send: kr_connect: %s\n", strerror(errno));
		return 2;
	}
	for (double t0 = kp_now_ms(); sent < N && kp_now_ms() - t0 < 60000;) {
		uint32_t *m = buf + (sent % 16) * (MSG / 4);

		m[0] = sent;
		m[MSG / 4 - 1] = ~sent;
		rc = kr_post_send(v, m, MSG, sent, 0);
		if (!rc)
			sent++;
		else if (rc != -EAGAIN)
			return 3;
		rc = kr_poll(v, wc, 16);
		if (rc < 0)
			return 4;
		for (int i = 0; i < rc; i++)
			if (wc[i].status != KR_WC_SUCCESS)
				return 5;
		rc = 0;
	}
	while (v->used)
		if (kr_poll(v, wc, 16) < 0)
			return 6;
	kr_disconnect(v);
	rc = sent == N ? 0 : 7;
	return kt_put(out, &rc, sizeof(rc)) ? 8 : rc;
}

/* A job of the same launch writes where the receiver's SRQ is: it must fault. */
static int job_peek(struct kr_ctx *ctx, int in, int out)
{
	uint64_t a;

	(void)ctx, (void)out;
	if (kt_get(in, &a, sizeof(a)))
		return 2;
	kt_poke(a); /* SIGSEGV: no access to another's pages */
	return 3;
}

static const struct kt_job_fn jobs[] = {{"recv", job_recv}, {"send", job_send}, {"peek", job_peek}};

int main(int argc, char **argv)
{
	const char *const args[] = {
	    "-v", "--require-kmod", "--tenants", "2",		"--dcis", "4", "--jobs",
	    "4",  "--heap-mb",	    "2",	 "--hugepages", "64",	  NULL};
	struct kt_job r, s, pk, r2;
	long owned0;
	uint64_t srq;
	int rc;

	if (argc == 6 && !strcmp(argv[1], "job"))
		return kt_job_main(argv, jobs, sizeof(jobs) / sizeof(jobs[0]));
	kt_keeper_up(&K, args);
	owned0 = kt_stat("owned");

	/* bound through the module: its endpoint is one more owned slot */
	r = kt_spawn("test_krmin_ports", "recv", K.sock);
	CHECK_OK(kt_get(r.from, &srq, sizeof(srq)));
	CHECK_EQ(kt_stat("owned"), owned0 + 1);
	/* another job of the launch never had those pages */
	pk = kt_spawn("test_krmin_ports", "peek", K.sock);
	CHECK_OK(kt_put(pk.to, &srq, sizeof(srq)));
	CHECK_EQ(kt_wait_status(pk.pid), 128 + SIGSEGV);
	/* messages flow into the fenced endpoint */
	CHECK_OK(kt_put(r.to, "g", 1));
	s = kt_spawn("test_krmin_ports", "send", K.sock);
	CHECK_OK(kt_get(s.from, &rc, sizeof(rc)));
	CHECK_OK(rc);
	CHECK_OK(kt_get(r.from, &rc, sizeof(rc)));
	CHECK_OK(rc); /* every message, in order, its bytes */
	CHECK_EQ(kt_wait_status(s.pid), 0);
	CHECK_OK(kt_put(r.to, "u", 1));
	CHECK_EQ(kt_wait_status(r.pid), 0);
	CHECK_EQ(kt_owned_settles(owned0), owned0); /* unbound: the slot is back */
	printf("ports, fenced: %d messages into an endpoint mapped from its slot; another job of "
	       "the launch faults on its pages; the slot comes back at unbind\n",
	       N);

	/* a receiver killed while bound: its slot and the port come back */
	r2 = kt_spawn("test_krmin_ports", "recv", K.sock);
	CHECK_OK(kt_get(r2.from, &srq, sizeof(srq)));
	CHECK_EQ(kt_stat("owned"), owned0 + 1);
	CHECK_OK(kt_put(r2.to, "k", 1));
	usleep(20000);
	CHECK_OK(kill(r2.pid, SIGKILL));
	CHECK_EQ(kt_wait_status(r2.pid), 128 + SIGKILL);
	CHECK_EQ(kt_owned_settles(owned0), owned0);
	r = kt_spawn("test_krmin_ports", "recv", K.sock); /* the port is free again */
	CHECK_OK(kt_get(r.from, &srq, sizeof(srq)));
	CHECK_OK(kt_put(r.to, "k", 1));
	usleep(20000);
	CHECK_OK(kill(r.pid, SIGKILL));
	CHECK_EQ(kt_wait_status(r.pid), 128 + SIGKILL);
	CHECK_EQ(kt_owned_settles(owned0), owned0);
	printf(
	    "ports, fenced: a receiver SIGKILLed while bound gives its slot and its port back\n");

	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("test_krmin_ports");
}
