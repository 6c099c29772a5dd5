/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim refuses an MTT key whose translation table cannot describe it:
 * mkc.log_page_size below the device's 4 KiB page (MLX5_ADAPTER_PAGE_SHIFT),
 * or translations_octword_size octwords (two 8-byte entries each, one page
 * of 1 << log_page_size bytes per entry) short of [start_addr, start_addr +
 * len) counted from start_addr's page: BAD_PARAM with the syndrome naming
 * it, no key left behind. The CPU page size with 4 KiB entries over a
 * hugepage-sized umem — what DPDK's mlx5_devx_cmd_mkey_create and krcore's
 * kr_devx_mr_reg write, the kernel having chosen the umem's own page size
 * (devx_umem_find_best_pgsize) — is taken, and so is a 2 MiB page size
 * with a table sized for it. Fails on 042d048's sim, which took any page
 * size and table size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define HUGE (2u << 20)
#define LEN  (2 * HUGE)

static struct kr_fx_host H;

static void mkey_in(uint32_t *in, uint32_t umem_id, uint64_t start, uint64_t len, uint32_t shift,
		    uint32_t octwords)
{
	void *mkc = KR_PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);

	memset(in, 0, KR_PRM_BYTES(create_mkey_in));
	KR_PRM_SET(create_mkey_in, in, opcode, KR_CMD_OP_CREATE_MKEY);
	KR_PRM_SET(create_mkey_in, in, mkey_umem_valid, 1);
	KR_PRM_SET(create_mkey_in, in, mkey_umem_id, umem_id);
	KR_PRM_SET(create_mkey_in, in, translations_octword_actual_size, octwords);
	KR_PRM_SET(mkc, mkc, access_mode_1_0, KR_MKC_ACCESS_MODE_MTT);
	KR_PRM_SET(mkc, mkc, lr, 1);
	KR_PRM_SET(mkc, mkc, lw, 1);
	KR_PRM_SET(mkc, mkc, qpn, 0xffffff);
	KR_PRM_SET(mkc, mkc, mkey_7_0, 0x42);
	KR_PRM_SET(mkc, mkc, pd, H.pd.pdn);
	KR_PRM_SET64(mkc, mkc, start_addr, start);
	KR_PRM_SET64(mkc, mkc, len, len);
	KR_PRM_SET(mkc, mkc, translations_octword_size, octwords);
	KR_PRM_SET(mkc, mkc, log_page_size, shift);
}

/* CREATE_MKEY: 0 (the key destroyed again), or the failure's syndrome. */
static uint32_t try_mkey(uint32_t umem_id, uint64_t start, uint64_t len, uint32_t shift,
			 uint32_t octwords)
{
	uint32_t in[KR_PRM_BYTES(create_mkey_in) / 4], out[KR_PRM_BYTES(create_mkey_out) / 4];
	struct kr_devx_obj *obj = NULL;
	int rc;

	mkey_in(in, umem_id, start, len, shift, octwords);
	rc = H.ctx->ops->obj_create(H.ctx, in, sizeof(in), out, sizeof(out), &obj);
	if (rc) {
		CHECK_EQ(rc, -EREMOTEIO);
		CHECK(obj == NULL);
		CHECK_EQ(KR_PRM_GET(mbox_out, out, status), KR_CMD_STAT_BAD_PARAM_ERR);
		return KR_PRM_GET(mbox_out, out, syndrome);
	}
	CHECK_OK(H.ctx->ops->obj_destroy(obj));
	return 0;
}

int main(void)
{
	struct kr_devx_umem *umem;
	struct kr_devx_mr mr;
	uint8_t *buf = aligned_alloc(HUGE, LEN);
	uint64_t va;

	CHECK(buf != NULL);
	va = (uintptr_t)buf;
	CHECK_OK(kr_fx_host_open(&H, "sim:mkey_pg", 64u << 10));
	CHECK_OK(H.ctx->ops->umem_reg(H.ctx, buf, LEN, KR_ACCESS_UMEM, &umem));

	/* 4 KiB entries over the whole umem: 1024 pages, 512 octwords */
	CHECK_EQ(try_mkey(umem->id, va, LEN, 12, 512), 0);
	CHECK_EQ(try_mkey(umem->id, va, LEN, 12, 511), SIM_SYND_MKEY_XLT_SIZE);
	/* below the adapter page */
	CHECK_EQ(try_mkey(umem->id, va, LEN, 11, 1024), SIM_SYND_MKEY_PAGE_SIZE);
	CHECK_EQ(try_mkey(umem->id, va, LEN, 0, 1024), SIM_SYND_MKEY_PAGE_SIZE);
	/* 2 MiB entries, a table for two of them */
	CHECK_EQ(try_mkey(umem->id, va, LEN, 21, 1), 0);
	CHECK_EQ(try_mkey(umem->id, va, LEN, 21, 0), SIM_SYND_MKEY_XLT_SIZE);
	/* an unaligned start counts from its page: 0x800 + 8 KiB spans 3 pages */
	CHECK_EQ(try_mkey(umem->id, va + 0x800, 8192, 12, 2), 0);
	CHECK_EQ(try_mkey(umem->id, va + 0x800, 8192, 12, 1), SIM_SYND_MKEY_XLT_SIZE);
	/* a length no table can hold */
	CHECK_EQ(try_mkey(umem->id, va, UINT64_MAX, 12, 0xffffffffu), SIM_SYND_MKEY_XLT_SIZE);
	CHECK_OK(H.ctx->ops->umem_dereg(umem));

	/* krcore's own keys over hugepage-sized memory are taken */
	CHECK_OK(kr_devx_mr_reg(H.ctx, &H.pd, buf, LEN,
				KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE |
				    KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC,
				&mr));
	CHECK_OK(kr_devx_mr_dereg(&mr));
	kr_fx_host_close(&H);
	free(buf);
	KR_PASS("sim_rejects_mkey_page_size");
}
