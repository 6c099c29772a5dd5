/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The krcore libfabric provider's own domain operations, for programs
 * written against libfabric that want RMA by the NIC (doc/libfabric.md,
 * "Heap memory"). Nothing here is needed to use the provider: without it
 * every buffer is copied through the job's heap and RMA is served by the
 * target's provider.
 *
 *	struct fi_krcore_domain_ops *ops;
 *	fi_open_ops(&domain->fid, FI_KRCORE_DOMAIN_OPS, 0, (void **)&ops, NULL);
 *	void *buf = ops->heap_alloc(domain, len);
 *	fi_mr_reg(domain, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, key, 0, &mr, NULL);
 *
 * A region registered over heap memory with remote rights gets a krcore
 * memory key over exactly its bytes: a peer's fi_read and fi_write on it
 * go as krcore READs and WRITEs straight into this memory, with no call on
 * this side; heap memory as a local buffer of fi_read or fi_write is not
 * copied either. A large message (over 4 KiB) sent from a region registered
 * with FI_SEND over heap or sealed memfd memory is read by the receiver in
 * place (no staging copy), and one received into heap memory (or a memfd
 * registered with FI_RECV) lands in place; copy_stats() says which way a
 * domain's large messages went.
 */
#ifndef KRCORE_FI_KRCORE_H
#define KRCORE_FI_KRCORE_H

#include <stddef.h>

#include <rdma/fi_domain.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fi_open_ops() name of struct fi_krcore_domain_ops, on a domain of the krcore provider. */
#define FI_KRCORE_DOMAIN_OPS "krcore_domain_ops"

/* Bytes of a domain's large messages (over 4 KiB), by the way they went, since it opened. */
struct fi_krcore_copy_stats {
	uint64_t tx_in_place; /* sent: the receiver READ them from the application's buffer */
	uint64_t tx_staged;   /* sent: copied to the provider's staging slots first */
	uint64_t rx_in_place; /* received: READ straight into the application's buffer */
	uint64_t rx_copied;   /* received: READ into the provider's slots, then copied */
};

struct fi_krcore_domain_ops {
	size_t size; /* sizeof(struct fi_krcore_domain_ops) */
	/*
	 * heap_alloc() - len bytes of the process's krcore heap (kr_malloc(3)),
	 * 16-byte aligned, valid until heap_free() or the last domain of the
	 * process closes. NULL with errno: EINVAL (NULL domain or len 0),
	 * ENOMEM (the heap is full: krpoold --heap-mb), ENOTCONN (the keeper
	 * went away).
	 */
	void *(*heap_alloc)(struct fid_domain *domain, size_t len);
	/* heap_free() - give back memory of heap_alloc() (NULL is ignored). */
	void (*heap_free)(struct fid_domain *domain, void *p);
	/* copy_stats() - the domain's counts so far. 0, or -FI_EINVAL (NULL argument). */
	int (*copy_stats)(struct fid_domain *domain, struct fi_krcore_copy_stats *stats);
};

#ifdef __cplusplus
}
#endif

#endif /* KRCORE_FI_KRCORE_H */
