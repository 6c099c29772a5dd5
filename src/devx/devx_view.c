/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a job's view of a device (of any backend) answers to everything
 * but a doorbell: -EPERM. Jobs never issue firmware commands through
 * krcore; the keeper publishes what they need to know in shared memory.
 */
#include <errno.h>

#include "devx/devx.h"

int kr_devx_view_no_cmd(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			size_t outlen)
{
	(void)ctx, (void)in, (void)inlen, (void)out, (void)outlen;
	return -EPERM;
}

int kr_devx_view_no_create(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			   size_t outlen, struct kr_devx_obj **obj)
{
	(void)ctx, (void)in, (void)inlen, (void)out, (void)outlen, (void)obj;
	return -EPERM;
}

int kr_devx_view_no_obj_cmd(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
			    size_t outlen)
{
	(void)obj, (void)in, (void)inlen, (void)out, (void)outlen;
	return -EPERM;
}

int kr_devx_view_no_destroy(struct kr_devx_obj *obj)
{
	(void)obj;
	return -EPERM;
}

int kr_devx_view_no_uar(struct kr_devx_ctx *ctx, uint32_t flags, struct kr_devx_uar **uar)
{
	(void)ctx, (void)flags, (void)uar;
	return -EPERM;
}

void kr_devx_view_free_uar(struct kr_devx_uar *uar)
{
	(void)uar; /* released by kr_devx_uar_unimport */
}

int kr_devx_view_no_eqn(struct kr_devx_ctx *ctx, uint32_t vector, uint32_t *eqn)
{
	(void)ctx, (void)vector, (void)eqn;
	return -EPERM;
}

int kr_devx_view_no_gid(struct kr_devx_ctx *ctx, uint8_t port, uint16_t index,
			struct kr_devx_gid_entry *entry)
{
	(void)ctx, (void)port, (void)index, (void)entry;
	return -EPERM; /* the keeper publishes the port's address in the tenant zone */
}

int kr_devx_view_no_lid(struct kr_devx_ctx *ctx, uint8_t port, uint16_t *lid)
{
	(void)ctx, (void)port, (void)lid;
	return -EPERM;
}

int kr_devx_view_no_umem_reg(struct kr_devx_ctx *ctx, void *addr, size_t size, uint32_t access,
			     struct kr_devx_umem **umem)
{
	(void)ctx, (void)addr, (void)size, (void)access, (void)umem;
	return -EPERM;
}

int kr_devx_view_no_umem_dereg(struct kr_devx_umem *umem)
{
	(void)umem;
	return -EPERM;
}

int kr_devx_view_no_export(struct kr_devx_uar *uar, int *fd, struct kr_devx_uar_ref *ref)
{
	(void)uar, (void)fd, (void)ref;
	return -EOPNOTSUPP;
}
