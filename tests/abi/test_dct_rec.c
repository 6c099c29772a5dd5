/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit: the DCT record (encode/decode, CRC, version), a bound port's record
 * (the same, its ranges, and that a slot tells the two kinds apart), the
 * MetaServer slot's torn-read check under a writer hammering one slot
 * (every accepted copy is a version that was written, never a mix), and the
 * node cache (insert, lookup, CLOCK eviction inside a set, static entries,
 * invalidation).
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"

#define TAG 0x7a6b5c4d3e2f1011ull

static void rec_make(struct kr_dct_rec *r, uint32_t node, uint32_t v)
{
	memset(r, 0, sizeof(*r));
	r->node_id = node;
	r->tenant = 0;
	r->dctn = 0x100 + (v & 0xfffff);
	r->tag = TAG; /* one launch: the node cache holds its records only */
	/* the whole v in the GID: dctn wraps after 2^20 versions (a slow
	 * reader, as under valgrind, sees writers far past that) */
	memcpy(r->addr.gid, &v, sizeof(v));
	for (int i = 4; i < 16; i++)
		r->addr.gid[i] = (uint8_t)(v + (uint32_t)i);
	for (int i = 0; i < 6; i++)
		r->addr.mac[i] = (uint8_t)(v * 7 + (uint32_t)i);
}

/* A version v is recognisable from any of its fields. */
static bool rec_is_version(const struct kr_dct_rec *r, uint32_t node, uint32_t *v)
{
	struct kr_dct_rec want;

	memcpy(v, r->addr.gid, sizeof(*v));
	rec_make(&want, node, *v);
	return !memcmp(&want, r, sizeof(want));
}

static void test_rec(void)
{
	struct kr_dct_rec r, back;
	struct kr_dct_wire w;

	rec_make(&r, 9, 3);
	CHECK_OK(kr_dct_rec_encode(&r, 5, 0, &w));
	CHECK_OK(kr_dct_rec_decode(&w, &back));
	CHECK(!memcmp(&r, &back, sizeof(r)));
	w.tag ^= 1; /* one bit off */
	CHECK_ERR(kr_dct_rec_decode(&w, &back), -EBADMSG);
	w.tag ^= 1;
	w.version = KR_DCT_REC_VERSION + 1;
	CHECK_ERR(kr_dct_rec_decode(&w, &back), -EBADMSG);
	memset(&w, 0, sizeof(w));
	CHECK_ERR(kr_dct_rec_decode(&w, &back), -ENOENT);
	/* InfiniBand: a LID and no MAC, through the same 6 bytes */
	rec_make(&r, 9, 4);
	memset(r.addr.mac, 0, sizeof(r.addr.mac));
	r.addr.lid = 0x1234;
	r.tenant = 63;
	CHECK_OK(kr_dct_rec_encode(&r, 5, KR_DCT_F_STATIC, &w));
	CHECK_EQ(w.flags, KR_DCT_F_STATIC | KR_DCT_F_LID);
	CHECK_OK(kr_dct_rec_decode(&w, &back));
	CHECK(!memcmp(&r, &back, sizeof(r)));
	CHECK_ERR(kr_dct_rec_encode(&r, 0, KR_DCT_F_LID, &w), -EINVAL); /* wire-only flag */
	r.tenant = 256;							/* 8 bits on the wire */
	CHECK_ERR(kr_dct_rec_encode(&r, 0, 0, &w), -EINVAL);
	r.tenant = 0;
	r.dctn = 1u << 24; /* DCT numbers are 24 bits */
	CHECK_ERR(kr_dct_rec_encode(&r, 0, 0, &w), -EINVAL);
	/* CRC32C check value of "123456789" */
	CHECK_EQ(kr_dct_crc32c("123456789", 9), 0xe3069283u);
}

