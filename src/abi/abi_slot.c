/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MetaServer slots: the single writer's update protocol and the reader's
 * check of a copy taken by one one-sided READ. And a job's copy of its
 * zone's MetaServer list, which the keeper rewrites under a seqlock.
 *
 * The writer is the MetaServer keeper alone (registrations arrive as
 * messages to it; no remote WRITE key exists for the table). A reader has no
 * second look: the whole slot arrives in one READ, possibly torn, possibly
 * copied in any order, so the check stands on the copy alone (seq pair and
 * the record's CRC, see struct kr_dct_slot).
 */
#include <errno.h>
#include <string.h>

#include "abi/abi.h"

void kr_dct_slot_write(struct kr_dct_slot *slot, const struct kr_dct_wire *w)
{
	uint32_t s = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED) & ~1u;
	uint64_t *dst = (uint64_t *)(void *)&slot->rec;
	const uint64_t *src = (const uint64_t *)(const void *)w;

	__atomic_store_n(&slot->seq, s + 1, __ATOMIC_RELAXED);
	/* seq odd visible before any record byte changes */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (size_t i = 0; i < sizeof(*w) / 8; i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
	/* the record complete before seq_end and seq name the new version */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&slot->seq_end, s + 2, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->seq, s + 2, __ATOMIC_RELEASE);
}

/* A copy's seq pair: 0 (a version was written), -EAGAIN (torn or in update), -ENOENT (never). */
static int slot_settled(const struct kr_dct_slot *copy)
{
	if (copy->seq != copy->seq_end || (copy->seq & 1u))
		return -EAGAIN;
	return copy->seq ? 0 : -ENOENT;
}

int kr_dct_slot_check(const struct kr_dct_slot *copy, struct kr_dct_rec *rec)
{
	int rc = slot_settled(copy);

	if (rc)
		return rc;
	if (copy->rec.version == KR_DCT_PORT_VERSION)
		return -ENOMSG;
	/* version 0 under a settled seq: written empty (no launch in the slot) */
	rc = kr_dct_rec_decode(&copy->rec, rec);
	return rc == -EBADMSG ? -EAGAIN : rc;
}

int kr_dct_slot_check_port(const struct kr_dct_slot *copy, struct kr_dct_port_rec *rec)
{
	struct kr_dct_port_wire w;
	int rc = slot_settled(copy);

	if (rc)
		return rc;
	if (copy->rec.version == KR_DCT_REC_VERSION)
		return -ENOMSG;
	_Static_assert(sizeof(w) == sizeof(copy->rec), "a port record fills a slot's record");
	memcpy(&w, &copy->rec, sizeof(w));
	rc = kr_dct_port_decode(&w, rec);
	return rc == -EBADMSG ? -EAGAIN : rc;
}

/* kr_dct_meta_snapshot() - see abi.h: the seqlock reader of the zone's MetaServer list. */
uint32_t kr_dct_meta_snapshot(const struct kr_dct_zone *dz, struct kr_dct_meta_addr *out)
{
	for (int tries = 0; tries < 1000; tries++) {
		uint64_t s1 = __atomic_load_n(&dz->meta_seq, __ATOMIC_ACQUIRE), s2;
		uint32_t n = __atomic_load_n(&dz->nmeta, __ATOMIC_RELAXED);

		if (s1 & 1)
			continue;
		if (n > KR_DCT_MAX_META)
			n = KR_DCT_MAX_META;
		memcpy(out, (const void *)dz->meta, n * sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&dz->meta_seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			return n;
	}
	return 0;
}
