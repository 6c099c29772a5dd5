/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory regions: the buffer is registered as a umem, then CREATE_MKEY builds
 * an MTT-mode key over that umem (mkey_umem_valid), the way the kernel's and
 * rdma-core's DEVX users do. lkey = rkey = (mkey_index << 8) | mkey_7_0, the
 * low byte a per-device rolling variant (1..255) so a recycled index is a new
 * key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "devx/devx.h"
#include "common/kr_log.h"

#define KR_MR_PAGE_SHIFT 12u /* MTT entries describe 4 KiB pages */
#define KR_MR_PAGE_SIZE	 (1u << KR_MR_PAGE_SHIFT)
#define KR_ACCESS_ALL                                                                              \
	(KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ |                  \
	 KR_ACCESS_REMOTE_ATOMIC)

/* One 8-byte MTT entry per page, two per 16-byte octword (PRM; kernel get_octo_len). */
static uint32_t kr_mr_octwords(uint64_t addr, uint64_t len)
{
	uint64_t npages =
	    ((addr & (KR_MR_PAGE_SIZE - 1)) + len + KR_MR_PAGE_SIZE - 1) >> KR_MR_PAGE_SHIFT;

	return (uint32_t)((npages + 1) / 2);
}

#define KR_MR_LAST_SLOTS 65536u /* key indexes whose last variant is remembered */

/*
 * The key's low byte (mkc.mkey_7_0): random, so a key is not the index
 * plus a guessable counter, and never 0: key 0x100 (index 1, variant 0) is
 * MLX5_INVALID_LKEY, the receive-WQE terminator, and must never name a
 * region. Not avoid either (the variant the index had last).
 */
static uint8_t kr_mr_variant(uint8_t avoid)
{
	uint8_t v = 0;

	while (!v || v == avoid)
		if (getrandom(&v, 1, 0) != 1)
			v = (uint8_t)(v * 37u + 1u); /* cannot fail for one byte; keep going */
	return v;
}

static void kr_mr_build(uint8_t *in, const struct kr_devx_pd *pd, uint32_t umem_id, uint64_t iova,
			size_t len, uint32_t access, uint8_t variant)
{
	void *mkc = KR_PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);
	uint32_t octwords = kr_mr_octwords(iova, len);

	KR_PRM_SET(create_mkey_in, in, opcode, KR_CMD_OP_CREATE_MKEY);
	KR_PRM_SET(create_mkey_in, in, mkey_umem_valid, 1);
	KR_PRM_SET(create_mkey_in, in, mkey_umem_id, umem_id);
	KR_PRM_SET64(create_mkey_in, in, mkey_umem_offset, 0);
	KR_PRM_SET(create_mkey_in, in, translations_octword_actual_size, octwords);

	KR_PRM_SET(mkc, mkc, access_mode_1_0, KR_MKC_ACCESS_MODE_MTT);
	KR_PRM_SET(mkc, mkc, lr, 1);
	KR_PRM_SET(mkc, mkc, lw, !!(access & KR_ACCESS_LOCAL_WRITE));
	KR_PRM_SET(mkc, mkc, rw, !!(access & KR_ACCESS_REMOTE_WRITE));
	KR_PRM_SET(mkc, mkc, rr, !!(access & KR_ACCESS_REMOTE_READ));
	KR_PRM_SET(mkc, mkc, a, !!(access & KR_ACCESS_REMOTE_ATOMIC));
	KR_PRM_SET(mkc, mkc, qpn, 0xffffff); /* not bound to a QP */
	KR_PRM_SET(mkc, mkc, mkey_7_0, variant);
	KR_PRM_SET(mkc, mkc, pd, pd->pdn);
	KR_PRM_SET64(mkc, mkc, start_addr, iova);
	KR_PRM_SET64(mkc, mkc, len, len);
	KR_PRM_SET(mkc, mkc, length64, 0);
	KR_PRM_SET(mkc, mkc, translations_octword_size, octwords);
	/* mkc.log_page_size is absolute (log2 bytes), unlike cqc/qpc's 4K-relative one. */
	KR_PRM_SET(mkc, mkc, log_page_size, KR_MR_PAGE_SHIFT);
}

/* kr_devx_mr_reg() - kr_devx_mr_reg_iova() with the buffer's own address as IOVA. */
int kr_devx_mr_reg(struct kr_devx_ctx *ctx, const struct kr_devx_pd *pd, void *addr, size_t len,
		   uint32_t access, struct kr_devx_mr *mr)
{
	return kr_devx_mr_reg_iova(ctx, pd, addr, len, (uintptr_t)addr, access, mr);
}

