/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: what reaches a MetaServer or a job from other
 * processes. The first byte picks the surface, the rest is its bytes:
 *   0  a registration datagram in the clear (kr_meta_open, no cluster key)
 *   1  the same under a cluster key: a sealed box, or anything else
 *   2  a slot as a job READs it from a MetaServer's table (kr_dct_slot_check:
 *      torn, stale, empty, wrong CRC), 64 bytes
 *   3  a port slot the same way (kr_dct_slot_check_port)
 * What must hold: no crash, no sanitizer report; a datagram taken has the
 * magic, version and type, a node id and at most the tenants and ports a
 * message holds; under a key only a box sealed with it is taken (every
 * input here is unsealed, so none); a slot taken decodes to a DCT number in
 * 1..2^24-1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "fuzz_require.h"

static unsigned long taken[4], seen[4];

void fuzz_summary(void);
void fuzz_summary(void)
{
	printf("meta_msg: clear %lu/%lu taken, sealed %lu/%lu, slots %lu/%lu, port slots %lu/%lu\n",
	       taken[0], seen[0], taken[1], seen[1], taken[2], seen[2], taken[3], seen[3]);
}

/* A datagram of len bytes from data, in a buffer that holds the largest one. */
static void datagram(const uint8_t *data, size_t len, const struct kr_meta_key *key, int which)
{
	static struct kr_meta_box box;
	struct kr_meta_msg m;
	enum kr_meta_drop why;
	size_t n = len < sizeof(box) ? len : sizeof(box);

	memset(&box, 0, sizeof(box));
	memcpy(&box, data, n);
	if (!kr_meta_open(key, &box, (ssize_t)len, KR_META_REGISTER, &m, &why))
		return;
	taken[which]++;
	require(!key); /* nothing here was sealed with the key */
	require(len == sizeof(m) && m.magic == KR_META_MSG_MAGIC &&
		m.version == KR_META_MSG_VERSION && m.type == KR_META_REGISTER && m.node_id &&
		m.ntenants <= KR_META_MSG_TENANTS && m.nports <= KR_META_MSG_PORTS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct kr_meta_key key = {.set = true, .k = "krcore fuzz cluster key, 32 b."};
	struct kr_dct_slot slot;
	struct kr_dct_port_rec prec;
	struct kr_dct_rec rec;
	int which;

	if (!size)
		return 0;
	which = data[0] % 4;
	seen[which]++;
	data++;
	size--;
	switch (which) {
	case 0:
	case 1:
		datagram(data, size, which ? &key : NULL, which);
		break;
	case 2:
		memset(&slot, 0, sizeof(slot));
		memcpy(&slot, data, size < sizeof(slot) ? size : sizeof(slot));
		if (kr_dct_slot_check(&slot, &rec))
			break;
		taken[2]++;
		require(rec.dctn >= 1 && rec.dctn <= 0xffffff && rec.node_id == slot.rec.node_id);
		break;
	default:
		memset(&slot, 0, sizeof(slot));
		memcpy(&slot, data, size < sizeof(slot) ? size : sizeof(slot));
		if (!kr_dct_slot_check_port(&slot, &prec))
			taken[3]++;
	}
	return 0;
}
