/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * chaos_soak: RDMA semantics through the public API while the wire drops,
 * duplicates and reorders packets, jobs are SIGKILLed and respawned and a
 * keeper is killed and restarted.
 *
 * N nodes, each a keeper on a sim host over UDP loopback (127.0.0.2...,
 * faults on every host's packets; node 1 is the MetaServer), J jobs per node
 * (processes), T threads per job. Every job publishes an 8 KiB target
 * buffer: one 64-byte slot per writer thread of the cluster, so each slot
 * has one writer, who keeps a shadow of it (per target generation: a
 * respawned job's buffer starts unknown). Each thread loops: pick a live
 * target (any node, its own included), one of WRITE, WRITE_IMM, READ, CAS,
 * FAA on its slot (half of them behind KR_POST_MORE), wait for the
 * completion, check it:
 *   - a successful READ returns the shadow, a CAS or FAA the shadow old value;
 *   - every request completes within 5 s (success or error);
 *   - an error is expected if its target died (or deregistered its buffer at
 *     the end) or its node's keeper was down during the request; others are
 *     counted and reported (never silently).
 * An error leaves the slot's shadow unknown (the request may have run) until
 * the next successful READ/CAS/FAA. In --abandon-pct % of its loops a thread
 * disconnects a vQP that has requests in flight and connects again: those
 * requests leave the sub-slots unknown, and their local words are marked
 * once kr_disconnect() returned; the next request in that slot checks the
 * mark first (a late answer of an abandoned request landing there is a
 * corruption). The conductor kills a random job every
 * --kill-ms, kills node N's keeper at mid-run (--keeper-restart) and
 * restarts it with fresh jobs, optionally SIGSTOPs node 1's keeper for 1 s
 * (--pause-keeper); at the end every job detaches and every keeper must hold
 * no lease.
 *
 * Fails on: a corruption, an unexpected error other than retry exhaustion
 * (a live target refusing a request; retries can run out when 2 cores starve
 * the simulated NICs), a request without completion within 5 s, a crash (a
 * job dying of anything but our kills, or a keeper), a lease left.
 * Prints a summary and, with --json FILE, the same as JSON. The CI run is
 * small (meson.build); scripts/soak.sh runs it longer and wider.
 */
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim_mp.h"
#include "vq_fixture.h"

#define MAX_NODES	 8
#define MAX_JOBS	 4
#define MAX_THREADS	 4
#define NWRITERS	 (MAX_NODES * MAX_JOBS * MAX_THREADS)
#define SUBSLOTS	 4u  /* per writer and target: one request in flight on each */
#define SUBSLOT		 64u /* data word, CAS word, FAA word */
#define SLOT		 (SUBSLOTS * SUBSLOT)
#define BUF_LEN		 (NWRITERS * SLOT)
#define WINDOW		 8u /* requests in flight per thread */
#define DEADLINE_NS	 5000000000ull
#define EXIT_KEEPER_GONE 3
#define ABANDON_MARK	 0xabad0dd5abad0dd5ull /* both local words of an abandoned request */

enum op { OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS, OP_FAA, OP_N };
static const char *const op_name[OP_N] = {"write", "write_imm", "read", "cas", "faa"};

/* A job's published target buffer. */
struct target {
	_Atomic uint32_t gen; /* 0: none yet; changes at each (re)publication */
	_Atomic int alive;    /* cleared by the conductor before a kill, set last by the job */
	uint64_t addr;
	uint32_t rkey;
	pid_t pid;
	uint64_t pub_ns; /* when this generation was published */
};

struct stats {
	_Atomic uint64_t ok[OP_N];
	_Atomic uint64_t err_expected;
	_Atomic uint64_t err_unexpected;
	_Atomic uint64_t err_wrong;   /* unexpected and not a transport timeout: fails the run */
	_Atomic uint64_t err_flushed; /* behind another error on the same vQP */
	_Atomic uint64_t err_by_status[KR_WC_STATUS_MAX];
	_Atomic uint64_t corrupt;
	_Atomic uint64_t stalls;
	_Atomic uint64_t reconnects;
	_Atomic uint64_t abandons;	   /* disconnects with requests in flight */
	_Atomic uint64_t abandoned;	   /* requests they left */
	_Atomic uint64_t abandon_timeouts; /* kr_disconnect() gave up waiting for them */
	_Atomic uint64_t max_lat_ns;
	_Atomic uint64_t keeper_notice_n;
	_Atomic uint64_t keeper_notice_max_ns;
	_Atomic uint64_t keeper_notice_sum_ns;
	_Atomic uint32_t reports; /* first failures printed */
};

/* Shared by every process (MAP_SHARED before fork). */
struct world {
	int nodes, jobs, threads;
	int abandon_pct; /* a thread's loop disconnects a vQP with requests in flight */
	_Atomic int stop;
	struct target t[MAX_NODES][MAX_JOBS];
	_Atomic uint64_t keeper_epoch[MAX_NODES]; /* bumped when a keeper goes down or comes back */
	_Atomic int keeper_down[MAX_NODES];
	_Atomic uint64_t keeper_dead_ns[MAX_NODES];
	_Atomic uint32_t gen_seq;
	struct stats st;
};

static struct world *W;
static struct kp_keeper K[MAX_NODES];

static void stat_max(_Atomic uint64_t *m, uint64_t v)
{
	uint64_t cur = atomic_load(m);

	while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
		;
}

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&W->st.reports, 1) >= 20)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "chaos_soak: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- a job ---- */

