/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench send: two-sided messages at 64 B and 4 KiB, through ports and vQPs
 * (kr_post_send, kr_poll_recv, kr_post_recv: header, credits, checks) and
 * through a raw DCI -> DCT pair (devx SEND into the same kind of endpoint,
 * its CQ polled and its SRQ refilled directly: no header, no credits), in
 * the same run, by the same thread.
 *   ping-pong: a message to port A, received, a message to port B,
 *              received; one-way latency = half the round trip (p50, p99);
 *   rate:      a stream to one port with KB_SD_WINDOW in flight, each
 *              buffer posted again as its message is taken (messages/s).
 * The two paths alternate, three runs each; each figure is the median.
 * Every received message's first and last 8 bytes are checked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <krcore/krcore.h>

#include "krbench.h"
#include "pool.h"
#include "virtqp/virtqp.h"

#define KB_SD_BUFS   64 /* receive buffers per port */
#define KB_SD_WINDOW 32 /* messages in flight for the rate */
#define KB_SD_PORT   7100
#define KB_SD_ROUNDS 3 /* runs of each path, alternating: this machine's noise */

/* One way to send: ports and vQPs, or the raw DCI and the ports' queues directly. */
struct sd_way {
	bool raw;
	struct kr_port *port[2];
	struct kr_vqp *v[2];  /* vQP mode: to port[0], port[1] */
	struct kb_rd_raw dci; /* raw mode: the leased DCI, av.dctn set per send */
	uint32_t dctn[2];     /* raw mode: the ports' DCTs */
	uint8_t *buf[2];      /* KB_SD_BUFS receive buffers of each port */
	uint8_t *src;	      /* KB_SD_WINDOW messages: one per send in flight */
	uint32_t len;
};

static void sd_stamp(uint8_t *m, uint32_t len, uint64_t seq)
{
	memcpy(m, &seq, 8);
	memcpy(m + len - 8, &seq, 8);
}

static bool sd_check(const uint8_t *m, uint32_t len, uint64_t seq)
{
	return !memcmp(m, &seq, 8) && !memcmp(m + len - 8, &seq, 8);
}

/* Post receive buffer i of side s. */
static int sd_post_recv(struct sd_way *w, int s, uint32_t i)
{
	uint8_t *b = w->buf[s] + (size_t)i * w->len;
	struct kr_port *p = w->port[s];

	if (!w->raw)
		return kr_post_recv(p, b, w->len, i);
	{
		struct kr_devx_sge sge = {
		    .addr = (uintptr_t)b, .length = w->len, .lkey = w->dci.lkey};

		return kr_devx_srq_post_recv(&p->srq, &sge, 1, i);
	}
}

/* Send seq to side s: 0, -EAGAIN (no credit or queue room), -errno. */
static int sd_send(struct sd_way *w, int s, uint64_t seq)
{
	uint8_t *m = w->src + (size_t)(seq % KB_SD_WINDOW) * w->len;

	sd_stamp(m, w->len, seq);
	if (!w->raw)
		return kr_post_send(w->v[s], m, w->len, seq, 0);
	{
		struct kr_devx_sge sge = {
		    .addr = (uintptr_t)m, .length = w->len, .lkey = w->dci.lkey};
		struct kr_devx_wr wr = {.wr_id = seq,
					.opcode = KR_WR_SEND,
					.flags = KR_WR_SIGNALED,
					.sge = &sge,
					.num_sge = 1,
					.av = &w->dci.av};
		int rc;

		w->dci.av.dctn = w->dctn[s];
		rc = kr_devx_qp_post_send(w->dci.qp, &wr);
		if (!rc)
			kr_devx_qp_ring(w->dci.qp);
		return rc;
	}
}

