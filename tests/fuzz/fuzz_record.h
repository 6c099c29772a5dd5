/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The input of a harness that sends several messages: records of
 * [flags][length, 2 bytes little-endian][length bytes], the length taken
 * modulo the harness's maximum and cut to what the input still holds.
 */
#ifndef KR_FUZZ_RECORD_H
#define KR_FUZZ_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The next record of (*data, *size) into out (room for mod - 1 bytes):
 * its flags and length. False, nothing taken, when no 3-byte head is left.
 */
static inline bool fuzz_record(const uint8_t **data, size_t *size, size_t mod, uint8_t *out,
			       uint8_t *flags, size_t *len)
{
	const uint8_t *d = *data;
	size_t n;

	if (*size < 3)
		return false;
	*flags = d[0];
	n = (size_t)(d[1] | d[2] << 8) % mod;
	d += 3;
	*size -= 3;
	n = n < *size ? n : *size;
	memcpy(out, d, n);
	*data = d + n;
	*size -= n;
	*len = n;
	return true;
}

#endif
