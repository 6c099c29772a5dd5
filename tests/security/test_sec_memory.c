/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_memory: what a job can do to the pages it may write stays its own
 * problem. Jobs of uid 65534 (a tenant of their own, one job slot) attack:
 *   1. every descriptor they get writable is sealed: ftruncate, which would
 *      SIGBUS the keeper on its next touch, fails with EPERM;
 *   2. a job keeps its heap descriptor and mapping after it detaches: the
 *      next job of the slot gets new pages, which the kept mapping neither
 *      sees nor reaches;
 *   3. a job punches holes in all its zone and heap pages, takes every free
 *      hugepage and detaches: the keeper must touch those pages (reclaim)
 *      with none to fault in. It survives, a root job's WRITEs and READs stay
 *      right meanwhile, and once the hugepages are back the slot is usable.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"

#define LEN	4096u
#define HOG_MAX 4096

static struct kp_keeper K;
static int go_pipe[2]; /* attacker -> root: "I hold the hugepages" */

struct raw {
	struct kr_msg_attach_reply rep;
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds;
	int conn;
};

/* Attach by hand, retrying while the slot is being reclaimed. */
static int raw_attach(struct raw *r, int timeout_ms)
{
	r->conn = sec_attach_raw(K.sock, &r->rep, r->fds, &r->nfds, timeout_ms);
	return r->conn >= 0 ? 0 : -1;
}

static void raw_close(struct raw *r)
{
	for (unsigned int i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	close(r->conn);
}

/* The first region of role: its fd and offset. */
static const struct kr_msg_region *raw_region(const struct raw *r, uint8_t role)
{
	for (uint32_t i = 0; i < r->rep.nregions; i++)
		if (r->rep.region_role[i] == role)
			return &r->rep.region[i];
	return NULL;
}

static void *raw_map(const struct raw *r, const struct kr_msg_region *g)
{
	void *p = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fds[g->fd_index],
		       (off_t)g->off);

	return p == MAP_FAILED ? NULL : p;
}

static bool all(const uint8_t *p, uint8_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static int attacker(void *arg)
{
	static struct raw a, b;
	const struct kr_msg_region *ha, *hb;
	uint8_t *pa, *pb;
	int kept, hog[HOG_MAX], nhog = 0;

	(void)arg;
	/* 1. writable means sealed */
	SEC_EXPECT(raw_attach(&a, 5000) == 0);
	for (unsigned int i = 0; i < a.nfds; i++) {
		int fd = a.fds[i];

		if ((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY)
			continue;
		SEC_EXPECT((fcntl(fd, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW)) ==
			   (F_SEAL_SHRINK | F_SEAL_GROW));
		SEC_EXPECT(ftruncate(fd, 0) == -1 && errno == EPERM);
	}

	/* 2. keep the heap after leaving */
	ha = raw_region(&a, KR_REGION_HEAP);
	SEC_EXPECT(ha != NULL);
	kept = dup(a.fds[ha->fd_index]);
	pa = raw_map(&a, ha);
	SEC_EXPECT(kept >= 0 && pa != NULL);
	memset(pa, 0xa1, LEN);
	raw_close(&a);
	SEC_EXPECT(raw_attach(&b, 5000) == 0);
	hb = raw_region(&b, KR_REGION_HEAP);
	SEC_EXPECT(hb != NULL && hb->va == ha->va); /* the same slot */
	pb = raw_map(&b, hb);
	SEC_EXPECT(pb != NULL);
	SEC_EXPECT(all(pb, 0, LEN)); /* scrubbed */
	memset(pb, 0xb2, LEN);
	SEC_EXPECT(all(pa, 0xa1, LEN)); /* the kept mapping sees only the old pages */
	memset(pa, 0xc3, LEN);
	SEC_EXPECT(all(pb, 0xb2, LEN)); /* and reaches nothing new */
	munmap(pa, ha->len);
	munmap(pb, hb->len);
	close(kept);

	/* 3. hold leases (their reclaim touches the zone), punch every writable
	 * page, take every free hugepage, leave */
	for (uint32_t i = 0; i < 2; i++) {
		struct kr_msg_lease req = {.kind = KR_SLOT_DCI};
		struct kr_msg_reply rep;

		kr_msg_init(&req.hdr, KR_MSG_LEASE, sizeof(req), 2 + i);
		SEC_EXPECT(
		    kr_msg_call(b.conn, &req, sizeof(req), &rep, sizeof(rep), NULL, 0, NULL) == 0 &&
		    rep.status == 0);
	}
	for (uint32_t i = 0; i < b.rep.nregions; i++) {
		const struct kr_msg_region *g = &b.rep.region[i];

		if (g->prot & PROT_WRITE)
			SEC_EXPECT(fallocate(b.fds[g->fd_index],
					     FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					     (off_t)g->off, (off_t)g->len) == 0);
	}
	nhog = kp_hog_hugepages(hog, HOG_MAX);
	raw_close(&b);
	printf("attacker: punched %u pages, holds %d free hugepages\n", b.rep.nregions, nhog);
	fflush(stdout);
	SEC_EXPECT(write(go_pipe[1], "g", 1) == 1);
	usleep(500000); /* the keeper reclaims with no hugepage to spare */
	while (nhog)
		close(hog[--nhog]); /* the mappings go with the process */
	return 0;
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "2",		"--dcis", "4",	     "--jobs", "1", "--heap-mb",
	    "2",	 "--hugepages", "32",	  "--group", "65534",  NULL};
	struct sec_victim v;
	struct raw again;
	pid_t pid;
	char c;

	sec_keeper_start(&K, args);
	CHECK_OK(pipe(go_pipe));
	sec_victim_start(&v, &K);

	pid = sec_spawn_nobody(attacker, NULL);
	close(go_pipe[1]); /* an attacker that fails early: EOF, not a hang */
	CHECK_EQ(read(go_pipe[0], &c, 1), 1);
	/* while the attacker holds every free hugepage */
	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 400;)
		sec_victim_round(&v, 4);
	CHECK_EQ(sec_wait(pid), 0);
	CHECK_EQ(kill(K.pid, 0), 0); /* the keeper is alive */
	sec_victim_round(&v, 10);
	printf("root job: %u rounds verified during the hugepage squeeze\n", v.rounds);
	fflush(stdout);

	/* the attacker's slot comes back once hugepages are free again */
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		sec_drop();
		_exit(raw_attach(&again, 5000) ? 1 : 0);
	}
	CHECK_EQ(sec_wait(pid), 0);

	sec_victim_stop(&v);
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_memory");
}