/* Sender completions taken (each must be a success): how many, or -errno. */
static int sd_reap_sends(struct sd_way *w)
{
	int got = 0, n;

	if (!w->raw) {
		struct kr_wc wc[16];

		for (int s = 0; s < 2; s++) {
			n = kr_poll(w->v[s], wc, 16);
			if (n < 0)
				return n;
			for (int i = 0; i < n; i++)
				if (wc[i].status != KR_WC_SUCCESS)
					return -EIO;
			got += n;
		}
		return got;
	}
	{
		struct kr_devx_wc wc[16];

		n = kr_devx_cq_poll(w->dci.cq, wc, 16);
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++)
			if (wc[i].status != KR_WC_SUCCESS)
				return -EIO;
		return n;
	}
}

/* One received message in buffer b: checked against *seq (advanced), the buffer posted again. */
static int sd_take(struct sd_way *w, int s, uint32_t b, int status, uint32_t byte_len,
		   uint64_t *seq)
{
	if (status != KR_WC_SUCCESS || byte_len != w->len ||
	    !sd_check(w->buf[s] + (size_t)b * w->len, w->len, (*seq)++))
		return -EIO;
	return sd_post_recv(w, s, b) ? -EIO : 0;
}

/* Messages received on side s, each taken (sd_take): how many, or -errno. */
static int sd_recv(struct sd_way *w, int s, uint64_t *seq)
{
	int n;

	if (!w->raw) {
		struct kr_wc wc[16];

		n = kr_poll_recv(w->port[s], wc, 16);
		for (int i = 0; i < n; i++)
			if (sd_take(w, s, (uint32_t)wc[i].wr_id, (int)wc[i].status, wc[i].byte_len,
				    seq))
				return -EIO;
		return n;
	}
	{
		struct kr_devx_wc wc[16];

		n = kr_devx_cq_poll(&w->port[s]->cq, wc, 16);
		for (int i = 0; i < n; i++)
			if (sd_take(w, s, (uint32_t)wc[i].wr_id, wc[i].status, wc[i].byte_len, seq))
				return -EIO;
		return n;
	}
}

/* Wait for one message on side s (bounded). 0 or -errno. */
static int sd_recv_one(struct sd_way *w, int s, uint64_t *seq, double t0)
{
	for (;;) {
		int n = sd_recv(w, s, seq);

		if (n)
			return n == 1 ? 0 : (n < 0 ? n : -EIO);
		if (kb_now_us() - t0 > 10e6)
			return -ETIMEDOUT;
	}
}

/* Send seq to side s, pulling credits and reaping completions while it says -EAGAIN. */
static int sd_send_wait(struct sd_way *w, int s, uint64_t seq, double t0)
{
	for (;;) {
		int rc = sd_send(w, s, seq);

		if (rc != -EAGAIN)
			return rc;
		if (!w->raw) { /* the receiver admits and grants when it polls (n = 0 takes none) */
			struct kr_wc none;

			kr_poll_recv(w->port[s], &none, 0);
		}
		rc = sd_reap_sends(w);
		if (rc < 0)
			return rc;
		if (kb_now_us() - t0 > 10e6)
			return -ETIMEDOUT;
	}
}

struct sd_res {
	double p50, p99, rate;
};

