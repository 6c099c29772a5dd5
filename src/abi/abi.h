/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/abi: the contract between krpoold and its jobs, the only header both
 * programs include — every structure
 * that crosses the process boundary, in shared memory or on the socket.
 *
 * Three kinds of memory (doc/security.md):
 *   keeper-private   device tables, lease and tenant tables, struct
 *                    kr_keeper and everything in abi.h: never mapped by a
 *                    job.
 *   job-readable     the pool segment (struct kr_pool_seg and its tables)
 *                    and the tenant zone head (struct kr_zone_hdr, the DCI
 *                    descriptors, the node cache): the keeper writes them,
 *                    jobs map them from read-only file descriptions, so
 *                    nothing here is ever read back from a job.
 *   job-writable     the zone's DCI rings, CQs and doorbell records, the
 *                    receive endpoints' SRQs and CQs (keeper_port.c), the
 *                    job's heap and its UAR page: no structure of this file
 *                    lives there. What the keeper and the sim engine read
 *                    from it, each copied once and checked:
 *       SQ doorbell record (16-bit producer index)   more than a ring ahead
 *                    of the engine's own consumer index: dropped, never
 *                    flushed ring after ring (sim_req.c)
 *       send WQE (ctrl, segments)                    size, opcode, SGE count,
 *                    lengths and keys against the QP's PD before use; a bad
 *                    one moves that QP to error (sim_req.c, sim_mem.c)
 *       SRQ doorbell record (16-bit receive counter) more than a ring ahead
 *                    of the engine's consumer: that message is not
 *                    delivered (sim_recv.c)
 *       receive WQE (data segments)                  copied when taken; each
 *                    segment's key and range checked at the scatter
 *       CQ consumer index (CQ doorbell record)       only compared: a CQE that
 *                    would overrun is dropped (sim_cqe.c)
 *       UAR page seq word                            only compared by the
 *                    engine's futex wait (sim_bell.c)
 *       heap bytes                                   payload only, through
 *                    MKEY checks
 *   The keeper itself reads nothing from job-writable memory: ring state on
 *   reclaim comes from the device (QUERY_QP, QUERY_CQ), descriptors are
 *   written where its own layout puts them (kr_keeper_zone_dci).
 */
#ifndef KR_ABI_H
#define KR_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "devx/devx.h"
#include "krcore/krmin_uapi.h"

/* ---- limits and defaults ---- */

#define KR_POOL_MAX_TENANTS    64u
#define KR_POOL_MAX_DCIS       256u  /* per tenant */
#define KR_POOL_MAX_RC	       64u   /* per tenant */
#define KR_POOL_MAX_JOBS       64u   /* per tenant */
#define KR_POOL_MAX_VQPS       1024u /* per tenant */
#define KR_POOL_MAX_HEAP_MB    64u
#define KR_POOL_MAX_JOB_MRS    64u	  /* kr_reg_mr per job */
#define KR_POOL_MAX_PORTS	16u	   /* receive endpoints per tenant (keeper_port.c) */
#define KR_POOL_PORT_WQE	256u	   /* receive buffers an endpoint's SRQ holds */
#define KR_POOL_PORT_SGE	2u	   /* room per receive WQE (the library posts one segment) */
#define KR_POOL_MAX_CONNS      4096u	  /* sockets the keeper serves at once */
#define KR_POOL_PAGE	       (2u << 20) /* hugepage size the keeper uses */
#define KR_POOL_HELLO_MS       2000u	  /* a connection must attach within this */
#define KR_POOL_UID_CONNS_EXTRA 16u	  /* a uid's connections: its tenant's jobs + this */
#define KR_POOL_DCI_WQEBB      256u
#define KR_POOL_DCI_CQE	       256u
#define KR_POOL_DCT_SRQ_WQE    64u
#define KR_POOL_DCT_RECV_LEN   1024u
#define KR_POOL_RC_RQ_WQE      64u
#define KR_POOL_READY_DCIS     1u /* DCIs an attach puts on the job's ready ring: the first connect calls nobody */
#define KR_POOL_ERR_BURST      256u /* keeper_guard.c: DCI errors a job may cause at once, */
#define KR_POOL_ERR_RATE       100u /* and per second after that, */
#define KR_POOL_ERR_THROTTLE_MS 1000u /* else its leases are refused this long; */
#define KR_POOL_ERR_DETACH     8u   /* this many throttles and it is detached */
#define KR_POOL_DEFAULT_SOCKET "/run/krcore/krpoold.sock"
#define KR_POOL_BASE_VA	       0x200000000000ull /* outside ASan's shadow and allocator */
#define KR_SHM_VA_OFFSET       0x40000000000ull  /* job-writable memory: base_va + 4 TB */
#define KR_POOL_EAL_RESERVE    (4ull << 20)	 /* the EAL's own heap, in the budget */

/* ================= shared memory layouts (keeper_segment.c) ================= */

#define KR_POOL_SEG_MAGIC  0x6b72706fu /* "krpo" */
#define KR_POOL_ZONE_MAGIC 0x6b72747au /* "krtz" */
#define KR_POOL_VERSION	   7u	       /* 7: idle_returns */

enum kr_slot_state {
	KR_SLOT_EMPTY = 0, /* no QP built (yet) */
	KR_SLOT_FREE,	   /* ready, in the tenant's free ring */
	KR_SLOT_LEASED,	   /* owned by owner_job */
	KR_SLOT_DIRTY,	   /* returned or reclaimed: the keeper resets it */
	KR_SLOT_BROKEN,	   /* reset failed: kept out of the pool */
};

/*
 * Where an RC slot stands with its peer (keeper_pair.c). The keeper writes it;
 * the holder reads it to know when it may post.
 */
enum kr_rc_link {
	KR_LINK_NONE = 0, /* parked in INIT */
	KR_LINK_PAIRING,  /* the peer's keeper was asked for an RC QP of its own */
	KR_LINK_UP,	  /* RTS, connected to the peer's QP: the holder posts */
	KR_LINK_FAILED,	  /* refused, or no answer in time: the holder gives it back */
	KR_LINK_PEER,	  /* the far end of a pair another keeper asked for (owner_job 0) */
};

enum kr_job_state {
	KR_JOB_FREE = 0,
	KR_JOB_ATTACHED,
	KR_JOB_DIRTY, /* detached or dead: heap to scrub and re-key */
};

enum kr_slot_kind {
	KR_SLOT_DCI = 1,
	KR_SLOT_RC = 2,
	KR_SLOT_VQP = 3,
};

/*
 * One leasable thing: a DCI, a spare RC QP or a vQP slot.
 * Notes: written only by the keeper (jobs map the segment read-only): state,
 * owner_job (job table index + 1, 0 = none), owner_pid and gen (bumped at
 * every grant, so a stale release is refused) change together under the
 * keeper's single event loop; readers (jobs, krctl) may see them mid-update
 * and must treat them as a snapshot. qpn is 0 for vQP slots.
 */
