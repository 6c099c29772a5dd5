/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/job: the library a job links (libkrcore.a) beside the public API:
 * attach, the heap, leases, MRs, ports, the node-cache lookup. Private
 * header of the folder; the keeper never includes it.
 *
 * Files, one role each:
 *   job_attach.c       kr_attach/kr_detach, mapping the zones, observers (krctl)
 *   job_attach_peer.c  who may serve the socket (SO_PEERCRED)
 *   job_attach_reply.c the checks of the keeper's attach reply
 *   job_arena.c        kr_malloc/kr_free, a jemalloc arena over the heap
 *   job_heap.c         the heap's held place, growth through the keeper
 *   job_heap_slabs.c   small kr_malloc blocks from the heap's first pages, no jemalloc
 *   job_lease.c        calls to the keeper, leases, DCI views for posting
 *   job_malloc.c       kr_malloc/kr_free over the heap's arena
 *   job_mr.c           kr_reg_mr, kr_reg_mr_fd, keys for posts from registered files
 *   job_port.c         calls and reads for receive endpoints
 *   job_krmin.c        a fenced keeper's DCIs through /dev/krmin, SIGBUS guard
 *   job_resolve.c      kr_dct_resolve/kr_dct_invalidate: the one-READ MetaServer lookup
 * Below it: virtqp/ (virtual QPs, the public data path) and pmix/.
 */
#ifndef KR_JOB_H
#define KR_JOB_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/abi.h"
#include "devx/devx.h"
#include "krcore/krcore.h"
#include "krcore/krmin_uapi.h"

struct kr_arena; /* job_arena.c */

/* A job's view of a leased DCI (built from the tenant zone descriptor). */
struct kr_job_dci {
	struct kr_devx_qp qp;
	struct kr_devx_cq cq;
	struct kr_lease lease;
	bool used;
	void *krmin_map; /* fenced: its slot's rings through /dev/krmin, and length */
	uint64_t krmin_len;
	uint32_t krmin_slot;
	struct kr_devx_uar *uar; /* fenced: its own UAR page, mapped from the slot */
};

struct kr_ctx;
/* job_lease.c: forget a leased DCI's view (its rsc entry, its slot's mappings). */
void kr_job_dci_drop(struct kr_ctx *ctx, struct kr_job_dci *jd);

struct kr_mr {
	struct kr_ctx *ctx;
	uint32_t id; /* keeper's MR id, 0 = the heap MR itself */
	struct kr_mr_key key;
};

/*
 * A reader of MetaServer rows the vQP layer lends the lookup (set by
 * kr_connect, virtqp_look.c): one READ of len bytes at raddr/rkey of the DC
 * target av into buf (heap memory), on the calling thread's DCI. 0, -EAGAIN
 * (failed on our side: try again), -EHOSTUNREACH (an error completion or no
 * answer: the MetaServer's), -ENOTCONN, -ESTALE (buf may still be written
 * by a READ that never finished: use it no more), or the connect's -errno.
 */
typedef int (*kr_job_look_read_fn)(struct kr_ctx *ctx, const struct kr_devx_dc_av *av,
				   uint64_t raddr, uint32_t rkey, void *buf, uint32_t len);
/* A lookup READ's error status that is ours (our DCI, our buffer), not the MetaServer's. */
static inline bool kr_job_look_local_err(uint32_t status)
{
	return status == KR_WC_LOC_PROT_ERR || status == KR_WC_LOC_LEN_ERR ||
	       status == KR_WC_LOC_QP_OP_ERR || status == KR_WC_WR_FLUSH_ERR;
}

/*
 * The heap's pages after the library's bytes, cut in small blocks
 * (job_heap_slabs.c): what kr_malloc gives before it needs jemalloc. Process
 * memory: nothing of it lies in the heap, which peers may write.
 */
#define KR_SLAB_PAGES	  32u
#define KR_SLAB_BYTES	  (KR_SLAB_PAGES * 4096u)
#define KR_SLAB_MAX_BYTES 4096u
struct kr_heap_slabs {
	pthread_mutex_t lock;
	uint8_t *base;			/* NULL: the heap is too small to keep them */
	uint32_t npages;		/* pages taken, from base on */
	bool sealed;			/* the arena starts past them: no new page */
	uint8_t shift[KR_SLAB_PAGES];	/* the page's blocks are 1 << shift bytes; 0: free */
	uint16_t used[KR_SLAB_PAGES];	/* its blocks out */
	uint64_t map[KR_SLAB_PAGES][4]; /* which (a bit per 16 bytes of the page) */
	uint32_t full;			/* bit shift - 4: no room for that size */
	uint64_t allocs, frees;		/* blocks handed out and back (tests) */
};

