/* SPDX-License-Identifier: BSD-3-Clause */
/* Packet-order test helpers: see sim_order.h. */
#include <string.h>
#include <time.h>

#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim_order.h"

#define ORD_MEM	   (1u << 20)
#define ORD_LOCAL  0x80000u /* A: local buffers from here */
#define ORD_SLOTS  512u
#define ORD_TMO	   5000
#define ORD_POISON 0xdeadbeefdeadbeefull

void ord_open(struct ord *o, const char *tag, uint8_t ack_timeout)
{
	struct kr_devx_qp_conn c;
	char name[64];

	memset(o, 0, sizeof(*o));
	snprintf(name, sizeof(name), "sim:%sa", tag);
	CHECK_OK(kr_fx_host_open(&o->a, name, ORD_MEM));
	snprintf(name, sizeof(name), "sim:%sb", tag);
	CHECK_OK(kr_fx_host_open(&o->b, name, ORD_MEM));
	kr_fx_conn_default(&c);
	c.ack_timeout = ack_timeout;
	CHECK_OK(kr_fx_dct_create(&o->b, &o->srq, &o->dct, ORD_DC_KEY));
	CHECK_OK(kr_fx_dci_create(&o->a, &o->dci, &c));
	kr_fx_dc_av(&o->a, &o->b, &o->dct, &o->av);
	CHECK_OK(kr_fx_rc_pair(&o->a, &o->rc_a, &o->b, &o->rc_b, &c));
	o->next_id = 1;
}

void ord_close(struct ord *o)
{
	struct kr_devx_cq_info ci;

	/* every request was waited for: the device wrote exactly what we polled */
	CHECK_OK(kr_devx_cq_query(&o->a.scq, &ci));
	CHECK_EQ(ci.producer_counter, o->a.scq.cons_index & 0xffffff);
	CHECK_EQ(ci.log_size, o->a.scq.log_ncqe);
	kr_fx_qp_destroy(&o->rc_a);
	kr_fx_qp_destroy(&o->rc_b);
	kr_fx_qp_destroy(&o->dci);
	kr_fx_dct_destroy(&o->dct, &o->srq);
	kr_fx_host_close(&o->b);
	kr_fx_host_close(&o->a);
}

uint64_t *ord_local(struct ord *o, uint64_t id)
{
	return (uint64_t *)((uint8_t *)o->a.mem + ORD_LOCAL + (id % ORD_SLOTS) * 8);
}

uint64_t *ord_remote(struct ord *o, size_t off)
{
	return (uint64_t *)((uint8_t *)o->b.mem + off);
}

/* Post wr with the next id; the local slot first holds fill (the WRITE's
 * value, or a poison a READ or atomic must overwrite). */
static uint64_t ord_post(struct ord *o, struct kr_devx_qp *qp, struct kr_devx_wr *wr, uint64_t fill)
{
	uint64_t id = o->next_id++;
	struct kr_devx_sge sge = kr_fx_sge(&o->a, ORD_LOCAL + (id % ORD_SLOTS) * 8, 8);

	*ord_local(o, id) = fill;
	wr->wr_id = id;
	wr->flags |= KR_WR_SIGNALED;
	wr->sge = &sge;
	wr->num_sge = 1;
	wr->rkey = o->b.mr.rkey;
	wr->av = qp->type == KR_DEVX_QP_DCI ? &o->av : NULL;
	CHECK_OK(kr_devx_qp_post_send(qp, wr));
	kr_devx_qp_ring(qp);
	return id;
}

uint64_t ord_post_write(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t value)
{
	struct kr_devx_wr wr = {.opcode = KR_WR_RDMA_WRITE};

	wr.remote_addr = (uintptr_t)ord_remote(o, off);
	return ord_post(o, qp, &wr, value);
}

uint64_t ord_post_read(struct ord *o, struct kr_devx_qp *qp, size_t off)
{
	struct kr_devx_wr wr = {.opcode = KR_WR_RDMA_READ};

	wr.remote_addr = (uintptr_t)ord_remote(o, off);
	return ord_post(o, qp, &wr, ORD_POISON);
}

uint64_t ord_post_faa(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t add)
{
	struct kr_devx_wr wr = {.opcode = KR_WR_ATOMIC_FA, .compare_add = add};

	wr.remote_addr = (uintptr_t)ord_remote(o, off);
	return ord_post(o, qp, &wr, ORD_POISON);
}

uint64_t ord_post_cas(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t cmp, uint64_t swap)
{
	struct kr_devx_wr wr = {.opcode = KR_WR_ATOMIC_CS, .compare_add = cmp, .swap = swap};

	wr.remote_addr = (uintptr_t)ord_remote(o, off);
	return ord_post(o, qp, &wr, ORD_POISON);
}

void ord_wait(struct ord *o, struct kr_devx_qp *qp, uint64_t id)
{
	kr_fx_expect_wc(&o->a.scq, id, KR_WC_SUCCESS, qp->qpn, NULL);
}

void ord_write(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t value)
{
	ord_wait(o, qp, ord_post_write(o, qp, off, value));
}

uint64_t ord_read(struct ord *o, struct kr_devx_qp *qp, size_t off)
{
	uint64_t id = ord_post_read(o, qp, off);

	ord_wait(o, qp, id);
	return *ord_local(o, id);
}

uint64_t ord_faa(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t add)
{
	uint64_t id = ord_post_faa(o, qp, off, add);

	ord_wait(o, qp, id);
	return *ord_local(o, id);
}

uint64_t ord_cas(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t cmp, uint64_t swap)
{
	uint64_t id = ord_post_cas(o, qp, off, cmp, swap);

	ord_wait(o, qp, id);
	return *ord_local(o, id);
}

void ord_wait_captured(struct kr_fx_host *h)
{
	struct timespec ts = {.tv_nsec = 100000};

	for (int i = 0; i < ORD_TMO * 10; i++) {
		int rc = sim_fault_captured(h->ctx, NULL);

		CHECK(rc >= 0);
		if (rc == 1)
			return;
		nanosleep(&ts, NULL);
	}
	KR_FAIL("%s: nothing captured within %d ms", h->ctx->name, ORD_TMO);
}

void ord_dci_renew(struct ord *o)
{
	struct kr_devx_qp_conn c;
	struct kr_devx_qp_info info;
	uint32_t psn;

	CHECK_OK(kr_devx_qp_renew_psn(&o->dci, &psn, NULL));
	CHECK_OK(kr_devx_qp_query(&o->dci, &info));
	CHECK_EQ(psn, (info.next_send_psn + KR_PSN_RENEW_GAP) & 0xffffff);
	CHECK_OK(kr_devx_qp_modify(&o->dci, KR_QP_2RST, NULL));
	kr_fx_conn_default(&c);
	c.sq_psn = psn;
	CHECK_OK(kr_devx_qp_connect(&o->dci, &c));
	CHECK_OK(kr_devx_qp_query(&o->dci, &info));
	CHECK_EQ(info.next_send_psn, psn);
}

struct sim_stats ord_stats(struct kr_fx_host *h)
{
	struct sim_stats st;

	CHECK_OK(sim_stats_query(h->ctx, &st));
	return st;
}
