/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krcore public API.
 *
 * krcore gives processes on an mlx5 (ConnectX) RDMA cluster an RDMA connection
 * to any peer in microseconds: a keeper (krpoold) keeps DC and RC queue pairs
 * warm in hugepage shared memory and jobs post straight into them.
 *
 * Conventions: int functions return 0 or a negative errno; functions returning
 * a pointer return NULL and set errno. Completion statuses are their own enum
 * (enum kr_wc_status) with a string for each.
 *
 * This header grows with the project: the completion status vocabulary
 * shared by every layer, and attach to the keeper (heap, MRs, leases). The
 * connect/post API of ../shared/API.md lands with the virtual QP work.
 */
#ifndef KRCORE_H
#define KRCORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KRCORE_VERSION_MAJOR 0
#define KRCORE_VERSION_MINOR 1

/*
 * Completion status of a work request. KR_WC_SUCCESS is 0; every other value
 * names the PRM completion syndrome it comes from (see kr_strerror()).
 */
enum kr_wc_status {
	KR_WC_SUCCESS = 0,
	KR_WC_LOC_LEN_ERR,      /* local length error (syndrome 0x01) */
	KR_WC_LOC_QP_OP_ERR,    /* local QP operation error (0x02) */
	KR_WC_LOC_PROT_ERR,     /* local protection error: bad lkey or range (0x04) */
	KR_WC_WR_FLUSH_ERR,     /* flushed: the QP was in error (0x05) */
	KR_WC_MW_BIND_ERR,      /* memory window bind error (0x06) */
	KR_WC_BAD_RESP_ERR,     /* bad response from the responder (0x10) */
	KR_WC_LOC_ACCESS_ERR,   /* local access error (0x11) */
	KR_WC_REM_INV_REQ_ERR,  /* remote invalid request (0x12) */
	KR_WC_REM_ACCESS_ERR,   /* remote access error: bad rkey, rights or range (0x13) */
	KR_WC_REM_OP_ERR,       /* remote operation error (0x14) */
	KR_WC_RETRY_EXC_ERR,    /* transport retry counter exceeded (0x15) */
	KR_WC_RNR_RETRY_EXC_ERR, /* receiver-not-ready retry counter exceeded (0x16) */
	KR_WC_REM_ABORT_ERR,    /* remote aborted (0x22) */
	KR_WC_GENERAL_ERR,      /* any other syndrome */
	KR_WC_STATUS_MAX
};

/*
 * kr_strerror() - readable text for a completion status.
 * @status: an enum kr_wc_status value.
 *
 * Returns a static string; an out-of-range value gives "unknown completion
 * status". Never NULL.
 */
const char *kr_strerror(int status);

/*
 * kr_wc_status_errno() - the errno that best describes a completion status.
 * @status: an enum kr_wc_status value.
 *
 * Returns 0 for KR_WC_SUCCESS, a positive errno otherwise (EINVAL for an
 * out-of-range value): EACCES for access errors, ETIMEDOUT for retry
 * exhaustion, ECANCELED for flushes, EREMOTEIO for other remote errors.
 */
int kr_wc_status_errno(int status);

/* ---- attach to the local keeper (krpoold) ---- */

struct kr_ctx;
struct kr_mr;

/* Where and how to attach; a NULL opts or NULL field means the default. */
struct kr_attach_opts {
	const char *socket_path; /* default: $KR_KEEPER_SOCKET, else /run/krcore/krpoold.sock */
	uint32_t flags;          /* reserved, must be 0 */
};

/*
 * kr_attach() - attach this process to the local keeper. Connects to its
 * UNIX socket, receives the hugepage segments, the device doorbell mapping
 * and this job's heap, and maps them at the keeper's addresses. No DPDK
 * initialisation and no firmware command happen here.
 * @opts: NULL for the defaults.
 *
 * One attach per process at a time. Returns a context, or NULL with errno:
 * ENOENT or ECONNREFUSED (no keeper at the socket), EACCES (socket not
 * accessible), EINVAL (bad opts), EALREADY (already attached), ENOSPC (no
 * free job slot or tenant in the pool), EADDRINUSE (the keeper's addresses
 * are taken in this process), EPROTO (the keeper speaks another protocol or
 * sent a malformed reply), ENOMEM,
 * ENOTCONN or EPIPE (the keeper went away during the attach).
 */
struct kr_ctx *kr_attach(const struct kr_attach_opts *opts);

/*
 * kr_detach() - release everything the job holds (leases, MRs, heap) and
 * unmap the segments. Works when the keeper is gone (then only unmaps), so a
 * job can attach again to a restarted keeper. Heap memory is invalid after.
 * Returns 0, -EINVAL (NULL ctx) or -ENOTCONN (the keeper was gone; local
 * state is released anyway).
 */