/*
 * A job's attachment. lock serialises socket calls and the DCI table; the
 * data path on a leased DCI is the caller's (one thread per DCI).
 */
struct kr_ctx {
	pthread_mutex_t lock;
	int sock;
	char obs_path[108]; /* observer: the keeper's socket */
	bool dead;	    /* the keeper went away: every call returns -ENOTCONN */
	uint32_t seq;
	uint32_t tenant;
	uint32_t job;
	uint32_t job_gen;
	uint64_t keeper_gen;
	struct kr_launch launch;
	uint32_t keeper_uid; /* a keeper uid trusted besides root and ours (0: none) */
	const struct kr_pool_seg *seg;
	uint64_t seg_len;
	struct kr_zone_hdr *zone;
	uint64_t zone_len;
	/*
	 * The heap (job_heap.c): heap_max reserved at heap, heap_len of it
	 * backed and covered by the MR whose keys these are. Growth stores the
	 * keys before the length (release): whoever reads the length (acquire)
	 * and finds an address inside it reads keys that cover it.
	 */
	void *heap;
	uint64_t heap_len;
	uint64_t heap_max;
	uint32_t heap_lkey, heap_rkey;
	uint32_t heap_grows;	 /* KR_MSG_HEAP_GROW calls that added pages */
	/*
	 * Files the job registered (kr_reg_mr_fd), by keeper MR id - 1, for the
	 * local buffers of posts: written under lock (len last, release; 0 =
	 * none), read by the data path; nfmr bounds the scan.
	 */
	struct kr_job_fmr {
		uint64_t addr;
		uint64_t len;
		uint32_t lkey;
	} fmr[KR_POOL_MAX_JOB_MRS];
	uint32_t nfmr;
	struct kr_devx_ctx *dev; /* doorbell-only device view */
	struct kr_devx_uar *uar; /* the tenant's UAR, imported at the first DCI lease */
	/* the MetaServer lookup's READ on the caller's DCI (virtqp_look.c), NULL: its own DCI */
	kr_job_look_read_fn look_read;
	bool lib_buf_lost; /* a lookup READ may still land in the heap's library bytes */
	/* a node cache report held for the next empty poll (lock; set: atomic) */
	struct kr_msg_cache cache_held;
	bool cache_held_set;
	/* kr_malloc's small blocks, then its arena over the rest of the heap, made
	 * when the slabs cannot serve (arena_lock) */
	struct kr_heap_slabs slabs;
	struct kr_arena *arena;
	pthread_mutex_t arena_lock;
	struct kr_msg_region region[KR_ATTACH_MAX_REGIONS];
	uint32_t nregions;
	struct kr_job_dci dci[KR_JOB_MAX_DCIS];
	uint32_t ready_taken;	   /* ready-ring entries looked at (claimed or skipped: job_lease.c) */
	uint64_t ready_ring_takes; /* DCIs a thread got from the ring: no call (tests, benches) */
	/* job_pair.c: pair asks out (bit a: pair_ans[a] awaited), each's request seq */
	uint32_t pair_out;
	uint32_t pair_seq[KR_JOB_PAIR_ASKS];
	/* fenced (job_krmin.c): /dev/krmin, the zone's rings window, the
	 * window DCI i's UAR page is mapped in (page i), and where in such a
	 * page the doorbell register is */
	int krmin_fd;
	uintptr_t rings_lo, rings_hi;
	uintptr_t uars_lo, uars_hi;
	uint32_t uar_reg_off;
	uint32_t uar_bf_size;
	uint32_t dci_block; /* a DCI's rings in its slot, from its SQ's page */
	uint32_t rc_block;  /* an RC slot's, likewise */
	bool observer;
	uint64_t stale_check_ns; /* last socket check on a stale heartbeat (atomic) */
	uint32_t dcis_per_thread; /* kr_attach_opts.dcis_per_thread, resolved (virtqp_policy.c) */
	uint32_t promote_rate;	  /* kr_attach_opts.promote_rate, resolved; 0: never */
	/*
	 * Names this attachment in the process, never reused: state kept across
	 * calls (spare DCIs, the lookup DCI, a thread's DCIs) belongs to one
	 * attachment. ctx, keeper and job generations do not tell: a new attach
	 * may get the same ctx address and another job slot of the same gen.
	 */
	uint64_t attach_id;
	/*
	 * Set by a layer above (virtqp_spare.c) that keeps state of this
	 * attachment in the process; kr_detach() calls it last, so that what
	 * it kept goes with the attachment (not at the next attach, which a
	 * process, or a provider that is unloaded, may never make).
	 */
	void (*on_detach)(struct kr_ctx *ctx);
};

