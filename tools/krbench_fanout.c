/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench fanout: one thread's async 8-byte READs to N peers round-robin.
 * N + 1 keepers on sim hosts over UDP loopback (node 1 the MetaServer and
 * this job's node), a target job on each of nodes 2..N + 1. A DCI talks to
 * one DC target at a time and switches only when idle, so with one DCI per
 * thread the READs to different peers serialise; kr_connect spreads a
 * thread's peers over up to dcis_per_thread DCIs. Measured for K = 1, 2, 4
 * and 8 in the same run, KB_FO_ROUNDS times alternating (this machine's noise),
 * each figure the median: fanout_ratio = best K rate / K = 1 rate.
 *
 * A fifth row, "promoted": K = 1 with promotion on (virtqp_promote.c): the
 * warm-up makes every peer hot, so each vQP moves onto an RC QP of its own
 * (node 1's keeper holds --rc-spares 8); promote_over_k1 = its rate / K = 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "krbench.h"
#include "job/virtqp/virtqp.h"

#define KB_FO_WINDOW 64 /* READs in flight from the thread, over all peers */
#define KB_FO_ROUNDS 3
#define KB_FO_KS     5 /* the last: K = 1, promoted */
#define KB_FO_PROMO  (KB_FO_KS - 1)

static const uint32_t fo_k[KB_FO_KS] = {1, 2, 4, 8, 1};

struct fo_run {
	struct kb_cluster c;
	struct kb_target tg[KB_MAX_NODES - 1]; /* [i]: node i + 2 */
	int peers;
	double mops[KB_FO_KS][KB_FO_ROUNDS];
	uint32_t dcis_used[KB_FO_KS];
	uint32_t on_rc; /* the promoted row: vQPs that ran on RC (last round) */
};

/* vQPs to nodes 2..peers + 1, each checked with one READ of its target's bytes. */
static int fo_connect(struct fo_run *r, struct kr_ctx *ctx, uint8_t *local, struct kr_vqp **v,
		      uint32_t credits)
{
	struct kr_connect_opts co = {.credits = credits};

	for (int i = 0; i < r->peers; i++) {
		struct kr_wc wc;
		double t0;
		int n = 0;

		/* a node registers with the MetaServer within a second of its start */
		for (t0 = kb_now_us(); !(v[i] = kr_connect(ctx, (uint32_t)i + 2, &co));) {
			if ((errno != ENOENT && errno != EAGAIN && errno != EHOSTUNREACH) ||
			    kb_now_us() - t0 > 10e6)
				return -errno;
			usleep(20000);
		}
		n = kr_post_read(v[i], local, 8, r->tg[i].addr, r->tg[i].rkey, 0, 0);
		if (n)
			return n;
		for (t0 = kb_now_us(); !n && kb_now_us() - t0 < 10e6;)
			n = kr_poll(v[i], &wc, 1);
		if (n != 1 || wc.status != KR_WC_SUCCESS) {
			fprintf(stderr, "krbench: fanout: READ from node %d: %s\n", i + 2,
				n < 0 ? strerror(-n)
				: n   ? kr_strerror(wc.status)
				      : "no completion");
			return n < 0 ? n : -EIO;
		}
		/* a READ that returns other bytes measures nothing */
		if (memcmp(local, &r->tg[i].val, 8))
			return -EBADMSG;
	}
	return 0;
}

/* iters READs round-robin over v[0..peers), KB_FO_WINDOW in flight. Mop/s or -errno. */
static double fo_rate(struct fo_run *r, struct kr_vqp **v, uint8_t *local, int iters, int per_peer)
{
	int inflight[KB_MAX_NODES] = {0};
	int posted = 0, done = 0, total = 0;
	double t0 = kb_now_us();
	struct kr_wc wc[16];

	while (done < iters) {
		while (posted < iters && total < KB_FO_WINDOW) {
			int p = posted % r->peers, n;

			if (inflight[p] >= per_peer)
				break; /* round-robin: that peer's turn waits */
			n = kr_post_read(v[p], local + 8 * (posted % KB_FO_WINDOW), 8,
					 r->tg[p].addr, r->tg[p].rkey, (uint64_t)posted, 0);
			if (n == -EAGAIN && inflight[p])
				break; /* that vQP moves to RC once its DC requests are done */
			if (n)
				return -EIO;
			inflight[p]++;
			total++;
			posted++;
		}
		for (int p = 0; p < r->peers; p++) {
			int n;

			if (!inflight[p])
				continue;
			n = kr_poll(v[p], wc, 16);
			if (n < 0)
				return n;
			for (int j = 0; j < n; j++)
				if (wc[j].status != KR_WC_SUCCESS)
					return -EIO;
			inflight[p] -= n;
			total -= n;
			done += n;
		}
		if (kb_now_us() - t0 > 60e6)
			return -ETIMEDOUT;
	}
	return iters / (kb_now_us() - t0);
}

/* The promoted row: warm up (bounded) until every vQP runs on RC. Count of those on RC. */
static uint32_t fo_promote(struct fo_run *r, struct kr_ctx *ctx, struct kr_vqp **v, uint8_t *local,
			   int per_peer)
{
	uint32_t on_rc = 0;

	ctx->promote_rate = 1; /* any 64 posts are hot */
	for (double t0 = kb_now_us(); kb_now_us() - t0 < 10e6; usleep(1000)) {
		on_rc = 0;
		if (fo_rate(r, v, local, 64 * r->peers, per_peer) < 0)
			return 0;
		for (int i = 0; i < r->peers; i++) {
			struct kr_vqp_attr a;

			on_rc += !kr_vqp_query(v[i], &a) && a.transport == KR_VQP_RC;
		}
		if (on_rc == (uint32_t)r->peers)
			break;
	}
	return on_rc;
}

/* One round of K = fo_k[ki]: attach, connect, check, time, detach. 0 or -errno. */
static int fo_measure(struct fo_run *r, int ki, int round, int iters)
{
	int per_peer = (KB_FO_WINDOW + r->peers - 1) / r->peers;
	struct kr_vqp *v[KB_MAX_NODES] = {NULL};
	struct kr_ctx *ctx = kb_attach_node_dcis(r->c.sock[0], fo_k[ki]);
	uint8_t *local;
	double mops;
	int rc;

	if (!ctx)
		return -ENOTCONN;
	ctx->promote_rate = 0; /* the K rows stay on DC; fo_promote() turns it on for its row */
	local = kr_malloc(ctx, 8 * KB_FO_WINDOW);
	rc = local ? fo_connect(r, ctx, local, v, 2 * (uint32_t)per_peer) : -ENOMEM;
	if (!rc) {
		r->dcis_used[ki] = 0;
		for (int i = 0; i < r->peers; i++) {
			int j = 0;

			while (j < i && v[j]->dci != v[i]->dci)
				j++;
			r->dcis_used[ki] += j == i;
		}
		if (ki == KB_FO_PROMO) {
			r->on_rc = fo_promote(r, ctx, v, local, per_peer);
			if (!r->on_rc)
				rc = -EPROTO; /* not one promoted: nothing of it to measure */
		}
	}
	if (!rc) {
		mops = fo_rate(r, v, local, iters / 10 + 1, per_peer); /* warm-up */
		if (mops > 0)
			mops = fo_rate(r, v, local, iters, per_peer);
		if (mops < 0)
			rc = (int)mops;
		else
			r->mops[ki][round] = mops;
	}
	for (int i = 0; i < r->peers; i++)
		if (v[i])
			kr_disconnect(v[i]);
	kr_free(ctx, local);
	kr_detach(ctx);
	return rc;
}

static double fo_median(const double *x)
{
	double s[KB_FO_ROUNDS];

	memcpy(s, x, sizeof(s));
	qsort(s, KB_FO_ROUNDS, sizeof(s[0]), kb_cmp_double);
	return s[KB_FO_ROUNDS / 2];
}

static void fo_report(const struct fo_run *r, int iters, bool json)
{
	double med[KB_FO_KS], best = 0;

	for (int k = 0; k < KB_FO_KS; k++) {
		med[k] = fo_median(r->mops[k]);
		if (med[k] > best && k != KB_FO_PROMO)
			best = med[k];
	}
	if (json) {
		printf("{\"bench\": \"fanout\", \"peers\": %d, \"profile\": \"%s\", \"iters\": %d, "
		       "\"bytes\": 8, \"window\": %d, \"rounds\": %d, \"dcis\": [",
		       r->peers, g_profile, iters, KB_FO_WINDOW, KB_FO_ROUNDS);
		for (int k = 0; k < KB_FO_PROMO; k++)
			printf("%s{\"dcis_per_thread\": %u, \"dcis_used\": %u, \"mops\": %.4f}",
			       k ? ", " : "", fo_k[k], r->dcis_used[k], med[k]);
		printf("], \"promoted\": {\"dcis_per_thread\": 1, \"on_rc\": %u, \"mops\": %.4f}, "
		       "\"fanout_ratio\": %.2f, \"promote_over_k1\": %.2f}\n",
		       r->on_rc, med[KB_FO_PROMO], best / med[0], med[KB_FO_PROMO] / med[0]);
		return;
	}
	printf("krbench fanout: async 8-byte READs from one thread to %d peers round-robin "
	       "(keepers on sim hosts over UDP loopback), %d iterations, window %d, median of %d, "
	       "firmware cost model: %s\n",
	       r->peers, iters, KB_FO_WINDOW, KB_FO_ROUNDS, g_profile);
	printf("%-16s %10s %12s %10s\n", "dcis_per_thread", "dcis used", "async Mop/s", "vs K=1");
	for (int k = 0; k < KB_FO_PROMO; k++)
		printf("%-16u %10u %12.4f %10.2f\n", fo_k[k], r->dcis_used[k], med[k],
		       med[k] / med[0]);
	printf("%-16s %10s %12.4f %10.2f   (%u of %d vQPs on RC)\n", "1, promoted", "-",
	       med[KB_FO_PROMO], med[KB_FO_PROMO] / med[0], r->on_rc, r->peers);
	printf("fanout_ratio (best K / K=1): %.2f; promote_over_k1: %.2f\n", best / med[0],
	       med[KB_FO_PROMO] / med[0]);
}

int kb_bench_fanout(int peers, int iters, bool json, const char *krpoold)
{
	struct fo_run *r = calloc(1, sizeof(*r));
	int started = 0, rc;

	if (!r)
		return 1;
	r->peers = peers;
	rc = kb_cluster_start(&r->c, peers + 1, 0, krpoold);
	if (rc) {
		free(r);
		return rc == -ENOMEM ? 77 : 1; /* 77: what the machine lacks */
	}
	/* forked before this process attaches */
	while (started < peers && !(rc = kb_target_start(&r->tg[started], r->c.sock[started + 1])))
		started++;
	for (int round = 0; !rc && round < KB_FO_ROUNDS; round++)
		for (int k = 0; !rc && k < KB_FO_KS; k++)
			rc = fo_measure(r, k, round, iters);
	if (rc)
		fprintf(stderr, "krbench: fanout: %s\n",
			rc == -EBADMSG ? "a READ returned other bytes" : strerror(-rc));
	else
		fo_report(r, iters, json);
	fflush(stdout);
	for (int i = 0; i < started; i++)
		kb_target_stop(&r->tg[i]);
	for (int i = 0; i < started; i++)
		kb_target_wait(&r->tg[i]);
	kb_cluster_stop(&r->c);
	free(r);
	return rc ? 1 : 0;
}
