/* SPDX-License-Identifier: BSD-3-Clause */
/* CLOCK_MONOTONIC in nanoseconds (a vDSO call): the one clock of timeouts and heartbeats. */
#ifndef KR_CLOCK_H
#define KR_CLOCK_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

static inline uint64_t kr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * In a loop that waits for a completion of the library's own (a lookup's
 * READ) since t0: after KR_WAIT_SPIN_NS of spinning, let another runnable
 * thread of the core run first. With a core per process this returns at
 * once; with more processes than cores (ranks, keepers and, on the sim,
 * the NIC's engine) the one that answers gets the core instead of a spin.
 * Returns the time now.
 */
#define KR_WAIT_SPIN_NS 20000u
static inline uint64_t kr_wait_relax(uint64_t t0)
{
	uint64_t now = kr_now_ns();

	if (now - t0 > KR_WAIT_SPIN_NS)
		sched_yield();
	return now;
}

#endif /* KR_CLOCK_H */
