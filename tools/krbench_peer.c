/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench read --peer: 8-byte READs to another node. Two keepers on sim
 * hosts over UDP loopback (node 1 the MetaServer) and a target job on node
 * 2; from a job on node 1, in one run:
 *   vqp           kr_post_read + kr_poll on a vQP to node 2
 *   raw_dci       devx post + doorbell + CQ poll on a leased DCI addressed
 *                 at node 2's DC target (what the vQP costs above the wire)
 *   udp_pingpong  8 bytes to the target job's UDP echo and back: the floor
 *                 of a round trip between two processes over loopback,
 *                 which the sim's RoCEv2-over-UDP wire cannot beat
 * rtt_over_udp = vqp sync p50 / udp_pingpong p50.
 *
 * --promote adds, in the same run, the same vQP promoted (DC->RC, the two
 * keepers pairing an RC QP each: virtqp_promote.c):
 *   vqp_rc        kr_post_read + kr_poll, the vQP on its RC QP
 * rc_over_dc = vqp_rc async rate / vqp async rate (vqp ran with promotion off).
 * promote_ms: windowed READs with promotion on, from the first post to the
 * first completion after which the vQP runs on RC; post_p99_promoting_us:
 * the p99 of those kr_post_read calls' own time, beside post_p99_us, as many
 * calls on a second vQP to node 2 with promotion off.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "krbench.h"
#include "job/job.h"
#include "keeper/keeper.h"
#include "job/virtqp/virtqp.h"

#define KB_UDP_WARMUP 100

struct peer_run {
	struct kr_ctx *ctx;
	struct kb_target tg;
	struct kb_rd_res vqp, raw, rc;
	double rate_ratio; /* vqp / raw: the median of the rounds' own ratios */
	double udp_p50, udp_p99;
	bool promote;
	double promote_ms; /* from the first hot post to the vQP on RC */
	double post_p99_us, post_p99_promoting_us; /* a kr_post_read call, off / promoting */
	int promote_posts;			   /* calls while promoting */
};

/* Sync UDP round trips of 8 bytes with the target's echo. 0 or -errno. */
static int udp_pingpong(struct peer_run *p, double *lat, int iters)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(p->tg.udp_port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tmo = {.tv_sec = 1};
	uint64_t out, in;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo))) {
		rc = -errno;
		goto out;
	}
	for (int i = -KB_UDP_WARMUP; i < iters; i++) {
		double t0 = kb_now_us();

		out = (uint64_t)(i + KB_UDP_WARMUP);
		if (send(fd, &out, sizeof(out), 0) != sizeof(out) ||
		    recv(fd, &in, sizeof(in), 0) != sizeof(in) || in != out) {
			rc = errno ? -errno : -EIO;
			goto out;
		}
		if (i >= 0)
			lat[i] = kb_now_us() - t0;
	}
	kb_p50_p99(lat, iters, &p->udp_p50, &p->udp_p99);
out:
	close(fd);
	return rc;
}

/* A DCI of our own, addressed at node 2's DC target as kr_connect would. */
static int raw_dci(struct peer_run *p, struct kb_rd_raw *raw, struct kr_lease *l)
{
	int rc;

	memset(raw, 0, sizeof(*raw));
	raw->lkey = kr_job_heap_lkey(p->ctx);
	rc = kr_vq_peer_av(p->ctx, 2, &raw->av);
	if (!rc)
		rc = kr_lease_alloc(p->ctx, KR_LEASE_DCI, l);
	if (rc)
		return rc;
	rc = kr_job_dci_qp(p->ctx, l, &raw->qp, &raw->cq);
	if (rc)
		kr_lease_free(p->ctx, l);
	return rc;
}

/*
 * Windowed READs on v (KB_RD_WINDOW in flight, each one's 8 bytes checked),
 * each kr_post_read call timed into post_us (a call that got -EAGAIN, the
 * vQP moving between queues, counts too): max posts, or with until_rc up
 * to the first completion after which v runs on RC (*ms from the first
 * post). 0, -ETIMEDOUT (not on RC within 10 s), -EBADMSG or the error.
 */
