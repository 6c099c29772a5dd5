/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A pairing message between keepers (keeper_pair.c), as it arrives at a
 * tenant's DC target: from a receive buffer another process filled, so it
 * is copied once and every field the keeper acts on is checked here, apart
 * from any keeper state (tests/fuzz/fuzz_pair_msg.c feeds it anything).
 */
#include <string.h>

#include "keeper/keeper.h"

/* kr_pair_msg_parse() - see keeper.h. */
enum kr_pair_verdict kr_pair_msg_parse(const void *buf, uint32_t len, uint64_t launch_tag,
				       struct kr_pair_msg *m)
{
	if (len != sizeof(*m))
		return KR_PAIR_STRAY;
	memcpy(m, buf, sizeof(*m)); /* one copy: the sender cannot change what we check */
	if (m->magic != KR_PAIR_MAGIC)
		return KR_PAIR_STRAY;
	if (m->version != KR_PAIR_VERSION || m->launch_tag != launch_tag || !m->src_dctn ||
	    m->src_dctn > KR_PAIR_NUM_MAX || m->type < KR_PAIR_REQ || m->type > KR_PAIR_UNPAIR)
		return KR_PAIR_BAD;
	/* a request or an acceptance names the sender's QP; a refusal or an UNPAIR may not */
	if ((m->type == KR_PAIR_REQ || m->type == KR_PAIR_ACK) &&
	    (!m->src_qpn || m->src_qpn > KR_PAIR_NUM_MAX))
		return KR_PAIR_BAD;
	m->psn &= KR_PAIR_NUM_MAX;
	return KR_PAIR_OK;
}

/* kr_pair_cookie() - see keeper.h. */
uint64_t kr_pair_cookie(uint32_t gen, uint32_t tenant, uint32_t slot)
{
	return (uint64_t)gen << 32 | (uint64_t)(tenant & 0xffff) << 16 | (slot & 0xffff);
}

/* kr_pair_cookie_slot() - see keeper.h. */
bool kr_pair_cookie_slot(uint64_t cookie, uint32_t tenant, uint32_t nslots, uint32_t *slot,
			 uint32_t *gen)
{
	if (((cookie >> 16) & 0xffff) != tenant || (cookie & 0xffff) >= nslots)
		return false;
	*slot = cookie & 0xffff;
	*gen = (uint32_t)(cookie >> 32);
	return true;
}
