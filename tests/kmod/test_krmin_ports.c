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
#include "krmin_test.h"
#include "pool_fixture.h"
#include "virtqp/virtqp.h"

#define PORT 6100
#define N    2000
#define NBUF 32
#define MSG  96

static struct kp_keeper K;

static int put(int fd, const void *v, size_t n)
{
	return write(fd, v, n) == (ssize_t)n ? 0 : -EIO;
}

static int get(int fd, void *v, size_t n)
{
	return read(fd, v, n) == (ssize_t)n ? 0 : -EIO;
}

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
	if (put(out, &srq_addr, sizeof(srq_addr)) || get(in, &c, 1))
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
	if (put(out, &rc, sizeof(rc)) || get(in, &c, 1))
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
	return put(out, &rc, sizeof(rc)) ? 8 : rc;
}

/* A job of the same launch writes where the receiver's SRQ is: it must fault. */
static int job_peek(struct kr_ctx *ctx, int in, int out)
{
	uint64_t a;

	(void)ctx, (void)out;
	if (get(in, &a, sizeof(a)))
		return 2;
	signal(SIGSEGV, SIG_DFL);		  /* the kernel's verdict, not ASan's report */
	*(volatile uint8_t *)(uintptr_t)a = 0xff; /* SIGSEGV: no access to another's pages */
	return 3;
}

static const struct {
	const char *name;
	int (*fn)(struct kr_ctx *ctx, int in, int out);
} jobs[] = {{"recv", job_recv}, {"send", job_send}, {"peek", job_peek}};

static int job_main(char **argv)
{
	int in = atoi(argv[3]), out = atoi(argv[4]);
	struct kr_attach_opts o = {.socket_path = argv[5]};
	struct kr_ctx *ctx = kr_attach(&o);
	int rc = 90;

	if (!ctx) {
		fprintf(stderr, "%s: attach: %s\n", argv[2], strerror(errno));
		return 92;
	}
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		if (!strcmp(argv[2], jobs[i].name))
			rc = jobs[i].fn(ctx, in, out);
	kr_detach(ctx);
	return rc;
}

struct job {
	pid_t pid;
	int to, from;
};

/* This program again, exec'd as "job NAME IN OUT SOCKET": a fresh process that can attach. */
static struct job spawn(const char *name)
{
	int a[2], b[2];
	struct job j;

	CHECK_OK(pipe(a));
	CHECK_OK(pipe(b));
	j.pid = fork();
	CHECK(j.pid >= 0);
	if (j.pid == 0) {
		char i[16], o[16];

		close(a[1]);
		close(b[0]);
		snprintf(i, sizeof(i), "%d", a[0]);
		snprintf(o, sizeof(o), "%d", b[1]);
		execl("/proc/self/exe", "test_krmin_ports", "job", name, i, o, K.sock,
		      (char *)NULL);
		_exit(91);
	}
	close(a[0]);
	close(b[1]);
	j.to = a[1];
	j.from = b[0];
	return j;
}

static int wait_status(pid_t pid)
{
	int st;

	CHECK_EQ(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void keeper_reap(void)
{
	if (K.pid > 0)
		kp_keeper_stop(&K, SIGKILL);
}

/* Wait (bounded) until the module's owned slots are back to want. */
static long owned_settles(long want)
{
	long v = kt_stat("owned");

	for (double t0 = kp_now_ms(); v != want && kp_now_ms() - t0 < 5000; v = kt_stat("owned"))
		usleep(10000);
	return v;
}

int main(int argc, char **argv)
{
	const char *const args[] = {
	    "-v", "--require-kmod", "--tenants", "2",		"--dcis", "4", "--jobs",
	    "4",  "--heap-mb",	    "2",	 "--hugepages", "64",	  NULL};
	struct job r, s, pk, r2;
	long owned0;
	uint64_t srq;
	int rc;

	if (argc == 6 && !strcmp(argv[1], "job"))
		return job_main(argv);
	if (geteuid() != 0)
		KR_SKIP("needs root (the module's keeper)");
	if (access("/dev/" KRMIN_DEV_NAME, F_OK))
		KR_SKIP("no /dev/%s: runs in the kmod suite's qemu guest", KRMIN_DEV_NAME);
	kp_require_hugepages(16);
	kp_keeper_init(&K);
	CHECK_OK(kp_keeper_start(&K, args));
	atexit(keeper_reap);
	owned0 = kt_stat("owned");

	/* bound through the module: its endpoint is one more owned slot */
	r = spawn("recv");
	CHECK_OK(get(r.from, &srq, sizeof(srq)));
	CHECK_EQ(kt_stat("owned"), owned0 + 1);
	/* another job of the launch never had those pages */
	pk = spawn("peek");
	CHECK_OK(put(pk.to, &srq, sizeof(srq)));
	CHECK_EQ(wait_status(pk.pid), 128 + SIGSEGV);
	/* messages flow into the fenced endpoint */
	CHECK_OK(put(r.to, "g", 1));
	s = spawn("send");
	CHECK_OK(get(s.from, &rc, sizeof(rc)));
	CHECK_OK(rc);
	CHECK_OK(get(r.from, &rc, sizeof(rc)));
	CHECK_OK(rc); /* every message, in order, its bytes */
	CHECK_EQ(wait_status(s.pid), 0);
	CHECK_OK(put(r.to, "u", 1));
	CHECK_EQ(wait_status(r.pid), 0);
	CHECK_EQ(owned_settles(owned0), owned0); /* unbound: the slot is back */
	printf("ports, fenced: %d messages into an endpoint mapped from its slot; another job of "
	       "the launch faults on its pages; the slot comes back at unbind\n",
	       N);

	/* a receiver killed while bound: its slot and the port come back */
	r2 = spawn("recv");
	CHECK_OK(get(r2.from, &srq, sizeof(srq)));
	CHECK_EQ(kt_stat("owned"), owned0 + 1);
	CHECK_OK(put(r2.to, "k", 1));
	usleep(20000);
	CHECK_OK(kill(r2.pid, SIGKILL));
	CHECK_EQ(wait_status(r2.pid), 128 + SIGKILL);
	CHECK_EQ(owned_settles(owned0), owned0);
	r = spawn("recv"); /* the port is free again */
	CHECK_OK(get(r.from, &srq, sizeof(srq)));
	CHECK_OK(put(r.to, "k", 1));
	usleep(20000);
	CHECK_OK(kill(r.pid, SIGKILL));
	CHECK_EQ(wait_status(r.pid), 128 + SIGKILL);
	CHECK_EQ(owned_settles(owned0), owned0);
	printf(
	    "ports, fenced: a receiver SIGKILLed while bound gives its slot and its port back\n");

	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("test_krmin_ports");
}
