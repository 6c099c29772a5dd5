/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/sim: a software ConnectX behind the DEVX ops table. Private header.
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
 *   sim_wire.c     packet delivery between simulated hosts: fault hook, held
 *                  packets, in process or over UDP
 *   sim_roce.c     RoCEv2 bytes of a packet (BTH .. ICRC)
 *   sim_udp.c      the UDP socket of a host opened with an address
 *
 * Locking: sh->lock (process-shared mutex) serialises firmware commands
 * against the engine. The engine takes it for each pass over its queues.
 * Doorbells never take it: any process that maps the segment may write a WQE
 * into a ring it can reach and call sim_doorbell().
 */
#ifndef KR_SIM_H
#define KR_SIM_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "devx/devx.h"

/*
 * Fault injection on the packets a simulated host sends (sim_fault.c), and
 * the seam the wire calls it through (sim_udp.c, sim_wire.c).
 *
 * The wire calls sim_fault_on_send() once per packet, before the packet is
 * serialised. The verdict:
 *   PASS     send it now
 *   DROP     do not send it (the wire frees it)
 *   DUP      send it twice
 *   DELAY    send it after *delay_ns (also how reorder is done: a delayed
 *            packet is overtaken by the ones sent after it)
 *   CORRUPT  serialise it, compute the ICRC, then flip one bit: the
 *            receiver's ICRC check must drop it
 * *delay_ns is also meaningful with PASS/DUP: the wire latency and
 * bandwidth of the cost model (0 = none).
 */

struct sim_engine;
struct sim_pkt;

enum sim_fault_action {
	SIM_FAULT_PASS,
	SIM_FAULT_DROP,
	SIM_FAULT_DUP,
	SIM_FAULT_DELAY,
	SIM_FAULT_CORRUPT,
};

/* Called by the engine thread of eng with sh->lock held; must not block. */
enum sim_fault_action sim_fault_on_send(struct sim_engine *eng, struct sim_pkt *pkt,
					uint64_t *delay_ns);

/* ---- runtime faults and statistics (sim_fault.c; tests call these) ---- */

struct kr_devx_ctx;

/*
 * Statistics of one simulated host, kept in its shared segment (so they
 * survive a killed engine and any process mapping it may read them). Every
 * counter only grows; SIM_STAT_INC adds one (relaxed atomic: the engine, the
 * wire and a UDP receiver may count concurrently).
 */
struct sim_stats {
	uint64_t pkts_tx;	 /* packets this host put on the wire (before faults) */
	uint64_t pkts_rx;	 /* packets its engine took off the wire */
	uint64_t retransmits;	 /* request packets sent again (go-back-N) */
	uint64_t timeouts;	 /* retransmission timer expiries */
	uint64_t retry_exc;	 /* WQEs failed with transport retry counter exceeded */
	uint64_t dup_requests;	 /* responder: request packets with an old PSN */
	uint64_t seq_naks;	 /* responder: PSN sequence error NAKs sent */
	uint64_t rnr_naks;	 /* responder: RNR NAKs sent */
	uint64_t icrc_drops;	 /* received packets dropped by the ICRC check */
	uint64_t rx_malformed;	 /* received datagrams sim_roce_parse refused, dropped */
	uint64_t dc_stale_drops; /* DCT: packets of an earlier DC connection dropped */
	uint64_t sq_rewrites;	 /* WQEs whose ring bytes changed before their completion */
	uint64_t l2_drops;	 /* sent to a MAC not the peer's, or from a GID IP cannot carry */
	uint64_t fault_drops;	 /* fault injection on this host's packets: */
	uint64_t fault_dups;
	uint64_t fault_reorders;
	uint64_t fault_delays;
	uint64_t fault_corrupts;
	uint64_t loopback; /* packets to itself, looped back inside (never on the wire) */
	uint64_t icrc_ip_id; /* received packets whose ICRC named a nonzero IPv4 identification */
};

#define SIM_STAT_INC(sh, field) __atomic_fetch_add(&(sh)->stats.field, 1, __ATOMIC_RELAXED)

/*
 * sim_stats_query() - copy the statistics of the sim host ctx into *st.
 * Returns 0, or -EINVAL (ctx is not a sim device, st NULL).
 */
int sim_stats_query(struct kr_devx_ctx *ctx, struct sim_stats *st);

/*
 * sim_fault_kill_engine() - stop the engine of sim host ctx abruptly, as if
 * its NIC hung: it leaves the wire (packets to it vanish, packets it held
 * are lost), doorbells are no longer served, nothing completes. Firmware
 * commands still run and ctx must still be closed with kr_devx_close. No
 * other thread may issue commands on ctx during the call.
 * Returns 0, -EINVAL (not a sim device), -ESRCH (no engine runs: already
 * killed, or ctx was opened by another process).
 */
int sim_fault_kill_engine(struct kr_devx_ctx *ctx);

/*
 * sim_fault_qp_error() - move QP qpn of sim host ctx to ERR as an internal
 * error would: every outstanding and posted WQE completes with a flush error
 * CQE, receives too; the QP stays in ERR until 2RST. Returns 0 (also when it
 * already was in ERR), -EINVAL (not a sim device, or the QP is in RST),
 * -ENOENT (no such QP).
 */
int sim_fault_qp_error(struct kr_devx_ctx *ctx, uint32_t qpn);

/* ---- capture and replay of one packet (sim_capture.c; tests call these) ---- */

