/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench elastic [--nodes N] [-n PROCS]: what a fresh process pays to reach
 * a peer, the case KRCore exists for (a new function or rank that must talk
 * right after it starts). N keepers on sim hosts over UDP loopback (node 1
 * the MetaServer), a target job on every other node, and a warm job of the
 * same launch on node 1 (this process). Then PROCS fresh processes whose
 * peer's record the node cache holds and PROCS whose record it does not,
 * interleaved, one at a time: each a spawn of krbench-fresh
 * (krbench_fresh.c) that attaches to node 1, connects to node 2 + i % (N-1),
 * READs 8 bytes (checked) and detaches; a connect that made other than one
 * MetaServer READ uncached (none cached), or asked the keeper for a DCI, fails
 * the run. Rows:
 *   launch_first_attach    this process's attach: the launch's first on node 1
 *                          (builds its tenant and DC target; one sample)
 *   exec                   spawn to the fresh process's main
 *   attach                 a fresh process's kr_attach
 *   first_connect_cached   its kr_connect, the peer's record cached (0 READs)
 *   first_connect_uncached the same, the record dropped (1 MetaServer READ)
 *   first_read             attach + connect + READ completed, record cached
 *   first_read_uncached    the same, record dropped
 *   detach                 disconnect + kr_detach
 *   read_rtt               the same READ from the warm job, its vQP held
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "common/kr_clock.h"
#include "job/job.h"
#include "krbench.h"

#define KB_RTT_ITERS   2000
#define KB_FRESH_WAIT  10000 /* ms a fresh process may take */
#define KB_CACHE_WAIT  2e6   /* us for the node cache to take or drop a record */

extern char **environ;

enum {
	E_EXEC,
	E_ATTACH,
	E_CONN_CACHED,
	E_CONN_UNCACHED,
	E_READ_CACHED,
	E_READ_UNCACHED,
	E_DETACH,
	E_N
};

static const char *const row_name[E_N] = {
    "exec",	      "attach",		   "first_connect_cached", "first_connect_uncached",
    "first_read", "first_read_uncached", "detach",
};

static const char *const row_what[E_N] = {
    "spawn to main of the fresh process",
    "kr_attach (its launch attached already)",
    "kr_connect, peer's record cached",
    "kr_connect, record dropped (1 MetaServer READ)",
    "attach + connect + 8-byte READ, cached",
    "attach + connect + 8-byte READ, dropped",
    "kr_disconnect + kr_detach",
};

struct elastic {
	struct kr_ctx *ctx;
	int nodes, procs;
	struct kb_target tg[KB_MAX_NODES]; /* [n - 1] for node n >= 2 */
	char fresh[PATH_MAX];
	const char *sock;
	double *lat[E_N];
	int n[E_N];
	double first_attach_us, rtt_p50, rtt_p99;
};

/* krbench-fresh, next to this binary. */
static int fresh_path(struct elastic *e)
{
	int rc = kb_tool_path("krbench-fresh", NULL, e->fresh, sizeof(e->fresh));

	if (!rc && access(e->fresh, X_OK))
		rc = -errno;
	if (rc)
		fprintf(stderr, "krbench: krbench-fresh: %s\n", strerror(-rc));
	return rc;
}

/* Until the node cache holds node's record (want) or not; bounded. 0 or -ETIMEDOUT. */
static int cache_wait(struct elastic *e, uint32_t node, bool want)
{
	for (double t0 = kb_now_us(); kb_now_us() - t0 < KB_CACHE_WAIT; usleep(100))
		if (kr_dct_cached(e->ctx, node) == want)
			return 0;
	fprintf(stderr, "krbench: the node cache did not %s node %u's record\n",
		want ? "take" : "drop", node);
	return -ETIMEDOUT;
}

