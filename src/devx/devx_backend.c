/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The backends that serve device names, and what a job needs of a device
 * without opening one: a doorbell-only view (kr_devx_import) and its close.
 * A name that begins with an added backend's prefix is that backend's; any
 * other is a ConnectX, whose view (devx_hw_view.c) maps a page and rings it.
 * Nothing here reaches rdma-core, so a job's binary loads none of it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"

#define KR_DEVX_MAX_BACKENDS 4u

/*
 * Added backends. Written by kr_devx_backend_add under the lock; read
 * without it (a slot, once filled, only ever changes to a backend of the
 * same prefix that can open, and pointers are stored whole).
 */
static const struct kr_devx_backend *kr_backends[KR_DEVX_MAX_BACKENDS];
static pthread_mutex_t kr_backends_lock = PTHREAD_MUTEX_INITIALIZER;

/* kr_devx_backend_add() - see devx.h. */
int kr_devx_backend_add(const struct kr_devx_backend *be)
{
	int rc = -ENOSPC;
	uint32_t i;

	if (!be || !be->prefix || !be->prefix[0])
		return -EINVAL;
	pthread_mutex_lock(&kr_backends_lock);
	for (i = 0; i < KR_DEVX_MAX_BACKENDS && kr_backends[i]; i++) {
		if (strcmp(kr_backends[i]->prefix, be->prefix))
			continue;
		if (be->open && !kr_backends[i]->open)
			__atomic_store_n(&kr_backends[i], be, __ATOMIC_RELEASE);
		rc = 0;
		goto out;
	}
	if (i < KR_DEVX_MAX_BACKENDS) {
		__atomic_store_n(&kr_backends[i], be, __ATOMIC_RELEASE);
		rc = 0;
	}
out:
	pthread_mutex_unlock(&kr_backends_lock);
	return rc;
}

/* kr_devx_backend_at() - see devx.h. */
const struct kr_devx_backend *kr_devx_backend_at(uint32_t i)
{
	return i < KR_DEVX_MAX_BACKENDS ? __atomic_load_n(&kr_backends[i], __ATOMIC_ACQUIRE) : NULL;
}

/* kr_devx_backend_added() - see devx.h. */
const struct kr_devx_backend *kr_devx_backend_added(const char *name)
{
	const struct kr_devx_backend *be;

	for (uint32_t i = 0; (be = kr_devx_backend_at(i)); i++)
		if (!strncmp(name, be->prefix, strlen(be->prefix)))
			return be;
	return NULL;
}

/* kr_devx_import() - see devx.h. */
int kr_devx_import(const char *name, int fd, const struct kr_devx_uar_ref *ref,
		   struct kr_devx_ctx **ctx)
{
	const struct kr_devx_backend *be;

	if (!ctx || !name)
		return -EINVAL;
	be = kr_devx_backend_added(name);
	if (!be) /* a ConnectX's view: no rdma-core in the job (devx_hw_view.c) */
		be = &kr_devx_hw_view_backend;
	return be->import(name, fd, ref, ctx);
}

/*
 * kr_devx_close() - close a device opened by kr_devx_open, or a view from
 * kr_devx_import. Every object created on it must have been destroyed first.
 */
void kr_devx_close(struct kr_devx_ctx *ctx)
{
	if (!ctx)
		return;
	free(ctx->rsc);
	ctx->rsc = NULL;
	ctx->rsc_cap = 0;
	free(ctx->mkey_last);
	ctx->mkey_last = NULL;
	ctx->ops->close(ctx);
}
