/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers for tests whose simulated hosts live in separate processes: a
 * barrier in shared memory, a free UDP port, child processes with a
 * deadline, RC QPs created and connected apart (each side learns the other's
 * QP number from shared memory set up before fork).
 */
#ifndef KR_SIM_MP_H
#define KR_SIM_MP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "devx_fixture.h"

/* A reusable barrier for n processes, in MAP_SHARED memory. */
struct mp_barrier {
	_Atomic uint32_t arrived;
	_Atomic uint32_t gen;
	uint32_t n;
};

void mp_barrier_init(struct mp_barrier *b, uint32_t n);
/* 0 when all n arrived; -ETIMEDOUT after timeout_ms (a peer died or hangs). */
int mp_barrier_wait(struct mp_barrier *b, int timeout_ms);

/*
 * A UDP port in [20000, 60000) that every address in addrs (dotted quads)
 * can bind now, chosen at random; 0 if none was found. Another program may
 * still take it before the test binds: callers retry on -EADDRINUSE.
 */
uint16_t mp_pick_port(const char *const *addrs, int n);

/* Run fn(idx, arg) in a child; its return value is the child's exit status. */
pid_t mp_spawn(int (*fn)(int idx, void *arg), int idx, void *arg);
/*
 * Wait for n children; kill all that remain after timeout_ms. Returns 0 if
 * every child exited 0, 77 if any skipped (and none failed), 1 otherwise.
 */
int mp_wait(pid_t *pids, int n, int timeout_ms);

/* An RC QP on h (256 WQEBBs, 64 receive WQEs of 4 SGEs), in RST. */
int mp_rc_create(struct kr_fx_host *h, struct kr_devx_qp *qp);
/* Bring qp to RTS towards remote QP rqpn at rgid; tmpl optional (fixture defaults). */
/* Address av (dctn set) from host h to the sim host whose GID is rgid. */
void mp_dc_av_to(struct kr_devx_dc_av *av, const struct kr_fx_host *h, const uint8_t rgid[16]);
int mp_rc_connect(struct kr_devx_qp *qp, uint32_t rqpn, const uint8_t rgid[16],
		  const struct kr_devx_qp_conn *tmpl);
/* Port 1 GID 0 of h. */
void mp_gid(struct kr_fx_host *h, uint8_t gid[16]);


uint64_t mp_now_ms(void);

#endif /* KR_SIM_MP_H */
