/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_krmin_keeper (in the qemu guest, after insmod krmin.ko): krpoold on
 * the sim with --require-kmod, and jobs of two uids that reach their DCIs
 * only through /dev/krmin.
 *
 *  1. fenced: `krctl status` says kmod; job A (uid 65534) and job B (uid
 *     65533, another launch, so another tenant) WRITE and READ through
 *     vQPs, every byte checked. Each DCI A holds rings a UAR page of its
 *     own, mapped from its slot right after its rings (nothing beyond it),
 *     and two DCIs never share one. B cannot map any slot but its own, cannot
 *     claim random tokens or a token A leaks to it; A2 (A's launch, same
 *     tenant) cannot map A's slot and faults writing where A's rings are
 *     in its own address space. A's bytes stay right throughout.
 *  2. SIGKILL mid-post, 20 times: the killed job's DCIs are reset and free
 *     again (median of the time from waitpid to FREE, printed) while B
 *     keeps its traffic going.
 *  3. 4,000 lease/free cycles: the module's slot counts and pinned pages
 *     (/sys/class/misc/krmin/stats) end where they started.
 *  4. rmmod is refused while the keeper runs.
 *  5. keeper SIGKILLed under a job's traffic: the job's next post or poll
 *     returns -ENOTCONN (its zapped mapping's SIGBUS is absorbed), no crash;
 *     then rmmod succeeds.
 *  6. without the module: --require-kmod refuses to start, a keeper without
 *     it runs trusted and says so; the lease cost with and without the
 *     module (medians printed); the module is loaded again.
 *  7. a device without BlueFlame under rdma-core 44 (sim blueflame=0): no
 *     UAR page of its own per DCI exists, so --require-kmod refuses to
 *     start and says why, and a keeper without it runs trusted; under
 *     rdma-core 45 (libmlx5=45) dedicated pages keep it fenced.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <krcore/krmin_uapi.h>

#include "kr_test.h"
#include "krmin_test.h"
#include "pool_fixture.h"

#define UID_A	     65534u
#define UID_B	     65533u
#define GID_JOBS     65534u
#define KEY_A	     "6b72636f7265206b6d6f642074657374206a6f6220412c206e6f207365637265"
#define KEY_B	     "6b72636f7265206b6d6f642074657374206a6f6220422c206e6f207365637265"
#define ROUNDS	     200
#define KILLS	     20
#define CYCLES	     4000 /* each of a tenant's 4 DCIs leased and reset 1,000 times */
#define LEASE_PAIRS  1000
#define KO_PATH	     "/krmin.ko"
#define FREE_WAIT_MS 2000.0

static struct kp_keeper K;

/* ---- small helpers ---- */

static void drop_to(uid_t uid, const char *key)
{
	if (setgroups(0, NULL) || setresgid(GID_JOBS, GID_JOBS, GID_JOBS) ||
	    setresuid(uid, uid, uid) || geteuid() != uid) {
		perror("drop");
		_exit(90);
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setenv("KR_LAUNCH_KEY", key, 1);
}

/*
 * A job is this program again, exec'd as "job NAME IN OUT SOCKET" under uid
 * with launch key: a fresh process (a fork of an attached process cannot
 * attach: the keeper's addresses are taken), talking to the test on IN/OUT.
 */
static pid_t spawn(uid_t uid, const char *key, const char *name, int in, int out)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		char a[16], b[16];

		drop_to(uid, key);
		snprintf(a, sizeof(a), "%d", in);
		snprintf(b, sizeof(b), "%d", out);
		execl("/proc/self/exe", "test_krmin_keeper", "job", name, a, b, K.sock,
		      (char *)NULL);
		perror("exec");
		_exit(91);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int st;

	CHECK_EQ(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A job's traffic: a vQP to its own tenant on this node, a 64-byte target. */
struct traffic {
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	struct kr_mr *mr;
	uint64_t *src, *dst, *chk;
	uint32_t rkey;
	uint64_t seq;
};

static int traffic_start(struct traffic *t)
{
	struct kr_mr_key key;

	memset(t, 0, sizeof(*t));
	t->ctx = kp_attach(&K, 10000);
	if (!t->ctx) {
		fprintf(stderr, "uid %u: attach: %s\n", (unsigned)getuid(), strerror(errno));
		return 10;
	}
	t->src = kr_malloc(t->ctx, 64);
	t->dst = kr_malloc(t->ctx, 64);
	t->chk = kr_malloc(t->ctx, 64);
	if (!t->src || !t->dst || !t->chk)
		return 11;
	t->mr = kr_reg_mr(t->ctx, t->dst, 64,
			  KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE);
	if (!t->mr || kr_mr_key(t->mr, &key))
		return 12;
	t->rkey = key.rkey;
	t->v = kr_connect(t->ctx, KR_NODE_SELF, NULL);
	return t->v ? 0 : 13;
}

/* Disconnect, deregister, detach: kr_detach's return. */
static int traffic_stop(struct traffic *t)
{
	kr_disconnect(t->v);
	kr_dereg_mr(t->mr);
	return kr_detach(t->ctx);
}

/* Wait for one completion: its status, or -errno from kr_poll, or -ETIMEDOUT. */
static int traffic_wait(struct traffic *t)
{
	struct kr_wc wc;
	double t0 = kp_now_ms();

	for (;;) {
		int n = kr_poll(t->v, &wc, 1);

		if (n < 0)
			return n;
		if (n == 1)
			return (int)wc.status;
		if (kp_now_ms() - t0 > 10000)
			return -ETIMEDOUT;
	}
}

/* One WRITE of a fresh value and a READ of it back: 0, or where it went wrong. */
static int traffic_round(struct traffic *t)
{
	int rc;

	*t->src = 0x6b6d6f6400000000ull + ++t->seq;
	rc = kr_post_write(t->v, t->src, 8, (uintptr_t)t->dst, t->rkey, 1, 0);
	if (!rc)
		rc = traffic_wait(t);
	if (!rc)
		rc = kr_post_read(t->v, t->chk, 8, (uintptr_t)t->dst, t->rkey, 2, 0);
	if (!rc)
		rc = traffic_wait(t);
	if (!rc && *t->chk != *t->src)
		rc = 1000;
	return rc;
}

static int traffic_rounds(struct traffic *t, int n)
{
	for (int i = 0; i < n; i++) {
		int rc = traffic_round(t);

		if (rc) {
			fprintf(stderr, "traffic round %d: %d\n", i, rc);
			return 20;
		}
	}
	return 0;
}

/* /sys/class/misc/krmin/stats: the value of name, or -1. */

/* The first DCI lease of ctx's process: its ring address and krmin slot. */
static const struct kr_job_dci *first_dci(const struct kr_ctx *ctx)
{
	for (uint32_t i = 0; i < KR_JOB_MAX_DCIS; i++)
		if (ctx->dci[i].used)
			return &ctx->dci[i];
	return NULL;
}

/* Slots this process's krmin file can map: count (page 0 of each). */
static int mappable_slots(int fd)
{
	int n = 0;

	for (uint32_t s = 0; s < 64; s++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			       (off_t)krmin_mmap_offset(s));

		if (p != MAP_FAILED) {
			munmap(p, 4096);
			n++;
		} else if (errno != EACCES && errno != EINVAL) {
			return -1;
		}
	}
	return n;
}

static int claim(int fd, uint64_t token)
{
	struct krmin_slot_claim c = {
	    .size = sizeof(c), .version = KRMIN_UAPI_VERSION, .token = token};

	return ioctl(fd, KRMIN_IOC_SLOT_CLAIM, &c) ? -errno : 0;
}

/* A DCI lease by hand on ctx's socket: the keeper's reply, token unclaimed. */
static int raw_lease(struct kr_ctx *ctx, struct kr_msg_reply *rep)
{
	struct kr_msg_lease req = {.kind = KR_SLOT_DCI};
	int rc;

	pthread_mutex_lock(&ctx->lock);
	kr_msg_init(&req.hdr, KR_MSG_LEASE, sizeof(req), ++ctx->seq);
	rc = kr_msg_call(ctx->sock, &req, sizeof(req), rep, sizeof(*rep), NULL, 0, NULL);
	pthread_mutex_unlock(&ctx->lock);
	return rc ? rc : rep->status;
}

/* ---- 1. two uids, fenced ---- */

struct pipes {
	int to_child[2];   /* parent -> child */
	int from_child[2]; /* child -> parent */
};

static void pipes_open(struct pipes *p)
{
	CHECK_OK(pipe(p->to_child));
	CHECK_OK(pipe(p->from_child));
}

static int put(int fd, const void *v, size_t n)
{
	return write(fd, v, n) == (ssize_t)n ? 0 : -1;
}

static int get(int fd, void *v, size_t n)
{
	return read(fd, v, n) == (ssize_t)n ? 0 : -1;
}

/* A's DCI jd rings its own page, mapped from its slot, and nothing after it. */
static int own_uar_ok(const struct kr_ctx *ctx, const struct kr_job_dci *jd)
{
	const struct kr_zone_dci *d = kr_zone_dci_at(ctx->zone, jd->lease.index);
	uintptr_t u = jd->uar ? (uintptr_t)jd->uar->base_addr : 0;
	void *past;

	if (!jd->uar || jd->qp.uar != jd->uar || jd->cq.uar != jd->uar ||
	    jd->uar->page_id != d->uar_page || u < ctx->uars_lo || u >= ctx->uars_hi)
		return -1;
	/* the slot ends with the page: nothing of it maps past */
	past = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->krmin_fd,
		    (off_t)(krmin_mmap_offset(jd->krmin_slot) + ctx->dci_block + 4096));
	if (past != MAP_FAILED) {
		munmap(past, 4096);
		return -1;
	}
	return errno == EINVAL ? 0 : -1;
}

/* A second DCI lease rings a page of its own too, not jd's. 0 or an exit code. */
static int second_dci_own_page(struct kr_ctx *ctx, const struct kr_job_dci *jd)
{
	const struct kr_job_dci *j2 = NULL;
	struct kr_lease l2;

	if (kr_lease_alloc(ctx, KR_LEASE_DCI, &l2))
		return 37;
	for (uint32_t i = 0; i < KR_JOB_MAX_DCIS; i++)
		if (ctx->dci[i].used && ctx->dci[i].lease.index == l2.index)
			j2 = &ctx->dci[i];
	if (!j2 || own_uar_ok(ctx, j2) || j2->uar->page_id == jd->uar->page_id ||
	    j2->uar->base_addr == jd->uar->base_addr)
		return 38;
	return kr_lease_free(ctx, &l2) ? 39 : 0;
}

/* What job A tells the others: where its rings are, the token it leaks. */
struct a_report {
	uint64_t ring_va;
	uint64_t leaked_token;
	uint32_t slot_count; /* slots its own file can map */
	uint32_t rsvd;
};

static struct pipes PA, PB, PA2;

static int job_a(int in, int out)
{
	struct traffic t;
	struct a_report r = {0};
	struct kr_msg_reply lr;
	const struct kr_job_dci *jd;
	char go;
	int rc;

	rc = traffic_start(&t);
	if (rc)
		return rc;
	if (t.ctx->krmin_fd < 0)
		return 30; /* the keeper said fenced, or this is not the test it claims */
	rc = traffic_rounds(&t, ROUNDS);
	if (rc)
		return rc;
	jd = first_dci(t.ctx);
	if (!jd)
		return 31;
	if (own_uar_ok(t.ctx, jd))
		return 36;
	rc = second_dci_own_page(t.ctx, jd);
	if (rc)
		return rc;
	r.ring_va = (uintptr_t)jd->qp.sq_buf;
	r.slot_count = (uint32_t)mappable_slots(t.ctx->krmin_fd);
	/* a grant it does not claim: the token B will be handed */
	if (raw_lease(t.ctx, &lr) || !lr.token)
		return 32;
	r.leaked_token = lr.token;
	if (put(out, &r, sizeof(r)) || get(in, &go, 1))
		return 33;
	/* after B tried it, the token is still A's to claim */
	if (claim(t.ctx->krmin_fd, lr.token))
		return 34;
	rc = traffic_rounds(&t, ROUNDS);
	if (rc)
		return rc;
	return traffic_stop(&t) ? 35 : 0;
}

static int job_b(int in, int out)
{
	struct traffic t;
	struct a_report r;
	uint64_t s = 0x243f6a8885a308d3ull;
	int fresh, rc, n;

	rc = traffic_start(&t);
	if (rc)
		return rc;
	rc = traffic_rounds(&t, ROUNDS);
	if (rc)
		return rc;
	if (get(in, &r, sizeof(r)))
		return 40;
	/* its own file maps its own slot and nothing else */
	n = mappable_slots(t.ctx->krmin_fd);
	if (n != 1) {
		fprintf(stderr, "B maps %d slots\n", n);
		return 41;
	}
	/* a file that claimed nothing maps nothing, and cannot take A's token either
	 * (granted to A's process only) */
	fresh = open("/dev/" KRMIN_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (fresh < 0 || mappable_slots(fresh) != 0)
		return 42;
	if (claim(fresh, r.leaked_token) != -EACCES)
		return 47;
	close(fresh);
	/* guessed tokens and A's leaked one (another tenant's) are refused */
	for (int i = 0; i < 1000; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		if (claim(t.ctx->krmin_fd, s) != -EACCES)
			return 43;
	}
	if (claim(t.ctx->krmin_fd, r.leaked_token) != -EACCES)
		return 44;
	rc = traffic_rounds(&t, ROUNDS);
	if (rc)
		return rc;
	put(out, "b", 1);
	return traffic_stop(&t) ? 46 : 0;
}

/* A job of A's own launch (same tenant): A's slot is not its to map or write. */
static int job_a2(int in, int out)
{
	struct kr_ctx *ctx = kp_attach(&K, 10000);
	struct a_report r;
	pid_t pid;
	int st;

	(void)out;
	if (!ctx || ctx->krmin_fd < 0)
		return 50;
	if (get(in, &r, sizeof(r)))
		return 51;
	if (mappable_slots(ctx->krmin_fd) != 0)
		return 52;
	/* A's rings are at the same address here, with no access: a write faults */
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL); /* the kernel's verdict, not ASan's report */
		*(volatile uint64_t *)(uintptr_t)r.ring_va = 0xbad;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st) || WTERMSIG(st) != SIGSEGV)
		return 53;
	return kr_detach(ctx) ? 54 : 0;
}

