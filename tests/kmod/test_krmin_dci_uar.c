/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_krmin_dci_uar (in the qemu guest; links the keeper's code): the slot
 * krpoold registers for a DCI of a ConnectX, without a ConnectX. The
 * keeper's own kr_keeper_krmin_reg() gets a hardware context and a DCI
 * whose UAR page is a page of the ivshmem device's BAR (test_krmin_io's
 * stand-in for device memory): it registers the QP buffer and the CQ buffer
 * and adds the page with SLOT_ADD_IO. A job claims the grant and maps the
 * slot as the library does (the rings, then the UAR page after them): what
 * it writes to the rings is the keeper's memory, and a doorbell rung through
 * a job's view of the device that holds no fd (kr_devx_uar_wrap, the hw
 * doorbell) lands in the BAR at the register offset. Nothing maps past the
 * page; once the keeper unregisters the slot the job's page raises SIGBUS.
 * A BlueFlame page (the BAR mapped write-combining, resource2_wc) takes the
 * job's WQE copies in its two buffers in turn. A UAR page that is RAM is
 * refused and leaves no slot behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krmin_test.h"
#include "job/job.h"
#include "keeper/keeper.h"

#define REG_OFF 0x800u
#define QP_LEN	(2 * KT_PAGE)
#define BLK_LEN (3 * KT_PAGE) /* QP buffer, then one page of CQ */
#define DB_VAL	0x0123456789abcdefull
#define BF_SIZE 256u

/*
 * A BlueFlame page: the keeper's mapping of the BAR is write-combining
 * (resource2_wc), the module maps it so for the job, and the job's WQE
 * copies land in the register's two buffers in turn (read back through
 * the uncached mapping uc).
 */
static void bf_slot(struct kr_keeper *k, volatile uint8_t *uc, uint8_t *block)
{
	struct kr_devx_uar_ref ref = {.reg_off = REG_OFF};
	struct kr_keeper_qp q = {.tenant = 1, .index = 2};
	struct kr_devx_uar uar, *ju;
	struct krmin_slot_claim c;
	struct kr_devx_ctx *view;
	volatile uint8_t *wc = kt_ivshmem_bar("resource2_wc");
	uint8_t wqe[128], got[128];
	uint64_t token;
	void *u;
	int fd;

	for (uint32_t i = 0; i < sizeof(wqe); i++)
		wqe[i] = (uint8_t)(0x30 + i);
	uar = (struct kr_devx_uar){.ctx = k->ctx,
				   .page_id = 8,
				   .base_addr = (void *)wc,
				   .reg_addr = (uint8_t *)wc + REG_OFF,
				   .shared_fd = -1,
				   .bf_size = BF_SIZE};
	q.uar = &uar;
	CHECK_OK(kr_keeper_krmin_reg(k, &q, block, QP_LEN, BLK_LEN));
	CHECK_OK(kr_keeper_krmin_grant(k, &q, getpid(), &token));
	fd = kt_open();
	CHECK_OK(kt_claim(fd, token, &c));
	u = mmap(NULL, KT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)(c.mmap_offset + BLK_LEN));
	CHECK(u != MAP_FAILED);
	CHECK_OK(kr_devx_import("mlx5_stand_in", -1, &ref, &view));
	CHECK_OK(kr_devx_uar_wrap(view, 8, u, REG_OFF, BF_SIZE, &ju));
	memset((void *)(uc + REG_OFF), 0, 2 * BF_SIZE);
	view->ops->bf_copy(ju, wqe, 128); /* buffer 0 */
	memcpy(got, (const void *)(uc + REG_OFF), 128);
	CHECK(memcmp(got, wqe, 128) == 0);
	view->ops->bf_copy(ju, wqe + 64, 64); /* buffer 1 */
	memcpy(got, (const void *)(uc + REG_OFF + BF_SIZE), 64);
	CHECK(memcmp(got, wqe + 64, 64) == 0);
	CHECK_EQ(ju->bf_off, 0);
	kr_devx_uar_unimport(ju);
	kr_devx_close(view);
	kr_keeper_krmin_unreg(k, &q);
	munmap(u, KT_PAGE);
	close(fd);
	printf("dci_uar: a BlueFlame page (write-combining BAR): WQE copies reach the register's "
	       "buffers in turn through the module's mapping\n");
}

