/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/sim engine: private header of the data-path roles.
 *
 *   sim_engine.c  the engine thread of one simulated host: one pass over the
 *                 QPs and the inbound packets under sh->lock, timers, back-off
 *                 to a futex sleep on sh->db_seq and the UAR pages; QP reset/flush
 *   sim_req.c     requester: send WQEs from the SQ ring -> request packets
 *   sim_comp.c    completer: ACK/NAK/READ and atomic responses -> send CQEs
 *   sim_resp.c    responder: request packets -> memory, receives, ACK/NAK
 *   sim_recv.c    receive queues (RQ, SRQ): take, scatter, flush
 *   sim_cqe.c     CQE production into a CQ ring
 *   sim_wire.c    packets between simulated hosts: fault hook, held packets,
 *                 in process or over UDP
 *   sim_roce.c    RoCEv2 bytes of a packet: BTH .. ICRC, DC as ConnectX
 *   sim_udp.c     a host with an address: its UDP socket, receive thread
 *
 * Everything here is process-local, owned by the process that opened the
 * host (the one that runs its engine thread). The engine touches its state
 * only with sh->lock held, so the firmware side may call the reset/flush hooks
 * of sim.h under that lock. The only other lock is the inbound queue's mutex
 * (a leaf: nothing is taken while holding it); the wire's engine list lock
 * is taken with sh->lock held and is never held across anything but a queue
 * append. Lock order: sh->lock -> sim_wire list lock -> inbound queue lock.
 *
 * Transport rules follow the IBTA RC protocol as Linux rxe implements it:
 * one PSN per packet, a READ request consumes as many PSNs as it has
 * response packets, ACKs are cumulative, responses implicitly acknowledge
 * earlier SEND/WRITE packets, go-back-N retransmission from the oldest
 * unacknowledged PSN, RNR NAK with the responder's timer.
 */
#ifndef KR_SIM_ENGINE_H
#define KR_SIM_ENGINE_H

#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sim/sim.h"

/* ---- PSN arithmetic (24 bits) ---- */

#define SIM_PSN_MASK 0xffffffu

static inline uint32_t sim_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & SIM_PSN_MASK;
}

/* <0, 0, >0 as a is before, equal to or after b (modulo 2^24, window 2^23). */
static inline int32_t sim_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/* ---- the packet: a RoCEv2 packet's headers as fields ---- */

/* IBTA BTH opcodes, RC transport (bits 7:5 = 000). */
enum sim_bth_op {
	SIM_OP_SEND_FIRST = 0x00,
	SIM_OP_SEND_MIDDLE = 0x01,
	SIM_OP_SEND_LAST = 0x02,
	SIM_OP_SEND_LAST_IMM = 0x03,
	SIM_OP_SEND_ONLY = 0x04,
	SIM_OP_SEND_ONLY_IMM = 0x05,
	SIM_OP_WRITE_FIRST = 0x06,
	SIM_OP_WRITE_MIDDLE = 0x07,
	SIM_OP_WRITE_LAST = 0x08,
	SIM_OP_WRITE_LAST_IMM = 0x09,
	SIM_OP_WRITE_ONLY = 0x0a,
	SIM_OP_WRITE_ONLY_IMM = 0x0b,
	SIM_OP_READ_REQUEST = 0x0c,
	SIM_OP_READ_RESPONSE_FIRST = 0x0d,
	SIM_OP_READ_RESPONSE_MIDDLE = 0x0e,
	SIM_OP_READ_RESPONSE_LAST = 0x0f,
	SIM_OP_READ_RESPONSE_ONLY = 0x10,
	SIM_OP_ACKNOWLEDGE = 0x11,
	SIM_OP_ATOMIC_ACKNOWLEDGE = 0x12,
	SIM_OP_COMPARE_SWAP = 0x13,
	SIM_OP_FETCH_ADD = 0x14,
};