static void phase_fenced(void)
{
	const char *const argv[] = {kp_tool("KRCTL"), "--socket", K.sock, "status", NULL};
	struct a_report r;
	pid_t a, b, a2;
	char out[4096], c;

	CHECK_EQ(kp_run(argv, out, sizeof(out), 30), 0);
	CHECK(strstr(out, "mode: kmod") != NULL);
	pipes_open(&PA);
	pipes_open(&PB);
	pipes_open(&PA2);
	a = spawn(UID_A, KEY_A, "a", PA.to_child[0], PA.from_child[1]);
	b = spawn(UID_B, KEY_B, "b", PB.to_child[0], PB.from_child[1]);
	a2 = spawn(UID_A, KEY_A, "a2", PA2.to_child[0], PA2.from_child[1]);
	CHECK_OK(get(PA.from_child[0], &r, sizeof(r)));
	CHECK_EQ(r.slot_count, 1u);
	CHECK_OK(put(PB.to_child[1], &r, sizeof(r)));
	CHECK_OK(put(PA2.to_child[1], &r, sizeof(r)));
	CHECK_EQ(wait_status(a2), 0);
	CHECK_OK(get(PB.from_child[0], &c, 1)); /* B is done trying */
	CHECK_OK(put(PA.to_child[1], "g", 1));
	CHECK_EQ(wait_status(b), 0);
	CHECK_EQ(wait_status(a), 0);
	printf(
	    "keeper: two uids, fenced: traffic exact; each DCI rings a UAR page of its own; other "
	    "slots, tokens and rings refused\n");
}