#define NODE 77u
/* A bound port's record: round trip, every bad field, and a slot of each kind read as the other. */
static void test_port_rec(void)
{
	struct kr_dct_port_rec r = {.node_id = 7,
				    .port = 4711,
				    .dctn = 0x1234,
				    .nslots = 16,
				    .tag = TAG,
				    .table_va = 0x200000001000ull,
				    .table_rkey = 0xabcd,
				    .gen = 3},
			       back, bad;
	struct kr_dct_port_wire w;
	struct kr_dct_slot slot;
	struct kr_dct_rec nrec;
	struct kr_dct_wire nw;

	CHECK_OK(kr_dct_port_encode(&r, &w));
	CHECK_EQ(w.version, KR_DCT_PORT_VERSION);
	CHECK_OK(kr_dct_port_decode(&w, &back));
	CHECK(!memcmp(&r, &back, sizeof(r)));
	w.table_va ^= 8; /* one bit off: the CRC */
	CHECK_ERR(kr_dct_port_decode(&w, &back), -EBADMSG);
	w.table_va ^= 8;
	w.version = KR_DCT_REC_VERSION; /* a launch record's version */
	CHECK_ERR(kr_dct_port_decode(&w, &back), -EBADMSG);
	memset(&w, 0, sizeof(w));
	CHECK_ERR(kr_dct_port_decode(&w, &back), -ENOENT);
	/* what encode refuses: port 0 or above 16 bits, dctn 0 or above 24, nslots 0 or above
	 * 1024, no tag */
	for (int i = 0; i < 8; i++) {
		bad = r;
		switch (i) {
		case 0:
			bad.port = 0;
			break;
		case 1:
			bad.port = 0x10000;
			break;
		case 2:
			bad.dctn = 0;
			break;
		case 3:
			bad.dctn = 1u << 24;
			break;
		case 4:
			bad.nslots = 0;
			break;
		case 5:
			bad.nslots = 1025;
			break;
		case 6:
			bad.tag = 0;
			break;
		default:
			CHECK_ERR(kr_dct_port_encode(NULL, &w), -EINVAL);
			continue;
		}
		CHECK_ERR(kr_dct_port_encode(&bad, &w), -EINVAL);
	}
	/* a misaligned table in a record whose CRC holds is still refused */
	CHECK_OK(kr_dct_port_encode(&r, &w));
	w.table_va |= 4;
	w.crc = kr_dct_crc32c(&w, offsetof(struct kr_dct_port_wire, crc));
	CHECK_ERR(kr_dct_port_decode(&w, &back), -EBADMSG);

	/* one slot of each kind: each check takes its own and names the other -ENOMSG */
	memset(&slot, 0, sizeof(slot));
	CHECK_OK(kr_dct_port_encode(&r, &w));
	memcpy(&nw, &w, sizeof(nw));
	kr_dct_slot_write(&slot, &nw);
	CHECK_OK(kr_dct_slot_check_port(&slot, &back));
	CHECK_EQ(back.port, 4711);
	CHECK_ERR(kr_dct_slot_check(&slot, &nrec), -ENOMSG);
	rec_make(&nrec, 9, 1);
	CHECK_OK(kr_dct_rec_encode(&nrec, 1, 0, &nw));
	kr_dct_slot_write(&slot, &nw);
	CHECK_ERR(kr_dct_slot_check_port(&slot, &back), -ENOMSG);
	CHECK_OK(kr_dct_slot_check(&slot, &nrec));
	slot.seq_end++; /* torn */
	CHECK_ERR(kr_dct_slot_check_port(&slot, &back), -EAGAIN);
}

static struct kr_dct_slot g_slot;
static volatile int g_stop;
static uint32_t g_written; /* highest version written so far */

