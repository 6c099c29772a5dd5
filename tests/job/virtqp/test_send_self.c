/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two-sided messages inside one job: it binds a port and connects to it
 * (KR_NODE_SELF). Checks the payload, imm, the sender's slot and who holds
 * it, inline SENDs from the stack, per-sender order over two vQPs, credits
 * (a receiver that posts nothing stops its senders with -EAGAIN and loses
 * nothing), a SEND longer than its buffer (an error on both sides, the port
 * and the other sender go on), and the bad inputs of bind, connect and post:
 * each a clear errno with nothing posted. Many senders: a grant pass looks
 * at the senders that may lack credits, not at all of them, and a short
 * supply is shared.
 */
#include <signal.h>
#include <string.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define PORT  4711
#define BUFS  32
#define BUFSZ 256

/* Poll port until n messages came or 10 s passed; returns how many. */
static int recv_wait(struct kr_port *p, struct kr_wc *wc, int n)
{
	int got = 0;

	for (double t0 = kp_now_ms(); got < n && kp_now_ms() - t0 < 10000;) {
		int r = kr_poll_recv(p, wc + got, n - got);

		if (r < 0)
			return r;
		got += r;
	}
	return got;
}

/* Send until it is accepted (credits come as the receiver polls), polling both sides. */
static int send_retry(struct kr_vqp *v, struct kr_port *p, const void *buf, uint32_t len,
		      uint64_t wr_id, struct kr_wc *rwc, int *rgot)
{
	struct kr_wc swc[8];

	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 10000;) {
		int rc = kr_post_send(v, buf, len, wr_id, 0), r;

		if (rc != -EAGAIN)
			return rc;
		r = kr_poll_recv(p, rwc + *rgot, 1);
		if (r < 0)
			return r;
		*rgot += r;
		if (kr_poll(v, swc, 8) < 0)
			return -EIO;
	}
	fprintf(stderr, "send_retry: no credit in 10 s (granted %u, sent %u, vQP state %u)\n",
		v->snd->granted, v->snd->sent, v->state);
	return -ETIMEDOUT;
}

static int bad_inputs(struct kr_ctx *ctx, struct kr_port *p, uint8_t *buf)
{
	struct kr_bind_opts bo = {.senders = 2000};
	struct kr_connect_opts co = {.port = 4712};
	struct kr_port_sender ps;
	uint8_t stack[8];
	struct kr_wc wc;

	errno = 0;
	CHECK(kr_bind(ctx, 0, NULL) == NULL && errno == EINVAL);
	CHECK(kr_bind(ctx, 65536, NULL) == NULL && errno == EINVAL);
	CHECK(kr_bind(NULL, 5, NULL) == NULL && errno == EINVAL);
	CHECK(kr_bind(ctx, 5, &bo) == NULL && errno == EINVAL);
	bo = (struct kr_bind_opts){.flags = 1};
	CHECK(kr_bind(ctx, 5, &bo) == NULL && errno == EINVAL);
	CHECK(kr_bind(ctx, PORT, NULL) == NULL && errno == EADDRINUSE); /* double bind */
	CHECK(kr_connect(ctx, KR_NODE_SELF, &co) == NULL && errno == ECONNREFUSED); /* unbound */
	co.port = 70000;
	CHECK(kr_connect(ctx, KR_NODE_SELF, &co) == NULL && errno == EINVAL);
	co = (struct kr_connect_opts){.port = PORT};
	CHECK(kr_connect(ctx, 9999, &co) == NULL && errno == ENOENT); /* no such node */
	CHECK_ERR(kr_post_recv(p, stack, sizeof(stack), 0), -EINVAL); /* not heap memory */
	CHECK_ERR(kr_post_recv(p, buf, 0, 0), -EINVAL);
	CHECK_ERR(kr_poll_recv(p, NULL, 1), -EINVAL);
	CHECK_ERR(kr_poll_recv(NULL, &wc, 1), -EINVAL);
	CHECK_ERR(kr_poll_recv(p, &wc, -1), -EINVAL);
	CHECK_ERR(kr_port_sender(p, 100000, &ps), -EINVAL);
	CHECK_ERR(kr_port_sender(p, 0, &ps), -ENOENT); /* nobody holds it */
	CHECK_ERR(kr_unbind(NULL), -EINVAL);
	return 0;
}

