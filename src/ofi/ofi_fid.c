/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What an object answers for an operation it does not have: -FI_ENOSYS, as
 * fi_*(3) says for an operation a provider does not support (libfabric's own
 * fi_no_* helpers are internal to it, not for external providers).
 */
#include "ofi/ofi.h"

int kr_ofi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid;
	(void)bfid;
	(void)flags;
	return -FI_ENOSYS;
}

int kr_ofi_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid;
	(void)command;
	(void)arg;
	return -FI_ENOSYS;
}

int kr_ofi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops, void *context)
{
	(void)fid;
	(void)name;
	(void)flags;
	(void)ops;
	(void)context;
	return -FI_ENOSYS;
}

int kr_ofi_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid;
	(void)buf;
	(void)len;
	return -FI_ENOSYS;
}

int kr_ofi_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context)
{
	(void)fid;
	(void)name;
	(void)flags;
	(void)ops;
	(void)context;
	return -FI_ENOSYS;
}
