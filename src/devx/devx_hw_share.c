/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A ConnectX shared with jobs that the keeper trusts (krpoold --trusted).
 *
 * A QP created in the keeper's DEVX context is rung through a UAR page of
 * that context, and the kernel maps such a page only through the context's
 * command fd, at the offset mlx5dv_devx_alloc_uar reports (mmap_off), as
 * rdma-core maps every UAR. So the job receives a duplicate of the command
 * fd and (page_id, doorbell offset, mmap offset), maps that one page
 * write-only and rings it. Holding the fd, a job could issue any DEVX
 * command as the keeper: this is why it takes --trusted. With kmod-min the
 * job gets no fd: each leased DCI has a UAR page of its own, which the
 * module maps into its holder (doc/hardware.md), and the view rings what
 * it is given (kr_devx_hw_uar_wrap). The view refuses every command (-EPERM).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "devx/devx.h"
#include "common/kr_log.h"

struct kr_hw_view {
	struct kr_devx_ctx ctx; /* first: ctx->priv points back */
	int fd;
	struct kr_devx_uar_ref ref;
	void *page;
	size_t page_len;
};

int kr_devx_hw_uar_export(struct kr_devx_uar *uar, int *fd, struct kr_devx_uar_ref *ref)
{
	const struct mlx5dv_devx_uar *dv = uar->priv;

	if (!uar->ctx->share_cmd_fd)
		return -EOPNOTSUPP;
	if (uar->shared_fd < 0) {
		uar->shared_fd = fcntl(kr_devx_hw_cmd_fd(uar->ctx), F_DUPFD_CLOEXEC, 0);
		if (uar->shared_fd < 0)
			return -errno;
	}
	*fd = uar->shared_fd;
	ref->page_id = uar->page_id;
	ref->reg_off = (uint32_t)((uintptr_t)uar->reg_addr - (uintptr_t)uar->base_addr);
	ref->mmap_off = (uint64_t)dv->mmap_off;
	return 0;
}

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
    KR_DEVX_VIEW_OPS(kr_devx_hw_doorbell, kr_devx_hw_bf_copy, view_close, kr_devx_hw_uar_export,
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
	snprintf(v->ctx.name, sizeof(v->ctx.name), "%s", name ? name : "mlx5");
	v->ctx.backend = &kr_devx_hw_backend;
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
