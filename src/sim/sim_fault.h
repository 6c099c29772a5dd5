/* SPDX-License-Identifier: BSD-3-Clause */
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
#ifndef KR_SIM_FAULT_H
#define KR_SIM_FAULT_H

#include <stdint.h>

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

#endif /* KR_SIM_FAULT_H */