struct kr_pool_slot {
	uint32_t state; /* enum kr_slot_state */
	uint32_t kind;	/* enum kr_slot_kind */
	uint32_t tenant;
	uint32_t index; /* within its tenant and kind */
	uint32_t qpn;
	uint32_t owner_job;
	int32_t owner_pid;
	uint32_t gen;
	uint32_t resets; /* times the keeper reset it (release, reclaim, recovery) */
	uint32_t link;	 /* RC: enum kr_rc_link */
};
_Static_assert(sizeof(struct kr_pool_slot) == 40, "kr_pool_slot layout");
_Static_assert(offsetof(struct kr_pool_slot, gen) == 28, "kr_pool_slot.gen");

/*
 * The ready-DCI ring of a job slot: DCIs the keeper leased to the job ahead
 * of its next threads' first connects, so that they take one with no call
 * (keeper_ready.c, job_lease.c). Entry i lives at ready[i % KR_JOB_READY_RING]
 * in the job slot (keeper-written; the segment is read-only to jobs) and its
 * claim word at claim[i % KR_JOB_READY_RING] in the first bytes of the job's
 * heap (both write it): the keeper stores KR_READY_OFFER(i) there, then the
 * entry, then ready_prod = i + 1 (release); the job takes entry i by a CAS
 * from KR_READY_OFFER(i) to KR_READY_CLAIMED(i), the keeper takes an offer
 * back (a tenant short of DCIs) by a CAS to KR_READY_REVOKED(i): exactly one
 * wins. The keeper writes position i % RING again only once entry i is
 * claimed or revoked, and sees the claims on its own (no message).
 */
#define KR_JOB_READY_RING 4u
#define KR_JOB_READY_FILL 2u /* offers kept ahead once the job has used a ready DCI */
#define KR_READY_OFFER(i)   ((uint32_t)(i) << 2 | 1u)
#define KR_READY_CLAIMED(i) ((uint32_t)(i) << 2 | 2u)
#define KR_READY_REVOKED(i) ((uint32_t)(i) << 2 | 3u)
/*
 * A job heap's first bytes, which kr_malloc never hands out: the library's
 * own (a MetaServer row the lookup READs, job_resolve.c; 5 KiB), then the
 * ready ring's claim words at KR_HEAP_READY_CLAIM_OFF.
 */
#define KR_HEAP_LIB_BYTES	8192u
#define KR_HEAP_READY_CLAIM_OFF (KR_HEAP_LIB_BYTES - 64u)
struct kr_pool_ready {
	uint32_t index; /* the DCI slot in the tenant */
	uint32_t gen;	/* of its lease */
	uint32_t qpn;
	uint32_t rsvd;
	uint64_t token; /* fenced: the kmod-min token the job maps it with */
};
_Static_assert(sizeof(struct kr_pool_ready) == 24, "kr_pool_ready layout");

/*
 * The keeper's answer to a job's KR_MSG_PAIR (asked without waiting, from
 * kr_poll: virtqp_promote.c, job_pair.c), in the job slot at pair_ans[the ask's ans]:
 * the fields first, then seq = the request's hdr.seq (release). The job
 * reads it when seq is the one it sent; it has at most KR_JOB_PAIR_ASKS
 * asks out, one per entry.
 */
#define KR_JOB_PAIR_ASKS 4u
struct kr_pool_pair_ans {
	uint32_t seq;	 /* of the request answered; written last */
	int32_t status;	 /* 0 or -errno, as a reply's */
	uint32_t index;	 /* the RC slot leased */
	uint32_t gen;
	uint32_t qpn;
	uint32_t rsvd;
	uint64_t token; /* fenced: the kmod-min token */
};
_Static_assert(sizeof(struct kr_pool_pair_ans) == 32, "kr_pool_pair_ans layout");

/*
 * One job slot. Notes: keeper-written; pid/uid come from SO_PEERCRED, never
 * from the job's own words. gen is bumped at every attach.
 */
struct kr_pool_job {
	uint32_t state; /* enum kr_job_state */
	uint32_t tenant;
	int32_t pid;
	uint32_t uid;
	uint32_t gen;
	uint32_t dci_leases;
	uint32_t vqp_leases;
	uint32_t mrs;
	uint64_t attach_ns; /* CLOCK_MONOTONIC */
	uint64_t heap_len;  /* backed now (grows on demand) */
	/* keeper_guard.c: DCIs that came back from this job in error (a remote
	 * access error, retry exhaustion: what guessing keys looks like) */
	uint32_t remote_errors;
	uint32_t throttles;	    /* times its leases were refused for a while */
	uint64_t throttle_until_ns; /* leases answered -EBUSY until then */
	uint64_t bucket_ns;	    /* when bucket was last refilled */
	uint32_t bucket;	    /* errors it may still cause before a throttle */
	uint32_t ready_prod;	    /* entries of ready[] written since the attach */
	struct kr_pool_ready ready[KR_JOB_READY_RING];
	struct kr_pool_pair_ans pair_ans[KR_JOB_PAIR_ASKS];
};
_Static_assert(sizeof(struct kr_pool_job) == 304, "kr_pool_job layout");
_Static_assert(offsetof(struct kr_pool_job, attach_ns) == 32, "kr_pool_job.attach_ns");

/*
 * A tenant's public record (no secrets: every job and krctl can read it).
 * Notes: keeper-written. uid_plus1 is 0 while the slot is not bound to a uid
 * (a pinned slot keeps its uid); launch_tag is 0 while no launch holds it
 * (and dctn 0: a launch's DC target lives as long as the launch on the node).
 * The *_ring_off fields are offsets of rte_rings in the pool segment (uint32
 * slot indexes inside); only the keeper enqueues and dequeues, others may read
 * the counts. zone_va/zone_len: every process that maps the tenant zone maps
 * it at zone_va.
 */
struct kr_pool_tenant {
	uint32_t uid_plus1;
	uint32_t pinned; /* bound by configuration */
	uint32_t pdn;
	uint32_t dctn;
	uint64_t dci_ring_off;
	uint64_t rc_ring_off;
	uint64_t vqp_ring_off;
	uint64_t job_ring_off;
	uint64_t zone_va;
	uint64_t zone_len;
	uint64_t dct_recvs; /* SENDs the tenant's DCT received */
	uint32_t jobs_attached;
	uint32_t growing; /* written by the keeper's grow thread: slot + 1 it builds, 0 = idle */
	uint64_t dct_key_violations; /* requests its DCTs dropped for a wrong DC key (worker) */
	uint64_t launch_tag;	     /* the launch it serves (public), 0 = none */
	uint64_t launches;	     /* launches it served since start */
	uint64_t renewals;	     /* rebuilds on fresh memory between launches */
	uint32_t ports_bound;	     /* its launch's bound ports */
	uint32_t dct_events;	     /* its DCT CQ's events that woke the loop (keeper_dct_event.c) */
};
_Static_assert(sizeof(struct kr_pool_tenant) == 120, "kr_pool_tenant layout");
_Static_assert(offsetof(struct kr_pool_tenant, zone_va) == 48, "kr_pool_tenant.zone_va");

