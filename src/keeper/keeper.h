/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/keeper: krpoold, the keeper daemon. Private header of the folder; no
 * job includes it (a job's side is src/job, the contract both share is
 * src/abi).
 *
 * Files, one role each:
 *   keeper_config.c   configuration: defaults, file, flags, validation
 *   keeper_config_keys.c  every key once: option, argument, help (--help, tests)
 *   keeper_mem.c      EAL start, hugepage memzones, read-only page fds
 *   keeper_shm.c      job-writable (and job-read) memory, sealed memfds
 *   keeper_segment.c  the pool segment and tenant zones: layout, init, rings
 *   keeper_tenant.c   PD, UAR, SRQ + CQ per tenant slot, the DCT of a launch
 *   keeper_bind.c     a launch binds a tenant slot, and leaves it
 *   keeper_dci.c      DCIs and spare RC QPs in the tenant zone, reset/recovery
 *   keeper_heap.c     job heaps backed on demand (sealed memfds + MKEYs), emptied
 *   keeper_lease.c    grant, release and reclaim of leases
 *   keeper_mr.c       MRs a job asks for, in its heap or over a file it shares
 *   keeper_krmin.c    kmod-min slots for the DCI and RC rings, tokens, revocation
 *   keeper_server.c   the UNIX socket, SO_PEERCRED, requests, job death
 *   keeper_conns.c    the connection table, per-uid counts
 *   keeper_guard.c    jobs whose requests keep failing
 *   keeper_quota.c    what one uid may hold
 *   keeper_worker.c   the worker thread (resets, rebuilds, growth)
 *   keeper_grow.c     more DCIs/RC QPs below low-water (on the worker)
 *   keeper_pair.c     RC slots paired with another keeper's (keeper_pair_msg.c: the wire)
 *   keeper_port.c     receive endpoints of bound ports
 *   keeper_dct.c      DC options, the zone's node cache block, static peers
 *   keeper_meta.c     the MetaServer service's table, key and list (src/keeper/meta)
 *   keeper_run.c      start-up, event loop, shutdown
 * The MetaServer service the keeper hosts is src/keeper/meta.
 *
 * Trust: the keeper trusts nothing a job sends (every request is checked
 * against what that connection owns) and nothing a job can write (see
 * abi/abi.h: it reads no job-writable memory; the sim engine bounds what it
 * reads there).
 */
#ifndef KR_KEEPER_H
#define KR_KEEPER_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "abi/abi.h"
#include "devx/devx.h"
#include "krcore/krcore.h"
#include "krcore/krmin_uapi.h"

/* ---- keeper configuration (keeper_config.c) ---- */

struct kr_keeper_cfg {
	char device[64];       /* "sim:<name>" or "mlx5_<n>"; "" = first mlx5, else the sim */
	char socket[108];      /* sun_path */
	int64_t group;	       /* --group: who may connect (socket mode 0660); -1 = ours */
	uint32_t tenants;      /* tenant slots (PD + DCT + pool each) */
	uint32_t dcis;	       /* DCIs per tenant */
	uint32_t rc_spares;    /* spare RC QPs per tenant, kept in INIT */
	uint32_t jobs;	       /* attached jobs per tenant (each with its own heap) */
	uint32_t vqps;	       /* vQP slots per tenant */
	uint32_t ports;	       /* receive endpoints per tenant (keeper_port.c) */
	uint32_t heap_mb;      /* heap per job, MB (multiple of 2): the most it grows to */
	uint32_t
	    warm_heaps; /* free heaps kept backed and registered per launch's tenant (free: 1) */
	uint32_t hugepages_mb; /* budget: the layout must fit, EAL --socket-limit */
	uint32_t low_water;    /* refill when free DCIs of a tenant fall below */
	int32_t gid_index;     /* --gid-index: the GID to send from; -1 = RoCE v2 (devx_port.c) */
	uint8_t traffic_class; /* --traffic-class: GRH traffic class, DSCP << 2 on RoCE v2 */
	uint8_t priority;      /* --priority: Ethernet priority (0..7) or InfiniBand SL (0..15) */
	bool trusted;	       /* --trusted: hw jobs get the command fd (no kmod-min yet) */
	bool require_kmod;     /* --require-kmod: refuse to start without /dev/krmin */
	uint32_t tenant_uid[KR_POOL_MAX_TENANTS]; /* pinned uid + 1 per tenant, 0 = any */
	uint64_t base_va;			  /* EAL --base-virtaddr */
	int ready_fd; /* >= 0: one byte is written here once the socket is up */
	bool foreground;
	bool verbose;
	/* ---- DC metadata (keeper_dct.c, src/keeper/meta): node identity and metadata ---- */
	uint32_t node_id;     /* --node-id; 0 = from the GID's IPv4 low 16 bits, else 1 */
	char peers[256];      /* --peers FILE: static directory loaded into the node cache */
	bool metaserver;      /* --metaserver: keep a slot table for the cluster */
	uint32_t max_nodes;   /* --max-nodes: slots (node ids 1..max_nodes-1); 0 = 16384 */
	char meta_listen[64]; /* --meta-listen IP:PORT: the MetaServer's registration socket */
	char meta_addr[256];  /* --metaserver-addr IP:PORT[,IP:PORT...]: replicas, in order */
	char cluster_key[256]; /* --cluster-key FILE: seals MetaServer datagrams */
	bool insecure_meta;    /* --insecure-metaserver: run the MetaServer without a key */
	/* ---- growth (keeper_grow.c) ---- */
	uint32_t dcis_max; /* DCI slots per tenant the pool may grow to; 0 = dcis (no growth) */
	uint32_t rc_max;   /* RC slots per tenant; 0 = rc-spares (no growth) */
	/* ---- quotas per uid (keeper_quota.c); 0 = the default ---- */
	uint32_t uid_launches; /* --uid-launches: unpinned tenant slots one uid may bind */
	uint32_t uid_ports;    /* --uid-ports: ports one uid may bind on them */
};

/*
 * Slots per tenant, laid out (segment tables, rings, zone buffers) for the
 * most the pool may grow to, so growth never needs new memory: cfg->dcis and
 * cfg->rc_spares are built at start, the rest on demand (keeper_grow.c).
 */
static inline uint32_t kr_keeper_cfg_dci_slots(const struct kr_keeper_cfg *cfg)
{
	uint32_t n = cfg->dcis_max ? cfg->dcis_max : cfg->dcis;

	n = n > KR_POOL_MAX_DCIS ? KR_POOL_MAX_DCIS : n;
	return n < cfg->dcis ? cfg->dcis : n;
}
static inline uint32_t kr_keeper_cfg_rc_slots(const struct kr_keeper_cfg *cfg)
{
	uint32_t n = cfg->rc_max ? cfg->rc_max : cfg->rc_spares;

	n = n > KR_POOL_MAX_RC ? KR_POOL_MAX_RC : n;
	return n < cfg->rc_spares ? cfg->rc_spares : n;
}

/*
 * kr_keeper_cfg_default() - the defaults (2 tenants, 8 DCIs, 2 RC spares, 8 jobs,
 * 64 vQPs, 4 MB heaps, 256 MB budget, socket from KR_KEEPER_SOCKET or the
 * default).
 */
