/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sharing a device between the keeper (which opened it and issues every
 * firmware command) and its jobs (which only write WQEs and ring doorbells).
 * rdma-core 44 cannot share DEVX objects across processes, so what a job
 * receives is one UAR page: a descriptor of the page alone where the backend
 * has one (KR_DEVX_BE_UAR_FD); on hardware the command fd when the keeper
 * trusts its jobs (devx_hw_share.c). Under kmod-min a job maps each leased
 * DCI's own UAR page through the module instead and wraps it
 * (kr_devx_uar_wrap); on hardware it then holds no descriptor of the device
 * at all. The view itself comes from the backend that serves the device's
 * name (kr_devx_import, devx_backend.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "devx/devx.h"

int kr_devx_uar_export(struct kr_devx_uar *uar, int *fd, struct kr_devx_uar_ref *ref)
{
	if (!uar || !uar->ctx || !fd || !ref)
		return -EINVAL;
	return uar->ctx->ops->uar_export(uar, fd, ref);
}

int kr_devx_uar_import(struct kr_devx_ctx *ctx, uint32_t page_id, struct kr_devx_uar **uar)
{
	if (!ctx || !uar)
		return -EINVAL;
	return ctx->ops->uar_import(ctx, page_id, uar);
}

int kr_devx_uar_wrap(struct kr_devx_ctx *ctx, uint32_t page_id, void *page, uint32_t reg_off,
		     uint32_t bf_size, struct kr_devx_uar **uar)
{
	if (!ctx || !page || !uar || ((uintptr_t)page & 4095))
		return -EINVAL;
	return ctx->ops->uar_wrap(ctx, page_id, page, reg_off, bf_size, uar);
}

void kr_devx_uar_unimport(struct kr_devx_uar *uar)
{
	free(uar);
}
