/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A full mesh across eight simulated hosts (127.0.0.2..9, one keeper each,
 * nodes 1..8), MetaServer replicas on nodes 1 and 2 (every keeper registers
 * with both; they with each other). A job on every node
 * lends a region and connects to every other node through kr_connect; per
 * peer and round it WRITEs and READs back its own slot, WRITE_IMMs and READs
 * back, CASes its own word (the old value must be its last swap) and FAAs the
 * shared counter. After each phase every job checks its own region locally:
 * each writer's last bytes, each writer's CAS word, and the counter against
 * the FAAs that completed.
 *   phase 1  all eight nodes;
 *   phase 2  node 1 (a MetaServer) killed: caches dropped, every lookup goes
 *            to the replica on node 2 and must give the right record (a wrong
 *            one fails the bytes);
 *   phase 3  node 8's keeper restarted (a new DCT number) with a new
 *            job: the others' cached record is stale, their first request
 *            fails, the error drops the entry, and the retry connects and
 *            succeeds.
 * Every job is its own process (one attachment per process).
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_mp.h"
#include "job/job.h"
#include "keeper/meta/meta.h"
#include "vq_fixture.h"

#define NODES	   8
#define ROUNDS	   2
#define REGION	   4096
#define SLOT	   128	/* writer w's bytes at w * SLOT: 64 WRITE + 8 WRITE_IMM */
#define CAS_OFF	   2048 /* writer w's CAS word at CAS_OFF + 8 w */
#define FAA_OFF	   3072 /* the shared counter */
#define BARRIER_MS 60000

struct region {
	uint64_t addr;
	uint32_t rkey;
	uint32_t gen; /* the job's incarnation on that node */
};

struct shared {
	struct mp_barrier bar[6];
	struct region region[NODES + 1];
	_Atomic uint64_t faa_done[NODES + 1]; /* FAAs completed on node t's counter */
	_Atomic uint32_t stale_errors;	      /* phase 3: first requests that failed */
	_Atomic uint32_t retries_ok;	      /* phase 3: retries that succeeded */
	_Atomic uint64_t ops;		      /* requests verified */
	_Atomic uint64_t p2_reads;	      /* phase 2: MetaServer READs (all at node 2) */
	_Atomic uint64_t p2_remote_errors;    /* phase 2: lookups node 1 did not answer */
	_Atomic uint32_t stale_status[KR_WC_STATUS_MAX];
	_Atomic uint64_t stale_us; /* phase 3: slowest failed first request */
};

static struct shared *g_sh;
static struct kp_keeper g_k[NODES + 1];

static uint8_t pat(uint32_t w, uint32_t t, uint32_t round, uint32_t gen, uint32_t i)
{
	return (uint8_t)(w * 31 + t * 7 + round * 3 + gen * 11 + i);
}

/* The WRITE_IMM bytes: another pattern at the same place. */
static uint8_t npat(uint32_t w, uint32_t t, uint32_t round, uint32_t gen, uint32_t i)
{
	return (uint8_t)(0xffu - pat(w, t, round, gen, i));
}

/* The job of node me (incarnation gen): its region and what it posts from. */
struct job {
	uint32_t me, gen;
	struct kr_ctx *ctx;
	uint8_t *region, *buf;
	uint64_t last_cas[NODES + 1]; /* what we last swapped into node t's word */
	bool learn;		      /* a new incarnation: read the words first */
	uint32_t last_round[NODES + 1];
};

/* Wait for the request just posted; an error says which and why (reported). */
static int post_wait(struct kr_vqp *v, int posted, uint64_t wr_id, const char *what, uint32_t me,
		     uint32_t t)
{
	struct kr_wc wc;
	int n;

	if (posted) {
		fprintf(stderr, "node %u -> %u: %s: post: %s\n", me, t, what, strerror(-posted));
		return posted;
	}
	n = vq_wait(v, &wc, 1);
	if (n != 1 || wc.wr_id != wr_id || wc.status != KR_WC_SUCCESS) {
		fprintf(stderr, "node %u -> %u: %s: %s\n", me, t, what,
			n < 0		    ? strerror(-n)
			: n == 0	    ? "no completion in 10 s"
			: wc.wr_id != wr_id ? "completion of another request"
					    : kr_strerror((int)wc.status));
		return -EIO;
	}
	return 0;
}