void kr_keeper_cfg_default(struct kr_keeper_cfg *cfg);

/*
 * keeper_config_keys.c: every key of the configuration once, in --help
 * order. A switch (no arg) is "true" when given on the command line.
 */
enum kr_keeper_cfg_kind {
	KR_CFG_OWN,  /* parsed by its own code (kr_keeper_cfg_set, keeper_dct.c) */
	KR_CFG_U32,  /* a number stored at off; kr_keeper_cfg_check() bounds it */
	KR_CFG_BOOL, /* true/false (1/0, yes/no) stored at off */
};
struct kr_keeper_cfg_key {
	const char *name;    /* the key, and the long option --name */
	char letter;	     /* its short option, 0: none */
	const char *arg;     /* what its value is ("N", "FILE"), NULL: a switch */
	const char *example; /* a value the parser takes (tests, sample config) */
	const char *help;    /* lines joined by '\n' */
	bool cli_only;	     /* not a configuration key (config, help) */
	bool file_only;	     /* not an option (tenant.N.uid) */
	enum kr_keeper_cfg_kind kind;
	size_t off; /* KR_CFG_U32, KR_CFG_BOOL: where in struct kr_keeper_cfg */
};
extern const struct kr_keeper_cfg_key kr_keeper_cfg_keys[];
extern const size_t kr_keeper_cfg_nkeys;
/* The table's entry for key (any tenant.<n>.uid finds tenant.N.uid), NULL: none. */
const struct kr_keeper_cfg_key *kr_keeper_cfg_key_find(const char *key);
/* krpoold --help, from the table. */
void kr_keeper_cfg_usage(FILE *f);
/*
 * kr_keeper_cfg_load() - read "key = value" lines (keys as the long flags without
 * dashes, '#' comments, "tenant.<n>.uid = <uid>"). Returns 0, -ENOENT, -EINVAL
 * (with the line in err).
 */
int kr_keeper_cfg_load(struct kr_keeper_cfg *cfg, const char *path, char *err, size_t errlen);
/* The lines of f as kr_keeper_cfg_load() applies them (path names f in err). */
int kr_keeper_cfg_read(struct kr_keeper_cfg *cfg, FILE *f, const char *path, char *err, size_t errlen);
/* kr_keeper_cfg_set() - one key/value, as from the file or a flag. 0 or -EINVAL (err says why). */
int kr_keeper_cfg_set(struct kr_keeper_cfg *cfg, const char *key, const char *val, char *err,
		    size_t errlen);
/* kr_keeper_cfg_check() - ranges and the hugepage budget. 0 or -EINVAL (err says why). */
int kr_keeper_cfg_check(const struct kr_keeper_cfg *cfg, char *err, size_t errlen);
/* Hugepage bytes the layout needs (zones, heaps), without EAL's own heap. */
uint64_t kr_keeper_cfg_hugepage_bytes(const struct kr_keeper_cfg *cfg);

/* ---- layouts that depend on the configuration (keeper_segment.c) ---- */

/* Layout of the pool segment for cfg: fills the *_off fields and size. */
void kr_keeper_seg_layout(const struct kr_keeper_cfg *cfg, struct kr_pool_seg *s);
/*
 * Bytes of a tenant zone: its head (header, descriptors, node cache; jobs
 * map it read-only), then the DCI rings and CQs (jobs write them).
 */
uint64_t kr_keeper_zone_size(const struct kr_keeper_cfg *cfg);
uint64_t kr_keeper_zone_head_len(void);
/* Bytes of a tenant's keeper-only zone; where its control DCI's QP and CQ buffers are in it. */
uint64_t kr_keeper_kzone_size(const struct kr_keeper_cfg *cfg);
uint64_t kr_keeper_kzone_ctl_off(void);
uint64_t kr_keeper_kzone_ctl_cq_off(void);
/* Offset in the tenant zone of DCI i's QP buffer and CQ buffer. */
uint64_t kr_keeper_zone_dci_qp_off(uint32_t i);
uint64_t kr_keeper_zone_dci_cq_off(uint32_t i);
/* The RC slots' descriptors (in the head), and RC slot i's QP and CQ buffers. */
uint64_t kr_keeper_zone_rc_desc_off(void);
uint64_t kr_keeper_zone_rc_qp_off(const struct kr_keeper_cfg *cfg, uint32_t i);
uint64_t kr_keeper_zone_rc_cq_off(const struct kr_keeper_cfg *cfg, uint32_t i);
/*
 * Receive endpoints (keeper_port.c): their descriptors in the head
 * (struct kr_zone_ep[KR_POOL_MAX_PORTS]), endpoint e's CQ and SRQ after the
 * DCI rings, and the SRQ's shape.
 */
uint64_t kr_keeper_zone_ep_off(void);
uint64_t kr_keeper_zone_ep_cq_off(const struct kr_keeper_cfg *cfg, uint32_t e);
uint64_t kr_keeper_zone_ep_srq_off(const struct kr_keeper_cfg *cfg, uint32_t e);
/* Bytes of one endpoint's block (CQ then SRQ, whole pages). */
uint64_t kr_keeper_zone_ep_block(void);
void kr_keeper_ep_srq_attr(struct kr_devx_srq_attr *a);
/* Offset in the tenant zone of the node cache block (in the head, after the descriptors). */
uint64_t kr_keeper_zone_dct_off(const struct kr_keeper_cfg *cfg);
/* Number of free entries in a ring of the segment (read-only view). */
uint32_t kr_keeper_seg_ring_count(const struct kr_pool_seg *s, uint64_t ring_off);
/*
 * kr_job_seg_check() - a job's checks of a mapped segment: magic, version,
 * size, and every table inside it. 0 or -EPROTO.
 */
int kr_job_seg_check(const struct kr_pool_seg *s, uint64_t mapped_len);
int kr_job_zone_check(const struct kr_zone_hdr *z, uint64_t mapped_len, uint32_t tenant);

/* ================= keeper (process-local) ================= */

struct kr_keeper;
struct rte_memzone;
struct kr_dct_rec;

/*
 * Who acts next on an RC slot's pairing (keeper_pair.c); keeper-private. The
 * loop hands a step to the worker and back by storing it (release), each
 * taking it by compare-and-swap, so a late answer and a timeout never both
 * act.
 */
enum kr_pair_step {
	KR_PAIR_IDLE = 0,
	KR_PAIR_ASK,	 /* loop -> worker: send the request to the peer's keeper */
	KR_PAIR_WAIT,	 /* worker: asked; the loop takes the answer, the worker a timeout */
	KR_PAIR_CONNECT, /* loop -> worker: answered yes, bring ours to RTS */
	KR_PAIR_ACCEPT,	 /* loop -> worker: a peer asked, bring ours to RTS and answer */
	KR_PAIR_LINKED,	 /* done (up or failed): the worker tells the peer at the reset */
};

/* An RC slot's pairing with a QP of another keeper (keeper_pair.c). */
struct kr_pair {
	int step;		       /* enum kr_pair_step (atomic) */
	uint64_t cookie;	       /* names the pair in both keepers' messages */
	uint64_t deadline_ns;	       /* KR_PAIR_WAIT: no answer by then fails it */
	uint32_t peer_node;	       /* the other keeper's node id */
	uint32_t peer_dctn;	       /* its tenant's DC target: where messages go */
	struct kr_devx_addr peer_addr; /* its port */
	uint32_t peer_qpn;	       /* 0 until known */
	uint32_t peer_psn;	       /* its first send PSN: our receive PSN */
	uint32_t psn;		       /* our first send PSN */
};

