/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The firmware cost model: a command takes at least the time configured for
 * it (a lower bound is a property of the model; upper bounds would only test
 * the machine's load), and while one command sleeps the device lock is free:
 * the engine completes a WRITE on another QP pair and other commands run.
 * Also device open, umem registration, the connectx4 profile end to end, and
 * cmdq=<name>: two hosts on one command queue take turns (their commands'
 * times add up), and a bad queue name is refused.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define MEM_LEN (1u << 20)
#define TMO_MS	10000

static void rc_attr(struct kr_fx_host *h, struct kr_devx_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = KR_DEVX_QP_RC;
	a->pdn = h->pd.pdn;
	a->send_cq = &h->scq;
	a->recv_cq = &h->rcq;
	a->uar = h->uar;
	a->sq_wqebb = 64;
	a->rq_wqe = 16;
	a->max_recv_sge = 1;
}

/* ---- CREATE_QP at 2 ms takes at least 2 ms ---- */

static void test_create_qp_2ms(void)
{
	struct kr_fx_host a;
	struct kr_devx_qp_attr attr;
	struct kr_devx_qp qp;
	uint64_t t0, dt;

	CHECK_OK(kr_fx_host_open(&a, "sim:cost_a,cmd_create_qp_us=2000", MEM_LEN));
	rc_attr(&a, &attr);
	for (int i = 0; i < 3; i++) {
		t0 = kr_test_now_ns();
		CHECK_OK(kr_devx_qp_create(a.ctx, &attr, &qp));
		dt = kr_test_now_ns() - t0;
		printf("CREATE_QP with cmd_create_qp_us=2000: %.3f ms\n", dt / 1e6);
		CHECK(dt >= 2000000ull);
		CHECK_OK(kr_devx_qp_destroy(&qp));
	}
	kr_fx_host_close(&a);
}

/* ---- the engine and other commands run while a command sleeps ---- */

#define SLOW_US 400000 /* long enough that the checks below never race it */

struct creator {
	struct kr_fx_host *h;
	atomic_int started;
	atomic_int done;
	uint64_t t0, t1;
	int rc;
};

static void *create_thread(void *arg)
{
	struct creator *c = arg;
	struct kr_devx_qp_attr attr;
	struct kr_devx_qp qp;

	rc_attr(c->h, &attr);
	c->t0 = kr_test_now_ns();
	atomic_store(&c->started, 1);
	c->rc = kr_devx_qp_create(c->h->ctx, &attr, &qp);
	c->t1 = kr_test_now_ns();
	atomic_store(&c->done, 1);
	if (!c->rc)
		c->rc = kr_devx_qp_destroy(&qp);
	return NULL;
}

static void test_engine_runs_during_command(void)
{
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_info info;
	struct kr_devx_sge sge;
	struct kr_devx_wr wr;
	struct kr_devx_wc wc;
	struct creator c;
	pthread_t th;
	uint64_t t_wc, t_query;
	bool wc_before, query_before;

	CHECK_OK(kr_fx_host_open(&a, "sim:cost_slow_a,cmd_create_qp_us=400000", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&b, "sim:cost_slow_b", MEM_LEN));
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, NULL)); /* pays one slow CREATE_QP */

	memset((uint8_t *)a.mem, 0x5a, 4096);
	memset(b.mem, 0, 4096);
	sge = kr_fx_sge(&a, 0, 4096);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x77;
	wr.opcode = KR_WR_RDMA_WRITE;
	wr.flags = KR_WR_SIGNALED;
	wr.sge = &sge;
	wr.num_sge = 1;
	wr.remote_addr = (uintptr_t)b.mem;
	wr.rkey = b.mr.rkey;

	memset(&c, 0, sizeof(c));
	c.h = &a;
	CHECK(pthread_create(&th, NULL, create_thread, &c) == 0);
	while (!atomic_load(&c.started))
		sched_yield();
	usleep(20000); /* well inside the 400 ms the command sleeps */

	/* the engine of the same host serves the other pair meanwhile */
	CHECK_OK(kr_devx_qp_post_send(&qa, &wr));
	kr_devx_qp_ring(&qa);
	CHECK_OK(kr_fx_poll_one(&a.scq, &wc, TMO_MS));
	t_wc = kr_test_now_ns();
	wc_before = !atomic_load(&c.done);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 0x77);
	CHECK(memcmp(a.mem, b.mem, 4096) == 0);

	/* and another command gets the device lock */
	CHECK_OK(kr_devx_qp_query(&qa, &info));
	t_query = kr_test_now_ns();
	query_before = !atomic_load(&c.done);
	CHECK_EQ(info.state, KR_QPC_STATE_RTS);

	CHECK(pthread_join(th, NULL) == 0);
	CHECK_OK(c.rc);
	printf("slow CREATE_QP: %.1f ms; WRITE completed at +%.1f ms, QUERY_QP at +%.1f ms\n",
	       (c.t1 - c.t0) / 1e6, (t_wc - c.t0) / 1e6, (t_query - c.t0) / 1e6);
	CHECK(c.t1 - c.t0 >= SLOW_US * 1000ull);
	if (!wc_before)
		KR_FAIL("the WRITE completed only after the sleeping CREATE_QP returned");
	if (!query_before)
		KR_FAIL("QUERY_QP ran only after the sleeping CREATE_QP returned");

	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
}

