/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MetaServers on simulated hosts over UDP loopback, one keeper each:
 *   node 1 (127.0.0.2): MetaServer, the first replica
 *   node 3 (127.0.0.4): MetaServer, the second replica; registers with node 1
 *   node 2 (127.0.0.3): registers with both; its jobs look peers up
 *   node 4 (127.0.0.5): registers with both; restarted mid-test
 * A job on node 2 resolves node 1 and node 3 with one READ each and gets the
 * records those nodes' own jobs see; a registration storm on one slot never
 * yields a mixed record; node 4's restart (new DCT number and key) is seen
 * after kr_dct_invalidate; with node 1 stopped, lookups fall back to node 3;
 * node 1 restarted (empty, new table and DCT) is re-populated by the keepers'
 * periodic registration, and node 2 reaches it at its new address once node 3
 * is gone too. A connect's lookup reports the record at the job's first
 * empty poll: the node cache holds it then, with the vQP still open.
 * Every job runs in its own process (one attachment per process).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "pool_fixture.h"
#include "sim_mp.h"

#define FAKE_NODE 77u
#define STORM	  400u

struct answer {
	int rc;
	struct kr_dct_rec rec;
	uint64_t hits;
	struct kr_dct_look_stats stats;
	uint64_t reads_after; /* invalidated: READs after 10 more resolves (the fresh record) */
	bool same_after;      /* and they gave the record the first one read */
};

/* In a child attached to k: optionally invalidate, then resolve node. */
static struct answer job_resolve(const struct kp_keeper *k, uint32_t node, bool invalidate)
{
	struct answer a;
	int p[2], status;
	pid_t pid;

	memset(&a, 0, sizeof(a));
	CHECK_OK(pipe(p));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct kr_ctx *ctx = kp_attach(k, 5000);

		close(p[0]);
		if (!ctx)
			_exit(2);
		if (invalidate)
			kr_dct_invalidate(ctx, node);
		a.rc = kr_dct_resolve(ctx, node, &a.rec);
		kr_dct_look_stats_get(&a.stats);
		if (invalidate && !a.rc) {
			struct kr_dct_look_stats st;

			/* the keeper's cache may still hold the stale record: this
			 * process uses what it read, without reading again */
			a.same_after = true;
			for (int i = 0; i < 10; i++) {
				struct kr_dct_rec r;

				a.same_after &= !kr_dct_resolve(ctx, node, &r) &&
						r.dctn == a.rec.dctn && r.tag == a.rec.tag;
			}
			kr_dct_look_stats_get(&st);
			a.reads_after = st.reads;
		}
		if (write(p[1], &a, sizeof(a)) != sizeof(a))
			_exit(3);
		kr_detach(ctx);
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ(read(p[0], &a, sizeof(a)), (ssize_t)sizeof(a));
	close(p[0]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* a lookup READ never fails on our side (the first one of a process once did) */
	CHECK_EQ(a.stats.local_errors, 0);
	return a;
}

static void rec_same(const struct kr_dct_rec *a, const struct kr_dct_rec *b)
{
	CHECK_EQ(a->node_id, b->node_id);
	CHECK_EQ(a->tenant, b->tenant);
	CHECK_EQ(a->dctn, b->dctn);
	CHECK(a->tag == b->tag);
	CHECK(!memcmp(&a->addr, &b->addr, sizeof(a->addr)));
}

/*
 * In a child attached to k: node's record dropped, a kr_connect (one READ)
 * whose report to the keeper waits for the job's next empty poll: not cached
 * after the connect, cached once a kr_poll found nothing, the vQP still
 * open (no disconnect or detach sent it). 0, or the step that failed.
 */
static int held_report(const struct kp_keeper *k, uint32_t node)
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		struct kr_ctx *ctx = kp_attach(k, 5000);
		struct kr_vqp *v;
		struct kr_wc wc;
		double t0;

