/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wire between the simulated hosts of this process: a list of running
 * engines by GID and a FIFO inbound queue per engine. A packet for a GID no
 * engine owns is dropped, as a switch would; the requester's retransmission
 * timer deals with it. Traffic between two QPs of one host takes the same
 * path (destination == source).
 *
 * The list is the engines' own rather than the device registry's so that
 * delivery never waits on a lock the firmware side may hold while it stops
 * an engine: sim_wire_detach() runs before the engine thread is joined.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kr_log.h"
#include "sim_engine.h"

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

void sim_wire_attach(struct sim_engine *eng)
{
	pthread_mutex_lock(&sim_wire_lock);
	eng->wire_next = sim_wire_list;
	sim_wire_list = eng;
	pthread_mutex_unlock(&sim_wire_lock);
}

void sim_wire_detach(struct sim_engine *eng)
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

void sim_wire_send(struct sim_engine *eng, struct sim_pkt *pkt)
{
	struct sim_engine *dst;

	pkt->next = NULL;
	eng->pkts_tx++;
	pthread_mutex_lock(&sim_wire_lock);
	dst = sim_wire_lookup_locked(pkt->dgid);
	if (!dst) {
		pthread_mutex_unlock(&sim_wire_lock);
		KR_DP_LOG("sim", "wire: no host for the destination GID, packet dropped");
		eng->pkts_dropped++;
		sim_pkt_free(pkt);
		return;
	}
	pthread_mutex_lock(&dst->inq_lock);
	if (dst->inq_tail)
		dst->inq_tail->next = pkt;
	else
		dst->inq_head = pkt;
	dst->inq_tail = pkt;
	pthread_mutex_unlock(&dst->inq_lock);
	/* The packet is queued before db_seq moves: an engine that saw the old
	 * db_seq before sleeping is woken, one that sees the new one drains it. */
	if (dst != eng)
		sim_engine_kick(dst->sh);
	pthread_mutex_unlock(&sim_wire_lock);
}