/*
 * A heartbeat older than this makes kr_malloc() and an empty kr_poll() ask
 * the socket whether the keeper is gone (one poll(), at most once per
 * period). The keeper bumps it every 10 ms tick; a firmware command may hold
 * it longer, so a stale heartbeat alone never declares the keeper dead, and a
 * slow keeper costs its jobs at most one poll() per period. 40 ms: a dead
 * keeper is seen within ~50 ms, well inside the 100 ms the API promises.
 */
#define KR_POOL_STALE_NS (40ull * 1000 * 1000)

/* How long kr_attach asks again while the keeper warms a heap (EAGAIN). */
#define KR_ATTACH_WAIT_MS 2000ull

/*
 * job_attach_peer.c: the keeper uid a job also trusts besides root and its
 * own: opt (kr_attach_opts.keeper_uid), else $KR_KEEPER_UID, else none (0).
 * 0 or -EINVAL (the variable is not a uid).
 */
int kr_attach_keeper_uid(uint32_t opt, uint32_t *uid);
/*
 * job_attach_peer.c: before anything secret goes out on sock (connected to
 * path), its server must run as root, this job's uid or keeper_uid (0:
 * none). 0, -EPERM (logged, with the uid and pid found), or getsockopt's
 * -errno.
 */
int kr_attach_peer_check(int sock, uint32_t keeper_uid, const char *path);
/*
 * job_attach_reply.c: kr_attach_reply_check() - 0 if the keeper's attach
 * reply (nfds descriptors came with it; observer: a status-only attach) is
 * one a job may map, its negative status as sent, or -EPROTO.
 * kr_attach_zone_head_len() - a fenced reply's zone regions: the bytes of
 * the zone head they cover (read-only, short of the zone), else 0.
 */
int kr_attach_reply_check(const struct kr_msg_attach_reply *rep, unsigned int nfds, bool observer);
uint64_t kr_attach_zone_head_len(const struct kr_msg_attach_reply *rep);

/*
 * job_lease.c: ctx->lock held. One request/reply; a transport error kills the
 * context. kr_job_call_fd() sends fd along (SCM_RIGHTS). kr_job_lost(): the
 * status of a call on ctx->sock that failed; a keeper gone marks ctx dead
 * (-ENOTCONN, or -EPIPE when the write found the socket closed).
 */
int kr_job_call(struct kr_ctx *ctx, void *req, size_t len, struct kr_msg_reply *rep);
int kr_job_call_fd(struct kr_ctx *ctx, void *req, size_t len, int fd, struct kr_msg_reply *rep);
int kr_job_lost(struct kr_ctx *ctx, int rc);
/*
 * kr_lease_free() with KR_RELEASE_F_* flags: KR_RELEASE_F_IDLE for a DCI with
 * nothing in flight and no error seen, which a trusted keeper frees with no
 * reset when its rings agree. 0 or as kr_lease_free().
 */
int kr_job_lease_give_back(struct kr_ctx *ctx, const struct kr_lease *lease, uint32_t flags);

/* job_port.c: a job's calls and reads for receive endpoints (see there) */
/*
 * kr_job_port_call() - KR_MSG_BIND or KR_MSG_UNBIND with req (type set
 * here); rep gets the reply. 0 or the keeper's -errno (kr_keeper_port_bind).
 */
int kr_job_port_call(struct kr_ctx *ctx, uint16_t type, struct kr_msg_bind *req,
		      struct kr_msg_reply *rep);
