/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fault injection and the wire cost model on the packets a simulated host
 * sends, runtime faults (kill an engine, fail a QP) and the statistics query.
 *
 * sim_fault_on_send() runs on the sending engine's thread for every packet
 * (sim_wire.c, sim_udp.c). The wire cost first: with wire_bps the host's link
 * serialises packets one after another (a packet leaves when the link is free
 * and its bits are out), then wire_latency_ns. Then the faults, each drawn
 * from the host's own PRNG in a fixed order, the first that hits decides:
 *   drop, corrupt, duplicate, reorder (held SIM_FAULT_REORDER_NS, so the
 *   packets sent right after it overtake it), delay (held cfg.delay_ns).
 * The PRNG is xoshiro256** seeded by splitmix64 from cfg.seed mixed with the
 * host name: the same seed and the same packets give the same verdicts, two
 * hosts with one seed still draw differently.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"
#include "sim/sim.h"

#define SIM_FAULT_REORDER_NS 50000ull /* 50 us: a pass sends many packets in less */

/* RoCEv2 bytes on the wire besides the payload: Ethernet 14 + FCS 4, IPv4 20,
 * UDP 8, BTH 12, ICRC 4. */
#define SIM_WIRE_BASE_BYTES 62u

/* ---- PRNG ---- */

static uint64_t sim_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t sim_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t sim_fault_next(struct sim_engine *eng)
{
	uint64_t *s = eng->fault_rng;
	uint64_t result = sim_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = sim_rotl(s[3], 45);
	return result;
}

static void sim_fault_seed(struct sim_engine *eng)
{
	const struct sim_config *cfg = &eng->dev->cfg;
	uint64_t h = 14695981039346656037ull, x;

	for (const unsigned char *p = (const unsigned char *)cfg->name; *p; p++) {
		h ^= *p;
		h *= 1099511628211ull;
	}
	x = cfg->seed ^ h;
	for (int i = 0; i < 4; i++)
		eng->fault_rng[i] = sim_splitmix64(&x);
	eng->fault_rng_ready = true;
}

/* True with probability ppm / 1e6 (one draw when ppm != 0, none otherwise). */
static bool sim_fault_hit(struct sim_engine *eng, uint32_t ppm)
{
	if (!ppm)
		return false;
	return (sim_fault_next(eng) >> 11) % 1000000u < ppm;
}

/* ---- the wire cost ---- */

static uint32_t sim_pkt_wire_bytes(const struct sim_pkt *pkt)
{
	uint32_t mask = sim_op_mask(pkt->opcode), n = SIM_WIRE_BASE_BYTES + pkt->len;

	if (pkt->dc)
		n += 16; /* DC extended transport header: access key, DCT number */
	if (mask & SIM_OPM_RETH)
		n += 16;
	if (mask & SIM_OPM_ATMETH)
		n += 28;
	if (mask & SIM_OPM_AETH)
		n += 4;
	if (mask & SIM_OPM_ATMACK)
		n += 8;
	if (mask & SIM_OPM_IMM)
		n += 4;
	return n;
}

/* Nanoseconds from now until pkt arrives; moves the link's busy time forward. */
static uint64_t sim_fault_wire_ns(struct sim_engine *eng, const struct sim_pkt *pkt)
{
	const struct sim_config *cfg = &eng->dev->cfg;
	uint64_t queued = 0;

	if (cfg->wire_bps) {
		uint64_t bits = (uint64_t)sim_pkt_wire_bytes(pkt) * 8;
		uint64_t ser = (bits * 1000000000ull + cfg->wire_bps - 1) / cfg->wire_bps;
		uint64_t start = eng->wire_link_free > eng->now ? eng->wire_link_free : eng->now;

		eng->wire_link_free = start + ser;
		queued = eng->wire_link_free - eng->now;
	}
	return queued + cfg->wire_latency_ns;
}

