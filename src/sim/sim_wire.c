/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wire between simulated hosts. A host opened with an address
 * ("sim:h0@10.0.0.1") sends RoCEv2 over its UDP socket (sim_udp.c) to every
 * peer, in other processes and in this one alike. A host without one
 * delivers in process: a list of running engines by GID and a FIFO inbound
 * queue per engine. A packet for a GID no engine owns is dropped, as a switch
 * would; the requester's retransmission timer deals with it. Traffic between
 * two QPs of one host goes onto its own inbound queue, with an address or
 * without (a NIC's loopback: it never reaches the wire). The two
 * kinds of host do not mix: hosts with an address are not on the list, and
 * the only GID they answer is ::ffff:<address>.
 *
 * The list is the engines' own rather than the device registry's so that
 * delivery never waits on a lock the firmware side may hold while it stops
 * an engine: sim_wire_stop() runs before the engine thread is joined.
 *
 * Every packet first meets fault injection and the wire cost model
 * (sim_fault_on_send, sim_fault.c): it may be dropped, duplicated, corrupted
 * (the receiver's ICRC check drops it), or held back for a while (latency,
 * bandwidth, delay, reorder) in the sending engine's min-heap of held
 * packets, which each pass releases when due (sim_wire_pass); one due
 * within SIM_WIRE_SPIN_NS with none held before it is sent when due by the
 * thread that sends it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"
#include "sim/sim.h"

/*
 * A packet due this soon (the cost model's wire latency: 1 us for
 * connectx4) leaves from the thread that sends it, which waits until it is
 * due: holding it would need the engine's next pass, and waking a sleeping
 * engine costs more than this.
 */
#define SIM_WIRE_SPIN_NS 5000ull

static pthread_mutex_t sim_wire_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_engine *sim_wire_list;

static const uint32_t sim_op_masks[256] = {
    [SIM_OP_SEND_FIRST] = SIM_OPM_REQ | SIM_OPM_SEND | SIM_OPM_FIRST | SIM_OPM_PAYLOAD,
    [SIM_OP_SEND_MIDDLE] = SIM_OPM_REQ | SIM_OPM_SEND | SIM_OPM_PAYLOAD,
    [SIM_OP_SEND_LAST] = SIM_OPM_REQ | SIM_OPM_SEND | SIM_OPM_LAST | SIM_OPM_PAYLOAD,
    [SIM_OP_SEND_LAST_IMM] =
	SIM_OPM_REQ | SIM_OPM_SEND | SIM_OPM_LAST | SIM_OPM_IMM | SIM_OPM_PAYLOAD,
    [SIM_OP_SEND_ONLY] =
	SIM_OPM_REQ | SIM_OPM_SEND | SIM_OPM_FIRST | SIM_OPM_LAST | SIM_OPM_PAYLOAD,
    [SIM_OP_SEND_ONLY_IMM] =
	SIM_OPM_REQ | SIM_OPM_SEND | SIM_OPM_FIRST | SIM_OPM_LAST | SIM_OPM_IMM | SIM_OPM_PAYLOAD,
    [SIM_OP_WRITE_FIRST] =
	SIM_OPM_REQ | SIM_OPM_WRITE | SIM_OPM_FIRST | SIM_OPM_RETH | SIM_OPM_PAYLOAD,
    [SIM_OP_WRITE_MIDDLE] = SIM_OPM_REQ | SIM_OPM_WRITE | SIM_OPM_PAYLOAD,
    [SIM_OP_WRITE_LAST] = SIM_OPM_REQ | SIM_OPM_WRITE | SIM_OPM_LAST | SIM_OPM_PAYLOAD,
    [SIM_OP_WRITE_LAST_IMM] =
	SIM_OPM_REQ | SIM_OPM_WRITE | SIM_OPM_LAST | SIM_OPM_IMM | SIM_OPM_PAYLOAD,
    [SIM_OP_WRITE_ONLY] =
	SIM_OPM_REQ | SIM_OPM_WRITE | SIM_OPM_FIRST | SIM_OPM_LAST | SIM_OPM_RETH | SIM_OPM_PAYLOAD,
    [SIM_OP_WRITE_ONLY_IMM] = SIM_OPM_REQ | SIM_OPM_WRITE | SIM_OPM_FIRST | SIM_OPM_LAST |
			      SIM_OPM_RETH | SIM_OPM_IMM | SIM_OPM_PAYLOAD,
    [SIM_OP_READ_REQUEST] =
	SIM_OPM_REQ | SIM_OPM_READ | SIM_OPM_FIRST | SIM_OPM_LAST | SIM_OPM_RETH,
    [SIM_OP_READ_RESPONSE_FIRST] =
	SIM_OPM_RESP | SIM_OPM_READ | SIM_OPM_FIRST | SIM_OPM_AETH | SIM_OPM_PAYLOAD,
    [SIM_OP_READ_RESPONSE_MIDDLE] = SIM_OPM_RESP | SIM_OPM_READ | SIM_OPM_PAYLOAD,
    [SIM_OP_READ_RESPONSE_LAST] =
	SIM_OPM_RESP | SIM_OPM_READ | SIM_OPM_LAST | SIM_OPM_AETH | SIM_OPM_PAYLOAD,
    [SIM_OP_READ_RESPONSE_ONLY] =
	SIM_OPM_RESP | SIM_OPM_READ | SIM_OPM_FIRST | SIM_OPM_LAST | SIM_OPM_AETH | SIM_OPM_PAYLOAD,
    [SIM_OP_ACKNOWLEDGE] = SIM_OPM_RESP | SIM_OPM_FIRST | SIM_OPM_LAST | SIM_OPM_AETH,
    [SIM_OP_ATOMIC_ACKNOWLEDGE] = SIM_OPM_RESP | SIM_OPM_ATOMIC | SIM_OPM_FIRST | SIM_OPM_LAST |
				  SIM_OPM_AETH | SIM_OPM_ATMACK,
    [SIM_OP_COMPARE_SWAP] =
	SIM_OPM_REQ | SIM_OPM_ATOMIC | SIM_OPM_FIRST | SIM_OPM_LAST | SIM_OPM_ATMETH,
    [SIM_OP_FETCH_ADD] =
	SIM_OPM_REQ | SIM_OPM_ATOMIC | SIM_OPM_FIRST | SIM_OPM_LAST | SIM_OPM_ATMETH,
};

uint32_t sim_op_mask(uint8_t opcode)
{
	return sim_op_masks[opcode];
}

struct sim_pkt *sim_pkt_alloc(uint32_t payload_len)
{
	struct sim_pkt *pkt = malloc(sizeof(*pkt) + payload_len);

	if (!pkt)
		return NULL;
	memset(pkt, 0, sizeof(*pkt));
	pkt->len = payload_len;
	pkt->pkey = 0xffff;
	pkt->hop_limit = 64;
	return pkt;
}

void sim_pkt_free(struct sim_pkt *pkt)
{
	free(pkt);
}

/* ---- packets held back: a min-heap by (due, seq) ---- */

struct sim_wire_held_pkt {
	uint64_t due; /* CLOCK_MONOTONIC ns */
	uint64_t seq; /* FIFO among equal due times */
	struct sim_pkt *pkt;
	bool corrupt;
};

struct sim_wire_held {
	uint32_t n;
	uint32_t cap;
	uint64_t seq;
	struct sim_wire_held_pkt *heap;
};

static bool sim_held_before(const struct sim_wire_held_pkt *a, const struct sim_wire_held_pkt *b)
{
	return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static int sim_held_push(struct sim_engine *eng, struct sim_pkt *pkt, bool corrupt, uint64_t due)
{
	struct sim_wire_held *h = eng->held;
	struct sim_wire_held_pkt e;
	uint32_t i;

	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		eng->held = h;
	}
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? 2 * h->cap : 64;
		struct sim_wire_held_pkt *heap = realloc(h->heap, cap * sizeof(*heap));

		if (!heap)
			return -ENOMEM;
		h->heap = heap;
		h->cap = cap;
	}
	e = (struct sim_wire_held_pkt){.due = due, .seq = h->seq++, .pkt = pkt, .corrupt = corrupt};
	for (i = h->n++; i && sim_held_before(&e, &h->heap[(i - 1) / 2]); i = (i - 1) / 2)
		h->heap[i] = h->heap[(i - 1) / 2];
	h->heap[i] = e;
	return 0;
}

