/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/devx/sim: a software ConnectX behind the DEVX ops table. Private header.
 *
 * Roles, one per file, as in Linux rxe:
 *   sim_device.c   open/close, the shared segment, the ops table, the
 *                  process registry of simulated hosts (by name and GID)
 *   sim_cmd*.c     firmware: mailbox validation and execution of commands
 *   sim_engine.c   the engine thread: polls doorbells, backs off to sleep
 *   sim_req.c      requester: send WQEs -> request packets, PSNs, retries
 *   sim_resp.c     responder: request packets -> memory, receives, ACK/NAK
 *   sim_comp.c     completer: ACKs/responses -> CQEs, error CQEs
 *   sim_mem.c      memory keys: lkey/rkey, access rights and range checks
 *   sim_wire.c     packet delivery between simulated hosts (in process here)
 *
 * Locking: sh->lock (process-shared mutex) serialises firmware commands
 * against the engine. The engine takes it for each pass over its queues.
 * Doorbells never take it: any process that maps the segment may write a WQE
 * into a ring it can reach and call sim_doorbell().
 */
#ifndef KR_SIM_H
#define KR_SIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../devx.h"

#define SIM_MAGIC 0x6b72736du /* "krsm" */
#define SIM_VERSION 1u

#define SIM_MAX_PD 256
#define SIM_MAX_UAR 64
#define SIM_MAX_UMEM 1024
#define SIM_MAX_CQ 1024
#define SIM_MAX_QP 1024
#define SIM_MAX_SRQ 256
#define SIM_MAX_DCT 256
#define SIM_MAX_MKEY 1024

#define SIM_UAR_SIZE 4096u
#define SIM_UAR_DB_OFFSET 0x800u /* doorbell register within a UAR page, as on hw */

/* Object numbers: 0 is never valid. QPs and DCTs share one 24-bit space. */
#define SIM_QPN_BASE 0x100u
#define SIM_DCTN_BASE 0x8000u

/* Capabilities the sim reports (QUERY_HCA_CAP general, cur and max). */
#define SIM_LOG_MAX_QP 10      /* SIM_MAX_QP */
#define SIM_LOG_MAX_QP_SZ 15   /* 32K WQEBBs */
#define SIM_LOG_MAX_CQ 10
#define SIM_LOG_MAX_CQ_SZ 22
#define SIM_LOG_MAX_SRQ 8
#define SIM_LOG_MAX_SRQ_SZ 15
#define SIM_LOG_MAX_PD 8
#define SIM_LOG_MAX_MKEY 10
#define SIM_LOG_MAX_MSG 30     /* 1 GiB messages */
#define SIM_LOG_MAX_RA 4       /* 16 outstanding READ/atomics each way */
#define SIM_MAX_WQE_SZ_SQ 1024 /* bytes */
#define SIM_MAX_WQE_SZ_RQ 512
#define SIM_MAX_WQE_SZ_SQ_DC 1024

/*
 * Shared objects. The firmware side (sim_cmd*.c, under sh->lock) writes every
 * field not marked "engine"; the engine only reads those. Fields marked
 * "engine" are written only by the engine thread of the opening process.
 * umem addresses are virtual addresses of the opening process: only its
 * engine dereferences them.
 */
struct sim_umem {
	uint8_t in_use;
	uint32_t access;
	uint64_t addr;
	uint64_t size;
	uint32_t refcnt; /* CQs, QPs, SRQs, MKEYs using it */
};

struct sim_pd {
	uint8_t in_use;
	uint32_t refcnt;
};

struct sim_uar {
	uint8_t in_use;
	uint32_t refcnt;
};

struct sim_cq {
	uint8_t in_use;
	uint8_t log_size;
	uint32_t uar_page;
	uint32_t umem_id;
	uint64_t umem_offset;
	uint32_t dbr_umem_id;
	uint64_t dbr_offset;
	uint32_t refcnt;     /* QPs, DCTs using it */
	uint32_t pi;         /* engine: CQEs produced */
	uint32_t overruns;   /* engine: CQEs dropped because the CQ was full */
};

