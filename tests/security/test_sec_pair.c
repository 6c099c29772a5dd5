/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_pair: forged pairing messages (keeper_pair.c) change nothing. On one
 * node, root's launch A holds tenant 0; an attacker of uid 65534 (a launch
 * of its own, tenant 1) sends raw SENDs from a DCI it leases:
 *   - a well-formed KR_PAIR_REQ naming A's launch, at A's DC target with its
 *     own DC key: the target drops it (a key violation), none of A's RC
 *     slots moves;
 *   - at its own tenant's DC target, every malformed or stale message: 71
 *     and 73 bytes, a bad magic (these three are counted as stray SENDs),
 *     another version, A's launch tag, a request with QPN 0 or a DCT number
 *     of 0 or past 24 bits, answers naming a slot, generation or tenant that
 *     waits for nothing, an UNPAIR of nothing, an unknown type: every RC slot
 *     of both tenants stays free and parked;
 * then the keeper still pairs the attacker's own RC slot with its node (link
 * up) and takes it back, and A's bytes are unchanged.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "sec_fixture.h"

#define LEN    256u
#define MARKER 0x5a

static struct kp_keeper K;

/* A SEND of len bytes of m (inline) from DCI lease l to av; its completion status. */
static int raw_send(struct kr_ctx *ctx, const struct kr_lease *l, const struct kr_devx_dc_av *av,
		    const void *m, uint32_t len)
{
	struct kr_devx_sge sge = {.addr = (uintptr_t)m, .length = len};
	struct kr_devx_wr wr = {.opcode = KR_WR_SEND,
				.flags = KR_WR_SIGNALED | KR_WR_INLINE,
				.sge = &sge,
				.num_sge = 1,
				.av = av};

	return kp_dci_post(ctx, l, &wr);
}

/* Every RC slot of tenant t free and parked. */
static bool rc_all_parked(const struct kr_ctx *ctx, uint32_t t)
{
	for (uint32_t i = 0; i < ctx->seg->rc_spares; i++) {
		const struct kr_pool_slot *s = kr_seg_rc(ctx->seg, t, i);

		if (s->state != KR_SLOT_EMPTY &&
		    (s->state != KR_SLOT_FREE || s->link != KR_LINK_NONE))
			return false;
	}
	return true;
}

static struct kr_pair_msg good_msg(const struct kr_ctx *ctx, uint16_t type, uint64_t tag)
{
	struct kr_pair_msg m = {.magic = KR_PAIR_MAGIC,
				.version = KR_PAIR_VERSION,
				.type = type,
				.launch_tag = tag,
				.cookie = 1ull << 32 | (uint64_t)ctx->tenant << 16,
				.src_node = 1,
				.src_dctn = ctx->zone->dctn,
				.src_addr = ctx->zone->port.addr,
				.src_qpn = 0x4242,
				.psn = 7};

	return m;
}

