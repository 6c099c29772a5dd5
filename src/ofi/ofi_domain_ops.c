/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The provider's own domain operations (include/krcore/fi_krcore.h), opened
 * with fi_open_ops(FI_KRCORE_DOMAIN_OPS): heap memory for the application,
 * which the NIC reaches, so a region registered over it is served by the
 * NIC (ofi_rma_direct.c) and local buffers in it are not copied; and how
 * many bytes of large messages went in place or through a copy.
 */
#include <errno.h>
#include <string.h>

#include <krcore/fi_krcore.h>

#include "ofi/ofi.h"

static void *heap_alloc(struct fid_domain *dom, size_t len)
{
	struct kr_ofi_domain *d;

	if (!dom || dom->fid.fclass != FI_CLASS_DOMAIN || !len) {
		errno = EINVAL;
		return NULL;
	}
	d = container_of(dom, struct kr_ofi_domain, dom);
	return kr_malloc(d->ctx, len);
}

static void heap_free(struct fid_domain *dom, void *p)
{
	if (dom && dom->fid.fclass == FI_CLASS_DOMAIN && p)
		kr_free(container_of(dom, struct kr_ofi_domain, dom)->ctx, p);
}

static int copy_stats(struct fid_domain *dom, struct fi_krcore_copy_stats *st)
{
	struct kr_ofi_domain *d;

	if (!dom || dom->fid.fclass != FI_CLASS_DOMAIN || !st)
		return -FI_EINVAL;
	d = container_of(dom, struct kr_ofi_domain, dom);
	pthread_mutex_lock(&d->lock);
	*st = d->copies;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

static struct fi_krcore_domain_ops domain_ext_ops = {
    .size = sizeof(struct fi_krcore_domain_ops),
    .heap_alloc = heap_alloc,
    .heap_free = heap_free,
    .copy_stats = copy_stats,
};

/* kr_ofi_domain_ops_open() - see ofi.h. */
int kr_ofi_domain_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
			   void *context)
{
	(void)context;
	if (!fid || !name || !ops)
		return -FI_EINVAL;
	if (strcmp(name, FI_KRCORE_DOMAIN_OPS))
		return -FI_ENOSYS;
	if (flags)
		return -FI_EBADFLAGS;
	*ops = &domain_ext_ops;
	return 0;
}