/* One round of the five operations against peer t over v; 0 or -EIO (reported). */
static int round_ops(struct job *j, struct kr_vqp *v, uint32_t t, uint32_t round)
{
	const struct region *r = &g_sh->region[t];
	uint64_t slot = r->addr + (uint64_t)j->me * SLOT, casw = r->addr + CAS_OFF + 8ull * j->me;
	uint8_t *out = j->buf, *in = j->buf + 256;
	uint64_t *word = (uint64_t *)(void *)(j->buf + 512), swap;
	uint32_t gen = r->gen;

	if (j->learn && round == 0) { /* what our previous incarnation swapped in */
		if (post_wait(v, kr_post_read(v, word, 8, casw, r->rkey, 7, 0), 7, "READ", j->me,
			      t))
			return -EIO;
		j->last_cas[t] = *word;
	}
	for (uint32_t i = 0; i < 64; i++)
		out[i] = pat(j->me, t, round, gen, i);
	if (post_wait(v, kr_post_write(v, out, 64, slot, r->rkey, 1, 0), 1, "WRITE", j->me, t) ||
	    post_wait(v, kr_post_read(v, in, 64, slot, r->rkey, 2, 0), 2, "READ", j->me, t))
		return -EIO;
	if (memcmp(in, out, 64)) {
		fprintf(stderr, "node %u -> %u: READ gave other bytes than written\n", j->me, t);
		return -EIO;
	}
	for (uint32_t i = 0; i < 8; i++)
		out[64 + i] = npat(j->me, t, round, gen, i);
	if (post_wait(v, kr_post_write_imm(v, out + 64, 8, slot + 64, r->rkey, j->me, 3, 0), 3,
		      "WRITE_IMM", j->me, t) ||
	    post_wait(v, kr_post_read(v, in, 8, slot + 64, r->rkey, 4, 0), 4, "READ", j->me, t) ||
	    memcmp(in, out + 64, 8)) {
		fprintf(stderr, "node %u -> %u: WRITE_IMM/READ mismatch\n", j->me, t);
		return -EIO;
	}
	swap = ((uint64_t)j->me << 48) | ((uint64_t)t << 40) | ((uint64_t)gen << 32) | (round + 1);
	if (post_wait(v, kr_post_cas(v, word, casw, r->rkey, j->last_cas[t], swap, 5, 0), 5, "CAS",
		      j->me, t) ||
	    *word != j->last_cas[t]) {
		fprintf(stderr, "node %u -> %u: CAS returned 0x%llx, expected 0x%llx\n", j->me, t,
			(unsigned long long)*word, (unsigned long long)j->last_cas[t]);
		return -EIO;
	}
	j->last_cas[t] = swap;
	if (post_wait(v, kr_post_faa(v, word, r->addr + FAA_OFF, r->rkey, 1, 6, 0), 6, "FAA", j->me,
		      t)) {
		fprintf(stderr, "node %u -> %u: FAA failed\n", j->me, t);
		return -EIO;
	}
	atomic_fetch_add(&g_sh->faa_done[t], 1);
	j->last_round[t] = round;
	atomic_fetch_add(&g_sh->ops, 6);
	return 0;
}

/* Every round against every live peer in [lo, hi] but ourselves. */
static int mesh(struct job *j, uint32_t lo, uint32_t hi)
{
	for (uint32_t round = 0; round < ROUNDS; round++)
		for (uint32_t t = lo; t <= hi; t++) {
			struct kr_vqp *v;
			int rc;

			if (t == j->me)
				continue;
			v = kr_connect(j->ctx, t, NULL);
			if (!v) {
				fprintf(stderr, "node %u -> %u: kr_connect: %s\n", j->me, t,
					strerror(errno));
				return -EIO;
			}
			rc = round_ops(j, v, t, round);
			kr_disconnect(v);
			if (rc)
				return rc;
		}
	return 0;
}

