/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Security tests: a root keeper (pool_fixture) and attackers that are
 * children dropped to uid/gid 65534 (nobody/nogroup) with setresuid. Every
 * program exits 77 unless run as root.
 */
#ifndef KR_SEC_FIXTURE_H
#define KR_SEC_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pool_fixture.h"

#define SEC_UID 65534u
#define SEC_GID 65534u

/* In an attacker child: report and return 1 from the function unless cond holds. */
#define SEC_EXPECT(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

/* Exit 77 unless root (the attackers need setresuid). */
void sec_require_root(void);
/* In a child: drop every privilege to SEC_UID/SEC_GID; exits 1 if that fails. */
void sec_drop(void);
/*
 * This process's launch (KR_LAUNCH_KEY, else a random key; after sec_drop: its
 * own), the one sec_attach_raw attaches as.
 */
const struct kr_launch *sec_launch(void);
/* Run fn() in a child dropped to SEC_UID; returns its exit status (or 128 + signal). */
int sec_as_nobody(int (*fn)(void *arg), void *arg);
/* The same in two steps: start the child, then wait for its status. */
pid_t sec_spawn_nobody(int (*fn)(void *arg), void *arg);
int sec_wait(pid_t pid);
/*
 * Attach to the keeper at sock by hand (no kr_attach): the reply and the
 * descriptors it carried. Tries again every 20 ms for timeout_ms while it
 * fails (a slot still being reclaimed); 0: once. Returns the connection
 * (close it to detach), or -1 when the call or the attach failed.
 */
int sec_attach_raw(const char *sock, struct kr_msg_attach_reply *rep, int *fds, unsigned int *nfds,
		   int timeout_ms);

/*
 * Attach to the keeper at sock by hand, giving launch key key (an attacker's
 * choice; NULL: a lone job, the keeper draws one): the reply's status (0 or
 * -errno; -EAGAIN, a heap being warmed, is asked again for up to 5 s). The
 * descriptors it carried are closed; on 0, *conn is the connection (close it
 * to detach), else -1. tag (may be NULL): the launch tag the keeper derived.
 */
int sec_attach_launch(const char *sock, const uint8_t *key, uint64_t *tag, int *conn);

/* What a lender rank lends: its region, its key, its launch's DCT on its node. */
struct sec_lent {
	uint64_t addr;
	uint32_t rkey;
	uint32_t dctn;
};

/*
 * A rank of the test's launch on k (a child) lending len bytes of fill
 * (remote READ, WRITE and atomic); l gets what it lends. After a byte on
 * *go it exits 0 when all the bytes equal expect (2..6 otherwise).
 */
pid_t sec_lender_start(const struct kp_keeper *k, uint32_t len, uint8_t fill, uint8_t expect,
		       struct sec_lent *l, int *go);
/* The lender checks its bytes and exits: CHECKs it exited 0; go is closed. */
void sec_lender_done(pid_t pid, int go);
/*
 * k's DC key violations (krctl pool: tenant slot idx, or all with idx < 0)
 * once they reach at_least, or after 5 s (the worker reads them once a
 * second): the count then.
 */
long long sec_violations_wait(const struct kp_keeper *k, int idx, long long at_least);

/* xorshift64: the attackers' random values (*s must not be 0). */
static inline uint64_t sec_rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * A root keeper for attackers: exit 77 unless root with free hugepages, then
 * start k with args (its directory searchable by SEC_UID). Fails the test
 * if the keeper does not start.
 */
void sec_keeper_start(struct kp_keeper *k, const char *const *args);

/* A root job checking its own bytes while attackers run. */
struct sec_victim {
	const struct kp_keeper *k; /* its log is shown when a round fails */
	struct kr_ctx *ctx;
	uint8_t *src, *dst, *chk;
	struct kr_lease dci;
	unsigned int rounds;
};

#define SEC_VICTIM_LEN 4096u

/* Attach to k, take heap buffers and a DCI lease. */
void sec_victim_start(struct sec_victim *v, const struct kp_keeper *k);
/* One round: n WRITEs and READs through its DCI, every byte checked (fails the test). */
void sec_victim_round(struct sec_victim *v, int n);
/* Rounds until child pid exits; returns its status as sec_wait. */
int sec_victim_until_exit(struct sec_victim *v, pid_t pid);
void sec_victim_stop(struct sec_victim *v);

#endif