/* Keeper's view of one DCI or spare RC QP. */
struct kr_keeper_qp {
	struct kr_devx_qp qp;
	struct kr_devx_cq cq;
	uint32_t tenant;
	uint32_t index;
	bool built;
	bool ready; /* reset or built by the worker, not yet in the free ring (atomic) */
	bool came_back_err;	/* the worker found it in error (keeper_guard.c) */
	uint16_t free_pi; /* DCI: the send counter it last went FREE at (0: built or reset) */
	uint32_t kind;		/* KR_SLOT_DCI or KR_SLOT_RC; 0: the control DCI */
	uint32_t from_job_plus1; /* the job that gave it back, and that job's gen */
	uint32_t from_job_gen;
	uint32_t krmin_slot_plus1; /* its kmod-min slot + 1 (keeper_krmin.c), 0 = none */
	/* fenced DCI: a UAR page of its own, in its slot, so its holder rings
	 * nothing else; NULL: the tenant's page (t->uar) */
	struct kr_devx_uar *uar;
	struct kr_pair pair; /* RC slots */
};

/* A receive endpoint's state (keeper_port.c). */
enum kr_ep_state {
	KR_EP_DIRTY = 0, /* no queues, or given back: the worker rebuilds them */
	KR_EP_FREE,	 /* warm SRQ and CQ, no DCT */
	KR_EP_BOUND,	 /* a DCT over them, a job's port */
};

/* Keeper's view of one receive endpoint. */
struct kr_keeper_ep {
	struct kr_devx_cq cq;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	bool built; /* cq and srq */
	bool dct_ok;
	uint32_t krmin_slot_plus1; /* fenced: its CQ and SRQ pages as a kmod-min slot */
	int state; /* enum kr_ep_state (atomic: the worker rebuilds DIRTY ones) */
	/* the binding, written under cmd_lock (the MetaServer registration reads it) */
	uint32_t port;
	uint32_t owner_job; /* job table index + 1 */
	uint32_t gen;
	uint32_t nslots;
	uint64_t table_va;
	uint32_t table_rkey;
};

/* Job-writable memory: a sealed hugetlb memfd mapped at addr (keeper_shm.c). */
struct kr_shm {
	uint8_t *addr; /* NULL: not mapped */
	uint64_t len;
	int fd;
	int ro_fd; /* a read-only file description of it, for jobs that only read; -1 */
	bool huge; /* hugetlb (registered with the device) or plain shmem */
};

/*
 * A job heap (keeper_heap.c): max bytes of address space reserved at start,
 * backed on demand. Growth step i maps chunk[i] after the others and
 * registers mr[i] over [addr, end of chunk i): the newest MR covers the
 * whole heap, the older ones stay valid for what was posted with them.
 */
#define KR_HEAP_MAX_CHUNKS 8u /* 2 MB, then doubling: 2, 4, ... 64 MB (KR_POOL_MAX_HEAP_MB) */
#define KR_HEAP_FIRST	   (2ull << 20)

/*
 * Who may touch a heap (its state, atomic): the event loop takes a WARM one
 * for a job (HELD; it grows it under cmd_lock) and marks it LEFT when the job
 * has gone; the worker empties LEFT ones (COLD) and warms COLD ones (WARM,
 * stored last), so no firmware command for heaps runs on the loop's way.
 */
enum kr_heap_state {
	KR_HEAP_COLD, /* free, nothing behind it: the worker's */
	KR_HEAP_WARM, /* free, first 2 MB backed and registered: the loop's to take */
	KR_HEAP_HELD, /* a job's: the loop's */
	KR_HEAP_LEFT, /* its job left: the worker's to empty */
};

struct kr_keeper_heap {
	uint8_t *addr; /* the reserved place: PROT_NONE past len */
	uint64_t max;
	uint64_t len; /* backed and registered */
	uint32_t nchunks;
	int state;	    /* enum kr_heap_state */
	uint32_t job_plus1; /* HELD: the job slot (within its tenant) + 1 */
	struct kr_shm chunk[KR_HEAP_MAX_CHUNKS];
	struct kr_devx_mr mr[KR_HEAP_MAX_CHUNKS];
};

struct kr_keeper_tenant {
	uint32_t idx;
	struct kr_devx_pd pd;
	struct kr_devx_uar *uar;
	int uar_fd; /* what its jobs ring through (kr_devx_uar_export; owned by uar) */
	struct kr_devx_uar_ref uar_ref; /* and where the page is in it */
	/*
	 * Memory, in whole hugepages:
	 *   zone: header, DCI rings and CQs; job-writable (zone_shm, sealed)
	 *   kzone: DCT CQ and SRQ, receive buffers, spare RC QPs; keeper-only
	 *          (a memzone, never sent)
	 *   heap[h]: job heaps, job-writable, each job maps only its own; a
	 *            job takes any free one (a warm one when there is one)
	 */
	const struct rte_memzone *mz; /* the kzone */
	struct kr_shm zhead_shm;      /* the zone head: jobs read it (kr_keeper_zone_head_len) */
	struct kr_shm zone_shm;	      /* the rest: DCI rings and CQs, jobs write them */
	uint8_t *zone;		      /* zhead_shm.addr; zone_shm follows at once */
	uint64_t zone_len;
	uint8_t *kzone;
	uint64_t kzone_len;
	struct kr_devx_cq dct_cq;
	/* keeper_dct_event.c: dct_cq's events wake the loop through dct_ev_fd */
	int dct_ev_fd;
	bool dct_notify; /* subscribed */
	bool dct_armed;	 /* armed since its last event */
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_mr recv_mr;
	struct kr_keeper_qp *dci;    /* [cfg.dcis] */
	struct kr_keeper_qp *rc;     /* [cfg.rc_spares] */
	/* keeper_pair.c: the keeper's own DCI (kzone) for pairing messages, the
	 * worker's alone; the loop's messages wait in the outbox */
	struct kr_keeper_qp ctl;
	bool ctl_broken;
	struct kr_pair_box *outbox;
	struct kr_keeper_heap *heap; /* [cfg.jobs] */
	uint32_t *job_heap;	     /* [cfg.jobs]: heap index of job slot j */
	struct kr_keeper_ep *ep;     /* [cfg.ports] */
	/* the last port binding's generation (keeper_port.c): one counter for
	 * all endpoints, so a port bound again elsewhere gets a DC key of its own */
	uint32_t port_gen;
	bool pd_ok, srq_ok, dct_ok;
	/* the launch bound to the slot (keeper_bind.c); keeper-private */
	bool bound;
	uid_t uid;
	uint64_t launch_tag;
	uint64_t dc_key;
	uint32_t dct_viol_seen; /* the current DCT's key violations already counted */
	uint64_t idle_since_ns; /* bound, and no rank of the launch left since */
	int renew;		/* enum kr_renew (atomic): the slot is rebuilt between launches */
};