/* Our own region after a phase: each writer's last bytes and CAS word, the counter. */
static int check_region(const struct job *j, uint32_t lo, uint32_t hi)
{
	uint64_t faa = *(volatile uint64_t *)(void *)(j->region + FAA_OFF);

	for (uint32_t w = lo; w <= hi; w++) {
		const uint8_t *s = j->region + (size_t)w * SLOT;
		uint64_t casv = *(const uint64_t *)(const void *)(j->region + CAS_OFF + 8 * w);

		if (w == j->me)
			continue;
		for (uint32_t i = 0; i < 64; i++)
			if (s[i] != pat(w, j->me, ROUNDS - 1, j->gen, i) ||
			    (i < 8 && s[64 + i] != npat(w, j->me, ROUNDS - 1, j->gen, i))) {
				fprintf(stderr, "node %u: writer %u's bytes wrong at %u\n", j->me,
					w, i);
				return -EIO;
			}
		if (casv >> 48 != w || (casv & 0xffffffffu) != ROUNDS) {
			fprintf(stderr, "node %u: writer %u's CAS word 0x%llx\n", j->me, w,
				(unsigned long long)casv);
			return -EIO;
		}
	}
	if (faa != atomic_load(&g_sh->faa_done[j->me])) {
		fprintf(stderr, "node %u: counter %llu, %llu FAAs completed\n", j->me,
			(unsigned long long)faa,
			(unsigned long long)atomic_load(&g_sh->faa_done[j->me]));
		return -EIO;
	}
	return 0;
}

static int job_attach(struct job *j, uint32_t me, uint32_t gen)
{
	struct kr_mr_key key;
	struct kr_mr *mr;

	memset(j, 0, sizeof(*j));
	j->me = me;
	j->gen = gen;
	j->ctx = kp_attach(&g_k[me], 10000);
	if (!j->ctx)
		return -errno;
	j->region = kr_malloc(j->ctx, REGION);
	j->buf = kr_malloc(j->ctx, 1024);
	if (!j->region || !j->buf)
		return -ENOMEM;
	memset(j->region, 0, REGION);
	mr = kr_reg_mr(j->ctx, j->region, REGION,
		       KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE |
			   KR_MR_REMOTE_ATOMIC);
	if (!mr || kr_mr_key(mr, &key))
		return -EIO;
	g_sh->region[me] = (struct region){.addr = key.addr, .rkey = key.rkey, .gen = gen};
	return 0;
}

#define STEP(b)                                                                                    \
	do {                                                                                       \
		if (mp_barrier_wait(&g_sh->bar[b], BARRIER_MS))                                    \
			KR_FAIL("node %u: barrier %d timed out", me, b);                           \
	} while (0)

/*
 * Phase 3 from a survivor: connect to node 8 with its stale record cached.
 * The first request must fail (the old DCT is gone); the error drops the
 * entry, so a new connect reads the MetaServer and the round succeeds.
 */
static int stale_peer(struct job *j)
{
	struct kr_vqp *v = kr_connect(j->ctx, NODES, NULL);
	struct kr_wc wc;
	uint64_t us;
	double t0;
	int n;

	j->last_cas[NODES] = 0; /* a new region */
	if (v) {
		uint8_t *in = j->buf + 256;

		if (kr_post_read(v, in, 8, g_sh->region[NODES].addr, g_sh->region[NODES].rkey, 9,
				 0))
			return -EIO;
		t0 = kp_now_ms();
		n = vq_wait(v, &wc, 1);
		us = (uint64_t)((kp_now_ms() - t0) * 1000);
		kr_disconnect(v);
		if (n != 1)
			return -EIO;
		if (wc.status == KR_WC_SUCCESS) {
			fprintf(stderr, "node %u: a READ through node 8's old DCT succeeded\n",
				j->me);
			return -EIO;
		}
		atomic_fetch_add(&g_sh->stale_errors, 1);
		if (wc.status < KR_WC_STATUS_MAX)
			atomic_fetch_add(&g_sh->stale_status[wc.status], 1);
		for (uint64_t m = atomic_load(&g_sh->stale_us);
		     us > m && !atomic_compare_exchange_weak(&g_sh->stale_us, &m, us);)
			;
	}
	if (mesh(j, NODES, NODES))
		return -EIO;
	atomic_fetch_add(&g_sh->retries_ok, 1);
	return 0;
}

