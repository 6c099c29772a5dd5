/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/virtqp: virtual QPs with RC semantics over a DCI leased to the calling
 * thread. Private header of the folder.
 *
 * Files, one role each:
 *   virtqp_dci.c    the per-thread DCI: lease, table of in-flight requests,
 *                   completion dispatch, recovery through the keeper
 *   virtqp_conn.c   kr_connect/kr_disconnect/kr_vqp_query, kr_poll
 *   virtqp_post.c   the request checks and kr_post_*
 *
 * All process-local (nothing here is shared between processes): the shared
 * objects are the DCI's ring and CQ in the tenant zone, reached through
 * pool_job.c's posting view.
 *
 * Ownership: a vQP and its DCI belong to the thread that created them (one
 * thread at a time, as a verbs QP); nothing here takes a lock on the data
 * path. The lease calls (kr_lease_alloc/free) take ctx->lock themselves.
 */
#ifndef KR_VIRTQP_H
#define KR_VIRTQP_H

#include <stdbool.h>
#include <stdint.h>

#include "devx.h"
#include "krcore/krcore.h"
#include "pool.h"

/* Default credits of a vQP, in send-queue WQEBBs (64 bytes): 8 vQPs per DCI. */
#define KR_VQP_DEFAULT_CREDITS 32u

/*
 * One request in flight on a DCI: who posted it, with which user wr_id, and
 * the request itself so it can be posted again after a recovery. Indexed by
 * the DCI's posting sequence (the devx wr_id) modulo the ring size.
 */
struct kr_vq_ent {
	struct kr_vqp *vqp;
	uint64_t wr_id;	 /* the user's */
	uint32_t wqebbs; /* credits it holds */
	uint32_t len;
	uint32_t wc_flags; /* enum kr_wc_flags to report (KR_WC_F_REPOSTED) */
	uint32_t opcode;   /* enum kr_wc_opcode */
	struct kr_devx_wr wr;
	struct kr_devx_sge sge;
	uint8_t inl[KR_DEVX_MAX_INLINE]; /* inline payload, kept for a re-post */
};

/* The DCI leased to one thread of one ctx. */
struct kr_vq_dci {
	struct kr_ctx *ctx;
	struct kr_lease lease;
	bool leased; /* false between giving back a broken DCI and the new lease */
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
	uint32_t qpn;		/* of the current lease */
	uint32_t cnt;		/* ring entries == the send queue's WQEBBs */
	uint32_t credits_free;	/* WQEBBs no vQP holds */
	uint64_t head;		/* oldest request without its CQE */
	uint64_t tail;		/* next posting sequence */
	struct kr_vq_ent *ent;	/* [cnt] */
	struct kr_vq_ent *redo; /* [cnt]: flushed requests of healthy vQPs */
	uint32_t nredo;
	bool broken; /* an error CQE: the QP is in error until recovered */
	uint32_t nvqp;
	uint32_t recoveries;
};

/* A virtual QP. */
struct kr_vqp {
	struct kr_vq_dci *dci;
	uint32_t id;
	uint32_t node;	/* peer node id, KR_NODE_SELF for this node */
	uint32_t state; /* enum kr_vqp_state */
	uint32_t credits;
	uint32_t used; /* WQEBBs held by requests whose completion the user has not taken */
	struct kr_devx_dc_av av;
	struct kr_wc *wcq;	   /* [credits]: completions waiting for kr_poll */
	uint32_t *wc_cost;	   /* [credits]: WQEBBs each queued completion gives back */
	uint32_t wc_head, wc_tail; /* free-running */
};

/* virtqp_conn.c */
/*
 * kr_vq_peer_av() - the DC address vector kr_connect() posts to peer with:
 * this keeper's DCT for KR_NODE_SELF, else the node's record (cache or
 * MetaServer). 0 or kr_dct_resolve()'s errors.
 */
int kr_vq_peer_av(struct kr_ctx *ctx, uint32_t peer, struct kr_devx_dc_av *av);
/*
 * kr_vq_connect_av() - kr_connect() with the peer's address vector given
 * (node is only recorded): the seam below metadata resolution, for tests and
 * for callers that learnt a DCT out of band. NULL + errno as kr_connect().
 */
struct kr_vqp *kr_vq_connect_av(struct kr_ctx *ctx, uint32_t node, const struct kr_devx_dc_av *av,
				const struct kr_connect_opts *opts);

/* virtqp_dci.c */
/* The calling thread's DCI for ctx, leased at first use. NULL + errno. */
struct kr_vq_dci *kr_vq_dci_get(struct kr_ctx *ctx);
/* Drop a vQP's hold; the last one gives the lease back. */
void kr_vq_dci_put(struct kr_vq_dci *d);
/*
 * Reap the DCI's CQ, deliver each completion to its vQP, recover the DCI
 * once every request of a broken one is accounted for. 0, or -ENOTCONN /
 * -EIO (a CQE named nothing we posted).
 */
int kr_vq_dci_progress(struct kr_vq_dci *d);
/* Post e (already in the ring at sequence seq) on the DCI and ring. 0 or -errno. */
int kr_vq_dci_post(struct kr_vq_dci *d, struct kr_vq_ent *e);
/* virtqp_spare.c: DCIs kept between the process's threads */
/* Keep d, whose last vQP went, for the next thread: true, or false (the caller gives it back). */
bool kr_vq_spare_put(struct kr_vq_dci *d);
/* A kept DCI of ctx's attachment, or NULL. */
struct kr_vq_dci *kr_vq_spare_get(struct kr_ctx *ctx);
/* Keep at most n (capped at 8) from now on; 0 gives every DCI back at its thread's last disconnect. */
void kr_vq_spare_max(uint32_t n);

/* WQEBBs a request of this shape takes (mirrors devx_wqe.c's layout). */
uint32_t kr_vq_wqebbs(enum kr_devx_wr_opcode op, bool inl, uint32_t len);

#endif /* KR_VIRTQP_H */