/* What one writer thread knows of one sub-slot at one target generation. */
struct shadow {
	uint32_t gen;
	bool busy; /* a request on it is in flight */
	bool data_known, cas_known, faa_known;
	uint64_t data, cas, faa;
};

/* A request in flight. */
struct req {
	bool used;
	int n, j, k; /* target node, job, sub-slot */
	enum op op;
	uint64_t id, val, cmp, t0, epoch;
	uint32_t gen, rkey;
};

struct job {
	int node, idx;
	struct kr_ctx *ctx;
	uint8_t *buf;
	_Atomic int keeper_gone;
};

struct thr {
	struct job *job;
	int t;
	uint64_t rng;
	uint64_t next_id;
	uint64_t *local; /* 2 words per request slot: READ/atomic result, WRITE source */
	struct kr_vqp *vq[MAX_NODES];
	uint64_t vq_epoch[MAX_NODES]; /* the target keeper's epoch when vq[] connected */
	uint64_t vq_t0[MAX_NODES];    /* when vq[] connected */
	uint32_t vq_inflight[MAX_NODES];
	struct req rq[WINDOW];
	uint32_t ninflight;
	struct shadow sh[MAX_NODES][MAX_JOBS][SUBSLOTS];
};

static uint32_t writer_id(const struct thr *th)
{
	return ((uint32_t)th->job->node * MAX_JOBS + (uint32_t)th->job->idx) * MAX_THREADS +
	       (uint32_t)th->t;
}

/* -ENOTCONN once our keeper is gone (the job exits), else 0. */
static int keeper_gone(struct thr *th, int rc)
{
	if (rc != -ENOTCONN && rc != -EPIPE)
		return 0;
	if (!atomic_exchange(&th->job->keeper_gone, 1)) {
		uint64_t dead = atomic_load(&W->keeper_dead_ns[th->job->node]);

		if (dead) {
			uint64_t d = kr_test_now_ns() - dead;

			atomic_fetch_add(&W->st.keeper_notice_n, 1);
			atomic_fetch_add(&W->st.keeper_notice_sum_ns, d);
			stat_max(&W->st.keeper_notice_max_ns, d);
		}
	}
	return -ENOTCONN;
}

/* The thread's vQP to node, connected (again, once an errored one drained). */
static struct kr_vqp *vqp_for(struct thr *th, int node)
{
	struct kr_vqp *v = th->vq[node];
	struct kr_vqp_attr a;

	if (v && !kr_vqp_query(v, &a) && a.state == KR_VQP_RTS)
		return v;
	if (v && th->vq_inflight[node])
		return NULL; /* errored: its flushes still come */
	if (v) {
		kr_disconnect(v);
		th->vq[node] = NULL;
		atomic_fetch_add(&W->st.reconnects, 1);
	}
	th->vq_epoch[node] = atomic_load(&W->keeper_epoch[node]);
	th->vq_t0[node] = kr_test_now_ns();
	v = kr_connect(th->job->ctx, node == th->job->node ? KR_NODE_SELF : (uint32_t)node + 1,
		       NULL);
	th->vq[node] = v;
	return v;
}