static int exchange(struct kr_ctx *ctx, struct kr_port *p, uint8_t *bufs)
{
	struct kr_connect_opts co = {.port = PORT, .reply_port = 99};
	uint8_t *src = kr_malloc(ctx, 4096);
	struct kr_port_sender ps;
	struct kr_wc wc[BUFS];
	struct kr_vqp *v;
	char inl[40];
	int got = 0;

	CHECK(src != NULL);
	v = kr_connect(ctx, KR_NODE_SELF, &co);
	CHECK(v != NULL);
	CHECK(v->snd != NULL);
	for (int i = 0; i < BUFS; i++)
		CHECK_OK(kr_post_recv(p, bufs + (size_t)i * BUFSZ, BUFSZ, 1000 + i));

	/* the first send has no credit yet: the receiver admits it when it polls */
	memset(src, 0xa5, 100);
	CHECK_OK(send_retry(v, p, src, 100, 1, wc, &got));
	got += recv_wait(p, wc + got, 1 - got);
	CHECK_EQ(got, 1);
	CHECK_EQ(wc[0].status, KR_WC_SUCCESS);
	CHECK_EQ(wc[0].opcode, KR_WC_OP_RECV);
	CHECK_EQ(wc[0].byte_len, 100);
	CHECK_EQ(wc[0].wr_id, 1000);
	CHECK_EQ(wc[0].flags & KR_WC_F_IMM, 0);
	CHECK(memcmp(bufs, src, 100) == 0);
	CHECK_OK(kr_port_sender(p, wc[0].src, &ps));
	CHECK_EQ(ps.reply_port, 99);
	{
		struct kr_dct_rec self;

		CHECK_OK(kr_dct_resolve(ctx, KR_NODE_SELF, &self));
		CHECK_EQ(ps.node, self.node_id);
	}
	CHECK_OK(vq_wait_ok(v, 1));

	/* with an immediate; inline from the stack */
	CHECK_OK(kr_post_send_imm(v, src, 8, 0xbeef, 2, 0));
	memset(inl, 'x', sizeof(inl));
	CHECK_OK(kr_post_send(v, inl, sizeof(inl), 3, KR_POST_INLINE));
	memset(inl, 0, sizeof(inl));
	CHECK_ERR(kr_post_send(v, inl, KR_POST_MAX_INLINE + 1, 4, KR_POST_INLINE), -EINVAL);
	CHECK_ERR(kr_post_send_imm(v, inl, KR_SEND_MAX_INLINE + 1, 1, 4, KR_POST_INLINE), -EINVAL);
	CHECK_EQ(recv_wait(p, wc, 2), 2);
	CHECK_EQ(wc[0].wr_id, 1001);
	CHECK(wc[0].flags & KR_WC_F_IMM);
	CHECK_EQ(wc[0].imm, 0xbeef);
	CHECK_EQ(wc[0].byte_len, 8);
	CHECK_EQ(wc[1].wr_id, 1002);
	CHECK_EQ(wc[1].byte_len, sizeof(inl));
	CHECK(memcmp(bufs + 2 * BUFSZ, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", sizeof(inl)) ==
	      0);
	CHECK_OK(vq_wait_ok(v, 2));
	CHECK_OK(vq_wait_ok(v, 3));
	CHECK_OK(kr_disconnect(v));
	/* the slot is free again once the receiver has seen the release */
	CHECK_EQ(kr_poll_recv(p, wc, 1), 0);
	CHECK_ERR(kr_port_sender(p, wc[0].src, &ps), -ENOENT);
	kr_free(ctx, src);
	return 0;
}

/*
 * A SEND longer than the buffer it lands in: an error completion at the
 * receiver (that buffer) and at the sender (its vQP fails); a second sender
 * on the same thread's DCI is untouched and the port goes on.
 */
static int too_long(struct kr_ctx *ctx, struct kr_port *p, uint8_t *bufs)
{
	struct kr_connect_opts co = {.port = PORT};
	uint8_t *src = kr_malloc(ctx, 512);
	struct kr_vqp *bad, *good;
	struct kr_wc wc[4], swc;
	struct kr_vqp_attr a;
	int got = 0;

	CHECK(src != NULL);
	bad = kr_connect(ctx, KR_NODE_SELF, &co);
	CHECK(bad != NULL);
	CHECK_OK(kr_post_recv(p, bufs, 16, 2000)); /* 16 bytes: too short for what comes */
	CHECK_OK(send_retry(bad, p, src, 200, 1, wc, &got));
	got += recv_wait(p, wc + got, 1 - got);
	CHECK_EQ(got, 1);
	CHECK_EQ(wc[0].wr_id, 2000);
	CHECK_EQ(wc[0].status, KR_WC_LOC_LEN_ERR);
	CHECK_EQ(vq_wait(bad, &swc, 1), 1);
	CHECK(swc.status != KR_WC_SUCCESS);
	printf("too long: receiver %s, sender %s (errno %d)\n", kr_strerror((int)wc[0].status),
	       kr_strerror((int)swc.status), kr_wc_status_errno((int)swc.status));
	CHECK_OK(kr_vqp_query(bad, &a));
	CHECK_EQ(a.state, KR_VQP_ERR);
	CHECK_ERR(kr_post_send(bad, src, 8, 2, 0), -EIO);

	/* another sender on the same DCI and the port go on */
	good = kr_connect(ctx, KR_NODE_SELF, &co);
	CHECK(good != NULL);
	CHECK(good->dci == bad->dci);
	/* (the failed message's credit stays promised to its sender until it lets go) */
	for (int i = 0; i < 4; i++)
		CHECK_OK(kr_post_recv(p, bufs + (size_t)i * BUFSZ, BUFSZ, 2001 + (uint64_t)i));
	memset(src, 0x3c, 64);
	got = 0;
	CHECK_OK(send_retry(good, p, src, 64, 3, wc, &got));
	got += recv_wait(p, wc + got, 1 - got);
	CHECK_EQ(got, 1);
	CHECK_EQ(wc[0].status, KR_WC_SUCCESS);
	CHECK_EQ(wc[0].wr_id, 2001);
	CHECK_EQ(wc[0].byte_len, 64);
	CHECK(memcmp(bufs, src, 64) == 0);
	CHECK_OK(vq_wait_ok(good, 3));
	/* the failed sender still lets its slot go */
	CHECK_OK(kr_disconnect(bad));
	CHECK_OK(kr_disconnect(good));
	CHECK_EQ(kr_poll_recv(p, wc, 4), 0);
	for (uint32_t i = 0; i < 16; i++) {
		struct kr_port_sender ps;

		CHECK_ERR(kr_port_sender(p, i, &ps), -ENOENT);
	}
	kr_free(ctx, src);
	return 0;
}

/*
 * Credits: a receiver that posts 4 buffers and does not post more holds
 * its sender at 4 messages (-EAGAIN after, nothing posted); reposting lets
 * the rest through, in order, none lost.
 */
static int back_pressure(struct kr_ctx *ctx, struct kr_port *p, uint8_t *bufs)
{
	struct kr_connect_opts co = {.port = PORT};
	uint32_t *src = kr_malloc(ctx, 64 * sizeof(uint32_t));
	uint32_t sent = 0, recvd = 0, eagain = 0;
	struct kr_wc wc[8], swc[8];
	struct kr_vqp *v;

	CHECK(src != NULL);
	v = kr_connect(ctx, KR_NODE_SELF, &co);
	CHECK(v != NULL);
	for (int i = 0; i < 4; i++)
		CHECK_OK(kr_post_recv(p, bufs + (size_t)i * BUFSZ, BUFSZ, (uint64_t)i));
	/* admit and grant: up to 4 credits, never more than the buffers posted */
	for (double t0 = kp_now_ms(); sent < 4 && kp_now_ms() - t0 < 10000;) {
		src[sent] = sent;
		if (!kr_post_send(v, &src[sent], 4, sent, 0))
			sent++;
		CHECK(kr_poll_recv(p, wc, 0) == 0);
		kr_poll(v, swc, 8);
	}
	CHECK_EQ(sent, 4);
	for (int i = 0; i < 1000; i++) {
		src[4] = 4;
		if (kr_post_send(v, &src[4], 4, 4, 0) == -EAGAIN)
			eagain++;
		CHECK(kr_poll(v, swc, 8) >= 0);
	}
	CHECK_EQ(eagain, 1000);
	/* take them, post again: the rest flows */
	while (recvd < 64) {
		int r = kr_poll_recv(p, wc, 8);

		CHECK(r >= 0);
		for (int i = 0; i < r; i++) {
			uint32_t slot = (uint32_t)wc[i].wr_id;

			CHECK_EQ(wc[i].status, KR_WC_SUCCESS);
			CHECK_EQ(*(uint32_t *)(bufs + (size_t)slot * BUFSZ), recvd);
			recvd++;
			CHECK_OK(kr_post_recv(p, bufs + (size_t)slot * BUFSZ, BUFSZ, slot));
		}
		if (sent < 64) {
			src[sent] = sent;
			if (!kr_post_send(v, &src[sent], 4, sent, 0))
				sent++;
		}
		CHECK(kr_poll(v, swc, 8) >= 0);
	}
	CHECK_EQ(sent, 64);
	CHECK_OK(kr_disconnect(v));
	/* its 4 unused buffers are promised to nobody now */
	CHECK_EQ(kr_poll_recv(p, wc, 8), 0);
	kr_free(ctx, src);
	return 0;
}

/*
 * Many senders on one port: 16 vQPs admitted, then one of them streams while
 * the others idle. A grant pass looks only at the senders that may lack
 * credits (admitted, or a message of theirs came since), not at every
 * admitted one per message. Then a short supply (16 buffers for 16 senders
 * of window 2: one credit each, 4 messages each) is shared: every message
 * arrives, in its sender's order. (Credits granted are not taken back: with
 * fewer buffers than senders, senders that stopped would hold them all.)
 */
#define MANY	   16
#define MANY_MSGS  200
#define SHORT_BUFS MANY
#define SHORT_EACH 4

static int many_senders(struct kr_ctx *ctx, uint8_t *bufs)
{
	struct kr_bind_opts bo = {.senders = MANY, .window = 2}; /* 32 buffers: 2 each */
	struct kr_connect_opts co = {.port = PORT};
	uint32_t *src = kr_malloc(ctx, MANY * sizeof(uint32_t));
	uint32_t next[MANY] = {0}, seen[MANY] = {0}, of_slot[MANY], recvd = 0;
	struct kr_vqp *v[MANY];
	struct kr_wc wc[8], swc[8];
	uint64_t looks;
	struct kr_port *p = kr_bind(ctx, PORT, &bo);
	int got = 0;

	CHECK(src != NULL);
	CHECK(p != NULL);
	for (int i = 0; i < BUFS; i++)
		CHECK_OK(kr_post_recv(p, bufs + (size_t)i * BUFSZ, BUFSZ, (uint64_t)i));
	for (uint32_t j = 0; j < MANY; j++) {
		v[j] = kr_connect(ctx, KR_NODE_SELF, &co);
		CHECK(v[j] != NULL);
		CHECK(v[j]->snd->slot < MANY);
		of_slot[v[j]->snd->slot] = j;
		src[j] = j;
		got = 0;
		CHECK_OK(send_retry(v[j], p, &src[j], 4, j, wc, &got));
		got += recv_wait(p, wc + got, 1 - got);
		CHECK_EQ(got, 1);
		CHECK_EQ(wc[0].status, KR_WC_SUCCESS);
		CHECK_OK(kr_post_recv(p, bufs + wc[0].wr_id * BUFSZ, BUFSZ, wc[0].wr_id));
		CHECK_OK(vq_wait_ok(v[j], j));
	}

	/* one streams, fifteen idle: a grant pass per message, each looking at one sender */
	looks = p->grant_looks;
	for (uint32_t m = 0; m < MANY_MSGS; m++) {
		got = 0;
		CHECK_OK(send_retry(v[0], p, &src[0], 4, m, wc, &got));
		got += recv_wait(p, wc + got, 1 - got);
		CHECK_EQ(got, 1);
		CHECK_EQ(wc[0].status, KR_WC_SUCCESS);
		CHECK_OK(kr_post_recv(p, bufs + wc[0].wr_id * BUFSZ, BUFSZ, wc[0].wr_id));
		CHECK(kr_poll(v[0], swc, 8) >= 0);
	}
	looks = p->grant_looks - looks;
	printf("many senders: %u messages of one of %u, %llu senders looked at by grant passes\n",
	       MANY_MSGS, MANY, (unsigned long long)looks);
	CHECK(looks <= 2 * MANY_MSGS + 2 * MANY);
	CHECK_OK(vq_wait_ok(v[0], MANY_MSGS - 1));
	CHECK_OK(kr_unbind(p));

	/* a short supply, shared */
	p = kr_bind(ctx, PORT, &bo);
	CHECK(p != NULL);
	for (uint32_t j = 0; j < MANY; j++) {
		CHECK_OK(kr_disconnect(v[j]));
		v[j] = kr_connect(ctx, KR_NODE_SELF, &co);
		CHECK(v[j] != NULL);
		CHECK(v[j]->snd->slot < MANY);
		of_slot[v[j]->snd->slot] = j;
	}
	for (int i = 0; i < SHORT_BUFS; i++)
		CHECK_OK(kr_post_recv(p, bufs + (size_t)i * BUFSZ, BUFSZ, (uint64_t)i));
	for (double t0 = kp_now_ms(); recvd < MANY * SHORT_EACH && kp_now_ms() - t0 < 10000;) {
		int r;

		for (uint32_t j = 0; j < MANY; j++) {
			if (next[j] < SHORT_EACH) {
				src[j] = j << 16 | next[j];
				if (!kr_post_send(v[j], &src[j], 4, next[j], KR_POST_INLINE))
					next[j]++;
			}
			CHECK(kr_poll(v[j], swc, 8) >= 0);
		}
		r = kr_poll_recv(p, wc, 8);
		CHECK(r >= 0);
		for (int i = 0; i < r; i++) {
			uint32_t word = *(uint32_t *)(bufs + wc[i].wr_id * BUFSZ), j;

			CHECK_EQ(wc[i].status, KR_WC_SUCCESS);
			CHECK(wc[i].src < MANY);
			j = of_slot[wc[i].src];
			CHECK_EQ(word, j << 16 | seen[j]);
			seen[j]++;
			recvd++;
			CHECK_OK(kr_post_recv(p, bufs + wc[i].wr_id * BUFSZ, BUFSZ, wc[i].wr_id));
		}
	}
	CHECK_EQ(recvd, MANY * SHORT_EACH);
	for (uint32_t j = 0; j < MANY; j++) {
		CHECK_EQ(seen[j], SHORT_EACH);
		CHECK_OK(kr_disconnect(v[j]));
	}
	CHECK_EQ(kr_poll_recv(p, wc, 8), 0);
	CHECK_OK(kr_unbind(p));
	kr_free(ctx, src);
	return 0;
}

int main(void)
{
	const char *args[] = {"--tenants", "1", "--dcis", "4", NULL};
	struct kp_keeper k;
	struct kr_ctx *ctx;
	struct kr_port *p;
	uint8_t *bufs;

	signal(SIGPIPE, SIG_IGN);
	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	bufs = kr_malloc(ctx, (size_t)BUFS * BUFSZ);
	CHECK(bufs != NULL);
	p = kr_bind(ctx, PORT, NULL);
	CHECK(p != NULL);
	CHECK_OK(bad_inputs(ctx, p, bufs));
	CHECK_OK(exchange(ctx, p, bufs));
	CHECK_OK(kr_unbind(p));
	p = kr_bind(ctx, PORT, NULL); /* a fresh port: no buffers left from above */
	CHECK(p != NULL);
	CHECK_OK(too_long(ctx, p, bufs));
	CHECK_OK(kr_unbind(p));
	p = kr_bind(ctx, PORT, NULL);
	CHECK(p != NULL);
	CHECK_OK(back_pressure(ctx, p, bufs));
	CHECK_OK(kr_unbind(p));
	CHECK_OK(many_senders(ctx, bufs));
	/* the port is free again: a new binding gets a new DC target */
	p = kr_bind(ctx, PORT, NULL);
	CHECK(p != NULL);
	CHECK_OK(kr_unbind(p));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	printf("PASS: test_send_self\n");
	return 0;
}