struct sim_srq {
	uint8_t in_use;
	uint8_t state;       /* KR_RMPC_STATE_* */
	uint32_t pdn;
	uint8_t log_size;    /* WQEs */
	uint8_t log_stride;  /* bytes per WQE */
	uint32_t umem_id;
	uint64_t umem_offset;
	uint32_t dbr_umem_id;
	uint64_t dbr_offset;
	uint32_t refcnt;     /* QPs, DCTs using it */
	uint32_t ci;         /* engine: WQEs consumed */
};

struct sim_qp {
	uint8_t in_use;
	uint8_t st;          /* KR_QPC_ST_RC or KR_QPC_ST_DCI */
	uint8_t state;       /* KR_QPC_STATE_* */
	uint32_t pdn;
	uint32_t cqn_snd;
	uint32_t cqn_rcv;
	uint8_t rq_type;     /* KR_QPC_RQ_TYPE_* */
	uint32_t srqn;
	uint32_t uar_page;
	uint32_t user_index;
	uint8_t log_sq_size; /* WQEBBs */
	uint8_t log_rq_size; /* WQEs */
	uint8_t log_rq_stride; /* log2(bytes per RQ WQE) - 4, as in qpc */
	uint8_t no_sq;
	uint32_t wq_umem_id;
	uint64_t wq_umem_offset;
	uint32_t dbr_umem_id;
	uint64_t dbr_offset;
	/* path and transport, set by the transitions */
	uint8_t port;
	uint32_t remote_qpn;
	uint8_t mtu;
	uint8_t rgid[16];
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t ack_timeout;
	uint8_t retry_count;
	uint8_t rnr_retry;
	uint8_t min_rnr_nak;
	uint8_t log_sra_max;
	uint8_t log_rra_max;
	uint8_t rre, rwe, rae;
	uint32_t next_send_psn; /* initial value from RTR2RTS; engine advances */
	uint32_t next_rcv_psn;  /* initial value from INIT2RTR; engine advances */
	/* engine */
	uint32_t sq_ci;         /* WQEBBs consumed by the requester */
	uint32_t rq_ci;         /* receive WQEs consumed */
};

struct sim_dct {
	uint8_t in_use;
	uint8_t state;       /* KR_DCTC_STATE_* */
	uint32_t pdn;
	uint32_t cqn;
	uint32_t srqn;
	uint32_t user_index;
	uint64_t dc_key;
	uint8_t rre, rwe, rae;
	uint8_t min_rnr_nak;
	uint8_t mtu;
	uint8_t port;
	uint32_t key_violations; /* engine: dctc.dc_access_key_violation_count */
};

struct sim_mkey {
	uint8_t in_use;
	uint8_t variant;     /* mkc.mkey_7_0 */
	uint32_t pdn;
	uint32_t umem_id;
	uint64_t umem_offset;
	uint64_t start_addr; /* IO virtual address the key covers */
	uint64_t len;
	uint8_t lr, lw, rr, rw, a;
};

/*
 * The shared segment of one simulated host (a memfd, MAP_SHARED). Opened by
 * one process (the "opener", which runs the engine); others that map it (a
 * forked child, later the keeper's jobs) only write WQEs and ring doorbells.
 */
struct sim_shared {
	uint32_t magic;
	uint32_t version;
	uint64_t size;
	char name[64];
	uint8_t gid[16];              /* IPv4-mapped, derived from the name */
	pthread_mutex_t lock;         /* process-shared; commands vs engine */
	_Atomic uint32_t db_seq;      /* bumped by every doorbell: futex word */
	_Atomic uint32_t engine_sleeping; /* engine parked on db_seq */
	_Atomic uint64_t doorbells;   /* statistics */
	struct sim_pd pd[SIM_MAX_PD];
	struct sim_uar uar[SIM_MAX_UAR];
	struct sim_umem umem[SIM_MAX_UMEM];
	struct sim_cq cq[SIM_MAX_CQ];
	struct sim_qp qp[SIM_MAX_QP];
	struct sim_srq srq[SIM_MAX_SRQ];
	struct sim_dct dct[SIM_MAX_DCT];
	struct sim_mkey mkey[SIM_MAX_MKEY];
	uint8_t uar_pages[SIM_MAX_UAR][SIM_UAR_SIZE] __attribute__((aligned(4096)));
};

