/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fabric object: krcore has one fabric (the keepers' cluster); it opens
 * domains and event queues (ofi_eq.c: empty ones). No wait sets: progress is
 * manual.
 */
#include <stdlib.h>
#include <string.h>

#include "ofi/ofi.h"

struct kr_ofi_fabric {
	struct fid_fabric fab;
};

static int fabric_close(struct fid *fid)
{
	free(container_of(fid, struct kr_ofi_fabric, fab.fid));
	return 0;
}

static int fabric_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			    struct fid_wait **waitset)
{
	(void)fabric;
	(void)attr;
	(void)waitset;
	return -FI_ENOSYS;
}

static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric;
	(void)fids;
	(void)count;
	return -FI_ENOSYS;
}

static int fabric_passive_ep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
			     void *context)
{
	(void)fabric;
	(void)info;
	(void)pep;
	(void)context;
	return -FI_ENOSYS; /* RDM only: no connections to listen for */
}

static int fabric_domain2(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
			  uint64_t flags, void *context)
{
	return flags ? -FI_EBADFLAGS : kr_ofi_domain_open(fabric, info, dom, context);
}

static struct fi_ops fabric_fi_ops = KR_OFI_FI_OPS(fabric_close);

static struct fi_ops_fabric fabric_ops = {
    .size = sizeof(struct fi_ops_fabric),
    .domain = kr_ofi_domain_open,
    .passive_ep = fabric_passive_ep,
    .eq_open = kr_ofi_eq_open,
    .wait_open = fabric_wait_open,
    .trywait = fabric_trywait,
    .domain2 = fabric_domain2,
};

/* kr_ofi_fabric() - see ofi.h. */
int kr_ofi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	struct kr_ofi_fabric *f;

	if (!attr || !fabric)
		return -FI_EINVAL;
	if (attr->name && strcmp(attr->name, KR_OFI_NAME))
		return -FI_ENODATA;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -FI_ENOMEM;
	f->fab.fid.fclass = FI_CLASS_FABRIC;
	f->fab.fid.context = context;
	f->fab.fid.ops = &fabric_fi_ops;
	f->fab.ops = &fabric_ops;
	*fabric = &f->fab;
	return 0;
}