int kr_detach(struct kr_ctx *ctx);

/* What kr_ctx_query() reports. */
struct kr_ctx_attr {
	uint32_t tenant;      /* tenant slot of this job */
	uint32_t job;         /* job slot */
	int32_t keeper_pid;
	uint32_t dci_leases;  /* DCIs this job holds */
	size_t heap_len;      /* bytes of the kr_malloc heap */
};

/*
 * kr_ctx_query() - describe the attachment and check that the keeper is alive
 * (one non-blocking socket check). Returns 0, -EINVAL, or -ENOTCONN when the
 * keeper has gone away (attr is still filled in).
 */
int kr_ctx_query(struct kr_ctx *ctx, struct kr_ctx_attr *attr);

/*
 * kr_malloc() - RDMA-ready memory from the job's heap: hugepages the keeper
 * registered as this job's own MR, so no registration call is needed
 * (kr_reg_mr() still gives a key for a sub-range). 16-byte aligned.
 * Returns NULL with errno: EINVAL (NULL ctx or len 0), ENOMEM (heap full),
 * ENOTCONN (the keeper went away).
 */
void *kr_malloc(struct kr_ctx *ctx, size_t len);
/* kr_free() - return memory from kr_malloc(); NULL is ignored. */
void kr_free(struct kr_ctx *ctx, void *p);

/* Access rights of a memory region. */
enum kr_access {
	KR_MR_LOCAL_WRITE = 1u << 0,
	KR_MR_REMOTE_WRITE = 1u << 1,
	KR_MR_REMOTE_READ = 1u << 2,
	KR_MR_REMOTE_ATOMIC = 1u << 3,
};

/* What a peer needs to reach a region, and the local key to post from it. */
struct kr_mr_key {
	uint64_t addr;
	uint64_t len;
	uint32_t lkey;
	uint32_t rkey;
};

/*
 * kr_reg_mr() - ask the keeper for a memory key over [addr, addr+len) with
 * the given rights (enum kr_access). The keeper registers only memory it can
 * reach: today the job's own heap (kr_malloc memory); the key covers exactly
 * the range, so a peer given its rkey reaches nothing else.
 * Returns an MR, or NULL with errno: EINVAL (NULL ctx, len 0, unknown access
 * bits, range outside the heap), ENOSPC (too many MRs for this job),
 * EREMOTEIO (the device refused), ENOTCONN or EPIPE (keeper gone), ENOMEM.
 */
struct kr_mr *kr_reg_mr(struct kr_ctx *ctx, void *addr, size_t len, uint32_t access);
/*
 * kr_dereg_mr() - release an MR; its keys stop working. Returns 0, -EINVAL
 * (NULL mr), -ENOTCONN or -EPIPE (keeper gone: the MR is freed locally; the
 * keeper took it back when it noticed).
 */
int kr_dereg_mr(struct kr_mr *mr);
/* kr_mr_key() - address, length and keys of an MR. 0 or -EINVAL (NULL argument). */
int kr_mr_key(const struct kr_mr *mr, struct kr_mr_key *key);

/* ---- leases: pool objects a job holds ---- */

enum kr_lease_kind {
	KR_LEASE_DCI = 1, /* a DC initiator: one per thread that posts */
	KR_LEASE_VQP = 3, /* a virtual QP slot */
};

/* A lease as the keeper recorded it in the pool segment. */
struct kr_lease {
	uint32_t kind;  /* enum kr_lease_kind */
	uint32_t index; /* slot within the tenant */
	uint32_t gen;   /* generation of the grant */
	uint32_t qpn;   /* DCI: its QP number; 0 otherwise */
};

/*
 * kr_lease_alloc() - lease one object of kind from the keeper's pool. The
 * lease is recorded in the pool segment with this process's pid and a new
 * generation. No firmware command runs: the object is already warm.
 * Returns 0, -EINVAL (NULL argument or unknown kind), -ENOSPC (none free in
 * the tenant's pool: retry later, the keeper refills), -EMFILE (this process
 * holds the most DCIs it may), -ENOTCONN or -EPIPE (keeper gone).
 */
int kr_lease_alloc(struct kr_ctx *ctx, uint32_t kind, struct kr_lease *lease);
/*
 * kr_lease_free() - give a lease back; the keeper resets the object before
 * anyone else gets it. Returns 0, -EINVAL (not a lease this job holds, or
 * stale generation), -ENOTCONN or -EPIPE (keeper gone).
 */
int kr_lease_free(struct kr_ctx *ctx, const struct kr_lease *lease);

#ifdef __cplusplus
}
#endif

#endif /* KRCORE_H */
