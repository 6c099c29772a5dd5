/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/pool: the shared ABI between krpoold and its jobs — every structure
 * that crosses the process boundary, in shared memory or on the socket.
 *
 * Three kinds of memory (doc/security.md):
 *   keeper-private   device tables, lease and tenant tables, struct
 *                    kr_keeper and everything in pool.h: never mapped by a
 *                    job.
 *   job-readable     the pool segment (struct kr_pool_seg and its tables)
 *                    and the tenant zone head (struct kr_zone_hdr, the DCI
 *                    descriptors, the node cache): the keeper writes them,
 *                    jobs map them from read-only file descriptions, so
 *                    nothing here is ever read back from a job.
 *   job-writable     the zone's DCI rings, CQs and doorbell records, the
 *                    receive endpoints' SRQs and CQs (pool_port.c), the
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
#ifndef KR_POOL_ABI_H
#define KR_POOL_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "devx.h"

/* ---- limits and defaults ---- */

#define KR_POOL_MAX_TENANTS    64u
#define KR_POOL_MAX_DCIS       256u  /* per tenant */
#define KR_POOL_MAX_RC	       64u   /* per tenant */
#define KR_POOL_MAX_JOBS       64u   /* per tenant */
#define KR_POOL_MAX_VQPS       1024u /* per tenant */
#define KR_POOL_MAX_HEAP_MB    64u
#define KR_POOL_MAX_JOB_MRS    64u	  /* kr_reg_mr per job */
#define KR_POOL_MAX_PORTS	16u	   /* receive endpoints per tenant (pool_port.c) */
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
#define KR_POOL_READY_DCIS     1u /* DCIs granted with the attach: the first connect calls nobody */
#define KR_POOL_ERR_BURST      256u /* pool_guard.c: DCI errors a job may cause at once, */
#define KR_POOL_ERR_RATE       100u /* and per second after that, */
#define KR_POOL_ERR_THROTTLE_MS 1000u /* else its leases are refused this long; */
#define KR_POOL_ERR_DETACH     8u   /* this many throttles and it is detached */
#define KR_POOL_DEFAULT_SOCKET "/run/krcore/krpoold.sock"
#define KR_POOL_BASE_VA	       0x200000000000ull /* outside ASan's shadow and allocator */
#define KR_SHM_VA_OFFSET       0x40000000000ull  /* job-writable memory: base_va + 4 TB */
#define KR_POOL_EAL_RESERVE    (4ull << 20)	 /* the EAL's own heap, in the budget */

/* ================= shared memory layouts (pool_segment.c) ================= */

#define KR_POOL_SEG_MAGIC  0x6b72706fu /* "krpo" */
#define KR_POOL_ZONE_MAGIC 0x6b72747au /* "krtz" */
#define KR_POOL_VERSION	   6u	       /* 6: per-uid quotas, ports per tenant */

enum kr_slot_state {
	KR_SLOT_EMPTY = 0, /* no QP built (yet) */
	KR_SLOT_FREE,	   /* ready, in the tenant's free ring */
	KR_SLOT_LEASED,	   /* owned by owner_job */
	KR_SLOT_DIRTY,	   /* returned or reclaimed: the keeper resets it */
	KR_SLOT_BROKEN,	   /* reset failed: kept out of the pool */
};

/*
 * Where an RC slot stands with its peer (pool_pair.c). The keeper writes it;
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
	/* pool_guard.c: DCIs that came back from this job in error (a remote
	 * access error, retry exhaustion: what guessing keys looks like) */
	uint32_t remote_errors;
	uint32_t throttles;	    /* times its leases were refused for a while */
	uint64_t throttle_until_ns; /* leases answered -EBUSY until then */
	uint64_t bucket_ns;	    /* when bucket was last refilled */
	uint32_t bucket;	    /* errors it may still cause before a throttle */
	uint32_t rsvd;
};
_Static_assert(sizeof(struct kr_pool_job) == 80, "kr_pool_job layout");
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
	uint32_t rsvd;
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
	/* MetaServer datagrams dropped (enum kr_meta_drop in src/dct/dct.h: size,
	 * unauthenticated, malformed, replayed), by the MetaServer and the
	 * registration thread: written from those threads, relaxed atomics */
	uint64_t meta_drops[4];
	/* how jobs reach the device: 1 trusted (no kmod-min: a job could write other
	 * jobs' queues; on hw it holds the command fd), 0 fenced: each job maps only
	 * the DCIs it leases, through /dev/krmin (pool_krmin.c) */
	uint32_t trusted;
	uint32_t uid_launches; /* per-uid quotas in force (pool_quota.c) */
	struct kr_devx_port port; /* what peers address: GID, MAC or LID, the GID index */
	/* memory the keeper holds, refreshed every 100 ms: hugepages (the
	 * EAL's and its hugetlb memfds, reserved or touched) and its resident set */
	uint64_t hugepage_bytes;
	uint64_t rss_bytes;
	uint32_t uid_ports; /* per-uid quota in force (pool_quota.c) */
	uint32_t rsvd;
};
_Static_assert(sizeof(struct kr_pool_seg) == 344, "kr_pool_seg layout");
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
 * descriptors, then the node cache, in the zone head (kr_pool_zone_head_len:
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
	uint64_t dct_off; /* src/dct: struct kr_dct_zone (node id, cache, MetaServers); 0 = none */
	uint64_t ep_off;  /* struct kr_zone_ep[nep]: receive endpoints, in the head */
	uint32_t nep;
	uint32_t nrc; /* RC slots: struct kr_zone_dci[nrc] at rc_off */
	uint64_t rc_off;
	uint64_t rsvd;
};
_Static_assert(sizeof(struct kr_zone_hdr) == 112, "kr_zone_hdr layout");
_Static_assert(offsetof(struct kr_zone_hdr, port) == 32, "kr_zone_hdr.port");