static void *writer(void *arg)
{
	(void)arg;
	for (uint32_t v = 1; !g_stop; v++) {
		struct kr_dct_rec r;
		struct kr_dct_wire w;

		rec_make(&r, NODE, v);
		if (kr_dct_rec_encode(&r, v, 0, &w))
			abort();
		kr_dct_slot_write(&g_slot, &w);
		__atomic_store_n(&g_written, v, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* A copy as a one-sided READ takes it: 8-byte words, no order promised (here backwards). */
static void slot_read(struct kr_dct_slot *copy)
{
	const uint64_t *src = (const uint64_t *)(const void *)&g_slot;
	uint64_t *dst = (uint64_t *)(void *)copy;

	for (int i = (int)(sizeof(*copy) / 8) - 1; i >= 0; i--)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

static void test_torn(void)
{
	unsigned long ok = 0, torn = 0;
	pthread_t th;
	uint32_t last = 0;

	CHECK_OK(-pthread_create(&th, NULL, writer, NULL));
	/* on a loaded machine the writer may start late: read while it writes */
	for (int spins = 0; !__atomic_load_n(&g_written, __ATOMIC_ACQUIRE); spins++) {
		if (spins > 10000)
			KR_FAIL("the writer thread did not write within ~10 s");
		usleep(1000);
	}
	for (int i = 0; i < 300000 || (!ok && i < 30000000); i++) {
		struct kr_dct_slot copy;
		struct kr_dct_rec r;
		uint32_t v, hi;
		int rc;

		slot_read(&copy);
		hi = __atomic_load_n(&g_written, __ATOMIC_ACQUIRE);
		rc = kr_dct_slot_check(&copy, &r);
		if (rc == -EAGAIN || rc == -ENOENT) {
			torn += rc == -EAGAIN;
			continue;
		}
		CHECK_OK(rc);
		/* a whole version that was written: never a mix */
		CHECK(rec_is_version(&r, NODE, &v));
		CHECK(v >= 1 && v <= hi + 1);
		(void)last;
		ok++;
	}
	g_stop = 1;
	pthread_join(th, NULL);
	CHECK(ok > 0);
	printf("torn reads: %lu accepted, %lu refused as torn or in update\n", ok, torn);
}

static void test_cache(void)
{
	uint64_t bytes = kr_dct_zone_bytes();
	uint8_t *zone = aligned_alloc(64, (size_t)(4096 + bytes));
	struct kr_dct_zone *dz;
	struct kr_dct_rec r, got;
	uint32_t same_set[KR_DCT_CACHE_WAYS + 4], n = 0, found = 0;

	CHECK(zone != NULL);
	kr_dct_zone_init(zone, 4096, 3, 0);
	dz = (struct kr_dct_zone *)(zone + 4096);
	CHECK_EQ(dz->magic, KR_DCT_ZONE_MAGIC);
	rec_make(&r, 10, 10);
	CHECK_ERR(kr_dct_cache_lookup(zone, dz, 10, &got), -ENOENT);
	CHECK_OK(kr_dct_cache_insert(zone, dz, &r, 0));
	/* a record is found only by the launch that holds the zone */
	CHECK_ERR(kr_dct_cache_lookup(zone, dz, 10, &got), -ENOENT);
	dz->launch_tag = TAG;
	CHECK_OK(kr_dct_cache_lookup(zone, dz, 10, &got));
	CHECK(!memcmp(&r, &got, sizeof(r)));
	/* replace in place */
	rec_make(&r, 10, 11);
	CHECK_OK(kr_dct_cache_insert(zone, dz, &r, 0));
	CHECK_OK(kr_dct_cache_lookup(zone, dz, 10, &got));
	CHECK_EQ(got.dctn, r.dctn);
	CHECK(kr_dct_cache_invalidate(zone, dz, 10));
	CHECK_ERR(kr_dct_cache_lookup(zone, dz, 10, &got), -ENOENT);
	/* a static entry survives invalidation and eviction */
	rec_make(&r, 20, 20);
	CHECK_OK(kr_dct_cache_insert(zone, dz, &r, KR_DCT_F_STATIC));
	CHECK(!kr_dct_cache_invalidate(zone, dz, 20));
	CHECK_OK(kr_dct_cache_lookup(zone, dz, 20, &got));
	/* more nodes than ways in node 20's set: bounded, static one stays */
	for (uint32_t id = 21; n < KR_DCT_CACHE_WAYS + 4 && id < 10000000; id++)
		if ((id * 0x9e3779b1u >> 8) % KR_DCT_CACHE_SETS ==
		    (20u * 0x9e3779b1u >> 8) % KR_DCT_CACHE_SETS)
			same_set[n++] = id;
	CHECK_EQ(n, KR_DCT_CACHE_WAYS + 4);
	for (uint32_t i = 0; i < n; i++) {
		rec_make(&r, same_set[i], same_set[i]);
		CHECK_OK(kr_dct_cache_insert(zone, dz, &r, 0));
	}
	CHECK_OK(kr_dct_cache_lookup(zone, dz, 20, &got));
	for (uint32_t i = 0; i < n; i++)
		found += !kr_dct_cache_lookup(zone, dz, same_set[i], &got);
	CHECK_EQ(found, KR_DCT_CACHE_WAYS - 1);
	CHECK(dz->evictions >= 4);
	/* a launch leaves: everything goes, static entries too */
	kr_dct_cache_clear(zone, dz);
	CHECK_ERR(kr_dct_cache_lookup(zone, dz, 20, &got), -ENOENT);
	for (uint32_t i = 0; i < n; i++)
		CHECK_ERR(kr_dct_cache_lookup(zone, dz, same_set[i], &got), -ENOENT);
	free(zone);
}

int main(void)
{
	test_rec();
	test_port_rec();
	test_cache();
	test_torn();
	KR_PASS("dct_rec");
}
