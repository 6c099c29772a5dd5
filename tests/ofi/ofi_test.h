/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the two-job provider tests of this folder share: a clock, and a byte
 * pattern per seed to fill a buffer with and check one against.
 */
#ifndef KR_OFI_TEST_H
#define KR_OFI_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Byte i of seed's pattern: no period shorter than 4 KiB, so a misplaced chunk shows. */
static inline uint8_t pat(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 29 + i * 13 + (i >> 10));
}

static inline void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(seed, i);
}

static inline int same(const uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(seed, i))
			return 0;
	return 1;
}

#endif /* KR_OFI_TEST_H */
