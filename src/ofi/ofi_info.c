/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_getinfo for krcore: one fi_info, an RDM endpoint with what Open MPI's
 * mtl/ofi asks of a provider (tagged messages, directed receives, local and
 * remote peers, send-after-send order, 4 bytes of CQ data, both AV types),
 * RMA and atomics (ofi_rma.c), or nothing (-FI_ENODATA) when the hints ask
 * for what it does not offer.
 *
 * Memory: buffers need no registration (mr_mode 0; before API 1.5,
 * FI_MR_SCALABLE): the provider copies through its heap; a region peers
 * reach has a key the application picks (ofi_mr.c). Modes: FI_CONTEXT
 * and FI_CONTEXT2 only when the application offers them; the provider
 * keeps its own state otherwise. Addresses: struct kr_ofi_addr
 * (FI_FORMAT_UNSPEC); node and service name nothing krcore resolves, so
 * they are ignored (an endpoint's address comes from fi_getname). No keeper
 * socket on this node: no offer.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/abi.h"
#include "ofi/ofi.h"

/*
 * Installed in libfabric's provider directory, krcore is seen by every
 * libfabric program of the machine, and one that took the first provider
 * offered would fail at fi_domain on a node without a keeper. So krcore
 * offers nothing when this process's keeper socket (KR_KEEPER_SOCKET, or
 * the default) is not there.
 */
static bool keeper_here(void)
{
	const char *sock = kr_msg_socket_default();

	if (!access(sock, F_OK))
		return true;
	FI_INFO(&kr_ofi_prov, FI_LOG_CORE, "no krpoold socket at %s: no offer\n", sock);
	return false;
}

/* The hints ask for nothing this provider lacks. */
static bool info_fits(uint32_t version, const struct fi_info *h)
{
	const struct fi_ep_attr *ep = h->ep_attr;
	const struct fi_domain_attr *d = h->domain_attr;
	const struct fi_fabric_attr *f = h->fabric_attr;

	if (h->caps & ~KR_OFI_CAPS)
		return false;
	if (h->addr_format != FI_FORMAT_UNSPEC)
		return false;
	if (ep && ep->type != FI_EP_UNSPEC && ep->type != FI_EP_RDM)
		return false;
	if (ep && ep->max_msg_size > KR_OFI_MSG_MAX)
		return false;
	if (h->tx_attr && (h->tx_attr->caps & ~KR_OFI_CAPS))
		return false;
	if (h->rx_attr && (h->rx_attr->caps & ~KR_OFI_CAPS))
		return false;
	if (h->tx_attr && (h->tx_attr->msg_order & ~(uint64_t)FI_ORDER_SAS))
		return false;
	if (h->rx_attr && (h->rx_attr->msg_order & ~(uint64_t)FI_ORDER_SAS))
		return false;
	if (d && d->name && strcmp(d->name, KR_OFI_NAME))
		return false;
	if (d && d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_MAP && d->av_type != FI_AV_TABLE)
		return false;
	if (d && d->cq_data_size > 4)
		return false;
	if (d && version >= FI_VERSION(1, 5) && (d->mr_mode & FI_MR_BASIC))
		return false; /* a bitmask from 1.5 on: the old enum values mean nothing */
	if (f && f->name && strcmp(f->name, KR_OFI_NAME))
		return false;
	if (f && f->prov_name && strcmp(f->prov_name, KR_OFI_NAME))
		return false;
	return true;
}

/* Fill info (from fi_allocinfo) with the provider's offer, narrowed by hints h (or NULL). */
static int info_fill(uint32_t version, const struct fi_info *h, struct fi_info *i)
{
	uint64_t ctx_mode = FI_CONTEXT | FI_CONTEXT2;

	i->caps = h && h->caps ? h->caps : KR_OFI_CAPS;
	i->mode = h && (h->mode & ctx_mode) == ctx_mode ? ctx_mode : 0;
	i->addr_format = FI_FORMAT_UNSPEC;

	i->tx_attr->caps = i->caps;
	i->tx_attr->mode = i->mode;
	i->tx_attr->op_flags = h && h->tx_attr ? h->tx_attr->op_flags & FI_COMPLETION : 0;
	i->tx_attr->msg_order = FI_ORDER_SAS;
	i->tx_attr->comp_order = FI_ORDER_NONE;
	i->tx_attr->inject_size = KR_OFI_INLINE; /* the provider's header rides along */
	i->tx_attr->size = KR_OFI_QUEUE;
	i->tx_attr->iov_limit = 1;
	i->tx_attr->rma_iov_limit = 1;

	i->rx_attr->caps = i->caps;
	i->rx_attr->mode = i->mode;
	i->rx_attr->op_flags = h && h->rx_attr ? h->rx_attr->op_flags & FI_COMPLETION : 0;
	i->rx_attr->msg_order = FI_ORDER_SAS;
	i->rx_attr->comp_order = FI_ORDER_NONE;
	i->rx_attr->size = KR_OFI_QUEUE;
	i->rx_attr->iov_limit = 1;

	i->ep_attr->type = FI_EP_RDM;
	i->ep_attr->protocol = FI_PROTO_UNSPEC;
	i->ep_attr->protocol_version = 1;
	i->ep_attr->max_msg_size = KR_OFI_MSG_MAX;
	i->ep_attr->mem_tag_format =
	    ~0ull; /* every bit of a tag matches (none kept for the provider) */
	i->ep_attr->tx_ctx_cnt = 1;
	i->ep_attr->rx_ctx_cnt = 1;

	i->domain_attr->threading = h && h->domain_attr && h->domain_attr->threading
					? h->domain_attr->threading
					: FI_THREAD_SAFE;
	i->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	i->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	i->domain_attr->resource_mgmt = FI_RM_ENABLED;
	i->domain_attr->av_type =
	    h && h->domain_attr && h->domain_attr->av_type ? h->domain_attr->av_type : FI_AV_UNSPEC;
	i->domain_attr->mr_mode = version >= FI_VERSION(1, 5) ? 0 : FI_MR_SCALABLE;
	i->domain_attr->mr_key_size = 8; /* the application's keys, any 64 bits (ofi_mr.c) */
	i->domain_attr->cq_data_size = 4;
	i->domain_attr->cq_cnt = 64;
	i->domain_attr->cntr_cnt = 64;
	i->domain_attr->ep_cnt = 64;
	i->domain_attr->tx_ctx_cnt = 1;
	i->domain_attr->rx_ctx_cnt = 1;
	i->domain_attr->max_ep_tx_ctx = 1;
	i->domain_attr->max_ep_rx_ctx = 1;
	i->domain_attr->mr_iov_limit = 1;
	i->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	i->domain_attr->name = strdup(KR_OFI_NAME);

	i->fabric_attr->name = strdup(KR_OFI_NAME);
	i->fabric_attr->prov_version = KR_OFI_VERSION;
	i->fabric_attr->api_version = version;
	return i->domain_attr->name && i->fabric_attr->name ? 0 : -FI_ENOMEM;
}

/* kr_ofi_getinfo() - see ofi.h. */
int kr_ofi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		   const struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *i;
	int rc;

	(void)node; /* nothing to resolve: an endpoint's address comes from fi_getname */
	(void)service;
	(void)flags;
	if (!info)
		return -FI_EINVAL;
	*info = NULL;
	if (version > KR_OFI_API || (hints && !info_fits(version, hints)) || !keeper_here())
		return -FI_ENODATA;
	i = fi_allocinfo();
	if (!i)
		return -FI_ENOMEM;
	rc = info_fill(version, hints, i);
	if (rc) {
		fi_freeinfo(i);
		return rc;
	}
	*info = i;
	return 0;
}