/* BTH opcodes a capture can match (IBTA RC numbering; DC packets use the same). */
enum sim_capture_op {
	SIM_CAP_WRITE_ONLY = 0x0a,
	SIM_CAP_READ_REQUEST = 0x0c,
	SIM_CAP_READ_RESPONSE_ONLY = 0x10,
	SIM_CAP_ACKNOWLEDGE = 0x11,
	SIM_CAP_ATOMIC_ACKNOWLEDGE = 0x12,
	SIM_CAP_COMPARE_SWAP = 0x13,
	SIM_CAP_FETCH_ADD = 0x14,
};

enum sim_capture_mode {
	SIM_CAPTURE_COPY, /* keep a copy, the packet goes out as usual */
	SIM_CAPTURE_TAKE, /* keep it, it does not go out (until replayed) */
};

/*
 * sim_fault_capture() - arm a capture of the next packet the sim host ctx
 * sends with BTH opcode `opcode` (any BTH opcode the sim sends; enum
 * sim_capture_op names the usual ones), before fault injection. Re-arming
 * forgets the previous capture. ctx's engine must run in this process.
 * Returns 0, -EINVAL (not a sim device, bad opcode or mode), -ESRCH (no
 * engine here), -ENOMEM.
 */
int sim_fault_capture(struct kr_devx_ctx *ctx, uint8_t opcode, enum sim_capture_mode how);

/*
 * sim_fault_captured() - 1 once the armed capture holds its packet (its PSN
 * in *psn when psn is set), 0 while it waits. -EINVAL, -ESRCH as above,
 * -ENOENT (never armed).
 */
int sim_fault_captured(struct kr_devx_ctx *ctx, uint32_t *psn);

/*
 * sim_fault_replay() - send the captured packet again, unchanged (same PSN,
 * DC connection, payload), without fault injection; returns once the engine
 * has put it on the wire (for in-process hosts: in the receiver's queue), so
 * what the caller posts next travels behind it. The copy is kept: call again
 * for another replay. Returns 0, -EINVAL, -ESRCH as above, -ENOENT (nothing
 * captured), -ETIMEDOUT (the engine did not send it within 2 s).
 */
int sim_fault_replay(struct kr_devx_ctx *ctx);


/*
 * Configuration of one simulated host: its address on the wire, the firmware
 * cost model and fault injection. Configuration, not code: everything here
 * comes from the device name and the environment (sim_config.c).
 *
 *   sim:<name>[@<ipv4>[:<udp port>]][,<key>=<value>...]
 *
 * keys: profile=<none|connectx4>, seed=<n>, drop=<rate>, dup=<rate>,
 * reorder=<rate>, delay=<rate>, delay_us=<n>, corrupt=<rate>,
 * wire_latency_ns=<n>, wire_gbps=<n>, cmd_<command>_us=<n> (override one
 * command's latency). Rates are fractions (0.05 = 5%). KR_SIM_OPTIONS in the
 * environment is appended to every host's options (the device name wins).
 *
 * Without @<ipv4> a host lives only in this process (the in-process wire);
 * with it, it binds a UDP socket on <ipv4>:<udp port> (default 4791) and
 * exchanges RoCEv2 packets with hosts in other processes.
 */

/* Firmware commands the cost model prices (index into sim_config.cmd_ns). */
enum sim_cost_cmd {
	SIM_COST_OPEN,        /* device open (context creation) */
	SIM_COST_QUERY_HCA_CAP,
	SIM_COST_ALLOC_PD,
	SIM_COST_CREATE_CQ,
	SIM_COST_CREATE_QP,
	SIM_COST_RST2INIT,
	SIM_COST_INIT2RTR,
	SIM_COST_RTR2RTS,
	SIM_COST_MODIFY_OTHER, /* 2ERR, 2RST */
	SIM_COST_QUERY,        /* QUERY_QP, QUERY_DCT, QUERY_RMP */
	SIM_COST_CREATE_DCT,
	SIM_COST_CREATE_RMP,
	SIM_COST_CREATE_MKEY,
	SIM_COST_UMEM_REG,
	SIM_COST_DESTROY,      /* any destroy / dealloc */
	SIM_COST_NCMDS
};

struct sim_config {
	char name[64];
	/* wire */
	bool has_addr;
	struct in_addr addr;     /* IPv4; the GID is ::ffff:<addr> */
	uint16_t udp_port;       /* default 4791 */
	/* cost model (all zero = off) */
	char profile[32];        /* "" or "connectx4" */
	uint64_t cmd_ns[SIM_COST_NCMDS];
	uint64_t wire_latency_ns; /* one-way, per packet */
	/* cmdq=<name>: hosts of one name share one firmware command queue, as
	 * the processes of a node share its NIC (sim_cost.c); "" = its own */
	char cmdq[32];
	uint64_t wire_bps;        /* bits per second, 0 = unlimited */
	/* fault injection, per host, on packets it sends; rates in parts per million */
	uint64_t seed;
	uint32_t drop_ppm;
	uint32_t dup_ppm;
	uint32_t reorder_ppm;
	uint32_t delay_ppm;
	uint64_t delay_ns;       /* how long a delayed packet is held */
	uint32_t corrupt_ppm;    /* flip a bit after the ICRC: the receiver must drop it */
	/* the rdma-core release whose mlx5dv_devx_alloc_uar the host models
	 * (sim_bell.c): 0 is Debian 12's 44; from 45 dedicated NC pages exist */
	uint32_t libmlx5;
	bool no_blueflame; /* blueflame=0: cap.bf 0, BlueFlame UARs refused */
};

