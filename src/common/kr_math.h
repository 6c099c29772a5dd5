/* SPDX-License-Identifier: BSD-3-Clause */
/* Power-of-two arithmetic for ring and buffer sizes. */
#ifndef KR_MATH_H
#define KR_MATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* v rounded up to a multiple of a (a power of two). */
static inline size_t kr_align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static inline bool kr_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* floor(log2(v)); v must not be 0. */
static inline uint32_t kr_log2(uint64_t v)
{
	return (uint32_t)(63 - __builtin_clzll(v));
}

#endif /* KR_MATH_H */