static struct sim_wire_held_pkt sim_held_pop(struct sim_wire_held *h)
{
	struct sim_wire_held_pkt top = h->heap[0], last = h->heap[--h->n];
	uint32_t i = 0, c;

	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && sim_held_before(&h->heap[c + 1], &h->heap[c]))
			c++;
		if (!sim_held_before(&h->heap[c], &last))
			break;
		h->heap[i] = h->heap[c];
		i = c;
	}
	if (h->n)
		h->heap[i] = last;
	return top;
}

/* ---- the in-process wire ---- */

static void sim_wire_attach(struct sim_engine *eng)
{
	pthread_mutex_lock(&sim_wire_lock);
	eng->wire_next = sim_wire_list;
	sim_wire_list = eng;
	pthread_mutex_unlock(&sim_wire_lock);
}

static void sim_wire_detach(struct sim_engine *eng)
{
	struct sim_engine **pp;

	pthread_mutex_lock(&sim_wire_lock);
	for (pp = &sim_wire_list; *pp; pp = &(*pp)->wire_next) {
		if (*pp == eng) {
			*pp = eng->wire_next;
			break;
		}
	}
	eng->wire_next = NULL;
	pthread_mutex_unlock(&sim_wire_lock);
}

static struct sim_engine *sim_wire_lookup_locked(const uint8_t gid[16])
{
	struct sim_engine *e;

