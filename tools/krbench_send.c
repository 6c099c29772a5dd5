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
 *
 * --peer: the ports are on node 2 of two keepers started here (sim hosts
 * over UDP loopback, node 1 the MetaServer), where an echo job sends every
 * message back to the same port number on node 1, where this job takes it:
 * a ping-pong is then two round trips (one-way = a quarter), and the rate
 * counts messages that came back.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <krcore/krcore.h>

#include "krbench.h"
#include "job/job.h"
#include "keeper/keeper.h"
#include "job/job.h"
#include "keeper/meta/meta.h"
#include "job/virtqp/virtqp.h"

#define KB_SD_BUFS 64  /* receive buffers per port */
#define KB_SD_SRC  128 /* messages being sent: sd_send keeps no more in flight */
#define KB_SD_PORT 7100

/*
 * One way to send: ports and vQPs, or the raw DCI and the ports' queues
 * directly. Messages go to node's ports rport0, rport0 + 1 and are taken on
 * our own ports[] (locally: the same ports).
 */
struct sd_way {
	bool raw;
	struct kr_port *port[2];    /* ours, receiving */
	struct kr_vqp *v[2];	    /* vQP mode: to the two target ports */
	struct kb_rd_raw dci;	    /* raw mode: the leased DCI */
	struct kr_devx_dc_av av[2]; /* raw mode: the two target ports' DCTs */
	uint8_t *buf[2];	    /* KB_SD_BUFS receive buffers of each port */
	uint8_t *src;		    /* KB_SD_SRC messages: one per send in flight */
	uint64_t posted, reaped;    /* sends, and their completions taken */
	uint32_t len;
	bool yield; /* --peer: two jobs and two sim NICs share this machine's cores */
};

/* Nothing came: on an oversubscribed machine let the sim's NIC threads run (both paths alike). */
static inline void sd_idle(const struct sd_way *w)
{
	if (w->yield)
		sched_yield();
}

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

/*
 * Send seq to side s: 0, -EAGAIN (no credit or queue room, or KB_SD_SRC
 * sends not complete), -errno. A source slot is stamped again only once the
 * send that used it completed: the device reads it at (re)transmission, so
 * a raw DCI with no flow control retrying an RNR NAK would otherwise carry a
 * message KB_SD_SRC later (what an echo with a deep queue did, #47).
 */
static int sd_send(struct sd_way *w, int s, uint64_t seq)
{
	uint8_t *m = w->src + (size_t)(seq % KB_SD_SRC) * w->len;
	int rc;

	if (w->posted >= w->reaped + KB_SD_SRC) /* (a case may reap the last one's) */
		return -EAGAIN;
	sd_stamp(m, w->len, seq);
	if (!w->raw) {
		rc = kr_post_send(w->v[s], m, w->len, seq, 0);
		w->posted += !rc;
		return rc;
	}
	{
		struct kr_devx_sge sge = {
		    .addr = (uintptr_t)m, .length = w->len, .lkey = w->dci.lkey};
		struct kr_devx_wr wr = {.wr_id = seq,
					.opcode = KR_WR_SEND,
					.flags = KR_WR_SIGNALED,
					.sge = &sge,
					.num_sge = 1,
					.av = &w->av[s]};
		rc = kr_devx_qp_post_send(w->dci.qp, &wr);
		if (!rc) {
			kr_devx_qp_ring(w->dci.qp);
			w->posted++;
		}
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
		w->reaped += (uint64_t)got;
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
		w->reaped += (uint64_t)n;
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
		sd_idle(w);
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
		sd_idle(w);
	}
}

/* legs: one-way trips in one ping-pong (2 here, 4 through a peer's echo) */
static int sd_run(struct sd_way *w, int iters, int legs, double *lat, struct kb_sd_res *res)
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
		lat[i] = (kb_now_us() - t0) / legs;
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
		if (!rc)
			sd_idle(w);
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