/*
 * kr_devx_mr_reg_iova() - register [addr, addr+len) with access (KR_ACCESS_*)
 * under the IO virtual addresses [iova, iova+len) (mkc.start_addr): what
 * requests name, e.g. where another process maps the same pages. iova and
 * addr must share their offset in a 4 KiB page (one MTT entry per page).
 * Returns 0, -EINVAL (NULL arguments, len 0, unknown access bits, remote write
 * or atomic without local write as in verbs, page offsets differing), -ENOMEM,
 * -EREMOTEIO (ctx->last_err set) or a backend errno from the umem registration.
 */
int kr_devx_mr_reg_iova(struct kr_devx_ctx *ctx, const struct kr_devx_pd *pd, void *addr,
			size_t len, uint64_t iova, uint32_t access, struct kr_devx_mr *mr)
{
	uint8_t in[KR_PRM_BYTES(create_mkey_in)] = {0};
	uint8_t out[KR_PRM_BYTES(create_mkey_out)] = {0};
	struct kr_devx_umem *umem;
	struct kr_devx_obj *obj;
	uint8_t variant;
	uint32_t idx;
	int rc;

	if (!ctx || !pd || !pd->obj || !addr || !len || !mr || iova + len < iova ||
	    ((iova ^ (uintptr_t)addr) & (KR_MR_PAGE_SIZE - 1)))
		return -EINVAL;
	if ((access & ~KR_ACCESS_ALL) ||
	    ((access & (KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & KR_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	memset(mr, 0, sizeof(*mr));

	/* the umem pins pages with the rights the kernel takes; atomics are the mkey's */
	rc = ctx->ops->umem_reg(ctx, addr, len, access & KR_ACCESS_UMEM, &umem);
	if (rc) {
		KR_ERR("devx", "%s: umem registration of %zu bytes failed: errno %d", ctx->name,
		       len, -rc);
		return rc;
	}
	if (!ctx->mkey_last && !(ctx->mkey_last = calloc(KR_MR_LAST_SLOTS, 1))) {
		rc = -ENOMEM;
		goto err_dereg_umem;
	}
	variant = kr_mr_variant(0);
	/* a key freed and its index given again must not come back as the same
	 * key: an rkey held by an old peer would reach the new region */
	for (int tries = 0;; tries++) {
		kr_mr_build(in, pd, umem->id, iova, len, access, variant);
		rc = kr_devx_cmd_create(ctx, in, sizeof(in), out, sizeof(out), &obj);
		if (rc)
			goto err_dereg_umem;
		idx = KR_PRM_GET(create_mkey_out, out, mkey_index);
		if (ctx->mkey_last[idx % KR_MR_LAST_SLOTS] != variant || tries == 3)
			break;
		rc = kr_devx_cmd_destroy(obj);
		if (rc)
			goto err_dereg_umem;
		variant = kr_mr_variant(variant);
	}
	ctx->mkey_last[idx % KR_MR_LAST_SLOTS] = variant;
	mr->obj = obj;
	mr->umem = umem;
	mr->addr = (void *)(uintptr_t)iova;
	mr->len = len;
	mr->lkey = (idx << 8) | variant;
	mr->rkey = mr->lkey;
	mr->access = access;
	return 0;

err_dereg_umem:
	ctx->ops->umem_dereg(umem);
	return rc;
}

/*
 * kr_devx_mr_dereg() - destroy the key, then release the umem. Returns 0,
 * -EINVAL, or the errno of the step that failed (the key failing leaves mr
 * valid; the umem failing leaves only mr->umem).
 */
int kr_devx_mr_dereg(struct kr_devx_mr *mr)
{
	struct kr_devx_ctx *ctx;
	int rc;

	if (!mr || !mr->umem)
		return -EINVAL;
	ctx = mr->obj ? mr->obj->ctx : mr->umem->ctx;
	if (mr->obj) {
		rc = kr_devx_cmd_destroy(mr->obj);
		if (rc)
			return rc;
		mr->obj = NULL;
	}
	rc = ctx->ops->umem_dereg(mr->umem);
	if (rc) {
		KR_ERR("devx", "%s: umem deregistration failed: errno %d", ctx->name, -rc);
		return rc;
	}
	memset(mr, 0, sizeof(*mr));
	return 0;
}
