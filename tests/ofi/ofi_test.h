/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the two-job provider tests of this folder share: a clock, a byte
 * pattern per seed to fill a buffer with and check one against, the wait
 * for a completion, a node's provider objects opened and closed, the
 * other job's start and the swap of addresses.
 */
#ifndef KR_OFI_TEST_H
#define KR_OFI_TEST_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <krcore/fi_krcore.h>

#include "kr_test.h"
#include "ofi/ofi.h"

static inline double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Byte i of seed's pattern: no period shorter than 4 KiB, so a misplaced chunk shows. */
static inline uint8_t pat(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 29 + i * 13 + (i >> 10));
}

static inline void fill(uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(seed, i);
}

static inline int same(const uint8_t *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(seed, i))
			return 0;
	return 1;
}

/*
 * One completion of cq into entry (in the CQ's format), its source to *src
 * (NULL: not wanted): 0, or -err of an error completion (the entry to *x,
 * NULL: not wanted). No completion in tmo_s seconds: says so, naming what,
 * and exits 1.
 */
static inline int cq_wait(struct fid_cq *cq, void *entry, fi_addr_t *src, struct fi_cq_err_entry *x,
			  int tmo_s, const char *what)
{
	double t0 = now_s();

	for (;;) {
		ssize_t r = fi_cq_readfrom(cq, entry, 1, src);

		if (r == 1)
			return 0;
		if (r == -FI_EAVAIL) {
			struct fi_cq_err_entry y = {0};

			CHECK_EQ(fi_cq_readerr(cq, &y, 0), 1);
			if (x)
				*x = y;
			return -y.err;
		}
		CHECK_EQ(r, -FI_EAGAIN);
		if (now_s() - t0 > tmo_s) {
			fprintf(stderr, "%s: no completion in %d s\n", what, tmo_s);
			exit(1);
		}
	}
}

#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21u << 26) /* log2(2 MB) << MFD_HUGE_SHIFT */
#endif

/*
 * A memfd of len bytes mapped shared (zeroed): of 2 MB hugepages or not,
 * sealed against shrinking and growing or not. Its descriptor to *fd.
 */
static inline uint8_t *ofi_memfd_map(size_t len, bool huge, bool sealed, int *fd)
{
	uint8_t *p;

	*fd = memfd_create("ofi-test", MFD_CLOEXEC | MFD_ALLOW_SEALING |
					   (huge ? MFD_HUGETLB | MFD_HUGE_2MB : 0));
	CHECK(*fd >= 0);
	CHECK_OK(ftruncate(*fd, (off_t)len));
	if (sealed)
		CHECK_OK(fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	CHECK(p != MAP_FAILED);
	return p;
}

/* A job's provider objects: a domain with one AV, CQ and endpoint, what ofi_node_open() opens. */
struct ofi_node {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_cntr *cntr; /* bound for ofi_how.cntr_flags; NULL without */
	struct fid_ep *ep;
	fi_addr_t peer, self;
	struct fi_krcore_domain_ops *ops; /* ofi_how.ext: the provider's own (fi_krcore.h) */
};

/* What a test asks of its node: the caps and mode it hints, the CQ's format, the AV's type. */
struct ofi_how {
	uint64_t caps, mode;
	enum fi_cq_format cq;
	enum fi_av_type av;
	uint64_t
	    cntr_flags; /* a counter bound for these kinds (FI_SEND ... FI_REMOTE_WRITE), 0: none */
	bool ext;	/* open FI_KRCORE_DOMAIN_OPS */
};

/* Attach to the keeper at sock through the krcore provider, and open n as how says. */
static inline void ofi_node_open(struct ofi_node *n, const char *sock, const struct ofi_how *how)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_cq_attr cqa = {.format = how->cq};
	struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP};
	struct fi_av_attr ava = {.type = how->av};

	setenv("KR_KEEPER_SOCKET", sock, 1);
	h->caps = how->caps;
	h->mode = how->mode;
	h->ep_attr->type = FI_EP_RDM;
	h->fabric_attr->prov_name = strdup(KR_OFI_NAME);
	CHECK_OK(fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, h, &n->info));
	fi_freeinfo(h);
	CHECK_OK(fi_fabric(n->info->fabric_attr, &n->fab, NULL));
	CHECK_OK(fi_domain(n->fab, n->info, &n->dom, NULL));
	if (how->ext) {
		CHECK_OK(
		    fi_open_ops(&n->dom->fid, FI_KRCORE_DOMAIN_OPS, 0, (void **)&n->ops, NULL));
		CHECK_EQ(n->ops->size, sizeof(*n->ops));
	}
	CHECK_OK(fi_av_open(n->dom, &ava, &n->av, NULL));
	CHECK_OK(fi_cq_open(n->dom, &cqa, &n->cq, NULL));
	if (how->cntr_flags)
		CHECK_OK(fi_cntr_open(n->dom, &ca, &n->cntr, NULL));
	CHECK_OK(fi_endpoint(n->dom, n->info, &n->ep, NULL));
	CHECK_OK(fi_ep_bind(n->ep, &n->av->fid, 0));
	CHECK_OK(fi_ep_bind(n->ep, &n->cq->fid, FI_TRANSMIT | FI_RECV));
	if (how->cntr_flags)
		CHECK_OK(fi_ep_bind(n->ep, &n->cntr->fid, how->cntr_flags));
	CHECK_OK(fi_enable(n->ep));
}

/* Close what ofi_node_open() opened, each close checked (the domain refuses while objects stay). */
static inline void ofi_node_close(struct ofi_node *n)
{
	CHECK_OK(fi_close(&n->ep->fid));
	if (n->cntr)
		CHECK_OK(fi_close(&n->cntr->fid));
	CHECK_OK(fi_close(&n->cq->fid));
	CHECK_OK(fi_close(&n->av->fid));
	CHECK_OK(fi_close(&n->dom->fid));
	CHECK_OK(fi_close(&n->fab->fid));
	fi_freeinfo(n->info);
}

/*
 * Fork the other job, which runs peer(sock, out, in) and must not return
 * (out: its pipe to this process, in: from it); before this process
 * attaches, as a child must not inherit an attachment. Its pid; *to and
 * *from this side's ends.
 */
static inline pid_t ofi_spawn(void (*peer)(const char *sock, int out, int in), const char *sock,
			      int *to, int *from)
{
	int ab[2], ba[2];
	pid_t b;

	CHECK_OK(pipe(ab));
	CHECK_OK(pipe(ba));
	b = fork();
	CHECK(b >= 0);
	if (!b) {
		close(ab[1]);
		close(ba[0]);
		peer(sock, ba[1], ab[0]);
		_exit(1);
	}
	close(ab[0]);
	close(ba[1]);
	*to = ab[1];
	*from = ba[0];
	return b;
}

/* Swap endpoint addresses with the other job over its pipes; its address goes into av. */
static inline fi_addr_t ofi_meet(struct fid_ep *ep, struct fid_av *av, int out, int in)
{
	struct kr_ofi_addr me, it;
	size_t len = sizeof(me);
	fi_addr_t peer;

	CHECK_OK(fi_getname(&ep->fid, &me, &len));
	CHECK(write(out, &me, sizeof(me)) == sizeof(me));
	CHECK(read(in, &it, sizeof(it)) == sizeof(it));
	CHECK_EQ(fi_av_insert(av, &it, 1, &peer, 0, NULL), 1);
	return peer;
}

#endif /* KR_OFI_TEST_H */