/*
 * The pool segment: one memzone, mapped read-only by jobs and krctl at the
 * keeper's address. Notes: the keeper is the only writer of every byte.
 * Tables follow the header at the *_off offsets (from the segment start):
 *   tenants[ntenants], dci[ntenants * dcis], rc[ntenants * rc_spares],
 *   vqp[ntenants * vqps], jobs[ntenants * jobs], then the rte_rings.
 * keeper_gen is random per keeper start: a job compares it to the one it
 * attached with. heartbeat_ns advances every keeper tick (krctl shows it).
 */
struct kr_pool_seg {
	uint32_t magic;
	uint32_t version;
	uint64_t size;
	uint64_t keeper_gen;
	int32_t keeper_pid;
	uint32_t ntenants;
	uint32_t dcis;	    /* per tenant */
	uint32_t rc_spares; /* per tenant */
	uint32_t vqps;	    /* per tenant */
	uint32_t jobs;	    /* per tenant */
	uint64_t heap_len;  /* per job: the most a heap grows to */
	uint64_t tenants_off;
	uint64_t dci_off;
	uint64_t rc_off;
	uint64_t vqp_off;
	uint64_t jobs_off;
	uint64_t rings_off;
	uint64_t start_ns;
	uint64_t heartbeat_ns;
	uint64_t attaches;
	uint64_t detaches;
	uint64_t deaths;	  /* jobs that went without a detach */
	uint64_t reclaims;	  /* leases taken back from dead or detaching jobs */
	uint64_t resets;	  /* QP resets (release, reclaim, recovery) */
	uint64_t refused;	  /* attaches refused (bad request, full, peer) */
	uint64_t last_reclaim_ns; /* EOF seen -> leases back in the free rings */
	char device[64];
	uint64_t lease_calls; /* KR_MSG_LEASE requests served (not the attach grants) */
	/* MetaServer datagrams dropped (enum kr_meta_drop in src/keeper/meta/meta.h: size,
	 * unauthenticated, malformed, replayed), by the MetaServer and the
	 * registration thread: written from those threads, relaxed atomics */
	uint64_t meta_drops[4];
	/* how jobs reach the device: 1 trusted (no kmod-min: a job could write other
	 * jobs' queues; on hw it holds the command fd), 0 fenced: each job maps only
	 * the DCIs it leases, through /dev/krmin (keeper_krmin.c) */
	uint32_t trusted;
	uint32_t uid_launches; /* per-uid quotas in force (keeper_quota.c) */
	struct kr_devx_port port; /* what peers address: GID, MAC or LID, the GID index */
	/* memory the keeper holds, refreshed every 100 ms: hugepages (the
	 * EAL's and its hugetlb memfds, reserved or touched) and its resident set */
	uint64_t hugepage_bytes;
	uint64_t rss_bytes;
	uint32_t uid_ports; /* per-uid quota in force (keeper_quota.c) */
	uint32_t rsvd;
	uint64_t ready_grants; /* DCIs leased into jobs' ready rings (keeper_ready.c) */
	uint64_t idle_returns; /* DCIs given back idle, FREE with no reset (keeper_dci_idle.c) */
};
_Static_assert(sizeof(struct kr_pool_seg) == 360, "kr_pool_seg layout");
_Static_assert(offsetof(struct kr_pool_seg, tenants_off) == 56, "kr_pool_seg.tenants_off");
_Static_assert(offsetof(struct kr_pool_seg, device) == 176, "kr_pool_seg.device");

/*
 * What a job needs to post through one DCI of its tenant, in the tenant zone.
 * Offsets are from the zone start. Notes: the keeper writes a descriptor when
 * it builds the DCI and cq_ci each time it hands the DCI out (the consumer
 * index the new holder starts from); jobs read. A job may scribble here (the
 * zone is job-writable, shared within a tenant): the keeper never reads these
 * back, it keeps its own copy.
 */
struct kr_zone_dci {
	uint32_t qpn;
	uint32_t user_index;
	uint32_t cqn;
	uint32_t uar_page;
	uint32_t sq_wqebb_cnt;
	uint32_t ncqe;
	uint64_t sq_off;
	uint64_t dbrec_off;
	uint64_t cqe_off;
	uint64_t cq_dbrec_off;
	uint32_t cq_ci;
	uint32_t gen; /* lease generation this descriptor was handed out with */
};
_Static_assert(sizeof(struct kr_zone_dci) == 64, "kr_zone_dci layout");
_Static_assert(offsetof(struct kr_zone_dci, cq_ci) == 56, "kr_zone_dci.cq_ci");

/*
 * The tenant zone header: tenant secrets (DC access key) and the DCI
 * descriptors, then the node cache, in the zone head (kr_keeper_zone_head_len:
 * written by the keeper, mapped read-only by the tenant's jobs only). The
 * DCI rings and CQs follow in pages the jobs write (WQEs, doorbell records,
 * consumer indexes).
 */
struct kr_zone_hdr {
	uint32_t magic;
	uint32_t tenant;
	uint64_t size;
	uint32_t dctn;
	uint32_t ndci;
	uint64_t dc_key;
	struct kr_devx_port port; /* the keeper's port: address, GID index, link layer */
	uint64_t dci_off; /* struct kr_zone_dci[ndci] */
	uint64_t dct_off; /* abi_cache.c: struct kr_dct_zone (node id, cache, MetaServers); 0 = none */
	uint64_t ep_off;  /* struct kr_zone_ep[nep]: receive endpoints, in the head */
	uint32_t nep;
	uint32_t nrc; /* RC slots: struct kr_zone_dci[nrc] at rc_off */
	uint64_t rc_off;
	uint64_t rsvd;
};
_Static_assert(sizeof(struct kr_zone_hdr) == 112, "kr_zone_hdr layout");
_Static_assert(offsetof(struct kr_zone_hdr, port) == 32, "kr_zone_hdr.port");

/*
 * One receive endpoint of the tenant (keeper_port.c): a DC target made when a
 * job binds a port, over an SRQ and a CQ that stay warm in the zone's
 * job-writable pages. Notes: keeper-written, jobs read (the zone head):
 * seq is odd while the keeper rewrites the entry, then one more (a reader
 * copies and re-checks it). The binder reads its queues here; every job of
 * the launch reads a port's address (dctn, the binder's sender table).
 * port 0: not bound. Queue offsets are from the zone start.
 */
