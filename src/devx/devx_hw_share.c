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
 *
 * This file is the keeper's side (export); the job's is devx_hw_view.c.
 */
#include <errno.h>
#include <fcntl.h>

#include <infiniband/mlx5dv.h>

#include "devx/devx.h"

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