static int post_run(struct peer_run *p, struct kr_vqp *v, uint8_t *local, bool until_rc, int max,
		    double *post_us, int *ncalls, double *ms)
{
	double t0 = kb_now_us();
	int posted = 0, done = 0, n = 0, rc;

	while (done < max) {
		while (posted < max && posted - done < KB_RD_WINDOW && n < 4 * max) {
			double t = kb_now_us();

			rc = kr_post_read(v, local + 8 * (posted % KB_RD_WINDOW), 8, p->tg.addr,
					  p->tg.rkey, (uint64_t)(posted % KB_RD_WINDOW), 0);
			post_us[n++] = kb_now_us() - t;
			if (rc == -EAGAIN && posted > done)
				break; /* moving between DC and RC: its requests drain first */
			if (rc)
				return rc;
			posted++;
		}
		for (struct kr_wc wc;;) {
			int got = kr_poll(v, &wc, 1);

			if (got < 0 || (got == 1 && wc.status != KR_WC_SUCCESS))
				return got < 0 ? got : -EIO;
			if (got == 1) {
				if (memcmp(local + 8 * wc.wr_id, &p->tg.val, 8))
					return -EBADMSG;
				break;
			}
			if (kb_now_us() - t0 > 10e6)
				return -ETIMEDOUT;
		}
		done++;
		if (until_rc && v->dci->rc) {
			*ms = (kb_now_us() - t0) / 1e3;
			break;
		}
	}
	*ncalls = n;
	if (until_rc && !v->dci->rc)
		return -ETIMEDOUT;
	return 0;
}

/*
 * Promote v: the same windowed READs with the attachment's rate lowered so
 * that they are hot, until v runs on RC; then as many calls with promotion
 * off, on a second vQP to node 2 (v stays on RC). promote_ms: from the
 * first post to v on RC; post_p99_promoting_us and post_p99_us: each
 * call's time, while promoting and with promotion off.
 */
static int promote(struct peer_run *p, struct kr_vqp *v, uint8_t *local)
{
	int max = 200000, n = 0, rc;
	double *us = calloc(4 * (size_t)max, sizeof(*us)), p50, ms = 0;

	if (!us)
		return -ENOMEM;
	p->ctx->promote_rate = 1;
	rc = post_run(p, v, local, true, max, us, &n, &ms);
	p->ctx->promote_rate = 0;
	if (!rc) {
		struct kr_connect_opts co = {.credits = 2 * KB_RD_WINDOW};
		struct kr_vqp *d = kr_connect(p->ctx, 2, &co);
		int m = 0;

		p->promote_ms = ms;
		kb_p50_p99(us, n, &p50, &p->post_p99_promoting_us);
		p->promote_posts = n;
		rc = d ? post_run(p, d, local, false, n > 64 ? n : 64, us, &m, &ms) : -errno;
		if (!rc)
			kb_p50_p99(us, m, &p50, &p->post_p99_us);
		if (d)
			kr_disconnect(d);
	}
	free(us);
	return rc;
}

static int run(struct peer_run *p, int iters)
{
	struct kr_connect_opts co = {.credits = 2 * KB_RD_WINDOW};
	uint8_t *local = kr_malloc(p->ctx, 8 * KB_RD_WINDOW);
	double *lat = calloc((size_t)iters, sizeof(*lat));
	struct kb_rd_res ratio;
	struct kb_rd_raw raw;
	struct kr_lease l;
	struct kr_vqp *v = NULL;
	int rc = -ENOMEM;

	if (!local || !lat)
		goto out;
	p->ctx->promote_rate = 0; /* the DC rows stay on DC */
	/* node 2 registers with the MetaServer within a second of its start */
	for (double t0 = kb_now_us(); !v && kb_now_us() - t0 < 10e6;)
		if (!(v = kr_connect(p->ctx, 2, &co)))
			usleep(20000);
	if (!v) {
		rc = -errno;
		goto out;
	}
	/* the right bytes first: a READ that returns something else measures nothing */
	rc = kb_rd_run(v, NULL, local, p->tg.addr, p->tg.rkey, 1, lat, &p->vqp);
	if (!rc && memcmp(local, &p->tg.val, 8))
		rc = -EBADMSG;
	if (!rc)
		rc = raw_dci(p, &raw, &l);
	if (!rc) {
		rc = kb_rd_rounds(v, &raw, local, p->tg.addr, p->tg.rkey, iters, lat, &p->vqp,
				  &p->raw, &ratio);
		p->rate_ratio = ratio.mops;
		kr_lease_free(p->ctx, &l);
	}
	if (!rc)
		rc = udp_pingpong(p, lat, iters);
	if (!rc && p->promote)
		rc = promote(p, v, local);
	if (!rc && p->promote) /* the rate is 1/s: it stays on RC through the run */
		rc = kb_rd_run(v, NULL, local, p->tg.addr, p->tg.rkey, iters, lat, &p->rc);
	kr_disconnect(v);
out:
	free(lat);
	kr_free(p->ctx, local);
	return rc;
}

