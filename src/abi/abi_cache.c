/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node-wide DCT cache in a tenant zone head: set-associative, CLOCK
 * within a set (reference bits set by inserts: readers never write), one
 * seqlock per entry (see struct kr_dct_zone for who writes what). Readers
 * never block: a held or torn entry is a miss. The writer never waits: an
 * entry held is skipped.
 */
#include <errno.h>
#include <string.h>

#include "abi/abi.h"

/* Layout: [struct kr_dct_zone][hands: uint32 per set][entries], 64-byte aligned. */
static uint64_t hands_bytes(void)
{
	return ((uint64_t)KR_DCT_CACHE_SETS * 4 + 63) & ~63ull;
}

uint64_t kr_dct_zone_bytes(void)
{
	return ((sizeof(struct kr_dct_zone) + 63) & ~63ull) + hands_bytes() +
	       (uint64_t)KR_DCT_CACHE_SETS * KR_DCT_CACHE_WAYS * sizeof(struct kr_dct_centry);
}

void kr_dct_zone_init(void *zone, uint64_t off, uint32_t node_id, uint32_t tenant)
{
	struct kr_dct_zone *dz = (struct kr_dct_zone *)((uint8_t *)zone + off);

	memset(dz, 0, kr_dct_zone_bytes());
	dz->node_id = node_id;
	dz->tenant = tenant;
	dz->nsets = KR_DCT_CACHE_SETS;
	dz->ways = KR_DCT_CACHE_WAYS;
	dz->hands_off = off + ((sizeof(*dz) + 63) & ~63ull);
	dz->entries_off = dz->hands_off + hands_bytes();
	/* magic last: a reader seeing it sees the rest */
	__atomic_store_n(&dz->magic, KR_DCT_ZONE_MAGIC, __ATOMIC_RELEASE);
}

static struct kr_dct_centry *set_of(const void *zone, const struct kr_dct_zone *dz,
				    uint32_t node_id)
{
	uint32_t h = node_id * 0x9e3779b1u;

	return (struct kr_dct_centry *)((uintptr_t)zone + dz->entries_off) +
	       (size_t)(h >> 8) % dz->nsets * dz->ways;
}

static uint32_t *hand_of(void *zone, const struct kr_dct_zone *dz, uint32_t node_id)
{
	uint32_t h = node_id * 0x9e3779b1u;

	return (uint32_t *)((uint8_t *)zone + dz->hands_off) + (size_t)(h >> 8) % dz->nsets;
}

