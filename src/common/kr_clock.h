/* SPDX-License-Identifier: BSD-3-Clause */
/* CLOCK_MONOTONIC in nanoseconds (a vDSO call): the one clock of timeouts and heartbeats. */
#ifndef KR_CLOCK_H
#define KR_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t kr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* KR_CLOCK_H */