static void report(const struct peer_run *p, int iters, bool json)
{
	double ratio = p->vqp.p50 / p->udp_p50;

	if (json) {
		printf(
		    "{\"bench\": \"read_peer\", \"nodes\": 2, \"profile\": \"%s\", \"iters\": %d, "
		    "\"bytes\": 8, \"window\": %d, "
		    "\"vqp\": {\"p50_us\": %.2f, \"p99_us\": %.2f, \"mops\": %.3f}, "
		    "\"raw_dci\": {\"p50_us\": %.2f, \"p99_us\": %.2f, \"mops\": %.3f}, "
		    "\"udp_pingpong\": {\"p50_us\": %.2f, \"p99_us\": %.2f}, "
		    "\"rtt_over_udp\": %.2f, \"vqp_over_raw\": %.3f, \"rate_ratio\": %.3f, "
		    "\"rounds\": %d",
		    g_profile, iters, KB_RD_WINDOW, p->vqp.p50, p->vqp.p99, p->vqp.mops, p->raw.p50,
		    p->raw.p99, p->raw.mops, p->udp_p50, p->udp_p99, ratio, p->vqp.p50 / p->raw.p50,
		    p->rate_ratio, KB_RD_ROUNDS);
		if (p->promote)
			printf(
			    ", \"vqp_rc\": {\"p50_us\": %.2f, \"p99_us\": %.2f, \"mops\": %.3f}, "
			    "\"promote_ms\": %.2f, \"rc_over_dc\": %.3f, \"post_p99_us\": %.2f, "
			    "\"post_p99_promoting_us\": %.2f, \"promote_posts\": %d",
			    p->rc.p50, p->rc.p99, p->rc.mops, p->promote_ms,
			    p->rc.mops / p->vqp.mops, p->post_p99_us, p->post_p99_promoting_us,
			    p->promote_posts);
		printf("}\n");
		return;
	}
	printf("krbench read --peer: 8-byte READ from node 1 to node 2 (keepers on sim hosts over "
	       "UDP loopback), %d iterations, async window %d, firmware cost model: %s; vqp and "
	       "raw_dci: medians of %d alternating rounds\n",
	       iters, KB_RD_WINDOW, g_profile, KB_RD_ROUNDS);
	printf("%-14s %-44s %10s %10s %12s\n", "path", "what", "p50 us", "p99 us", "async Mop/s");
	printf("%-14s %-44s %10.2f %10.2f %12.3f\n", "vqp", "kr_post_read + kr_poll", p->vqp.p50,
	       p->vqp.p99, p->vqp.mops);
	printf("%-14s %-44s %10.2f %10.2f %12.3f\n", "raw_dci", "devx post + doorbell + CQ poll",
	       p->raw.p50, p->raw.p99, p->raw.mops);
	printf("%-14s %-44s %10.2f %10.2f %12s\n", "udp_pingpong", "8 bytes to the target's echo",
	       p->udp_p50, p->udp_p99, "-");
	if (p->promote)
		printf("%-14s %-44s %10.2f %10.2f %12.3f\n", "vqp_rc",
		       "the same vQP promoted: on its RC QP", p->rc.p50, p->rc.p99, p->rc.mops);
	printf("rtt_over_udp (vqp / udp_pingpong, p50): %.2f\n", ratio);
	printf("rate_ratio (vqp / raw_dci, async, median of %d rounds' ratios): %.3f\n",
	       KB_RD_ROUNDS, p->rate_ratio);
	if (p->promote)
		printf("rc_over_dc (vqp_rc / vqp, async rate): %.3f; promoted %.2f ms after its "
		       "first hot post; a kr_post_read call's p99 %.2f us while promoting (%d "
		       "calls), %.2f us with promotion off\n",
		       p->rc.mops / p->vqp.mops, p->promote_ms, p->post_p99_promoting_us,
		       p->promote_posts, p->post_p99_us);
}

int kb_bench_read_peer(int iters, bool json, bool promote, const char *krpoold)
{
	struct peer_run p;
	struct kb_cluster c;
	int rc;

	memset(&p, 0, sizeof(p));
	p.promote = promote;
	rc = kb_cluster_start(&c, 2, 0, krpoold);
	if (rc)
		return rc == -ENOMEM ? 77 : 1;	/* 77: what the machine lacks */
	rc = kb_target_start(&p.tg, c.sock[1]); /* forked before this process attaches */
	if (rc)
		goto out;
	p.ctx = kb_attach_node(c.sock[0]);
	if (!p.ctx) {
		rc = -ENOTCONN;
		goto out;
	}
	rc = run(&p, iters);
	if (rc)
		fprintf(stderr, "krbench: read --peer: %s\n",
			rc == -EBADMSG ? "a READ returned other bytes" : strerror(-rc));
	else
		report(&p, iters, json);
	fflush(stdout);
	kr_detach(p.ctx);
out:
	kb_target_wait(&p.tg);
	kb_cluster_stop(&c);
	return rc ? 1 : 0;
}