/* sim_fault_on_send() - see sim.h. */
enum sim_fault_action sim_fault_on_send(struct sim_engine *eng, struct sim_pkt *pkt,
					uint64_t *delay_ns)
{
	const struct sim_config *cfg = &eng->dev->cfg;
	struct sim_shared *sh = eng->sh;

	*delay_ns = sim_fault_wire_ns(eng, pkt);
	if (!(cfg->drop_ppm | cfg->corrupt_ppm | cfg->dup_ppm | cfg->reorder_ppm | cfg->delay_ppm))
		return SIM_FAULT_PASS;
	if (!eng->fault_rng_ready)
		sim_fault_seed(eng);
	if (sim_fault_hit(eng, cfg->drop_ppm)) {
		SIM_STAT_INC(sh, fault_drops);
		return SIM_FAULT_DROP;
	}
	if (sim_fault_hit(eng, cfg->corrupt_ppm)) {
		SIM_STAT_INC(sh, fault_corrupts);
		return SIM_FAULT_CORRUPT;
	}
	if (sim_fault_hit(eng, cfg->dup_ppm)) {
		SIM_STAT_INC(sh, fault_dups);
		return SIM_FAULT_DUP;
	}
	if (sim_fault_hit(eng, cfg->reorder_ppm)) {
		SIM_STAT_INC(sh, fault_reorders);
		*delay_ns += SIM_FAULT_REORDER_NS;
		return SIM_FAULT_DELAY;
	}
	if (sim_fault_hit(eng, cfg->delay_ppm)) {
		SIM_STAT_INC(sh, fault_delays);
		*delay_ns += cfg->delay_ns;
		return SIM_FAULT_DELAY;
	}
	return SIM_FAULT_PASS;
}

/* ---- runtime faults ---- */

/* sim_fault_kill_engine() - see sim.h. */
int sim_fault_kill_engine(struct kr_devx_ctx *ctx)
{
	struct sim_dev *dev;

	if (!ctx || !sim_is_host(ctx))
		return -EINVAL;
	dev = sim_dev_of(ctx);
	if (!dev->eng || dev->eng->pid != getpid())
		return -ESRCH;
	KR_WARN("sim", "%s: engine killed (fault injection)", ctx->name);
	sim_engine_stop(dev);
	return 0;
}

/* sim_fault_qp_error() - see sim.h. */
int sim_fault_qp_error(struct kr_devx_ctx *ctx, uint32_t qpn)
{
	struct sim_dev *dev;
	struct sim_qp *q;
	int rc = 0;

	if (!ctx || !sim_is_host(ctx))
		return -EINVAL;
	dev = sim_dev_of(ctx);
	sim_lock(dev);
	q = sim_qp_get(dev->sh, qpn);
	if (!q) {
		rc = -ENOENT;
	} else if (q->state == KR_QPC_STATE_RST) {
		rc = -EINVAL;
	} else if (q->state != KR_QPC_STATE_ERR) {
		KR_INFO("sim", "%s: qp 0x%x forced to ERR (fault injection)", ctx->name, qpn);
		/* ERR first, as the engine does: whoever sees a flush CQE finds ERR */
		q->state = KR_QPC_STATE_ERR;
		sim_engine_qp_error(dev, qpn - SIM_QPN_BASE);
	}
	sim_unlock(dev);
	if (!rc)
		sim_engine_kick(dev->sh); /* the engine flushes what is posted later */
	return rc;
}

/* sim_stats_query() - see sim.h. */
int sim_stats_query(struct kr_devx_ctx *ctx, struct sim_stats *st)
{
	const struct sim_stats *s;

	if (!ctx || !sim_is_host(ctx) || !st)
		return -EINVAL;
	s = &sim_dev_of(ctx)->sh->stats;
#define SIM_STAT_COPY_(f) st->f = __atomic_load_n(&s->f, __ATOMIC_RELAXED)
	SIM_STAT_COPY_(pkts_tx);
	SIM_STAT_COPY_(pkts_rx);
	SIM_STAT_COPY_(retransmits);
	SIM_STAT_COPY_(timeouts);
	SIM_STAT_COPY_(retry_exc);
	SIM_STAT_COPY_(dup_requests);
	SIM_STAT_COPY_(seq_naks);
	SIM_STAT_COPY_(rnr_naks);
	SIM_STAT_COPY_(icrc_drops);
	SIM_STAT_COPY_(rx_malformed);
	SIM_STAT_COPY_(dc_stale_drops);
	SIM_STAT_COPY_(sq_rewrites);
	SIM_STAT_COPY_(l2_drops);
	SIM_STAT_COPY_(fault_drops);
	SIM_STAT_COPY_(fault_dups);
	SIM_STAT_COPY_(fault_reorders);
	SIM_STAT_COPY_(fault_delays);
	SIM_STAT_COPY_(fault_corrupts);
	SIM_STAT_COPY_(loopback);
	SIM_STAT_COPY_(icrc_ip_id);
#undef SIM_STAT_COPY_
	return 0;
}