/*
 * kr_job_ep_read() - a consistent copy of endpoint index's descriptor.
 * 0, -EINVAL (no such endpoint), -EAGAIN (the keeper kept rewriting it).
 */
int kr_job_ep_read(const struct kr_ctx *ctx, uint32_t index, struct kr_zone_ep *out);
/* kr_job_port_find() - the endpoint bound to port in the tenant: 0 (*out, *index), -ECONNREFUSED.
 */
int kr_job_port_find(const struct kr_ctx *ctx, uint32_t port, struct kr_zone_ep *out,
		      uint32_t *index);

/* job_krmin.c: a fenced keeper's DCIs, mapped one lease at a time (see there) */
int kr_job_krmin_open(struct kr_ctx *ctx, uint64_t head_len);
void kr_job_krmin_close(struct kr_ctx *ctx);
int kr_job_krmin_map(struct kr_ctx *ctx, uint64_t token, uint32_t index, bool rc_slot,
		     const struct kr_zone_dci *d, struct kr_job_dci *jd);
void kr_job_krmin_unmap(struct kr_ctx *ctx, struct kr_job_dci *jd);
struct kr_zone_ep;
/* A bound receive endpoint's CQ and SRQ pages, claimed with token and mapped (see there). */
int kr_job_krmin_map_ep(struct kr_ctx *ctx, uint64_t token, const struct kr_zone_ep *d, void **map,
			uint64_t *len);
void kr_job_krmin_unmap_ep(struct kr_ctx *ctx, void *map, uint64_t len);

/*
 * job_lease.c: whether the keeper has an offer on the job's ready ring it has
 * not looked at (taken back meanwhile, perhaps: the lease then asks).
 */
bool kr_job_ready_offered(const struct kr_ctx *ctx);

/* job_heap_slabs.c */
/* Set the slabs up over ctx's heap (after the attach mapped it); none when it is too small. */
void kr_heap_slabs_init(struct kr_ctx *ctx);
void kr_heap_slabs_fini(struct kr_ctx *ctx);
/* Take no new page from now on; returns the heap offset past those taken (the arena's start). */
uint64_t kr_heap_slabs_seal(struct kr_ctx *ctx);
/* A block of len (1 to KR_SLAB_MAX_BYTES) bytes, 16-byte aligned; NULL: none (use the arena). */
void *kr_heap_slabs_alloc(struct kr_ctx *ctx, size_t len);
/* Is p inside the slabs (then kr_heap_slabs_free() takes it, not the arena)? */
bool kr_heap_slabs_owns(const struct kr_ctx *ctx, const void *p);
/* Give back the block at p (kr_heap_slabs_owns). 0, or -EINVAL: no block out at p (logged). */
int kr_heap_slabs_free(struct kr_ctx *ctx, void *p);

/* job_arena.c */
/*
 * An arena over [base, base + len), which grow() extends up to max: called
 * (arena lock held) with the end the arena needs backed; returns the new
 * backed length (>= need) or -errno. The first reserved bytes are never
 * handed out (the library's own buffers: KR_HEAP_LIB_BYTES). 0, -EINVAL,
 * -ENOMEM.
 */
typedef int64_t (*kr_arena_grow_fn)(void *arg, uint64_t need);
int kr_arena_create(void *base, size_t len, size_t max, size_t reserved, kr_arena_grow_fn grow,
		    void *arg, struct kr_arena **arena);
void kr_arena_destroy(struct kr_arena *arena);
void *kr_arena_alloc(struct kr_arena *arena, size_t len, size_t align);
void kr_arena_free(struct kr_arena *arena, void *p);
/*
 * The start of jemalloc's first metadata block of the arena (its "base", in
 * process memory), whose first KR_ARENA_META_HOT bytes come populated; NULL
 * where the arena keeps none (job_arena_bins.c has no such block).
 */
#define KR_ARENA_META_HOT (128u << 10)
const void *kr_arena_meta_first(const struct kr_arena *arena);

/*
 * job_attach.c: an observer (krctl) holds a private read-only copy of the
 * pool segment, taken over a connection that is closed again: no descriptor,
 * no shared memory. kr_job_observe_refresh() takes a new copy.
 */
