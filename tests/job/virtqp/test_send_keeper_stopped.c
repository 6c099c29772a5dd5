/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper is not on the message path: with the keeper stopped, 10,000
 * messages flow from one job to another, all delivered, in order, bytes
 * checked.
 *
 * On hardware this is SIGSTOP on krpoold. On the sim the simulated NIC is
 * threads of the keeper's process (the host's engine "sim:*" and its UDP
 * receiver "simrx:*"), which SIGSTOP would stop too, like unplugging the
 * NIC. So the test stops every other thread of the keeper — event loop,
 * worker, MetaServer and EAL threads — with ptrace (PTRACE_INTERRUPT stops
 * one thread), which is what SIGSTOP does to a keeper whose NIC is a
 * ConnectX. Proof that it stayed stopped: the heartbeat its event loop
 * writes every 10 ms into the pool segment does not move during the flow.
 * Exits 77 when ptrace is not permitted.
 */
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define PORT 5003
#define N    10000
#define NBUF 64
#define MSG  128

static struct kp_keeper g_k;
static pid_t g_tids[256];
static int g_ntids;
static char g_stopped[512]; /* their names */

/* The sender job: attach, wait for the go, send n messages {seq, pattern}. */
static void sender(int out, int in, void *arg)
{
	struct kr_connect_opts co = {.port = PORT};
	struct kr_ctx *ctx = kp_attach(&g_k, 10000);
	uint32_t n, sent = 0;
	struct kr_wc wc[16];
	struct kr_vqp *v;
	uint32_t *buf;
	int rc = 0;

	(void)arg;
	if (!ctx)
		_exit(3);
	buf = kr_malloc(ctx, 32 * MSG);
	while (read(in, &n, sizeof(n)) == sizeof(n) && n) { /* a batch of n, then report */
		v = kr_connect(ctx, KR_NODE_SELF, &co);
		if (!v || !buf) {
			rc = -errno;
			break;
		}
		for (double t0 = kp_now_ms(); sent < n && kp_now_ms() - t0 < 60000;) {
			uint32_t *m = buf + (sent % 32) * (MSG / 4);

			m[0] = sent;
			for (uint32_t i = 1; i < MSG / 4; i++)
				m[i] = sent * 2654435761u + i;
			rc = kr_post_send(v, m, MSG, sent, 0);
			if (!rc)
				sent++;
			else if (rc == -EAGAIN)
				sched_yield(); /* a 2-core machine: the sim's engine needs the core
						*/
			else
				break;
			rc = kr_poll(v, wc, 16);
			if (rc < 0)
				break;
			for (int i = 0; i < rc; i++)
				if (wc[i].status != KR_WC_SUCCESS)
					_exit(4);
			rc = 0;
		}
		while (!rc && v->used)
			if (kr_poll(v, wc, 16) < 0)
				rc = -EIO;
		kr_disconnect(v);
		if (write(out, &rc, sizeof(rc)) != sizeof(rc))
			_exit(5);
		sent = 0;
		if (rc)
			break;
	}
	kr_detach(ctx);
	_exit(0);
}

/* Receive n messages: each in order, its bytes as sent. 0 or -EIO. */
static int receive(struct kr_port *p, uint8_t *bufs, uint32_t n)
{
	struct kr_wc wc[16];
	uint32_t got = 0;

	for (double t0 = kp_now_ms(); got < n && kp_now_ms() - t0 < 60000;) {
		int r = kr_poll_recv(p, wc, 16);

		CHECK(r >= 0);
		for (int i = 0; i < r; i++) {
			uint32_t *m = (uint32_t *)(bufs + wc[i].wr_id * MSG);

			CHECK_EQ(wc[i].status, KR_WC_SUCCESS);
			CHECK_EQ(wc[i].byte_len, MSG);
			CHECK_EQ(m[0], got);
			for (uint32_t j = 1; j < MSG / 4; j++)
				CHECK_EQ(m[j], got * 2654435761u + j);
			got++;
			CHECK_OK(kr_post_recv(p, m, MSG, wc[i].wr_id));
		}
	}
	return got == n ? 0 : -EIO;
}

