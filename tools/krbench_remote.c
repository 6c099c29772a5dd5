/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench connect --nodes N: connecting to other nodes, krcore beside the
 * verbs way, in one run. N keepers on sim hosts over UDP loopback (node 1
 * the MetaServer), a target job on every other node, the benchmark job on
 * node 1 connecting to nodes 2..N in turn:
 *   connect_cached      kr_connect, the peer's record in the node cache, the
 *                       thread's DCI held
 *   connect_uncached    the record dropped before each connect: one
 *                       MetaServer READ (counted, and checked)
 *   connect_first_kept  a thread's first connect, a DCI its process kept
 *   connect_first       a thread's first connect, leasing its DCI from the keeper
 *   first_read          connect_cached + one 8-byte READ completed (bytes checked)
 *   verbs_baseline      the verbs way (krbench_verbs.c) up to the same READ
 *   verbs_connect       the same, up to its QP in RTS
 * plus connects/s (connect + disconnect pairs) on 1 and 2 threads. Ratios:
 * baseline_ratio = verbs_baseline p50 / first_read p50, connect_ratio =
 * verbs_connect p50 / connect_cached p50, both under the run's profile.
 * first_read's wait yields on an empty poll on the sim (kb_host_cpu), as the
 * README tells a polling loop to: spinning, it held the core the sim's
 * thread waited on until the library yields after 200 us, and its p50 was
 * 30.8, 53.8 or 246.9 us by run (connectx4 profile, 2 nodes).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "krbench.h"
#include "job/virtqp/virtqp.h"

#define KB_VERBS_ITERS 20
#define KB_SMALL_ITERS 2000
#define KB_FIRST_ITERS 200

enum { C_CACHED, C_UNCACHED, C_FIRST_KEPT, C_FIRST, C_FIRST_READ, C_VERBS, C_VERBS_CONN, C_N };

static const char *const case_name[C_N] = {
    "connect_cached", "connect_uncached", "connect_first_kept", "connect_first",
    "first_read",     "verbs_baseline",	  "verbs_connect",
};

static const char *const case_what[C_N] = {
    "kr_connect, record cached, DCI held",
    "kr_connect, record dropped (1 MetaServer READ)",
    "thread's first kr_connect, a DCI the process kept",
    "thread's first kr_connect, DCI leased from keeper",
    "kr_connect + 8-byte READ completed",
    "verbs: CQ+QP, TCP exchange, RTS, 8-byte READ",
    "verbs: the same up to the QP in RTS",
};

#define KB_CDF_N 21 /* percentiles 0, 5, ..., 100 in the JSON (scripts/plot.py) */

struct kb_case {
	double p50, p99, ops;
	int iters;
	double cdf[KB_CDF_N];
};

/* A case's percentiles from its n latencies (sorted here). */
static void case_set(struct kb_case *c, double *lat, int n)
{
	kb_p50_p99(lat, n, &c->p50, &c->p99);
	for (int i = 0; i < KB_CDF_N; i++)
		c->cdf[i] = kb_pct(lat, n, 100.0 * i / (KB_CDF_N - 1));
	c->iters = n;
}

struct remote {
	struct kr_ctx *ctx;
	int nodes;
	struct kb_target tg[KB_MAX_NODES]; /* [n - 1] for node n >= 2 */
	struct kb_case res[C_N];
	double cps_2t;
	bool yield; /* kb_host_cpu: the sim's threads share this machine's cores */
	uint64_t cached_reads; /* MetaServer READs during connect_cached: 0 unless evicted */
};

static uint32_t peer(const struct remote *r, int i)
{
	return 2 + (uint32_t)(i % (r->nodes - 1));
}

/*
 * The first connect to each peer waits (bounded) for its MetaServer
 * registration; then until a round of connects to every peer reads nothing
 * from the MetaServer: the keeper has put the records this job reported into
 * the node cache (the report is one-way).
 */
