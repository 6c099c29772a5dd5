/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Doorbells from another process: the parent opens the simulated hosts and
 * builds an RC pair whose rings, doorbell records, CQs and memory are
 * MAP_SHARED; a forked child only writes WQEs and rings (no command), then
 * exits. The parent's CQs see the completions and the payload arrives.
 * A second child waits until the engine sleeps on its futex before it rings:
 * the wake-up crosses the process boundary and the WQE is still served.
 *
 * The child posts through the parent's kr_devx_qp, kept in shared memory with
 * its wr_id tables, so the parent's poller names the child's WQEs.
 */
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define MEM_LEN	 (128u << 10)
#define TMO_MS	 5000
#define SQ_SLOTS 256 /* the fixture's send queue */

struct shared_qp {
	struct kr_devx_qp qa;
	uint64_t wrid[SQ_SLOTS];
	uint32_t next[SQ_SLOTS];
};

static struct kr_fx_host A, B;

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 17 + i * 3 + (i >> 9));
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void expect_wc(struct kr_devx_cq *cq, uint64_t wr_id, enum kr_devx_wc_opcode op,
		      uint32_t qpn, struct kr_devx_wc *out)
{
	struct kr_devx_wc wc;

	kr_fx_expect_wc(cq, wr_id, KR_WC_SUCCESS, qpn, &wc);
	CHECK_EQ(wc.opcode, op);
	if (out)
		*out = wc;
}

/* Child, phase 1: two WRITEs (one unsignaled), a signaled WRITE and a SEND. */
static int child_post(struct kr_devx_qp *qa)
{
	struct kr_devx_sge s1 = kr_fx_sge(&A, 0x0000, 3000);
	struct kr_devx_sge s2 = kr_fx_sge(&A, 0x1000, 100);
	struct kr_devx_sge s3 = kr_fx_sge(&A, 0x2000, 64);
	struct kr_devx_sge s4 = kr_fx_sge(&A, 0x3000, 1200);
	uint64_t b = (uintptr_t)B.mem;
	struct kr_devx_wr wr[4] = {
	    {.wr_id = 0x1,
	     .opcode = KR_WR_RDMA_WRITE,
	     .flags = KR_WR_SIGNALED,
	     .sge = &s1,
	     .num_sge = 1,
	     .remote_addr = b + 0x0000,
	     .rkey = B.mr.rkey},
	    {.wr_id = 0x2,
	     .opcode = KR_WR_RDMA_WRITE,
	     .sge = &s2,
	     .num_sge = 1,
	     .remote_addr = b + 0x1000,
	     .rkey = B.mr.rkey},
	    {.wr_id = 0x3,
	     .opcode = KR_WR_RDMA_WRITE,
	     .flags = KR_WR_SIGNALED,
	     .sge = &s3,
	     .num_sge = 1,
	     .remote_addr = b + 0x2000,
	     .rkey = B.mr.rkey},
	    {.wr_id = 0x4, .opcode = KR_WR_SEND, .flags = KR_WR_SIGNALED, .sge = &s4, .num_sge = 1},
	};
	int i;

	for (i = 0; i < 4; i++)
		if (kr_devx_qp_post_send(qa, &wr[i]))
			return 3;
	kr_devx_qp_ring(qa);
	return 0;
}

/* Child, phase 2: once the engine sleeps, one WRITE and a doorbell. */
static int child_post_sleeping(struct kr_devx_qp *qa)
{
	struct sim_shared *sh = sim_dev_of(A.ctx)->sh;
	struct kr_devx_sge s = kr_fx_sge(&A, 0x5000, 777);
	struct kr_devx_wr wr = {.wr_id = 0x5,
				.opcode = KR_WR_RDMA_WRITE,
				.flags = KR_WR_SIGNALED,
				.sge = &s,
				.num_sge = 1,
				.remote_addr = (uintptr_t)B.mem + 0x5000,
				.rkey = B.mr.rkey};
	int i;

	sleep_ms(300);
	for (i = 0; i < 200 && !atomic_load(&sh->engine_sleeping); i++)
		sleep_ms(10);
	if (!atomic_load(&sh->engine_sleeping))
		return 2;
	if (kr_devx_qp_post_send(qa, &wr))
		return 3;
	kr_devx_qp_ring(qa);
	return 0;
}

static void run_child(int (*fn)(struct kr_devx_qp *), struct kr_devx_qp *qa)
{
	int status = 0;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(fn(qa));
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

int main(void)
{
	struct shared_qp *st;
	struct kr_devx_qp qb;
	struct kr_devx_sge rsg;
	struct kr_devx_wc wc;
	uint64_t *own_wrid;
	uint32_t *own_next;
	uint8_t *a, *b;

	CHECK_OK(kr_fx_host_open(&A, "sim:xp_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:xp_b", MEM_LEN));
	st = kr_fx_alloc_shared(sizeof(*st));
	CHECK(st != NULL);
	CHECK_OK(kr_fx_rc_pair(&A, &st->qa, &B, &qb, NULL));
	CHECK_EQ(st->qa.sq_wqebb_cnt, SQ_SLOTS);
	own_wrid = st->qa.sq_wrid;
	own_next = st->qa.sq_wqe_next;
	st->qa.sq_wrid = st->wrid;
	st->qa.sq_wqe_next = st->next;

	a = A.mem;
	b = B.mem;
	fill(a, 0x6000, 1);
	memset(b, 0, 0x8000);
	rsg = kr_fx_sge(&B, 0x4000, 2048);
	CHECK_OK(kr_devx_qp_post_recv(&qb, &rsg, 1, 0x77));

	run_child(child_post, &st->qa);
	expect_wc(&A.scq, 0x1, KR_WC_RDMA_WRITE, st->qa.qpn, NULL);
	expect_wc(&A.scq, 0x3, KR_WC_RDMA_WRITE, st->qa.qpn, NULL);
	expect_wc(&A.scq, 0x4, KR_WC_SEND, st->qa.qpn, NULL);
	expect_wc(&B.rcq, 0x77, KR_WC_RECV, qb.qpn, &wc);
	CHECK_EQ(wc.byte_len, 1200);
	CHECK_EQ(wc.src_qpn, st->qa.qpn);
	CHECK(memcmp(b + 0x0000, a + 0x0000, 3000) == 0);
	CHECK(memcmp(b + 0x1000, a + 0x1000, 100) == 0);
	CHECK(memcmp(b + 0x2000, a + 0x2000, 64) == 0);
	CHECK(memcmp(b + 0x4000, a + 0x3000, 1200) == 0);
	CHECK_EQ(b[3000], 0);
	CHECK_EQ(b[0x4000 + 1200], 0);
	CHECK_EQ(kr_fx_poll_none(&A.scq, 10), 0);

	run_child(child_post_sleeping, &st->qa);
	expect_wc(&A.scq, 0x5, KR_WC_RDMA_WRITE, st->qa.qpn, NULL);
	CHECK(memcmp(b + 0x5000, a + 0x5000, 777) == 0);
	CHECK_EQ(b[0x5000 + 777], 0);

	st->qa.sq_wrid = own_wrid;
	st->qa.sq_wqe_next = own_next;
	kr_fx_qp_destroy(&st->qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_free_shared(st, sizeof(*st));
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_cross_process");
}
