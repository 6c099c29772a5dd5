/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-sided messages between jobs of one node: 4 sender jobs -> 1 receiver
 * job that keeps 64 buffers posted and pauses 100 ms at random. Every
 * message is checked at the receiver: exact delivery (each sender's
 * sequence, nothing lost, nothing twice) and per-sender order; the senders
 * report how often they met -EAGAIN (credits), which they must have.
 * Then the bad inputs a hostile job could send the keeper: a bind whose
 * table no MR of its own covers, an unbind of another job's port; and the
 * port another launch holds, which is that launch's own (another launch
 * binds the same number, an endpoint of its own, and the first stays).
 *
 * Usage: test_send_jobs [messages per sender] (default 100000)
 */
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define PORT	 5001
#define SENDERS	 4
#define NBUF	 64
#define MSG	 64
#define PAUSE_MS 100

struct report {
	int rc;
	uint32_t sent;
	uint64_t eagain;
};

static struct kp_keeper g_k;
static uint32_t g_n = 100000;

/* A sender job: n messages {id, seq, ...} to the parent's port. */
static void sender(int out, int in, void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	struct kr_connect_opts co = {.port = PORT};
	struct report r = {0};
	struct kr_wc wc[16];
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	uint32_t *buf;
	double t0;

	ctx = kp_attach(&g_k, 10000);
	if (!ctx) {
		r.rc = -errno;
		goto out;
	}
	if (read(in, &(char){0}, 1) != 1) /* the port is bound */
		_exit(3);
	buf = kr_malloc(ctx, 32 * MSG);
	v = buf ? kr_connect(ctx, KR_NODE_SELF, &co) : NULL;
	if (!v) {
		r.rc = -errno;
		goto out;
	}
	t0 = kp_now_ms();
	while (r.sent < g_n && kp_now_ms() - t0 < 240000) {
		uint32_t *m = buf + (r.sent % 32) * (MSG / 4);
		int rc;

		m[0] = id;
		m[1] = r.sent;
		rc = kr_post_send(v, m, MSG, r.sent, 0);
		if (rc == -EAGAIN) {
			r.eagain++;
			sched_yield(); /* 6 busy processes on this machine's cores */
		} else if (rc) {
			r.rc = rc;
			break;
		} else {
			r.sent++;
		}
		rc = kr_poll(v, wc, 16);
		if (rc < 0) {
			r.rc = rc;
			break;
		}
		for (int i = 0; i < rc; i++)
			if (wc[i].status != KR_WC_SUCCESS)
				r.rc = -EIO;
	}
	/* every completion in before the slot goes back */
	while (!r.rc && v->used && kp_now_ms() - t0 < 240000)
		if (kr_poll(v, wc, 16) < 0)
			r.rc = -EIO;
	kr_disconnect(v);
	kr_detach(ctx);
out:
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	_exit(0);
}

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)*s;
}

