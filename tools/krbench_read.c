/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench: the 8-byte READ loops of krbench read (to this node and to a
 * peer): sync latency, then a window of KB_RD_WINDOW in flight for the rate,
 * through a vQP or a raw leased DCI.
 */
#include <errno.h>
#include <stdlib.h>

#include <krcore/krcore.h>

#include "krbench.h"
#include "job/job.h"
#include "keeper/keeper.h"
#include "job/virtqp/virtqp.h"

static int rd_raw_post(struct kb_rd_raw *r, void *local, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	struct kr_devx_sge sge = {.addr = (uintptr_t)local, .length = 8, .lkey = r->lkey};
	struct kr_devx_wr wr = {.wr_id = id,
				.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = raddr,
				.rkey = rkey,
				.av = &r->av};
	int rc = kr_devx_qp_post_send(r->qp, &wr);

	if (!rc)
		kr_devx_qp_ring(r->qp);
	return rc;
}

/* Poll one completion (bounded); 1, or <= 0 on error or timeout. */
static int rd_raw_poll(struct kb_rd_raw *r, double t0)
{
	struct kr_devx_wc wc;

	for (;;) {
		int n = kr_devx_cq_poll(r->cq, &wc, 1);

		if (n)
			return n == 1 && wc.status == KR_WC_SUCCESS ? 1 : -EIO;
		if (kb_now_us() - t0 > 10e6)
			return -ETIMEDOUT;
	}
}

static int rd_vqp_poll(struct kr_vqp *v, double t0)
{
	struct kr_wc wc;

	for (;;) {
		int n = kr_poll(v, &wc, 1);

		if (n)
			return n == 1 && wc.status == KR_WC_SUCCESS ? 1 : (n < 0 ? n : -EIO);
		if (kb_now_us() - t0 > 10e6)
			return -ETIMEDOUT;
	}
}

/* kb_rd_run() - see krbench.h. */
int kb_rd_run(struct kr_vqp *v, struct kb_rd_raw *raw, uint8_t *local, uint64_t raddr,
	      uint32_t rkey, int iters, double *lat, struct kb_rd_res *res)
{
	double t0;
	int rc, done = 0, posted = 0;

	for (int i = 0; i < iters; i++) {
		t0 = kb_now_us();
		rc = v ? kr_post_read(v, local, 8, raddr, rkey, (uint64_t)i, 0)
		       : rd_raw_post(raw, local, raddr, rkey, (uint64_t)i);
		if (rc)
			return rc;
		rc = v ? rd_vqp_poll(v, t0) : rd_raw_poll(raw, t0);
		if (rc < 0)
			return rc;
		lat[i] = kb_now_us() - t0;
	}
	qsort(lat, (size_t)iters, sizeof(*lat), kb_cmp_double);
	res->p50 = kb_pct(lat, iters, 50);
	res->p99 = kb_pct(lat, iters, 99);

	t0 = kb_now_us();
	while (done < iters) {
		while (posted < iters && posted - done < KB_RD_WINDOW) {
			uint8_t *l = local + 8 * (posted % KB_RD_WINDOW);

			rc = v ? kr_post_read(v, l, 8, raddr, rkey, (uint64_t)posted, 0)
			       : rd_raw_post(raw, l, raddr, rkey, (uint64_t)posted);
			if (rc == -EAGAIN && v && posted > done)
				break; /* moving between DC and RC: its requests drain first */
			if (rc)
				return rc;
			posted++;
		}
		rc = v ? rd_vqp_poll(v, t0) : rd_raw_poll(raw, t0);
		if (rc < 0)
			return rc;
		done++;
	}
	res->mops = iters / (kb_now_us() - t0);
	return 0;
}

/* Each figure's median over n results (n odd, at most KB_RD_ROUNDS). */
static void rd_median(const struct kb_rd_res *r, int n, struct kb_rd_res *out)
{
	double v[3][KB_RD_ROUNDS];

	for (int k = 0; k < n; k++) {
		v[0][k] = r[k].p50;
		v[1][k] = r[k].p99;
		v[2][k] = r[k].mops;
	}
	out->p50 = kb_median(v[0], n);
	out->p99 = kb_median(v[1], n);
	out->mops = kb_median(v[2], n);
}

/* kb_rd_rounds() - see krbench.h. */
int kb_rd_rounds(struct kr_vqp *v, struct kb_rd_raw *raw, uint8_t *local, uint64_t raddr,
		 uint32_t rkey, int iters, double *lat, struct kb_rd_res *rv, struct kb_rd_res *rr,
		 struct kb_rd_res *ratio)
{
	struct kb_rd_res a[KB_RD_ROUNDS], b[KB_RD_ROUNDS], q[KB_RD_ROUNDS];

	/* which path goes first alternates: neither gets the warmer machine each time */
	for (int k = 0; k < KB_RD_ROUNDS; k++)
		for (int j = 0; j < 2; j++) {
			bool raw_now = (j + k) % 2;
			int rc = kb_rd_run(raw_now ? NULL : v, raw_now ? raw : NULL, local, raddr,
					   rkey, iters, lat, raw_now ? &b[k] : &a[k]);

			if (rc)
				return rc;
		}
	/* a round's two runs are back to back: the machine's drift cancels in their ratio */
	for (int k = 0; k < KB_RD_ROUNDS; k++)
		q[k] = (struct kb_rd_res){.p50 = a[k].p50 / b[k].p50,
					  .p99 = a[k].p99 / b[k].p99,
					  .mops = a[k].mops / b[k].mops};
	rd_median(a, KB_RD_ROUNDS, rv);
	rd_median(b, KB_RD_ROUNDS, rr);
	rd_median(q, KB_RD_ROUNDS, ratio);
	return 0;
}