struct kr_zone_ep {
	uint32_t seq;
	uint32_t port;	     /* 1..65535, 0 = free */
	uint32_t dctn;	     /* the binding's DC target */
	uint32_t gen;	     /* bumped at every bind */
	uint32_t owner_job;  /* job table index + 1 */
	uint32_t user_index; /* the DCT's: names it in its CQEs */
	uint32_t srqn;
	uint32_t cqn;
	uint32_t srq_nwqe;
	uint32_t srq_log_stride;
	uint32_t ncqe;
	uint32_t nslots; /* senders the binder's table holds */
	uint64_t srq_off;
	uint64_t srq_dbrec_off;
	uint64_t cqe_off;
	uint64_t cq_dbrec_off;
	uint64_t table_va; /* the binder's sender table, in its heap (virtqp_port.c) */
	uint32_t table_rkey;
	uint32_t rsvd;
};
_Static_assert(sizeof(struct kr_zone_ep) == 96, "kr_zone_ep layout");

/* Table accessors: the segment holds offsets, these make them addresses here. */
static inline struct kr_pool_tenant *kr_seg_tenant(const struct kr_pool_seg *s, uint32_t t)
{
	return (struct kr_pool_tenant *)((uintptr_t)s + s->tenants_off) + t;
}
static inline struct kr_pool_slot *kr_seg_dci(const struct kr_pool_seg *s, uint32_t t, uint32_t i)
{
	return (struct kr_pool_slot *)((uintptr_t)s + s->dci_off) + (size_t)t * s->dcis + i;
}
/*
 * More than a quarter of tenant t's built DCIs free (FREE slots are those in
 * its free ring)? What must stay for another thread's first connect: the
 * library leases a thread's second DCI (virtqp_policy.c) and the keeper
 * offers on a ready ring (keeper_ready.c) only then.
 */
static inline bool kr_seg_dci_room(const struct kr_pool_seg *s, uint32_t t)
{
	uint32_t built = 0, free_now = 0;

	for (uint32_t i = 0; i < s->dcis; i++) {
		uint32_t st = __atomic_load_n(&kr_seg_dci(s, t, i)->state, __ATOMIC_RELAXED);

		built += st != KR_SLOT_EMPTY;
		free_now += st == KR_SLOT_FREE;
	}
	return free_now > built / 4;
}
static inline struct kr_pool_slot *kr_seg_rc(const struct kr_pool_seg *s, uint32_t t, uint32_t i)
{
	return (struct kr_pool_slot *)((uintptr_t)s + s->rc_off) + (size_t)t * s->rc_spares + i;
}
static inline struct kr_pool_slot *kr_seg_vqp(const struct kr_pool_seg *s, uint32_t t, uint32_t i)
{
	return (struct kr_pool_slot *)((uintptr_t)s + s->vqp_off) + (size_t)t * s->vqps + i;
}
static inline struct kr_pool_job *kr_seg_job(const struct kr_pool_seg *s, uint32_t j)
{
	return (struct kr_pool_job *)((uintptr_t)s + s->jobs_off) + j;
}
static inline void *kr_seg_at(const struct kr_pool_seg *s, uint64_t off)
{
	return (void *)((uintptr_t)s + off);
}
static inline struct kr_zone_dci *kr_zone_dci_at(const struct kr_zone_hdr *z, uint32_t i)
{
	return (struct kr_zone_dci *)((uintptr_t)z + z->dci_off) + i;
}
static inline struct kr_zone_dci *kr_zone_rc_at(const struct kr_zone_hdr *z, uint32_t i)
{
	return (struct kr_zone_dci *)((uintptr_t)z + z->rc_off) + i;
}
static inline const struct kr_zone_ep *kr_zone_ep_at(const struct kr_zone_hdr *z, uint32_t i)
{
	return (const struct kr_zone_ep *)((uintptr_t)z + z->ep_off) + i;
}

/* ================= the attach protocol (abi_msg.c) ================= */

/*
 * SOCK_SEQPACKET over a UNIX socket: one message is one request or one reply,
 * so a short or long message is malformed, never a partial read. Host byte
 * order (same machine). Every request gets exactly one reply with a status,
 * but two one-way ones: KR_MSG_CACHE (a report) and KR_MSG_PAIR (answered
 * in the job slot).
 */
#define KR_PROTO_MAGIC	      0x6b725031u /* "krP1" */
/* 10: the ready-DCI ring in the job slot (the attach's grant comes on it);
 * 11: KR_MSG_PAIR answered in the job slot (kr_pool_pair_ans), not by a reply;
 * 12: the attach carries the launch key, the keeper derives tag and DC key */
#define KR_PROTO_VERSION      13u
#define KR_ATTACH_MAX_REGIONS 64u
#define KR_ATTACH_NO_FD	      0xffffffffu

enum kr_msg_type {
	KR_MSG_ATTACH = 1,
	KR_MSG_DETACH,
	KR_MSG_LEASE,
	KR_MSG_RELEASE,
	KR_MSG_REG_MR,
	KR_MSG_DEREG_MR,
	KR_MSG_STATUS, /* observer: a copy of the pool segment, a chunk at a time */
	KR_MSG_CACHE,  /* job: what it learnt for the node cache, which only the keeper writes */
	KR_MSG_BIND,   /* job: a receive endpoint for a port (keeper_port.c) */
	KR_MSG_UNBIND,
	KR_MSG_HEAP_GROW, /* job: back more of its heap (keeper_heap.c) */
	KR_MSG_REG_MR_FD, /* job: register a file it shares, the descriptor attached (keeper_mr.c) */
	KR_MSG_PAIR,	  /* job: an RC slot paired with one of a peer keeper's (keeper_pair.c) */
	KR_MSG_REPLY = 0x80,
};

struct kr_msg_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len; /* whole message, header included */
	uint32_t seq;
};
_Static_assert(sizeof(struct kr_msg_hdr) == 16, "kr_msg_hdr layout");

enum kr_attach_flags {
	/* krctl: no job slot, no descriptor, no shared memory; status by KR_MSG_STATUS */
	KR_ATTACH_F_OBSERVE = 1u << 0,
	/* a job without a launch key: the keeper draws one (a launch of one job) */
	KR_ATTACH_F_LONE = 1u << 1,
};

/*
 * A job gives its launch key (to a keeper whose uid it checked first); the
 * keeper derives the launch's tag and DC access key (abi_launch.c), so a
 * fresh process pays no hashing and no libsodium start-up, and an attach
 * cannot name a launch whose key it lacks. The keeper binds the job to the
 * tenant slot of that launch (binding a free one to it on its first rank)
 * and refuses a launch bound under another uid. Observers and lone jobs send
 * a zero key; a zero key without KR_ATTACH_F_LONE is refused.
 */
struct kr_msg_attach {
	struct kr_msg_hdr hdr;
	uint32_t flags;
	uint32_t rsvd;
	uint8_t launch_key[32]; /* KR_LAUNCH_KEY_BYTES */
};

