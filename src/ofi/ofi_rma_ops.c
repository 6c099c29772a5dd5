/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RMA and atomic calls of an endpoint (fi_read, fi_write, fi_writedata,
 * fi_inject_write(data), fi_atomic, fi_fetch_atomic, fi_compare_atomic and
 * their v/msg/inject forms), decoded into one operation for ofi_rma.c under
 * the domain's lock. One iovec and one remote iovec at most (iov_limit,
 * rma_iov_limit 1). A local buffer needs no registration (desc is ignored):
 * the provider copies. Completion as for messages (ofi_ep_ops.c): always,
 * or with FI_SELECTIVE_COMPLETION when flagged; an inject never reports one
 * but still counts.
 */
#include <stdlib.h>
#include <string.h>

#include "ofi/ofi.h"

#define EP(fid_ep) container_of(fid_ep, struct kr_ofi_ep, ep)

/* The flags an RMA or atomic *msg call may carry. */
#define RMA_MSG_FLAGS                                                                              \
	(FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_TRANSMIT_COMPLETE |                    \
	 FI_DELIVERY_COMPLETE | FI_INJECT_COMPLETE | FI_MORE)

/*
 * Start r (calloc'ed, its operation filled in) to dest under the domain's
 * lock, with src_len bytes at src copied first when inject (the caller's
 * buffer is free once the call returns). 0 or -FI_E*; r is the callee's
 * either way.
 */
static ssize_t op_start(struct kr_ofi_ep *ep, struct kr_ofi_rma *r, fi_addr_t dest, uint64_t cap,
			bool inject)
{
	int rc = 0;

	if (inject && r->src_len) {
		r->copy = malloc(r->src_len);
		if (!r->copy) {
			free(r);
			return -FI_ENOMEM;
		}
		memcpy(r->copy, r->src, r->src_len);
		r->src = r->copy;
	}
	pthread_mutex_lock(&ep->dom->lock);
	if (!ep->enabled)
		rc = -FI_EOPBADSTATE;
	else if (!(ep->caps & cap)) /* FI_RMA or FI_ATOMIC: the endpoint was not opened for it */
		rc = -FI_EOPNOTSUPP;
	else if (!(r->peer = kr_ofi_peer_at(ep, dest, &rc)))
		; /* rc says why */
	else
		rc = kr_ofi_rma_start(ep, r), r = NULL;
	pthread_mutex_unlock(&ep->dom->lock);
	if (r) {
		free(r->copy);
		free(r);
	}
	return rc;
}

/* ---- RMA ---- */

static ssize_t rma(struct kr_ofi_ep *ep, uint8_t op, void *buf, size_t len, fi_addr_t peer,
		   uint64_t addr, uint64_t key, uint64_t data, uint64_t flags, void *context)
{
	struct kr_ofi_rma *r;

	if (!buf && len)
		return -FI_EINVAL;
	if (len > KR_OFI_MSG_MAX || ((flags & FI_INJECT) && len > KR_OFI_INLINE))
		return -FI_EMSGSIZE;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -FI_ENOMEM;
	r->op = op;
	r->context = context;
	r->flags = FI_RMA | (op == KR_OFI_W_RMA_READ ? FI_READ : FI_WRITE) |
		   (flags & (FI_COMPLETION | FI_REMOTE_CQ_DATA));
	if (flags & FI_INJECT) /* never reported, not even an error: its counter says */
		r->flags = (r->flags & ~(uint64_t)FI_COMPLETION) | FI_INJECT;
	if (op == KR_OFI_W_RMA_READ)
		r->dst = buf;
	else
		r->src = buf, r->src_len = len;
	r->len = len;
	r->addr = addr;
	r->key = key;
	r->data = (uint32_t)data;
	return op_start(ep, r, peer, FI_RMA, flags & FI_INJECT);
}

/* A fi_msg_rma's one local and one remote iovec, of the same length. */
static int one_rma_msg(const struct fi_msg_rma *m, void **buf, size_t *len)
{
	if (!m || kr_ofi_one_iov(m->msg_iov, m->iov_count, buf, len) || m->rma_iov_count != 1 ||
	    !m->rma_iov || m->rma_iov[0].len != *len)
		return -FI_EINVAL;
	return 0;
}

static ssize_t rma_read(struct fid_ep *e, void *buf, size_t len, void *desc, fi_addr_t src,
			uint64_t addr, uint64_t key, void *context)
{
	(void)desc;
	return rma(EP(e), KR_OFI_W_RMA_READ, buf, len, src, addr, key, 0,
		   kr_ofi_tx_compl(EP(e), EP(e)->tx_flags), context);
}

static ssize_t rma_readv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, uint64_t addr, uint64_t key, void *context)
{
	void *buf;
	size_t len;

	if (kr_ofi_one_iov(iov, count, &buf, &len))
		return -FI_EINVAL;
	return rma_read(e, buf, len, desc, src, addr, key, context);
}

