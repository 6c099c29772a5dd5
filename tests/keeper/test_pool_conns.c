/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper's connection table (keeper_conns.c) against a plain model: random
 * accepts and closes from uids chosen to collide in the per-uid table, with
 * the per-uid limit and the table size reached. Every answer (slot given or
 * -EUSERS / -ENOSPC, the count per uid) must match the model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kr_test.h"
#include "pool_fixture.h"

#define NUIDS 64u
#define LIMIT 80u
#define STEPS 400000u

static uid_t uids[NUIDS];
static uint32_t model_n[NUIDS];
static int slot_uid[KR_POOL_MAX_CONNS]; /* index into uids, -1 free */

int main(void)
{
	struct kr_keeper k;
	uint64_t s = 88172645463325252ull;
	uint32_t held = 0, refused_uid = 0, refused_full = 0;

	memset(&k, 0, sizeof(k));
	CHECK_OK(kr_keeper_conns_init(&k));
	/* uids that share home slots: the table's hash of u and u + 2 * MAX_CONNS * m collide */
	for (uint32_t i = 0; i < NUIDS; i++)
		uids[i] = (uid_t)(1000 + (i % 8) + (i / 8) * 2u * KR_POOL_MAX_CONNS);
	for (uint32_t i = 0; i < KR_POOL_MAX_CONNS; i++)
		slot_uid[i] = -1;

	for (uint32_t step = 0; step < STEPS; step++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		/* drift between filling up and draining so both edges are hit */
		bool accept = (s % 1000) < ((step / 50000) % 2 ? 700u : 300u);
		uint32_t u = (uint32_t)(s >> 20) % NUIDS;

		if (accept) {
			uint32_t slot;
			int rc = kr_keeper_conn_slot_get(&k, uids[u], LIMIT, &slot);
			int want = model_n[u] >= LIMIT	       ? -EUSERS
				   : held == KR_POOL_MAX_CONNS ? -ENOSPC
							       : 0;

			CHECK_EQ(rc, want);
			if (rc == -EUSERS)
				refused_uid++;
			if (rc == -ENOSPC)
				refused_full++;
			if (rc)
				continue;
			CHECK(slot < KR_POOL_MAX_CONNS);
			CHECK_EQ(slot_uid[slot], -1);
			slot_uid[slot] = (int)u;
			model_n[u]++;
			held++;
		} else if (held) {
			uint32_t slot = (uint32_t)(s >> 8) % KR_POOL_MAX_CONNS;

			while (slot_uid[slot] < 0)
				slot = (slot + 1) % KR_POOL_MAX_CONNS;
			kr_keeper_conn_slot_put(&k, slot, uids[slot_uid[slot]]);
			model_n[slot_uid[slot]]--;
			slot_uid[slot] = -1;
			held--;
		}
		if (step % 1000 == 0)
			for (uint32_t i = 0; i < NUIDS; i++)
				CHECK_EQ(kr_keeper_conns_of_uid(&k, uids[i]), model_n[i]);
	}
	CHECK(refused_uid > 0);
	printf("%u steps: %u refused at the per-uid limit, %u with the table full\n", STEPS,
	       refused_uid, refused_full);
	kr_keeper_conns_fini(&k);
	KR_PASS("pool_conns");
}
