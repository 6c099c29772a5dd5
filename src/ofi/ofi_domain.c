/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Domains: the process's keeper attach (kr_attach(3): KR_KEEPER_SOCKET,
 * KR_LAUNCH_KEY), made by the first domain and shared by every domain the
 * process opens, detached when the last one closes. A domain still holding
 * objects refuses to close (-FI_EBUSY), as fi_close(3) asks. Registrations:
 * ofi_mr.c; counters: ofi_cntr.c; atomics it applies: ofi_atomic.c; the
 * provider's own operations (heap memory): ofi_domain_ops.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ofi/ofi.h"

/* The process's attach and how many domains hold it. */
static pthread_mutex_t g_attach_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kr_ctx *g_ctx;
static uint32_t g_domains;

/*
 * DCIs the provider's thread spreads its vQPs over, unless KR_DCIS_PER_THREAD
 * says otherwise: an MPI rank drives every peer from one thread, and the
 * ranks of a node share their tenant's DCIs (krpoold --dcis); eight each
 * would take a node's pool with a few ranks.
 */
#define KR_OFI_DCIS_PER_THREAD 2u

static int attach_hold(struct kr_ctx **ctx)
{
	struct kr_attach_opts o = {0};
	int rc = 0;

	if (!getenv("KR_DCIS_PER_THREAD"))
		o.dcis_per_thread = KR_OFI_DCIS_PER_THREAD;
	pthread_mutex_lock(&g_attach_lock);
	if (!g_ctx) {
		g_ctx = kr_attach(&o);
		if (!g_ctx) {
			rc = errno;
			FI_WARN(&kr_ofi_prov, FI_LOG_DOMAIN, "kr_attach: %s\n", strerror(rc));
		}
	}
	if (g_ctx) {
		g_domains++;
		*ctx = g_ctx;
	}
	pthread_mutex_unlock(&g_attach_lock);
	return -rc;
}

static void attach_drop(void)
{
	pthread_mutex_lock(&g_attach_lock);
	if (g_domains && !--g_domains) {
		kr_detach(g_ctx);
		g_ctx = NULL;
	}
	pthread_mutex_unlock(&g_attach_lock);
}

static int domain_close(struct fid *fid)
{
	struct kr_ofi_domain *d = container_of(fid, struct kr_ofi_domain, dom.fid);

	pthread_mutex_lock(&d->lock);
	if (d->refs) {
		pthread_mutex_unlock(&d->lock);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_destroy(&d->lock);
	attach_drop();
	free(d);
	return 0;
}

static int domain_scalable_ep(struct fid_domain *dom, struct fi_info *info, struct fid_ep **sep,
			      void *context)
{
	(void)dom;
	(void)info;
	(void)sep;
	(void)context;
	return -FI_ENOSYS; /* one tx and one rx context per endpoint */
}

static int domain_poll_open(struct fid_domain *dom, struct fi_poll_attr *attr,
			    struct fid_poll **pollset)
{
	(void)dom;
	(void)attr;
	(void)pollset;
	return -FI_ENOSYS;
}

static int domain_stx_ctx(struct fid_domain *dom, struct fi_tx_attr *attr, struct fid_stx **stx,
			  void *context)
{
	(void)dom;
	(void)attr;
	(void)stx;
	(void)context;
	return -FI_ENOSYS;
}

static int domain_srx_ctx(struct fid_domain *dom, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
			  void *context)
{
	(void)dom;
	(void)attr;
	(void)rx_ep;
	(void)context;
	return -FI_ENOSYS;
}

static int domain_query_collective(struct fid_domain *dom, enum fi_collective_op coll,
				   struct fi_collective_attr *attr, uint64_t flags)
{
	(void)dom;
	(void)coll;
	(void)attr;
	(void)flags;
	return -FI_ENOSYS;
}

static int domain_endpoint2(struct fid_domain *dom, struct fi_info *info, struct fid_ep **ep,
			    uint64_t flags, void *context)
{
	return flags ? -FI_EBADFLAGS : kr_ofi_ep_open(dom, info, ep, context);
}

static struct fi_ops domain_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = domain_close,
    .bind = kr_ofi_no_bind,
    .control = kr_ofi_no_control,
    .ops_open = kr_ofi_domain_ops_open, /* FI_KRCORE_DOMAIN_OPS: heap memory */
    .tostr = kr_ofi_no_tostr,
    .ops_set = kr_ofi_no_ops_set,
};

static struct fi_ops_domain domain_ops = {
    .size = sizeof(struct fi_ops_domain),
    .av_open = kr_ofi_av_open,
    .cq_open = kr_ofi_cq_open,
    .endpoint = kr_ofi_ep_open,
    .scalable_ep = domain_scalable_ep,
    .cntr_open = kr_ofi_cntr_open,
    .poll_open = domain_poll_open,
    .stx_ctx = domain_stx_ctx,
    .srx_ctx = domain_srx_ctx,
    .query_atomic = kr_ofi_query_atomic,
    .query_collective = domain_query_collective,
    .endpoint2 = domain_endpoint2,
};

/* kr_ofi_domain_open() - see ofi.h. */
int kr_ofi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		       void *context)
{
	struct kr_ctx_attr attr;
	struct kr_ofi_domain *d;
	int rc;

	(void)fabric;
	if (!info || !dom)
		return -FI_EINVAL;
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, KR_OFI_NAME))
		return -FI_EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	rc = attach_hold(&d->ctx);
	if (!rc && (rc = kr_ctx_query(d->ctx, &attr)))
		attach_drop();
	if (rc) {
		free(d);
		return rc == -ENOENT ? -FI_ENOENT : rc;
	}
	d->node = attr.node;
	d->launch_tag = attr.launch_tag;
	d->host_cpu = attr.flags & KR_CTX_F_HOST_CPU;
	pthread_mutex_init(&d->lock, NULL);
	d->dom.fid.fclass = FI_CLASS_DOMAIN;
	d->dom.fid.context = context;
	d->dom.fid.ops = &domain_fi_ops;
	d->dom.ops = &domain_ops;
	d->dom.mr = &kr_ofi_mr_ops;
	*dom = &d->dom;
	return 0;
}