/*
 * A slot's launch left: the loop takes its DCIs, RC QPs and jobs out of the
 * rings and asks (WANTED); the worker rebuilds it on fresh memory (DONE);
 * the loop fills its rings again (NONE). Nobody binds it meanwhile.
 */
enum kr_renew {
	KR_RENEW_NONE,
	KR_RENEW_WANTED,
	KR_RENEW_DONE,
};

/*
 * DCI i's descriptor as the keeper writes it: at the place its own layout
 * puts it, never at z->dci_off (a job must not steer the keeper's writes).
 * i < kr_keeper_cfg_dci_slots(cfg).
 */
static inline struct kr_zone_dci *kr_keeper_zone_dci(const struct kr_keeper_tenant *t, uint32_t i)
{
	return (struct kr_zone_dci *)(t->zone + sizeof(struct kr_zone_hdr)) + i;
}
/* RC slot i's descriptor, likewise. */
static inline struct kr_zone_dci *kr_keeper_zone_rc(const struct kr_keeper_tenant *t, uint32_t i)
{
	return (struct kr_zone_dci *)(t->zone + kr_keeper_zone_rc_desc_off()) + i;
}

/* One MR a job asked for (keeper_mr.c): in its heap, or over a file it shared (map). */
struct kr_keeper_mr {
	struct kr_devx_mr mr;
	bool used;
	uint8_t *map; /* the keeper's mapping of the file, in the window; NULL: heap */
	uint64_t map_len;
};

#define KR_SHM_FREE_MAX 64u

/* One accepted connection. */
struct kr_keeper_conn {
	int fd;
	pid_t pid;
	uid_t uid;
	uint32_t job_plus1; /* job table index + 1 once attached */
	bool observer;
	uint64_t accept_ns;
	uint64_t last_ns; /* last request: observers idle for KR_POOL_HELLO_MS are closed */
	uint32_t ready_done; /* ready-ring entries claimed or revoked before it (keeper_ready.c) */
	struct kr_keeper_mr mrs[KR_POOL_MAX_JOB_MRS];
};

struct kr_keeper {
	struct kr_keeper_cfg cfg;
	struct kr_devx_ctx *ctx;
	const struct rte_memzone *seg_mz;
	struct kr_pool_seg *seg;
	uint64_t shm_used;		 /* bytes of the job-writable window mapped so far */
	struct {
		uint8_t *at;
		uint64_t len;
	} shm_free[KR_SHM_FREE_MAX]; /* places in the window given back (held, no pages) */
	uint32_t nshm_free;
	struct kr_keeper_tenant *tenant; /* [cfg.tenants] */
	struct kr_keeper_conn **conn;	 /* [KR_POOL_MAX_CONNS] */
	struct kr_conns *conns;		 /* free slots, connections per uid (keeper_conns.c) */
	uint32_t nconn;
	int listen_fd;
	int lock_fd;
	int epoll_fd;
	struct kr_devx_event_ch *ev_ch; /* keeper_dct_event.c; NULL: none */
	int signal_fd;
	int timer_fd;
	char eal_prefix[32];
	uint64_t reclaim_t0; /* when the oldest unfinished reclaim began, 0 = none */
	bool heaps_failed; /* the worker's: a heap could not be warmed, retried after a back-off */
	uint64_t ticks;
	volatile int stop;
	bool eal_up;
	/*
	 * The worker (keeper_worker.c) resets, rebuilds and grows QPs. cmd_lock
	 * serialises every firmware command of the keeper's device between it
	 * and the event loop; the loop takes it only for a job's MR commands
	 * and try-locks it for heap scrubs, so no attach or lease waits on a
	 * firmware command.
	 */
	pthread_mutex_t cmd_lock;
	/* the tenant zones' pages: a renewal replaces them, the MetaServer list writer writes them */
	pthread_mutex_t zone_lock;
	pthread_t worker;
	int work_fd;  /* eventfd: the loop wakes the worker (something came back) */
	int adopt_fd; /* eventfd: the worker wakes the loop to adopt what it made ready */
	volatile int worker_stop;
	bool worker_up;
	/* keeper_krmin.c: /dev/krmin as its keeper (-1: none, trusted mode) and
	 * which DCI each of its slots is (atomic: the worker registers) */
	int krmin_fd;
	struct kr_keeper_qp **krmin_qp; /* [KRMIN_MAX_SLOTS] */
	/* fenced: the doorbell register's offset in a DCI's UAR page and its
	 * BlueFlame buffers' size, the same on every page (set by the first DCI
	 * built; jobs get them at attach) */
	uint32_t dci_reg_off;
	uint32_t dci_bf_size;
	bool uar_shared_said;	   /* tenants share the device's one doorbell page: logged */
	struct kr_keeper_meta *meta; /* keeper_meta.c: the MetaServer service and its table */
	struct kr_dct_rec *peers;  /* --peers, read at start: [npeers] */
	uint32_t npeers;
	bool peers_read;
};

/* Hold lock (when not NULL) for one step of a build or teardown (NULL: at start, or held). */
static inline void kr_step_lock(pthread_mutex_t *lock)
{
	if (lock)
		pthread_mutex_lock(lock);
}

static inline void kr_step_unlock(pthread_mutex_t *lock)
{
	if (lock)
		pthread_mutex_unlock(lock);
}

/* The heap job slot j (segment index) holds; valid while the slot is not FREE. */
static inline struct kr_keeper_heap *kr_keeper_job_heap(struct kr_keeper *k, uint32_t j)
{
	struct kr_keeper_tenant *t = &k->tenant[j / k->cfg.jobs];

	return &t->heap[t->job_heap[j % k->cfg.jobs]];
}

/* keeper_mr.c: MRs a job asks for (heap ranges, shared files) */
int kr_keeper_reg_mr(struct kr_keeper *k, struct kr_keeper_conn *c, const struct kr_msg_mr *req,
		     struct kr_msg_reply *rep);
int kr_keeper_reg_mr_fd(struct kr_keeper *k, struct kr_keeper_conn *c,
			const struct kr_msg_mr_fd *req, int fd, struct kr_msg_reply *rep);
int kr_keeper_dereg_mr(struct kr_keeper *k, struct kr_keeper_conn *c, const struct kr_msg_mr *req);
int kr_keeper_mr_release(struct kr_keeper *k, struct kr_keeper_mr *m);

/* keeper_run.c: refresh seg->hugepage_bytes and rss_bytes */
void kr_keeper_mem_update(struct kr_keeper *k);

/* keeper_mem.c */
int kr_keeper_eal_start(struct kr_keeper *k);
void kr_keeper_eal_stop(struct kr_keeper *k);
/* Reserve a 2 MB-aligned memzone of len (rounded up to 2 MB pages), zeroed. NULL + errno. */
const struct rte_memzone *kr_keeper_zone_reserve(const char *name, uint64_t len);
/* Keeper-only memory: a memzone of len bytes, 4 KB aligned, sharing pages with others. */
const struct rte_memzone *kr_keeper_kmem_reserve(const char *name, uint64_t len);
/* Bytes of hugepages the EAL holds (memzones and its own heap). */
uint64_t kr_keeper_eal_bytes(void);
/* A second, read-only file description of fd's file (through /proc/self/fd); fd or -errno. */
int kr_fd_reopen_ro(int fd);
/*
 * kr_keeper_ro_regions() - one read-only region per hugepage of memzone
 * memory [addr, addr+len) (page aligned), each with a read-only file
 * description of the page (kept by the keeper: the caller only sends it).
 * Memzone pages never go to a job writable (see keeper_shm.c). Appends to
 * rep->region and fds. Returns 0, -E2BIG (too many regions), -ENOENT (a
 * page the EAL does not know or has no fd for), or open's -errno.
 */
