/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: a pairing message as another keeper (or a job of the
 * launch) put it in a keeper's receive buffer (src/keeper/keeper_pair_msg.c),
 * and the cookie of an answer. What must hold: no crash, no sanitizer
 * report; a message taken is exactly 72 bytes of this version and launch,
 * of a known type, with a DCT number (and for a request or an acceptance a
 * QP number) in 1..2^24-1 and a 24-bit PSN; anything of another size or
 * magic is a stray SEND; a cookie names a slot of the tenant only when its
 * tenant field is that tenant and its slot is below the count, and then
 * names it back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "keeper/keeper.h"
#include "fuzz_require.h"

#define TAG    0x6b72636f72653031ull /* the launch the harness's tenant holds */
#define TENANT 3u
#define SLOTS  64u

static unsigned long verdicts[3];

/* What the inputs came to (fuzz_main.c prints it after a replay). */
void fuzz_summary(void);
void fuzz_summary(void)
{
	printf("pair_msg: %lu taken, %lu dropped, %lu stray\n", verdicts[KR_PAIR_OK],
	       verdicts[KR_PAIR_BAD], verdicts[KR_PAIR_STRAY]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t len = size > 0xffffffffu ? 0xffffffffu : (uint32_t)size;
	struct kr_pair_msg m;
	uint32_t slot, gen, magic = 0;

	enum kr_pair_verdict v = kr_pair_msg_parse(data, len, TAG, &m);

	verdicts[v]++;
	switch (v) {
	case KR_PAIR_OK:
		require(size == sizeof(m) && m.magic == KR_PAIR_MAGIC &&
			m.version == KR_PAIR_VERSION && m.launch_tag == TAG);
		require(m.type >= KR_PAIR_REQ && m.type <= KR_PAIR_UNPAIR);
		require(m.src_dctn >= 1 && m.src_dctn <= 0xffffff && m.psn <= 0xffffff);
		if (m.type == KR_PAIR_REQ || m.type == KR_PAIR_ACK)
			require(m.src_qpn >= 1 && m.src_qpn <= 0xffffff);
		if (kr_pair_cookie_slot(m.cookie, TENANT, SLOTS, &slot, &gen))
			require(slot < SLOTS && kr_pair_cookie(gen, TENANT, slot) == m.cookie);
		else
			require(((m.cookie >> 16) & 0xffff) != TENANT ||
				(m.cookie & 0xffff) >= SLOTS);
		break;
	case KR_PAIR_STRAY:
		if (size >= sizeof(magic))
			memcpy(&magic, data, sizeof(magic));
		require(size != sizeof(m) || magic != KR_PAIR_MAGIC);
		break;
	default: /* KR_PAIR_BAD: a pairing message of the right size and magic */
		memcpy(&magic, data, sizeof(magic));
		require(size == sizeof(m) && magic == KR_PAIR_MAGIC);
	}
	return 0;
}
