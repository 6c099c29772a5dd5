/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A packet run on the UDP receive thread (sim_engine_rx_direct) wakes the
 * host's engine only when it left the engine work. Two UDP hosts of this
 * process, an RC QP each; a kick shows as a step of the host's word
 * sh->db_seq (sim_engine_kick bumps it whether or not the engine sleeps).
 *   answers: B's engine asleep, A READs from B 20 times one after another;
 *            B's receive thread answers each, and B's word stays put (one
 *            step allowed: a timed-out engine pass that took the lock as a
 *            READ came queues it and kicks).
 *   answers on a wire with latency: the same with wire_latency_ns=3000 on
 *            both hosts: a packet due that soon leaves from the thread that
 *            sends it once due (sim_wire_out), so B's word stays put again.
 *   follow-up: B holds what it sends 200 ms (delay=1); A's QP may have one
 *            READ outstanding (log_sra_max 0); two READs with one doorbell:
 *            the second waits for the first's answer, which comes while A's
 *            engine sleeps with no timer due before it (ack timeout 4 s).
 *            A's receive thread must kick A's word for the second to go, and
 *            both complete with their bytes; B's receive thread, which
 *            leaves each answer held on a timer, must kick B's word for each.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"
#include "sim_mp.h"

#define MEM_LEN	  (64u << 10)
#define TMO_MS	  5000
#define N_ANSWERS 20
#define LATENCY	  ",wire_latency_ns=3000"

enum phase { ANSWERS, ANSWERS_LATENCY, FOLLOW_UP };

static struct sim_shared *sh_of(struct kr_fx_host *h)
{
	return sim_dev_of(h->ctx)->sh;
}

/* Wait (5 s at most) until h's engine sleeps on its futex. */
static void wait_asleep(struct kr_fx_host *h)
{
	for (int i = 0; i < TMO_MS && !atomic_load(&sh_of(h)->engine_sleeping); i++)
		usleep(1000);
	if (!atomic_load(&sh_of(h)->engine_sleeping))
		KR_FAIL("%s: engine still awake after %d ms idle", sh_of(h)->name, TMO_MS);
}

static struct kr_devx_wr read_wr(struct kr_fx_host *a, struct kr_fx_host *b,
				 struct kr_devx_sge *sge, uint64_t id, size_t off)
{
	struct kr_devx_wr wr = {.wr_id = id,
				.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = sge,
				.num_sge = 1,
				.remote_addr = (uint64_t)(uintptr_t)b->mem + off,
				.rkey = b->mr.rkey};

	*sge = kr_fx_sge(a, off, 8);
	return wr;
}

static void check_bytes(struct kr_fx_host *a, struct kr_fx_host *b, size_t off)
{
	if (memcmp((uint8_t *)a->mem + off, (uint8_t *)b->mem + off, 8))
		KR_FAIL("READ at %#zx: bytes differ from the peer's", off);
}

static void run(enum phase ph)
{
	const char *addrs[] = {"127.0.0.1", "127.0.0.2"};
	uint16_t port = mp_pick_port(addrs, 2);
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_conn c;
	struct kr_devx_sge s1, s2;
	struct kr_devx_wr w1, w2;
	uint32_t seq0, seq0_b, steps;
	const char *opt = "";
	char da[96], db[96];

	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.1 and 127.0.0.2");
	if (ph == ANSWERS_LATENCY)
		opt = LATENCY;
	snprintf(da, sizeof(da), "sim:wa@127.0.0.1:%u%s", port, opt);
	if (ph == FOLLOW_UP)
		opt = ",delay=1,delay_us=200000";
	snprintf(db, sizeof(db), "sim:wb@127.0.0.2:%u%s", port, opt);
	CHECK_OK(kr_fx_host_open(&a, da, MEM_LEN));
	CHECK_OK(kr_fx_host_open(&b, db, MEM_LEN));
	kr_fx_conn_default(&c);
	c.ack_timeout = 20; /* 4.3 s: no retransmission timer wakes A meanwhile */
	c.log_sra_max = 0;  /* one READ outstanding */
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, &c));
	for (size_t i = 0; i < 4096; i++)
		((uint8_t *)b.mem)[i] = (uint8_t)(i * 7 + 1);

	if (ph != FOLLOW_UP) {
		wait_asleep(&b);
		seq0 = atomic_load(&sh_of(&b)->db_seq);
		for (int i = 0; i < N_ANSWERS; i++) {
			w1 = read_wr(&a, &b, &s1, (uint64_t)i + 1, (size_t)i * 64);
			CHECK_EQ(kr_fx_post_wait(&a, &qa, &w1, TMO_MS), KR_WC_SUCCESS);
			check_bytes(&a, &b, (size_t)i * 64);
		}
		steps = atomic_load(&sh_of(&b)->db_seq) - seq0;
		printf("answers%s: %d READs answered on B's receive thread, B's engine kicked %u "
		       "times\n",
		       ph == ANSWERS_LATENCY ? " (wire latency 3 us)" : "", N_ANSWERS, steps);
		CHECK(steps <= 1);
	} else {
		struct kr_devx_wc wc;

		w1 = read_wr(&a, &b, &s1, 1, 0);
		w2 = read_wr(&a, &b, &s2, 2, 512);
		CHECK_OK(kr_devx_qp_post_send(&qa, &w1));
		CHECK_OK(kr_devx_qp_post_send(&qa, &w2));
		seq0_b = atomic_load(&sh_of(&b)->db_seq);
		kr_devx_qp_ring(&qa);
		wait_asleep(&a); /* the first READ is out; its answer is held 200 ms */
		seq0 = atomic_load(&sh_of(&a)->db_seq);
		if (kr_fx_poll_one(&a.scq, &wc, 0) != -ETIMEDOUT)
			KR_FAIL("a completion came before A's engine slept: B held nothing");
		kr_fx_expect_wc(&a.scq, 1, KR_WC_SUCCESS, qa.qpn, NULL);
		kr_fx_expect_wc(&a.scq, 2, KR_WC_SUCCESS, qa.qpn, NULL);
		check_bytes(&a, &b, 0);
		check_bytes(&a, &b, 512);
		steps = atomic_load(&sh_of(&a)->db_seq) - seq0;
		printf("follow-up: the first READ's answer kicked A's sleeping engine %u times; "
		       "the second READ went\n",
		       steps);
		CHECK(steps >= 1);
		steps = atomic_load(&sh_of(&b)->db_seq) - seq0_b;
		printf("follow-up: B's two held answers kicked B's engine %u times\n", steps);
		CHECK(steps >= 2);
	}
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
}

int main(void)
{
	run(ANSWERS);
	run(ANSWERS_LATENCY);
	run(FOLLOW_UP);
	KR_PASS("sim_rx_direct_wake");
}