/* What an opcode carries and where it sits in a message (as rxe's opcode table). */
enum sim_op_mask {
	SIM_OPM_REQ = 1u << 0,	 /* request (to the responder) */
	SIM_OPM_RESP = 1u << 1,	 /* response (to the completer) */
	SIM_OPM_FIRST = 1u << 2, /* first or only packet of its message */
	SIM_OPM_LAST = 1u << 3,	 /* last or only packet of its message */
	SIM_OPM_SEND = 1u << 4,
	SIM_OPM_WRITE = 1u << 5,
	SIM_OPM_READ = 1u << 6,	  /* READ request or READ response */
	SIM_OPM_ATOMIC = 1u << 7, /* CAS/FAA request or atomic ACK */
	SIM_OPM_RETH = 1u << 8,
	SIM_OPM_ATMETH = 1u << 9,
	SIM_OPM_AETH = 1u << 10,
	SIM_OPM_ATMACK = 1u << 11,
	SIM_OPM_IMM = 1u << 12,
	SIM_OPM_PAYLOAD = 1u << 13,
};

/* Mask of an opcode, 0 when the opcode is not one the sim speaks. */
uint32_t sim_op_mask(uint8_t opcode);

/* AETH syndrome: bits 7:5 type, 4:0 credit count, RNR timer or NAK code. */
enum {
	SIM_AETH_TYPE_MASK = 0xe0,
	SIM_AETH_ACK = 0x00,
	SIM_AETH_RNR_NAK = 0x20,
	SIM_AETH_NAK = 0x60,
	SIM_AETH_ACK_NO_CREDIT = 0x1f, /* ACK, "invalid credit count" */
	SIM_NAK_PSN_SEQ = 0x60,
	SIM_NAK_INVALID_REQ = 0x61,
	SIM_NAK_REM_ACCESS = 0x62,
	SIM_NAK_REM_OP = 0x63,
};

#define SIM_ROCE_UDP_PORT 4791

/*
 * One packet as it travels between hosts. The fields are those of a RoCEv2
 * packet (IP addresses as GIDs, UDP source port, BTH, then the extension
 * headers the opcode calls for); the next step serialises them to UDP.
 * DC: the DCT number goes in bth dqpn, the DC access key and the DCI's
 * connection number in a DC extended header; the DCI's QPN in sqpn (RC
 * implies it from the connection, DC needs it to answer).
 */
struct sim_pkt {
	struct sim_pkt *next; /* inbound queue link */
	/* IP/UDP */
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint16_t udp_sport;
	uint16_t ip_id; /* received: the IPv4 identification its ICRC named (0: a sim host's) */
	uint8_t hop_limit;
	/* layer 2, checked by the sender's wire (sim_l2_delivers), not serialised */
	uint8_t dmac[6];
	uint8_t sgid_index;
	uint8_t tclass;
	/* BTH */
	uint8_t opcode; /* enum sim_bth_op */
	uint8_t se;	/* solicited event */
	uint8_t ackreq; /* A bit: the responder must acknowledge */
	uint16_t pkey;
	uint32_t dqpn; /* destination QPN, or DCT number */
	uint32_t psn;
	/* source QP (DETH position) */
	uint32_t sqpn;
	/* DC extended header */
	uint8_t dc; /* DC transport: dc_key and dc_conn valid */
	uint64_t dc_key;
	uint32_t dc_conn; /* DCI connection number: new at each (re)connect */
	uint32_t dc_conn_psn; /* the PSN that connection opened at */
	/* RETH */
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
	/* AtomicETH */
	uint64_t swap_add;
	uint64_t compare;
	/* AETH */
	uint8_t syndrome;
	uint32_t msn;
	/* AtomicAckETH */
	uint64_t orig;
	/* ImmDt, as sent (big-endian bytes) */
	uint32_t imm;
	uint32_t len; /* payload bytes */
	uint8_t payload[];
};

/* ---- requester state of one QP ---- */

/* A send WQE the requester took from the ring. */
struct sim_swqe {
	uint32_t idx;	/* sq counter of its first WQEBB (free-running) */
	uint32_t next;	/* sq counter after it */
	uint8_t opcode; /* MLX5_OPCODE_* */
	uint8_t fm_ce_se;
	uint8_t err_synd; /* != 0: complete with this error when at the head */
	uint8_t inl;	  /* payload inline at sge_off */
	uint32_t imm;	  /* raw, big-endian */
	uint32_t len;	  /* message bytes */
	uint32_t npkts;	  /* packets (SEND/WRITE) or response packets (READ) */
	uint32_t first_psn;
	uint32_t sent_pkts; /* highest packet count ever transmitted */
	uint32_t done_pkts; /* packets acknowledged, or READ responses placed */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add;
	uint64_t compare;
	uint32_t dctn; /* DCI: target */
	uint64_t dc_key;
	uint8_t rgid[16];
	uint8_t rmac[6];
	uint8_t sgid_index;
	uint16_t udp_sport;
	uint16_t nsge;	  /* data segments at sge_off in the shadow copy */
	uint16_t sge_off; /* bytes from the WQE start */
};

