/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-sided messages to a port of another node, over a wire that drops,
 * duplicates and reorders 5 % of the packets each way: two keepers on sim
 * hosts over UDP loopback (node 1 also the MetaServer). A job on node 2
 * binds a port; a job on node 1 finds it with one READ of node 2's
 * MetaServer row (the port is published once the keeper registers: the
 * connect is retried while it says ECONNREFUSED) and sends 20,000 messages
 * of random sizes, some with an immediate. The receiver checks exact
 * delivery: every message once, in order, its bytes, its length, its imm.
 * Bad input: a port nobody bound on node 2 (ECONNREFUSED), a node that does
 * not exist (ENOENT).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_mp.h"
#include "job/job.h"
#include "keeper/meta/meta.h"
#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define PORT   5005
#define N      20000
#define NBUF   64
#define MAXMSG 512
#define BUFLEN (MAXMSG + KR_SEND_HDR_LEN) /* room for a trailer (messages with imm) */
#define FAULTS "drop=0.05,dup=0.05,reorder=0.05"

static struct kp_keeper g_k[3];

static uint32_t msg_len(uint32_t i)
{
	return 1 + (i * 2654435761u >> 7) % MAXMSG;
}

static uint8_t msg_byte(uint32_t i, uint32_t j)
{
	return (uint8_t)(i * 31 + j * 7 + 1);
}

/* The receiver on node 2: bind, post, report, take N messages checked one by one. */
static void receiver(int out, int in, void *arg)
{
	struct kr_ctx *ctx = kp_attach(&g_k[2], 10000);
	uint32_t got = 0;
	struct kr_wc wc[16];
	struct kr_port *p;
	uint8_t *bufs;
	int rc = 0;

	(void)arg;
	if (!ctx)
		_exit(3);
	bufs = kr_malloc(ctx, NBUF * BUFLEN);
	p = bufs ? kr_bind(ctx, PORT, NULL) : NULL;
	if (!p)
		_exit(4);
	for (int i = 0; i < NBUF; i++)
		kr_post_recv(p, bufs + i * BUFLEN, BUFLEN, (uint64_t)i);
	if (write(out, &rc, sizeof(rc)) != sizeof(rc))
		_exit(5);
	for (double t0 = kp_now_ms(); got < N && !rc && kp_now_ms() - t0 < 120000;) {
		int r = kr_poll_recv(p, wc, 16);

		if (r < 0) {
			rc = r;
			break;
		}
		for (int i = 0; i < r && !rc; i++) {
			uint8_t *m = bufs + wc[i].wr_id * BUFLEN;
			bool imm = got % 3 == 0;

			if (wc[i].status != KR_WC_SUCCESS || wc[i].byte_len != msg_len(got) ||
			    !!(wc[i].flags & KR_WC_F_IMM) != imm || (imm && wc[i].imm != got))
				rc = -EIO;
			for (uint32_t j = 0; j < wc[i].byte_len && !rc; j++)
				if (m[j] != msg_byte(got, j))
					rc = -EBADMSG;
			if (rc)
				fprintf(stderr,
					"message %u: status %u, %u bytes, flags %u imm %u\n", got,
					wc[i].status, wc[i].byte_len, wc[i].flags, wc[i].imm);
			got++;
			kr_post_recv(p, m, BUFLEN, wc[i].wr_id);
		}
	}
	if (!rc && got != N)
		rc = -ETIMEDOUT;
	if (write(out, &rc, sizeof(rc)) != sizeof(rc))
		_exit(6);
	if (read(in, &(char){0}, 1) != 1) /* the sender is done with the port */
		_exit(7);
	kr_unbind(p);
	kr_detach(ctx);
	_exit(0);
}