static int reach_peers(struct remote *r)
{
	struct kr_dct_look_stats st0, st1;

	for (int n = 2; n <= r->nodes; n++) {
		struct kr_vqp *v = NULL;

		for (double t0 = kb_now_us(); !v && kb_now_us() - t0 < 10e6;)
			if (!(v = kr_connect(r->ctx, (uint32_t)n, NULL)))
				usleep(20000);
		if (!v) {
			fprintf(stderr, "krbench: node %d not reachable: %s\n", n, strerror(errno));
			return -EHOSTUNREACH;
		}
		kr_disconnect(v);
	}
	for (double t0 = kb_now_us(); kb_now_us() - t0 < 5e6; usleep(1000)) {
		kr_dct_look_stats_get(&st0);
		for (int n = 2; n <= r->nodes; n++) {
			struct kr_vqp *v = kr_connect(r->ctx, (uint32_t)n, NULL);

			if (!v)
				return -errno;
			kr_disconnect(v);
		}
		kr_dct_look_stats_get(&st1);
		if (st1.reads == st0.reads)
			return 0;
	}
	fprintf(stderr, "krbench: the node cache did not take the peers' records\n");
	return -ESTALE;
}

/* connect_cached (with ops/s) and connect_uncached. */
static int run_connects(struct remote *r, double *lat, int iters)
{
	struct kr_dct_look_stats st0, st1;
	int nu = iters < KB_SMALL_ITERS ? iters : KB_SMALL_ITERS;
	double total = kb_now_us();

	kr_dct_look_stats_get(&st0);
	for (int i = 0; i < iters; i++) {
		double t0 = kb_now_us();
		struct kr_vqp *v = kr_connect(r->ctx, peer(r, i), NULL);

		lat[i] = kb_now_us() - t0;
		if (!v || kr_disconnect(v))
			return -errno;
	}
	total = kb_now_us() - total;
	kr_dct_look_stats_get(&st1);
	r->cached_reads = st1.reads - st0.reads;
	case_set(&r->res[C_CACHED], lat, iters);
	r->res[C_CACHED].ops = iters / total * 1e6;

	kr_dct_look_stats_get(&st0);
	for (int i = 0; i < nu; i++) {
		struct kr_vqp *v;
		double t0;

		kr_dct_invalidate(r->ctx, peer(r, i));
		t0 = kb_now_us();
		v = kr_connect(r->ctx, peer(r, i), NULL);
		lat[i] = kb_now_us() - t0;
		if (!v || kr_disconnect(v))
			return -errno;
	}
	kr_dct_look_stats_get(&st1);
	if (st1.reads - st0.reads != (uint64_t)nu) {
		fprintf(stderr, "krbench: %d uncached connects made %llu MetaServer READs\n", nu,
			(unsigned long long)(st1.reads - st0.reads));
		return -EPROTO;
	}
	case_set(&r->res[C_UNCACHED], lat, nu);
	return 0;
}

/* first_read: connect + READ + completion, the thread's DCI held. */
static int run_first_read(struct remote *r, double *lat, uint64_t *local, int n)
{
	for (int i = 0; i < n; i++) {
		const struct kb_target *t = &r->tg[peer(r, i) - 1];
		struct kr_vqp *v;
		struct kr_wc wc;
		double t0;
		int got = 0;

		*local = 0;
		t0 = kb_now_us();
		v = kr_connect(r->ctx, peer(r, i), NULL);
		if (!v || kr_post_read(v, local, 8, t->addr, t->rkey, (uint64_t)i, 0))
			return -EIO;
		while ((got = kr_poll(v, &wc, 1)) == 0 && kb_now_us() - t0 < 10e6)
			if (r->yield)
				sched_yield();
		lat[i] = kb_now_us() - t0;
		if (got != 1 || wc.status != KR_WC_SUCCESS || *local != t->val) {
			fprintf(stderr, "krbench: first READ %d: %s\n", i,
				got == 1 ? kr_strerror((int)wc.status) : "no completion");
			return -EIO;
		}
		kr_disconnect(v);
	}
	case_set(&r->res[C_FIRST_READ], lat, n);
	return 0;
}

struct cps_arg {
	struct remote *r;
	int n, rc;
};