struct sim_req {
	uint32_t nslots;      /* sq_wqebb_cnt; 0 until the QP first reaches RTS */
	struct sim_swqe *wqe; /* by first WQEBB index & (nslots - 1) */
	uint8_t *shadow;      /* WQE copies, linear: (nslots + max WQEBBs) * 64 */
	uint32_t head;	      /* oldest WQE not completed (sh sq_ci) */
	uint32_t send;	      /* WQE being transmitted, head <= send <= fetch */
	uint32_t send_pkt;    /* its next packet */
	uint32_t fetch;	      /* next WQE to take from the ring */
	uint32_t n_rd_atomic; /* READ/atomic WQEs taken, not completed */
	uint64_t rung_seen;   /* its UAR page's ring count when the record was read, */
	uint16_t pi_rung;     /* and what the record said: fetch up to here */
	bool pi_rung_ok;
	bool blocked;	      /* a WQE that must fail was taken: take no more */
	bool read_gap;	      /* a READ response gap was NAKed by retransmission */
	uint8_t retry_left;
	uint8_t rnr_left;
	uint64_t rto_deadline; /* ns, 0 = not armed */
	uint64_t rnr_deadline; /* ns, 0 = not waiting */
	/* DCI: the connection in use, and the PSN it opened at */
	uint32_t dc_conn;
	uint32_t dc_conn_psn;
	uint32_t dctn;
	uint8_t rgid[16];
};

/* ---- responder state: one per RC QP, per DCI connection on a DCT ---- */

#define SIM_RECV_MAX_SGE (SIM_MAX_WQE_SZ_RQ / 16)
#define SIM_ATOMIC_CACHE 16 /* >= 1 << SIM_LOG_MAX_RA */

/* A receive WQE taken from an RQ or SRQ for the message in progress. */
struct sim_rwqe {
	uint32_t idx; /* receive counter it was taken at */
	uint16_t nsge;
	struct {
		uint64_t addr;
		uint32_t len;
		uint32_t lkey;
	} sge[SIM_RECV_MAX_SGE];
};

struct sim_resp {
	uint32_t epsn; /* DC; RC keeps it in sh->qp[].next_rcv_psn */
	uint32_t msn;
	bool nak_seq_sent; /* one sequence NAK until the expected PSN comes */
	uint8_t cur;	   /* message in progress: 0, SIM_OPM_SEND or _WRITE */
	bool has_rwqe;
	bool rwqe_srq; /* taken from the SRQ (else the QP's RQ) */
	struct sim_rwqe rwqe;
	uint32_t rcvd;	/* SEND bytes scattered so far */
	uint64_t wr_va; /* WRITE: next address, key, bytes left, total */
	uint32_t wr_rkey;
	uint32_t wr_resid;
	uint32_t wr_len;
	struct {
		uint32_t psn;
		bool valid;
		uint64_t orig;
	} atomic[SIM_ATOMIC_CACHE];
	uint32_t atomic_next;
	/* a READ response being streamed (long READs go out a burst per pass) */
	bool rd_active;
	uint64_t rd_va;
	uint32_t rd_rkey;
	uint32_t rd_left; /* bytes still to send */
	uint32_t rd_psn;  /* PSN of the next response packet */
	bool rd_first;	  /* the next response packet is the first */
	/* requests that arrived while streaming, processed in order after it */
	struct sim_pkt *hold_head;
	struct sim_pkt *hold_tail;
	struct sim_resp *pump_next; /* engine's list of streaming contexts */
	bool on_pump;
	/* whose context this is */
	bool is_dct;
	uint32_t obj_idx; /* QP index, or DCT index */
	/* DCT contexts */
	bool in_use;
	uint8_t sgid[16];
	uint32_t sqpn;
	uint32_t dc_conn;
	uint64_t last_use;
};

