/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address vectors: peers' struct kr_ofi_addr, each at an index that is its
 * fi_addr_t for both FI_AV_TABLE and FI_AV_MAP (MAP lets the provider pick
 * any value). Inserting does no per-peer work: the vQP to a peer is made at
 * its first message. An address that names no node or no launch is not
 * inserted (its fi_addr is FI_ADDR_NOTAVAIL and the count says so); a
 * removed index is not reused, so a stale fi_addr_t never reaches another
 * peer. No event queue (FI_EVENT) and no shared, named AVs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofi/ofi.h"

#define KR_OFI_AV_MAX (1u << 24) /* peers one AV holds */

struct kr_ofi_av {
	struct fid_av av;
	struct kr_ofi_domain *dom;
	enum fi_av_type type;
	pthread_mutex_t lock;
	struct kr_ofi_addr *addr; /* [cap]; node 0: removed */
	uint32_t n, cap;
	uint32_t gen; /* bumped by each insert and remove (kr_ofi_av_gen) */
};

static int av_grow(struct kr_ofi_av *a, size_t need)
{
	size_t cap = a->cap ? a->cap : 64;
	struct kr_ofi_addr *p;

	if (need > KR_OFI_AV_MAX)
		return -FI_ENOSPC;
	while (cap < need)
		cap *= 2;
	if (cap == a->cap)
		return 0;
	p = realloc(a->addr, cap * sizeof(*p));
	if (!p)
		return -FI_ENOMEM;
	a->addr = p;
	a->cap = (uint32_t)cap;
	return 0;
}

static int av_insert(struct fid_av *av, const void *addr, size_t count, fi_addr_t *fi_addr,
		     uint64_t flags, void *context)
{
	struct kr_ofi_av *a = container_of(av, struct kr_ofi_av, av);
	const struct kr_ofi_addr *in = addr;
	int done = 0, rc;

	(void)context;
	if ((!addr && count) || (flags & ~(uint64_t)FI_MORE))
		return -FI_EINVAL;
	pthread_mutex_lock(&a->lock);
	rc = av_grow(a, (size_t)a->n + count);
	for (size_t i = 0; !rc && i < count; i++) {
		struct kr_ofi_addr e;

		memcpy(&e, &in[i], sizeof(e));
		if (!e.node || !e.launch_tag || e.rsvd) {
			if (fi_addr)
				fi_addr[i] = FI_ADDR_NOTAVAIL;
			continue;
		}
		a->addr[a->n] = e;
		if (fi_addr)
			fi_addr[i] = a->n;
		__atomic_store_n(&a->n, a->n + 1, __ATOMIC_RELEASE);
		done++;
	}
	__atomic_add_fetch(&a->gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&a->lock);
	return rc ? rc : done;
}

static int av_insertsvc(struct fid_av *av, const char *node, const char *service,
			fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)av;
	(void)node;
	(void)service;
	(void)fi_addr;
	(void)flags;
	(void)context;
	return -FI_ENOSYS; /* a krcore address is (node id, port, launch), not a host name */
}

static int av_insertsym(struct fid_av *av, const char *node, size_t nodecnt, const char *service,
			size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)nodecnt;
	(void)svccnt;
	return av_insertsvc(av, node, service, fi_addr, flags, context);
}

static int av_remove(struct fid_av *av, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct kr_ofi_av *a = container_of(av, struct kr_ofi_av, av);
	int rc = 0;

	if ((!fi_addr && count) || flags)
		return -FI_EINVAL;
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < count; i++) {
		if (fi_addr[i] >= a->n || !a->addr[fi_addr[i]].node)
			rc = -FI_EINVAL; /* the others still go */
		else
			memset(&a->addr[fi_addr[i]], 0, sizeof(a->addr[0]));
	}
	__atomic_add_fetch(&a->gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&a->lock);
	return rc;
}

static int av_lookup(struct fid_av *av, fi_addr_t fi_addr, void *addr, size_t *addrlen)
{
	struct kr_ofi_av *a = container_of(av, struct kr_ofi_av, av);
	struct kr_ofi_addr e;

	if (!addrlen || (!addr && *addrlen))
		return -FI_EINVAL;
	pthread_mutex_lock(&a->lock);
	if (fi_addr >= a->n || !a->addr[fi_addr].node) {
		pthread_mutex_unlock(&a->lock);
		return -FI_EINVAL;
	}
	e = a->addr[fi_addr];
	pthread_mutex_unlock(&a->lock);
	memcpy(addr, &e, *addrlen < sizeof(e) ? *addrlen : sizeof(e));
	*addrlen = sizeof(e); /* the whole size, even when the buffer was shorter */
	return 0;
}