static ssize_t rma_readmsg(struct fid_ep *e, const struct fi_msg_rma *m, uint64_t flags)
{
	void *buf;
	size_t len;

	if (one_rma_msg(m, &buf, &len))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)RMA_MSG_FLAGS || (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return -FI_EBADFLAGS;
	return rma(EP(e), KR_OFI_W_RMA_READ, buf, len, m->addr, m->rma_iov[0].addr,
		   m->rma_iov[0].key, 0, kr_ofi_tx_compl(EP(e), flags), m->context);
}

static ssize_t rma_write(struct fid_ep *e, const void *buf, size_t len, void *desc, fi_addr_t dest,
			 uint64_t addr, uint64_t key, void *context)
{
	(void)desc;
	return rma(EP(e), KR_OFI_W_RMA_WRITE, (void *)(uintptr_t)buf, len, dest, addr, key, 0,
		   kr_ofi_tx_compl(EP(e), EP(e)->tx_flags), context);
}

static ssize_t rma_writev(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count,
			  fi_addr_t dest, uint64_t addr, uint64_t key, void *context)
{
	void *buf;
	size_t len;

	if (kr_ofi_one_iov(iov, count, &buf, &len))
		return -FI_EINVAL;
	return rma_write(e, buf, len, desc, dest, addr, key, context);
}

static ssize_t rma_writemsg(struct fid_ep *e, const struct fi_msg_rma *m, uint64_t flags)
{
	void *buf;
	size_t len;

	if (one_rma_msg(m, &buf, &len))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)RMA_MSG_FLAGS)
		return -FI_EBADFLAGS;
	return rma(EP(e), KR_OFI_W_RMA_WRITE, buf, len, m->addr, m->rma_iov[0].addr,
		   m->rma_iov[0].key, m->data,
		   kr_ofi_tx_compl(EP(e), flags) | (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)),
		   m->context);
}

static ssize_t rma_inject(struct fid_ep *e, const void *buf, size_t len, fi_addr_t dest,
			  uint64_t addr, uint64_t key)
{
	return rma(EP(e), KR_OFI_W_RMA_WRITE, (void *)(uintptr_t)buf, len, dest, addr, key, 0,
		   FI_INJECT, NULL);
}

static ssize_t rma_writedata(struct fid_ep *e, const void *buf, size_t len, void *desc,
			     uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
			     void *context)
{
	(void)desc;
	return rma(EP(e), KR_OFI_W_RMA_WRITE, (void *)(uintptr_t)buf, len, dest, addr, key, data,
		   kr_ofi_tx_compl(EP(e), EP(e)->tx_flags) | FI_REMOTE_CQ_DATA, context);
}

static ssize_t rma_injectdata(struct fid_ep *e, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest, uint64_t addr, uint64_t key)
{
	return rma(EP(e), KR_OFI_W_RMA_WRITE, (void *)(uintptr_t)buf, len, dest, addr, key, data,
		   FI_INJECT | FI_REMOTE_CQ_DATA, NULL);
}

struct fi_ops_rma kr_ofi_rma_ops = {
    .size = sizeof(struct fi_ops_rma),
    .read = rma_read,
    .readv = rma_readv,
    .readmsg = rma_readmsg,
    .write = rma_write,
    .writev = rma_writev,
    .writemsg = rma_writemsg,
    .inject = rma_inject,
    .writedata = rma_writedata,
    .injectdata = rma_injectdata,
};

/* ---- atomics ---- */

/*
 * An atomic of kind (KR_OFI_ATOMIC_*) on count values of dt at (key, addr)
 * of peer: operands at buf, compare values at cmp, old values to result.
 */
static ssize_t atomic(struct kr_ofi_ep *ep, uint32_t kind, const void *buf, const void *cmp,
		      void *result, size_t count, fi_addr_t peer, uint64_t addr, uint64_t key,
		      enum fi_datatype dt, enum fi_op op, uint64_t flags, void *context)
{
	size_t sz = kr_ofi_atomic_size(dt, op, kind), len;
	struct kr_ofi_rma *r;
	uint8_t *ops;