struct kr_ctx *kr_job_observe(const char *socket_path);
int kr_job_observe_refresh(struct kr_ctx *ctx);
/* ctx->lock held: true (and ctx->dead set) once the keeper's end is gone. */
bool kr_job_keeper_gone(struct kr_ctx *ctx);
/*
 * job_lease.c: the data path's check (kr_malloc, an empty kr_poll): is the
 * keeper gone, or has it let this job go (its job slot)? No syscall while
 * the heartbeat is fresh, one non-blocking socket check per KR_POOL_STALE_NS
 * once it is not, never waits for ctx->lock.
 */
bool kr_job_keeper_gone_fast(struct kr_ctx *ctx);

/*
 * job_lease.c: a node cache report to the keeper (KR_CACHE_PUT with a record,
 * struct kr_dct_wire of len bytes, read from a MetaServer; KR_CACHE_FORGET
 * with node_id). One-way: it returns at once, without a reply.
 */
void kr_job_cache_report(struct kr_ctx *ctx, uint32_t op, uint32_t node_id, const void *rec,
			  size_t len);
/*
 * kr_job_cache_report_later() - the same, sent by the caller's next empty
 * poll (kr_job_cache_flush) or disconnect, not now: a message wakes the
 * keeper, which on a busy node runs on the sender's core before its send
 * returns; a poll waiting for a completion has that time to spare. One is
 * held; a second sends the first.
 */
void kr_job_cache_report_later(struct kr_ctx *ctx, uint32_t op, uint32_t node_id,
				const void *rec, size_t len);
/* kr_job_cache_flush() - send the held report, if any (one load when none). */
void kr_job_cache_flush(struct kr_ctx *ctx);

/* job_lease.c: the posting view of a leased DCI and the tenant's own DCT. */
/*
 * kr_job_dci_qp() - the QP and send CQ a job posts to for a DCI lease (or
 * an RC slot from kr_job_rc_pair). The QP starts empty (the keeper reset
 * it); one thread at a time. Returns 0, -EINVAL (not such a lease of this
 * ctx), -ENOTCONN.
 */
int kr_job_dci_qp(struct kr_ctx *ctx, const struct kr_lease *lease, struct kr_devx_qp **qp,
		   struct kr_devx_cq **cq);
/*
 * kr_job_rc_view_locked() - ctx->lock held: the posting view of RC lease
 * the keeper granted (token: fenced); on failure the lease goes back.
 * 0, -EMFILE (no view slot), -EPROTO, or kr_job_krmin_map's.
 */
int kr_job_rc_view_locked(struct kr_ctx *ctx, const struct kr_lease *lease, uint64_t token);

/* job_pair.c: an RC slot paired by the keepers, asked for without waiting. */
/*
 * kr_job_rc_ask() - ask the keeper for an RC slot it pairs with one of
 * node's keeper (keeper_pair.c), towards the DC target of av; one message,
 * no wait (the answer comes to the job slot: kr_job_rc_take). wait: take
 * ctx->lock even if another thread holds it (else -EAGAIN). *ask names it.
 * 0, -EINVAL, -EAGAIN, -EBUSY (KR_JOB_PAIR_ASKS asks out), -ENOTCONN, -EPIPE.
 */
int kr_job_rc_ask(struct kr_ctx *ctx, uint32_t node, const struct kr_devx_dc_av *av, bool wait,
		  uint32_t *ask);
/*
 * kr_job_rc_take() - the answer to ask: -EINPROGRESS (none yet, or !wait
 * and ctx->lock busy), else the ask is done and: 0 (*lease leased, its view
 * ready for kr_job_dci_qp(); post once kr_job_rc_link() says UP), the
 * keeper's refusal (-ENOSPC: no spare; -EBUSY: throttled; -EINVAL), or
 * kr_job_rc_view_locked's. -ENOTCONN: the keeper is gone.
 */
int kr_job_rc_take(struct kr_ctx *ctx, uint32_t ask, bool wait, struct kr_lease *lease);
/* An ask no one will take: its answer is waited for (bounded) and its slot given back. */
void kr_job_rc_forget(struct kr_ctx *ctx, uint32_t ask);
/*
 * kr_job_rc_pair() - kr_job_rc_ask, then wait (up to 5 s) for its answer.
 * 0, kr_job_rc_ask's or kr_job_rc_take's errors, -ETIMEDOUT.
 */