int kr_keeper_ro_regions(const void *addr, uint64_t len, uint8_t role,
			 struct kr_msg_attach_reply *rep, int *fds, unsigned int *nfds);

/*
 * keeper_quota.c: the per-uid limits cfg gives (its 0s resolved to the
 * defaults: half the unpinned slots, at least 1; that many slots' ports).
 */
void kr_keeper_quota_limits(const struct kr_keeper_cfg *cfg, uint32_t *launches, uint32_t *ports);
/* keeper_quota.c: may uid bind one more unpinned tenant slot? 0 or -EDQUOT (logged). */
int kr_keeper_quota_launch(const struct kr_keeper *k, uid_t uid);
/* keeper_quota.c: may uid bind one more port in tenant? 0 or -EDQUOT (logged). */
int kr_keeper_quota_port(const struct kr_keeper *k, uint32_t tenant, uid_t uid);
/*
 * keeper_shm.c: job-writable memory, sealed hugetlb memfds (huge), and what
 * jobs only read, plain shmem sealed against every writer but the keeper's
 * own mapping (!huge: F_SEAL_FUTURE_WRITE); see there.
 */
int kr_keeper_shm_map(struct kr_keeper *k, const char *name, uint64_t len, bool huge,
		      struct kr_shm *shm);
void kr_keeper_shm_unmap(struct kr_shm *shm);
int kr_keeper_shm_renew(const char *name, struct kr_shm *shm);
uint8_t *kr_keeper_shm_reserve(struct kr_keeper *k, uint64_t len);
uint8_t *kr_keeper_shm_place(struct kr_keeper *k, uint64_t len);
void kr_keeper_shm_unplace(struct kr_keeper *k, uint8_t *at, uint64_t len);
int kr_keeper_shm_map_at(const char *name, void *at, uint64_t len, struct kr_shm *shm);
void kr_keeper_shm_unmap_held(struct kr_shm *shm);
uint64_t kr_keeper_shm_huge_bytes(void);
uint64_t kr_keeper_shm_holes(void);
int kr_keeper_shm_regions(struct kr_shm *shm, uint8_t role, bool writable,
			  struct kr_msg_attach_reply *rep, int *fds, unsigned int *nfds);
/* Round up to whole hugepages. */
static inline uint64_t kr_keeper_pages_len(uint64_t len)
{
	return (len + KR_POOL_PAGE - 1) & ~(uint64_t)(KR_POOL_PAGE - 1);
}

/* keeper_segment.c (keeper side) */
int kr_keeper_seg_init(struct kr_keeper *k);
/* The keeper's own ring operations: 0 / -ENOBUFS (full) ; 0 / -ENOENT (empty). */
int kr_keeper_ring_put(struct kr_keeper *k, uint64_t ring_off, uint32_t idx);
int kr_keeper_ring_get(struct kr_keeper *k, uint64_t ring_off, uint32_t *idx);

/* keeper_tenant.c */
int kr_keeper_tenant_build(struct kr_keeper *k, struct kr_keeper_tenant *t);
void kr_keeper_tenant_destroy(struct kr_keeper *k, struct kr_keeper_tenant *t);
/* kr_keeper_dct_path() - a keeper DCT's port, MTU, RNR timer, hop limit,
 * GID and quality of service (keeper_tenant.c). */
void kr_keeper_dct_path(const struct kr_keeper *k, struct kr_devx_dct_attr *da);
/*
 * kr_keeper_tenant_dct_open() - tenant t's DC target with dc_key and the
 * KR_ACCESS_REMOTE_* rights in access, over its SRQ (one firmware command,
 * under cmd_lock). 0, -EINVAL (one is open, or no SRQ), the command's error.
 */
int kr_keeper_tenant_dct_open(struct kr_keeper *k, struct kr_keeper_tenant *t, uint64_t dc_key,
			      uint32_t access);
/* Destroy it (its key dies with it); nothing when none is open. */
void kr_keeper_tenant_dct_close(struct kr_keeper *k, struct kr_keeper_tenant *t);
/*
 * kr_keeper_tenant_renew() - the worker rebuilds slot t for its next launch:
 * every device object destroyed and created again (a new PD, UAR, SRQ,
 * DCIs, RC QPs, heap MRs), new zeroed pages for the zone and the heaps, the
 * keeper zone zeroed; the loop then fills its rings as at start
 * (kr_keeper_tenant_rings_fill). No DCT: the next launch brings its key. 0 or -errno (the
 * slot then has no device objects; retried).
 */
int kr_keeper_tenant_renew(struct kr_keeper *k, struct kr_keeper_tenant *t);
/* Event loop: put slot t's built DCIs, RC spares and job slots in its free rings. 0 or -ENOBUFS. */
int kr_keeper_tenant_rings_fill(struct kr_keeper *k, struct kr_keeper_tenant *t);
/*
 * kr_keeper_target_build() - a DC target that serves no job (the MetaServer
 * table's): in t (zeroed by the caller), a keeper-only memzone called name,
 * a PD, a UAR, an SRQ and a DCT with dc_key and access. Torn down by
 * kr_keeper_tenant_destroy() (also after a failure here).
 */
int kr_keeper_target_build(struct kr_keeper *k, struct kr_keeper_tenant *t, const char *name,
			   uint64_t dc_key, uint32_t access);

/* keeper_bind.c */
/*
 * kr_keeper_tenant_of_launch() - the tenant slot of launch l (derived here
 * from the key the job gave) for a job of uid: the slot bound to it, else a
 * free one (pinned to uid, or unpinned), bound now: its DCT is created with
 * l's DC key. -EPERM (bound under another uid), -ENOSPC (no free slot),
 * -EINVAL (tag 0), or the DCT's error.
 */
int kr_keeper_tenant_of_launch(struct kr_keeper *k, uid_t uid, const struct kr_launch *l);
/*
 * Every bound slot its launch has left (no job attached or being scrubbed,
 * no DCI coming back): the DCT and its key die, the node cache is emptied,
 * and the slot is free for another launch.
 */
void kr_keeper_launch_leave_idle(struct kr_keeper *k);
/* Event loop: a slot the worker renewed (DONE) goes back in service. */
void kr_keeper_launch_renewed(struct kr_keeper *k, struct kr_keeper_tenant *t);
/* Take what the DCT's CQ reports (pairing messages) and repost the receive buffers. */
void kr_keeper_tenant_poll_dct(struct kr_keeper *k, struct kr_keeper_tenant *t);

/* ---- keeper_dct_event.c: the DC targets' CQs wake the loop ---- */
/*
 * Loop, at start (tenants built, epoll made): the event channel and each
 * tenant's eventfd in the epoll set as ev_kind << 32 | tenant. 0 (also when
 * the device has no events: the tick polls), or -errno.
 */