/* kr_ofi_av_get() - see ofi.h. */
int kr_ofi_av_get(struct fid_av *av, fi_addr_t fi_addr, struct kr_ofi_addr *out)
{
	size_t len = sizeof(*out);

	return av_lookup(av, fi_addr, out, &len);
}

/* kr_ofi_av_find() - see ofi.h. A scan: the caller caches the answer per peer. */
fi_addr_t kr_ofi_av_find(struct fid_av *av, uint32_t node, uint16_t port, uint32_t *gen)
{
	struct kr_ofi_av *a = container_of(av, struct kr_ofi_av, av);
	fi_addr_t r = FI_ADDR_NOTAVAIL;

	pthread_mutex_lock(&a->lock);
	*gen = a->gen;
	for (uint32_t i = 0; i < a->n; i++)
		if (a->addr[i].node == node && a->addr[i].port == port) {
			r = i;
			break;
		}
	pthread_mutex_unlock(&a->lock);
	return r;
}

/* kr_ofi_av_count() - see ofi.h. */
uint32_t kr_ofi_av_count(struct fid_av *av)
{
	return __atomic_load_n(&container_of(av, struct kr_ofi_av, av)->n, __ATOMIC_ACQUIRE);
}

/* kr_ofi_av_gen() - see ofi.h. */
uint32_t kr_ofi_av_gen(struct fid_av *av)
{
	return __atomic_load_n(&container_of(av, struct kr_ofi_av, av)->gen, __ATOMIC_ACQUIRE);
}

static const char *av_straddr(struct fid_av *av, const void *addr, char *buf, size_t *len)
{
	struct kr_ofi_addr e;
	char s[64];
	int n;

	(void)av;
	if (!addr || !buf || !len)
		return NULL;
	memcpy(&e, addr, sizeof(e));
	n = snprintf(s, sizeof(s), "fi_addr_krcore://%" PRIu32 ":%u/%016" PRIx64, e.node,
		     (unsigned int)e.port, e.launch_tag);
	if (*len)
		snprintf(buf, *len, "%s", s);
	*len = (size_t)n + 1;
	return buf;
}

static int av_set(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **av_set,
		  void *context)
{
	(void)av;
	(void)attr;
	(void)av_set;
	(void)context;
	return -FI_ENOSYS; /* no collectives */
}

static int av_close(struct fid *fid)
{
	struct kr_ofi_av *a = container_of(fid, struct kr_ofi_av, av.fid);

	pthread_mutex_lock(&a->dom->lock);
	a->dom->refs--;
	pthread_mutex_unlock(&a->dom->lock);
	pthread_mutex_destroy(&a->lock);
	free(a->addr);
	free(a);
	return 0;
}

static struct fi_ops av_fi_ops = KR_OFI_FI_OPS(av_close);

static struct fi_ops_av av_ops = {
    .size = sizeof(struct fi_ops_av),
    .insert = av_insert,
    .insertsvc = av_insertsvc,
    .insertsym = av_insertsym,
    .remove = av_remove,
    .lookup = av_lookup,
    .straddr = av_straddr,
    .av_set = av_set,
};

/* kr_ofi_av_open() - see ofi.h. */
int kr_ofi_av_open(struct fid_domain *dom, struct fi_av_attr *attr, struct fid_av **av,
		   void *context)
{
	struct kr_ofi_domain *d = container_of(dom, struct kr_ofi_domain, dom);
	struct kr_ofi_av *a;
	int rc;

	if (!attr || !av)
		return -FI_EINVAL;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP && attr->type != FI_AV_TABLE)
		return -FI_EINVAL;
	if (attr->name || (attr->flags & (FI_EVENT | FI_READ | FI_SYMMETRIC)))
		return -FI_ENOSYS; /* shared AVs, events */
	if (attr->flags || attr->rx_ctx_bits)
		return -FI_EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -FI_ENOMEM;
	rc = av_grow(a, attr->count);
	if (rc) {
		free(a);
		return rc;
	}
	a->dom = d;
	a->type = attr->type == FI_AV_TABLE ? FI_AV_TABLE : FI_AV_MAP;
	pthread_mutex_init(&a->lock, NULL);
	a->av.fid.fclass = FI_CLASS_AV;
	a->av.fid.context = context;
	a->av.fid.ops = &av_fi_ops;
	a->av.ops = &av_ops;
	pthread_mutex_lock(&d->lock);
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*av = &a->av;
	return 0;
}