/* Post one request to a random live target; 0, -EAGAIN (nothing posted) or -ENOTCONN. */
static int post_one(struct thr *th, uint32_t slot)
{
	int n = (int)(kr_test_splitmix64(&th->rng) % (uint64_t)W->nodes);
	int j = (int)(kr_test_splitmix64(&th->rng) % (uint64_t)W->jobs);
	int k = (int)(kr_test_splitmix64(&th->rng) % SUBSLOTS);
	struct target *tg = &W->t[n][j];
	struct shadow *s = &th->sh[n][j][k];
	struct req *q = &th->rq[slot];
	uint64_t *loc = &th->local[2 * slot];
	int alive = atomic_load(&tg->alive);
	uint32_t gen = atomic_load(&tg->gen);
	uint64_t raddr = tg->addr + (uint64_t)writer_id(th) * SLOT + (uint64_t)k * SUBSLOT;
	uint32_t rkey = tg->rkey, more;
	struct kr_vqp *v;
	int rc;

	if (!alive || !gen || atomic_load(&W->keeper_down[n]))
		return -EAGAIN;
	if (s->gen != gen) {
		memset(s, 0, sizeof(*s));
		s->gen = gen;
	}
	if (s->busy)
		return -EAGAIN;
	v = vqp_for(th, n);
	if (!v)
		return keeper_gone(th, -errno) ? -ENOTCONN : -EAGAIN;
	memset(q, 0, sizeof(*q));
	q->n = n;
	q->j = j;
	q->k = k;
	q->op = (enum op)(kr_test_splitmix64(&th->rng) % OP_N);
	q->id = ++th->next_id;
	q->val = kr_test_splitmix64(&th->rng);
	q->gen = gen;
	q->rkey = rkey;
	q->epoch = atomic_load(&W->keeper_epoch[n]);
	if (loc[0] == ABANDON_MARK && loc[1] != ABANDON_MARK) {
		atomic_fetch_add(&W->st.corrupt, 1);
		report("node %d job %d thread %d: the local word of an abandoned request changed "
		       "after kr_disconnect() (0x%" PRIx64 ")",
		       th->job->node, th->job->idx, th->t, loc[1]);
	}
	loc[0] = 0x5a5a5a5a5a5a5a5aull;
	loc[1] = q->val;
	/* half behind KR_POST_MORE: a later post or an empty poll rings them, a kill loses them */
	more = kr_test_splitmix64(&th->rng) & 1 ? KR_POST_MORE : 0;
	switch (q->op) {
	case OP_WRITE:
		rc = kr_post_write(v, &loc[1], 8, raddr, rkey, q->id, more);
		break;
	case OP_WRITE_IMM:
		rc = kr_post_write_imm(v, &loc[1], 8, raddr, rkey, (uint32_t)q->val, q->id, more);
		break;
	case OP_READ:
		rc = kr_post_read(v, &loc[0], 8, raddr, rkey, q->id, more);
		break;
	case OP_CAS:
		q->cmp = s->cas_known ? s->cas : 0;
		rc = kr_post_cas(v, &loc[0], raddr + 8, rkey, q->cmp, q->val, q->id, more);
		break;
	default:
		q->val &= 0xffff;
		rc = kr_post_faa(v, &loc[0], raddr + 16, rkey, q->val, q->id, more);
		break;
	}
	if (rc == -EAGAIN || rc == -EIO) /* credits, a DCI in recovery, an errored vQP */
		return -EAGAIN;
	if (rc)
		return keeper_gone(th, rc) ? -ENOTCONN : -EAGAIN;
	q->t0 = kr_test_now_ns();
	q->used = true;
	s->busy = true;
	th->ninflight++;
	th->vq_inflight[n]++;
	return 0;
}

/* What a request that failed against a live target knew, to find why. */
static void report_unexpected(const struct thr *th, const struct req *q, const struct kr_wc *wc)
{
	const struct target *tg = &W->t[q->n][q->j];
	struct kr_vqp_attr a = {0};
	uint64_t now = kr_test_now_ns();

	kr_vqp_query(th->vq[q->n], &a);
	report("node %d job %d thread %d: %s to live node %d job %d: %s (gen %u rkey 0x%x, "
	       "published %.1f ms before; vqp dct 0x%x dci 0x%x recoveries %u, connected %.1f "
	       "ms before, epoch %" PRIu64 ")",
	       th->job->node, th->job->idx, th->t, op_name[q->op], q->n, q->j,
	       kr_strerror((int)wc->status), q->gen, q->rkey, (double)(now - tg->pub_ns) / 1e6,
	       a.dctn, a.dci_qpn, a.dci_recoveries, (double)(now - th->vq_t0[q->n]) / 1e6,
	       q->epoch);
}

