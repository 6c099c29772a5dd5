/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_revoke: what a launch leaves on a node dies with it. Root's launch A
 * has two ranks on a node with two tenant slots; each fills its heap with a
 * marker, registers it and WRITEs through a DCI (so the DCI ring holds WQEs
 * carrying A's DC key). Rank 1 detaches: the slot stays A's and rank 2 still
 * works. Rank 2 is SIGKILLed: A's last rank is gone, and the keeper renews
 * the slot (krctl pool: a renewal, a new PD). Then:
 *   - an attacker of uid 65534 (a launch of its own) gets the renewed slot
 *     and finds, in every page the keeper hands it (zone head, DCI rings and
 *     CQs, its heap), neither A's DC key nor A's marker; the zone's key is
 *     its own;
 *   - a new rank of A (the other slot) READs A's old regions with their old
 *     rkeys through its own launch's DC target: every READ fails.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "sec_fixture.h"

#define LEN    4096u
#define MARKER "krcore sec_revoke: launch A's bytes"

static struct kp_keeper K;

struct old_region {
	uint64_t addr;
	uint32_t rkey;
	uint32_t pdn;
};

/* A rank of launch A: marker in its heap, an MR, WRITEs through a DCI; then reports. */
static void rank_a(int out, int in, void *detach_arg)
{
	bool detach = detach_arg != NULL;
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	struct old_region r = {0};
	struct kr_mr_key key;
	struct kr_lease l;
	uint8_t *buf, *src, *dst, *chk;
	struct kr_mr *mr;
	char c;

	if (!ctx)
		_exit(2);
	buf = kr_malloc(ctx, LEN);
	src = kr_malloc(ctx, 64);
	dst = kr_malloc(ctx, 64);
	chk = kr_malloc(ctx, 64);
	if (!buf || !src || !dst || !chk)
		_exit(3);
	for (uint32_t i = 0; i + sizeof(MARKER) <= LEN; i += sizeof(MARKER))
		memcpy(buf + i, MARKER, sizeof(MARKER));
	mr = kr_reg_mr(ctx, buf, LEN, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ);
	if (!mr || kr_mr_key(mr, &key))
		_exit(4);
	if (kr_lease_alloc(ctx, KR_LEASE_DCI, &l) ||
	    kp_dci_write_read(ctx, &l, src, dst, chk, 64, 4, 1))
		_exit(5);
	r.addr = key.addr;
	r.rkey = key.rkey;
	r.pdn = kr_seg_tenant(ctx->seg, ctx->tenant)->pdn;
	if (write(out, &r, sizeof(r)) != sizeof(r) || read(in, &c, 1) != 1)
		_exit(6);
	if (detach) {
		if (kr_detach(ctx))
			_exit(7);
		_exit(0);
	}
	pause(); /* SIGKILLed holding its lease, its MR and its heap */
	_exit(8);
}

/* Renewals of tenant slot 0 (the slot launch A binds first). */
static long long renewals(void)
{
	return kp_krctl_json(&K, "pool", "renewals", 0);
}

/* Does [p, p+len) hold needle anywhere? */
static bool holds(const uint8_t *p, uint64_t len, const void *needle, size_t n)
{
	for (uint64_t i = 0; i + n <= len; i++)
		if (p[i] == *(const uint8_t *)needle && !memcmp(p + i, needle, n))
			return true;
	return false;
}

struct scan {
	uint64_t a_key;
};

static int attacker(void *arg)
{
	const struct scan *sc = arg;
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 0, scanned = 0;
	int conn;

	SEC_EXPECT(rep != NULL);
	conn = sec_attach_raw(K.sock, rep, fds, &nfds, 5000);
	SEC_EXPECT(conn >= 0);
	SEC_EXPECT(rep->tenant == 0); /* the slot A left, renewed */
	for (uint32_t i = 0; i < rep->nregions; i++) {
		const struct kr_msg_region *g = &rep->region[i];
		const uint8_t *p;

		if (rep->region_role[i] == KR_REGION_SEG)
			continue; /* the pool segment: public records only */
		p = mmap(NULL, g->len, PROT_READ, MAP_SHARED, fds[g->fd_index], (off_t)g->off);
		SEC_EXPECT(p != MAP_FAILED);
		SEC_EXPECT(!holds(p, g->len, &sc->a_key, sizeof(sc->a_key)));
		SEC_EXPECT(!holds(p, g->len, MARKER, sizeof(MARKER) - 1));
		if (rep->region_role[i] == KR_REGION_ZONE && g->va == rep->zone_va) {
			const struct kr_zone_hdr *z = (const struct kr_zone_hdr *)p;

			SEC_EXPECT(z->dc_key == sec_launch()->dc_key);
			SEC_EXPECT(z->dctn != 0);
			/* the scan finds a key where there is one */
			SEC_EXPECT(holds(p, g->len, &sec_launch()->dc_key, 8));
		}
		scanned += (unsigned int)(g->len >> 20);
		munmap((void *)(uintptr_t)p, g->len);
	}
	SEC_EXPECT(scanned >= 4); /* zone head, rings, heap: MBs of pages */
	printf("attacker: %u MB of the renewed slot scanned: nothing of launch A\n", scanned);
	fflush(stdout);
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	close(conn);
	free(rep);
	return 0;
}

/* A new rank of A READs each old region with its old rkey: every READ must fail. */
static void old_keys_fail(const struct old_region *old, int n)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	struct kr_vqp *v;
	uint8_t *in;

	CHECK(ctx != NULL);
	in = kr_malloc(ctx, 64);
	CHECK(in != NULL);
	for (int i = 0; i < n; i++) {
		struct kr_wc wc;
		int got = 0;

		v = kr_connect(ctx, KR_NODE_SELF, NULL);
		CHECK(v != NULL);
		CHECK_OK(kr_post_read(v, in, 64, old[i].addr, old[i].rkey, (uint64_t)i, 0));
		for (double t0 = kp_now_ms(); !got && kp_now_ms() - t0 < 10000;)
			got = kr_poll(v, &wc, 1);
		CHECK_EQ(got, 1);
		CHECK(wc.status != KR_WC_SUCCESS);
		printf("old region %d, old rkey 0x%x: %s\n", i, old[i].rkey,
		       kr_strerror(wc.status));
		CHECK_OK(kr_disconnect(v));
	}
	CHECK_OK(kr_detach(ctx));
}

