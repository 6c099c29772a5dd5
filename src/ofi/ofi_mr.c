/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory registration (fi_mr_reg, fi_mr_regv, fi_mr_regattr): which of the
 * application's memory a peer's RMA and atomics may reach, and how. mr_mode
 * is 0: the application picks each key (unique in the domain, any 64-bit
 * value: mr_key_size 8; Open MPI's btl/ofi uses pointers) and a peer's address is relative to the
 * region's offset argument, not a virtual address; no local registration is needed (a local buffer
 * is copied). A region is served by the target's provider when a request arrives (ofi_rma.c), so it
 * may be any memory of the process: malloc, stack, mmap. Under the domain's lock like everything it
 * serves.
 *
 * A region with remote rights that lies in the krcore heap (memory of fi_krcore.h's heap_alloc,
 * ofi_domain_ops.c) also gets a krcore memory key over exactly its bytes (kr_reg_mr), and so does
 * one in a shared mapping of a sealed memfd the process holds open (kr_reg_mr_fd, ofi_mr_file.c):
 * peers then READ and WRITE it with the NIC, no copy and no call on this side (ofi_rma_direct.c).
 * Closing the region releases the key, and the NIC refuses it from then on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ofi/ofi.h"

#define MR_ACCESS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
/* Rights under which peers READ a region with the NIC: their fi_read, or a large send from it */
#define MR_PEERS_READ (FI_REMOTE_READ | FI_SEND)

/* kr_ofi_mr_find() - see ofi.h. */
struct kr_ofi_mr *kr_ofi_mr_find(struct kr_ofi_domain *d, uint64_t key)
{
	for (struct kr_ofi_mr *m = d->mrs; m; m = m->next)
		if (m->mr.key == key)
			return m;
	return NULL;
}

/* kr_ofi_mr_send_key() - see ofi.h. */
struct kr_ofi_mr *kr_ofi_mr_send_key(struct kr_ofi_domain *d, const void *buf, size_t len)
{
	const uint8_t *b = buf;

	for (struct kr_ofi_mr *m = d->mrs; m; m = m->next)
		if (m->kread && b >= m->base && len <= m->len &&
		    b - m->base <= (ptrdiff_t)(m->len - len))
			return m;
	return NULL;
}

/* kr_ofi_mr_reach() - see ofi.h. */
uint8_t *kr_ofi_mr_reach(struct kr_ofi_domain *d, uint64_t key, uint64_t addr, uint64_t len,
			 uint64_t access)
{
	const struct kr_ofi_mr *m = kr_ofi_mr_find(d, key);

	if (!m || (m->access & access) != access || addr < m->offset || addr - m->offset > m->len ||
	    len > m->len - (addr - m->offset))
		return NULL;
	return m->base + (addr - m->offset);
}