static int flood(struct kr_ctx *ctx, struct kp_child *snd)
{
	struct report rep[SENDERS];
	uint32_t next[SENDERS] = {0};
	uint64_t total = 0, want = (uint64_t)g_n * SENDERS, seed = 0x9e3779b97f4a7c15ull;
	uint32_t pauses = 0, gap = (uint32_t)(want / 8);
	struct kr_wc wc[16];
	struct kr_port *p;
	uint8_t *bufs;
	double t0;

	bufs = kr_malloc(ctx, (size_t)NBUF * MSG);
	CHECK(bufs != NULL);
	p = kr_bind(ctx, PORT, &(struct kr_bind_opts){.senders = 8, .window = 16});
	CHECK(p != NULL);
	for (int i = 0; i < NBUF; i++)
		CHECK_OK(kr_post_recv(p, bufs + (size_t)i * MSG, MSG, (uint64_t)i));
	for (uint32_t i = 0; i < SENDERS; i++)
		CHECK_EQ(write(snd[i].to, "g", 1), 1);

	t0 = kp_now_ms();
	while (total < want && kp_now_ms() - t0 < 240000) {
		int r = kr_poll_recv(p, wc, 16);

		CHECK(r >= 0);
		for (int i = 0; i < r; i++) {
			uint32_t *m = (uint32_t *)(bufs + wc[i].wr_id * MSG);

			CHECK_EQ(wc[i].status, KR_WC_SUCCESS);
			CHECK_EQ(wc[i].byte_len, MSG);
			CHECK(m[0] < SENDERS);
			if (m[1] != next[m[0]]) {
				fprintf(stderr, "sender %u: message %u, expected %u\n", m[0], m[1],
					next[m[0]]);
				return -EIO;
			}
			next[m[0]]++;
			total++;
			CHECK_OK(kr_post_recv(p, m, MSG, wc[i].wr_id));
		}
		/* a receiver that stops polling now and then: its senders must wait, not drop */
		if (rnd(&seed) % gap == 0 && pauses < 16) {
			usleep(PAUSE_MS * 1000);
			pauses++;
		}
	}
	for (uint32_t i = 0; i < SENDERS; i++) {
		CHECK_OK(kp_child_run(&snd[i], "", 0, &rep[i], sizeof(rep[i])));
		printf("sender %u: %u sent, %" PRIu64 " -EAGAIN, rc %d; received %u\n", i,
		       rep[i].sent, rep[i].eagain, rep[i].rc, next[i]);
		CHECK_EQ(rep[i].rc, 0);
		CHECK_EQ(rep[i].sent, g_n);
		CHECK_EQ(next[i], g_n);
		CHECK(rep[i].eagain > 0); /* the receiver held them back */
	}
	printf("%" PRIu64 " messages in %.0f ms, %u pauses of %d ms\n", total, kp_now_ms() - t0,
	       pauses, PAUSE_MS);
	CHECK_EQ(total, want);
	CHECK_EQ(kr_poll_recv(p, wc, 16), 0); /* nothing twice */
	CHECK_OK(kr_unbind(p));
	kr_free(ctx, bufs);
	return 0;
}

/* A job of another launch: binding PORT (held by the parent) gives EADDRINUSE. */
static void other_launch(int out, int in, void *arg)
{
	struct kr_attach_opts o = {.socket_path = g_k.sock,
				   .launch_key = "00112233445566778899aabbccddeeff"
						 "00112233445566778899aabbccddeeff"};
	struct kr_ctx *ctx = kr_attach(&o);
	struct kr_port *p;
	int rc = 0;

	(void)arg;
	if (read(in, &(char){0}, 1) != 1)
		_exit(3);
	if (!ctx) {
		rc = -errno;
	} else {
		p = kr_bind(ctx, PORT, NULL);
		rc = p ? 0 : -errno;
		if (p)
			kr_unbind(p);
		kr_detach(ctx);
	}
	if (write(out, &rc, sizeof(rc)) != sizeof(rc))
		_exit(2);
	_exit(0);
}

/* A job of the same launch that tries to unbind the parent's endpoint. */
static void unbinder(int out, int in, void *arg)
{
	struct kr_ctx *ctx = kp_attach(&g_k, 10000);
	struct kr_msg_bind req = {.port = PORT};
	struct kr_msg_reply rep;
	uint32_t ep[2]; /* the endpoint's index and gen, from the parent */
	int rc = -errno;

	(void)arg;
	if (read(in, ep, sizeof(ep)) != sizeof(ep))
		_exit(3);
	req.index = ep[0];
	req.gen = ep[1];
	if (ctx)
		rc = kr_job_port_call(ctx, KR_MSG_UNBIND, &req, &rep);
	if (ctx)
		kr_detach(ctx);
	if (write(out, &rc, sizeof(rc)) != sizeof(rc))
		_exit(2);
	_exit(0);
}