/* Bind ports port0, port0 + 1 (raw: used without their library side) and post their buffers. */
static int sd_bind(struct kr_ctx *ctx, struct sd_way *w, bool raw, uint32_t len,
		   const struct kb_rd_raw *dci, uint32_t port0)
{
	struct kr_bind_opts bo = {.senders = 2, .window = KB_SD_BUFS};

	memset(w, 0, sizeof(*w));
	w->raw = raw;
	w->len = len;
	w->src = kr_malloc(ctx, (size_t)KB_SD_SRC * len);
	if (!w->src)
		return -ENOMEM;
	if (raw)
		w->dci = *dci;
	for (int s = 0; s < 2; s++) {
		w->buf[s] = kr_malloc(ctx, (size_t)KB_SD_BUFS * len);
		w->port[s] = w->buf[s] ? kr_bind(ctx, port0 + (uint32_t)s, &bo) : NULL;
		if (!w->port[s])
			return -errno;
		for (uint32_t i = 0; i < KB_SD_BUFS; i++)
			if (sd_post_recv(w, s, i))
				return -EIO;
	}
	return 0;
}

/* The DC address of node's port (raw sends): this node's zone, else its MetaServer row. */
static int sd_port_av(struct kr_ctx *ctx, uint32_t node, uint32_t port, struct kr_devx_dc_av *av)
{
	struct kr_dct_port_rec prec;
	struct kr_dct_rec rec;
	struct kr_zone_ep ep;
	uint32_t idx;
	int rc;

	if (node == KR_NODE_SELF) {
		rc = kr_job_port_find(ctx, port, &ep, &idx);
		if (!rc)
			rc = kr_job_tenant_av(ctx, av);
		if (rc)
			return rc;
		av->dctn = ep.dctn;
		av->dc_key = kr_port_dc_key(ctx->launch.dc_key, port, ep.gen); /* the binding's */
		kr_devx_dc_av_path(av, &ctx->zone->port, &ctx->zone->port.addr, ep.dctn, ep.dctn);
		return 0;
	}
	rc = kr_dct_resolve_port(ctx, node, port, &rec, &prec);
	if (rc)
		return rc;
	memset(av, 0, sizeof(*av));
	av->dctn = prec.dctn;
	av->dc_key = kr_port_dc_key(ctx->launch.dc_key, port, prec.gen);
	kr_devx_dc_av_path(av, &ctx->zone->port, &rec.addr, ctx->zone->dctn, prec.dctn);
	return 0;
}

/*
 * Another node's port may take a moment to be published (ECONNREFUSED), and
 * our launch's record there until the job on that node has attached (ENOENT):
 * both are asked again, 10 s at most.
 */
static bool sd_not_yet(int rc, uint32_t node)
{
	return rc == -ECONNREFUSED || (rc == -ENOENT && node != KR_NODE_SELF);
}