static int mr_close(struct fid *fid)
{
	struct kr_ofi_mr *m = container_of(fid, struct kr_ofi_mr, mr.fid);
	struct kr_ofi_domain *d = m->dom;

	pthread_mutex_lock(&d->lock);
	if (m->sends) { /* peers still READ a large send of it in place */
		pthread_mutex_unlock(&d->lock);
		return -FI_EBUSY;
	}
	for (struct kr_ofi_mr **pp = &d->mrs; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	d->refs--;
	pthread_mutex_unlock(&d->lock);
	if (m->kmr)
		kr_dereg_mr(m->kmr); /* the NIC refuses its key from now on */
	free(m);
	return 0;
}

/*
 * A krcore key over [buf, buf + len) when it is heap or memfd memory, so peers' RMA on it goes
 * by the NIC, and so do the READs of a receiver of a large send from it (FI_SEND: as verbs
 * providers' rendezvous does, the receiver gets the region's key for reading); a memfd
 * registered for receiving (FI_RECV) is registered for local writes, so READs land in it in
 * place (heap memory needs nothing for that). NULL otherwise: served by this provider, copied.
 * Keeper calls: never under the domain's lock.
 */
static struct kr_mr *mr_nic_key(struct kr_ofi_domain *d, const void *buf, size_t len,
				uint64_t access)
{
	uint32_t a = 0;
	struct kr_mr *k;

	if (access & MR_PEERS_READ)
		a |= KR_MR_REMOTE_READ;
	if (access & FI_REMOTE_WRITE)
		a |= KR_MR_REMOTE_WRITE | KR_MR_LOCAL_WRITE;
	if (access & FI_RECV)
		a |= KR_MR_LOCAL_WRITE;
	if (!a || !len)
		return NULL;
	if (a == KR_MR_LOCAL_WRITE) /* the job's own MR covers its heap already */
		return kr_ofi_mr_file_key(d->ctx, buf, len, a);
	k = kr_reg_mr(d->ctx, (void *)(uintptr_t)buf, len, a); /* EINVAL at once: not heap */
	if (!k && errno == EINVAL)
		return kr_ofi_mr_file_key(d->ctx, buf, len, a);
	if (!k)
		FI_INFO(&kr_ofi_prov, FI_LOG_MR,
			"no krcore key for %zu heap bytes (%s): served by the provider\n", len,
			strerror(errno));
	return k;
}

static struct fi_ops mr_fi_ops = KR_OFI_FI_OPS(mr_close);

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
		  uint64_t requested_key, uint64_t flags, struct fid_mr **out, void *context)
{
	struct kr_ofi_domain *d = container_of(fid, struct kr_ofi_domain, dom.fid);
	struct kr_ofi_mr *m;

	if (!out || (!buf && len) || fid->fclass != FI_CLASS_DOMAIN)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	if (access & ~(uint64_t)MR_ACCESS)
		return -FI_EINVAL;
	if (len > UINT64_MAX - offset)
		return -FI_EINVAL; /* its addresses would wrap */
	m = calloc(1, sizeof(*m));
	if (!m)
		return -FI_ENOMEM;
	m->dom = d;
	m->base = (uint8_t *)(uintptr_t)buf;
	m->len = len;
	m->offset = offset;
	/* no remote bit: local use only (FI_SEND ... FI_WRITE) */
	m->access = access ? access : MR_ACCESS;
	m->mr.fid.fclass = FI_CLASS_MR;
	m->mr.fid.context = context;
	m->mr.fid.ops = &mr_fi_ops;
	m->mr.mem_desc = NULL; /* nothing for a local operation to name: buffers are copied */
	m->mr.key = requested_key;
	m->kmr = mr_nic_key(d, buf, len, m->access);
	if (m->kmr) {
		struct kr_mr_key k;

		kr_mr_key(m->kmr, &k);
		m->rkey = k.rkey;
		m->kread = m->access & MR_PEERS_READ;
	}
	pthread_mutex_lock(&d->lock);
	if (kr_ofi_mr_find(d, requested_key)) {
		pthread_mutex_unlock(&d->lock);
		if (m->kmr)
			kr_dereg_mr(m->kmr);
		free(m);
		return -FI_ENOKEY; /* fi_mr(3): the key is in use */
	}
	m->next = d->mrs;
	d->mrs = m;
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*out = &m->mr;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
		   uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr,
		   void *context)
{
	if (count != 1 || !iov)
		return -FI_EINVAL; /* mr_iov_limit 1 */
	return mr_reg(fid, iov[0].iov_base, iov[0].iov_len, access, offset, requested_key, flags,
		      mr, context);
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
		      struct fid_mr **mr)
{
	if (!attr)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM)
		return -FI_ENOSYS; /* host memory only */
	return mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access, attr->offset,
		       attr->requested_key, flags, mr, attr->context);
}

struct fi_ops_mr kr_ofi_mr_ops = {
    .size = sizeof(struct fi_ops_mr),
    .reg = mr_reg,
    .regv = mr_regv,
    .regattr = mr_regattr,
};