/*
 * One receive endpoint of the tenant (pool_port.c): a DC target made when a
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

/* ================= the attach protocol (pool_proto.c) ================= */

/*
 * SOCK_SEQPACKET over a UNIX socket: one message is one request or one reply,
 * so a short or long message is malformed, never a partial read. Host byte
 * order (same machine). Every request gets exactly one reply with a status.
 */
#define KR_PROTO_MAGIC	      0x6b725031u /* "krP1" */
/* 9: KR_MSG_PAIR (RC slots in the zone, kmod-min slots of their own when fenced) */
#define KR_PROTO_VERSION      9u
#define KR_ATTACH_MAX_REGIONS 64u
#define KR_ATTACH_READY_MAX   4u
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
	KR_MSG_BIND,   /* job: a receive endpoint for a port (pool_port.c) */
	KR_MSG_UNBIND,
	KR_MSG_HEAP_GROW, /* job: back more of its heap (pool_heap.c) */
	KR_MSG_REG_MR_FD, /* job: register a file it shares, the descriptor attached (pool_mr.c) */
	KR_MSG_PAIR,	  /* job: an RC slot paired with one of a peer keeper's (pool_pair.c) */
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
};

/*
 * A job names its launch (pool_launch.c): the tag and the DC access key its
 * launch key derives. The keeper binds the job to the tenant slot of that
 * launch (binding a free one to it on its first rank), and refuses a tag
 * bound under another uid or with another key. Observers send zeros.
 */
struct kr_msg_attach {
	struct kr_msg_hdr hdr;
	uint32_t flags;
	uint32_t rsvd;
	uint64_t launch_tag;
	uint64_t dc_key;
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
	uint32_t dev_is_sim;
	/* the tenant's UAR page: sim, its memfd (fenced: only the engine's wake
	 * line); hw --trusted, the command fd; a fenced ConnectX keeper sends
	 * none: KR_ATTACH_NO_FD */
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
	/* DCI leases granted with the attach (KR_POOL_READY_DCIS when free ones exist) */
	uint32_t nready;
	/* fenced: the BlueFlame buffers of every DCI's own UAR page (hw: bytes
	 * of each; 0: doorbells only) */
	uint32_t dci_bf_size;
	/* fenced: bytes of an RC slot's block (its rings; then its own UAR page), else 0 */
	uint32_t rc_block;
	struct kr_msg_ready {
		uint32_t index, gen, qpn, rsvd;
		uint64_t token; /* fenced: the kmod-min grant to claim, else 0 */
	} ready[KR_ATTACH_READY_MAX];
};

struct kr_msg_lease {
	struct kr_msg_hdr hdr;
	uint32_t kind;	/* enum kr_slot_kind */
	uint32_t index; /* release only */
	uint32_t gen;	/* release only */
	uint32_t rsvd;
};

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
 * to it posts to) and port address. Reply: the RC slot leased (index, gen,
 * qpn), its link KR_LINK_PAIRING until the keepers are done.
 */
struct kr_msg_pair {
	struct kr_msg_hdr hdr;
	uint32_t node;
	uint32_t dctn;
	struct kr_devx_addr addr;
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

_Static_assert(sizeof(struct kr_msg_attach) == 40, "kr_msg_attach layout");
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
		       208 + 33 * KR_ATTACH_MAX_REGIONS + 16 + 24 * KR_ATTACH_READY_MAX,
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

#endif /* KR_POOL_ABI_H */