	if (!sz)
		return -FI_EOPNOTSUPP;
	len = count * sz;
	if (!count || (op != FI_ATOMIC_READ && !buf) || (kind == KR_OFI_ATOMIC_COMPARE && !cmp) ||
	    (kind != KR_OFI_ATOMIC_WRITE && !result))
		return -FI_EINVAL;
	if (count > kr_ofi_atomic_max(sz, kind) || ((flags & FI_INJECT) && len > KR_OFI_INLINE))
		return -FI_EMSGSIZE;
	r = calloc(1, sizeof(*r));
	ops = malloc(2 * len); /* operands and compare values side by side, as they travel */
	if (!r || !ops) {
		free(r);
		free(ops);
		return -FI_ENOMEM;
	}
	r->src_len = op == FI_ATOMIC_READ ? 0 : kind == KR_OFI_ATOMIC_COMPARE ? 2 * len : len;
	if (op != FI_ATOMIC_READ)
		memcpy(ops, buf, len);
	if (kind == KR_OFI_ATOMIC_COMPARE)
		memcpy(ops + len, cmp, len);
	r->copy = ops;
	r->src = ops;
	r->op = KR_OFI_W_ATOMIC;
	r->context = context;
	r->flags = FI_ATOMIC | (kind == KR_OFI_ATOMIC_WRITE ? FI_WRITE : FI_READ) |
		   ((flags & FI_INJECT) ? FI_INJECT : (flags & FI_COMPLETION));
	r->dst = result;
	r->len = len;
	r->addr = addr;
	r->key = key;
	r->atype = (uint32_t)op | (uint32_t)dt << 8 | kind << 16;
	return op_start(ep, r, peer, FI_ATOMIC, false); /* operands copied already */
}

/* An fi_ioc array of one as (buf, count). */
static int one_ioc(const struct fi_ioc *ioc, size_t n, const void **buf, size_t *count)
{
	if (n != 1 || !ioc)
		return -FI_EINVAL;
	*buf = ioc[0].addr;
	*count = ioc[0].count;
	return 0;
}

/* A fi_msg_atomic's one local and one remote fi_ioc, of the same count. */
static int one_atomic_msg(const struct fi_msg_atomic *m, const void **buf, size_t *count)
{
	if (!m || one_ioc(m->msg_iov, m->iov_count, buf, count) || m->rma_iov_count != 1 ||
	    !m->rma_iov || m->rma_iov[0].count != *count)
		return -FI_EINVAL;
	return 0;
}

static ssize_t at_write(struct fid_ep *e, const void *buf, size_t count, void *desc, fi_addr_t dest,
			uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op,
			void *context)
{
	(void)desc;
	return atomic(EP(e), KR_OFI_ATOMIC_WRITE, buf, NULL, NULL, count, dest, addr, key, dt, op,
		      kr_ofi_tx_compl(EP(e), EP(e)->tx_flags), context);
}

static ssize_t at_writev(struct fid_ep *e, const struct fi_ioc *iov, void **desc, size_t count,
			 fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			 enum fi_op op, void *context)
{
	const void *buf;
	size_t n;

	if (one_ioc(iov, count, &buf, &n))
		return -FI_EINVAL;
	return at_write(e, buf, n, desc, dest, addr, key, dt, op, context);
}

static ssize_t at_writemsg(struct fid_ep *e, const struct fi_msg_atomic *m, uint64_t flags)
{
	const void *buf;
	size_t n;

	if (one_atomic_msg(m, &buf, &n))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)RMA_MSG_FLAGS || (flags & FI_REMOTE_CQ_DATA))
		return -FI_EBADFLAGS;
	return atomic(EP(e), KR_OFI_ATOMIC_WRITE, buf, NULL, NULL, n, m->addr, m->rma_iov[0].addr,
		      m->rma_iov[0].key, m->datatype, m->op,
		      kr_ofi_tx_compl(EP(e), flags) | (flags & FI_INJECT), m->context);
}

static ssize_t at_inject(struct fid_ep *e, const void *buf, size_t count, fi_addr_t dest,
			 uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op)
{
	return atomic(EP(e), KR_OFI_ATOMIC_WRITE, buf, NULL, NULL, count, dest, addr, key, dt, op,
		      FI_INJECT, NULL);
}

static ssize_t at_readwrite(struct fid_ep *e, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype dt, enum fi_op op, void *context)
{
	(void)desc;
	(void)result_desc;
	return atomic(EP(e), KR_OFI_ATOMIC_FETCH, buf, NULL, result, count, dest, addr, key, dt, op,
		      kr_ofi_tx_compl(EP(e), EP(e)->tx_flags), context);
}

static ssize_t at_readwritev(struct fid_ep *e, const struct fi_ioc *iov, void **desc, size_t count,
			     struct fi_ioc *resultv, void **result_desc, size_t result_count,
			     fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			     enum fi_op op, void *context)
{
	const void *buf = NULL, *res;
	size_t n = 0, rn;

	/* FI_ATOMIC_READ takes no operand: the iovec may be empty */
	if ((count || op != FI_ATOMIC_READ) && one_ioc(iov, count, &buf, &n))
		return -FI_EINVAL;
	if (one_ioc(resultv, result_count, &res, &rn) || (count && rn != n))
		return -FI_EINVAL;
	return at_readwrite(e, buf, rn, desc, (void *)(uintptr_t)res, result_desc, dest, addr, key,
			    dt, op, context);
}