#define SIM_DCT_CTX  64 /* DCI connections a DCT serves at once (LRU beyond) */
#define SIM_DCT_GONE 64 /* connections evicted from the table, still remembered */

/* What a DCT remembers of a DCI connection it no longer serves. */
struct sim_dct_gone {
	bool valid;
	uint8_t sgid[16];
	uint32_t sqpn;
	uint32_t dc_conn;
	uint32_t epsn;
	uint64_t last_use;
};

struct sim_dct_ctx {
	struct sim_resp ctx[SIM_DCT_CTX];
	struct sim_dct_gone gone[SIM_DCT_GONE]; /* ring, oldest overwritten */
	uint32_t gone_next;
};

/* ---- the engine of one host ---- */

struct sim_engine {
	struct sim_dev *dev;
	struct sim_shared *sh;
	pthread_t thread;
	pid_t pid; /* process that runs the thread */
	_Atomic bool stop;
	bool started;
	/* inbound packets (the wire appends, the engine drains) */
	pthread_mutex_t inq_lock;
	struct sim_pkt *inq_head;
	struct sim_pkt *inq_tail;
	/* sim_wire's list of hosts */
	struct sim_engine *wire_next;
	/* sim_udp.c: the UDP socket of a host opened with an address, else NULL */
	struct sim_udp *udp;
	/* sim_wire.c: packets held back by the fault hook or the wire cost model */
	struct sim_wire_held *held;
	uint8_t gid[16];
	/* per pass */
	uint64_t now;		/* CLOCK_MONOTONIC ns */
	uint64_t next_deadline; /* earliest timer, UINT64_MAX if none */
	bool work;		/* this pass did something */
	bool req_left;		/* a completion left a send queue with work (sim_req_idle) */
	uint32_t tx_budget;	/* request packets this pass may still send */
	uint32_t qp_hi;		/* 1 + highest QP index ever reset (created) */
	uint32_t qp_next;	/* QP the next pass starts with (round robin) */
	uint32_t dc_conn_seq;
	struct sim_resp *pump_head; /* responder contexts streaming a READ */
	/* statistics */
	uint64_t pkts_tx;
	uint64_t pkts_rx;
	uint64_t pkts_dropped;
	/* state by object index */
	struct sim_req req[SIM_MAX_QP];
	struct sim_resp resp[SIM_MAX_QP];
	struct sim_dct_ctx *dct[SIM_MAX_DCT];
	/* sim_capture.c: a test's packet capture, NULL until armed */
	struct sim_capture *capture;
	/* sim_fault.c: when the host's link has serialised its last packet (ns) */
	uint64_t wire_link_free;
	/* sim_fault.c: per-host PRNG (xoshiro256**) from cfg.seed and the host name */
	uint64_t fault_rng[4];
	bool fault_rng_ready;
	/* what the engine sleeps on: sh->db_seq, then each exported UAR page's seq */
	struct futex_waitv wait[1 + SIM_MAX_WAKE];
	struct sim_bell *wait_bell[SIM_MAX_WAKE];
	uint32_t nwait;
	bool no_waitv; /* the kernel lacks futex_waitv: poll the pages */
};

/* ---- sim_engine.c ---- */
/* What a pass leaves its loop (copied under sh->lock). */
struct sim_engine_pass {
	uint64_t now;
	uint64_t deadline; /* earliest timer, UINT64_MAX if none */
	bool work;
};
uint64_t sim_now_ns(void);
/*
 * The receiving thread runs inbound packets (a list, oldest first) to
 * completion itself when no one holds the device lock, as a NIC answers a
 * READ without a scheduler in between: what they produce (responses, ACKs,
 * CQEs) leaves at once, and the engine is kicked for what follows. false:
 * the lock was busy and nothing was taken; queue them for the engine.
 */
