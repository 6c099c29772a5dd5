/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: BlueFlame as rdma-core's mlx5 provider does it (post_send):
 * the doorbell record first, then, for a single WQE of at most a buffer
 * (nreq == 1, size <= buf_size / 16), the whole WQE copied to the UAR
 * register's current buffer in 64-byte units, else the 8-byte doorbell
 * there; each ring flips to the other buffer (bf->offset ^= buf_size).
 * A job of a kmod-min keeper rings a fenced DCI's own page this way (the
 * hw view with no fd; a page of memory stands in for the write-combining
 * UAR page the module maps). Checked: the copy's bytes and place, the
 * alternation, the record at each ring, and the cases that take the plain
 * doorbell: two WQEs in one ring, a WQE larger than a buffer, one that wraps
 * the ring's end. A page whose buffers do not fit is refused.
 */
#include <endian.h>
#include <string.h>
#include <sys/mman.h>

#include "conf_fixture.h"
#include "kr_test.h"

#define REG 0x800u
#define BF  256u

static uint8_t src[512];

/* An RDMA WRITE of len bytes, inline when inl. */
static void post_write(struct kr_devx_qp *qp, uint32_t len, bool inl, uint64_t wr_id)
{
	struct kr_devx_sge sge = {.addr = (uintptr_t)src, .length = len, .lkey = 7};
	struct kr_devx_wr wr = {.wr_id = wr_id,
				.opcode = KR_WR_RDMA_WRITE,
				.flags = KR_WR_SIGNALED | (inl ? KR_WR_INLINE : 0),
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = 0x2000,
				.rkey = 9};

	CHECK_OK(kr_devx_qp_post_send(qp, &wr));
}

int main(void)
{
	struct kr_devx_uar_ref ref = {.reg_off = REG};
	struct kr_devx_uar *uar, *bad;
	struct kr_devx_ctx *view;
	struct kr_devx_qp qp;
	struct conf_dev d;
	uint8_t *page, before[BF];
	const uint8_t *wqe;
	uint64_t want;

	for (uint32_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 3);
	conf_dev_init(&d, true);
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED);
	CHECK_OK(kr_devx_import("mlx5_0", -1, &ref, &view));
	/* both buffers in the page, 64-byte multiples */
	CHECK_ERR(kr_devx_uar_wrap(view, 3, page, REG, 2048, &bad), -EINVAL);
	CHECK_ERR(kr_devx_uar_wrap(view, 3, page, REG, 100, &bad), -EINVAL);
	CHECK_OK(kr_devx_uar_wrap(view, 3, page, REG, BF, &uar));
	CHECK_EQ(uar->bf_size, BF);

	conf_qp_init(&d, &qp, KR_DEVX_QP_RC, 16);
	qp.ctx = view;
	qp.uar = uar;

	/* one small WQE: copied whole to buffer 0 (0x800), the record first */
	post_write(&qp, 8, false, 1);
	wqe = qp.sq_last_ctrl;
	kr_devx_qp_ring(&qp);
	CHECK_EQ(be32toh(qp.dbrec[MLX5_SND_DBR]), 1);
	CHECK(memcmp(page + REG, wqe, 64) == 0);
	CHECK_EQ(uar->bf_off, BF);

	/* the next one goes to buffer 1 (0x900): an inline WRITE of 3 WQEBBs */
	post_write(&qp, 150, true, 2);
	wqe = qp.sq_last_ctrl;
	CHECK_EQ(qp.sq_pi, 4u);
	kr_devx_qp_ring(&qp);
	CHECK(memcmp(page + REG + BF, wqe, 3 * 64) == 0); /* the payload rides in it */
	CHECK(memcmp(page + REG + BF + 36, src, 150) == 0);
	CHECK_EQ(uar->bf_off, 0);

	/* two WQEs in one ring: the 8-byte doorbell at buffer 0, nothing else */
	memcpy(before, page + REG, BF);
	post_write(&qp, 8, false, 3);
	post_write(&qp, 8, false, 4);
	kr_devx_qp_ring(&qp);
	CHECK_EQ(be32toh(qp.dbrec[MLX5_SND_DBR]), 6);
	memcpy(&want, qp.sq_last_ctrl, 8);
	CHECK(memcmp(page + REG, &want, 8) == 0);
	CHECK(memcmp(page + REG + 8, before + 8, BF - 8) == 0);
	CHECK_EQ(uar->bf_off, BF);

	/* larger than a buffer (5 WQEBBs): the doorbell, at buffer 1 */
	memcpy(before, page + REG + BF, BF);
	post_write(&qp, 250, true, 5);
	CHECK_EQ(qp.sq_pi, 11u);
	kr_devx_qp_ring(&qp);
	memcpy(&want, qp.sq_last_ctrl, 8);
	CHECK(memcmp(page + REG + BF, &want, 8) == 0);
	CHECK(memcmp(page + REG + BF + 8, before + 8, BF - 8) == 0);
	CHECK_EQ(uar->bf_off, 0);

	/* wrapping the ring's end (slots 15, 0 of 16): the doorbell */
	qp.sq_ci = qp.sq_pi;	       /* as if all completed: room for the next ones */
	post_write(&qp, 100, true, 6); /* 3 WQEBBs: slots 11..13 */
	kr_devx_qp_ring(&qp);
	post_write(&qp, 8, false, 7); /* slot 14 */
	kr_devx_qp_ring(&qp);
	CHECK_EQ(qp.sq_pi, 15u);
	memcpy(before, page + REG, BF);
	post_write(&qp, 60, true, 8); /* 2 WQEBBs: slots 15 and 0 */
	CHECK((const uint8_t *)qp.sq_last_ctrl == qp.sq_buf + 15 * 64);
	kr_devx_qp_ring(&qp);
	memcpy(&want, qp.sq_last_ctrl, 8);
	CHECK(memcmp(page + REG, &want, 8) == 0);
	CHECK(memcmp(page + REG + 8, before + 8, BF - 8) == 0);
	CHECK_EQ(be32toh(qp.dbrec[MLX5_SND_DBR]), 17);

	/* a page without BlueFlame: the doorbell always at 0x800 */
	qp.sq_ci = qp.sq_pi;
	kr_devx_uar_unimport(uar);
	CHECK_OK(kr_devx_uar_wrap(view, 3, page, REG, 0, &uar));
	qp.uar = uar;
	post_write(&qp, 8, false, 9);
	kr_devx_qp_ring(&qp);
	memcpy(&want, qp.sq_last_ctrl, 8);
	CHECK(memcmp(page + REG, &want, 8) == 0);
	CHECK_EQ(uar->bf_off, 0);

	qp.ctx = &d.ctx;
	conf_qp_fini(&qp);
	kr_devx_uar_unimport(uar);
	kr_devx_close(view);
	munmap(page, 4096);
	KR_PASS("conformance_blueflame");
}