/* A region to map: fds[fd_index] at file offset off, length len, at va. */
struct kr_msg_region {
	uint64_t va;
	uint64_t len;
	uint64_t off;
	uint32_t fd_index;
	uint32_t prot; /* PROT_READ or PROT_READ|PROT_WRITE */
};
_Static_assert(sizeof(struct kr_msg_region) == 32, "kr_msg_region layout");

enum kr_region_role {
	KR_REGION_SEG = 1,
	KR_REGION_ZONE,
	KR_REGION_HEAP,
};

struct kr_msg_attach_reply {
	struct kr_msg_hdr hdr;
	int32_t status; /* 0 or -errno */
	uint32_t tenant;
	uint32_t job; /* job table index */
	uint32_t job_gen;
	uint64_t keeper_gen;
	uint64_t seg_va;
	uint64_t seg_len;
	uint64_t zone_va;
	uint64_t zone_len;
	uint64_t heap_va;
	uint64_t heap_len; /* backed now (the regions), heap_max reserved at heap_va */
	uint64_t heap_max;
	uint32_t heap_lkey;
	uint32_t heap_rkey;
	/* 1: the device wakes only through the tenant's page (KR_DEVX_BE_WAKE_PAGE,
	 * the sim), so it comes even from a fenced keeper */
	uint32_t dev_wake_page;
	/* the tenant's UAR page: where the backend exports pages alone (the sim),
	 * its own descriptor (fenced: only the device's wake line); hw --trusted,
	 * the command fd; a fenced ConnectX keeper sends none: KR_ATTACH_NO_FD */
	uint32_t uar_fd_index;
	/* where the page is in that descriptor; fenced: reg_off is where every
	 * DCI's own UAR page has its doorbell register */
	struct kr_devx_uar_ref uar_ref;
	char dev_name[64];
	uint32_t nregions;
	uint32_t nfds;
	/* 1: kmod-min fences the DCI rings: the zone regions cover its head only,
	 * and each leased DCI is mapped through /dev/krmin with its token */
	uint32_t fenced;
	/* fenced: bytes of a DCI's block of the zone, from its SQ's page (the
	 * rings of its slot; the slot's next page is its UAR page); else 0 */
	uint32_t dci_block;
	struct kr_msg_region region[KR_ATTACH_MAX_REGIONS];
	uint8_t region_role[KR_ATTACH_MAX_REGIONS];
	/* fenced: the BlueFlame buffers of every DCI's own UAR page (hw: bytes
	 * of each; 0: doorbells only) */
	uint32_t dci_bf_size;
	/* fenced: bytes of an RC slot's block (its rings; then its own UAR page), else 0 */
	uint32_t rc_block;
	/* what the job's launch key derives (a job; 0 to an observer) */
	uint64_t launch_tag;
	uint64_t dc_key;
};

struct kr_msg_lease {
	struct kr_msg_hdr hdr;
	uint32_t kind;	/* enum kr_slot_kind */
	uint32_t index; /* release only */
	uint32_t gen;	/* release only */
	uint32_t flags; /* release only: KR_RELEASE_F_* */
};
/* A DCI given back with nothing in flight and no error seen: a trusted keeper
 * checks its rings and frees it with no reset (keeper_dci_idle.c) */
#define KR_RELEASE_F_IDLE 1u

struct kr_msg_mr {
	struct kr_msg_hdr hdr;
	uint64_t addr; /* reg: job address inside its heap */
	uint64_t len;
	uint32_t access; /* KR_ACCESS_* */
	uint32_t id;	 /* dereg */
};

/*
 * Bind: port, and the sender table the binder keeps in its heap under one of
 * its MRs (remote read and atomic rights, nslots * 16 + 64 bytes). Unbind:
 * port with the endpoint's index and gen from the bind's reply.
 */
struct kr_msg_bind {
	struct kr_msg_hdr hdr;
	uint32_t port;
	uint32_t nslots;
	uint64_t table_va;
	uint32_t table_rkey;
	uint32_t index; /* unbind */
	uint32_t gen;	/* unbind */
	uint32_t rsvd;
};

/*
 * Register len bytes at offset off of the file whose descriptor comes with
 * the message (SCM_RIGHTS, exactly one), which the job maps at addr: the key
 * names addr (the IOVA), the keeper maps the file itself. Reply: index (the
 * MR id for KR_MSG_DEREG_MR), lkey, rkey.
 */
struct kr_msg_mr_fd {
	struct kr_msg_hdr hdr;
	uint64_t addr;
	uint64_t off;
	uint64_t len;
	uint32_t access; /* KR_ACCESS_* */
	uint32_t rsvd;
};

/*
 * Heap growth: len is the heap length the job needs backed (from heap_va).
 * The reply's heap_len is what is backed now; the pages past the job's old
 * length come as one descriptor mapped at heap_va + old length (none when
 * nothing was added), with the keys of the MR over the whole heap.
 */
struct kr_msg_heap {
	struct kr_msg_hdr hdr;
	uint64_t len;
	uint64_t rsvd;
};

struct kr_msg_heap_reply {
	struct kr_msg_hdr hdr;
	int32_t status;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t nfds; /* 0 or 1 */
	uint64_t heap_len;
	uint64_t chunk_off; /* where the descriptor's pages go, from heap_va */
	uint64_t chunk_len;
};

/*
 * Pair: the peer's DC target (its tenant of the job's launch: the DCT a vQP
 * to it posts to) and port address. One-way: the answer (the RC slot
 * leased: index, gen, qpn; its link KR_LINK_PAIRING until the keepers are
 * done) goes to the job slot's pair_ans[ans], so a post that asks never
 * waits for the keeper.
 */
struct kr_msg_pair {
	struct kr_msg_hdr hdr;
	uint32_t node;
	uint32_t dctn;
	struct kr_devx_addr addr;
	uint32_t ans; /* < KR_JOB_PAIR_ASKS: where the answer goes */
	uint32_t rsvd;
};

/*
 * Between keepers, a SEND from one tenant's control DCI to the other's DC
 * target (same launch, so same DC key): KR_PAIR_REQ asks for an RC QP
 * connected to src_qpn, KR_PAIR_ACK gives it (src_qpn), KR_PAIR_NAK refuses
 * (status), KR_PAIR_UNPAIR lets the pair named by cookie go. Little-endian.
 */
#define KR_PAIR_MAGIC	0x6b725052u /* "krPR" */
#define KR_PAIR_VERSION 1u
enum kr_pair_type {
	KR_PAIR_REQ = 1,
	KR_PAIR_ACK,
	KR_PAIR_NAK,
	KR_PAIR_UNPAIR,
};
struct kr_pair_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint64_t launch_tag;
	uint64_t cookie; /* the asking keeper's: its slot and the lease's generation */
	uint32_t src_node;
	uint32_t src_dctn; /* the sender's tenant DCT: where the answer goes */
	struct kr_devx_addr src_addr;
	uint32_t src_qpn;
	uint32_t psn; /* the sender's first send PSN */
	uint32_t dst_qpn;
	int32_t status;
};
_Static_assert(sizeof(struct kr_pair_msg) == 72, "kr_pair_msg layout");