static ssize_t at_readwritemsg(struct fid_ep *e, const struct fi_msg_atomic *m,
			       struct fi_ioc *resultv, void **result_desc, size_t result_count,
			       uint64_t flags)
{
	const void *buf = NULL, *res;
	size_t n, rn;

	(void)result_desc;
	if (!m || one_ioc(resultv, result_count, &res, &rn) || m->rma_iov_count != 1 ||
	    !m->rma_iov || m->rma_iov[0].count != rn)
		return -FI_EINVAL;
	if ((m->iov_count || m->op != FI_ATOMIC_READ) &&
	    (one_ioc(m->msg_iov, m->iov_count, &buf, &n) || n != rn))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)RMA_MSG_FLAGS || (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return -FI_EBADFLAGS;
	return atomic(EP(e), KR_OFI_ATOMIC_FETCH, buf, NULL, (void *)(uintptr_t)res, rn, m->addr,
		      m->rma_iov[0].addr, m->rma_iov[0].key, m->datatype, m->op,
		      kr_ofi_tx_compl(EP(e), flags), m->context);
}

static ssize_t at_compwrite(struct fid_ep *e, const void *buf, size_t count, void *desc,
			    const void *compare, void *compare_desc, void *result,
			    void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype dt, enum fi_op op, void *context)
{
	(void)desc;
	(void)compare_desc;
	(void)result_desc;
	return atomic(EP(e), KR_OFI_ATOMIC_COMPARE, buf, compare, result, count, dest, addr, key,
		      dt, op, kr_ofi_tx_compl(EP(e), EP(e)->tx_flags), context);
}

static ssize_t at_compwritev(struct fid_ep *e, const struct fi_ioc *iov, void **desc, size_t count,
			     const struct fi_ioc *comparev, void **compare_desc,
			     size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *context)
{
	const void *buf, *cmp, *res;
	size_t n, cn, rn;

	if (one_ioc(iov, count, &buf, &n) || one_ioc(comparev, compare_count, &cmp, &cn) ||
	    one_ioc(resultv, result_count, &res, &rn) || cn != n || rn != n)
		return -FI_EINVAL;
	return at_compwrite(e, buf, n, desc, cmp, compare_desc, (void *)(uintptr_t)res, result_desc,
			    dest, addr, key, dt, op, context);
}

static ssize_t at_compwritemsg(struct fid_ep *e, const struct fi_msg_atomic *m,
			       const struct fi_ioc *comparev, void **compare_desc,
			       size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			       size_t result_count, uint64_t flags)
{
	const void *buf, *cmp, *res;
	size_t n, cn, rn;

	(void)compare_desc;
	(void)result_desc;
	if (one_atomic_msg(m, &buf, &n) || one_ioc(comparev, compare_count, &cmp, &cn) ||
	    one_ioc(resultv, result_count, &res, &rn) || cn != n || rn != n)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)RMA_MSG_FLAGS || (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)))
		return -FI_EBADFLAGS;
	return atomic(EP(e), KR_OFI_ATOMIC_COMPARE, buf, cmp, (void *)(uintptr_t)res, n, m->addr,
		      m->rma_iov[0].addr, m->rma_iov[0].key, m->datatype, m->op,
		      kr_ofi_tx_compl(EP(e), flags), m->context);
}

static int valid(enum fi_datatype dt, enum fi_op op, uint32_t kind, size_t *count)
{
	size_t sz = kr_ofi_atomic_size(dt, op, kind);

	if (!sz)
		return -FI_EOPNOTSUPP;
	if (count)
		*count = kr_ofi_atomic_max(sz, kind);
	return 0;
}

static int at_writevalid(struct fid_ep *e, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	(void)e;
	return valid(dt, op, KR_OFI_ATOMIC_WRITE, count);
}

static int at_readwritevalid(struct fid_ep *e, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	(void)e;
	return valid(dt, op, KR_OFI_ATOMIC_FETCH, count);
}

static int at_compwritevalid(struct fid_ep *e, enum fi_datatype dt, enum fi_op op, size_t *count)
{
	(void)e;
	return valid(dt, op, KR_OFI_ATOMIC_COMPARE, count);
}

struct fi_ops_atomic kr_ofi_atomic_ops = {
    .size = sizeof(struct fi_ops_atomic),
    .write = at_write,
    .writev = at_writev,
    .writemsg = at_writemsg,
    .inject = at_inject,
    .readwrite = at_readwrite,
    .readwritev = at_readwritev,
    .readwritemsg = at_readwritemsg,
    .compwrite = at_compwrite,
    .compwritev = at_compwritev,
    .compwritemsg = at_compwritemsg,
    .writevalid = at_writevalid,
    .readwritevalid = at_readwritevalid,
    .compwritevalid = at_compwritevalid,
};
