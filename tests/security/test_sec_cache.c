/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_cache: only the keeper writes the node cache. A job of uid 65534 (a
 * tenant of its own) finds its zone head (descriptors, node cache) mapped
 * from a read-only file description: it cannot map it writable, mprotect
 * it, resize it or punch it. It then sends the keeper forged reports: root's
 * tenant's records, a static peer replaced or forgotten, its own node, bad
 * CRCs, and random bytes. Root's job still resolves every static peer to
 * the peers file's record and finds nothing the attacker planted; the one
 * report that is the attacker's own business (a record of its own launch)
 * lands in its own launch's cache only.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "sec_fixture.h"

#define RANDOM_REPORTS 1000u

static struct kp_keeper K;
static uint64_t g_root_tag;

static int report(int conn, uint32_t op, uint32_t node_id, const struct kr_dct_rec *rec,
		  bool bad_crc)
{
	struct kr_msg_cache m = {.op = op, .node_id = node_id};
	struct kr_dct_wire w;

	if (rec) {
		if (kr_dct_rec_encode(rec, 0, KR_DCT_F_STATIC, &w))
			return -1;
		w.crc ^= bad_crc;
		memcpy(m.rec, &w, sizeof(w));
	}
	kr_msg_init(&m.hdr, KR_MSG_CACHE, sizeof(m), 0);
	return kr_msg_send(conn, &m, sizeof(m), NULL, 0);
}

/* A call with a reply: the keeper has handled everything sent before it. */
static int flush(int conn)
{
	struct kr_msg_lease req = {.kind = KR_SLOT_DCI, .index = 0xffffff, .gen = 1};
	struct kr_msg_reply rep;

	kr_msg_init(&req.hdr, KR_MSG_RELEASE, sizeof(req), 99);
	if (kr_msg_call(conn, &req, sizeof(req), &rep, sizeof(rep), NULL, 0, NULL))
		return -1;
	return rep.status == -EINVAL ? 0 : -1;
}

static int attacker(void *arg)
{
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	uint64_t seed = 0x2545f4914f6cdd1dull;
	unsigned int nfds = 0, nro = 0;
	struct kr_dct_rec r;
	int conn;

	(void)arg;
	SEC_EXPECT(rep != NULL);
	conn = sec_attach_raw(K.sock, rep, fds, &nfds, 0);
	SEC_EXPECT(conn >= 0);
	SEC_EXPECT(rep->tenant == 1);

	/* the zone head: read-only, whatever the job tries */
	for (uint32_t i = 0; i < rep->nregions; i++) {
		const struct kr_msg_region *g = &rep->region[i];
		int fd = fds[g->fd_index];
		void *p;

		if (rep->region_role[i] != KR_REGION_ZONE || (g->prot & PROT_WRITE))
			continue;
		nro++;
		SEC_EXPECT(g->va == rep->zone_va); /* the head comes first */
		SEC_EXPECT((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY);
		p = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)g->off);
		SEC_EXPECT(p == MAP_FAILED && errno == EACCES);
		p = mmap(NULL, g->len, PROT_READ, MAP_SHARED, fd, (off_t)g->off);
		SEC_EXPECT(p != MAP_FAILED);
		SEC_EXPECT(mprotect(p, g->len, PROT_READ | PROT_WRITE) == -1 && errno == EACCES);
		munmap(p, g->len);
		SEC_EXPECT(ftruncate(fd, 0) == -1);
		SEC_EXPECT(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) ==
			   -1);
	}
	SEC_EXPECT(nro == 1);

	/* forged reports */
	memset(&r, 0, sizeof(r));
	r.node_id = 9;
	r.tenant = 0; /* root's launch's */
	r.dctn = 0xbad;
	r.tag = g_root_tag;
	SEC_EXPECT(report(conn, KR_CACHE_PUT, 0, &r, false) == 0);
	r.node_id = 77; /* a node root never heard of */
	SEC_EXPECT(report(conn, KR_CACHE_PUT, 0, &r, false) == 0);
	r.tenant = 1;
	r.tag = 0x77;
	r.node_id = 9; /* another launch's static peer */
	SEC_EXPECT(report(conn, KR_CACHE_PUT, 0, &r, false) == 0);
	r.node_id = 78;
	SEC_EXPECT(report(conn, KR_CACHE_PUT, 0, &r, true) == 0);  /* bad CRC */
	SEC_EXPECT(report(conn, KR_CACHE_PUT, 5, &r, false) == 0); /* stray node_id */
	SEC_EXPECT(report(conn, KR_CACHE_FORGET, 9, NULL, false) == 0);
	SEC_EXPECT(report(conn, KR_CACHE_FORGET, 0, NULL, false) == 0);
	r.node_id = 79; /* another launch's record: not in its cache either */
	SEC_EXPECT(report(conn, KR_CACHE_PUT, 0, &r, false) == 0);
	r.node_id = 80; /* its own business: lands in its own launch's cache */
	r.tag = sec_launch()->tag;
	SEC_EXPECT(report(conn, KR_CACHE_PUT, 0, &r, false) == 0);
	for (unsigned int i = 0; i < RANDOM_REPORTS; i++) {
		struct kr_msg_cache m;

		for (size_t b = 0; b < sizeof(m); b += 8) {
			uint64_t v = sec_rnd(&seed);

			memcpy((uint8_t *)&m + b, &v, 8);
		}
		if (i & 1)
			m.op = 1 + (i & 2) / 2;
		kr_msg_init(&m.hdr, KR_MSG_CACHE, sizeof(m), 0);
		SEC_EXPECT(kr_msg_send(conn, &m, sizeof(m), NULL, 0) == 0);
	}
	SEC_EXPECT(flush(conn) == 0);

	/* its own launch's cache: its own report taken, nothing of other launches */
	for (uint32_t i = 0; i < rep->nregions; i++) {
		const struct kr_msg_region *g = &rep->region[i];
		const struct kr_zone_hdr *z;
		const struct kr_dct_zone *dz;
		struct kr_dct_rec got;
		uint8_t *head;

		if (rep->region_role[i] != KR_REGION_ZONE || g->va != rep->zone_va)
			continue;
		head = mmap(NULL, g->len, PROT_READ, MAP_SHARED, fds[g->fd_index], (off_t)g->off);
		SEC_EXPECT(head != MAP_FAILED);
		z = (const struct kr_zone_hdr *)head;
		SEC_EXPECT(z->dct_off && z->dct_off < g->len);
		dz = (const struct kr_dct_zone *)(head + z->dct_off);
		SEC_EXPECT(dz->launch_tag == sec_launch()->tag);
		SEC_EXPECT(kr_dct_cache_lookup(head, dz, 80, &got) == 0 && got.dctn == 0xbad);
		SEC_EXPECT(kr_dct_cache_lookup(head, dz, 9, &got) == -ENOENT);
		SEC_EXPECT(kr_dct_cache_lookup(head, dz, 79, &got) == -ENOENT);
		SEC_EXPECT(kr_dct_cache_lookup(head, dz, 78, &got) == -ENOENT);
		munmap(head, g->len);
	}
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	close(conn);
	free(rep);
	return 0;
}