int kr_job_rc_pair(struct kr_ctx *ctx, uint32_t node, const struct kr_devx_dc_av *av,
		    struct kr_lease *lease);
/*
 * kr_job_rc_link() - where the RC slot's pairing stands (enum kr_rc_link,
 * from the pool segment: no call), or -ESTALE (the slot is no longer this
 * lease's), -ENOTCONN, -EINVAL.
 */
int kr_job_rc_link(const struct kr_ctx *ctx, const struct kr_lease *lease);
/* The address vector of the tenant's DCT at this keeper. 0 or -ENOTCONN. */
int kr_job_tenant_av(struct kr_ctx *ctx, struct kr_devx_dc_av *av);
/* lkey of the heap MR (covers every kr_malloc byte backed so far). */
static inline uint32_t kr_job_heap_lkey(const struct kr_ctx *ctx)
{
	return __atomic_load_n(&ctx->heap_lkey, __ATOMIC_RELAXED);
}

/* job_mr.c: the lkey of a registered file that holds [p, p + len); -1 if none. */
int64_t kr_job_file_lkey(const struct kr_ctx *ctx, const void *p, uint64_t len)
    __attribute__((cold));

/*
 * Is [p, p + len) inside the backed heap? The length is read before the key
 * (see kr_ctx.heap): a caller that then reads heap_lkey gets one covering it.
 */
static inline bool kr_job_in_heap(const struct kr_ctx *ctx, const void *p, uint64_t len)
{
	uintptr_t a = (uintptr_t)p, h = (uintptr_t)ctx->heap;
	uint64_t n = __atomic_load_n(&ctx->heap_len, __ATOMIC_ACQUIRE);

	return a >= h && len <= n && a - h <= n - len;
}
/* job_heap.c: hold the heap's unbacked place at attach; grow it (the arena's grow). */
int kr_job_heap_hold(struct kr_ctx *ctx, uint64_t max);
int64_t kr_job_heap_grow(void *ctx, uint64_t need);

/* ---- the node-cache lookup (job_resolve.c) ---- */
struct kr_ctx;

/*
 * kr_dct_resolve() - the DCT record of the caller's launch on node_id: from
 * the node cache, else by one READ of the node's row at a MetaServer
 * (falling back to the next replica), then cached. node_id == the caller's
 * own node gives its keeper's DCT. Returns 0, -ENOENT (no such node
 * registered, or the launch has no rank there), -EHOSTUNREACH (no
 * MetaServer answered), -EAGAIN (the row stayed torn after retries),
 * -ENOTCONN (keeper gone), -EINVAL.
 */
int kr_dct_resolve(struct kr_ctx *ctx, uint32_t node_id, struct kr_dct_rec *rec);
/* kr_dct_self_node() - this node's id as its keeper published it; 0 when it has none. */
uint32_t kr_dct_self_node(struct kr_ctx *ctx);

struct kr_dct_port_rec;
/*
 * kr_dct_resolve_port() - port of the caller's launch on node_id (not this
 * node: its ports are in the zone), with the node's record: one READ of the
 * node's MetaServer row, which holds both. 0, -ECONNREFUSED (the node is
 * there, the port is not bound by our launch, or not yet published), and
 * kr_dct_resolve()'s errors.
 */
int kr_dct_resolve_port(struct kr_ctx *ctx, uint32_t node_id, uint32_t port, struct kr_dct_rec *rec,
			struct kr_dct_port_rec *prec);

/* Drop node_id's cached record (a remote error showed it stale); the next resolve re-reads it. */
void kr_dct_invalidate(struct kr_ctx *ctx, uint32_t node_id);
/* Whether the node cache holds node_id's record now (benchmarks: the report is one-way). */
bool kr_dct_cached(struct kr_ctx *ctx, uint32_t node_id);


/* What this process's MetaServer lookups did (for tests and diagnostics). */
struct kr_dct_look_stats {
	uint64_t reads;         /* READs posted */
	uint64_t local_errors;  /* completed with a local error: a bug on our side */
	uint64_t remote_errors; /* error completion or timeout: MetaServer unreachable */
	uint64_t torn;          /* copies refused as torn or in update */
	uint64_t hits;          /* node cache hits and misses of this process */
	uint64_t misses;
};
void kr_dct_look_stats_get(struct kr_dct_look_stats *st);

#endif /* KR_JOB_H */