/*
 * Parse "<name>[@ip[:port]][,k=v...]" (the part after "sim:") plus
 * KR_SIM_OPTIONS into cfg. Returns 0, or -EINVAL with a logged message naming
 * the bad key or value (unknown key, rate outside [0,1], bad address...).
 */
int sim_config_parse(const char *spec, struct sim_config *cfg);


#define SIM_MAGIC 0x6b72736du /* "krsm" */
/* 2: UAR pages left the segment (sim_bell); 3: QP path rmac; 4: 1024 UAR pages;
 * 5: CQ arm state */
#define SIM_VERSION 5u

#define SIM_MAX_PD 256
#define SIM_MAX_UAR 1024 /* one per QP: a fenced keeper gives each DCI its own */
/* UAR pages handed to other processes (sim_uar_export): what the engine sleeps on */
#define SIM_MAX_WAKE 127
#define SIM_MAX_UMEM 1024
#define SIM_MAX_CQ 1024
#define SIM_MAX_QP 1024
#define SIM_MAX_SRQ 256
#define SIM_MAX_DCT 256
#define SIM_MAX_MKEY 1024

#define SIM_UAR_SIZE 4096u
#define SIM_UAR_DB_OFFSET 0x800u /* doorbell register within a UAR page, as on hw */
/* MLX5_ADAPTER_PAGE_SHIFT: the device's smallest page */
#define SIM_ADAPTER_PAGE_SHIFT 12
/* BlueFlame: two registers per page from SIM_UAR_DB_OFFSET, each of two
 * buffers that doorbells and WQE copies alternate between (libmlx5's bfregs) */
#define SIM_LOG_BF_REG_SIZE  9
#define SIM_BF_REG_SIZE	     (1u << SIM_LOG_BF_REG_SIZE)
#define SIM_BF_REGS_PER_PAGE 2u

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
	uint8_t in_use; /* holders: 1 (NC or dedicated page), or its registers held */
	uint8_t bf;	/* split into BlueFlame registers (sim_bell.c): the context's */
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
	uint8_t armed;       /* an event is asked for (sim_event.c) */
	uint32_t arm_word;   /* the last arm doorbell's word: sn, command, consumer index */
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
	uint8_t rmac[6];
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
	uint8_t addr_index; /* dctc.my_addr_index: the GID entry answers leave from */
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
	struct sim_pd pd[SIM_MAX_PD];
	struct sim_uar uar[SIM_MAX_UAR];
	struct sim_umem umem[SIM_MAX_UMEM];
	struct sim_cq cq[SIM_MAX_CQ];
	struct sim_qp qp[SIM_MAX_QP];
	struct sim_srq srq[SIM_MAX_SRQ];
	struct sim_dct dct[SIM_MAX_DCT];
	struct sim_mkey mkey[SIM_MAX_MKEY];
	/* engine statistics: SIM_STAT_INC by whoever counts, sim_stats_query reads */
	struct sim_stats stats;
};

/*
 * A UAR page (sim_bell.c): one page in its own memfd, so that the keeper can
 * hand a tenant's jobs their UAR page and nothing else of the host. Where
 * hardware has its doorbell register (SIM_UAR_DB_OFFSET) the sim has one
 * too; below it are the sim's wake words. A job may write any bytes anywhere
 * in the page: the engine only compares seq (its futex word) and writes
 * sleeping, so no value here can crash it or reach another tenant.
 */
#define SIM_BELL_MAGIC 0x6b72626cu /* "krbl" */

struct sim_bell {
	uint32_t magic; /* SIM_BELL_MAGIC: lets a job check what it was sent */
	uint32_t page_id;
	_Atomic uint32_t seq;	   /* bumped by a doorbell of another process: a futex word */
	_Atomic uint32_t sleeping; /* set by the engine before it waits on seq */
	_Atomic uint64_t rung; /* doorbells: new WQEs of the page's QPs are taken when it moves */
	uint8_t rsvd0[SIM_UAR_DB_OFFSET - 24];
	/* the BlueFlame registers: doorbells land in one of their buffers */
	uint8_t reg[SIM_BF_REGS_PER_PAGE][SIM_BF_REG_SIZE];
	uint8_t rsvd1[SIM_UAR_SIZE - SIM_UAR_DB_OFFSET - SIM_BF_REGS_PER_PAGE * SIM_BF_REG_SIZE];
};

_Static_assert(sizeof(struct sim_bell) == SIM_UAR_SIZE, "a bell is one UAR page");
_Static_assert(__builtin_offsetof(struct sim_bell, reg) == SIM_UAR_DB_OFFSET,
	       "doorbell registers where hardware has them");

struct sim_engine; /* engine-private, sim_engine.c */

/* Process-local view of a simulated host. ctx first: ctx->priv points back. */
struct sim_event_tab;