/*
 * A second keeper on the machine (another sim node): the module has one
 * keeper, so it runs trusted and says so; with --require-kmod it refuses.
 */
/* k's log on stderr: the guest's files are gone after the run. */
static void log_show(const struct kp_keeper *k)
{
	char line[512];
	FILE *f = fopen(k->log, "r");

	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "krpoold (%s): %s", k->sock, line);
	if (f)
		fclose(f);
}

/* k's log has needle: 0, else -1 (and the log goes to stderr). */
static int log_has(const struct kp_keeper *k, const char *needle)
{
	char line[512];
	FILE *f = fopen(k->log, "r");
	int rc = -1;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			rc = 0;
	if (f)
		fclose(f);
	if (rc)
		log_show(k);
	return rc;
}

static void phase_second_keeper(void)
{
	const char *const strict[] = {
	    "--require-kmod", "-d", "sim:second", "--tenants", "1",	      "--dcis", "2",
	    "--jobs",	      "1",  "--heap-mb",  "2",	       "--hugepages", "32",	NULL};
	const char *const *plain = strict + 1;
	const char *const argv_status[] = {NULL, "--socket", NULL, "status", NULL};
	struct kp_keeper k2;
	const char *argv[5];
	char out[4096];

	kp_keeper_init(&k2);
	CHECK(kp_keeper_start(&k2, strict) > 0);
	CHECK_OK(log_has(&k2, "another keeper holds it"));
	CHECK_OK(kp_keeper_start(&k2, plain));
	CHECK_OK(log_has(&k2, "this keeper runs without it"));
	memcpy(argv, argv_status, sizeof(argv));
	argv[0] = kp_tool("KRCTL");
	argv[2] = k2.sock;
	CHECK_EQ(kp_run(argv, out, sizeof(out), 30), 0);
	CHECK(strstr(out, "mode: trusted") != NULL);
	CHECK_EQ(kp_keeper_stop(&k2, SIGTERM), 0);
	kp_keeper_fini(&k2);
	printf("keeper: a second keeper runs trusted (the module has one keeper) and says why; "
	       "with --require-kmod it refuses\n");
}