/* Aim w at node's ports rport0, rport0 + 1. */
static int sd_connect(struct kr_ctx *ctx, struct sd_way *w, uint32_t node, uint32_t rport0)
{
	struct kr_connect_opts co = {.credits = 4 * KB_SD_WINDOW};

	for (int s = 0; s < 2; s++) {
		int rc = -ECONNREFUSED;

		co.port = rport0 + (uint32_t)s;
		for (double t0 = kb_now_us(); sd_not_yet(rc, node) && kb_now_us() - t0 < 10e6;) {
			if (w->raw) {
				rc = sd_port_av(ctx, node, co.port, &w->av[s]);
			} else {
				w->v[s] = kr_connect(ctx, node, &co);
				rc = w->v[s] ? 0 : -errno;
			}
			if (sd_not_yet(rc, node))
				usleep(10000);
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* The echo of one message in buffer b of port s: back to the other node's port s. */
static int sd_bounce(struct sd_way *w, int s, uint32_t b, int status)
{
	uint64_t seq;
	int rc;

	if (status != KR_WC_SUCCESS)
		return -EIO;
	memcpy(&seq, w->buf[s] + (size_t)b * w->len, 8);
	if (sd_post_recv(w, s, b))
		return -EIO;
	while ((rc = sd_send(w, s, seq)) == -EAGAIN) {
		/* waiting for the other side's credits: keep granting ours meanwhile */
		for (int q = 0; q < 2 && !w->raw; q++) {
			struct kr_wc none;

			kr_poll_recv(w->port[q], &none, 0);
		}
		if (sd_reap_sends(w) < 0)
			return -EIO;
		sd_idle(w);
	}
	return rc;
}

/* One pass of the peer's echo over both ports. 0 or -errno. */
static int sd_echo(struct sd_way *w)
{
	int got = 0;

	for (int s = 0; s < 2; s++) {
		int n, rc = 0;

		if (!w->raw) {
			struct kr_wc wc[16];

			n = kr_poll_recv(w->port[s], wc, 16);
			for (int i = 0; i < n && !rc; i++)
				rc = sd_bounce(w, s, (uint32_t)wc[i].wr_id, (int)wc[i].status);
		} else {
			struct kr_devx_wc wc[16];

			n = kr_devx_cq_poll(&w->port[s]->cq, wc, 16);
			for (int i = 0; i < n && !rc; i++)
				rc = sd_bounce(w, s, (uint32_t)wc[i].wr_id, wc[i].status);
		}
		if (n < 0 || rc)
			return n < 0 ? n : rc;
		got += n;
		if (sd_reap_sends(w) < 0)
			return -EIO;
	}
	if (!got)
		sd_idle(w);
	return 0;
}

/* kb_sd_measure() - see krbench.h. */
int kb_sd_measure(struct kr_ctx *ctx, const struct kb_sd_case *c, const struct kb_rd_raw *dci,
		  int iters, double *lat, struct kb_sd_res *res)
{
	struct sd_way w;
	int rc = sd_bind(ctx, &w, c->raw, c->len, dci, c->port0);

	w.yield = c->node != KR_NODE_SELF;
	if (!rc)
		rc = sd_connect(ctx, &w, c->node, c->rport0);
	if (!rc)
		rc = sd_run(&w, iters, c->node == KR_NODE_SELF ? 2 : 4, lat, res);
	sd_teardown(ctx, &w);
	return rc;
}

/* kb_sd_echo() - see krbench.h. */
int kb_sd_echo(struct kr_ctx *ctx, const struct kb_sd_case *c, const struct kb_rd_raw *dci,
	       int stop_fd)
{
	struct pollfd pfd = {.fd = stop_fd, .events = POLLIN};
	struct sd_way w;
	int rc = sd_bind(ctx, &w, c->raw, c->len, dci, c->port0);
	uint32_t spins = 0;

	w.yield = true;
	if (!rc)
		rc = sd_connect(ctx, &w, c->node, c->rport0);
	while (!rc && (++spins % 1024 || poll(&pfd, 1, 0) == 0))
		rc = sd_echo(&w);
	sd_teardown(ctx, &w);
	return rc;
}

/* kb_sd_report() - see krbench.h. */
void kb_sd_report(const char *what, int iters, bool json, const struct kb_sd_res *rv,
		  const struct kb_sd_res *rr)
{
	if (json) {
		printf("{\"bench\": \"%s\", \"iters\": %d, \"window\": %d, \"bytes\": 64, "
		       "\"p50_us\": %.2f, \"raw_p50_us\": %.2f, \"msg_rate\": %.0f, "
		       "\"raw_msg_rate\": %.0f, \"rate_ratio\": %.3f, \"latency_ratio\": %.3f, "
		       "\"sizes\": [",
		       what, iters, KB_SD_WINDOW, rv[0].p50, rr[0].p50, rv[0].rate, rr[0].rate,
		       rv[0].rate / rr[0].rate, rv[0].p50 / rr[0].p50);
		for (int z = 0; z < 2; z++)
			printf("%s{\"bytes\": %u, \"p50_us\": %.2f, \"p99_us\": %.2f, "
			       "\"raw_p50_us\": %.2f, \"raw_p99_us\": %.2f, \"msg_rate\": %.0f, "
			       "\"raw_msg_rate\": %.0f, \"rate_ratio\": %.3f, \"latency_ratio\": "
			       "%.3f}",
			       z ? ", " : "", kb_sd_sizes[z], rv[z].p50, rv[z].p99, rr[z].p50,
			       rr[z].p99, rv[z].rate, rr[z].rate, rv[z].rate / rr[z].rate,
			       rv[z].p50 / rr[z].p50);
		printf("]}\n");
		return;
	}
	printf("SEND %s, %d iterations (rate: %d in flight), median of %d runs\n",
	       strcmp(what, "send") ? "to a port of node 2 and back" : "to a port on this node",
	       iters, KB_SD_WINDOW, KB_SD_ROUNDS);
	printf("%-6s %-8s %10s %10s %14s %12s %12s\n", "bytes", "path", "p50 us", "p99 us",
	       "msgs/s", "rate ratio", "lat ratio");
	for (int z = 0; z < 2; z++) {
		printf("%-6u %-8s %10.2f %10.2f %14.0f %12.3f %12.3f\n", kb_sd_sizes[z], "vqp",
		       rv[z].p50, rv[z].p99, rv[z].rate, rv[z].rate / rr[z].rate,
		       rv[z].p50 / rr[z].p50);
		printf("%-6u %-8s %10.2f %10.2f %14.0f\n", kb_sd_sizes[z], "raw", rr[z].p50,
		       rr[z].p99, rr[z].rate);
	}
}

/* kb_sd_median() - see krbench.h. */
void kb_sd_median(const struct kb_sd_res *r, struct kb_sd_res *out)
{
	double v[3][KB_SD_ROUNDS];

	for (int k = 0; k < KB_SD_ROUNDS; k++) {
		v[0][k] = r[k].p50;
		v[1][k] = r[k].p99;
		v[2][k] = r[k].rate;
	}
	out->p50 = kb_median(v[0], KB_SD_ROUNDS);
	out->p99 = kb_median(v[1], KB_SD_ROUNDS);
	out->rate = kb_median(v[2], KB_SD_ROUNDS);
}

/* kb_sd_lease_dci() - see krbench.h. */
int kb_sd_lease_dci(struct kr_ctx *ctx, struct kb_rd_raw *dci, struct kr_lease *l)
{
	memset(dci, 0, sizeof(*dci));
	dci->lkey = kr_job_heap_lkey(ctx);
	if (kr_lease_alloc(ctx, KR_LEASE_DCI, l) || kr_job_dci_qp(ctx, l, &dci->qp, &dci->cq)) {
		fprintf(stderr, "krbench: raw DCI lease failed\n");
		return -EIO;
	}
	return 0;
}

const uint32_t kb_sd_sizes[2] = {64, 4096};

int kb_bench_send(struct kr_ctx *ctx, int iters, bool json)
{
	struct kb_sd_res rv[2], rr[2];
	struct kb_rd_raw dci;
	struct kr_lease l;
	double *lat = calloc((size_t)iters, sizeof(*lat));
	int rc = 0;

	if (!lat || kb_sd_lease_dci(ctx, &dci, &l)) {
		free(lat);
		return 1;
	}
	/* vQP and raw alternate, KB_SD_ROUNDS times each: the median of each is reported */
	for (int z = 0; z < 2 && !rc; z++) {
		struct kb_sd_res r[2][KB_SD_ROUNDS];

		for (int k = 0; k < KB_SD_ROUNDS && !rc; k++)
			for (int raw = 0; raw < 2 && !rc; raw++) {
				uint32_t p0 = KB_SD_PORT + 10 * (uint32_t)(2 * z + raw);
				struct kb_sd_case c = {.node = KR_NODE_SELF,
						       .raw = raw,
						       .len = kb_sd_sizes[z],
						       .port0 = p0,
						       .rport0 = p0};

				rc = kb_sd_measure(ctx, &c, &dci, iters, lat, &r[raw][k]);
				if (rc)
					fprintf(stderr, "krbench: send %u B %s: %s\n", c.len,
						raw ? "raw" : "vqp", strerror(-rc));
			}
		if (!rc) {
			kb_sd_median(r[0], &rv[z]);
			kb_sd_median(r[1], &rr[z]);
		}
	}
	kr_lease_free(ctx, &l);
	free(lat);
	if (rc)
		return 1;
	kb_sd_report("send", iters, json, rv, rr);
	return 0;
}