bool sim_engine_rx_direct(struct sim_engine *eng, struct sim_pkt *list);
/* Append packets head..last (linked by next, last->next NULL) to eng's inbound queue. */
void sim_engine_inq_append(struct sim_engine *eng, struct sim_pkt *head, struct sim_pkt *last);
/* A timer of this pass: the engine sleeps no longer than deadline. */
void sim_engine_timer(struct sim_engine *eng, uint64_t deadline);
/* The engine moves a QP to ERR (it found an error); flushes its queues. */
void sim_engine_qp_fail(struct sim_engine *eng, uint32_t qpi);
/* Path MTU in bytes of a qpc/dctc mtu code. */
uint32_t sim_mtu_bytes(uint8_t mtu);
/* Pointer into a QP's doorbell record (index MLX5_RCV_DBR or MLX5_SND_DBR). */
volatile uint32_t *sim_qp_dbrec(struct sim_engine *eng, uint32_t qpi);

/* ---- sim_req.c ---- */
void sim_req_progress(struct sim_engine *eng, uint32_t qpi);
/*
 * Nothing on qpi's send queue waits for the engine: every WQE taken has
 * completed, none rung is left untaken, no RNR wait, no failed WQE.
 */
bool sim_req_idle(struct sim_engine *eng, uint32_t qpi);
/* Go back: transmit again from psn (a WQE taken and not completed). */
void sim_req_rewind(struct sim_engine *eng, uint32_t qpi, uint32_t psn);
void sim_req_flush(struct sim_engine *eng, uint32_t qpi);
/*
 * Move bytes between a WQE's local buffers (at message offset off) and data:
 * gather for SEND/WRITE, to_wqe for READ responses and atomic results.
 * Returns 0, or -EFAULT when a key or range no longer checks out.
 */
int sim_req_copy(struct sim_engine *eng, uint32_t qpi, const struct sim_swqe *w, uint32_t off,
		 void *data, uint32_t len, bool to_wqe);
/* The WQE taken at sq counter idx. */
static inline struct sim_swqe *sim_req_wqe(struct sim_req *r, uint32_t idx)
{
	return &r->wqe[idx & (r->nslots - 1)];
}
void sim_req_reset(struct sim_engine *eng, uint32_t qpi);
/*
 * A ConnectX reads a WQE from the ring again to send it again and keeps no
 * copy past its completion, so software must leave its WQEBBs alone until
 * the CQE. The sim sends from the copy it took; this checks that the ring
 * still holds the same bytes (at a completion, a flush and before a
 * retransmission) and counts (sq_rewrites) and logs a WQE rewritten early.
 */
void sim_req_check_ring(struct sim_engine *eng, uint32_t qpi, const struct sim_swqe *w);

/* ---- sim_comp.c ---- */
void sim_comp_rx(struct sim_engine *eng, uint32_t qpi, const struct sim_pkt *pkt);
/* Complete the head WQE with syndrome (0 = success) and advance the head. */
void sim_comp_head(struct sim_engine *eng, uint32_t qpi, uint8_t synd);
/* Timers of a QP: retransmission timeout and RNR wait. */
void sim_comp_timers(struct sim_engine *eng, uint32_t qpi);
/* Microseconds of an RNR timer code (IBTA table; 0 = 655.36 ms). */
uint32_t sim_rnr_usec(uint8_t code);
/* Retransmission timeout of ack_timeout in ns; 0 = infinite. */
uint64_t sim_rto_ns(uint8_t ack_timeout);

/* ---- sim_resp.c ---- */
/* A request packet (consumed: freed, or held until a streamed READ is out). */
void sim_resp_rx(struct sim_engine *eng, struct sim_pkt *pkt);
/* Continue the READ responses being streamed, then what waited behind them. */
void sim_resp_pump(struct sim_engine *eng);
/* Forget a context's state: stream, held packets, message in progress. */
void sim_resp_reset(struct sim_engine *eng, struct sim_resp *r);

/* ---- sim_recv.c ---- */
/*
 * Take the next receive WQE of an RQ (qpi) or SRQ (srqn != 0). Returns 0,
 * -EAGAIN when none is posted, -EINVAL when the queue is unusable.
 */
int sim_recv_take_rq(struct sim_engine *eng, uint32_t qpi, struct sim_rwqe *r);
int sim_recv_take_srq(struct sim_engine *eng, uint32_t srqn, struct sim_rwqe *r);
/* Copy len bytes to offset off of the WQE's SGEs: 0, -EFAULT (key), -EMSGSIZE. */
int sim_recv_scatter(struct sim_engine *eng, uint32_t pdn, const struct sim_rwqe *r, uint32_t off,
		     const void *data, uint32_t len);