/* The warm job: every peer reachable, its record cached, then read_rtt to node 2. */
static int warm(struct elastic *e)
{
	const struct kb_target *t = &e->tg[1];
	double *lat = calloc(KB_RTT_ITERS, sizeof(*lat));
	uint64_t *local = kr_malloc(e->ctx, sizeof(*local));
	struct kr_vqp *v = NULL;
	int rc = 0;

	if (!lat || !local) {
		rc = -ENOMEM;
		goto out;
	}
	for (int n = 2; n <= e->nodes && !rc; n++) {
		/* a node registers with the MetaServer within a second of its start */
		v = NULL;
		for (double t0 = kb_now_us(); !v && kb_now_us() - t0 < 10e6;)
			if (!(v = kr_connect(e->ctx, (uint32_t)n, NULL)))
				usleep(20000);
		if (!v) {
			fprintf(stderr, "krbench: node %d not reachable: %s\n", n, strerror(errno));
			rc = -EHOSTUNREACH;
			break;
		}
		kr_disconnect(v);
		rc = cache_wait(e, (uint32_t)n, true);
	}
	if (rc)
		goto out;
	v = kr_connect(e->ctx, 2, NULL);
	if (!v) {
		rc = -errno;
		goto out;
	}
	for (int i = -100; i < KB_RTT_ITERS && !rc; i++) {
		struct kr_wc wc;
		double t0 = kb_now_us();
		int n = 0;

		*local = 0;
		rc = kr_post_read(v, local, sizeof(*local), t->addr, t->rkey, 1, 0);
		while (!rc && !(n = kr_poll(v, &wc, 1)))
			;
		if (!rc && (n != 1 || wc.status || *local != t->val))
			rc = -EBADMSG;
		if (i >= 0)
			lat[i] = kb_now_us() - t0;
	}
	kr_disconnect(v);
	if (!rc)
		kb_p50_p99(lat, KB_RTT_ITERS, &e->rtt_p50, &e->rtt_p99);
out:
	kr_free(e->ctx, local);
	free(lat);
	return rc;
}

/* One fresh process to node; its figures into the rows. 0 or -errno (reported). */
static int fresh_one(struct elastic *e, uint32_t node, bool cached)
{
	const struct kb_target *t = &e->tg[node - 1];
	char snode[16], saddr[32], srkey[16], sval[32], st0[32], line[256];
	char *argv[] = {e->fresh, (char *)e->sock, snode, saddr, srkey, sval, st0, NULL};
	double exec, att, conn, rd, det;
	unsigned long long reads, calls;
	posix_spawn_file_actions_t fa;
	struct pollfd pfd;
	ssize_t got = 0, r;
	int p[2], status, rc;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	snprintf(snode, sizeof(snode), "%u", node);
	snprintf(saddr, sizeof(saddr), "0x%" PRIx64, t->addr);
	snprintf(srkey, sizeof(srkey), "0x%x", t->rkey);
	snprintf(sval, sizeof(sval), "0x%" PRIx64, t->val);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 3);
	snprintf(st0, sizeof(st0), "%" PRIu64, kr_now_ns());
	rc = posix_spawn(&pid, e->fresh, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (rc) {
		close(p[0]);
		return -rc;
	}
	pfd = (struct pollfd){.fd = p[0], .events = POLLIN};
	while (got < (ssize_t)sizeof(line) - 1 && poll(&pfd, 1, KB_FRESH_WAIT) == 1 &&
	       (r = read(p[0], line + got, sizeof(line) - 1 - (size_t)got)) > 0)
		got += r;
	line[got] = '\0';
	close(p[0]);
	if (!got)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (sscanf(line, "ok %lf %lf %lf %lf %lf %llu %llu", &exec, &att, &conn, &rd, &det, &reads,
		   &calls) != 7) {
		fprintf(stderr, "krbench: fresh process to node %u: %s\n", node,
			got ? line : "no answer");
		return -EIO;
	}
	if (reads != (cached ? 0 : 1)) {
		fprintf(stderr, "krbench: a fresh %s connect made %llu MetaServer READs\n",
			cached ? "cached" : "uncached", reads);
		return -EPROTO;
	}
	/* its DCI came with the attach, and the lookup READ went on it */
	if (calls) {
		fprintf(stderr, "krbench: a fresh %s connect asked the keeper for %llu DCIs\n",
			cached ? "cached" : "uncached", calls);
		return -EPROTO;
	}
	e->lat[E_EXEC][e->n[E_EXEC]++] = exec;
	e->lat[E_ATTACH][e->n[E_ATTACH]++] = att;
	e->lat[E_DETACH][e->n[E_DETACH]++] = det;
	if (cached) {
		e->lat[E_CONN_CACHED][e->n[E_CONN_CACHED]++] = conn;
		e->lat[E_READ_CACHED][e->n[E_READ_CACHED]++] = att + conn + rd;
	} else {
		e->lat[E_CONN_UNCACHED][e->n[E_CONN_UNCACHED]++] = conn;
		e->lat[E_READ_UNCACHED][e->n[E_READ_UNCACHED]++] = att + conn + rd;
	}
	return 0;
}

static int run(struct elastic *e)
{
	for (int i = 0; i < 2 * e->procs; i++) {
		uint32_t node = 2 + (uint32_t)((i / 2) % (e->nodes - 1));
		bool cached = !(i & 1);
		int rc;

		if (!cached)
			kr_dct_invalidate(e->ctx, node);
		rc = cache_wait(e, node, cached);
		if (!rc)
			rc = fresh_one(e, node, cached);
		if (rc)
			return rc;
	}
	return 0;
}