/* Check the completion of request q against the shadow of its sub-slot. */
static void complete_one(struct thr *th, struct req *q, const struct kr_wc *wc)
{
	struct target *tg = &W->t[q->n][q->j];
	struct shadow *s = &th->sh[q->n][q->j][q->k];
	uint64_t got = th->local[2 * (uint32_t)(q - th->rq)], lat = kr_test_now_ns() - q->t0;

	q->used = false;
	th->ninflight--;
	th->vq_inflight[q->n]--;
	stat_max(&W->st.max_lat_ns, lat);
	if (s->gen != q->gen)
		return; /* the target was replaced meanwhile: nothing to compare */
	s->busy = false;
	if (wc->status != KR_WC_SUCCESS) {
		bool expected = atomic_load(&tg->gen) != q->gen || !atomic_load(&tg->alive) ||
				atomic_load(&W->keeper_epoch[q->n]) != q->epoch ||
				/* connected before its keeper restarted: the DCT it knew is gone */
				th->vq_epoch[q->n] != q->epoch;

		atomic_fetch_add(
		    &W->st.err_by_status[wc->status < KR_WC_STATUS_MAX ? wc->status : 0], 1);
		if (wc->status == KR_WC_WR_FLUSH_ERR) {
			atomic_fetch_add(&W->st.err_flushed, 1);
		} else if (expected) {
			atomic_fetch_add(&W->st.err_expected, 1);
		} else {
			atomic_fetch_add(&W->st.err_unexpected, 1);
			/* a live target refused a request it must take; retries can run
			 * out when 2 cores starve the simulated NICs, a refusal cannot */
			if (wc->status != KR_WC_RETRY_EXC_ERR)
				atomic_fetch_add(&W->st.err_wrong, 1);
			report_unexpected(th, q, wc);
		}
		/* it may have run: the sub-slot is unknown until read again */
		s->data_known = s->cas_known = s->faa_known = false;
		return;
	}
	atomic_fetch_add(&W->st.ok[q->op], 1);
	switch (q->op) {
	case OP_WRITE:
	case OP_WRITE_IMM:
		s->data = q->val;
		s->data_known = true;
		break;
	case OP_READ:
		if (s->data_known && got != s->data) {
			atomic_fetch_add(&W->st.corrupt, 1);
			report("node %d job %d thread %d: READ of node %d job %d gen %u: %" PRIx64
			       ", wrote %" PRIx64,
			       th->job->node, th->job->idx, th->t, q->n, q->j, q->gen, got,
			       s->data);
		}
		s->data = got;
		s->data_known = true;
		break;
	case OP_CAS:
		if (s->cas_known && got != s->cas) {
			atomic_fetch_add(&W->st.corrupt, 1);
			report("CAS on node %d job %d: old %" PRIx64 ", expected %" PRIx64, q->n,
			       q->j, got, s->cas);
		}
		s->cas = got == q->cmp ? q->val : got;
		s->cas_known = true;
		break;
	default:
		if (s->faa_known && got != s->faa) {
			atomic_fetch_add(&W->st.corrupt, 1);
			report("FAA on node %d job %d: old %" PRIx64 ", expected %" PRIx64, q->n,
			       q->j, got, s->faa);
		}
		s->faa = got + q->val;
		s->faa_known = true;
		break;
	}
}