/* ---- 7. a stack that cannot keep UAR pages apart ---- */

static void phase_no_blueflame(void)
{
	const char *const strict[] = {"--require-kmod",
				      "-d",
				      "sim:nobf,blueflame=0",
				      "--tenants",
				      "1",
				      "--dcis",
				      "2",
				      "--jobs",
				      "1",
				      "--heap-mb",
				      "2",
				      "--hugepages",
				      "32",
				      NULL};
	const char *const dedicated[] = {"-v",		"--require-kmod",
					 "-d",		"sim:nobf45,blueflame=0,libmlx5=45",
					 "--tenants",	"1",
					 "--dcis",	"2",
					 "--jobs",	"1",
					 "--heap-mb",	"2",
					 "--hugepages", "32",
					 NULL};
	const char *const *plain = strict + 1;
	struct kp_keeper k2;

	kp_keeper_init(&k2);
	CHECK(kp_keeper_start(&k2, strict) > 0);
	CHECK_OK(log_has(&k2, "--require-kmod cannot keep jobs' doorbells apart"));
	CHECK_OK(kp_keeper_start(&k2, plain));
	CHECK_OK(log_has(&k2, "no UAR page of its own for each DCI"));
	CHECK_OK(log_has(&k2, "trusted mode: jobs can write each other's queues"));
	CHECK_EQ(kp_keeper_stop(&k2, SIGTERM), 0);
	CHECK_OK(kp_keeper_start(&k2, dedicated));
	CHECK_OK(log_has(&k2, "each job maps only the DCIs it leases"));
	CHECK_EQ(kp_keeper_stop(&k2, SIGTERM), 0);
	kp_keeper_fini(&k2);
	printf(
	    "keeper: without BlueFlame, rdma-core 44 cannot give each DCI a page: "
	    "--require-kmod refuses, else trusted; rdma-core 45's dedicated pages stay fenced\n");
}