/* ---- open, umem registration, PD ---- */

static void test_open_umem_pd(void)
{
	struct kr_devx_ctx *ctx;
	struct kr_devx_umem *umem;
	struct kr_devx_pd pd;
	static uint8_t buf[8192];
	uint64_t t0, dt;

	t0 = kr_test_now_ns();
	CHECK_OK(kr_devx_open("sim:cost_o,cmd_open_us=3000,cmd_umem_reg_us=2000,"
			      "cmd_alloc_pd_us=1000,cmd_destroy_us=1500",
			      &ctx));
	dt = kr_test_now_ns() - t0;
	printf("open with cmd_open_us=3000: %.3f ms\n", dt / 1e6);
	CHECK(dt >= 3000000ull);

	t0 = kr_test_now_ns();
	CHECK_OK(ctx->ops->umem_reg(ctx, buf, sizeof(buf), KR_ACCESS_LOCAL_WRITE, &umem));
	dt = kr_test_now_ns() - t0;
	CHECK(dt >= 2000000ull);

	t0 = kr_test_now_ns();
	CHECK_OK(kr_devx_pd_alloc(ctx, &pd));
	dt = kr_test_now_ns() - t0;
	CHECK(dt >= 1000000ull);

	t0 = kr_test_now_ns();
	CHECK_OK(kr_devx_pd_free(&pd));
	dt = kr_test_now_ns() - t0;
	CHECK(dt >= 1500000ull);

	CHECK_OK(ctx->ops->umem_dereg(umem));
	kr_devx_close(ctx);
}

/* ---- profile=connectx4: a connection costs what the profile says ---- */

static void test_profile_connection(void)
{
	const struct sim_cost_profile *p = sim_cost_profile_find("connectx4");
	struct kr_devx_ctx *ctx;
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	uint64_t t0, dt, want;

	CHECK(p != NULL);
	t0 = kr_test_now_ns();
	CHECK_OK(kr_devx_open("sim:cost_p0,profile=connectx4", &ctx));
	dt = kr_test_now_ns() - t0;
	want = p->cmd_ns[SIM_COST_OPEN] + p->cmd_ns[SIM_COST_QUERY_HCA_CAP];
	printf("connectx4: device open %.2f ms (model >= %.2f ms)\n", dt / 1e6, want / 1e6);
	CHECK(dt >= want);
	kr_devx_close(ctx);

	CHECK_OK(kr_fx_host_open(&a, "sim:cost_pa,profile=connectx4", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&b, "sim:cost_pb,profile=connectx4", MEM_LEN));
	t0 = kr_test_now_ns();
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, NULL));
	dt = kr_test_now_ns() - t0;
	/* both ends: umem, CREATE_QP and the three transitions */
	want = 2 * (p->cmd_ns[SIM_COST_UMEM_REG] + p->cmd_ns[SIM_COST_CREATE_QP] +
		    p->cmd_ns[SIM_COST_RST2INIT] + p->cmd_ns[SIM_COST_INIT2RTR] +
		    p->cmd_ns[SIM_COST_RTR2RTS]);
	printf("connectx4: RC pair (2 QPs, 6 transitions) %.2f ms (model >= %.2f ms)\n", dt / 1e6,
	       want / 1e6);
	CHECK(dt >= want);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
}