/* Poll every vQP with requests in flight; 0, -ENOTCONN or -ETIMEDOUT. */
static int poll_all(struct thr *th)
{
	uint64_t now = kr_test_now_ns();

	for (int n = 0; n < W->nodes; n++) {
		struct kr_wc wc[WINDOW];
		int got;

		if (!th->vq_inflight[n])
			continue;
		got = kr_poll(th->vq[n], wc, WINDOW);
		if (got < 0)
			return keeper_gone(th, got) ? -ENOTCONN : 0;
		for (int i = 0; i < got; i++) {
			uint32_t s;

			for (s = 0; s < WINDOW; s++)
				if (th->rq[s].used && th->rq[s].id == wc[i].wr_id &&
				    th->rq[s].n == n)
					break;
			if (s == WINDOW) {
				atomic_fetch_add(&W->st.corrupt, 1);
				report("node %d job %d thread %d: completion of a request never "
				       "posted (wr_id %" PRIx64 ")",
				       th->job->node, th->job->idx, th->t, wc[i].wr_id);
				continue;
			}
			complete_one(th, &th->rq[s], &wc[i]);
		}
	}
	for (uint32_t s = 0; s < WINDOW; s++) {
		struct req *q = &th->rq[s];

		if (q->used && now - q->t0 > DEADLINE_NS) {
			atomic_fetch_add(&W->st.stalls, 1);
			report(
			    "node %d job %d thread %d: %s to node %d job %d: no completion in 5 s",
			    th->job->node, th->job->idx, th->t, op_name[q->op], q->n, q->j);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

/*
 * Disconnect a vQP with requests in flight (if the thread has one) and
 * forget them: their sub-slots are unknown (they may have run), their local
 * words marked once kr_disconnect() returned (nothing may write them after).
 */
static void abandon_one(struct thr *th)
{
	int first = (int)(kr_test_splitmix64(&th->rng) % (uint64_t)W->nodes), i, n = 0, rc;

	for (i = 0; i < W->nodes; i++) {
		n = (first + i) % W->nodes;
		if (th->vq[n] && th->vq_inflight[n])
			break;
	}
	if (i == W->nodes)
		return;
	rc = kr_disconnect(th->vq[n]);
	th->vq[n] = NULL;
	if (rc == -ETIMEDOUT) {
		atomic_fetch_add(&W->st.abandon_timeouts, 1);
		report("node %d job %d thread %d: kr_disconnect() to node %d: requests still in "
		       "flight after %u ms",
		       th->job->node, th->job->idx, th->t, n, KR_DISCONNECT_WAIT_MS);
	}
	atomic_fetch_add(&W->st.abandons, 1);
	for (uint32_t s = 0; s < WINDOW; s++) {
		struct req *q = &th->rq[s];
		struct shadow *sh;

		if (!q->used || q->n != n)
			continue;
		sh = &th->sh[q->n][q->j][q->k];
		if (sh->gen == q->gen) {
			sh->busy = false;
			sh->data_known = sh->cas_known = sh->faa_known = false;
		}
		q->used = false;
		th->ninflight--;
		th->local[2 * s] = th->local[2 * s + 1] = ABANDON_MARK;
		atomic_fetch_add(&W->st.abandoned, 1);
	}
	th->vq_inflight[n] = 0;
}

static void *job_thread(void *p)
{
	struct thr *th = p;

	while (!atomic_load(&th->job->keeper_gone)) {
		bool stopping = atomic_load(&W->stop);

		if (stopping && !th->ninflight)
			break;
		if (!stopping && (int)(kr_test_splitmix64(&th->rng) % 100) < W->abandon_pct)
			abandon_one(th);
		/* fill the window, a few tries each round */
		for (uint32_t s = 0, tries = 0; !stopping && s < WINDOW && tries < 4; s++) {
			if (th->rq[s].used)
				continue;
			tries++;
			if (post_one(th, s) == -ENOTCONN)
				break;
		}
		if (poll_all(th))
			break;
	}
	for (int n = 0; n < W->nodes; n++)
		if (th->vq[n])
			kr_disconnect(th->vq[n]);
	return NULL;
}

static int job_main(int node, int idx)
{
	struct target *tg = &W->t[node][idx];
	struct thr th[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	struct job job = {.node = node, .idx = idx};
	struct kr_mr *mr;
	struct kr_mr_key key;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	job.ctx = kp_attach(&K[node], 10000);
	if (!job.ctx) {
		fprintf(stderr, "node %d job %d: attach: %s\n", node, idx, strerror(errno));
		return atomic_load(&W->keeper_down[node]) ? EXIT_KEEPER_GONE : 1;
	}
	job.buf = kr_malloc(job.ctx, BUF_LEN);
	if (!job.buf)
		return 1;
	memset(job.buf, 0, BUF_LEN);
	mr = kr_reg_mr(job.ctx, job.buf, BUF_LEN,
		       KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE |
			   KR_MR_REMOTE_ATOMIC);
	if (!mr || kr_mr_key(mr, &key))
		return 1;
	/* addr and rkey, then the generation, then alive: a writer that sees
	 * alive (seq_cst) sees this job's generation and keys (post_one) */
	tg->addr = key.addr;
	tg->rkey = key.rkey;
	tg->pid = getpid();
	tg->pub_ns = kr_test_now_ns();
	atomic_store(&tg->gen, atomic_fetch_add(&W->gen_seq, 1) + 1);
	atomic_store(&tg->alive, 1);

	for (int t = 0; t < W->threads; t++) {
		memset(&th[t], 0, sizeof(th[t]));
		th[t].job = &job;
		th[t].t = t;
		th[t].rng = ((uint64_t)getpid() << 20) ^ (uint64_t)t ^ kr_test_now_ns();
		th[t].local = kr_malloc(job.ctx, 2 * WINDOW * sizeof(uint64_t));
		if (!th[t].local || pthread_create(&tid[t], NULL, job_thread, &th[t]))
			return 1;
	}
	for (int t = 0; t < W->threads; t++)
		pthread_join(tid[t], NULL);
	if (atomic_load(&job.keeper_gone))
		return EXIT_KEEPER_GONE;
	/* the end of the run: other jobs still have requests in flight to this
	 * buffer; once it is deregistered they fail, as they should, so it is no
	 * longer a live target */
	atomic_store(&tg->alive, 0);
	kr_dereg_mr(mr);
	return kr_detach(job.ctx) ? 1 : 0;
}

/* ---- the conductor ---- */

static pid_t spawn_job(int node, int idx)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(job_main(node, idx));
	return pid;
}

struct opts {
	int nodes, jobs, threads, seconds, kill_ms, abandon_pct;
	bool keeper_restart, pause_keeper;
	const char *faults;
	const char *json;
	int hugepages;
};

static int crashes;

/* Reap a job; anything but a clean exit or an expected end counts as a crash. */
static void reap(pid_t pid, bool killed_by_us, bool keeper_gone)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return;
	if (WIFSIGNALED(status) && killed_by_us && WTERMSIG(status) == SIGKILL)
		return;
	if (WIFEXITED(status) &&
	    (WEXITSTATUS(status) == 0 || (keeper_gone && WEXITSTATUS(status) == EXIT_KEEPER_GONE)))
		return;
	crashes++;
	fprintf(stderr, "chaos_soak: job %d ended with %s %d\n", pid,
		WIFSIGNALED(status) ? "signal" : "status",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static int leases_held(int node)
{
	const char *argv[] = {kp_tool("KRCTL"), "--socket", K[node].sock, "leases", NULL};
	char out[4096];
	const char *p;
	unsigned n;

	if (kp_run(argv, out, sizeof(out), 10) != 0)
		return -1;
	p = strstr(out, " leases held");
	while (p && p > out && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p && sscanf(p, "%u", &n) == 1 ? (int)n : -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: test_virtqp_chaos_soak [--nodes N] [--jobs J] [--threads T] "
			"[--seconds S] [--kill-ms MS] [--abandon-pct P] [--faults SPEC] "
			"[--no-keeper-restart] "
			"[--pause-keeper] [--hugepages MB] [--json FILE]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {{"nodes", required_argument, NULL, 'n'},
					   {"jobs", required_argument, NULL, 'j'},
					   {"threads", required_argument, NULL, 't'},
					   {"seconds", required_argument, NULL, 's'},
					   {"kill-ms", required_argument, NULL, 'k'},
					   {"abandon-pct", required_argument, NULL, 'a'},
					   {"faults", required_argument, NULL, 'f'},
					   {"no-keeper-restart", no_argument, NULL, 'R'},
					   {"pause-keeper", no_argument, NULL, 'P'},
					   {"hugepages", required_argument, NULL, 'H'},
					   {"json", required_argument, NULL, 'J'},
					   {NULL, 0, NULL, 0}};
	int c;

	*o = (struct opts){.nodes = 2,
			   .jobs = 2,
			   .threads = 2,
			   .seconds = 20,
			   .kill_ms = 3000,
			   .abandon_pct = 2,
			   .keeper_restart = true,
			   .faults = "drop=0.01,dup=0.005,reorder=0.01",
			   .hugepages = 32};
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->nodes = atoi(optarg);
			break;
		case 'j':
			o->jobs = atoi(optarg);
			break;
		case 't':
			o->threads = atoi(optarg);
			break;
		case 's':
			o->seconds = atoi(optarg);
			break;
		case 'k':
			o->kill_ms = atoi(optarg);
			break;
		case 'a':
			o->abandon_pct = atoi(optarg);
			break;
		case 'f':
			o->faults = optarg;
			break;
		case 'R':
			o->keeper_restart = false;
			break;
		case 'P':
			o->pause_keeper = true;
			break;
		case 'H':
			o->hugepages = atoi(optarg);
			break;
		case 'J':
			o->json = optarg;
			break;
		default:
			usage();
		}
	}
	if (o->nodes < 1 || o->nodes > MAX_NODES || o->jobs < 1 || o->jobs > MAX_JOBS ||
	    o->threads < 1 || o->threads > MAX_THREADS || o->seconds < 1 || o->kill_ms < 0 ||
	    o->abandon_pct < 0 || o->abandon_pct > 100 || o->hugepages < 8)
		usage();
}

static void start_keeper(const struct opts *o, int n, uint16_t port, uint16_t mport)
{
	char dev[256], node[16], jobs[16], ms[32], hp[16];
	const char *args[32];
	int a = 0;

	/* keeper device names hold 63 bytes: keep the spec short */
	snprintf(dev, sizeof(dev), "sim:c%d@127.0.0.%d:%u%s%s", n + 1, n + 2, port,
		 o->faults[0] ? "," : "", o->faults);
	snprintf(node, sizeof(node), "%d", n + 1);
	snprintf(jobs, sizeof(jobs), "%d", o->jobs + 1);
	snprintf(ms, sizeof(ms), "127.0.0.2:%u", mport);
	snprintf(hp, sizeof(hp), "%d", o->hugepages);
	args[a++] = "--device";
	args[a++] = dev;
	args[a++] = "--node-id";
	args[a++] = node;
	if (n == 0) {
		args[a++] = "--metaserver";
		args[a++] = "--meta-listen";
	} else {
		args[a++] = "--metaserver-addr";
	}
	args[a++] = ms;
	args[a++] = "--tenants";
	args[a++] = "1";
	args[a++] = "--dcis";
	args[a++] = "16";
	args[a++] = "--jobs";
	args[a++] = jobs;
	args[a++] = "--heap-mb";
	args[a++] = "2";
	args[a++] = "--hugepages";
	args[a++] = hp;
	args[a] = NULL;
	CHECK_OK(kp_keeper_start(&K[n], args));
}

static void print_summary(const struct opts *o, double secs, int leases_left)
{
	struct stats *s = &W->st;
	uint64_t total = 0, nn = atomic_load(&s->keeper_notice_n);
	FILE *f;

	for (int i = 0; i < OP_N; i++)
		total += atomic_load(&s->ok[i]);
	printf("chaos_soak: %d nodes x %d jobs x %d threads, %.0f s, faults %s\n", o->nodes,
	       o->jobs, o->threads, secs, o->faults);
	printf("  %-22s %12s\n", "what", "count");
	for (int i = 0; i < OP_N; i++)
		printf("  %-22s %12" PRIu64 "\n", op_name[i], atomic_load(&s->ok[i]));
	printf("  %-22s %12" PRIu64 "\n", "errors expected", atomic_load(&s->err_expected));
	printf("  %-22s %12" PRIu64 "\n", "errors unexpected", atomic_load(&s->err_unexpected));
	printf("    %-20s %12" PRIu64 "\n", "not retry exhaustion", atomic_load(&s->err_wrong));
	printf("  %-22s %12" PRIu64 "\n", "flushed after errors", atomic_load(&s->err_flushed));
	for (int i = 1; i < KR_WC_STATUS_MAX; i++)
		if (atomic_load(&s->err_by_status[i]))
			printf("    %-20s %12" PRIu64 "\n", kr_strerror(i),
			       atomic_load(&s->err_by_status[i]));
	printf("  %-22s %12" PRIu64 " (%" PRIu64 " requests; %" PRIu64 " timed out)\n", "abandons",
	       atomic_load(&s->abandons), atomic_load(&s->abandoned),
	       atomic_load(&s->abandon_timeouts));
	printf("  %-22s %12" PRIu64 "\n", "corruptions", atomic_load(&s->corrupt));
	printf("  %-22s %12" PRIu64 "\n", "stalls (> 5 s)", atomic_load(&s->stalls));
	printf("  %-22s %12d\n", "crashes", crashes);
	printf("  %-22s %12d\n", "leases left", leases_left);
	printf("  %-22s %12.3f\n", "max latency (ms)", atomic_load(&s->max_lat_ns) / 1e6);
	if (nn)
		printf("  %-22s %12.1f (max %.1f, %" PRIu64 " jobs)\n", "dead keeper seen (ms)",
		       atomic_load(&s->keeper_notice_sum_ns) / 1e6 / (double)nn,
		       atomic_load(&s->keeper_notice_max_ns) / 1e6, nn);
	if (!o->json)
		return;
	f = fopen(o->json, "w");
	CHECK(f != NULL);
	fprintf(f, "{\"nodes\": %d, \"jobs\": %d, \"threads\": %d, \"seconds\": %.1f, ", o->nodes,
		o->jobs, o->threads, secs);
	fprintf(f, "\"faults\": \"%s\", \"ops\": %" PRIu64 ", ", o->faults, total);
	for (int i = 0; i < OP_N; i++)
		fprintf(f, "\"%s\": %" PRIu64 ", ", op_name[i], atomic_load(&s->ok[i]));
	fprintf(f,
		"\"errors_expected\": %" PRIu64 ", \"errors_unexpected\": %" PRIu64
		", \"errors_wrong\": %" PRIu64 ", \"abandons\": %" PRIu64
		", \"abandoned\": %" PRIu64 ", \"abandon_timeouts\": %" PRIu64
		", \"corruptions\": %" PRIu64 ", \"stalls\": %" PRIu64
		", \"crashes\": %d, \"leases_left\": %d, \"max_latency_ms\": %.3f, "
		"\"dead_keeper_seen_ms_avg\": %.1f, \"dead_keeper_seen_ms_max\": %.1f}\n",
		atomic_load(&s->err_expected), atomic_load(&s->err_unexpected),
		atomic_load(&s->err_wrong), atomic_load(&s->abandons), atomic_load(&s->abandoned),
		atomic_load(&s->abandon_timeouts), atomic_load(&s->corrupt),
		atomic_load(&s->stalls), crashes, leases_left, atomic_load(&s->max_lat_ns) / 1e6,
		nn ? atomic_load(&s->keeper_notice_sum_ns) / 1e6 / (double)nn : 0.0,
		atomic_load(&s->keeper_notice_max_ns) / 1e6);
	CHECK_OK(fclose(f));
}

int main(int argc, char **argv)
{
	static const char *const addrs[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5",
					    "127.0.0.6", "127.0.0.7", "127.0.0.8", "127.0.0.9"};
	pid_t pids[MAX_NODES][MAX_JOBS];
	struct opts o;
	uint64_t t0, end, next_kill, rng = 0x5eed;
	bool restarted = false, paused = false;
	uint16_t port;
	int leases_left = 0;

	parse(argc, argv, &o);
	kp_require_hugepages((unsigned)(o.nodes * o.hugepages / 2));
	kp_tool("KRCTL");
	port = mp_pick_port(addrs, o.nodes);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.2..");
	W = mmap(NULL, sizeof(*W), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(W != MAP_FAILED);
	memset(W, 0, sizeof(*W));
	W->nodes = o.nodes;
	W->jobs = o.jobs;
	W->threads = o.threads;
	W->abandon_pct = o.abandon_pct;
	for (int n = 0; n < o.nodes; n++) {
		kp_keeper_init(&K[n]);
		start_keeper(&o, n, port, (uint16_t)(port + 1));
	}
	for (int n = 0; n < o.nodes; n++)
		for (int j = 0; j < o.jobs; j++)
			pids[n][j] = spawn_job(n, j);

	t0 = kr_test_now_ns();
	end = t0 + (uint64_t)o.seconds * 1000000000ull;
	next_kill = o.kill_ms ? t0 + (uint64_t)o.kill_ms * 1000000ull : UINT64_MAX;
	while (kr_test_now_ns() < end) {
		uint64_t now = kr_test_now_ns();

		if (now >= next_kill) {
			int n = (int)(kr_test_splitmix64(&rng) % (uint64_t)o.nodes);
			int j = (int)(kr_test_splitmix64(&rng) % (uint64_t)o.jobs);

			if (!atomic_load(&W->keeper_down[n])) {
				atomic_store(&W->t[n][j].alive, 0);
				kill(pids[n][j], SIGKILL);
				reap(pids[n][j], true, false);
				pids[n][j] = spawn_job(n, j);
			}
			next_kill = now + (uint64_t)o.kill_ms * 1000000ull;
		}
		if (o.pause_keeper && !paused && o.nodes > 1 &&
		    now >= t0 + (uint64_t)o.seconds * 250000000ull) {
			/* node 1 stops answering for 1 s: its peers' requests to it retry */
			paused = true;
			atomic_fetch_add(&W->keeper_epoch[0], 1);
			atomic_store(&W->keeper_down[0], 1);
			kill(K[0].pid, SIGSTOP);
			usleep(1000000);
			kill(K[0].pid, SIGCONT);
			usleep(300000);
			atomic_store(&W->keeper_down[0], 0);
			atomic_fetch_add(&W->keeper_epoch[0], 1);
		}
		if (o.keeper_restart && !restarted && o.nodes > 1 &&
		    now >= t0 + (uint64_t)o.seconds * 500000000ull) {
			int n = o.nodes - 1;

			restarted = true;
			atomic_fetch_add(&W->keeper_epoch[n], 1);
			atomic_store(&W->keeper_down[n], 1);
			for (int j = 0; j < o.jobs; j++)
				atomic_store(&W->t[n][j].alive, 0);
			atomic_store(&W->keeper_dead_ns[n], kr_test_now_ns());
			kp_keeper_stop(&K[n], SIGKILL);
			/* its jobs must notice on their own (ENOTCONN) and exit */
			for (int j = 0; j < o.jobs; j++)
				reap(pids[n][j], false, true);
			start_keeper(&o, n, port, (uint16_t)(port + 1));
			atomic_store(&W->keeper_dead_ns[n], 0);
			atomic_store(&W->keeper_down[n], 0);
			atomic_fetch_add(&W->keeper_epoch[n], 1);
			for (int j = 0; j < o.jobs; j++)
				pids[n][j] = spawn_job(n, j);
		}
		if (atomic_load(&W->st.stalls) || atomic_load(&W->st.corrupt))
			break;
		usleep(20000);
	}
	atomic_store(&W->stop, 1);
	for (int n = 0; n < o.nodes; n++)
		for (int j = 0; j < o.jobs; j++)
			reap(pids[n][j], false, false);
	for (int n = 0; n < o.nodes; n++) {
		int left = -1;

		/* a SIGKILLed job's leases come back when the keeper reaps it */
		for (double w0 = kp_now_ms(); kp_now_ms() - w0 < 5000; usleep(50000)) {
			left = leases_held(n);
			if (left == 0)
				break;
		}
		if (left != 0) {
			fprintf(stderr, "chaos_soak: node %d keeper holds %d leases\n", n + 1,
				left);
			leases_left += left < 0 ? 1 : left;
		}
	}
	for (int n = 0; n < o.nodes; n++) {
		int st = kp_keeper_stop(&K[n], SIGTERM);

		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			crashes++;
			fprintf(stderr, "chaos_soak: keeper of node %d ended with status 0x%x\n",
				n + 1, st);
		}
		kp_keeper_fini(&K[n]);
	}
	print_summary(&o, (kr_test_now_ns() - t0) / 1e9, leases_left);
	CHECK_EQ(atomic_load(&W->st.corrupt), 0);
	CHECK_EQ(atomic_load(&W->st.err_wrong), 0);
	CHECK_EQ(atomic_load(&W->st.stalls), 0);
	CHECK_EQ(atomic_load(&W->st.abandon_timeouts), 0);
	CHECK(o.abandon_pct == 0 || atomic_load(&W->st.abandons) > 0);
	CHECK_EQ(crashes, 0);
	CHECK_EQ(leases_left, 0);
	KR_PASS("chaos_soak");
}