static void stat_inc(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* Copy e under its seqlock. true with w filled, false when held or changed. */
static bool entry_read(const struct kr_dct_centry *e, struct kr_dct_wire *w)
{
	uint32_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	const uint64_t *src = (const uint64_t *)(const void *)&e->rec;
	uint64_t *dst = (uint64_t *)(void *)w;

	if (s1 & 1u)
		return false;
	for (size_t i = 0; i < sizeof(*w) / 8; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	/* the copy finished before seq is read again */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == s1;
}

static bool entry_lock(struct kr_dct_centry *e, uint32_t *s)
{
	uint32_t cur = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	if (cur & 1u)
		return false;
	if (!__atomic_compare_exchange_n(&e->seq, &cur, cur + 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return false;
	*s = cur;
	return true;
}

static void entry_store(struct kr_dct_centry *e, const struct kr_dct_wire *w, uint32_t s)
{
	uint64_t *dst = (uint64_t *)(void *)&e->rec;
	const uint64_t *src = (const uint64_t *)(const void *)w;

	for (size_t i = 0; i < sizeof(*w) / 8; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
	/* record bytes before the even seq that publishes them */
	__atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

int kr_dct_cache_lookup(const void *zone, const struct kr_dct_zone *dz, uint32_t node_id,
			struct kr_dct_rec *rec)
{
	const struct kr_dct_centry *set = set_of(zone, dz, node_id);
	struct kr_dct_wire w;

	for (uint32_t i = 0; i < dz->ways; i++) {
		if (__atomic_load_n(&set[i].rec.node_id, __ATOMIC_RELAXED) != node_id ||
		    !entry_read(&set[i], &w) || w.node_id != node_id ||
		    w.tag != __atomic_load_n(&dz->launch_tag, __ATOMIC_RELAXED))
			continue;
		if (kr_dct_rec_decode(&w, rec))
			continue;
		return 0; /* no reference bit: readers never write (CLOCK runs on inserts) */
	}
	return -ENOENT;
}

bool kr_dct_cache_is_static(const void *zone, const struct kr_dct_zone *dz, uint32_t node_id)
{
	const struct kr_dct_centry *set = set_of(zone, dz, node_id);
	struct kr_dct_wire w = {0};

	for (uint32_t i = 0; i < dz->ways; i++)
		if (__atomic_load_n(&set[i].rec.node_id, __ATOMIC_RELAXED) == node_id &&
		    entry_read(&set[i], &w) && w.node_id == node_id && (w.flags & KR_DCT_F_STATIC))
			return true;
	return false;
}

int kr_dct_cache_insert(void *zone, struct kr_dct_zone *dz, const struct kr_dct_rec *rec,
			uint32_t flags)
{
	struct kr_dct_centry *set = set_of(zone, dz, rec->node_id);
	uint32_t *hand = hand_of(zone, dz, rec->node_id);
	struct kr_dct_wire w;
	int victim = -1, rc;
	uint32_t s;

	rc = kr_dct_rec_encode(rec, 0, flags, &w);
	if (rc)
		return rc;
	/* the same node's entry, else an empty one */
	for (uint32_t i = 0; i < dz->ways && victim < 0; i++)
		if (__atomic_load_n(&set[i].rec.node_id, __ATOMIC_RELAXED) == rec->node_id &&
		    set[i].rec.version)
			victim = (int)i;
	for (uint32_t i = 0; i < dz->ways && victim < 0; i++)
		if (!__atomic_load_n(&set[i].rec.version, __ATOMIC_RELAXED))
			victim = (int)i;
	/* CLOCK: clear reference bits until an unreferenced, non-static entry */
	for (uint32_t n = 0; n < 2 * dz->ways && victim < 0; n++) {
		uint32_t i = __atomic_fetch_add(hand, 1, __ATOMIC_RELAXED) % dz->ways;

		if (set[i].rec.flags & KR_DCT_F_STATIC)
			continue;
		if (__atomic_exchange_n(&set[i].ref, 0, __ATOMIC_RELAXED))
			continue;
		victim = (int)i;
		stat_inc(&dz->evictions);
	}
	if (victim < 0 || !entry_lock(&set[victim], &s))
		return -EBUSY;
	/* a static entry is only replaced by another static one */
	if ((set[victim].rec.flags & KR_DCT_F_STATIC) && !(flags & KR_DCT_F_STATIC) &&
	    set[victim].rec.node_id == rec->node_id) {
		__atomic_store_n(&set[victim].seq, s, __ATOMIC_RELEASE);
		return 0;
	}
	entry_store(&set[victim], &w, s);
	__atomic_store_n(&set[victim].ref, 1, __ATOMIC_RELAXED);
	stat_inc(&dz->inserts);
	return 0;
}

bool kr_dct_cache_invalidate(void *zone, struct kr_dct_zone *dz, uint32_t node_id)
{
	struct kr_dct_centry *set = set_of(zone, dz, node_id);
	struct kr_dct_wire empty;
	bool dropped = false;
	uint32_t s;

	memset(&empty, 0, sizeof(empty));
	for (uint32_t i = 0; i < dz->ways; i++) {
		if (__atomic_load_n(&set[i].rec.node_id, __ATOMIC_RELAXED) != node_id ||
		    (set[i].rec.flags & KR_DCT_F_STATIC) || !entry_lock(&set[i], &s))
			continue;
		if (set[i].rec.node_id == node_id && !(set[i].rec.flags & KR_DCT_F_STATIC)) {
			entry_store(&set[i], &empty, s);
			dropped = true;
		} else {
			__atomic_store_n(&set[i].seq, s, __ATOMIC_RELEASE);
		}
	}
	if (dropped)
		stat_inc(&dz->invalidations);
	return dropped;
}

void kr_dct_cache_clear(void *zone, struct kr_dct_zone *dz)
{
	struct kr_dct_centry *e = (struct kr_dct_centry *)((uint8_t *)zone + dz->entries_off);
	struct kr_dct_wire empty;
	uint32_t s;

	memset(&empty, 0, sizeof(empty));
	for (size_t i = 0; i < (size_t)dz->nsets * dz->ways; i++) {
		if (!e[i].rec.version || !entry_lock(&e[i], &s))
			continue;
		entry_store(&e[i], &empty, s);
		stat_inc(&dz->invalidations);
	}
}