struct sim_engine; /* engine-private, sim_engine.c */

/* Process-local view of a simulated host. ctx first: ctx->priv points back. */
struct sim_dev {
	struct kr_devx_ctx ctx;
	struct sim_shared *sh;
	int shm_fd;
	struct sim_engine *eng;  /* only in the opening process */
	struct sim_dev *next;    /* process registry */
};

static inline struct sim_dev *sim_dev_of(struct kr_devx_ctx *ctx)
{
	return (struct sim_dev *)ctx->priv;
}

/* ---- sim_device.c ---- */
int sim_open(const char *name, struct kr_devx_ctx **ctx);  /* name without "sim:" */
/* Registry of hosts open in this process; the wire delivers through it. */
struct sim_dev *sim_dev_lookup_gid(const uint8_t gid[16]);
/* Calls fn for each registered host while the registry lock is held. */
void sim_dev_foreach(void (*fn)(struct sim_dev *dev, void *arg), void *arg);
void sim_registry_lock(void);
void sim_registry_unlock(void);
/* Names of the sim hosts open in this process (for kr_devx_list). */
int sim_list(struct kr_devx_dev_info *info, int max);
/* GID a host name maps to: ::ffff:127.a.b.c from a hash of the name. */
void sim_gid_of_name(const char *name, uint8_t gid[16]);

/* ---- sim_cmd*.c: the firmware ---- */
/*
 * Execute one command mailbox as firmware would. Fills out (status, syndrome,
 * outputs) and returns 0 if it ran with status OK, -EREMOTEIO if the status is
 * bad (nothing changed), -EINVAL if in/out are too short to hold a header.
 * *obj_id receives the created object's number for create commands.
 */
int sim_cmd_exec(struct sim_dev *dev, const void *in, size_t inlen, void *out, size_t outlen,
		 uint32_t *obj_id);

/* Pointer to [offset, offset+len) of a umem, or NULL if out of range/unknown. */
void *sim_umem_ptr(struct sim_dev *dev, uint32_t umem_id, uint64_t offset, uint64_t len);

/* ---- sim_mem.c ---- */
/*
 * Translate a key + address range for an access. Returns a pointer into the
 * owning umem, or NULL when the key is unknown, belongs to another PD, lacks
 * the right, or the range falls outside it. need: KR_ACCESS_* bits for remote
 * checks, 0 for a local read, KR_ACCESS_LOCAL_WRITE for a local write.
 */
void *sim_mem_translate(struct sim_dev *dev, uint32_t key, uint32_t pdn, uint64_t addr,
			uint64_t len, uint32_t need, bool remote);

/* ---- engine (sim_engine.c and the role files) ---- */
int sim_engine_start(struct sim_dev *dev);
void sim_engine_stop(struct sim_dev *dev);
/* sh->lock held: the QP entered RST (create or 2RST); forget its transport state. */
void sim_engine_qp_reset(struct sim_dev *dev, uint32_t qp_idx);
/* sh->lock held: the QP was moved to ERR by a command; flush its queues. */
void sim_engine_qp_error(struct sim_dev *dev, uint32_t qp_idx);
/* ops->doorbell: store the doorbell, count it, wake the engine if it sleeps. */
void sim_doorbell(struct kr_devx_uar *uar, uint64_t val);

/* Index helpers. */
static inline bool sim_qpn_to_idx(uint32_t qpn, uint32_t *idx)
{
	if (qpn < SIM_QPN_BASE || qpn >= SIM_QPN_BASE + SIM_MAX_QP)
		return false;
	*idx = qpn - SIM_QPN_BASE;
	return true;
}

static inline bool sim_dctn_to_idx(uint32_t dctn, uint32_t *idx)
{
	if (dctn < SIM_DCTN_BASE || dctn >= SIM_DCTN_BASE + SIM_MAX_DCT)
		return false;
	*idx = dctn - SIM_DCTN_BASE;
	return true;
}

/* pd, uar, umem, cq, srq numbers and mkey indexes are table index + 1. */
static inline bool sim_num_to_idx(uint32_t num, uint32_t max, uint32_t *idx)
{
	if (num == 0 || num > max)
		return false;
	*idx = num - 1;
	return true;
}

#endif /* KR_SIM_H */