static void report(struct elastic *e, bool json)
{
	double p50[E_N], p99[E_N];

	for (int r = 0; r < E_N; r++)
		kb_p50_p99(e->lat[r], e->n[r], &p50[r], &p99[r]);
	if (!json) {
		printf("krbench elastic: %d fresh processes cached + %d uncached, one at a time, "
		       "attaching to node 1 of %d (keepers on sim hosts over UDP loopback), "
		       "firmware cost model: %s\n",
		       e->procs, e->procs, e->nodes, g_profile);
		printf("%-24s %-46s %10s %10s\n", "row", "what", "p50 us", "p99 us");
		printf("%-24s %-46s %10.1f %10s\n", "launch_first_attach",
		       "the launch's first attach on node 1", e->first_attach_us, "-");
		for (int r = 0; r < E_N; r++)
			printf("%-24s %-46s %10.1f %10.1f\n", row_name[r], row_what[r], p50[r],
			       p99[r]);
		printf("%-24s %-46s %10.1f %10.1f\n", "read_rtt", "the same READ from a warm job",
		       e->rtt_p50, e->rtt_p99);
	}
	printf("{\"bench\": \"elastic\", \"nodes\": %d, \"profile\": \"%s\", \"procs\": %d, "
	       "\"launch_first_attach_us\": %.1f, \"exec_p50_us\": %.1f, \"exec_p99_us\": %.1f, "
	       "\"attach_p50_us\": %.1f, \"attach_p99_us\": %.1f, "
	       "\"first_connect_cached_p50_us\": %.1f, \"first_connect_cached_p99_us\": %.1f, "
	       "\"first_connect_uncached_p50_us\": %.1f, \"first_connect_uncached_p99_us\": %.1f, "
	       "\"first_read_p50_us\": %.1f, \"first_read_p99_us\": %.1f, "
	       "\"first_read_uncached_p50_us\": %.1f, \"first_read_uncached_p99_us\": %.1f, "
	       "\"detach_p50_us\": %.1f, \"read_rtt_p50_us\": %.1f, \"read_rtt_p99_us\": %.1f}\n",
	       e->nodes, g_profile, e->procs, e->first_attach_us, p50[E_EXEC], p99[E_EXEC],
	       p50[E_ATTACH], p99[E_ATTACH], p50[E_CONN_CACHED], p99[E_CONN_CACHED],
	       p50[E_CONN_UNCACHED], p99[E_CONN_UNCACHED], p50[E_READ_CACHED], p99[E_READ_CACHED],
	       p50[E_READ_UNCACHED], p99[E_READ_UNCACHED], p50[E_DETACH], e->rtt_p50, e->rtt_p99);
}

int kb_bench_elastic(int nodes, int procs, bool json, const char *krpoold)
{
	struct elastic e;
	struct kb_cluster c;
	int rc, started = 0;
	double t0;

	memset(&e, 0, sizeof(e));
	e.nodes = nodes;
	e.procs = procs;
	rc = fresh_path(&e);
	if (rc)
		return 1;
	for (int r = 0; r < E_N; r++) {
		e.lat[r] = calloc((size_t)procs * 2, sizeof(double));
		if (!e.lat[r])
			return 1;
	}
	rc = kb_cluster_start(&c, nodes, 0, krpoold);
	if (rc)
		return rc == -ENOMEM ? 77 : 1; /* 77: what the machine lacks */
	e.sock = c.sock[0];
	/* the targets fork before this process attaches */
	for (int n = 2; n <= nodes && !rc; n++, started++)
		rc = kb_target_start(&e.tg[n - 1], c.sock[n - 1]);
	if (rc)
		goto out;
	t0 = kb_now_us();
	e.ctx = kb_attach_node(c.sock[0]);
	e.first_attach_us = kb_now_us() - t0;
	if (!e.ctx) {
		rc = -ENOTCONN;
		goto out;
	}
	e.ctx->promote_rate = KR_PROMOTE_OFF; /* read_rtt stays on DC, as a fresh READ is */
	rc = warm(&e);
	if (!rc)
		rc = run(&e);
	if (rc)
		fprintf(stderr, "krbench: elastic: %s\n",
			rc == -EBADMSG ? "a READ returned other bytes" : strerror(-rc));
	else
		report(&e, json);
	fflush(stdout);
	kr_detach(e.ctx);
out:
	for (int n = 2; n < 2 + started; n++)
		kb_target_stop(&e.tg[n - 1]);
	for (int n = 2; n < 2 + started; n++)
		kb_target_wait(&e.tg[n - 1]);
	kb_cluster_stop(&c);
	for (int r = 0; r < E_N; r++)
		free(e.lat[r]);
	return rc ? 1 : 0;
}