struct kr_msg_reply {
	struct kr_msg_hdr hdr;
	int32_t status;
	uint32_t index; /* lease: slot index; reg_mr: mr id; bind: endpoint */
	uint32_t gen;
	uint32_t qpn; /* bind: the DCT number */
	uint32_t lkey;
	uint32_t rkey;
	uint64_t token; /* a fenced DCI lease: the kmod-min grant the job claims, else 0 */
};

/* Observer: bytes [off, off + len) of the pool segment, len <= KR_STATUS_CHUNK. */
#define KR_STATUS_CHUNK    (32u * 1024)
#define KR_OBSERVE_MAX_SEG (1ull << 30) /* larger: not a segment we built */
/*
 * KR_MSG_CACHE, one-way (no reply: neither the connect path nor kr_poll
 * waits for it): KR_CACHE_PUT carries a record the job read from a
 * MetaServer (struct kr_dct_wire, CRC and all); KR_CACHE_FORGET names a
 * node whose record failed the job (rec all zero).
 */
enum { KR_CACHE_PUT = 1, KR_CACHE_FORGET = 2 };
#define KR_CACHE_REC_BYTES 48u
struct kr_msg_cache {
	struct kr_msg_hdr hdr;
	uint32_t op;
	uint32_t node_id; /* FORGET */
	uint8_t rec[KR_CACHE_REC_BYTES];
};

struct kr_msg_status {
	struct kr_msg_hdr hdr;
	uint64_t off;
	uint32_t len;
	uint32_t rsvd;
};

struct kr_msg_status_reply {
	struct kr_msg_hdr hdr;
	int32_t status;
	uint32_t len;	  /* bytes in data */
	uint64_t seg_len; /* the segment's size now */
	uint8_t data[KR_STATUS_CHUNK];
};

_Static_assert(sizeof(struct kr_msg_attach) == 56, "kr_msg_attach layout");
_Static_assert(sizeof(struct kr_msg_status) == 32, "kr_msg_status layout");
_Static_assert(offsetof(struct kr_msg_status_reply, data) == 32, "kr_msg_status_reply layout");
_Static_assert(sizeof(struct kr_msg_lease) == 32, "kr_msg_lease layout");
_Static_assert(sizeof(struct kr_msg_mr) == 40, "kr_msg_mr layout");
_Static_assert(sizeof(struct kr_msg_reply) == 48, "kr_msg_reply layout");
_Static_assert(sizeof(struct kr_msg_cache) == 72, "kr_msg_cache layout");
_Static_assert(sizeof(struct kr_msg_bind) == 48, "kr_msg_bind layout");
_Static_assert(sizeof(struct kr_msg_heap) == 32, "kr_msg_heap layout");
_Static_assert(sizeof(struct kr_msg_mr_fd) == 48, "kr_msg_mr_fd layout");
_Static_assert(sizeof(struct kr_msg_heap_reply) == 56, "kr_msg_heap_reply layout");
_Static_assert(offsetof(struct kr_msg_attach_reply, region) == 208 &&
		   sizeof(struct kr_msg_attach_reply) ==
		       208 + 33 * KR_ATTACH_MAX_REGIONS + 24,
	       "kr_msg_attach_reply layout");

/* Fill a header. */
void kr_msg_init(struct kr_msg_hdr *h, uint16_t type, uint32_t len, uint32_t seq);
/*
 * kr_msg_send() - one message, with nfds descriptors (SCM_RIGHTS). Never
 * raises SIGPIPE. Returns 0, -EPIPE/-ECONNRESET (peer gone), -EINVAL, -errno.
 */
int kr_msg_send(int sock, const void *msg, size_t len, const int *fds, unsigned int nfds);
/*
 * kr_msg_recv() - one message into buf (up to cap bytes) and up to maxfds
 * descriptors. Returns its length (> 0), -ENOTCONN (peer closed), -EMSGSIZE
 * (truncated: longer than cap; any fds closed), -EPROTO (bad header), -EAGAIN
 * (non-blocking and none), or -errno. Received fds are CLOEXEC.
 */
ssize_t kr_msg_recv(int sock, void *buf, size_t cap, int *fds, unsigned int maxfds,
		    unsigned int *nfds);
/* Connect to a keeper socket: SOCK_SEQPACKET, CLOEXEC. fd or -errno (-ENOENT, -ECONNREFUSED...). */
int kr_msg_connect(const char *path);
/*
 * Append one hugepage region to an attach reply: the page at va is at offset
 * off of the descriptor fds[fd_index]. 0, or -E2BIG when the reply is full.
 */
int kr_msg_region_add(struct kr_msg_attach_reply *rep, uint64_t va, uint64_t off,
		      uint32_t fd_index, uint32_t prot, uint8_t role);
/* Send req and wait for its reply (same seq, REPLY bit). 0 or -errno as kr_msg_recv. */
int kr_msg_call(int sock, void *req, size_t reqlen, void *rep, size_t repcap, int *fds,
		unsigned int maxfds, unsigned int *nfds);
/* kr_msg_call() with one descriptor sent along (SCM_RIGHTS), none expected back. */
int kr_msg_call_fd(int sock, void *req, size_t reqlen, int fd, void *rep, size_t repcap);


/* ---- the socket (abi_msg.c) ---- */

/* DCIs one job may hold at once: its view table's size, the keeper's cap. */
#define KR_JOB_MAX_DCIS 64u

/* The socket path of a job: KR_KEEPER_SOCKET or the default (abi_msg.c). */
const char *kr_msg_socket_default(void);

/* ---- the launch key (abi_launch.c) ---- */

#define KR_LAUNCH_KEY_BYTES 32u

/* What a job's launch key derives; the key itself is not kept. */
struct kr_launch {
	uint64_t tag;	 /* names the launch: public */
	uint64_t dc_key; /* the DC access key of the launch's DC targets: secret */
	bool lone;	 /* no key was given: a random one, a launch of one job */
};

/*
 * kr_kdf_u64() - 64 bits of libsodium's crypto_kdf subkey id of key under
 * ctx (exactly 8 characters): launch keys (DC key, tag) and the cluster key
 * (the MetaServer table's DC key).
 */
uint64_t kr_kdf_u64(const uint8_t key[KR_LAUNCH_KEY_BYTES], uint64_t id, const char ctx[8]);
/*
 * kr_port_dc_key() - the DC access key of the binding gen of port in the
 * launch whose DC key is dc_key (a hash of the three; gen's low
 * KR_PORT_GEN_MASK bits, as the port records carry them): the keeper
 * creates the binding's DC target with it, senders post with it, and a
 * sender of an earlier binding is dropped (a key violation). 0 only when
 * libsodium cannot start.
 */