/* A flush-error CQE for every receive WQE posted on a QP's RQ. */
void sim_recv_flush_rq(struct sim_engine *eng, uint32_t qpi);

/* ---- sim_cqe.c ---- */
/*
 * Write cqe (all bytes but op_own) at the CQ's producer index and publish it
 * with op_own = opcode << 4 | owner. Returns 0, -ENOENT (no such CQ),
 * -EFAULT (ring outside its umem), -ENOSPC (CQ full: counted as overrun).
 */
int sim_cqe_write(struct sim_engine *eng, uint32_t cqn, struct mlx5_cqe64 *cqe, uint8_t opcode);
/* Error CQE: opcode MLX5_CQE_REQ_ERR or MLX5_CQE_RESP_ERR. */
int sim_cqe_write_err(struct sim_engine *eng, uint32_t cqn, uint8_t opcode, uint8_t synd,
		      uint8_t wqe_op, uint32_t qpn, uint16_t wqe_counter, uint32_t user_index);

/* ---- sim_wire.c ---- */
struct sim_pkt *sim_pkt_alloc(uint32_t payload_len);
void sim_pkt_free(struct sim_pkt *pkt);
/*
 * Send pkt (consumed) to the host owning pkt->dgid: through the fault hook,
 * held back if it says so, then over UDP or in process; dropped if no host
 * owns the GID. Engine thread, sh->lock held.
 */
void sim_wire_send(struct sim_engine *eng, struct sim_pkt *pkt);

/* ---- the wire across processes (sim_roce.c, sim_udp.c, sim_wire.c) ---- */

/*
 * RoCEv2 bytes of a packet: the UDP payload, BTH first, ICRC last. RC packets
 * are the IBTA headers. DC requests take the form Wireshark's InfiniBand
 * dissector decodes as Mellanox DC (see sim_roce.c): RD opcodes, an 8-byte
 * BTH extension with the DC access key, RDETH (DCI connection number) and
 * DETH (DCI QPN) before RETH/AtomicETH/ImmDt. Responses to a DCI are RC
 * responses addressed to its QPN.
 */
enum {
	SIM_ROCE_BTH_LEN = 12,
	SIM_ROCE_DCEXT_LEN = 8, /* DC: the DC access key after the BTH */
	SIM_ROCE_RDETH_LEN = 4,
	SIM_ROCE_DETH_LEN = 8,
	SIM_ROCE_RETH_LEN = 16,
	SIM_ROCE_ATMETH_LEN = 28,
	SIM_ROCE_AETH_LEN = 4,
	SIM_ROCE_ATMACK_LEN = 8,
	SIM_ROCE_IMM_LEN = 4,
	SIM_ROCE_ICRC_LEN = 4,
	SIM_ROCE_HDR_MAX = 64,	     /* BTH + DC ext + RDETH + DETH + AtomicETH = 60 */
	SIM_ROCE_PAYLOAD_MAX = 4096, /* the largest path MTU */
	SIM_ROCE_PKT_MAX = SIM_ROCE_HDR_MAX + SIM_ROCE_PAYLOAD_MAX + 4 + SIM_ROCE_ICRC_LEN,
	SIM_BTH_TRANSPORT_MASK = 0xe0,
	SIM_BTH_TRANSPORT_RC = 0x00,
	SIM_BTH_TRANSPORT_RD = 0x40, /* DC requests, as ConnectX (see sim_roce.c) */
};

/* The IP and UDP fields of a packet: the ICRC covers them (addresses network order). */
struct sim_roce_addr {
	uint32_t saddr;
	uint32_t daddr;
	uint16_t sport; /* host order */
	uint16_t dport;
	uint16_t ip_id; /* IPv4 identification the ICRC covers: 0 from a sim host */
};

/* Bytes sim_roce_build() writes for pkt (headers, payload, pad, ICRC); 0: unknown opcode. */
size_t sim_roce_len(const struct sim_pkt *pkt);
/*
 * Serialise pkt for the UDP datagram a describes. Returns the length, or
 * -EINVAL (opcode the sim does not speak, payload above 4096), -EMSGSIZE
 * (cap too small).
 */
int sim_roce_build(const struct sim_pkt *pkt, const struct sim_roce_addr *a, uint8_t *buf,
		   size_t cap);