/* ---- 2. SIGKILL mid-post ---- */

/* Start t's traffic and tell the parent on out that it runs. */
static int traffic_running(struct traffic *t, int out)
{
	int rc = traffic_start(t);

	if (!rc)
		put(out, "r", 1);
	return rc;
}

static int job_loop(int in, int out)
{
	struct traffic t;
	int rc = traffic_running(&t, out);

	if (rc)
		return rc;
	(void)in;
	for (;;) {
		rc = traffic_round(&t);
		if (rc)
			return 60;
	}
}

/* The DCIs job pid holds in the segment (tenant t), into idx; how many. */
static int held_dcis(const struct kr_pool_seg *s, pid_t pid, uint32_t *t, uint32_t *idx, int max)
{
	int n = 0;

	for (uint32_t tt = 0; tt < s->ntenants; tt++)
		for (uint32_t i = 0; i < s->dcis && n < max; i++) {
			const struct kr_pool_slot *d = kr_seg_dci(s, tt, i);

			if (d->state == KR_SLOT_LEASED && d->owner_pid == pid) {
				*t = tt;
				idx[n++] = i;
			}
		}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A rank of launch A that only stays attached: the launch does not leave between kills. */
static int job_hold(int in, int out)
{
	struct kr_ctx *ctx = kp_attach(&K, 10000);
	char c;

	if (!ctx)
		return 80;
	put(out, "h", 1);
	if (read(in, &c, 1) < 0)
		return 81;
	return kr_detach(ctx) ? 82 : 0;
}

/*
 * Launches A and B leave at the end of phase_kill: the keeper renews their
 * tenants (new PD, QPs and pages, so their module slots go and come again).
 * Snapshot: each tenant's renewals, UINT64_MAX for me's and unbound ones.
 */
static void launches_left_snapshot(const struct kr_ctx *me, uint64_t *renewals)
{
	for (uint32_t t = 0; t < me->seg->ntenants; t++) {
		const struct kr_pool_tenant *pt = kr_seg_tenant(me->seg, t);
		uint64_t tag = __atomic_load_n(&pt->launch_tag, __ATOMIC_ACQUIRE);

		renewals[t] = tag && tag != me->launch.tag
				  ? __atomic_load_n(&pt->renewals, __ATOMIC_ACQUIRE)
				  : UINT64_MAX;
	}
}

/* Wait (10 s at most) until every tenant of a launch that left is renewed; how many. */
static int launches_left_wait(const struct kr_ctx *me, const uint64_t *renewals)
{
	int n = 0;

	for (uint32_t t = 0; t < me->seg->ntenants; t++) {
		const struct kr_pool_tenant *pt = kr_seg_tenant(me->seg, t);

		n += renewals[t] != UINT64_MAX;

		for (double t0 = kp_now_ms();
		     renewals[t] != UINT64_MAX &&
		     __atomic_load_n(&pt->renewals, __ATOMIC_ACQUIRE) == renewals[t];
		     usleep(1000))
			if (kp_now_ms() - t0 > 10000)
				KR_FAIL("tenant %u: its launch left, not renewed after 10 s", t);
	}
	return n;
}

static void phase_kill(struct kr_ctx *me)
{
	uint64_t renewals[KR_POOL_MAX_TENANTS];
	double lat[KILLS], back[KILLS];
	struct pipes ph;
	pid_t b = spawn(UID_B, KEY_B, "loop", -1, -1), hold;
	char h;

	pipes_open(&ph);
	hold = spawn(UID_A, KEY_A, "hold", ph.to_child[0], ph.from_child[1]);
	CHECK_OK(get(ph.from_child[0], &h, 1));
	for (int r = 0; r < KILLS; r++) {
		uint32_t idx[8], t = 0;
		int run[2], n = 0;
		double t0;
		char c;
		pid_t a;

		CHECK_OK(pipe(run));
		a = spawn(UID_A, KEY_A, "loop", -1, run[1]);
		close(run[1]);
		if (read(run[0], &c, 1) != 1)
			KR_FAIL("kill round %d: job exited with %d before running", r,
				wait_status(a));
		close(run[0]);
		for (int w = 0; w < 1000 && !n; w++) { /* the lease is in the segment */
			n = held_dcis(me->seg, a, &t, idx, 8);
			if (!n)
				usleep(1000);
		}
		CHECK(n > 0);
		usleep(2000); /* mid-post */
		CHECK_OK(kill(a, SIGKILL));
		CHECK_EQ(wait_status(a), 128 + SIGKILL);
		t0 = kp_now_ms();
		back[r] = -1;
		for (int i = 0; i < n; i++)
			for (;;) {
				uint32_t st = kr_seg_dci(me->seg, t, idx[i])->state;

				if (st != KR_SLOT_LEASED && i == n - 1 && back[r] < 0)
					back[r] = (kp_now_ms() - t0) * 1000.0;
				if (st == KR_SLOT_FREE)
					break;
				if (kp_now_ms() - t0 > FREE_WAIT_MS)
					KR_FAIL(
					    "DCI %u of tenant %u not free %.0f ms after the kill",
					    idx[i], t, FREE_WAIT_MS);
				/* a spinning reader would take a CPU from the keeper */
				usleep(10);
			}
		lat[r] = (kp_now_ms() - t0) * 1000.0;
	}
	qsort(lat, KILLS, sizeof(lat[0]), cmp_double);
	qsort(back, KILLS, sizeof(back[0]), cmp_double);
	printf("keeper: SIGKILL (waitpid) -> lease taken back: median %.1f us, max %.1f us; -> "
	       "DCIs reset and free: min %.1f us, median %.1f us, max %.1f us (%d kills)\n",
	       back[KILLS / 2], back[KILLS - 1], lat[0], lat[KILLS / 2], lat[KILLS - 1], KILLS);
	launches_left_snapshot(me, renewals);
	CHECK_OK(kill(b, SIGKILL)); /* B kept going all along: its loop exits only on error */
	CHECK_EQ(wait_status(b), 128 + SIGKILL);
	CHECK_OK(put(ph.to_child[1], "x", 1));
	CHECK_EQ(wait_status(hold), 0);
	CHECK_EQ(launches_left_wait(me, renewals), 2); /* A's and B's */
}

/* ---- 3. lease/free cycles ---- */

static void wait_settled(const struct kr_pool_seg *s)
{
	double t0 = kp_now_ms();

	for (;;) {
		bool dirty = false;

		for (uint32_t t = 0; t < s->ntenants; t++)
			for (uint32_t i = 0; i < s->dcis; i++)
				dirty |= kr_seg_dci(s, t, i)->state == KR_SLOT_DIRTY;
		if (!dirty && kt_stat("queued") == 0)
			return;
		if (kp_now_ms() - t0 > 5000)
			KR_FAIL("DCIs still being reset after 5 s");
		usleep(1000);
	}
}

/*
 * What a lease costs the job: n kr_lease_alloc + kr_lease_free pairs of DCIs
 * (waits for a reset not counted); prints the medians, in us.
 */
static void lease_cost(struct kr_ctx *ctx, int n, const char *mode)
{
	double *a = calloc((size_t)n, sizeof(*a)), *f = calloc((size_t)n, sizeof(*f));

	CHECK(a && f);
	for (int i = 0; i < n; i++) {
		struct kr_lease l;
		double t0 = kp_now_ms(), t1;
		int rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &l);

		if (rc == -ENOSPC || rc == -EBUSY) {
			usleep(100);
			i--;
			continue;
		}
		CHECK_OK(rc);
		t1 = kp_now_ms();
		CHECK_OK(kr_lease_free(ctx, &l));
		a[i] = (t1 - t0) * 1000.0;
		f[i] = (kp_now_ms() - t1) * 1000.0;
	}
	qsort(a, (size_t)n, sizeof(*a), cmp_double);
	qsort(f, (size_t)n, sizeof(*f), cmp_double);
	printf("keeper: lease cost %s: kr_lease_alloc median %.1f us (p99 %.1f), kr_lease_free "
	       "median %.1f us (p99 %.1f), %d pairs\n",
	       mode, a[n / 2], a[n * 99 / 100], f[n / 2], f[n * 99 / 100], n);
	free(a);
	free(f);
}