int main(void)
{
	const char *const args[] = {"--tenants", "2",	      "--dcis", "2",	       "--jobs",
				    "2",	 "--heap-mb", "2",	"--hugepages", "48",
				    "--group",	 "65534",     NULL};
	struct old_region old[2];
	struct kr_launch a;
	struct scan sc;
	int go[2], status;
	pid_t p1, p2;
	long long r0;

	sec_keeper_start(&K, args);
	CHECK_OK(kr_launch_init(NULL, &a)); /* root's launch: KR_LAUNCH_KEY */
	CHECK(!a.lone);
	r0 = renewals();
	CHECK_EQ(r0, 0);

	p1 = kp_fork_rank(rank_a, "detach", &old[0], sizeof(old[0]), &go[0]);
	p2 = kp_fork_rank(rank_a, NULL, &old[1], sizeof(old[1]), &go[1]);
	CHECK_EQ(old[0].pdn, old[1].pdn); /* one launch, one slot */

	/* a rank detaches: the launch is still on the node, its other rank works */
	CHECK_EQ(write(go[0], "g", 1), 1);
	CHECK_EQ(waitpid(p1, &status, 0), p1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	usleep(300 * 1000);
	CHECK_EQ(renewals(), 0);

	/* the last rank dies: the slot is renewed */
	CHECK_OK(kill(p2, SIGKILL));
	CHECK_EQ(waitpid(p2, &status, 0), p2);
	for (double t0 = kp_now_ms(); renewals() < 1 && kp_now_ms() - t0 < 10000;)
		usleep(20 * 1000);
	CHECK_EQ(renewals(), 1);

	sc.a_key = a.dc_key;
	CHECK_EQ(sec_as_nobody(attacker, &sc), 0);
	old_keys_fail(old, 2);

	close(go[0]);
	close(go[1]);
	CHECK_EQ(kill(K.pid, 0), 0);
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_revoke");
}
