/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sharing a device between the keeper (which opened it and issues every
 * firmware command) and its jobs (which only write WQEs and ring doorbells).
 * rdma-core 44 cannot share DEVX objects across processes, and a job must
 * never hold the device's command fd, so what a job receives is one UAR
 * page: on the sim its memfd; on hardware kmod-min maps the tenant's UAR
 * page (not driven by krpoold yet: -EOPNOTSUPP).
 */
#include <errno.h>
#include <stdlib.h>

#include "devx.h"
#include "sim/sim.h"

int kr_devx_uar_export(struct kr_devx_uar *uar, int *fd)
{
	int rc;

	if (!uar || !uar->ctx || !fd)
		return -EINVAL;
	if (!uar->ctx->is_sim)
		return -EOPNOTSUPP;
	rc = sim_uar_export(uar);
	if (rc < 0)
		return rc;
	*fd = rc;
	return 0;
}

int kr_devx_import(const char *name, int fd, bool is_sim, struct kr_devx_ctx **ctx)
{
	if (!ctx || fd < 0)
		return -EINVAL;
	if (!is_sim)
		return -EOPNOTSUPP;
	return sim_attach_fd(fd, name, ctx);
}

int kr_devx_uar_import(struct kr_devx_ctx *ctx, uint32_t page_id, struct kr_devx_uar **uar)
{
	if (!ctx || !uar)
		return -EINVAL;
	if (!ctx->is_sim)
		return -EOPNOTSUPP;
	return sim_uar_import(ctx, page_id, uar);
}

void kr_devx_uar_unimport(struct kr_devx_uar *uar)
{
	free(uar);
}