/*
 * Offers on me's ready ring no one claimed: leases of the job the keeper made
 * ahead (keeper_ready.c), each with a module grant its token is for.
 */
static long ready_offers(const struct kr_ctx *me)
{
	const struct kr_pool_job *job = kr_seg_job(me->seg, me->job);
	const uint32_t *claim = (const uint32_t *)((const uint8_t *)me->heap +
						   KR_HEAP_READY_CLAIM_OFF);
	uint32_t prod = __atomic_load_n(&job->ready_prod, __ATOMIC_ACQUIRE);
	long n = 0;

	for (uint32_t i = me->ready_taken; i != prod; i++)
		n += __atomic_load_n(&claim[i % KR_JOB_READY_RING], __ATOMIC_ACQUIRE) ==
		     KR_READY_OFFER(i);
	return n;
}

static void phase_cycles(struct kr_ctx *me)
{
	long slots0, pinned0, owned0, granted0;
	double t0 = kp_now_ms();
	int busy = 0;

	struct kr_lease first;

	/* the DCI granted with the attach (a token not yet claimed) goes first */
	CHECK_OK(kr_lease_alloc(me, KR_LEASE_DCI, &first));
	CHECK_OK(kr_lease_free(me, &first));
	wait_settled(me->seg);
	slots0 = kt_stat("slots");
	pinned0 = kt_stat("pinned_pages");
	owned0 = kt_stat("owned");
	granted0 = kt_stat("granted") - ready_offers(me);
	CHECK(slots0 > 0 && pinned0 > 0);
	for (int i = 0; i < CYCLES; i++) {
		struct kr_lease l;
		int rc = kr_lease_alloc(me, KR_LEASE_DCI, &l);

		if (rc == -ENOSPC || rc == -EBUSY) { /* every one being reset */
			busy++;
			usleep(100);
			i--;
			continue;
		}
		CHECK_OK(rc);
		rc = kr_lease_free(me, &l);
		if (rc) {
			const struct kr_pool_slot *d = kr_seg_dci(me->seg, me->tenant, l.index);

			KR_FAIL("cycle %d: free of DCI %u gen %u: %s (slot: state %u owner %u gen "
				"%u; me: job %u)",
				i, l.index, l.gen, strerror(-rc), d->state, d->owner_job, d->gen,
				me->job + 1);
		}
	}
	wait_settled(me->seg);
	lease_cost(me, LEASE_PAIRS, "with the module");
	wait_settled(me->seg);
	printf("keeper: %d lease/free cycles in %.1f s (%d waits for a reset): slots %ld, "
	       "pinned pages %ld, owned %ld, granted %ld, as before\n",
	       CYCLES, (kp_now_ms() - t0) / 1000.0, busy, kt_stat("slots"), kt_stat("pinned_pages"),
	       kt_stat("owned"), kt_stat("granted"));
	CHECK_EQ(kt_stat("slots"), slots0);
	CHECK_EQ(kt_stat("pinned_pages"), pinned0);
	CHECK_EQ(kt_stat("owned"), owned0);
	CHECK_EQ(kt_stat("granted") - ready_offers(me), granted0); /* offers: grants by design */
}