int main(void)
{
	uint8_t gid9[16] = {[10] = 0xff, [11] = 0xff, [12] = 127, [15] = 9};
	char peers[160], args_peers[160];
	struct kr_dct_rec rec;
	struct kr_launch root;
	struct kr_ctx *ctx;
	FILE *f;

	sec_require_root();
	kp_require_hugepages(16);
	kp_keeper_init(&K);
	CHECK_OK(chmod(K.dir, 0755));
	snprintf(peers, sizeof(peers), "%s/peers", K.dir);
	f = fopen(peers, "w");
	CHECK(f != NULL);
	CHECK_OK(kr_launch_init(NULL, &root)); /* the tests' launch (KR_LAUNCH_KEY) */
	g_root_tag = root.tag;
	fprintf(f,
		"9 127.0.0.9 02:6b:7f:00:00:09 0x%llx 0x1234 0x77 0x5678\n"
		"11 127.0.0.11 02:6b:7f:00:00:0b 0x%llx 0x99\n",
		(unsigned long long)root.tag, (unsigned long long)root.tag);
	fclose(f);
	snprintf(args_peers, sizeof(args_peers), "%s", peers);
	{
		const char *const args[] = {"--tenants",   "2",	       "--dcis",    "2",
					    "--jobs",	   "1",	       "--heap-mb", "2",
					    "--hugepages", "32",       "--group",   "65534",
					    "--peers",	   args_peers, NULL};

		CHECK_OK(kp_keeper_start(&K, args));
	}
	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	CHECK_EQ(ctx->tenant, 0);

	CHECK_EQ(sec_as_nobody(attacker, NULL), 0);

	/* root's tenant: the peers file's records, nothing planted */
	CHECK_OK(kr_dct_resolve(ctx, 9, &rec));
	CHECK_EQ(rec.dctn, 0x1234);
	CHECK(rec.tag == root.tag);
	CHECK(!memcmp(rec.addr.gid, gid9, 16));
	CHECK_OK(kr_dct_resolve(ctx, 11, &rec));
	CHECK_EQ(rec.dctn, 0x99);
	CHECK_ERR(kr_dct_resolve(ctx, 77, &rec), -ENOENT);
	CHECK_ERR(kr_dct_resolve(ctx, 79, &rec), -ENOENT);
	CHECK_OK(kr_detach(ctx));

	CHECK_EQ(kill(K.pid, 0), 0);
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_cache");
}