/* Stop every thread of pid but the simulated NIC's. 0, or -errno (77 material). */
static int keeper_stop_threads(pid_t pid)
{
	char path[64], comm[32];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && g_ntids < 256) {
		pid_t tid = (pid_t)atoi(de->d_name);
		FILE *f;
		int st;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
		f = fopen(path, "r");
		if (!f || !fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		if (f)
			fclose(f);
		if (!strncmp(comm, "sim", 3))
			continue; /* the NIC runs on */
		if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) ||
		    ptrace(PTRACE_INTERRUPT, tid, NULL, NULL)) {
			closedir(d);
			return -errno;
		}
		if (waitpid(tid, &st, __WALL) != tid) {
			closedir(d);
			return -errno;
		}
		g_tids[g_ntids++] = tid;
		comm[strcspn(comm, "\n")] = 0;
		snprintf(g_stopped + strlen(g_stopped), sizeof(g_stopped) - strlen(g_stopped),
			 "%s%s", g_ntids > 1 ? "," : "", comm);
	}
	closedir(d);
	return g_ntids ? 0 : -ESRCH;
}

static void keeper_resume_threads(void)
{
	for (int i = 0; i < g_ntids; i++)
		ptrace(PTRACE_DETACH, g_tids[i], NULL, NULL);
	g_ntids = 0;
}

int main(void)
{
	const char *args[] = {"--tenants", "1", "--dcis", "4", NULL};
	uint32_t warm = N, n = N, zero = 0;
	struct kp_child snd;
	struct kr_ctx *ctx;
	struct kr_port *p;
	uint64_t hb0, hb1;
	double t0, t1;
	uint8_t *bufs;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	kp_require_hugepages(16);
	kp_keeper_init(&g_k);
	CHECK_OK(kp_keeper_start(&g_k, args));
	snd = kp_spawn(sender, NULL);
	ctx = kp_attach(&g_k, 5000);
	CHECK(ctx != NULL);
	bufs = kr_malloc(ctx, NBUF * MSG);
	CHECK(bufs != NULL);
	p = kr_bind(ctx, PORT, NULL);
	CHECK(p != NULL);
	for (int i = 0; i < NBUF; i++)
		CHECK_OK(kr_post_recv(p, bufs + i * MSG, MSG, (uint64_t)i));

	/* warm: the sender connects (its slot claim) and a first batch flows with the keeper up */
	t0 = kp_now_ms();
	CHECK_EQ(write(snd.to, &warm, sizeof(warm)), sizeof(warm));
	CHECK_OK(receive(p, bufs, warm));
	printf("keeper running: %u messages in %.1f ms\n", warm, kp_now_ms() - t0);
	CHECK_EQ(read(snd.from, &rc, sizeof(rc)), sizeof(rc));
	CHECK_OK(rc);

	rc = keeper_stop_threads(g_k.pid);
	if (rc) {
		keeper_resume_threads();
		printf("SKIP: cannot stop the keeper's threads with ptrace (%s)\n", strerror(-rc));
		kp_keeper_stop(&g_k, SIGKILL);
		kill(snd.pid, SIGKILL);
		kp_keeper_fini(&g_k);
		return 77;
	}
	hb0 = __atomic_load_n(&ctx->seg->heartbeat_ns, __ATOMIC_ACQUIRE);
	t0 = kp_now_ms();
	/* the sender's connect reads the port from the zone, its claim goes to our table */
	CHECK_EQ(write(snd.to, &n, sizeof(n)), sizeof(n));
	CHECK_OK(receive(p, bufs, n));
	CHECK_EQ(read(snd.from, &rc, sizeof(rc)), sizeof(rc));
	CHECK_OK(rc);
	t1 = kp_now_ms();
	usleep(50 * 1000); /* five of the loop's ticks: a running keeper would have beaten */
	hb1 = __atomic_load_n(&ctx->seg->heartbeat_ns, __ATOMIC_ACQUIRE);
	printf("keeper stopped (threads %s): %u messages of %d bytes in %.1f ms, heartbeat %s\n",
	       g_stopped, n, MSG, t1 - t0, hb1 == hb0 ? "still" : "MOVED");
	CHECK_EQ(hb1, hb0);
	keeper_resume_threads();

	/* the keeper answers again */
	{
		struct kr_ctx_attr a;

		CHECK_OK(kr_ctx_query(ctx, &a));
	}
	CHECK_OK(kp_child_run(&snd, &zero, sizeof(zero), &rc, 0)); /* it detaches and exits */
	CHECK_OK(kr_unbind(p));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&g_k, SIGTERM), 0);
	kp_keeper_fini(&g_k);
	printf("PASS: test_send_keeper_stopped\n");
	return 0;
}
