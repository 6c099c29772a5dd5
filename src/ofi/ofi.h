/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The libfabric provider "krcore" (libkrcore-fi.so, loaded by libfabric from
 * its provider directory or FI_PROVIDER_PATH): RDM endpoints over krcore
 * vQPs and ports, for programs written against libfabric (Open MPI's
 * mtl/ofi, MPICH ch4:ofi, fabtests). Runs in the application's process, as
 * a krcore job: one keeper attach per process, shared by its domains.
 *
 *   ofi_prov.c    fi_prov_ini, the provider
 *   ofi_info.c    fi_getinfo: what the provider offers, matched to hints
 *   ofi_fabric.c  fabric objects
 *   ofi_domain.c  domains: the keeper attach
 *   ofi_av.c      address vectors: (node, port, launch) addresses
 *   ofi_fid.c     the answers of operations an object does not support
 */
#ifndef KR_OFI_H
#define KR_OFI_H

#include <pthread.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <krcore/krcore.h>

#define KR_OFI_NAME	"krcore"
#define KR_OFI_VERSION	FI_VERSION(0, 1)
#define KR_OFI_API	FI_VERSION(1, 17) /* the libfabric it is built for */
#define KR_OFI_MSG_MAX	(64ull << 20)	  /* largest message (copied through the heap) */
#define KR_OFI_QUEUE	256u		  /* tx and rx operations outstanding per endpoint */

/*
 * An endpoint's address, what fi_getname gives and fi_av_insert takes: a
 * peer reaches it with no handshake (the node's keeper, the port the
 * endpoint bound there, the launch both belong to).
 */
struct kr_ofi_addr {
	uint32_t node;	     /* krcore node id, 0: none */
	uint16_t port;	     /* the endpoint's krcore port on that node */
	uint16_t rsvd;	     /* 0 */
	uint64_t launch_tag; /* the job's launch (kr_ctx_attr.launch_tag) */
};

extern struct fi_provider kr_ofi_prov;

/* ofi_info.c: fi_getinfo for the provider. */
int kr_ofi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		   const struct fi_info *hints, struct fi_info **info);
/* The capabilities the provider offers. */
#define KR_OFI_CAPS                                                                                \
	(FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM |                 \
	 FI_DIRECTED_RECV)

/* ofi_fabric.c */
int kr_ofi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);

/* ofi_domain.c */
struct kr_ofi_domain {
	struct fid_domain dom;
	struct kr_ctx *ctx; /* the process's attach, shared by its domains */
	uint32_t node;
	uint64_t launch_tag;
	uint32_t refs; /* AVs and (later) endpoints, CQs open on it */
	pthread_mutex_t lock;
};
int kr_ofi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		       void *context);

/* ofi_av.c */
int kr_ofi_av_open(struct fid_domain *dom, struct fi_av_attr *attr, struct fid_av **av,
		   void *context);

/* ofi_fid.c: what an object answers for an operation it does not have. */
int kr_ofi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int kr_ofi_no_control(struct fid *fid, int command, void *arg);
int kr_ofi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
		       void *context);
int kr_ofi_no_tostr(const struct fid *fid, char *buf, size_t len);
int kr_ofi_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops, void *context);
/* An object's fi_ops: its close, and none of the others. */
#define KR_OFI_FI_OPS(close_fn)                                                                    \
	{                                                                                          \
		.size = sizeof(struct fi_ops), .close = (close_fn), .bind = kr_ofi_no_bind,        \
		.control = kr_ofi_no_control, .ops_open = kr_ofi_no_ops_open,                      \
		.tostr = kr_ofi_no_tostr, .ops_set = kr_ofi_no_ops_set,                            \
	}

#endif /* KR_OFI_H */