int main(void)
{
	struct kr_devx_ctx hw = {.backend = &kr_devx_hw_backend};
	struct kr_devx_uar_ref ref = {.reg_off = REG_OFF};
	struct kr_devx_uar uar, ram_uar, *ju;
	struct kr_keeper_qp q = {.tenant = 1}, q2 = {.tenant = 1, .index = 1};
	struct krmin_slot_claim c;
	struct kr_devx_ctx *view;
	struct kr_keeper k;
	volatile uint8_t *bar;
	uint8_t *block, *rings, *u, *ram;
	uint64_t token, got;
	long slots0;
	int fd;

	if (geteuid() != 0)
		KR_SKIP("needs root (CAP_IPC_LOCK to be the module's keeper)");
	if (access(KT_DEV, F_OK))
		KR_SKIP("no %s: runs in the kmod suite's qemu guest", KT_DEV);
	bar = kt_ivshmem_bar("resource2");
	memset(&k, 0, sizeof(k));
	k.cfg.require_kmod = true;
	CHECK_OK(kr_keeper_krmin_open(&k));
	snprintf(hw.name, sizeof(hw.name), "mlx5_stand_in");
	k.ctx = &hw;
	slots0 = kt_stat("slots");

	/* the DCI: its rings in keeper memory, its UAR page a device page */
	uar = (struct kr_devx_uar){.ctx = &hw,
				   .page_id = 7,
				   .base_addr = (void *)bar,
				   .reg_addr = (uint8_t *)bar + REG_OFF,
				   .shared_fd = -1};
	block = mmap(NULL, BLK_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(block != MAP_FAILED);
	memset(block, 0x5c, BLK_LEN);
	memset((void *)(bar + REG_OFF), 0, 8);
	q.uar = &uar;
	CHECK_OK(kr_keeper_krmin_reg(&k, &q, block, QP_LEN, BLK_LEN));
	CHECK(q.krmin_slot_plus1 != 0);
	CHECK_EQ(kt_stat("slots"), slots0 + 1);
	CHECK_OK(kr_keeper_krmin_grant(&k, &q, getpid(), &token));
	CHECK(token != 0);

	/* the job: the rings (QP then CQ), then the device page */
	fd = kt_open();
	CHECK_OK(kt_claim(fd, token, &c));
	CHECK_EQ(c.tenant, 1u);
	CHECK_EQ(c.ring_len, QP_LEN);
	CHECK_EQ(c.ring_len + c.dbr_len, BLK_LEN);
	rings = mmap(NULL, BLK_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)c.mmap_offset);
	CHECK(rings != MAP_FAILED);
	CHECK_EQ(rings[0], 0x5c);
	rings[8] = 0xa1;	   /* a WQE byte */
	rings[QP_LEN + 64] = 0xb2; /* a CQ byte */
	CHECK_EQ(block[8], 0xa1);
	CHECK_EQ(block[QP_LEN + 64], 0xb2);
	u = mmap(NULL, KT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)(c.mmap_offset + BLK_LEN));
	CHECK(u != MAP_FAILED);
	CHECK(mmap(NULL, KT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)(c.mmap_offset + BLK_LEN + KT_PAGE)) == MAP_FAILED &&
	      errno == EINVAL);

	/* a job's view without any fd rings it: the store reaches the BAR */
	CHECK_OK(kr_devx_import(hw.name, -1, &ref, &view));
	CHECK_OK(kr_devx_uar_wrap(view, 7, u, REG_OFF, 0, &ju));
	view->ops->doorbell(ju, DB_VAL);
	memcpy(&got, (const void *)(bar + REG_OFF), 8);
	CHECK_EQ(got, DB_VAL);
	kr_devx_uar_unimport(ju);
	kr_devx_close(view);

	/* the keeper unregisters (the DCI is destroyed): the job's page is gone */
	kr_keeper_krmin_unreg(&k, &q);
	CHECK_EQ(kt_stat("slots"), slots0);
	CHECK_EQ(kt_touch(u, true, 1, NULL), SIGBUS);
	CHECK_EQ(kt_touch(rings, true, 1, NULL), SIGBUS);
	munmap(u, KT_PAGE);
	munmap(rings, BLK_LEN);
	close(fd);

	bf_slot(&k, bar, block);

	/* a UAR page in RAM is not device memory: refused, no slot left */
	ram = mmap(NULL, KT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(ram != MAP_FAILED);
	ram_uar = uar;
	ram_uar.base_addr = ram;
	ram_uar.reg_addr = ram + REG_OFF;
	q2.uar = &ram_uar;
	CHECK_ERR(kr_keeper_krmin_reg(&k, &q2, block, QP_LEN, BLK_LEN), -EINVAL);
	CHECK_EQ(q2.krmin_slot_plus1, 0u);
	CHECK_EQ(kt_stat("slots"), slots0);
	q2.uar = NULL; /* no page of its own at all */
	CHECK_ERR(kr_keeper_krmin_reg(&k, &q2, block, QP_LEN, BLK_LEN), -EINVAL);

	kr_keeper_krmin_close(&k);
	munmap(ram, KT_PAGE);
	munmap(block, BLK_LEN);
	printf("dci_uar: a ConnectX DCI's slot: rings and its own device page, rung by a job "
	       "holding no fd; gone with the slot; RAM refused\n");
	KR_PASS("test_krmin_dci_uar");
}