/*
 * Parse the payload of a UDP datagram a describes into a new packet (sgid and
 * dgid are the IPv4-mapped addresses). Returns 0 with *pktp set, -EBADMSG
 * (malformed: short, unknown opcode or transport, lengths that disagree with
 * the opcode), -EILSEQ (ICRC mismatch), -ENOMEM.
 */
int sim_roce_parse(const uint8_t *buf, size_t len, const struct sim_roce_addr *a,
		   struct sim_pkt **pktp);
/*
 * Flip one bit of a serialised packet of len bytes, after its ICRC: the last
 * payload byte, or the last header byte of a packet without payload. The
 * receiver's ICRC check fails on it (fault injection: corrupt).
 */
void sim_roce_corrupt(uint8_t *buf, size_t len);
/* ICRC (IBTA annex A17.8) of the len bytes at buf (BTH .. pad; len >= SIM_ROCE_BTH_LEN),
 * as sent: little-endian. */
uint32_t sim_roce_icrc(const struct sim_roce_addr *a, const uint8_t *buf, size_t len);
/* Update a reflected CRC-32 register over p (no pre or post inversion). */
uint32_t sim_crc32_update(uint32_t crc, const uint8_t *p, size_t len);
/*
 * sim_icrc_find_ip_id() - the IPv4 identification under which a datagram
 * whose ICRC is icrc_id0 under identification 0 has ICRC icrc_got, when the
 * CRC covered after_id bytes after the identification (sim_icrc_id.c).
 * True and *id, or false: no identification explains it.
 */
bool sim_icrc_find_ip_id(uint32_t icrc_id0, uint32_t icrc_got, uint64_t after_id, uint16_t *id);
/* ::ffff:a.b.c.d <-> a.b.c.d (network order). False if gid is not IPv4-mapped. */
bool sim_gid_to_ipv4(const uint8_t gid[16], uint32_t *addr);
/* sim_port.c: does pkt reach its peer at layer 2 (sent from the RoCE v2 IPv4 entry, to its MAC)? */
bool sim_l2_delivers(const struct sim_pkt *pkt);
void sim_gid_from_ipv4(uint32_t addr, uint8_t gid[16]);

/* ---- sim_udp.c: one UDP socket per host with an address ---- */
struct sim_udp;
/* Bind cfg->addr:cfg->udp_port, start the receive thread. 0 or -errno (-EADDRINUSE...). */
int sim_udp_open(struct sim_engine *eng, const struct sim_config *cfg);
/* Stop receiving (joins the receive thread); the socket stays for sends. */
void sim_udp_stop(struct sim_engine *eng);
/* Close the socket and free; after the engine thread is gone. */
void sim_udp_close(struct sim_engine *eng);
/* Queue pkt (not consumed) for the next flush; corrupt: flip a bit after the ICRC. */
void sim_udp_send(struct sim_engine *eng, const struct sim_pkt *pkt, bool corrupt);
/* Send what sim_udp_send() queued (engine thread, end of a pass). */
void sim_udp_flush(struct sim_engine *eng);

/* ---- sim_wire.c: the engine's side of the wire ---- */
/* Engine start: open the host's UDP socket, or join the in-process list. 0 or -errno. */
int sim_wire_open(struct sim_engine *eng);
/* Engine stop, before the thread is joined: nothing reaches the engine any more. */
void sim_wire_stop(struct sim_engine *eng);
/* Engine stop, after the join: free held packets, close the socket. */
void sim_wire_close(struct sim_engine *eng);
/* Start of a pass: send the held packets whose time has come, arm the timer. */
void sim_wire_pass(struct sim_engine *eng);

/* sim_capture.c: true if pkt was captured and taken off the wire (freed). */
bool sim_capture_on_send(struct sim_engine *eng, struct sim_pkt *pkt);
/* A copy of the captured packet to send now, if a replay is due; else NULL. */
struct sim_pkt *sim_capture_next_replay(struct sim_engine *eng);
void sim_capture_free(struct sim_engine *eng);
/* End of a pass: push out what the pass queued on the UDP socket. */
void sim_wire_flush(struct sim_engine *eng);

#endif /* KR_SIM_ENGINE_H */
