/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A harness's invariant: when it does not hold, say where and abort, so that
 * libFuzzer keeps the input as a crash (fuzz_main.c's replay stops there too).
 */
#ifndef KR_FUZZ_REQUIRE_H
#define KR_FUZZ_REQUIRE_H

#include <stdio.h>
#include <stdlib.h>

static inline void fuzz_require(int ok, const char *file, int line)
{
	if (!ok) {
		fprintf(stderr, "%s:%d: does not hold\n", file, line);
		abort();
	}
}
#define require(ok) fuzz_require((ok), __FILE__, __LINE__)

#endif