struct sim_dev {
	struct kr_devx_ctx ctx;
	struct sim_shared *sh;
	int shm_fd;
	struct sim_engine *eng;  /* only in the opening process */
	/* UAR pages mapped here (a job's view has one); created once, kept until
	 * close: the engine may be waiting on them. Guarded by sh->lock in the
	 * opener. */
	struct sim_bell *bell[SIM_MAX_UAR];
	int bell_fd[SIM_MAX_UAR];
	/* opener: libmlx5 44's UAR allocation (sim_bell.c): the one NC page
	 * (index + 1, 0 none yet), and the free BlueFlame registers, a FIFO of
	 * page index * SIM_BF_REGS_PER_PAGE + register */
	uint32_t nc_page;
	uint16_t bf_free[SIM_MAX_UAR * SIM_BF_REGS_PER_PAGE];
	uint32_t bf_head, bf_len;
	/* opener: the pages exported to other processes, whose seq words the
	 * engine sleeps on (index + 1; entries written before nwake grows; a
	 * freed page's entry is taken by the next export once the list is full) */
	uint32_t wake_page[SIM_MAX_WAKE];
	_Atomic uint32_t nwake;
	/* opener: CQ event subscriptions (sim_event.c), made with the first channel */
	struct sim_event_tab *ev;
	struct sim_dev *next;    /* process registry */
	struct sim_config cfg;   /* parsed from the device name by sim_open() */
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

/* ---- sim_port.c: the port's GID table and MAC ---- */
#define SIM_GID_TABLE_LEN 8u /* cap.gid_table_size 0: 8 entries */
#define SIM_GID_V2_IPV4	  3u /* the one entry a frame leaves from */
/* The MAC the host owning gid answers to: 02:6b:<IPv4 address>. */
void sim_mac_of_gid(const uint8_t gid[16], uint8_t mac[6]);
/* Entry index of sh's table: 0, -ENODATA (empty), -EINVAL (beyond it). */
int sim_gid_entry(const struct sim_shared *sh, uint16_t index, struct kr_devx_gid_entry *e);

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
/* ops->doorbell (sim_view.c): store the doorbell in the register's next
 * buffer, count the ring, wake the engine if it sleeps (through the page in a
 * job's view); a write outside a register's buffers rings nothing. */
void sim_doorbell(struct kr_devx_uar *uar, uint64_t val);
/* ops->bf_copy: the same with the whole WQE copied to the buffer. */
void sim_bf_copy(struct kr_devx_uar *uar, const void *wqe, uint32_t len);
/* Bump sh->db_seq and wake the engine if it sleeps (doorbells, the wire; sim_view.c). */
void sim_engine_kick(struct sim_shared *sh);

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

/* ---- additions (h3, firmware side) ---- */

/*
 * sim_device.c: take/release sh->lock. The lock is robust: if its holder died,
 * the next locker marks it consistent (and logs); the tables it guards are only
 * ever changed after full validation, so a dead holder left them usable.
 */
void sim_lock(struct sim_dev *dev);
void sim_unlock(struct sim_dev *dev);

/*
 * Command syndromes (mbox_out.syndrome) the sim firmware returns, one per
 * failure reason: X(name, value, what was wrong). Values are 0x5cGGNNNN with
 * GG the group: 01 mailbox, 02 reserved bit (NNNN = opcode), 03 unknown
 * object, 04 table full, 05 object state, 10 QP, 11 CQ, 12 RMP, 13 DCT,
 * 14 MKEY, 15 HCA caps. sim_syndrome_str() names them.
 */
#define SIM_SYNDROMES(X)                                                                           \
	X(SIM_SYND_BAD_OPCODE, 0x5c010001u, "opcode unknown to the firmware")                     \
	X(SIM_SYND_UNSUPPORTED_OP, 0x5c010002u, "opcode not implemented by the sim")              \
	X(SIM_SYND_OUTLEN, 0x5c010003u, "outlen shorter than the command's output mailbox")        \
	X(SIM_SYND_INLEN, 0x5c010004u, "inlen shorter than the command's input mailbox")           \
	X(SIM_SYND_OP_MOD, 0x5c010005u, "op_mod not valid for the command")                        \
	X(SIM_SYND_RSVD_QUERY_HCA_CAP, 0x5c020100u, "reserved bit set in query_hca_cap_in")        \
	X(SIM_SYND_RSVD_CREATE_MKEY, 0x5c020200u, "reserved bit set in create_mkey_in")            \
	X(SIM_SYND_RSVD_DESTROY_MKEY, 0x5c020202u, "reserved bit set in destroy_mkey_in")          \
	X(SIM_SYND_RSVD_CREATE_CQ, 0x5c020400u, "reserved bit set in create_cq_in")                \
	X(SIM_SYND_RSVD_DESTROY_CQ, 0x5c020401u, "reserved bit set in destroy_cq_in")              \
	X(SIM_SYND_RSVD_QUERY_CQ, 0x5c020402u, "reserved bit set in query_cq_in")                  \
	X(SIM_SYND_RSVD_CREATE_QP, 0x5c020500u, "reserved bit set in create_qp_in")                \
	X(SIM_SYND_RSVD_DESTROY_QP, 0x5c020501u, "reserved bit set in destroy_qp_in")              \
	X(SIM_SYND_RSVD_RST2INIT_QP, 0x5c020502u, "reserved bit set in rst2init_qp_in")            \
	X(SIM_SYND_RSVD_INIT2RTR_QP, 0x5c020503u, "reserved bit set in init2rtr_qp_in")            \
	X(SIM_SYND_RSVD_RTR2RTS_QP, 0x5c020504u, "reserved bit set in rtr2rts_qp_in")              \
	X(SIM_SYND_RSVD_2ERR_QP, 0x5c020507u, "reserved bit set in qp_2err_in")                    \
	X(SIM_SYND_RSVD_2RST_QP, 0x5c02050au, "reserved bit set in qp_2rst_in")                    \
	X(SIM_SYND_RSVD_QUERY_QP, 0x5c02050bu, "reserved bit set in query_qp_in")                  \
	X(SIM_SYND_RSVD_CREATE_DCT, 0x5c020710u, "reserved bit set in create_dct_in")              \
	X(SIM_SYND_RSVD_DESTROY_DCT, 0x5c020711u, "reserved bit set in destroy_dct_in")            \
	X(SIM_SYND_RSVD_DRAIN_DCT, 0x5c020712u, "reserved bit set in drain_dct_in")                \
	X(SIM_SYND_RSVD_QUERY_DCT, 0x5c020713u, "reserved bit set in query_dct_in")                \
	X(SIM_SYND_RSVD_ALLOC_PD, 0x5c020800u, "reserved bit set in alloc_pd_in")                  \
	X(SIM_SYND_RSVD_DEALLOC_PD, 0x5c020801u, "reserved bit set in dealloc_pd_in")              \
	X(SIM_SYND_RSVD_CREATE_RMP, 0x5c02090cu, "reserved bit set in create_rmp_in")              \
	X(SIM_SYND_RSVD_DESTROY_RMP, 0x5c02090eu, "reserved bit set in destroy_rmp_in")            \
	X(SIM_SYND_RSVD_QUERY_RMP, 0x5c02090fu, "reserved bit set in query_rmp_in")                \
	X(SIM_SYND_NO_PD, 0x5c030001u, "no such PD")                                               \
	X(SIM_SYND_NO_CQ, 0x5c030002u, "no such CQ")                                               \
	X(SIM_SYND_NO_CQ_SND, 0x5c030003u, "qpc.cqn_snd names no CQ")                              \
	X(SIM_SYND_NO_CQ_RCV, 0x5c030004u, "qpc.cqn_rcv names no CQ")                              \
	X(SIM_SYND_NO_UAR, 0x5c030005u, "uar_page names no allocated UAR")                         \
	X(SIM_SYND_NO_BUF_UMEM, 0x5c030006u, "queue buffer umem id names no umem")                 \
	X(SIM_SYND_NO_DBR_UMEM, 0x5c030007u, "doorbell record umem id names no umem")              \
	X(SIM_SYND_NO_SRQ, 0x5c030008u, "no such SRQ (RMP)")                                       \
	X(SIM_SYND_NO_QP, 0x5c030009u, "no such QP")                                               \
	X(SIM_SYND_NO_DCT, 0x5c03000au, "no such DCT")                                             \
	X(SIM_SYND_NO_MKEY, 0x5c03000bu, "no such MKEY")                                           \
	X(SIM_SYND_NO_MKEY_UMEM, 0x5c03000cu, "mkey_umem_id names no umem")                        \
	X(SIM_SYND_PD_TABLE_FULL, 0x5c040001u, "no free PD")                                       \
	X(SIM_SYND_CQ_TABLE_FULL, 0x5c040002u, "no free CQ")                                       \
	X(SIM_SYND_QP_TABLE_FULL, 0x5c040003u, "no free QP")                                       \
	X(SIM_SYND_SRQ_TABLE_FULL, 0x5c040004u, "no free SRQ (RMP)")                               \
	X(SIM_SYND_DCT_TABLE_FULL, 0x5c040005u, "no free DCT")                                     \
	X(SIM_SYND_MKEY_TABLE_FULL, 0x5c040006u, "no free MKEY")                                   \
	X(SIM_SYND_QP_BAD_TRANSITION, 0x5c050001u, "QP state does not allow this transition")      \
	X(SIM_SYND_PD_BUSY, 0x5c050002u, "PD still used by a QP, DCT, SRQ or MKEY")                \
	X(SIM_SYND_CQ_BUSY, 0x5c050003u, "CQ still used by a QP or DCT")                           \
	X(SIM_SYND_SRQ_BUSY, 0x5c050004u, "SRQ still used by a QP or DCT")                         \
	X(SIM_SYND_DCT_NOT_ACTIVE, 0x5c050005u, "DCT is not ACTIVE")                               \
	X(SIM_SYND_QP_BAD_ST, 0x5c100001u, "qpc.st is neither RC nor DCI")                         \
	X(SIM_SYND_QP_BAD_RQ_TYPE, 0x5c100002u, "qpc.rq_type not supported")                      \
	X(SIM_SYND_QP_DCI_RQ, 0x5c100003u, "DCI must have rq_type zero-size RQ")                   \
	X(SIM_SYND_QP_DCI_NO_SQ, 0x5c100004u, "DCI with no_sq set")                                \
	X(SIM_SYND_QP_SQ_SIZE, 0x5c100005u, "log_sq_size above log_max_qp_sz")                     \
	X(SIM_SYND_QP_RQ_SIZE, 0x5c100006u, "log_rq_size above log_max_qp_sz")                     \
	X(SIM_SYND_QP_RQ_STRIDE, 0x5c100007u, "receive WQE stride above max_wqe_sz_rq")            \
	X(SIM_SYND_QP_NO_WQ_UMEM, 0x5c100008u, "wq_umem_valid is 0 (the sim needs umem queues)")   \
	X(SIM_SYND_QP_NO_DBR_UMEM, 0x5c100009u, "qpc.dbr_umem_valid is 0")                         \
	X(SIM_SYND_QP_WQ_RANGE, 0x5c10000au, "RQ + SQ do not fit in the wq umem")                  \
	X(SIM_SYND_QP_DBR_RANGE, 0x5c10000bu, "QP doorbell record outside its umem or unaligned")  \
	X(SIM_SYND_QP_MSG_MAX, 0x5c10000cu, "log_msg_max above log_max_msg")                       \
	X(SIM_SYND_QP_PORT, 0x5c10000du, "vhca_port_num is not 1")                                 \
	X(SIM_SYND_QP_MTU, 0x5c10000eu, "qpc.mtu not 256..4096")                                   \
	X(SIM_SYND_QP_GID_INDEX, 0x5c10000fu, "src_addr_index beyond the GID table")               \
	X(SIM_SYND_QP_RA, 0x5c100010u, "log_sra_max or log_rra_max above the caps")                \
	X(SIM_SYND_QP_TS_FORMAT, 0x5c100011u, "qpc.ts_format is reserved (3)")                     \
	X(SIM_SYND_CQ_SIZE, 0x5c110001u, "log_cq_size above log_max_cq_sz")                        \
	X(SIM_SYND_CQ_CQE_SZ, 0x5c110002u, "cqe_sz is not 64 bytes")                               \
	X(SIM_SYND_CQ_NO_UMEM, 0x5c110003u, "cq_umem_valid is 0 (the sim needs umem CQs)")         \
	X(SIM_SYND_CQ_NO_DBR_UMEM, 0x5c110004u, "cqc.dbr_umem_valid is 0")                         \
	X(SIM_SYND_CQ_RANGE, 0x5c110005u, "CQE ring does not fit in its umem")                     \
	X(SIM_SYND_CQ_DBR_RANGE, 0x5c110006u, "CQ doorbell record outside its umem or unaligned")  \
	X(SIM_SYND_CQ_EQN, 0x5c110007u, "c_eqn_or_apu_element is not EQ 0")                        \
	X(SIM_SYND_CQ_COLLAPSED, 0x5c110008u, "collapsed CQs (cqc.cc) not supported")              \
	X(SIM_SYND_RMP_STATE, 0x5c120001u, "rmpc.state is not RDY")                                \
	X(SIM_SYND_RMP_NOT_CYCLIC, 0x5c120002u, "wq.wq_type is not cyclic")                        \
	X(SIM_SYND_RMP_NOT_BASIC, 0x5c120003u, "rmpc.basic_cyclic_rcv_wqe is 0")                   \
	X(SIM_SYND_RMP_SIZE, 0x5c120004u, "log_wq_sz above log_max_srq_sz")                        \
	X(SIM_SYND_RMP_STRIDE, 0x5c120005u, "log_wq_stride below 16 B or above max_wqe_sz_rq")     \
	X(SIM_SYND_RMP_NO_UMEM, 0x5c120006u, "wq.wq_umem_valid is 0")                              \
	X(SIM_SYND_RMP_NO_DBR_UMEM, 0x5c120007u, "wq.dbr_umem_valid is 0")                         \
	X(SIM_SYND_RMP_RANGE, 0x5c120008u, "SRQ ring does not fit in its umem")                    \
	X(SIM_SYND_RMP_DBR_RANGE, 0x5c120009u, "SRQ doorbell record outside its umem or unaligned")\
	X(SIM_SYND_RMP_SIGNATURE, 0x5c12000au, "wq_signature not supported")                       \
	X(SIM_SYND_DCT_PORT, 0x5c130001u, "dctc.port is not 1")                                    \
	X(SIM_SYND_DCT_MTU, 0x5c130002u, "dctc.mtu not 256..4096")                                 \
	X(SIM_SYND_DCT_GID_INDEX, 0x5c130003u, "dctc.my_addr_index beyond the GID table")          \
	X(SIM_SYND_MKEY_ACCESS_MODE, 0x5c140001u, "mkc access mode is not MTT")                    \
	X(SIM_SYND_MKEY_NO_UMEM, 0x5c140002u, "mkey_umem_valid is 0 (the sim needs umem MKEYs)")   \
	X(SIM_SYND_MKEY_RANGE, 0x5c140003u, "mkey_umem_offset + len beyond the umem")              \
	X(SIM_SYND_MKEY_LEN64, 0x5c140004u, "mkc.length64 not supported")                          \
	X(SIM_SYND_MKEY_FREE, 0x5c140005u, "mkc.free set: free MKEYs not supported")               \
	X(SIM_SYND_MKEY_QPN, 0x5c140006u, "mkc.qpn is not 0xffffff")                               \
	X(SIM_SYND_MKEY_UMR, 0x5c140007u, "mkc.umr_en not supported")                              \
	X(SIM_SYND_MKEY_PAGE_SIZE, 0x5c140008u, "mkc.log_page_size below the 4 KiB adapter page")  \
	X(SIM_SYND_MKEY_XLT_SIZE, 0x5c140009u,                                                     \
	  "mkc.translations_octword_size does not cover len at log_page_size")                     \
	X(SIM_SYND_CAP_TYPE, 0x5c150001u, "QUERY_HCA_CAP capability type not supported")

enum sim_syndrome {
#define SIM_SYND_ENUM_(name, value, what) name = value,
	SIM_SYNDROMES(SIM_SYND_ENUM_)
#undef SIM_SYND_ENUM_
};

/* Name and description of a syndrome ("SIM_SYND_NO_PD: no such PD"), or NULL. */
const char *sim_syndrome_name(uint32_t syndrome);
const char *sim_syndrome_str(uint32_t syndrome);

/* One command being executed (sim_cmd.c validates, a handler executes). */
struct sim_cmd {
	struct sim_dev *dev;
	const void *in;    /* inlen >= the command's input size, reserved bits zero */
	void *out;         /* zeroed, outlen >= the command's output size */
	uint32_t obj_id;   /* handler: number of the object it created */
	uint32_t syndrome; /* handler: SIM_SYND_* when it returns a bad status */
};

/* A handler returns KR_CMD_STAT_*; a bad status must leave every table unchanged. */
static inline uint8_t sim_cmd_fail(struct sim_cmd *c, uint8_t status, uint32_t syndrome)
{
	c->syndrome = syndrome;
	return status;
}

uint8_t sim_cmd_query_hca_cap(struct sim_cmd *c); /* sim_cmd_mem.c */
uint8_t sim_cmd_alloc_pd(struct sim_cmd *c);
uint8_t sim_cmd_dealloc_pd(struct sim_cmd *c);
uint8_t sim_cmd_create_mkey(struct sim_cmd *c);
uint8_t sim_cmd_destroy_mkey(struct sim_cmd *c);
uint8_t sim_cmd_create_cq(struct sim_cmd *c); /* sim_cmd_cq.c */
uint8_t sim_cmd_destroy_cq(struct sim_cmd *c);
uint8_t sim_cmd_query_cq(struct sim_cmd *c);
uint8_t sim_cmd_create_qp(struct sim_cmd *c); /* sim_cmd_qp.c */
uint8_t sim_cmd_destroy_qp(struct sim_cmd *c);
uint8_t sim_cmd_modify_qp(struct sim_cmd *c); /* RST2INIT, INIT2RTR, RTR2RTS, 2ERR, 2RST */
uint8_t sim_cmd_query_qp(struct sim_cmd *c);
uint8_t sim_cmd_create_dct(struct sim_cmd *c); /* sim_cmd_dct.c */
uint8_t sim_cmd_destroy_dct(struct sim_cmd *c);
uint8_t sim_cmd_drain_dct(struct sim_cmd *c);
uint8_t sim_cmd_query_dct(struct sim_cmd *c);
uint8_t sim_cmd_create_rmp(struct sim_cmd *c);
uint8_t sim_cmd_destroy_rmp(struct sim_cmd *c);
uint8_t sim_cmd_query_rmp(struct sim_cmd *c);

/* Table lookups by PRM number: the entry if it is in use, else NULL. sh->lock held. */
static inline struct sim_pd *sim_pd_get(struct sim_shared *sh, uint32_t pdn)
{
	uint32_t i;

	return sim_num_to_idx(pdn, SIM_MAX_PD, &i) && sh->pd[i].in_use ? &sh->pd[i] : NULL;
}

static inline struct sim_uar *sim_uar_get(struct sim_shared *sh, uint32_t page_id)
{
	uint32_t i;

	return sim_num_to_idx(page_id, SIM_MAX_UAR, &i) && sh->uar[i].in_use ? &sh->uar[i] : NULL;
}

static inline struct sim_umem *sim_umem_get(struct sim_shared *sh, uint32_t id)
{
	uint32_t i;

	return sim_num_to_idx(id, SIM_MAX_UMEM, &i) && sh->umem[i].in_use ? &sh->umem[i] : NULL;
}

static inline struct sim_cq *sim_cq_get(struct sim_shared *sh, uint32_t cqn)
{
	uint32_t i;

	return sim_num_to_idx(cqn, SIM_MAX_CQ, &i) && sh->cq[i].in_use ? &sh->cq[i] : NULL;
}

static inline struct sim_srq *sim_srq_get(struct sim_shared *sh, uint32_t srqn)
{
	uint32_t i;

	return sim_num_to_idx(srqn, SIM_MAX_SRQ, &i) && sh->srq[i].in_use ? &sh->srq[i] : NULL;
}

static inline struct sim_mkey *sim_mkey_get(struct sim_shared *sh, uint32_t mkey_index)
{
	uint32_t i;

	return sim_num_to_idx(mkey_index, SIM_MAX_MKEY, &i) && sh->mkey[i].in_use ? &sh->mkey[i]
										    : NULL;
}

static inline struct sim_qp *sim_qp_get(struct sim_shared *sh, uint32_t qpn)
{
	uint32_t i;

	return sim_qpn_to_idx(qpn, &i) && sh->qp[i].in_use ? &sh->qp[i] : NULL;
}

static inline struct sim_dct *sim_dct_get(struct sim_shared *sh, uint32_t dctn)
{
	uint32_t i;

	return sim_dctn_to_idx(dctn, &i) && sh->dct[i].in_use ? &sh->dct[i] : NULL;
}

/* [off, off + len) inside [0, size), without overflow. */
static inline bool sim_range_fits(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* ---- the firmware cost model (sim_cost.c, sim_cost_profiles.c) ---- */

/* A named set of latencies: cfg.cmd_ns and the wire, filled by profile=<name>. */
struct sim_cost_profile {
	const char *name;
	uint64_t cmd_ns[SIM_COST_NCMDS];
	uint64_t wire_latency_ns;
	uint64_t wire_bps;
};

/* The profile called name ("connectx4"), or NULL. */
const struct sim_cost_profile *sim_cost_profile_find(const char *name);
/* "create_qp" for SIM_COST_CREATE_QP (the <command> of cmd_<command>_us), NULL past the end. */
const char *sim_cost_cmd_name(enum sim_cost_cmd c);
/* The cost class of a firmware opcode; SIM_COST_NCMDS for none. */
enum sim_cost_cmd sim_cost_cmd_of(uint16_t opcode);
/* Spend the firmware time of command c (a real sleep). No sim lock held. */
void sim_cost_charge(const struct sim_config *cfg, enum sim_cost_cmd c);
/* The same with sh->lock held: the lock is released for the sleep, so the
 * engine and other commands run meanwhile, and taken again. */
void sim_cost_charge_locked(struct sim_dev *dev, enum sim_cost_cmd c);

/* ---- the devx backends (sim_device.c: a host opened here; sim_view.c: a job's) ---- */

#define SIM_PREFIX "sim:" /* the device names the sim serves: "sim:<host>[,options]" */
/* A UAR page travels as its own memfd, is memory (not MMIO), a ring in
 * another process wakes the engine only through a page exported to it, and
 * the engine runs on the host's CPUs. */
#define SIM_BACKEND_CAPS (KR_DEVX_BE_UAR_FD | KR_DEVX_BE_WAKE_PAGE | KR_DEVX_BE_HOST_CPU)
/* What a program that opens sim hosts adds (kr_devx_backend_add). */
extern const struct kr_devx_backend kr_sim_backend;
/* What a job adds: views of a keeper's host only (sim_view.c, no engine). */
extern const struct kr_devx_backend kr_sim_view_backend;
/* Is ctx a host opened in this process (not a job's view, not another backend's)? */
static inline bool sim_is_host(const struct kr_devx_ctx *ctx)
{
	return ctx->backend == &kr_sim_backend;
}
/* kr_devx_import of a sim host: sim_attach_fd (ref unused: the page says which it is). */
int sim_view_import(const char *name, int fd, const struct kr_devx_uar_ref *ref,
		    struct kr_devx_ctx **ctx);

/* ---- sim_view.c: doorbell stores, a job's doorbell-only view ---- */

/* uar over page b of ctx, rung at its first register. */
void sim_uar_fill(struct kr_devx_uar *uar, struct kr_devx_ctx *ctx, uint32_t page_id,
		  struct sim_bell *b);
/* The same, allocated: a view's page, or one of the opener's. 0 or -ENOMEM. */
int sim_uar_new(struct kr_devx_ctx *ctx, uint32_t page_id, struct sim_bell *b,
		struct kr_devx_uar **uar);

/* ---- sim_event.c: completion events ---- */

/* ops->event_ch_open, _close, _subscribe_fd and ->cq_doorbell of an opened host. */
int sim_event_ch_open(struct kr_devx_ctx *ctx, void **priv);
void sim_event_ch_close(struct kr_devx_ctx *ctx, void *priv);
int sim_event_subscribe_fd(struct kr_devx_ctx *ctx, void *priv, struct kr_devx_obj *obj,
			   uint16_t event_num, int fd);
void sim_cq_doorbell(struct kr_devx_uar *uar, uint64_t val);
/* sh->lock held: CQ idx got a CQE (the engine); an armed CQ raises its event. */
void sim_event_cqe(struct sim_dev *dev, uint32_t idx);
/* sh->lock held: CQ idx was destroyed; its subscription ends. */
void sim_event_cq_gone(struct sim_dev *dev, uint32_t idx);
/* At close: every subscription ends. */
void sim_event_release(struct sim_dev *dev);

/* ---- sim_bell.c: UAR pages ---- */

/* ops->alloc_uar / ops->free_uar of an opened host. */
int sim_alloc_uar(struct kr_devx_ctx *ctx, uint32_t flags, struct kr_devx_uar **uar);
void sim_free_uar(struct kr_devx_uar *uar);
/* Unmap and close every UAR page of dev (at close, the engine stopped). */
void sim_bell_release(struct sim_dev *dev);
/* The memfd of an allocated UAR page (owned by the host, not dup'ed); the
 * engine sleeps on its seq word. -ENOSPC past SIM_MAX_WAKE pages. */
int sim_uar_export(struct kr_devx_uar *uar);
/* ops->uar_export: the same as kr_devx_uar_export says it. */
int sim_uar_export_fd(struct kr_devx_uar *uar, int *fd, struct kr_devx_uar_ref *ref);
/* A doorbell-only view of a host from one UAR page's memfd (taken over on success). */
int sim_attach_fd(int fd, const char *name, struct kr_devx_ctx **ctx);
/* ops->uar_import of an opened host: its UAR page_id (a view's is sim_view.c's). */
int sim_uar_import(struct kr_devx_ctx *ctx, uint32_t page_id, struct kr_devx_uar **uar);
/* A page mapped at page by kmod-min, rung at reg_off with BlueFlame buffers of bf_size. */
int sim_uar_wrap(struct kr_devx_ctx *ctx, uint32_t page_id, void *page, uint32_t reg_off,
		 uint32_t bf_size, struct kr_devx_uar **uar);

#endif /* KR_SIM_H */
