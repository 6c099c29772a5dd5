/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Minimal test checks, liburing style: a failed check prints where and why
 * and exits 1; KR_SKIP exits 77 with the reason.
 */
#ifndef KR_TEST_H
#define KR_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KR_TEST_SKIP_RC 77

#define KR_SKIP(...)                                                                               \
	do {                                                                                       \
		fprintf(stderr, "SKIP: ");                                                         \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fprintf(stderr, "\n");                                                             \
		exit(KR_TEST_SKIP_RC);                                                             \
	} while (0)

#define KR_FAIL(...)                                                                               \
	do {                                                                                       \
		fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);                              \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fprintf(stderr, "\n");                                                             \
		exit(1);                                                                           \
	} while (0)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			KR_FAIL("%s", #cond);                                                      \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long kr_a_ = (long long)(a), kr_b_ = (long long)(b);                          \
		if (kr_a_ != kr_b_)                                                                \
			KR_FAIL("%s == %s (%lld != %lld)", #a, #b, kr_a_, kr_b_);                  \
	} while (0)

/* expr returns 0 or a negative errno. */
#define CHECK_OK(expr)                                                                             \
	do {                                                                                       \
		int kr_rc_ = (expr);                                                               \
		if (kr_rc_ != 0)                                                                   \
			KR_FAIL("%s returned %d (%s)", #expr, kr_rc_, strerror(-kr_rc_));          \
	} while (0)

#define CHECK_ERR(expr, err)                                                                       \
	do {                                                                                       \
		int kr_rc_ = (expr);                                                               \
		if (kr_rc_ != (err))                                                               \
			KR_FAIL("%s returned %d, expected %d (%s)", #expr, kr_rc_, (err),          \
				#err);                                                             \
	} while (0)

#define KR_PASS(name)                                                                              \
	do {                                                                                       \
		printf("PASS: %s\n", (name));                                                      \
		return 0;                                                                          \
	} while (0)

#endif /* KR_TEST_H */
