/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sharing a device between the keeper (which opened it and issues every
 * firmware command) and its jobs (which only write WQEs and ring doorbells).
 * rdma-core 44 cannot share DEVX objects across processes, so what a job
 * receives is one UAR page: on the sim its memfd; on hardware the command
 * fd when the keeper trusts its jobs (devx_hw_share.c). Under kmod-min a
 * job maps each leased DCI's own UAR page through the module instead and
 * wraps it (kr_devx_uar_wrap); on hardware it then holds no descriptor of
 * the device at all.
 */
#include <errno.h>
#include <stdlib.h>

#include "devx/devx.h"
#include "sim/sim.h"

int kr_devx_uar_export(struct kr_devx_uar *uar, int *fd, struct kr_devx_uar_ref *ref)
{
	int rc;

	if (!uar || !uar->ctx || !fd || !ref)
		return -EINVAL;
	if (!uar->ctx->is_sim)
		return kr_devx_hw_uar_export(uar, fd, ref);
	rc = sim_uar_export(uar);
	if (rc < 0)
		return rc;
	*fd = rc;
	*ref = (struct kr_devx_uar_ref){.page_id = uar->page_id};
	return 0;
}

int kr_devx_import(const char *name, int fd, bool is_sim, const struct kr_devx_uar_ref *ref,
		   struct kr_devx_ctx **ctx)
{
	if (!ctx || (fd < 0 && is_sim))
		return -EINVAL;
	if (!is_sim)
		return kr_devx_hw_import(name, fd, ref, ctx);
	return sim_attach_fd(fd, name, ctx);
}

int kr_devx_uar_import(struct kr_devx_ctx *ctx, uint32_t page_id, struct kr_devx_uar **uar)
{
	if (!ctx || !uar)
		return -EINVAL;
	if (!ctx->is_sim)
		return kr_devx_hw_uar_import(ctx, page_id, uar);
	return sim_uar_import(ctx, page_id, uar);
}

int kr_devx_uar_wrap(struct kr_devx_ctx *ctx, uint32_t page_id, void *page, uint32_t reg_off,
		     uint32_t bf_size, struct kr_devx_uar **uar)
{
	if (!ctx || !page || !uar || ((uintptr_t)page & 4095))
		return -EINVAL;
	if (!ctx->is_sim)
		return kr_devx_hw_uar_wrap(ctx, page_id, page, reg_off, bf_size, uar);
	return sim_uar_wrap(ctx, page_id, page, reg_off, bf_size, uar);
}

void kr_devx_uar_unimport(struct kr_devx_uar *uar)
{
	free(uar);
}