static int sd_run(struct sd_way *w, int iters, double *lat, struct sd_res *res)
{
	uint64_t seq[2] = {0, 0}, sent = 0;
	int rc, inflight = 0;
	double t0;

	/* ping-pong: A then B, one-way = half the round trip */
	for (int i = 0; i < iters; i++) {
		t0 = kb_now_us();
		rc = sd_send_wait(w, 0, seq[0], t0);
		if (!rc)
			rc = sd_recv_one(w, 0, &seq[0], t0);
		if (!rc)
			rc = sd_send_wait(w, 1, seq[1], t0);
		if (!rc)
			rc = sd_recv_one(w, 1, &seq[1], t0);
		if (rc)
			return rc;
		lat[i] = (kb_now_us() - t0) / 2;
		rc = sd_reap_sends(w);
		if (rc < 0)
			return rc;
	}
	kb_p50_p99(lat, iters, &res->p50, &res->p99);
	/* drain what the ping-pong left in flight */
	for (t0 = kb_now_us(); kb_now_us() - t0 < 1e6 && sd_reap_sends(w) > 0;)
		;

	/* rate: a stream to side 0 */
	sent = seq[0];
	t0 = kb_now_us();
	for (uint64_t end = seq[0] + (uint64_t)iters; seq[0] < end;) {
		while (sent < end && inflight < KB_SD_WINDOW) {
			rc = sd_send(w, 0, sent);
			if (rc == -EAGAIN)
				break;
			if (rc)
				return rc;
			sent++;
			inflight++;
		}
		rc = sd_recv(w, 0, &seq[0]);
		if (rc < 0)
			return rc;
		rc = sd_reap_sends(w);
		if (rc < 0)
			return rc;
		inflight -= rc;
		if (kb_now_us() - t0 > 60e6)
			return -ETIMEDOUT;
	}
	res->rate = iters / ((kb_now_us() - t0) / 1e6);
	for (t0 = kb_now_us(); inflight > 0 && kb_now_us() - t0 < 1e6;) {
		rc = sd_reap_sends(w);
		if (rc < 0)
			return rc;
		inflight -= rc;
	}
	return 0;
}

static int sd_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Each figure's median over the rounds. */
static void sd_median(const struct sd_res *r, struct sd_res *out)
{
	double v[3][KB_SD_ROUNDS];

	for (int k = 0; k < KB_SD_ROUNDS; k++) {
		v[0][k] = r[k].p50;
		v[1][k] = r[k].p99;
		v[2][k] = r[k].rate;
	}
	for (int f = 0; f < 3; f++)
		qsort(v[f], KB_SD_ROUNDS, sizeof(double), sd_cmp);
	out->p50 = v[0][KB_SD_ROUNDS / 2];
	out->p99 = v[1][KB_SD_ROUNDS / 2];
	out->rate = v[2][KB_SD_ROUNDS / 2];
}

static void sd_teardown(struct kr_ctx *ctx, struct sd_way *w)
{
	for (int s = 0; s < 2; s++) {
		if (w->v[s])
			kr_disconnect(w->v[s]);
		if (w->port[s])
			kr_unbind(w->port[s]);
		kr_free(ctx, w->buf[s]);
	}
	kr_free(ctx, w->src);
	memset(w, 0, sizeof(*w));
}

/* Bind two ports (raw: used without their library side) and connect to them. 0 or -errno. */
static int sd_setup(struct kr_ctx *ctx, struct sd_way *w, bool raw, uint32_t len,
		    const struct kb_rd_raw *dci, uint32_t port0)
{
	struct kr_bind_opts bo = {.senders = 2, .window = KB_SD_BUFS};
	struct kr_connect_opts co = {.credits = 4 * KB_SD_WINDOW};

	memset(w, 0, sizeof(*w));
	w->raw = raw;
	w->len = len;
	w->src = kr_malloc(ctx, (size_t)KB_SD_WINDOW * len);
	if (!w->src)
		return -ENOMEM;
	if (raw)
		w->dci = *dci;
	for (int s = 0; s < 2; s++) {
		w->buf[s] = kr_malloc(ctx, (size_t)KB_SD_BUFS * len);
		w->port[s] = w->buf[s] ? kr_bind(ctx, port0 + (uint32_t)s, &bo) : NULL;
		if (!w->port[s])
			return -errno;
		w->dctn[s] = w->port[s]->dct.dctn;
		for (uint32_t i = 0; i < KB_SD_BUFS; i++)
			if (sd_post_recv(w, s, i))
				return -EIO;
		if (!raw) {
			co.port = port0 + (uint32_t)s;
			w->v[s] = kr_connect(ctx, KR_NODE_SELF, &co);
			if (!w->v[s])
				return -errno;
		}
	}
	return 0;
}