int main(void)
{
	static const char *const addrs[] = {"127.0.0.2", "127.0.0.3"};
	char dev[3][96], ms[32], id[3][8];
	const char *argv[3][24];
	struct kr_connect_opts co = {.port = PORT};
	struct kr_dct_look_stats s0, s1;
	struct kp_child rx;
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	uint8_t *src;
	uint32_t sent = 0, done = 0;
	uint16_t port;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	kp_require_hugepages(2 * 32 + 8);
	port = mp_pick_port(addrs, 2);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.2-3");
	snprintf(ms, sizeof(ms), "127.0.0.2:%u", port + 1);
	for (int n = 1; n <= 2; n++) {
		int a = 0;

		snprintf(dev[n], sizeof(dev[n]), "sim:send%d@%s:%u,%s", n, addrs[n - 1], port,
			 FAULTS);
		snprintf(id[n], sizeof(id[n]), "%d", n);
		argv[n][a++] = "--device";
		argv[n][a++] = dev[n];
		argv[n][a++] = "--node-id";
		argv[n][a++] = id[n];
		if (n == 1) {
			argv[n][a++] = "--metaserver";
			argv[n][a++] = "--meta-listen";
			argv[n][a++] = ms;
		} else {
			argv[n][a++] = "--metaserver-addr";
			argv[n][a++] = ms;
		}
		for (const char *const *c =
			 (const char *const[]){"--tenants", "1", "--dcis", "4", "--jobs", "2",
					       "--heap-mb", "2", "--hugepages", "48", NULL};
		     *c; c++)
			argv[n][a++] = *c;
		argv[n][a] = NULL;
		kp_keeper_init(&g_k[n]);
		CHECK_OK(kp_keeper_start(&g_k[n], argv[n]));
	}
	rx = kp_spawn(receiver, NULL);
	ctx = kp_attach(&g_k[1], 5000);
	CHECK(ctx != NULL);
	src = kr_malloc(ctx, 32 * MAXMSG);
	CHECK(src != NULL);
	CHECK_EQ(read(rx.from, &rc, sizeof(rc)), sizeof(rc)); /* bound */
	CHECK_OK(rc);

	/* published once node 2's keeper registered it: wait for that, then it is one READ
	 * (ENOENT until the MetaServer list reached the zone and node 2 registered: its
	 * datagrams cross the faulty wire too) */
	v = NULL;
	for (double t0 = kp_now_ms(); !v && kp_now_ms() - t0 < 10000;) {
		kr_dct_look_stats_get(&s0);
		v = kr_connect(ctx, 2, &co);
		CHECK(v || errno == ECONNREFUSED || errno == EAGAIN || errno == EHOSTUNREACH ||
		      errno == ENOENT);
		if (!v)
			usleep(10000);
	}
	CHECK(v != NULL);
	kr_dct_look_stats_get(&s1);
	printf("connect to node 2 port %d: %llu MetaServer READ(s)\n", PORT,
	       (unsigned long long)(s1.reads - s0.reads));
	CHECK_EQ(s1.reads - s0.reads, 1);
	errno = 0;
	co.port = PORT + 1;
	CHECK(kr_connect(ctx, 2, &co) == NULL);
	CHECK_EQ(errno, ECONNREFUSED);
	co.port = PORT;
	CHECK(kr_connect(ctx, 77, &co) == NULL);
	CHECK_EQ(errno, ENOENT);

	/* 20,000 messages under 5 % drop, duplication and reordering */
	for (double t0 = kp_now_ms(); sent < N && kp_now_ms() - t0 < 120000;) {
		uint8_t *m = src + (sent % 32) * MAXMSG;
		uint32_t len = msg_len(sent);
		struct kr_wc wc[16];
		int r;

		for (uint32_t j = 0; j < len; j++)
			m[j] = msg_byte(sent, j);
		rc = sent % 3 == 0 ? kr_post_send_imm(v, m, len, sent, sent, 0)
				   : kr_post_send(v, m, len, sent, 0);
		if (!rc)
			sent++;
		else
			CHECK_ERR(rc, -EAGAIN);
		r = kr_poll(v, wc, 16);
		CHECK(r >= 0);
		for (int i = 0; i < r; i++)
			CHECK_EQ(wc[i].status, KR_WC_SUCCESS);
		done += (uint32_t)r;
	}
	CHECK_EQ(sent, N);
	/*
	 * The rest of the user's completions. Not "while v->used": a credit
	 * READ of the library's own may hold credits too, and completes into
	 * no user completion.
	 */
	for (struct kr_wc wc; done < N; done++)
		CHECK(vq_wait(v, &wc, 1) == 1 && wc.status == KR_WC_SUCCESS);
	CHECK_EQ(read(rx.from, &rc, sizeof(rc)), sizeof(rc));
	CHECK_OK(rc); /* every message once, in order, its bytes */
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kp_child_run(&rx, "d", 1, &rc, 0));
	printf("%u messages to node 2 under %s: all delivered in order\n", N, FAULTS);
	CHECK_OK(kr_detach(ctx));
	for (int n = 2; n >= 1; n--) {
		CHECK_EQ(kp_keeper_stop(&g_k[n], SIGTERM), 0);
		kp_keeper_fini(&g_k[n]);
	}
	printf("PASS: test_send_two_nodes\n");
	return 0;
}