/* ---- cmdq: hosts of one queue take turns ---- */

#define CMDQ_PDS 5
#define CMDQ_NS	 20000000ull /* cmd_alloc_pd_us=20000 */

static void *pd_thread(void *arg)
{
	struct kr_devx_ctx *ctx = arg;
	struct kr_devx_pd pd[CMDQ_PDS];

	for (int i = 0; i < CMDQ_PDS; i++)
		CHECK_OK(kr_devx_pd_alloc(ctx, &pd[i]));
	for (int i = 0; i < CMDQ_PDS; i++)
		kr_devx_pd_free(&pd[i]);
	return NULL;
}

static uint64_t two_hosts_pds(const char *q)
{
	struct kr_devx_ctx *a, *b;
	pthread_t ta, tb;
	char na[128], nb[128];
	uint64_t t0, dt;

	snprintf(na, sizeof(na), "sim:cq_a%s,cmd_alloc_pd_us=20000", q);
	snprintf(nb, sizeof(nb), "sim:cq_b%s,cmd_alloc_pd_us=20000", q);
	CHECK_OK(kr_devx_open(na, &a));
	CHECK_OK(kr_devx_open(nb, &b));
	t0 = kr_test_now_ns();
	CHECK_OK(pthread_create(&ta, NULL, pd_thread, a));
	CHECK_OK(pthread_create(&tb, NULL, pd_thread, b));
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	dt = kr_test_now_ns() - t0;
	kr_devx_close(a);
	kr_devx_close(b);
	return dt;
}

static void test_cmdq(void)
{
	char q[64], path[96];
	struct kr_devx_ctx *ctx;
	uint64_t dt;

	snprintf(q, sizeof(q), ",cmdq=test%d", (int)getpid());
	dt = two_hosts_pds(q);
	printf("cmdq: 2 hosts x %d PDs of 20 ms on one queue: %.1f ms (>= %d)\n", CMDQ_PDS,
	       dt / 1e6, 2 * CMDQ_PDS * 20);
	CHECK(dt >= 2 * CMDQ_PDS * CMDQ_NS);
	snprintf(path, sizeof(path), "/dev/shm/krsim-cmdq-test%d", (int)getpid());
	unlink(path);
	dt = two_hosts_pds("");
	printf("cmdq: the same, each host its own queue: %.1f ms\n", dt / 1e6);
	CHECK(dt >= CMDQ_PDS * CMDQ_NS);
	CHECK_ERR(kr_devx_open("sim:cq_bad,cmdq=", &ctx), -EINVAL);
	CHECK_ERR(kr_devx_open("sim:cq_bad,cmdq=../x", &ctx), -EINVAL);
	CHECK_ERR(kr_devx_open("sim:cq_bad,cmdq=0123456789012345678901234567890123", &ctx),
		  -EINVAL);
}

int main(void)
{
	CHECK_OK(kr_devx_backend_add(&kr_sim_backend));
	test_create_qp_2ms();
	test_engine_runs_during_command();
	test_open_umem_pd();
	test_profile_connection();
	test_cmdq();
	KR_PASS("test_sim_cost");
}