	for (e = sim_wire_list; e; e = e->wire_next)
		if (!memcmp(e->gid, gid, 16))
			return e;
	return NULL;
}

/*
 * A corrupted packet between in-process hosts: the bytes it would have had on
 * the wire, one bit flipped after the ICRC, through the receiver's check.
 * True if the check rejects it (it always should).
 */
static bool sim_wire_icrc_rejects(const struct sim_pkt *pkt)
{
	uint8_t buf[SIM_ROCE_PKT_MAX];
	struct sim_roce_addr a = {.sport = SIM_ROCE_UDP_PORT, .dport = SIM_ROCE_UDP_PORT};
	struct sim_pkt *out = NULL;
	int n;

	sim_gid_to_ipv4(pkt->sgid, &a.saddr);
	sim_gid_to_ipv4(pkt->dgid, &a.daddr);
	n = sim_roce_build(pkt, &a, buf, sizeof(buf));
	if (n <= SIM_ROCE_ICRC_LEN)
		return true;
	sim_roce_corrupt(buf, (size_t)n);
	if (sim_roce_parse(buf, (size_t)n, &a, &out) == 0) {
		sim_pkt_free(out);
		return false;
	}
	return true;
}

static void sim_wire_deliver(struct sim_engine *eng, struct sim_pkt *pkt, bool corrupt)
{
	struct sim_engine *dst;

	pthread_mutex_lock(&sim_wire_lock);
	dst = sim_wire_lookup_locked(pkt->dgid);
	if (!dst) {
		pthread_mutex_unlock(&sim_wire_lock);
		KR_DP_LOG("sim", "wire: no host for the destination GID, packet dropped");
		eng->pkts_dropped++;
		sim_pkt_free(pkt);
		return;
	}
	if (corrupt && sim_wire_icrc_rejects(pkt)) {
		SIM_STAT_INC(dst->sh, icrc_drops);
		pthread_mutex_unlock(&sim_wire_lock);
		sim_pkt_free(pkt);
		return;
	}
	sim_engine_inq_append(dst, pkt, pkt);
	/* The packet is queued before db_seq moves: an engine that saw the old
	 * db_seq before sleeping is woken, one that sees the new one drains it. */
	sim_engine_kick(dst->sh); /* another host: its own packets loop back (sim_wire_loopback) */
	pthread_mutex_unlock(&sim_wire_lock);
}

/*
 * A host's packet to itself (a QP of this host to another of it: a job's
 * MetaServer lookup on the MetaServer's node, two ranks of one node): a NIC
 * loops it back inside, it never reaches the wire. Onto the host's own
 * inbound queue; this engine's next pass (it loops while it has work) takes
 * it: no socket, no thread woken.
 */
static void sim_wire_loopback(struct sim_engine *eng, struct sim_pkt *pkt, bool corrupt)
{
	SIM_STAT_INC(eng->sh, loopback);
	if (corrupt && sim_wire_icrc_rejects(pkt)) {
		SIM_STAT_INC(eng->sh, icrc_drops);
		sim_pkt_free(pkt);
		return;
	}
	sim_engine_inq_append(eng, pkt, pkt);
	eng->work = true;
}

/* ---- routing ---- */