static int attacker(void *arg)
{
	const struct sec_lent *a = arg;
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	struct kr_devx_dc_av own, at_a;
	struct kr_pair_msg m, bad[12];
	uint8_t raw[80] = {0};
	uint64_t strays0;
	struct kr_lease l, rc;
	int n = 0, link = KR_LINK_PAIRING;

	SEC_EXPECT(ctx != NULL);
	SEC_EXPECT(ctx->tenant == 1);
	SEC_EXPECT(kr_job_tenant_av(ctx, &own) == 0);
	at_a = own;
	at_a.dctn = a->dctn; /* A's target, the attacker's own key */
	kr_devx_dc_av_path(&at_a, &ctx->zone->port, &ctx->zone->port.addr, ctx->zone->dctn,
			   at_a.dctn);
	SEC_EXPECT(kp_lease_wait(ctx, KR_LEASE_DCI, &l, 10000) == 0);

	/* A's target, a request in A's name: dropped for its key (the DCI errs) */
	m = good_msg(ctx, KR_PAIR_REQ, sec_launch()->tag);
	SEC_EXPECT(raw_send(ctx, &l, &at_a, &m, sizeof(m)) == KR_WC_RETRY_EXC_ERR);
	kr_lease_free(ctx, &l);
	SEC_EXPECT(kp_lease_wait(ctx, KR_LEASE_DCI, &l, 10000) == 0);

	/* its own target: every malformed or stale message */
	strays0 = kr_seg_tenant(ctx->seg, ctx->tenant)->dct_recvs;
	memcpy(raw, &m, sizeof(m));
	SEC_EXPECT(raw_send(ctx, &l, &own, raw, sizeof(m) - 1) == KR_WC_SUCCESS);
	SEC_EXPECT(raw_send(ctx, &l, &own, raw, sizeof(m) + 1) == KR_WC_SUCCESS);
	bad[n] = good_msg(ctx, KR_PAIR_REQ, ctx->launch.tag);
	bad[n++].magic ^= 1;
	bad[n] = good_msg(ctx, KR_PAIR_REQ, ctx->launch.tag);
	bad[n++].version = KR_PAIR_VERSION + 1;
	bad[n++] = good_msg(ctx, KR_PAIR_REQ, sec_launch()->tag); /* another launch's tag */
	bad[n] = good_msg(ctx, KR_PAIR_REQ, ctx->launch.tag);
	bad[n++].src_qpn = 0;
	bad[n] = good_msg(ctx, KR_PAIR_REQ, ctx->launch.tag);
	bad[n++].src_dctn = 0;
	bad[n] = good_msg(ctx, KR_PAIR_REQ, ctx->launch.tag);
	bad[n++].src_dctn = 1u << 24;
	bad[n++] = good_msg(ctx, KR_PAIR_ACK, ctx->launch.tag); /* slot 0 waits for nothing */
	bad[n] = good_msg(ctx, KR_PAIR_ACK, ctx->launch.tag);
	bad[n++].cookie = 1ull << 32 | 0 << 16; /* tenant 0's slot, at tenant 1 */
	bad[n] = good_msg(ctx, KR_PAIR_ACK, ctx->launch.tag);
	bad[n++].cookie = 1ull << 32 | (uint64_t)ctx->tenant << 16 | 999; /* no such slot */
	bad[n++] = good_msg(ctx, KR_PAIR_NAK, ctx->launch.tag);
	bad[n++] = good_msg(ctx, KR_PAIR_UNPAIR, ctx->launch.tag);
	bad[n++] = good_msg(ctx, 99, ctx->launch.tag);
	for (int i = 0; i < n; i++)
		SEC_EXPECT(raw_send(ctx, &l, &own, &bad[i], sizeof(bad[i])) == KR_WC_SUCCESS);
	kr_lease_free(ctx, &l);
	usleep(200 * 1000); /* the keeper reads its targets' CQs every 10 ms */
	SEC_EXPECT(rc_all_parked(ctx, 0));
	SEC_EXPECT(rc_all_parked(ctx, 1));
	/* 71 and 73 bytes and the bad magic are stray SENDs, not pairing messages */
	SEC_EXPECT(kr_seg_tenant(ctx->seg, ctx->tenant)->dct_recvs - strays0 == 3);
	printf("attacker: a request in A's name at A's target dropped; %d malformed or stale "
	       "messages at its own changed nothing\n",
	       n + 2);

	/* the keeper still pairs: the attacker's own slot with its node, up, then back */
	SEC_EXPECT(kr_job_rc_pair(ctx, kr_dct_self_node(ctx), &own, &rc) == 0);
	for (double t0 = kp_now_ms(); link == KR_LINK_PAIRING && kp_now_ms() - t0 < 20000;
	     usleep(1000))
		link = kr_job_rc_link(ctx, &rc);
	SEC_EXPECT(link == KR_LINK_UP);
	SEC_EXPECT(kr_lease_free(ctx, &rc) == 0);
	for (double t0 = kp_now_ms(); !rc_all_parked(ctx, 1) && kp_now_ms() - t0 < 10000;)
		usleep(10000);
	SEC_EXPECT(rc_all_parked(ctx, 1));
	printf("attacker: its own pair still comes up, and goes back\n");
	fflush(stdout);
	kr_detach(ctx);
	return 0;
}

int main(void)
{
	const char *const args[] = {"--node-id",   "1",	 "--tenants", "2",     "--dcis",    "4",
				    "--rc-spares", "2",	 "--jobs",    "2",     "--heap-mb", "2",
				    "--hugepages", "48", "--group",   "65534", NULL};
	struct sec_lent a;
	long long v;
	int go;
	pid_t pid;

	sec_keeper_start(&K, args);
	pid = sec_lender_start(&K, LEN, MARKER, MARKER, &a, &go);
	CHECK_EQ(sec_as_nobody(attacker, &a), 0);
	/* tenant slot 0's (launch A's: the first slot bound) */
	v = sec_violations_wait(&K, 0, 1);
	CHECK(v >= 1);
	sec_lender_done(pid, go); /* A's bytes are unchanged */
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_pair");
}
