/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A ConnectX as a job sees it: the doorbell page it was given, mapped from
 * the keeper's command fd (--trusted) or by kmod-min, and rung with plain
 * stores; every command refused (devx_hw_share.c says how the page comes).
 * No rdma-core call here, nor in anything a job links: its binary does not
 * load libibverbs, libmlx5 and libnl (~0.3 ms of every exec on the 2-vCPU
 * VM). The doorbell stores are the keeper's too (devx_hw.c's ops).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devx/devx.h"
#include "common/kr_barrier.h"
#include "common/kr_log.h"

void kr_devx_hw_doorbell(struct kr_devx_uar *uar, uint64_t val)
{
	/* the record goes out first: the page may be write-combining, a
	 * BlueFlame page or one a tenant's jobs only ring (tenant_uar_alloc) */
	kr_wc_start();
	/* One 8-byte store: the HCA must never see half a doorbell. */
	*(volatile uint64_t *)((uint8_t *)uar->reg_addr + uar->bf_off) = val;
	kr_flush_after_doorbell();
	uar->bf_off ^= uar->bf_size;
}

/*
 * BlueFlame: the WQE itself goes to the register's next buffer in 8-byte
 * stores, which the write-combining page merges into 64-byte writes; the
 * HCA takes it from there instead of reading the send queue. Flushed before
 * the buffers flip, as rdma-core's post_send does.
 */
void kr_devx_hw_bf_copy(struct kr_devx_uar *uar, const void *wqe, uint32_t len)
{
	volatile uint64_t *dst = (volatile uint64_t *)((uint8_t *)uar->reg_addr + uar->bf_off);
	const uint64_t *src = wqe;

	kr_wc_start();
	for (uint32_t i = 0; i < len / 8u; i++)
		dst[i] = src[i];
	kr_flush_after_doorbell();
	uar->bf_off ^= uar->bf_size;
}

struct kr_hw_view {
	struct kr_devx_ctx ctx; /* first: ctx->priv points back */
	int fd;
	struct kr_devx_uar_ref ref;
	void *page;
	size_t page_len;
};

/* The doorbell register lies in the page, 8-byte aligned. */
static bool hw_reg_off_ok(uint64_t reg_off, size_t page_len)
{
	return reg_off + 8u <= page_len && !(reg_off & 7);
}

static void view_close(struct kr_devx_ctx *ctx)
{
	struct kr_hw_view *v = ctx->priv;

	if (v->page)
		munmap(v->page, v->page_len);
	if (v->fd >= 0)
		close(v->fd);
	free(v);
}

static const struct kr_devx_ops kr_hw_view_ops =
    KR_DEVX_VIEW_OPS(kr_devx_hw_doorbell, kr_devx_hw_bf_copy, view_close, kr_devx_view_no_export,
		     kr_devx_hw_uar_import, kr_devx_hw_uar_wrap);

int kr_devx_hw_import(const char *name, int fd, const struct kr_devx_uar_ref *ref,
		      struct kr_devx_ctx **ctx)
{
	long page = sysconf(_SC_PAGESIZE);
	struct kr_hw_view *v;

	if (!ref || page <= 0 || !hw_reg_off_ok(ref->reg_off, (size_t)page))
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->ctx.ops = &kr_hw_view_ops;
	kr_devx_name_set(&v->ctx, name, "mlx5");
	v->ctx.backend = &kr_devx_hw_view_backend;
	v->ctx.priv = v;
	v->fd = fd;
	v->ref = *ref;
	v->page_len = (size_t)page;
	*ctx = &v->ctx;
	return 0;
}

static int hw_uar_new(struct kr_devx_ctx *ctx, uint32_t page_id, void *page, uint32_t reg_off,
		      struct kr_devx_uar **uar)
{
	struct kr_devx_uar *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	u->ctx = ctx;
	u->page_id = page_id;
	u->base_addr = page;
	u->reg_addr = (uint8_t *)page + reg_off;
	u->shared_fd = -1;
	*uar = u;
	return 0;
}

/*
 * kmod-min mapped the page (device memory, with the caching of the keeper's
 * mapping: write-combining for a BlueFlame page); ring it. Both BlueFlame
 * buffers (reg_off, reg_off + bf_size) must lie in the page.
 */
int kr_devx_hw_uar_wrap(struct kr_devx_ctx *ctx, uint32_t page_id, void *page, uint32_t reg_off,
			uint32_t bf_size, struct kr_devx_uar **uar)
{
	struct kr_hw_view *v = ctx->priv;
	int rc;

	if (!hw_reg_off_ok(reg_off, v->page_len) || (bf_size & 63) ||
	    (uint64_t)reg_off + 2ull * bf_size > v->page_len)
		return -EINVAL;
	rc = hw_uar_new(ctx, page_id, page, reg_off, uar);
	if (!rc)
		(*uar)->bf_size = bf_size;
	return rc;
}

int kr_devx_hw_uar_import(struct kr_devx_ctx *ctx, uint32_t page_id, struct kr_devx_uar **uar)
{
	struct kr_hw_view *v = ctx->priv;

	if (v->fd < 0) /* fenced: no descriptor to map a page from */
		return -EPERM;
	if (page_id != v->ref.page_id)
		return -EINVAL;
	if (!v->page) {
		/* doorbells are stores: the page is mapped write-only */
		void *p =
		    mmap(NULL, v->page_len, PROT_WRITE, MAP_SHARED, v->fd, (off_t)v->ref.mmap_off);

		if (p == MAP_FAILED) {
			int rc = -errno;

			KR_ERR("devx", "%s: mapping UAR page %u failed: errno %d", ctx->name,
			       page_id, -rc);
			return rc;
		}
		v->page = p;
	}
	return hw_uar_new(ctx, page_id, v->page, v->ref.reg_off, uar);
}

/*
 * A ConnectX: UAR pages are device MMIO, mapped from the command fd (which
 * a job gets only from a --trusted keeper), and the device never sleeps.
 */
const struct kr_devx_backend kr_devx_hw_view_backend = {
    .name = "hw",
    .caps = KR_DEVX_BE_UAR_MMIO,
    .import = kr_devx_hw_import,
};