static void *cps_thread(void *p)
{
	struct cps_arg *a = p;
	struct kr_connect_opts one = {.credits = 2};
	double t0;
	/* the thread's first connect leases a DCI: the ones earlier cases gave back may be
	 * still resetting on the keeper's worker */
	struct kr_vqp *hold = kb_connect_wait(a->r->ctx, peer(a->r, 0), &one, &t0);

	a->rc = hold ? 0 : -errno;
	for (int i = 0; !a->rc && i < a->n; i++) {
		struct kr_vqp *v = kr_connect(a->r->ctx, peer(a->r, i), NULL);

		if (!v || kr_disconnect(v))
			a->rc = -errno;
	}
	if (hold)
		kr_disconnect(hold);
	return NULL;
}

/* Connects/s with two threads, each holding its own DCI. */
static int run_cps_2t(struct remote *r, int iters)
{
	struct cps_arg a[2] = {{r, iters, 0}, {r, iters, 0}};
	pthread_t t[2];
	double t0 = kb_now_us();

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, cps_thread, &a[i]))
			return -EAGAIN;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (a[0].rc || a[1].rc)
		return a[0].rc ? a[0].rc : a[1].rc;
	r->cps_2t = 2.0 * iters / (kb_now_us() - t0) * 1e6;
	return 0;
}

static void report(const struct remote *r, bool json)
{
	const struct kb_case *c = r->res;
	double br = c[C_VERBS].p50 / c[C_FIRST_READ].p50;
	double cr = c[C_VERBS_CONN].p50 / c[C_CACHED].p50;

	if (json) {
		printf("{\"bench\": \"connect\", \"nodes\": %d, \"profile\": \"%s\", \"p50_us\": "
		       "%.3f, "
		       "\"p99_us\": %.3f, \"uncached_p50_us\": %.3f, \"first_p50_us\": %.3f, "
		       "\"first_read_p50_us\": %.3f, \"baseline_p50_us\": %.1f, "
		       "\"baseline_ratio\": %.0f, \"connect_ratio\": %.0f, "
		       "\"connects_per_s\": %.0f, \"connects_per_s_2t\": %.0f, "
		       "\"cached_meta_reads\": %llu, \"cases\": [",
		       r->nodes, g_profile, c[C_CACHED].p50, c[C_CACHED].p99, c[C_UNCACHED].p50,
		       c[C_FIRST].p50, c[C_FIRST_READ].p50, c[C_VERBS].p50, br, cr, c[C_CACHED].ops,
		       r->cps_2t, (unsigned long long)r->cached_reads);
		for (int i = 0; i < C_N; i++) {
			printf("%s{\"name\": \"%s\", \"p50_us\": %.3f, \"p99_us\": %.3f, "
			       "\"ops_per_s\": %.0f, \"iterations\": %d, \"profile\": \"%s\", "
			       "\"cdf_us\": [",
			       i ? ", " : "", case_name[i], c[i].p50, c[i].p99, c[i].ops,
			       c[i].iters, g_profile);
			for (int k = 0; k < KB_CDF_N; k++)
				printf("%s%.3f", k ? ", " : "", c[i].cdf[k]);
			printf("]}");
		}
		printf("]}\n");
		return;
	}
	printf("krbench connect: node 1 to nodes 2..%d (keepers on sim hosts over UDP loopback, "
	       "MetaServer on node 1), firmware cost model: %s\n",
	       r->nodes, g_profile);
	printf("%-20s %-50s %11s %11s %11s %6s\n", "case", "what", "p50 us", "p99 us", "ops/s",
	       "iters");
	for (int i = 0; i < C_N; i++) {
		char ops[24] = "-";

		if (c[i].ops > 0)
			snprintf(ops, sizeof(ops), "%.0f", c[i].ops);
		printf("%-20s %-50s %11.3f %11.3f %11s %6d\n", case_name[i], case_what[i], c[i].p50,
		       c[i].p99, ops, c[i].iters);
	}
	printf("connects/s, 2 threads (connect + disconnect, cached): %.0f\n", r->cps_2t);
	printf("MetaServer READs during connect_cached: %llu\n",
	       (unsigned long long)r->cached_reads);
	printf("baseline_ratio (verbs_baseline / first_read, p50): %.0f\n", br);
	printf("connect_ratio (verbs_connect / connect_cached, p50): %.0f\n", cr);
}