int kr_keeper_dct_events_open(struct kr_keeper *k, uint64_t ev_kind);
void kr_keeper_dct_events_close(struct kr_keeper *k);
/* t's DC target CQ was (re)built: subscribe it (not armed yet). */
void kr_keeper_dct_event_cq(struct kr_keeper *k, struct kr_keeper_tenant *t);
/* Loop: t's CQ polled empty: arm it if its last event was taken. */
void kr_keeper_dct_arm(struct kr_keeper *k, struct kr_keeper_tenant *t);
/* Loop: the eventfd of tenant fired: take the event, poll, arm again. */
void kr_keeper_dct_event(struct kr_keeper *k, uint32_t tenant);

/* QP and DCT numbers and PSNs are 24 bits (a pairing message's numbers). */
#define KR_PAIR_NUM_MAX 0xffffffu

/* keeper_pair_msg.c: a pairing message as received, checked apart from any keeper state */
enum kr_pair_verdict {
	KR_PAIR_STRAY, /* not a pairing message (size, magic): a stray SEND */
	KR_PAIR_BAD,   /* a pairing message to drop (version, launch, type, numbers) */
	KR_PAIR_OK,    /* *m holds a checked copy */
};
/*
 * kr_pair_msg_parse() - copy len bytes at buf into *m once and check them:
 * size and magic, version, launch_tag, the type, the sender's DCT number
 * (1..2^24-1) and, for KR_PAIR_REQ and KR_PAIR_ACK, its QP number; the PSN
 * is cut to 24 bits.
 */
enum kr_pair_verdict kr_pair_msg_parse(const void *buf, uint32_t len, uint64_t launch_tag,
				       struct kr_pair_msg *m);
/* The cookie naming RC slot of tenant at lease generation gen. */
uint64_t kr_pair_cookie(uint32_t gen, uint32_t tenant, uint32_t slot);
/* Does cookie name one of tenant's nslots RC slots? Then *slot and *gen. */
bool kr_pair_cookie_slot(uint64_t cookie, uint32_t tenant, uint32_t nslots, uint32_t *slot,
			 uint32_t *gen);

/* keeper_pair.c: RC slots paired between keepers (see there) */
struct kr_pair_box *kr_keeper_pair_box_new(void);
/*
 * Loop, KR_MSG_PAIR from c: lease c's job an RC slot and have the worker ask
 * the peer's keeper. 0 (rep: index, gen, qpn; link PAIRING), -EPERM (not
 * attached), -EINVAL (node or DCT number 0, DCT past 24 bits), -ENOTCONN (the
 * tenant has no DC target), or kr_keeper_lease_grant()'s errors.
 */
/*
 * Loop, KR_MSG_PAIR (one-way): kr_keeper_pair_ask's result, or why it was
 * not asked, written to the job slot's pair_ans[req->ans] (abi.h).
 */
void kr_keeper_pair_serve(struct kr_keeper *k, struct kr_keeper_conn *c,
			  const struct kr_msg_pair *req);
int kr_keeper_pair_ask(struct kr_keeper *k, struct kr_keeper_conn *c, const struct kr_msg_pair *req,
		       struct kr_msg_reply *rep);
/* Loop: a SEND the tenant's DCT received. true when it was a pairing message (taken or dropped). */
bool kr_keeper_pair_recv(struct kr_keeper *k, struct kr_keeper_tenant *t, const void *buf,
			 uint32_t len);
/* Worker: send what waits, run each RC slot's pending step, time out silent peers. Steps done. */
uint32_t kr_keeper_pair_work(struct kr_keeper *k, struct kr_keeper_tenant *t);
/*
 * Worker, before an RC slot's reset, without cmd_lock: tell its peer's keeper
 * the pair is gone, forget it.
 */
void kr_keeper_pair_unlink(struct kr_keeper *k, struct kr_keeper_tenant *t, struct kr_keeper_qp *q);

/* keeper_dci.c: the QP slots' books (UAR page, kmod-min, zone descriptor, segment state) */
int kr_keeper_dci_build(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t i);
int kr_keeper_rc_build(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t i);
/* The tenant's control DCI (keeper_pair.c's sends), RTS, in the keeper zone. 0 or the devx error. */
int kr_keeper_ctl_build(struct kr_keeper *k, struct kr_keeper_tenant *t);
/* Reset a DCI to RTS: 2RST, drain its CQ, RST->RTS. 0 or the command's error. */
int kr_keeper_dci_reset(struct kr_keeper *k, struct kr_keeper_qp *q);
/* Reset a spare RC QP to INIT: 2RST, drain its CQ, RST->INIT. 0 or the command's error. */
int kr_keeper_rc_reset(struct kr_keeper *k, struct kr_keeper_qp *q);
void kr_keeper_qp_destroy(struct kr_keeper *k, struct kr_keeper_qp *q);

/* keeper_qp_cmd.c: the firmware commands of those QPs, cmd_lock held */
/* q's CQ (KR_POOL_DCI_CQE) and QP of type over cqbuf and qbuf, ringing uar. 0 or the error. */
int kr_keeper_qp_create(struct kr_keeper *k, struct kr_keeper_qp *q, enum kr_devx_qp_type type,
			uint32_t pdn, struct kr_devx_uar *uar, uint8_t *qbuf, uint8_t *cqbuf);
/* A DCI from RST to RTS, sending from sq_psn. 0 or the command's error. */
int kr_keeper_dci_up(const struct kr_keeper *k, struct kr_keeper_qp *q, uint32_t sq_psn);
/* A spare RC QP from RST to INIT with the rights it is parked with. */
int kr_keeper_rc_park(const struct kr_keeper *k, struct kr_keeper_qp *q);
/*
 * A parked RC slot (INIT) to RTS towards peer_qpn at peer, receiving from
 * rq_psn and sending from sq_psn (keeper_pair.c). 0 or the command's error.
 */
int kr_keeper_rc_connect(struct kr_keeper *k, struct kr_keeper_qp *q,
			 const struct kr_devx_addr *peer, uint32_t peer_qpn, uint32_t rq_psn,
			 uint32_t sq_psn);
/*
 * Quiesce a QP a job held: one query (its state: did a request of its
 * holder fail? sets q->came_back_err; psn not NULL: also the PSN its next
 * life starts at), 2RST, its CQ taken back. The QP is then empty in RST;
 * *info its state before, *seen the CQEs of the lease. 0 or the error.
 */
int kr_keeper_qp_quiesce(struct kr_keeper_qp *q, uint32_t *psn, struct kr_devx_qp_info *info,
			 uint32_t *seen);
/* Destroy q's QP and CQ (the books are kr_keeper_qp_destroy()'s). */
void kr_keeper_qp_cmd_destroy(struct kr_keeper_qp *q);

/*
 * What a job is sent of the device at attach: its tenant's UAR page (fenced,
 * on a device that wakes only through it, just for that), except from a
 * fenced keeper of a ConnectX: nothing, its DCIs' own pages come with their
 * slots.
 */
static inline bool kr_keeper_sends_uar(const struct kr_keeper *k)
{
	return kr_devx_has(k->ctx, KR_DEVX_BE_WAKE_PAGE) || k->krmin_fd < 0;
}

