/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQ completion events (devx_event.c) on two simulated hosts, as the kernel
 * and a ConnectX deliver them: one event per arm, at the next CQE or at once
 * when one is waiting past the consumer index; none without an arm; an arm
 * rung through another UAR page is ignored; subscriptions refused for an fd
 * that is not an eventfd, a CQ of another context, or a second time.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN (1u << 16)

static struct kr_fx_host A, B;

/* Events on efd within ms (the eventfd's count, read and reset). */
static uint64_t events(int efd, int ms)
{
	struct pollfd p = {.fd = efd, .events = POLLIN};
	uint64_t n = 0;

	if (poll(&p, 1, ms) == 1)
		CHECK_EQ(read(efd, &n, sizeof(n)), (ssize_t)sizeof(n));
	return n;
}

/* One signaled WRITE from A to B, rung; its CQE not polled. */
static void write_one(struct kr_devx_qp *qa, uint64_t wr_id)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, 0, 64);
	struct kr_devx_wr wr = {.wr_id = wr_id,
				.opcode = KR_WR_RDMA_WRITE,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = (uintptr_t)B.mem + 4096,
				.rkey = B.mr.rkey};

	CHECK_OK(kr_devx_qp_post_send(qa, &wr));
	kr_devx_qp_ring(qa);
}

/* Wait until the device wrote n CQEs to cq in all (QUERY_CQ), without polling them. */
static void wait_produced(struct kr_devx_cq *cq, uint32_t n)
{
	struct kr_devx_cq_info info = {0};

	for (int i = 0; i < 5000; i++, usleep(1000)) {
		CHECK_OK(kr_devx_cq_query(cq, &info));
		if (info.producer_counter >= n)
			return;
	}
	KR_FAIL("CQ %u: %u CQEs produced, waited for %u", cq->cqn, info.producer_counter, n);
}

static void test_refusals(struct kr_devx_event_ch *ch, int efd)
{
	struct kr_devx_event_ch *bad;
	int pfd[2];

	CHECK_ERR(kr_devx_event_ch_open(NULL, &bad), -EINVAL);
	CHECK_ERR(kr_devx_cq_notify(NULL, &A.scq, efd), -EINVAL);
	CHECK_ERR(kr_devx_cq_notify(ch, &A.scq, -1), -EINVAL);
	CHECK_ERR(kr_devx_cq_notify(ch, &B.scq, efd), -EINVAL); /* another context's CQ */
	CHECK_OK(pipe(pfd));
	CHECK_ERR(kr_devx_cq_notify(ch, &A.scq, pfd[0]), -EINVAL); /* not an eventfd */
	close(pfd[0]);
	close(pfd[1]);
	CHECK_ERR(kr_devx_cq_arm(NULL), -EINVAL);
}

int main(void)
{
	struct kr_devx_qp qa, qb;
	struct kr_devx_event_ch *ch;
	struct kr_devx_uar *other, *own;
	struct kr_devx_wc wc;
	int efd;

	CHECK_OK(kr_fx_host_open(&A, "sim:ev_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:ev_b", MEM_LEN));
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, NULL));
	CHECK_OK(kr_devx_event_ch_open(A.ctx, &ch));
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK(efd >= 0);
	test_refusals(ch, efd);
	CHECK_OK(kr_devx_cq_notify(ch, &A.scq, efd));
	CHECK_ERR(kr_devx_cq_notify(ch, &A.scq, efd), -EEXIST);

	/* not armed: a CQE raises nothing */
	write_one(&qa, 1);
	kr_fx_expect_wc(&A.scq, 1, KR_WC_SUCCESS, qa.qpn, NULL);
	CHECK_EQ(events(efd, 100), 0);

	/* armed on an empty CQ: nothing until the next CQE, then one event */
	CHECK_OK(kr_devx_cq_arm(&A.scq));
	CHECK_EQ(events(efd, 100), 0);
	write_one(&qa, 2);
	CHECK_EQ(events(efd, 5000), 1);
	kr_fx_expect_wc(&A.scq, 2, KR_WC_SUCCESS, qa.qpn, NULL);
	kr_devx_cq_event_taken(&A.scq);

	/* one event per arm: the next CQE raises none */
	write_one(&qa, 3);
	kr_fx_expect_wc(&A.scq, 3, KR_WC_SUCCESS, qa.qpn, NULL);
	CHECK_EQ(events(efd, 100), 0);

	/* armed with a CQE already past the consumer index: at once */
	write_one(&qa, 4);
	wait_produced(&A.scq, 4);
	CHECK_OK(kr_devx_cq_arm(&A.scq));
	CHECK_EQ(events(efd, 5000), 1);
	kr_fx_expect_wc(&A.scq, 4, KR_WC_SUCCESS, qa.qpn, NULL);
	kr_devx_cq_event_taken(&A.scq);

	/* an arm rung through a UAR page the CQ is not on is ignored */
	CHECK_OK(kr_devx_uar_alloc_private(A.ctx, &other));
	CHECK(other->page_id != A.scq.uar->page_id);
	own = A.scq.uar;
	A.scq.uar = other;
	CHECK_OK(kr_devx_cq_arm(&A.scq));
	A.scq.uar = own;
	write_one(&qa, 5);
	kr_fx_expect_wc(&A.scq, 5, KR_WC_SUCCESS, qa.qpn, NULL);
	CHECK_EQ(events(efd, 200), 0);
	kr_devx_uar_free_private(other);

	/* and the CQ's own page still works */
	CHECK_OK(kr_devx_cq_arm(&A.scq));
	write_one(&qa, 6);
	CHECK_EQ(events(efd, 5000), 1);
	CHECK_OK(kr_fx_poll_one(&A.scq, &wc, 5000));
	CHECK_EQ(wc.wr_id, 6);

	kr_devx_event_ch_close(ch);
	close(efd);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("devx_cq_events");
}