		if (!ctx)
			_exit(2);
		kr_dct_invalidate(ctx, node);
		for (t0 = kp_now_ms(); kr_dct_cached(ctx, node); usleep(1000))
			if (kp_now_ms() - t0 > 5000)
				_exit(3);
		v = kr_connect(ctx, node, NULL);
		if (!v)
			_exit(4);
		if (kr_dct_cached(ctx, node))
			_exit(5); /* reported inside the connect */
		if (kr_poll(v, &wc, 1) != 0)
			_exit(6);
		for (t0 = kp_now_ms(); !kr_dct_cached(ctx, node); usleep(1000))
			if (kp_now_ms() - t0 > 5000)
				_exit(7); /* the poll did not send it */
		kr_disconnect(v);
		kr_detach(ctx);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The tests' launch (KR_LAUNCH_KEY): what the fake node registers under. */
static uint64_t g_tag;

/* Fake registrations of FAKE_NODE, version v: every field but the tag derived from v. */
static void fake_msg(struct kr_meta_msg *m, uint32_t v)
{
	memset(m, 0, sizeof(*m));
	m->magic = KR_META_MSG_MAGIC;
	m->version = KR_META_MSG_VERSION;
	m->type = KR_META_REGISTER;
	m->seq = v;
	m->node_id = FAKE_NODE;
	m->ntenants = 1;
	m->t[0].dctn = 0x1000 + v;
	m->t[0].tag = g_tag;
	for (int i = 0; i < 16; i++)
		m->addr.gid[i] = (uint8_t)(v * 7 + (uint32_t)i);
	for (int i = 0; i < 6; i++)
		m->addr.mac[i] = (uint8_t)(v * 5 + (uint32_t)i);
}

static bool fake_is_version(const struct kr_dct_rec *r)
{
	struct kr_meta_msg m;
	uint32_t v = r->dctn - 0x1000;

	if (v < 1 || v > STORM * 64)
		return false;
	fake_msg(&m, v);
	return r->node_id == FAKE_NODE && r->tag == g_tag &&
	       !memcmp(&r->addr, &m.addr, sizeof(m.addr));
}

/*
 * Version v of the fake node's registration, sealed with the test's cluster
 * key (kp_cluster_key: the keepers' own), stamped newer than every earlier one.
 */
static size_t fake_sealed(const struct kr_meta_key *key, uint64_t t0, uint32_t v,
			  struct kr_meta_box *box)
{
	struct kr_meta_msg m;

	fake_msg(&m, v);
	m.ts_ns = t0 + v;
	return kr_meta_seal(key, &m, box);
}

/* A storm of registrations of FAKE_NODE at node 1 while jobs on node 2 read it. */
static void storm(const struct kp_keeper *k2, const char *ms_ip, uint16_t ms_port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(ms_port)};
	uint64_t t0 = kr_meta_wall_ns();
	struct kr_meta_key key;
	struct kr_meta_box box;
	uint32_t ok = 0, errs = 0;
	size_t len;
	pid_t writer;
	int fd, status;