int kb_bench_send(struct kr_ctx *ctx, int iters, bool json)
{
	static const uint32_t sizes[] = {64, 4096};
	struct sd_res rv[2], rr[2];
	struct kb_rd_raw dci;
	struct sd_way w;
	struct kr_lease l;
	double *lat = calloc((size_t)iters, sizeof(*lat));
	int rc = 0;

	if (!lat)
		return 1;
	memset(&dci, 0, sizeof(dci));
	dci.lkey = kr_pool_heap_lkey(ctx);
	if (kr_lease_alloc(ctx, KR_LEASE_DCI, &l) || kr_pool_dci_qp(ctx, &l, &dci.qp, &dci.cq) ||
	    kr_pool_tenant_av(ctx, &dci.av)) {
		fprintf(stderr, "krbench: raw DCI lease failed\n");
		free(lat);
		return 1;
	}
	/* vQP and raw alternate, KB_SD_ROUNDS times each: the median of each is reported */
	for (int z = 0; z < 2 && !rc; z++) {
		struct sd_res r[2][KB_SD_ROUNDS];

		for (int k = 0; k < KB_SD_ROUNDS && !rc; k++)
			for (int raw = 0; raw < 2 && !rc; raw++) {
				rc = sd_setup(ctx, &w, raw, sizes[z], &dci,
					      KB_SD_PORT + 10 * (uint32_t)(2 * z + raw));
				if (!rc)
					rc = sd_run(&w, iters, lat, &r[raw][k]);
				sd_teardown(ctx, &w);
				if (rc)
					fprintf(stderr, "krbench: send %u B %s: %s\n", sizes[z],
						raw ? "raw" : "vqp", strerror(-rc));
			}
		if (!rc) {
			sd_median(r[0], &rv[z]);
			sd_median(r[1], &rr[z]);
		}
	}
	kr_lease_free(ctx, &l);
	free(lat);
	if (rc)
		return 1;
	if (json) {
		printf("{\"bench\": \"send\", \"iters\": %d, \"window\": %d, \"bytes\": 64, "
		       "\"p50_us\": %.2f, \"raw_p50_us\": %.2f, \"msg_rate\": %.0f, "
		       "\"raw_msg_rate\": %.0f, \"rate_ratio\": %.3f, \"latency_ratio\": %.3f, "
		       "\"sizes\": [",
		       iters, KB_SD_WINDOW, rv[0].p50, rr[0].p50, rv[0].rate, rr[0].rate,
		       rv[0].rate / rr[0].rate, rv[0].p50 / rr[0].p50);
		for (int z = 0; z < 2; z++)
			printf("%s{\"bytes\": %u, \"p50_us\": %.2f, \"p99_us\": %.2f, "
			       "\"raw_p50_us\": %.2f, \"raw_p99_us\": %.2f, \"msg_rate\": %.0f, "
			       "\"raw_msg_rate\": %.0f, \"rate_ratio\": %.3f, \"latency_ratio\": "
			       "%.3f}",
			       z ? ", " : "", sizes[z], rv[z].p50, rv[z].p99, rr[z].p50, rr[z].p99,
			       rv[z].rate, rr[z].rate, rv[z].rate / rr[z].rate,
			       rv[z].p50 / rr[z].p50);
		printf("]}\n");
		return 0;
	}
	printf(
	    "SEND to a port on this node, %d iterations (rate: %d in flight), median of %d runs\n",
	    iters, KB_SD_WINDOW, KB_SD_ROUNDS);
	printf("%-6s %-8s %10s %10s %14s %12s %12s\n", "bytes", "path", "p50 us", "p99 us",
	       "msgs/s", "rate ratio", "lat ratio");
	for (int z = 0; z < 2; z++) {
		printf("%-6u %-8s %10.2f %10.2f %14.0f %12.3f %12.3f\n", sizes[z], "vqp", rv[z].p50,
		       rv[z].p99, rv[z].rate, rv[z].rate / rr[z].rate, rv[z].p50 / rr[z].p50);
		printf("%-6u %-8s %10.2f %10.2f %14.0f\n", sizes[z], "raw", rr[z].p50, rr[z].p99,
		       rr[z].rate);
	}
	return 0;
}