/* keeper_port.c: receive endpoints (see there) */
/* Endpoint e's SRQ and CQ in the zone, FREE (cmd_lock held or at start). 0 or -errno. */
int kr_keeper_ep_build(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t e);
/* Destroy what endpoint e has (cmd_lock held or at teardown); it is DIRTY after. */
void kr_keeper_ep_destroy(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t e);
/* Worker: rebuild a DIRTY endpoint. 1 (rebuilt), 0 (not dirty), -errno. */
int kr_keeper_ep_restore(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t e);
/*
 * kr_keeper_port_bind() - KR_MSG_BIND from c: a FREE endpoint of c's tenant
 * gets a DCT with the launch's key and serves req->port. 0 (rep: index,
 * gen, qpn = DCT number), -EPERM (not attached), -EINVAL (port 0 or above
 * 65535, nslots 0 or above 1024, a table none of c's MRs covers with remote
 * read and atomic rights), -EADDRINUSE (the port is bound on this node),
 * -ENOSPC (every endpoint is bound), -EOPNOTSUPP (--ports 0), the DCT's error.
 */
int kr_keeper_port_bind(struct kr_keeper *k, struct kr_keeper_conn *c,
			const struct kr_msg_bind *req, struct kr_msg_reply *rep);
/* KR_MSG_UNBIND: 0, -EPERM, -EINVAL (not c's binding of that port and gen). */
int kr_keeper_port_unbind(struct kr_keeper *k, struct kr_keeper_conn *c,
			  const struct kr_msg_bind *req);
/* Unbind every port job holds (detach or death). Returns how many. */
uint32_t kr_keeper_port_reclaim(struct kr_keeper *k, uint32_t job);
struct kr_meta_msg;
/*
 * cmd_lock held: append the bound ports of every launch to a MetaServer
 * registration (keeper_dct.c, src/keeper/meta), round-robin across launches: each launch's first,
 * then each one's second, while the message has room.
 */
void kr_keeper_ports_publish(const struct kr_keeper *k, struct kr_meta_msg *m);

/* keeper_krmin.c: kmod-min fences the DCI rings (see there); no-ops without it */
int kr_keeper_krmin_open(struct kr_keeper *k);
void kr_keeper_krmin_close(struct kr_keeper *k);
int kr_keeper_krmin_reg(struct kr_keeper *k, struct kr_keeper_qp *q, uint8_t *block,
			uint64_t cq_off, uint64_t len);
void kr_keeper_krmin_unreg(struct kr_keeper *k, struct kr_keeper_qp *q);
int kr_keeper_krmin_grant(struct kr_keeper *k, struct kr_keeper_qp *q, pid_t pid,
			  uint64_t *token);
void kr_keeper_krmin_revoke(struct kr_keeper *k, struct kr_keeper_qp *q);
void kr_keeper_krmin_events(struct kr_keeper *k);
/*
 * The same by slot, for what is not a DCI (a receive endpoint): pin
 * [ring, ring + ring_len) and [dbr, dbr + dbr_len), memory both, as one slot
 * of tenant (*slot_plus1 0 in trusted mode); unpin; revoke; grant to pid.
 * 0 or the ioctl's -errno.
 */
int kr_keeper_krmin_reg_mem(struct kr_keeper *k, uint32_t tenant, void *ring, uint64_t ring_len,
			    void *dbr, uint64_t dbr_len, uint32_t *slot_plus1);
void kr_keeper_krmin_unreg_slot(struct kr_keeper *k, uint32_t *slot_plus1);
void kr_keeper_krmin_revoke_slot(struct kr_keeper *k, uint32_t slot_plus1);
int kr_keeper_krmin_grant_slot(struct kr_keeper *k, uint32_t slot_plus1, pid_t pid,
			       uint64_t *token);

/* keeper_heap.c (k->cmd_lock held for those that register or deregister) */
int kr_keeper_heap_place(struct kr_keeper *k, struct kr_keeper_heap *h);
int kr_keeper_heap_grow(struct kr_keeper *k, struct kr_keeper_tenant *t, struct kr_keeper_heap *h,
			uint64_t want);
int kr_keeper_heap_empty(struct kr_keeper_tenant *t, struct kr_keeper_heap *h);
int kr_keeper_heaps_warm(struct kr_keeper *k, struct kr_keeper_tenant *t, pthread_mutex_t *lock);
int kr_keeper_heaps_restore(struct kr_keeper *k, struct kr_keeper_tenant *t);
uint32_t kr_keeper_heaps_wanted(const struct kr_keeper *k, const struct kr_keeper_tenant *t);
void kr_keeper_heap_left(struct kr_keeper *k, struct kr_keeper_heap *h);
struct kr_keeper_heap *kr_keeper_heap_take(struct kr_keeper *k, struct kr_keeper_tenant *t,
					   uint32_t j);
void kr_keeper_heap_unplace(struct kr_keeper_heap *h);
/* The MR over the whole heap: the newest. */
static inline const struct kr_devx_mr *kr_keeper_heap_mr(const struct kr_keeper_heap *h)
{
	return &h->mr[h->nchunks - 1];
}

/* keeper_ready.c: the job's ready-DCI ring */
/* At attach: the job's ring empty. */
void kr_keeper_ready_reset(struct kr_keeper *k, struct kr_keeper_conn *c);
/* Offer DCIs on c's ring until KR_JOB_READY_FILL unclaimed ones are ahead (pool permitting). */
void kr_keeper_ready_fill(struct kr_keeper *k, struct kr_keeper_conn *c);
/* The same, once c's job has taken a DCI from its ring (a DCI release: it will want one again). */
void kr_keeper_ready_fill_used(struct kr_keeper *k, struct kr_keeper_conn *c);
/* At attach: n DCIs on c's ring whatever the pool (the first connect's). */
void kr_keeper_ready_offer(struct kr_keeper *k, struct kr_keeper_conn *c, uint32_t n);
/* The loop's tick: the rings of jobs that claimed an offer since the last one filled again. */
void kr_keeper_ready_tick(struct kr_keeper *k);
/*
 * A DCI lease request of the job on c: an offer of its own ring it has not
 * claimed (it asked before it saw the offer), taken off the ring and made
 * the reply, so the job never waits for its own offer to come back.
 */
bool kr_keeper_ready_hand(struct kr_keeper *k, struct kr_keeper_conn *c, struct kr_msg_reply *rep);
/* Take back tenant's offers no job claimed (to DIRTY: the worker resets them). How many. */
uint32_t kr_keeper_ready_revoke(struct kr_keeper *k, uint32_t tenant);

/* keeper_lease.c */
int kr_keeper_lease_grant(struct kr_keeper *k, struct kr_keeper_conn *c, uint32_t kind,
			  struct kr_msg_reply *rep);
int kr_keeper_lease_release(struct kr_keeper *k, struct kr_keeper_conn *c, uint32_t kind,
			    uint32_t index, uint32_t gen, uint32_t flags);
/* How a lease comes back (kr_keeper_lease_take) */
enum {
	/* a DCI no job could have used: straight back to the free ring, no reset */
	KR_LEASE_BACK_UNTOUCHED = 1,
	/* a DCI its job says is idle: no reset if its rings agree (kr_keeper_dci_idle) */
	KR_LEASE_BACK_IDLE = 2,
};
/*
 * The same, for job j, how a mask of KR_LEASE_BACK_* (0: a reset for DCIs
 * and RC QPs); the keeper's own for the offers of a job's ready ring. 0 or
 * -EINVAL.
 */