/* ---- 4, 5. unload and a dead keeper ---- */

static int rmmod(void)
{
	return syscall(SYS_delete_module, "krmin", O_NONBLOCK) ? -errno : 0;
}

static int insmod(void)
{
	int fd = open(KO_PATH, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return rc;
}

static int job_until_dead(int in, int out)
{
	struct traffic t;
	int rc = traffic_running(&t, out);

	if (rc)
		return rc;
	(void)in;
	for (;;) {
		rc = traffic_round(&t);
		if (rc == -ENOTCONN)
			break;
		if (rc > 0) /* a completion in error, or bad bytes */
			return 70;
		if (rc == -ETIMEDOUT)
			return 71;
	}
	/* dead for good: every later call says so, nothing blocks */
	if (kr_post_write(t.v, t.src, 8, (uintptr_t)t.dst, t.rkey, 3, 0) != -ENOTCONN)
		return 72;
	return traffic_stop(&t) == -ENOTCONN ? 0 : 73;
}

static void phase_keeper_death(struct kr_ctx *me)
{
	int run[2], st;
	char c;
	pid_t j;

	CHECK_ERR(rmmod(), -EWOULDBLOCK); /* the keeper holds its file */
	CHECK_OK(kr_detach(me));
	CHECK_OK(pipe(run));
	j = spawn(UID_A, KEY_A, "until_dead", -1, run[1]);
	close(run[1]);
	CHECK_EQ(read(run[0], &c, 1), 1);
	close(run[0]);
	usleep(20000);
	st = kp_keeper_stop(&K, SIGKILL);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK_EQ(wait_status(j), 0);
	printf("keeper: killed under traffic: the job got -ENOTCONN, no crash\n");
	CHECK_OK(rmmod());
	printf("keeper: rmmod refused while it ran, then unloaded\n");
}

/* The same keeper without the module: trusted mode, said so; the lease cost for comparison. */
static void phase_trusted(void)
{
	const char *const argv[] = {kp_tool("KRCTL"), "--socket", K.sock, "status", NULL};
	const char *const strict[] = {
	    "--require-kmod", "--tenants", "1",		  "--dcis", "4", "--jobs", "2",
	    "--heap-mb",      "2",	   "--hugepages", "32",	    NULL};
	const char *const *args = strict + 1;
	char out[4096];
	struct kr_ctx *ctx;

	CHECK(kp_keeper_start(&K, strict) > 0); /* refuses to start without the module */
	CHECK_OK(log_has(&K, "load krmin.ko first"));
	CHECK_OK(kp_keeper_start(&K, args));
	CHECK_OK(log_has(&K, "trusted mode: jobs can write each other's queues"));
	CHECK_EQ(kp_run(argv, out, sizeof(out), 30), 0);
	CHECK(strstr(out, "mode: trusted") != NULL);
	ctx = kp_attach(&K, 10000);
	CHECK(ctx != NULL);
	CHECK_EQ(ctx->krmin_fd, -1);
	lease_cost(ctx, LEASE_PAIRS, "without the module (trusted)");
	CHECK_OK(kr_detach(ctx));
	CHECK_OK(WEXITSTATUS(kp_keeper_stop(&K, SIGTERM)));
	CHECK_OK(insmod());
	printf("keeper: module loaded again\n");
}

/* A failed check exits: the keeper must not outlive the test (the unload test follows). */
static void keeper_reap(void)
{
	if (K.pid <= 0)
		return;
	kp_keeper_stop(&K, SIGKILL);
	log_show(&K);
}

static const struct {
	const char *name;
	int (*fn)(int in, int out);
} jobs[] = {{"a", job_a},
	    {"b", job_b},
	    {"a2", job_a2},
	    {"loop", job_loop},
	    {"until_dead", job_until_dead},
	    {"hold", job_hold}};

/* "job NAME IN OUT SOCKET": run one job (see spawn). */
static int job_main(char **argv)
{
	snprintf(K.sock, sizeof(K.sock), "%s", argv[5]);
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		if (!strcmp(argv[2], jobs[i].name))
			return jobs[i].fn(atoi(argv[3]), atoi(argv[4]));
	return 92;
}

int main(int argc, char **argv)
{
	const char *const args[] = {
	    "-v", "--require-kmod", "--tenants", "3",		"--dcis", "4",	     "--jobs",
	    "4",  "--heap-mb",	    "2",	 "--hugepages", "64",	  "--group", "65534",
	    NULL};
	struct kr_ctx *me;

	if (argc == 6 && !strcmp(argv[1], "job"))
		return job_main(argv);
	if (geteuid() != 0)
		KR_SKIP("needs root: jobs are children dropped to uids %u and %u", UID_A, UID_B);
	if (access("/dev/" KRMIN_DEV_NAME, F_OK))
		KR_SKIP("no /dev/%s: runs in the kmod suite's qemu guest", KRMIN_DEV_NAME);
	kp_require_hugepages(16);
	kp_keeper_init(&K);
	CHECK_OK(chmod(K.dir, 0755));
	CHECK_OK(kp_keeper_start(&K, args));
	atexit(keeper_reap);

	phase_fenced();
	phase_second_keeper();
	me = kp_attach(&K, 10000); /* root's own launch: reads the segment */
	CHECK(me != NULL);
	phase_kill(me);
	phase_cycles(me);
	phase_keeper_death(me);
	phase_trusted();
	phase_no_blueflame();
	kp_keeper_fini(&K);
	KR_PASS("test_krmin_keeper");
}
