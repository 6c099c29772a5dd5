/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains: ALLOC_PD as a DEVX object, so that destroying the object
 * (or closing the device) deallocates it.
 */
#include <errno.h>
#include <string.h>

#include "devx/devx.h"

/*
 * kr_devx_pd_alloc() - allocate a PD. Returns 0, -EINVAL, -ENOMEM,
 * -EREMOTEIO (ctx->last_err set) or a backend errno.
 */
int kr_devx_pd_alloc(struct kr_devx_ctx *ctx, struct kr_devx_pd *pd)
{
	uint8_t in[KR_PRM_BYTES(alloc_pd_in)] = {0};
	uint8_t out[KR_PRM_BYTES(alloc_pd_out)] = {0};
	struct kr_devx_obj *obj;
	int rc;

	if (!ctx || !pd)
		return -EINVAL;
	memset(pd, 0, sizeof(*pd));
	KR_PRM_SET(alloc_pd_in, in, opcode, KR_CMD_OP_ALLOC_PD);
	rc = kr_devx_cmd_create(ctx, in, sizeof(in), out, sizeof(out), &obj);
	if (rc)
		return rc;
	pd->obj = obj;
	pd->pdn = KR_PRM_GET(alloc_pd_out, out, pd);
	return 0;
}

/*
 * kr_devx_pd_free() - deallocate a PD no object uses any more. Returns 0,
 * -EINVAL, -EREMOTEIO/-EBUSY (still in use; pd stays valid) or a backend errno.
 */
int kr_devx_pd_free(struct kr_devx_pd *pd)
{
	int rc;

	if (!pd || !pd->obj)
		return -EINVAL;
	rc = kr_devx_cmd_destroy(pd->obj);
	if (rc)
		return rc;
	memset(pd, 0, sizeof(*pd));
	return 0;
}