static int hostile(struct kr_ctx *ctx, struct kp_child *other, struct kp_child *unb)
{
	struct kr_msg_bind req;
	struct kr_msg_reply rep;
	struct kr_mr *mr;
	struct kr_mr_key key;
	struct kr_port *p;
	uint32_t ep[2];
	uint8_t *t;
	int rc;

	t = kr_malloc(ctx, 4096);
	CHECK(t != NULL);
	/* no MR of the job's covers the table: the heap's own key is not one */
	req = (struct kr_msg_bind){
	    .port = 6000, .nslots = 4, .table_va = (uintptr_t)t, .table_rkey = ctx->heap_rkey};
	CHECK_ERR(kr_job_port_call(ctx, KR_MSG_BIND, &req, &rep), -EINVAL);
	mr = kr_reg_mr(ctx, t, 128, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_ATOMIC);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	req = (struct kr_msg_bind){.port = 6000,
				   .nslots = 100,
				   .table_va = (uintptr_t)t,
				   .table_rkey = key.rkey}; /* 64 + 1600 bytes: past the MR */
	CHECK_ERR(kr_job_port_call(ctx, KR_MSG_BIND, &req, &rep), -EINVAL);
	req.nslots = 4;
	req.table_va = (uintptr_t)t + 4; /* misaligned */
	CHECK_ERR(kr_job_port_call(ctx, KR_MSG_BIND, &req, &rep), -EINVAL);
	req = (struct kr_msg_bind){
	    .port = 0, .nslots = 4, .table_va = (uintptr_t)t, .table_rkey = key.rkey};
	CHECK_ERR(kr_job_port_call(ctx, KR_MSG_BIND, &req, &rep), -EINVAL);
	req.port = 6000;
	req.rsvd = 1;
	CHECK_ERR(kr_job_port_call(ctx, KR_MSG_BIND, &req, &rep), -EINVAL);
	req.rsvd = 0;
	CHECK_OK(kr_job_port_call(ctx, KR_MSG_BIND, &req, &rep)); /* and now it is right */
	ep[0] = rep.index;
	ep[1] = rep.gen;
	req = (struct kr_msg_bind){.port = 6000, .index = ep[0], .gen = ep[1] + 1};
	CHECK_ERR(kr_job_port_call(ctx, KR_MSG_UNBIND, &req, &rep), -EINVAL); /* stale gen */
	req.gen = ep[1];
	req.index = 99;
	CHECK_ERR(kr_job_port_call(ctx, KR_MSG_UNBIND, &req, &rep), -EINVAL);
	req.index = ep[0];
	req.port = 6001;
	CHECK_ERR(kr_job_port_call(ctx, KR_MSG_UNBIND, &req, &rep), -EINVAL);
	req.port = 6000;
	CHECK_OK(kr_job_port_call(ctx, KR_MSG_UNBIND, &req, &rep));
	CHECK_OK(kr_dereg_mr(mr));
	kr_free(ctx, t);

	/* the port another launch's job holds: its own endpoint; and another job's endpoint */
	p = kr_bind(ctx, PORT, NULL);
	CHECK(p != NULL);
	CHECK(kr_bind(ctx, PORT, NULL) == NULL && errno == EADDRINUSE); /* our launch's twice */
	CHECK_OK(kp_child_run(other, "g", 1, &rc, sizeof(rc)));
	CHECK_OK(rc); /* ports belong to a launch */
	{
		struct kr_zone_ep d;
		uint32_t idx;

		CHECK_OK(kr_job_port_find(ctx, PORT, &d, &idx));
		ep[0] = idx;
		ep[1] = d.gen;
	}
	CHECK_OK(kp_child_run(unb, ep, sizeof(ep), &rc, sizeof(rc)));
	CHECK_ERR(rc, -EINVAL);
	CHECK_OK(kr_unbind(p)); /* still the parent's */
	return 0;
}

int main(int argc, char **argv)
{
	const char *args[] = {"--tenants", "2", "--dcis", "8", NULL};
	struct kp_child snd[SENDERS], other, unb;
	struct kr_ctx *ctx;

	if (argc > 1)
		g_n = (uint32_t)strtoul(argv[1], NULL, 0);
	signal(SIGPIPE, SIG_IGN);
	kp_require_hugepages(32);
	kp_keeper_init(&g_k);
	CHECK_OK(kp_keeper_start(&g_k, args));
	for (uint32_t i = 0; i < SENDERS; i++)
		snd[i] = kp_spawn(sender, (void *)(uintptr_t)i);
	other = kp_spawn(other_launch, NULL);
	unb = kp_spawn(unbinder, NULL);
	ctx = kp_attach(&g_k, 5000);
	CHECK(ctx != NULL);
	CHECK_OK(hostile(ctx, &other, &unb));
	CHECK_OK(flood(ctx, snd));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&g_k, SIGTERM), 0);
	kp_keeper_fini(&g_k);
	printf("PASS: test_send_jobs\n");
	return 0;
}
