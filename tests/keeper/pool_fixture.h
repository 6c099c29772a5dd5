/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pool test fixture: start a keeper (the built krpoold, path in $KRPOOLD) on
 * the sim with its socket in a fresh temporary directory, wait until it
 * answers, stop it; run a tool and capture its output; skip (77) when the
 * machine has no free hugepages.
 */
#ifndef KR_POOL_FIXTURE_H
#define KR_POOL_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <krcore/krcore.h>

#include "job/job.h"
#include "keeper/keeper.h"

struct kp_keeper {
	pid_t pid;
	char dir[64];
	char sock[128];
	char log[128]; /* the keeper's stderr */
};

/* Exit 77 unless at least pages free 2 MB hugepages and a hugetlbfs mount exist. */
void kp_require_hugepages(unsigned int pages);
/* Create the temporary directory and socket path (no keeper yet). */
void kp_keeper_init(struct kp_keeper *k);
/*
 * Start krpoold --foreground on k's socket with the sim and extra arguments
 * (NULL-terminated). A keeper given a MetaServer role (--metaserver,
 * --metaserver-addr) without --cluster-key or --insecure-metaserver gets
 * --cluster-key kp_cluster_key(): the keepers of one test share it. Waits
 * until an attach connection succeeds. Returns 0, or the keeper's exit
 * status (> 0) if it stopped, or -ETIMEDOUT.
 */
int kp_keeper_start(struct kp_keeper *k, const char *const *extra);
/*
 * The path of this test process's cluster key file (64 random hex digits,
 * mode 0600, in a directory of its own under /tmp), made on first use.
 */
const char *kp_cluster_key(void);
/* Does a line of k's log (its stderr, every start appended) hold needle? */
bool kp_log_has(const struct kp_keeper *k, const char *needle);
/*
 * fork() for a test's job: the child is killed when the test process ends,
 * so a test that fails (exit) while its job waits on a pipe never hangs.
 */
pid_t kp_fork_job(void);
/* Copy k's log to stderr (a failing test shows what its keeper said). */
void kp_log_dump(const struct kp_keeper *k);
/* kp_keeper_start() with exactly extra: no cluster key added. */
int kp_keeper_start_bare(struct kp_keeper *k, const char *const *extra);
/* Signal the keeper and reap it; returns its wait status. */
int kp_keeper_stop(struct kp_keeper *k, int sig);
/* Remove the temporary directory. */
void kp_keeper_fini(struct kp_keeper *k);
/* Run argv[0] (a path), stdout into out (NUL-terminated); returns the exit status or -1. */
int kp_run(const char *const *argv, char *out, size_t cap, int timeout_s);
/* The path of a built tool from the environment (KRPOOLD, KRCTL, KRBENCH), or exit 77. */
const char *kp_tool(const char *env);
/* Milliseconds on CLOCK_MONOTONIC. */
double kp_now_ms(void);
/* A copy of k's pool segment header, through an observer (the keeper's own figures). */
void kp_seg_header(const struct kp_keeper *k, struct kr_pool_seg *out);
/*
 * kr_connect(ctx, peer, NULL), retrying ENOSPC for up to 10 s (DCIs given
 * back are leasable once the keeper's worker has reset them). NULL + errno.
 */
struct kr_vqp *kp_connect_wait(struct kr_ctx *ctx, uint32_t peer);
/*
 * kr_lease_alloc(ctx, kind, l), retrying -ENOSPC for up to timeout_ms (a
 * QP given back is leasable once the keeper's worker has reset it). 0 or
 * the last error.
 */
int kp_lease_wait(struct kr_ctx *ctx, uint32_t kind, struct kr_lease *l, int timeout_ms);
/* Attach to k, retrying on ENOSPC/ECONNREFUSED for up to timeout_ms. NULL + errno. */
struct kr_ctx *kp_attach(const struct kp_keeper *k, int timeout_ms);
/* The same to the keeper at socket path sock. */
struct kr_ctx *kp_attach_sock(const char *sock, int timeout_ms);
/*
 * Post n signaled RDMA WRITEs of len bytes from src to dst (both in the heap)
 * through a leased DCI to the tenant's DCT and wait for each completion; then
 * READ dst back into chk and compare. 0, or a negative errno / -EIO on a bad
 * completion or payload.
 */
int kp_dci_write_read(struct kr_ctx *ctx, const struct kr_lease *l, uint8_t *src, uint8_t *dst,
		      uint8_t *chk, uint32_t len, int n, uint64_t wr_base);

/*
 * Take every free 2 MB hugepage (each a faulted-in hugetlb memfd page, at
 * most max): their fds go to fds, the count is returned. The pages stay
 * taken until the process exits (the mappings are kept).
 */
int kp_hog_hugepages(int *fds, int max);

/*
 * One signaled RDMA READ of len bytes at (addr, rkey) into dst (in the heap)
 * through the leased DCI l, addressed by av: the completion status (an enum
 * kr_wc_status), -ETIMEDOUT after 30 s, or a post error.
 */
int kp_dci_read(struct kr_ctx *ctx, const struct kr_lease *l, const struct kr_devx_dc_av *av,
		void *dst, uint32_t len, uint64_t addr, uint32_t rkey);
/* One signaled request wr through the leased DCI l: as kp_dci_read(). */
int kp_dci_post(struct kr_ctx *ctx, const struct kr_lease *l, const struct kr_devx_wr *wr);

/*
 * `krctl --socket <k> --json <cmd>`: the number after the idx-th "key": (in
 * `pool`, one per tenant slot in order), or with idx < 0 the sum of all of
 * them. -1 when krctl fails or has fewer.
 */
long long kp_krctl_json(const struct kp_keeper *k, const char *cmd, const char *key, int idx);

/*
 * A child running fn(out, in, arg): it writes len bytes to out, which the
 * parent reads into report, then may wait for a byte on in, which the
 * parent sends through *go (close it after). Returns the child's pid.
 */
pid_t kp_fork_rank(void (*fn)(int out, int in, void *arg), void *arg, void *report, size_t len,
		   int *go);

/*
 * A child job that attaches at once (before its parent does: one attach per
 * process, and a fork keeps the parent's) and then waits for orders: fn(out,
 * in, arg) reads them from in and reports on out. kp_child_run() sends the
 * orders (olen bytes, may be 0), reads a report of rlen bytes and reaps the
 * child: 0, or -EIO (short read or write, or the child did not exit 0).
 */
struct kp_child {
	pid_t pid;
	int to, from;
};
struct kp_child kp_spawn(void (*fn)(int out, int in, void *arg), void *arg);
int kp_child_run(struct kp_child *c, const void *orders, size_t olen, void *report, size_t rlen);

/*
 * A rank that stays attached to k (in a child) until released: a node has a
 * record for a launch only while the launch has a rank there. kp_hold() is
 * in the tests' launch (KR_LAUNCH_KEY); kp_hold_as(k, true) in a launch of
 * its own.
 */
struct kp_holder {
	pid_t pid;
	int fd; /* a byte written releases the rank (later children hold copies: no EOF) */
};

struct kp_holder kp_hold(const struct kp_keeper *k);
struct kp_holder kp_hold_as(const struct kp_keeper *k, bool other_launch);
void kp_hold_release(struct kp_holder *h);

#endif /* KR_POOL_FIXTURE_H */