/* A thread's first connects, spares DCIs kept by the process. 0 or -EIO. */
static int cold(struct remote *r, double *lat, int n, uint32_t spares, struct kb_case *c)
{
	double p50, p99;

	if (kb_cold_loop(r->ctx, peer(r, 0), lat, n, spares, &p50, &p99))
		return -EIO;
	case_set(c, lat, n);
	return 0;
}

static int run_all(struct remote *r, struct kb_verbs *vb, int iters)
{
	struct kr_connect_opts one = {.credits = 2};
	int nf = iters < KB_FIRST_ITERS ? iters : KB_FIRST_ITERS;
	int ns = iters < KB_SMALL_ITERS ? iters : KB_SMALL_ITERS;
	double *lat =
	    calloc(2 * (size_t)(iters > KB_VERBS_ITERS ? iters : KB_VERBS_ITERS), sizeof(*lat));
	uint64_t *local = kr_malloc(r->ctx, 8);
	struct kr_vqp *hold;
	int rc;

	if (!lat || !local) {
		free(lat);
		return -ENOMEM;
	}
	rc = reach_peers(r);
	if (rc)
		goto out;
	/* a vQP held open keeps the thread's DCI */
	hold = kr_connect(r->ctx, peer(r, 0), &one);
	rc = hold ? run_connects(r, lat, iters) : -errno;
	if (!rc)
		rc = run_first_read(r, lat, local, ns);
	if (hold)
		kr_disconnect(hold);
	if (!rc)
		rc = cold(r, lat, nf, 8, &r->res[C_FIRST_KEPT]);
	if (!rc)
		rc = cold(r, lat, nf, 0, &r->res[C_FIRST]);
	kr_vq_spare_max(8);
	if (!rc)
		rc = run_cps_2t(r, iters);
	if (!rc)
		rc = kb_verbs_run(vb, lat);
	if (!rc) {
		case_set(&r->res[C_VERBS], lat, vb->iters);
		case_set(&r->res[C_VERBS_CONN], lat + vb->iters, vb->iters);
	}
out:
	kr_free(r->ctx, local);
	free(lat);
	return rc;
}

int kb_bench_connect_remote(int nodes, int iters, bool json, const char *krpoold)
{
	struct remote r = {.nodes = nodes};
	struct kb_cluster c;
	struct kb_verbs vb;
	int rc;

	/* two more hosts for the verbs baseline's client and server */
	rc = kb_cluster_start(&c, nodes, 2, krpoold);
	if (rc)
		return rc == -ENOMEM ? 77 : 1; /* 77: what the machine lacks (tests skip) */
	/* every child before this process attaches */
	for (int n = 2; n <= nodes && !rc; n++)
		rc = kb_target_start(&r.tg[n - 1], c.sock[n - 1]);
	if (!rc)
		rc = kb_verbs_start(&vb, &c, nodes, nodes + 1, KB_VERBS_ITERS);
	if (rc)
		goto out_targets;
	r.ctx = kb_attach_node(c.sock[0]);
	if (!r.ctx) {
		rc = -ENOTCONN;
		goto out_verbs;
	}
	r.yield = kb_host_cpu(r.ctx);
	rc = run_all(&r, &vb, iters);
	if (rc)
		fprintf(stderr, "krbench: connect --nodes %d: %s\n", nodes, strerror(-rc));
	else
		report(&r, json);
	fflush(stdout);
	kr_detach(r.ctx);
out_verbs:
	kb_verbs_stop(&vb);
out_targets:
	for (int n = 2; n <= nodes; n++)
		kb_target_stop(&r.tg[n - 1]);
	for (int n = 2; n <= nodes; n++)
		kb_target_wait(&r.tg[n - 1]);
	kb_cluster_stop(&c);
	return rc ? 1 : 0;
}