static int job_main(int me, void *arg)
{
	struct kr_dct_look_stats before, after;
	struct job j;

	(void)arg;
	CHECK_OK(job_attach(&j, (uint32_t)me, 1));
	STEP(0); /* every region published */
	CHECK_OK(mesh(&j, 1, NODES));
	STEP(1); /* phase 1 done */
	CHECK_OK(check_region(&j, 1, NODES));
	if (me == 1) { /* its keeper is killed next */
		kr_detach(j.ctx);
		return 0;
	}
	STEP(2); /* node 1 (MetaServer) killed */
	kr_dct_look_stats_get(&before);
	for (uint32_t t = 1; t <= NODES; t++)
		kr_dct_invalidate(j.ctx, t);
	CHECK_OK(mesh(&j, 2, NODES));
	kr_dct_look_stats_get(&after);
	/* every peer looked up again, and node 1 cannot have answered */
	CHECK(after.reads - before.reads >= NODES - 2);
	atomic_fetch_add(&g_sh->p2_reads, after.reads - before.reads);
	atomic_fetch_add(&g_sh->p2_remote_errors, after.remote_errors - before.remote_errors);
	STEP(3);
	CHECK_OK(check_region(&j, 2, NODES));
	if (me == NODES) { /* its keeper restarts next */
		CHECK_OK(kr_detach(j.ctx));
		return 0;
	}
	STEP(4); /* node 8 back, a new job there */
	CHECK_OK(stale_peer(&j));
	STEP(5);
	CHECK_OK(check_region(&j, 2, NODES)); /* with the new job 8's writes */
	kr_detach(j.ctx);
	return 0;
}

/* Node 8's job after its keeper restarted: lends a new region, uses a fresh cache. */
static int job_reborn(int me, void *arg)
{
	struct job j;

	(void)arg;
	CHECK_OK(job_attach(&j, (uint32_t)me, 2));
	j.learn = true;
	STEP(4);
	CHECK_OK(mesh(&j, 2, NODES));
	STEP(5);
	CHECK_OK(check_region(&j, 2, NODES - 1));
	kr_detach(j.ctx);
	return 0;
}