	CHECK(inet_pton(AF_INET, ms_ip, &sa.sin_addr) == 1);
	CHECK_OK(kr_meta_key_load(kp_cluster_key(), &key));
	len = fake_sealed(&key, t0, 1, &box);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(fd >= 0);
	CHECK(sendto(fd, &box, len, 0, (struct sockaddr *)&sa, sizeof(sa)) == (ssize_t)len);
	usleep(100000); /* version 1 in place (a miss would only show as ENOENT below) */
	writer = fork();
	CHECK(writer >= 0);
	if (writer == 0) {
		for (uint32_t v = 2; v <= STORM * 64; v++) {
			len = fake_sealed(&key, t0, v, &box);
			if (sendto(fd, &box, len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
				usleep(100);
		}
		_exit(0);
	}
	/* one job, many READs of the slot under update (each after an invalidate) */
	{
		int p[2];
		pid_t pid;

		CHECK_OK(pipe(p));
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			struct kr_ctx *ctx = kp_attach(k2, 5000);
			uint32_t res[2] = {0, 0};

			if (!ctx)
				_exit(2);
			for (uint32_t i = 0; i < STORM; i++) {
				struct kr_dct_rec r;
				int rc;

				kr_dct_invalidate(ctx, FAKE_NODE);
				rc = kr_dct_resolve(ctx, FAKE_NODE, &r);
				if (rc == -EAGAIN) {
					res[1]++;
					continue;
				}
				if (rc || !fake_is_version(&r)) {
					fprintf(stderr,
						"storm: rc %d dctn 0x%x: not a written version\n",
						rc, r.dctn);
					_exit(4);
				}
				res[0]++;
			}
			if (write(p[1], res, sizeof(res)) != sizeof(res))
				_exit(3);
			kr_detach(ctx);
			_exit(0);
		}
		close(p[1]);
		{
			uint32_t res[2];

			CHECK_EQ(read(p[0], res, sizeof(res)), (ssize_t)sizeof(res));
			ok = res[0];
			errs = res[1];
		}
		close(p[0]);
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	CHECK_EQ(waitpid(writer, &status, 0), writer);
	close(fd);
	CHECK(ok > 0);
	printf("storm: %u lookups returned a written version, %u stayed torn (EAGAIN)\n", ok, errs);
}

int main(void)
{
	static const char *const addrs[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"};
	struct kp_keeper k1, k2, k3, k4;
	char dev[4][64], ms1[32], ms3[32], both[64];
	struct answer self1, self3, self4, a;
	struct kp_holder h1, h2, h3, h4, other4;
	uint16_t port, mport;

	kp_require_hugepages(80);
	port = mp_pick_port(addrs, 4);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.2-5");
	mport = (uint16_t)(port + 1);
	for (int i = 0; i < 4; i++)
		snprintf(dev[i], sizeof(dev[i]), "sim:m%d@%s:%u", i + 1, addrs[i], port);
	snprintf(ms1, sizeof(ms1), "127.0.0.2:%u", mport);
	snprintf(ms3, sizeof(ms3), "127.0.0.4:%u", mport);
	snprintf(both, sizeof(both), "%s,%s", ms1, ms3);
#define COMMON "--tenants", "2", "--dcis", "4", "--jobs", "2", "--heap-mb", "2", "--hugepages", "48"
	{
		const char *const a1[] = {
		    "--device",	   dev[0], "--node-id",	    "1", "--metaserver",
		    "--max-nodes", "1024", "--meta-listen", ms1, COMMON,
		    NULL};
		const char *const a3[] = {"--device",
					  dev[2],
					  "--node-id",
					  "3",
					  "--metaserver",
					  "--max-nodes",
					  "1024",
					  "--meta-listen",
					  ms3,
					  "--metaserver-addr",
					  ms1,
					  COMMON,
					  NULL};
		const char *const a2[] = {"--device",	       dev[1], "--node-id", "2",
					  "--metaserver-addr", both,   COMMON,	    NULL};
		const char *const a4[] = {"--device",	       dev[3], "--node-id", "4",
					  "--metaserver-addr", both,   COMMON,	    NULL};

		kp_keeper_init(&k1);
		kp_keeper_init(&k2);
		kp_keeper_init(&k3);
		kp_keeper_init(&k4);
		CHECK_OK(kp_keeper_start(&k1, a1));
		CHECK_OK(kp_keeper_start(&k3, a3));
		CHECK_OK(kp_keeper_start(&k2, a2));
		CHECK_OK(kp_keeper_start(&k4, a4));

		/* the launch has a rank on every node (its node cache lives as long) */
		h1 = kp_hold(&k1);
		h2 = kp_hold(&k2);
		h3 = kp_hold(&k3);
		h4 = kp_hold(&k4);
		/* what each node's own jobs see */
		self1 = job_resolve(&k1, KR_NODE_SELF, false);
		self3 = job_resolve(&k3, KR_NODE_SELF, false);
		self4 = job_resolve(&k4, KR_NODE_SELF, false);
		g_tag = self4.rec.tag; /* the launch every job of the test is in */
		CHECK_OK(self1.rc);
		CHECK_OK(self3.rc);
		CHECK_OK(self4.rc);
		CHECK_EQ(self1.rec.node_id, 1);

		/* node 2 looks up node 1 and node 3: one READ at node 1 each */
		a = job_resolve(&k2, 1, false);
		CHECK_OK(a.rc);
		rec_same(&a.rec, &self1.rec);
		a = job_resolve(&k2, 3, false);
		CHECK_OK(a.rc);
		rec_same(&a.rec, &self3.rec);
		a = job_resolve(&k2, 4, false);
		CHECK_OK(a.rc);
		rec_same(&a.rec, &self4.rec);
		/* a connect's report goes at its first empty poll */
		CHECK_EQ(held_report(&k2, 3), 0);
		/* never registered; beyond the table */
		CHECK_EQ(job_resolve(&k2, 9, false).rc, -ENOENT);
		CHECK_EQ(job_resolve(&k2, 5000, false).rc, -ENOENT);

		/* torn reads under a storm of updates of one slot */
		storm(&k2, "127.0.0.2", mport);

		/* node 4 restarts: new DCT; node 2's cache is stale until invalidated */
		CHECK_EQ(kp_keeper_stop(&k4, SIGTERM), 0);
		kp_hold_release(&h4);
		CHECK_OK(kp_keeper_start(&k4, a4));
		other4 = kp_hold_as(&k4, true); /* so that our launch gets another DCT */
		h4 = kp_hold(&k4);
		a = job_resolve(&k4, KR_NODE_SELF, false);
		CHECK_OK(a.rc);
		CHECK(a.rec.dctn != self4.rec.dctn);
		self4 = a;
		a = job_resolve(&k2, 4, false); /* the cache: still the old record */
		CHECK_OK(a.rc);
		CHECK(a.rec.dctn != self4.rec.dctn);
		a = job_resolve(&k2, 4, true); /* invalidated: read again */
		CHECK_OK(a.rc);
		rec_same(&a.rec, &self4.rec);
		CHECK_EQ(a.stats.reads, 1);
		CHECK_EQ(a.reads_after, 1); /* one READ per error, not one per connect */
		CHECK(a.same_after);

		/* the first MetaServer down: lookups fall back to the replica */
		CHECK_EQ(kp_keeper_stop(&k1, SIGTERM), 0);
		kp_hold_release(&h1);
		a = job_resolve(&k2, 3, true);
		CHECK_OK(a.rc);
		rec_same(&a.rec, &self3.rec);
		a = job_resolve(&k2, 4, true);
		CHECK_OK(a.rc);
		rec_same(&a.rec, &self4.rec);
		/* cached now, by the keeper from the last job's report: no READ */
		a = job_resolve(&k2, 4, false);
		CHECK_OK(a.rc);
		CHECK_EQ(a.stats.hits, 1);
		CHECK_EQ(a.stats.reads, 0);

		/*
		 * The first MetaServer comes back empty, with a new table and DCT:
		 * the keepers register with it again by themselves (every 250 ms)
		 * and take its new address from its reply. Then the replica stops:
		 * node 2 can only resolve node 4 through the restarted one.
		 */
		CHECK_OK(kp_keeper_start(&k1, a1));
		{
			double t0 = kp_now_ms(), took;

			do
				a = job_resolve(&k1, 4, false);
			while (a.rc == -ENOENT && kp_now_ms() - t0 < 10000);
			took = kp_now_ms() - t0;
			CHECK_OK(a.rc);
			rec_same(&a.rec, &self4.rec);
			printf("restarted MetaServer: node 4 registered again after %.0f ms\n",
			       took);
		}
		CHECK_EQ(kp_keeper_stop(&k3, SIGTERM), 0);
		kp_hold_release(&h3);
		{
			double t0 = kp_now_ms();

			do
				a = job_resolve(&k2, 4, true);
			while (a.rc && kp_now_ms() - t0 < 10000);
			CHECK_OK(a.rc);
			rec_same(&a.rec, &self4.rec);
		}

		CHECK_EQ(kp_keeper_stop(&k4, SIGTERM), 0);
		kp_hold_release(&h4);
		kp_hold_release(&other4);
		CHECK_EQ(kp_keeper_stop(&k2, SIGTERM), 0);
		kp_hold_release(&h2);
		CHECK_EQ(kp_keeper_stop(&k1, SIGTERM), 0);
	}
	kp_keeper_fini(&k1);
	kp_keeper_fini(&k2);
	kp_keeper_fini(&k3);
	kp_keeper_fini(&k4);
	KR_PASS("dct_meta");
}
