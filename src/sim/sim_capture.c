/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture and replay of one packet: a test takes a packet a host sends off
 * the wire (or keeps a copy of it) and puts it back later, to build the
 * packet orders random faults reach only by chance: a late copy of a request
 * of an earlier DC connection, a READ response after its QP was reset, an
 * atomic retransmitted after its result was answered.
 *
 * Who runs what: the test's thread arms a capture and asks for replays; the
 * engine's thread captures (sim_capture_on_send, from sim_wire_send, before
 * fault injection) and sends the replays (sim_capture_next_replay, from
 * sim_wire_pass). cap->lock orders the two; the armed flag is read without
 * it on every packet, so a host nobody captures on pays one load.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"
#include "sim/sim.h"

#define SIM_CAP_SAME_(a, b) ((int)(a) == (int)(b))
_Static_assert(SIM_CAP_SAME_(SIM_CAP_WRITE_ONLY, SIM_OP_WRITE_ONLY) &&
		   SIM_CAP_SAME_(SIM_CAP_READ_REQUEST, SIM_OP_READ_REQUEST) &&
		   SIM_CAP_SAME_(SIM_CAP_READ_RESPONSE_ONLY, SIM_OP_READ_RESPONSE_ONLY) &&
		   SIM_CAP_SAME_(SIM_CAP_ACKNOWLEDGE, SIM_OP_ACKNOWLEDGE) &&
		   SIM_CAP_SAME_(SIM_CAP_ATOMIC_ACKNOWLEDGE, SIM_OP_ATOMIC_ACKNOWLEDGE) &&
		   SIM_CAP_SAME_(SIM_CAP_COMPARE_SWAP, SIM_OP_COMPARE_SWAP) &&
		   SIM_CAP_SAME_(SIM_CAP_FETCH_ADD, SIM_OP_FETCH_ADD),
	       "capture opcodes are the BTH opcodes");

#define SIM_CAP_WAIT_NS 2000000000ull /* how long a replay waits for the engine */

struct sim_capture {
	pthread_mutex_t lock;
	bool armed; /* atomic: read unlocked on every packet */
	bool take;  /* SIM_CAPTURE_TAKE: the packet does not go out */
	uint8_t opcode;
	struct sim_pkt *pkt; /* the copy, once captured */
	uint32_t replays;    /* asked for, not sent yet */
};

static struct sim_pkt *sim_capture_clone(const struct sim_pkt *pkt)
{
	struct sim_pkt *c = sim_pkt_alloc(pkt->len);

	if (c) {
		memcpy(c, pkt, sizeof(*c) + pkt->len);
		c->next = NULL;
	}
	return c;
}

bool sim_capture_on_send(struct sim_engine *eng, struct sim_pkt *pkt)
{
	struct sim_capture *c = __atomic_load_n(&eng->capture, __ATOMIC_ACQUIRE);
	bool taken = false;

	if (!c || !__atomic_load_n(&c->armed, __ATOMIC_RELAXED))
		return false;
	pthread_mutex_lock(&c->lock);
	if (c->armed && pkt->opcode == c->opcode) {
		c->pkt = sim_capture_clone(pkt);
		if (c->pkt) {
			__atomic_store_n(&c->armed, false, __ATOMIC_RELAXED);
			taken = c->take;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (taken)
		sim_pkt_free(pkt);
	return taken;
}

struct sim_pkt *sim_capture_next_replay(struct sim_engine *eng)
{
	struct sim_capture *c = __atomic_load_n(&eng->capture, __ATOMIC_ACQUIRE);
	struct sim_pkt *pkt = NULL;

	if (!c)
		return NULL;
	pthread_mutex_lock(&c->lock);
	if (c->replays && c->pkt) {
		pkt = sim_capture_clone(c->pkt);
		if (pkt)
			c->replays--;
	}
	pthread_mutex_unlock(&c->lock);
	return pkt;
}

void sim_capture_free(struct sim_engine *eng)
{
	struct sim_capture *c = eng->capture;

	if (!c)
		return;
	sim_pkt_free(c->pkt);
	pthread_mutex_destroy(&c->lock);
	free(c);
	eng->capture = NULL;
}

/* The running engine of ctx, in this process; NULL if none. */
static struct sim_engine *sim_capture_engine(struct kr_devx_ctx *ctx)
{
	struct sim_dev *dev;

	if (!ctx || !sim_is_host(ctx))
		return NULL;
	dev = sim_dev_of(ctx);
	if (!dev->eng || dev->eng->pid != getpid())
		return NULL;
	return dev->eng;
}

/* sim_fault_capture() - see sim.h. */
int sim_fault_capture(struct kr_devx_ctx *ctx, uint8_t opcode, enum sim_capture_mode how)
{
	struct sim_engine *eng = sim_capture_engine(ctx);
	struct sim_capture *c;

	if (!ctx || !sim_is_host(ctx) || (how != SIM_CAPTURE_COPY && how != SIM_CAPTURE_TAKE) ||
	    !(sim_op_mask(opcode) & (SIM_OPM_REQ | SIM_OPM_RESP)))
		return -EINVAL;
	if (!eng)
		return -ESRCH;
	c = eng->capture;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		pthread_mutex_init(&c->lock, NULL);
		/* release: the initialised lock before the engine can see c */
		__atomic_store_n(&eng->capture, c, __ATOMIC_RELEASE);
	}
	pthread_mutex_lock(&c->lock);
	sim_pkt_free(c->pkt);
	c->pkt = NULL;
	c->replays = 0;
	c->opcode = opcode;
	c->take = how == SIM_CAPTURE_TAKE;
	__atomic_store_n(&c->armed, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* The armed capture of ctx's engine in *out; 0, -EINVAL, -ESRCH, -ENOENT. */
static int sim_capture_of(struct kr_devx_ctx *ctx, struct sim_capture **out)
{
	struct sim_engine *eng = sim_capture_engine(ctx);

	if (!ctx || !sim_is_host(ctx))
		return -EINVAL;
	if (!eng)
		return -ESRCH;
	*out = eng->capture;
	return *out ? 0 : -ENOENT;
}

/* sim_fault_captured() - see sim.h. */
int sim_fault_captured(struct kr_devx_ctx *ctx, uint32_t *psn)
{
	struct sim_capture *c;
	int rc = sim_capture_of(ctx, &c);

	if (rc)
		return rc;
	pthread_mutex_lock(&c->lock);
	if (c->pkt) {
		if (psn)
			*psn = c->pkt->psn;
		rc = 1;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* sim_fault_replay() - see sim.h. */
int sim_fault_replay(struct kr_devx_ctx *ctx)
{
	struct timespec ts = {.tv_nsec = 100000};
	struct sim_capture *c;
	uint64_t waited = 0;
	uint32_t left;
	int rc = sim_capture_of(ctx, &c);

	if (rc)
		return rc;
	pthread_mutex_lock(&c->lock);
	if (!c->pkt) {
		pthread_mutex_unlock(&c->lock);
		return -ENOENT;
	}
	c->replays++;
	pthread_mutex_unlock(&c->lock);
	sim_engine_kick(sim_dev_of(ctx)->sh);
	/* back once the engine put it on the wire, so what the caller posts next
	 * goes out after it */
	for (;;) {
		pthread_mutex_lock(&c->lock);
		left = c->replays;
		pthread_mutex_unlock(&c->lock);
		if (!left)
			return 0;
		if (waited >= SIM_CAP_WAIT_NS)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
		waited += (uint64_t)ts.tv_nsec;
	}
}
