/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue memory: the buffer behind a CQ, QP or SRQ (rings and doorbell
 * record), either the caller's (shared or hugepage memory) or our own, zeroed
 * and registered as the one umem its create command names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_log.h"

/*
 * kr_devx_qmem_alloc() - use user_buf (KR_DEVX_QBUF_ALIGN aligned, size bytes
 * checked by the caller) or allocate size bytes, zero them and register them.
 * Returns 0, -ENOMEM, or the backend's errno; nothing is held on failure.
 */
int kr_devx_qmem_alloc(struct kr_devx_ctx *ctx, void *user_buf, size_t size, const char *what,
		       void **buf, bool *own_buf, struct kr_devx_umem **umem)
{
	void *p = user_buf;
	int rc;

	if (!p) {
		p = aligned_alloc(KR_DEVX_QBUF_ALIGN, size);
		if (!p)
			return -ENOMEM;
	}
	memset(p, 0, size);
	rc = ctx->ops->umem_reg(ctx, p, size, KR_ACCESS_LOCAL_WRITE, umem);
	if (rc) {
		KR_ERR("devx", "%s: %s umem registration failed: errno %d", ctx->name, what, -rc);
		if (!user_buf)
			free(p);
		return rc;
	}
	*buf = p;
	*own_buf = !user_buf;
	return 0;
}

/*
 * kr_devx_qmem_free() - deregister *umem (then NULL) and free buf if we own it.
 * Returns 0, or the deregistration errno: then nothing is freed, so the caller
 * can retry.
 */
int kr_devx_qmem_free(struct kr_devx_ctx *ctx, struct kr_devx_umem **umem, void *buf, bool own_buf,
		      const char *what)
{
	int rc;

	if (*umem) {
		rc = ctx->ops->umem_dereg(*umem);
		if (rc) {
			KR_ERR("devx", "%s: %s umem deregistration failed: errno %d", ctx->name,
			       what, -rc);
			return rc;
		}
		*umem = NULL;
	}
	if (own_buf)
		free(buf);
	return 0;
}