#define KR_PORT_GEN_MASK 0xffffu
uint64_t kr_port_dc_key(uint64_t dc_key, uint32_t port, uint32_t gen);
/* 64 hex digits into key (no libsodium: a fresh job parses it). 0 or -EINVAL. */
int kr_launch_parse(const char *hex, uint8_t key[KR_LAUNCH_KEY_BYTES]);
/*
 * kr_launch_key_get() - the launch key of this job, as the attach sends it:
 * from hex (64 hex digits), else $KR_LAUNCH_KEY; 1 when there is none (a
 * lone job: its keeper draws one), 0 with key filled, -EINVAL (reported).
 * Calls nothing of libsodium.
 */
int kr_launch_key_get(const char *hex, uint8_t key[KR_LAUNCH_KEY_BYTES]);
/*
 * kr_launch_derive() - the tag and DC key of launch key key (KR_LAUNCH_KEY_BYTES;
 * the keeper's side of an attach, and tests); key NULL: a key drawn here and
 * wiped, a lone launch (l->lone). 0, -EIO (libsodium failed to start).
 */
int kr_launch_derive(const uint8_t *key, struct kr_launch *l);
/*
 * kr_launch_init() - the launch of this job: kr_launch_key_get() and
 * kr_launch_derive(), a random key when there is none. 0, -EINVAL
 * (reported), -EIO (libsodium failed to start).
 */
int kr_launch_init(const char *hex, struct kr_launch *l);

/* ---- kmod-min slots, named by the keeper and the job alike ---- */

#define KR_KRMIN_PATH "/dev/" KRMIN_DEV_NAME
#define KR_KRMIN_PAGE 4096u /* the zone's page: the module must map in these */
/* An ioctl of /dev/krmin that names one slot (UNREG, REVOKE, RELEASE). 0 or -errno. */
static inline int kr_krmin_slot_call(int fd, unsigned long req, uint32_t slot)
{
	struct krmin_slot_id id = {.size = sizeof(id), .version = KRMIN_UAPI_VERSION, .slot = slot};

	return ioctl(fd, req, &id) ? -errno : 0;
}

/* ---- DC target records, MetaServer slots, the node cache (abi_rec.c, abi_port_rec.c, abi_slot.c, abi_cache.c) ---- */

/* Where to send DC requests for one launch on one node (the key: the caller's launch's). */
struct kr_dct_rec {
	uint32_t node_id;
	uint32_t tenant;   /* the launch's tenant slot on that node (for diagnostics) */
	uint32_t dctn;     /* 24 bits */
	uint64_t tag;      /* the launch tag */
	struct kr_devx_addr addr; /* the node's port: GID, and MAC (RoCE) or LID (IB) */
};

/*
 * Files, one role each:
 *   abi_rec.c      both: the record's wire form (version, CRC32C)
 *   abi_port_rec.c     both: a bound port's record in a MetaServer row
 *   abi_slot.c     both: MetaServer slot writer protocol, the reader's check
 *   abi_cache.c    both: the node cache in a tenant zone (seqlock entries, CLOCK)
 *   job_resolve.c  job: kr_dct_resolve/kr_dct_invalidate, the one-READ lookup
 *   keeper_dct.c   keeper: options, node id, the zone's dct block, static peers
 *   meta_server.c   keeper: the MetaServer table and thread, registration
 *
 * Lookups and the cache live in the tenant zone, not the pool segment: the
 * records carry the tenant's DC keys, and the segment is readable by every
 * tenant (and krctl). Each tenant's cache is shared by all its jobs.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define KR_DCT_REC_VERSION 3u /* 3: the port's MAC or LID */
#define KR_DCT_F_STATIC	   1u /* from --peers: never evicted nor invalidated */
#define KR_DCT_F_LID	   2u /* wire only: l2 holds a LID (InfiniBand), else a MAC */

/*
 * The record on the wire and in shared memory (MetaServer slots, the node
 * cache): routing data only, (dctn, launch tag) plus the node address, a
 * write generation, a version (0 = empty) and a CRC32C over the first 44
 * bytes. Little-endian fields (every supported host is).
 */
struct kr_dct_wire {
	uint8_t version;
	uint8_t flags;
	uint8_t l2[6];	      /* RoCE: the port's MAC; IB (KR_DCT_F_LID): its LID, little-endian */
	uint32_t node_id;
	uint32_t dctn_tenant; /* DCT number (bits 23:0), tenant slot (31:24) */
	uint64_t tag;
	uint8_t gid[16];
	uint32_t gen;
	uint32_t crc;
};
_Static_assert(sizeof(struct kr_dct_wire) == 48, "kr_dct_wire layout");
_Static_assert(offsetof(struct kr_dct_wire, crc) == 44, "kr_dct_wire.crc");

/* abi_rec.c */
uint32_t kr_dct_crc32c(const void *buf, size_t len);
/* Encode rec (dctn must fit 24 bits) with gen and flags. 0 or -EINVAL. */
int kr_dct_rec_encode(const struct kr_dct_rec *rec, uint32_t gen, uint32_t flags,
		      struct kr_dct_wire *w);
/* Decode and check: 0, -ENOENT (empty), -EBADMSG (bad version or CRC). */
int kr_dct_rec_decode(const struct kr_dct_wire *w, struct kr_dct_rec *rec);

/*
 * A bound port (keeper_port.c) as a MetaServer row publishes it, after the
 * node's tenant slots: the port's DC target and the binder's sender table,
 * for the launch tag. The node's address is its launch record's, in the
 * same row: one READ gives both.
 */
struct kr_dct_port_rec {
	uint32_t node_id;
	uint32_t port;
	uint32_t dctn;
	uint32_t nslots;
	uint64_t tag;
	uint64_t table_va;
	uint32_t table_rkey;
	uint32_t gen;
};

#define KR_DCT_PORT_VERSION 0x81u /* bit 7: never a launch record's version */

/* The port record in a slot's 48 bytes: CRC32C over the first 44, as struct kr_dct_wire. */
struct kr_dct_port_wire {
	uint8_t version;
	uint8_t rsvd0;
	uint16_t port;
	uint32_t node_id;
	uint32_t dctn;
	uint32_t nslots;
	uint64_t tag;
	uint64_t table_va;
	uint32_t table_rkey;
	uint32_t gen;
	uint32_t rsvd1;
	uint32_t crc;
};
_Static_assert(sizeof(struct kr_dct_port_wire) == 48, "kr_dct_port_wire layout");
_Static_assert(offsetof(struct kr_dct_port_wire, crc) == 44, "kr_dct_port_wire.crc");

/* abi_port_rec.c: encode (port 1..65535, dctn 24 bits, nslots 1..1024) or -EINVAL; decode as
 * kr_dct_rec_decode (-EBADMSG also for a launch record). */