int main(void)
{
	static const char *const addrs[NODES] = {"127.0.0.2", "127.0.0.3", "127.0.0.4",
						 "127.0.0.5", "127.0.0.6", "127.0.0.7",
						 "127.0.0.8", "127.0.0.9"};
	static char dev[NODES + 1][64], id[NODES + 1][8], ms1[32], ms2[32], both[64];
	const char *argv[NODES + 1][20];
	pid_t pids[NODES + 1], reborn;
	struct kp_holder other;
	uint16_t port;
	int me = 0;

	kp_require_hugepages(NODES * 32 + 16);
	g_sh = mmap(NULL, sizeof(*g_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(g_sh != MAP_FAILED);
	memset(g_sh, 0, sizeof(*g_sh));
	mp_barrier_init(&g_sh->bar[0], NODES + 1);
	mp_barrier_init(&g_sh->bar[1], NODES + 1);
	for (int b = 2; b < 6; b++)
		mp_barrier_init(&g_sh->bar[b], NODES); /* node 1's job is gone */

	port = mp_pick_port(addrs, NODES);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.2-9");
	snprintf(ms1, sizeof(ms1), "127.0.0.2:%u", port + 1);
	snprintf(ms2, sizeof(ms2), "127.0.0.3:%u", port + 1);
	snprintf(both, sizeof(both), "%s,%s", ms1, ms2);
	for (int n = 1; n <= NODES; n++) {
		int a = 0;

		snprintf(dev[n], sizeof(dev[n]), "sim:mesh%d@%s:%u", n, addrs[n - 1], port);
		snprintf(id[n], sizeof(id[n]), "%d", n);
		argv[n][a++] = "--device";
		argv[n][a++] = dev[n];
		argv[n][a++] = "--node-id";
		argv[n][a++] = id[n];
		if (n <= 2) {
			argv[n][a++] = "--metaserver";
			argv[n][a++] = "--meta-listen";
			argv[n][a++] = n == 1 ? ms1 : ms2;
		}
		/* both MetaServers hold every node, the two themselves included */
		argv[n][a++] = "--metaserver-addr";
		argv[n][a++] = n == 1 ? ms2 : n == 2 ? ms1 : both;
		for (const char *const *c =
			 (const char *const[]){"--tenants", "2", "--dcis", "4", "--jobs", "2",
					       "--heap-mb", "2", "--hugepages", "48", NULL};
		     *c; c++)
			argv[n][a++] = *c;
		argv[n][a] = NULL;
		kp_keeper_init(&g_k[n]);
		CHECK_OK(kp_keeper_start(&g_k[n], argv[n]));
	}

	for (int n = 1; n <= NODES; n++)
		pids[n] = mp_spawn(job_main, n, NULL);
	STEP(0);
	STEP(1);
	CHECK_EQ(waitpid(pids[1], NULL, 0), pids[1]);
	printf("phase 1: 8 nodes, every pair, %llu requests verified\n",
	       (unsigned long long)atomic_load(&g_sh->ops));
	fflush(stdout);

	kp_keeper_stop(&g_k[1], SIGKILL); /* the first MetaServer */
	STEP(2);
	STEP(3);
	printf(
	    "phase 2: MetaServer on node 1 killed: %llu MetaServer READs (%llu of them to node 1, "
	    "unanswered), %llu requests verified in all\n",
	    (unsigned long long)atomic_load(&g_sh->p2_reads),
	    (unsigned long long)atomic_load(&g_sh->p2_remote_errors),
	    (unsigned long long)atomic_load(&g_sh->ops));
	fflush(stdout); /* before the next fork */

	CHECK_EQ(waitpid(pids[NODES], NULL, 0), pids[NODES]);
	CHECK_EQ(kp_keeper_stop(&g_k[NODES], SIGTERM), 0);
	CHECK_OK(kp_keeper_start(&g_k[NODES], argv[NODES]));
	/* another launch comes first: ours gets another DCT number (same key: same launch) */
	other = kp_hold_as(&g_k[NODES], true);
	g_sh->faa_done[NODES] = 0; /* a new region */
	reborn = mp_spawn(job_reborn, NODES, NULL);
	STEP(4);
	STEP(5);
	pids[1] = reborn; /* wait for it and nodes 2..7 */
	CHECK_EQ(mp_wait(pids + 1, NODES - 1, 60000), 0);
	printf("phase 3: node 8 restarted: %u stale first requests failed, %u retries "
	       "connected and verified; %llu requests verified in all\n",
	       atomic_load(&g_sh->stale_errors), atomic_load(&g_sh->retries_ok),
	       (unsigned long long)atomic_load(&g_sh->ops));
	for (int st = 0; st < KR_WC_STATUS_MAX; st++)
		if (atomic_load(&g_sh->stale_status[st]))
			printf("  stale first request: %u x %s\n",
			       atomic_load(&g_sh->stale_status[st]), kr_strerror(st));
	printf("  slowest stale first request: %.1f ms\n",
	       (double)atomic_load(&g_sh->stale_us) / 1000);
	CHECK_EQ(atomic_load(&g_sh->stale_errors), NODES - 2);
	CHECK_EQ(atomic_load(&g_sh->retries_ok), NODES - 2);
	kp_hold_release(&other);

	for (int n = 2; n <= NODES; n++) {
		CHECK_EQ(kp_keeper_stop(&g_k[n], SIGTERM), 0);
		kp_keeper_fini(&g_k[n]);
	}
	kp_keeper_fini(&g_k[1]);
	KR_PASS("virtqp_mesh");
}
