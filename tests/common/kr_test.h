/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Minimal test checks, liburing style: a failed check prints where and why
 * and exits 1; KR_SKIP exits 77 with the reason.
 */
#ifndef KR_TEST_H
#define KR_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KR_TEST_SKIP_RC 77

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t kr_test_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* splitmix64: a test's reproducible random numbers from the seed *x. */
static inline uint64_t kr_test_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

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
			KR_FAIL("%s returned %d, expected %d (%s)", #expr, kr_rc_, (err), #err);   \
	} while (0)

#define KR_PASS(name)                                                                              \
	do {                                                                                       \
		printf("PASS: %s\n", (name));                                                      \
		return 0;                                                                          \
	} while (0)

#endif /* KR_TEST_H */