/* Onto the wire now: the host's UDP socket, or the in-process list; to itself, looped back. */
static void sim_wire_xmit(struct sim_engine *eng, struct sim_pkt *pkt, bool corrupt)
{
	pkt->next = NULL;
	eng->pkts_tx++;
	if (!memcmp(pkt->dgid, eng->gid, sizeof(eng->gid))) {
		sim_wire_loopback(eng, pkt, corrupt);
		return;
	}
	if (eng->udp) {
		sim_udp_send(eng, pkt, corrupt);
		sim_pkt_free(pkt);
		return;
	}
	sim_wire_deliver(eng, pkt, corrupt);
}

static void sim_wire_out(struct sim_engine *eng, struct sim_pkt *pkt, bool corrupt,
			 uint64_t delay_ns)
{
	uint64_t due;

	if (!delay_ns) {
		sim_wire_xmit(eng, pkt, corrupt);
		return;
	}
	due = eng->now + delay_ns; /* the cost model counts from the pass's clock too */
	if (delay_ns <= SIM_WIRE_SPIN_NS && (!eng->held || !eng->held->n)) {
		/* nothing held to overtake: wait here rather than wake a thread */
		while (sim_now_ns() < due)
			;
		sim_wire_xmit(eng, pkt, corrupt);
		return;
	}
	if (sim_held_push(eng, pkt, corrupt, due)) {
		sim_wire_xmit(eng, pkt, corrupt); /* no memory to hold it: send it now */
		return;
	}
	sim_engine_timer(eng, due);
}

static struct sim_pkt *sim_pkt_clone(const struct sim_pkt *pkt)
{
	struct sim_pkt *c = malloc(sizeof(*c) + pkt->len);

	if (c) {
		memcpy(c, pkt, sizeof(*c) + pkt->len);
		c->next = NULL;
	}
	return c;
}

void sim_wire_send(struct sim_engine *eng, struct sim_pkt *pkt)
{
	enum sim_fault_action act;
	struct sim_pkt *dup = NULL;
	uint64_t delay = 0;

	pkt->next = NULL;
	SIM_STAT_INC(eng->sh, pkts_tx);
	if (!sim_l2_delivers(pkt)) { /* wrong MAC or a source the IP wire cannot carry */
		SIM_STAT_INC(eng->sh, l2_drops);
		sim_pkt_free(pkt);
		return;
	}
	if (sim_capture_on_send(eng, pkt))
		return;
	act = sim_fault_on_send(eng, pkt, &delay); /* counts its own verdicts */
	switch (act) {
	case SIM_FAULT_DROP:
		sim_pkt_free(pkt);
		return;
	case SIM_FAULT_DUP:
		dup = sim_pkt_clone(pkt);
		break;
	default:
		break;
	}
	sim_wire_out(eng, pkt, act == SIM_FAULT_CORRUPT, delay);
	if (dup)
		sim_wire_out(eng, dup, false, delay);
}

void sim_wire_pass(struct sim_engine *eng)
{
	struct sim_wire_held *h = eng->held;
	struct sim_pkt *replay;

	while ((replay = sim_capture_next_replay(eng))) {
		sim_wire_xmit(eng, replay, false);
		eng->work = true;
	}
	if (!h || !h->n)
		return;
	while (h->n && h->heap[0].due <= eng->now) {
		struct sim_wire_held_pkt e = sim_held_pop(h);

		sim_wire_xmit(eng, e.pkt, e.corrupt);
		eng->work = true;
	}
	if (h->n)
		sim_engine_timer(eng, h->heap[0].due);
}

void sim_wire_flush(struct sim_engine *eng)
{
	if (eng->udp)
		sim_udp_flush(eng);
}

/* ---- engine start and stop ---- */

int sim_wire_open(struct sim_engine *eng)
{
	if (eng->dev->cfg.has_addr)
		return sim_udp_open(eng, &eng->dev->cfg);
	sim_wire_attach(eng);
	return 0;
}

void sim_wire_stop(struct sim_engine *eng)
{
	if (eng->udp)
		sim_udp_stop(eng);
	else
		sim_wire_detach(eng);
}

void sim_wire_close(struct sim_engine *eng)
{
	struct sim_wire_held *h = eng->held;

	if (h) {
		while (h->n)
			sim_pkt_free(sim_held_pop(h).pkt);
		free(h->heap);
		free(h);
		eng->held = NULL;
	}
	if (eng->udp)
		sim_udp_close(eng);
}
