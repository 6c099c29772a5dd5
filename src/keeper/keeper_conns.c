/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper's connection table with constant work per accept and close: a
 * stack of free slots, and a count of connections per uid in an
 * open-addressing table (linear probing, backward-shift deletion), so a uid
 * holding thousands of connections costs the next accept nothing extra.
 */
#include <errno.h>
#include <stdlib.h>

#include "keeper/keeper.h"

#define UID_SLOTS (2u * KR_POOL_MAX_CONNS) /* at most half full: one uid per connection */

struct kr_uid_count {
	uid_t uid;
	uint32_t n; /* 0: empty */
};

struct kr_conns {
	uint32_t free[KR_POOL_MAX_CONNS];
	uint32_t nfree;
	struct kr_uid_count uid[UID_SLOTS];
};

static uint32_t uid_home(uid_t uid)
{
	return ((uint32_t)uid * 0x9e3779b1u) % UID_SLOTS;
}

/* The entry of uid, or the empty one where it would go. */
static struct kr_uid_count *uid_find(struct kr_conns *t, uid_t uid)
{
	uint32_t i = uid_home(uid);

	while (t->uid[i].n && t->uid[i].uid != uid)
		i = (i + 1) % UID_SLOTS;
	return &t->uid[i];
}

/* Empty entry i and move later entries of its probe run back (Knuth's algorithm R). */
static void uid_remove(struct kr_conns *t, uint32_t i)
{
	uint32_t j = i;

	t->uid[i].n = 0;
	for (;;) {
		uint32_t home;

		j = (j + 1) % UID_SLOTS;
		if (!t->uid[j].n)
			return;
		home = uid_home(t->uid[j].uid);
		/* j's entry may fill hole i unless its home lies cyclically in (i, j] */
		if ((i <= j) ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		t->uid[i] = t->uid[j];
		t->uid[j].n = 0;
		i = j;
	}
}

int kr_keeper_conns_init(struct kr_keeper *k)
{
	k->conn = calloc(KR_POOL_MAX_CONNS, sizeof(*k->conn));
	k->conns = calloc(1, sizeof(*k->conns));
	if (!k->conn || !k->conns)
		return -ENOMEM;
	for (uint32_t i = 0; i < KR_POOL_MAX_CONNS; i++)
		k->conns->free[i] = KR_POOL_MAX_CONNS - 1 - i; /* slot 0 first */
	k->conns->nfree = KR_POOL_MAX_CONNS;
	return 0;
}

void kr_keeper_conns_fini(struct kr_keeper *k)
{
	free(k->conn);
	free(k->conns);
	k->conn = NULL;
	k->conns = NULL;
}

int kr_keeper_conn_slot_get(struct kr_keeper *k, uid_t uid, uint32_t limit, uint32_t *slot)
{
	struct kr_conns *t = k->conns;
	struct kr_uid_count *u = uid_find(t, uid);

	if (u->n >= limit)
		return -EUSERS;
	if (!t->nfree)
		return -ENOSPC;
	*slot = t->free[--t->nfree];
	u->uid = uid;
	u->n++;
	return 0;
}

void kr_keeper_conn_slot_put(struct kr_keeper *k, uint32_t slot, uid_t uid)
{
	struct kr_conns *t = k->conns;
	struct kr_uid_count *u = uid_find(t, uid);

	if (u->n && --u->n == 0)
		uid_remove(t, (uint32_t)(u - t->uid));
	t->free[t->nfree++] = slot;
}

uint32_t kr_keeper_conns_of_uid(struct kr_keeper *k, uid_t uid)
{
	return uid_find(k->conns, uid)->n;
}