int kr_keeper_lease_take(struct kr_keeper *k, uint32_t j, uint32_t kind, uint32_t index,
			 uint32_t gen, uint32_t how);
/* kmod-min took a DCI from its holder: reclaim that lease. True if it was leased. */
bool kr_keeper_lease_lost(struct kr_keeper *k, uint32_t kind, uint32_t tenant, uint32_t index);
/* Take back everything job j owns (detach or death). Returns leases taken. */
uint32_t kr_keeper_lease_reclaim(struct kr_keeper *k, uint32_t job);
/* Background: scrub up to budget DIRTY jobs. Returns scrubs left (> 0) or 0. */
int kr_keeper_scrub_jobs(struct kr_keeper *k, uint32_t budget);

/* src/keeper/keeper_dct.c: options, and the tenant zone's dct block (node id, static peers). */
/* One --node-id/--peers key: 0, -EINVAL (err set), -ENOENT (not a dct key). */
int kr_keeper_dct_cfg_set(struct kr_keeper_cfg *cfg, const char *key, const char *val, char *err,
		   size_t errlen);
/*
 * Write tenant t's dct block (zone header dct_off set by the caller); the
 * first tenant's call also reads --peers. 0 or -errno.
 */
int kr_keeper_dct_init(struct kr_keeper *k, struct kr_keeper_tenant *t);
/*
 * A launch bound tenant t, or left it (t->bound false): its node cache is
 * emptied and takes the static peers of the launch's tag.
 */
void kr_keeper_dct_bind(struct kr_keeper *k, struct kr_keeper_tenant *t);
/*
 * kr_keeper_cache_report() - a job of tenant t reports for the node cache
 * (struct kr_msg_cache, already size-checked). 0, -EINVAL (bad op, or a
 * record that does not decode, is not tenant t's or names this node),
 * -EBUSY (no way free).
 */
int kr_keeper_cache_report(struct kr_keeper *k, uint32_t t, const struct kr_msg_cache *m);
/* keeper_meta.c: hugepage bytes the MetaServer table needs (0 without --metaserver). */
uint64_t kr_keeper_meta_hugepage_bytes(const struct kr_keeper_cfg *cfg);
/*
 * kr_keeper_meta_start() - after every tenant is built, before the socket
 * listens: the MetaServer table and its registration thread (--metaserver),
 * then registration with every replica of --metaserver-addr and their
 * addresses into each tenant zone. 0 or -errno (table, MR, socket).
 */
int kr_keeper_meta_start(struct kr_keeper *k);
void kr_keeper_meta_stop(struct kr_keeper *k);
/* A launch came or left: this node's row in its own table now, the replicas at once. */
void kr_keeper_meta_changed(struct kr_keeper *k);
/* Event loop tick: the MetaServer list into the zones when it changed. */
void kr_keeper_meta_tick(struct kr_keeper *k);
struct kr_meta_msg;
/* This node's REGISTER (node id, GID, every tenant slot's launch, bound ports). */
void kr_keeper_meta_own(struct kr_keeper *k, struct kr_meta_msg *m);

/* keeper_dci_idle.c */
/*
 * DCI q, just taken back from a job that said it is idle: true if a
 * trusted keeper may put it back FREE with no reset (its rings show nothing
 * in flight, nothing unread, no error), its zone descriptor then giving the
 * next holder the consumer index this one left. False: reset it.
 */
bool kr_keeper_dci_idle(struct kr_keeper *k, struct kr_keeper_qp *q);

/* keeper_worker.c */
/* Start the worker thread (after every tenant is built). 0 or -errno. */
int kr_keeper_worker_start(struct kr_keeper *k);
/* Stop and join it (before tenants are destroyed). */
void kr_keeper_worker_stop(struct kr_keeper *k);
/* Event loop: something came back (DIRTY): the worker resets it. */
void kr_keeper_worker_wake(struct kr_keeper *k);
/*
 * The calling thread's wakes wait until kr_keeper_worker_release(), which
 * makes one if any was asked: the loop serving a request sends its reply
 * before it wakes the worker (waking a thread on an idle CPU is the
 * dearest system call of the reply's path: ~20 us on a VM).
 */
void kr_keeper_worker_hold(void);
void kr_keeper_worker_release(struct kr_keeper *k);
/* Event loop: put what the worker made ready into the free rings, FREE. */
void kr_keeper_worker_adopt(struct kr_keeper *k);

/* keeper_grow.c (on the worker) */
/*
 * Build one QP of kind for tenant t if it is below its low-water mark and has
 * an EMPTY slot. Returns 1 (built, q->ready set), 0 (nothing to do), -errno.
 */
int kr_keeper_grow_one(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t kind);
/* Reserve the device's user indexes for the most QPs the pool may grow to. */
int kr_keeper_grow_reserve(struct kr_keeper *k);

/* keeper_server.c */
int kr_keeper_lock(struct kr_keeper *k);
int kr_keeper_listen(struct kr_keeper *k);
void kr_keeper_unlisten(struct kr_keeper *k);
void kr_keeper_accept(struct kr_keeper *k);
/* keeper_conns.c: the connection table, constant work per accept and close */
int kr_keeper_conns_init(struct kr_keeper *k);
void kr_keeper_conns_fini(struct kr_keeper *k);
/* A free slot for a connection of uid: 0, -EUSERS (uid holds limit), -ENOSPC (table full). */
int kr_keeper_conn_slot_get(struct kr_keeper *k, uid_t uid, uint32_t limit, uint32_t *slot);
void kr_keeper_conn_slot_put(struct kr_keeper *k, uint32_t slot, uid_t uid);
uint32_t kr_keeper_conns_of_uid(struct kr_keeper *k, uid_t uid);
/* Serve one readable connection (request, EOF or error). */
void kr_keeper_conn_serve(struct kr_keeper *k, uint32_t slot);
/* Close connections that never attached within KR_POOL_HELLO_MS. */
void kr_keeper_conn_expire(struct kr_keeper *k);
void kr_keeper_conn_close(struct kr_keeper *k, uint32_t slot, bool died);

/*
 * keeper_guard.c: remote errors per job. kr_keeper_guard_error() counts one
 * (a DCI that came back from job j in error) and throttles or detaches a job
 * that causes too many; kr_keeper_guard_busy() tells whether job j's lease
 * requests are refused (-EBUSY) now. Loop thread only.
 */
void kr_keeper_guard_error(struct kr_keeper *k, uint32_t j);
bool kr_keeper_guard_busy(struct kr_keeper *k, uint32_t j);

/* keeper_run.c */
/*
 * kr_keeper_run() - start the keeper with cfg and serve until SIGTERM/SIGINT.
 * Returns 0 after a clean stop, -EADDRINUSE (another keeper serves the
 * socket), -ENOMEM (hugepages), -ENODEV, or the error that stopped start-up.
 */
int kr_keeper_run(const struct kr_keeper_cfg *cfg);

#endif /* KR_KEEPER_H */