int kr_dct_port_encode(const struct kr_dct_port_rec *rec, struct kr_dct_port_wire *w);
int kr_dct_port_decode(const struct kr_dct_port_wire *w, struct kr_dct_port_rec *rec);

/*
 * One MetaServer slot: one tenant slot of one node, 64 bytes. A node's slots
 * are one row (stride slots, the MetaServer's --tenants), read whole by one
 * RDMA READ; an empty slot (no launch) holds a version-0 record. Notes: written only by the MetaServer keeper (abi_slot.c):
 * seq odd while it updates; seq_end is stored after the record and seq last.
 * A reader (any node, one READ, no order guaranteed inside the READ) accepts
 * a copy only when seq == seq_end, even, non-zero, and the record's CRC holds:
 * a torn copy fails one of them (a record is self-checked, so a mix of two
 * records fails the CRC), an accepted one is a version that was written.
 */
struct kr_dct_slot {
	uint32_t seq;
	uint32_t rsvd;
	struct kr_dct_wire rec;
	uint32_t seq_end;
	uint32_t rsvd2;
};
_Static_assert(sizeof(struct kr_dct_slot) == 64, "kr_dct_slot layout");
_Static_assert(offsetof(struct kr_dct_slot, seq_end) == 56, "kr_dct_slot.seq_end");

/* abi_slot.c: the writer (one thread: the MetaServer keeper) and the reader's check. */
void kr_dct_slot_write(struct kr_dct_slot *slot, const struct kr_dct_wire *w);
/*
 * Check a copy of a slot: 0 (rec filled), -EAGAIN (torn or in update),
 * -ENOENT (empty), -ENOMSG (a port record: kr_dct_slot_check_port's).
 */
int kr_dct_slot_check(const struct kr_dct_slot *copy, struct kr_dct_rec *rec);
/* The same for a port slot: -ENOMSG for a launch record. */
int kr_dct_slot_check_port(const struct kr_dct_slot *copy, struct kr_dct_port_rec *rec);

/*
 * The node cache and the node's identity, in each tenant zone: the records
 * of the launch that holds the tenant (entries of its tag only). Set-associative, KR_DCT_CACHE_WAYS
 * entries per set, CLOCK inside a set: bounded whatever the cluster size.
 * Notes: jobs only read it (the zone head is mapped read-only in jobs); the
 * keeper alone writes: the header before any job attaches, the static
 * peers, and what jobs report (KR_MSG_CACHE: a record a job read from a
 * MetaServer, or a node to forget). An entry is a seqlock: the writer takes
 * it by CAS seq even -> odd, writes, releases with seq + 2; readers copy and
 * re-check seq and the CRC. No pointers: offsets from the zone start only.
 */
#define KR_DCT_CACHE_SETS 256u
#define KR_DCT_CACHE_WAYS 8u
#define KR_DCT_ZONE_MAGIC 0x6b72646du /* "krdm" */

struct kr_dct_centry {
	uint32_t seq; /* odd while a writer holds it */
	uint32_t ref; /* CLOCK reference bit */
	struct kr_dct_wire rec;
	uint64_t rsvd;
};
_Static_assert(sizeof(struct kr_dct_centry) == 64, "kr_dct_centry layout");

#define KR_DCT_MAX_META 4u /* MetaServer replicas, in lookup order */

/*
 * Where a MetaServer's slot table is (keeper-written). Any job of a node
 * reads it through the table's own DCT (remote READ only), whose key every
 * keeper of the cluster derives from the cluster key (0 without one).
 */
struct kr_dct_meta_addr {
	uint32_t node_id;
	uint32_t dctn;
	uint64_t dc_key;
	struct kr_devx_addr addr; /* the MetaServer's port */
	uint64_t va; /* slot table base: node n's row at va + n * stride * 64 */
	uint32_t rkey;
	uint32_t max_nodes;
	uint32_t stride; /* slots per row */
	uint32_t rsvd;
};
_Static_assert(sizeof(struct kr_dct_meta_addr) == 64, "kr_dct_meta_addr layout");

struct kr_dct_zone {
	uint32_t magic;
	uint32_t node_id; /* this node */
	uint32_t tenant;
	uint32_t nsets;
	uint32_t ways;
	uint32_t nmeta;
	uint64_t entries_off; /* from the zone start: struct kr_dct_centry[nsets * ways] */
	uint64_t hands_off;   /* from the zone start: uint32_t[nsets] CLOCK hands */
	uint64_t rsvd_hits, rsvd_misses; /* unused: jobs cannot write here (their own: look_stats) */
	uint64_t inserts, evictions, invalidations; /* the keeper's */
	uint64_t meta_seq; /* even: meta[0..nmeta) stable; odd: the keeper rewrites it */
	uint64_t launch_tag; /* the launch holding the tenant: the cache has its records only */
	struct kr_dct_meta_addr meta[KR_DCT_MAX_META];
};
_Static_assert(sizeof(struct kr_dct_zone) == 96 + 64 * KR_DCT_MAX_META, "kr_dct_zone layout");

/* Bytes the dct block takes in a tenant zone (header, hands, entries). */
uint64_t kr_dct_zone_bytes(void);
/* Lay out and reset the block at zone + off (keeper, before jobs attach). */
void kr_dct_zone_init(void *zone, uint64_t off, uint32_t node_id, uint32_t tenant);

/* abi_cache.c: the cache itself. Lookups only read (jobs); the rest is the keeper's. */
int kr_dct_cache_lookup(const void *zone, const struct kr_dct_zone *dz, uint32_t node_id,
			struct kr_dct_rec *rec);
/* true when node_id's entry is a static peer's (never forgotten). */
bool kr_dct_cache_is_static(const void *zone, const struct kr_dct_zone *dz, uint32_t node_id);
/* Insert or replace; best effort (0, or -EBUSY when a writer holds every candidate). */
int kr_dct_cache_insert(void *zone, struct kr_dct_zone *dz, const struct kr_dct_rec *rec,
			uint32_t flags);
/* Drop node_id's entry unless static. true when one was dropped. */
bool kr_dct_cache_invalidate(void *zone, struct kr_dct_zone *dz, uint32_t node_id);
/* Drop every entry, static ones too (the keeper, when a launch comes or leaves). */
void kr_dct_cache_clear(void *zone, struct kr_dct_zone *dz);
/*
 * A job's copy of its zone's MetaServer list (the keeper may rewrite it at
 * any time): up to KR_DCT_MAX_META entries into out. Returns how many (0
 * when the list never held still).
 */
uint32_t kr_dct_meta_snapshot(const struct kr_dct_zone *dz, struct kr_dct_meta_addr *out);

/* A MetaServer row: a slot per tenant, then the node's bound ports (REGISTER carries both). */
#define KR_META_MSG_TENANTS 64u
#define KR_META_MSG_PORTS   16u		  /* ports a node publishes; a row's port slots at most */

#endif /* KR_ABI_H */
