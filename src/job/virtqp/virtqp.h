/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/job/virtqp: virtual QPs with RC semantics over a DCI leased to the calling
 * thread. Private header of the folder.
 *
 * Files, one role each:
 *   virtqp_dci.c    one DCI: lease, table of in-flight requests,
 *                   completion dispatch, recovery through the keeper
 *   virtqp_policy.c a thread's DCIs and which one a new vQP goes on
 *   virtqp_spare.c  DCIs kept between the process's threads
 *   virtqp_promote.c a hot vQP moves to an RC QP of its own and back
 *   virtqp_conn.c   kr_connect/kr_disconnect/kr_vqp_query, kr_poll
 *   virtqp_post.c   the request checks and kr_post_*
 *   virtqp_send.c   the sender side of ports: slot claim, kr_post_send, credits
 *   virtqp_port.c   the receiver side: kr_bind, kr_post_recv, kr_poll_recv
 *
 * All process-local (nothing here is shared between processes): the shared
 * objects are the DCI's ring and CQ in the tenant zone, reached through
 * job_lease.c's posting view.
 *
 * Ownership: a vQP and its DCI belong to the thread that created them (one
 * thread at a time, as a verbs QP); nothing here takes a lock on the data
 * path. The lease calls (kr_lease_alloc/free) take ctx->lock themselves.
 */
#ifndef KR_VIRTQP_H
#define KR_VIRTQP_H

#include <stdbool.h>
#include <stdint.h>

#include "devx/devx.h"
#include "krcore/krcore.h"
#include "job/job.h"

/* Default credits of a vQP, in send-queue WQEBBs (64 bytes): 8 vQPs per DCI. */
#define KR_VQP_DEFAULT_CREDITS 32u

/*
 * One request in flight on a DCI: who posted it, with which user wr_id, and
 * the request itself so it can be posted again after a recovery. Indexed by
 * the DCI's posting sequence (the devx wr_id) modulo the ring size.
 */
struct kr_vq_ent {
	struct kr_vqp *vqp;
	/* the completion to report, made at post (status KR_WC_SUCCESS, set on
	 * an error): opcode KR_VQ_OP_INTERNAL is the library's own request,
	 * wr_id then its enum kr_vq_internal */
	struct kr_wc wc;
	uint32_t wqebbs; /* credits it holds */
	uint16_t sq_pi;	 /* inline: the send counter its WQE starts at */
	/* the request, kept for a re-post; wr.num_sge 1, or 2 for a SEND with the
	 * user's imm (payload, then trailer) */
	struct kr_devx_wr wr;
	struct kr_devx_sge sge[2];
	/*
	 * Inline payload for a re-post. A SEND with a trailer copies it here at
	 * post (sge[0] names inl); any other inline request is posted from the
	 * caller's buffer, and only if it is flushed to be posted again are its
	 * bytes copied here, out of the WQE still in the old DCI's ring.
	 */
	uint8_t inl[KR_DEVX_MAX_INLINE];
};

/*
 * A request the library posts for itself (a port's slot claim, release and
 * credit pulls): completed into virtqp_send.c, never into the user's queue.
 */
#define KR_VQ_OP_INTERNAL 0x100u
enum kr_vq_internal {
	KR_VQ_CLAIM = 1, /* CAS on a slot's owner word: 0 -> our cookie */
	KR_VQ_ANNOUNCE,	 /* FAA on the table's change counter */
	KR_VQ_CREDIT,	 /* READ of our slot's granted word */
	KR_VQ_RELEASE,	 /* CAS on our slot's owner word: our cookie -> 0 */
};

/* What kr_post_* asks for, before the checks (virtqp_post.c). */
struct kr_vq_req {
	enum kr_devx_wr_opcode op;
	uint32_t wc_op; /* enum kr_wc_opcode, or KR_VQ_OP_INTERNAL */
	const void *local;
	uint32_t len;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t compare_add, swap;
	uint32_t imm;
	uint64_t wr_id;
	uint32_t flags;
	const void *tail; /* SEND: KR_SEND_HDR_LEN bytes sent after local (heap memory), or NULL */
};

/* A DC target a DCI's vQPs post to, and how many of them do. */
struct kr_vq_tgt {
	uint64_t key; /* kr_vq_tgt_key() */
	uint32_t nvqp;
};

/* Names a vQP's DC target: peer node and DCT number. */
static inline uint64_t kr_vq_tgt_key(uint32_t node, uint32_t dctn)
{
	return (uint64_t)node << 32 | dctn;
}

struct kr_vq_thread;

/* A DCI leased to one thread of one ctx. */
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
	struct kr_vq_thread *owner; /* the thread whose set holds it; NULL once it exited */
	struct kr_vq_tgt *tgt;	    /* [ntgt] the targets its vQPs post to */
	uint32_t ntgt, tgt_cap;
	bool rc; /* a paired RC slot of one promoted vQP (virtqp_promote.c), not a DCI */
	/* virtqp_poll.c: empty kr_poll calls since the CQ's consumer index was
	 * empty_ci, the first of them at empty_since */
	uint32_t empty_polls;
	uint32_t empty_ci;
	uint64_t empty_since;
};

/* Where a vQP stands with promotion (virtqp_promote.c). */
enum kr_vq_promo {
	KR_PROMO_NONE = 0, /* on DC */
	KR_PROMO_WANT,	   /* on DC, hot: its next kr_poll asks the keeper */
	KR_PROMO_ASKING,   /* on DC; asked its keeper for an RC slot, no answer yet */
	KR_PROMO_PAIRING,  /* on DC; the keepers pair an RC slot for it */
	KR_PROMO_DRAIN,	   /* paired: posts wait until its DC requests completed */
	KR_PROMO_RC,	   /* on its RC QP */
	KR_PROMO_DEMOTE,   /* cold: posts wait until its RC requests completed */
	KR_PROMO_BACKOFF,  /* on DC; pairing failed, not tried again before retry_ns */
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
	struct kr_devx_av_wqe av_wqe; /* av as each WQE carries it, encoded at connect */
	struct kr_wc *wcq;	   /* [credits]: completions waiting for kr_poll */
	uint32_t *wc_cost;	   /* [credits]: WQEBBs each queued completion gives back */
	uint32_t wc_head, wc_tail; /* free-running */
	struct kr_vq_send *snd;	   /* connected to a port: the sender's state, else NULL */
	/* virtqp_promote.c */
	uint32_t posts;		/* free-running: every 64th looks at the rate */
	uint32_t promo;		/* enum kr_vq_promo */
	uint32_t promotions;	/* times it moved to RC */
	uint32_t demotions;	/* and back */
	uint64_t mark_ns;	/* when the current 64 posts began */
	uint64_t retry_ns;	/* KR_PROMO_BACKOFF: until then */
	struct kr_vq_dci *rcq;	/* its RC slot, from KR_PROMO_ASKING until it is back on DC */
	uint32_t ask;		/* KR_PROMO_ASKING: its ask (job_pair.c) */
	struct kr_vq_dci *back; /* KR_PROMO_DEMOTE: the DCI it goes back to */
};

/* Every this many posts a vQP compares its rate with the promotion threshold. */
#define KR_VQ_RATE_POSTS 64u

/*
 * ---- between jobs: a port's sender table and the message header ----
 * The binder keeps the table in its heap (one MR with remote read and atomic
 * rights, named in its endpoint descriptor). Little-endian (every supported
 * host is). A sender claims slot i by CAS on owner (0 -> its cookie), then
 * adds 1 to changes so the receiver looks; it lets go by CAS back to 0 (and
 * adds 1 again). The receiver alone writes granted: (nonce << 32) | credits
 * granted to the holder with that nonce so far; the sender pulls it by READ.
 * Only the NIC's atomics touch owner and changes; only the receiver's CPU
 * writes granted.
 */
struct kr_port_slot {
	uint64_t owner;	  /* 0, or cookie: nonce (63:32), node (31:16), reply port (15:0) */
	uint64_t granted; /* nonce (63:32), credits (31:0) */
};
struct kr_port_table {
	uint64_t changes;
	uint64_t rsvd[7];
	struct kr_port_slot slot[];
};
_Static_assert(sizeof(struct kr_port_table) == 64, "kr_port_table header");
_Static_assert(sizeof(struct kr_port_slot) == 16, "kr_port_slot layout");

/*
 * Every message is a SEND with immediate: the immediate is krcore's, naming
 * the sender's slot and its sequence number, so a plain message carries no
 * byte of framing (a 4 KiB message stays 4 KiB on the wire). A message the
 * user gave an immediate of its own carries it in a trailer of
 * KR_SEND_HDR_LEN bytes after the payload (KR_MSG_IMM_TAIL set), which lands
 * in the receive buffer right after the message and is read out of it.
 */
#define KR_MSG_IMM_TAIL	 (1u << 31)
#define KR_MSG_SLOT_BITS 10u /* slots 0..1023: kr_bind_opts.senders at most 1024 */
#define KR_MSG_SEQ_BITS	 21u
#define KR_MSG_SEQ_MASK	 ((1u << KR_MSG_SEQ_BITS) - 1)

static inline uint32_t kr_msg_imm(uint32_t slot, uint32_t seq, bool tail)
{
	return (tail ? KR_MSG_IMM_TAIL : 0) | slot << KR_MSG_SEQ_BITS | (seq & KR_MSG_SEQ_MASK);
}

struct kr_msg_tail {
	uint32_t nonce; /* the slot holder's */
	uint32_t seq;	/* its full sequence number */
	uint32_t imm;	/* the user's */
	uint32_t rsvd;
};
_Static_assert(sizeof(struct kr_msg_tail) == KR_SEND_HDR_LEN, "kr_msg_tail layout");

static inline uint64_t kr_port_cookie(uint32_t nonce, uint32_t node, uint32_t reply_port)
{
	return (uint64_t)nonce << 32 | (uint64_t)(node & 0xffff) << 16 | (reply_port & 0xffff);
}

/* ---- a bound port, the receiver's side (virtqp_port.c) ---- */
enum port_snd_state {
	SND_FREE = 0,
	SND_ACTIVE,
	SND_GONE, /* released: reclaimed after the next full drain of the CQ */
};

struct port_snd {
	uint64_t owner;
	uint32_t nonce;
	uint32_t granted; /* credits given to this holder */
	uint32_t recv;	  /* its messages received */
	uint32_t state;	  /* enum port_snd_state */
	uint32_t queued;  /* on the port's want queue (once at most) */
};

struct port_rx {
	uint64_t wr_id;
	void *buf;
	uint32_t len;
};

struct kr_port {
	struct kr_ctx *ctx;
	uint32_t port;
	uint32_t index; /* the endpoint */
	uint32_t gen;
	struct kr_devx_cq cq;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct; /* names the endpoint in CQEs (user_index) */
	bool rsc_set;
	struct kr_port_table *table;
	struct kr_mr *table_mr;
	struct port_rx *rx;   /* [srq.nwqe], by SRQ slot */
	struct port_snd *snd; /* [nslots] */
	uint32_t *active;     /* [nslots]: slots admitted, in admission order */
	uint32_t *want;	      /* [nslots]: FIFO of slots that may lack credits */
	uint32_t want_head, want_len; /* want_head runs free; want has want_mask + 1 slots */
	uint32_t want_mask;
	uint32_t grant_cap;   /* the largest share given since the senders changed */
	uint32_t grant_next;  /* posted buffers that make the share grow */
	uint64_t grant_looks; /* senders a grant pass looked at (tests: O(1) per message) */
	uint32_t nactive;
	uint32_t nslots;
	uint32_t window;
	uint32_t posted;   /* buffers in the SRQ */
	uint32_t promised; /* credits granted and not used yet */
	uint32_t gone;	   /* slots in SND_GONE */
	uint64_t changes_seen;
	bool rescan;
	bool grant_due;
	void *krmin_map; /* fenced: the endpoint's pages as mapped from its slot */
	uint64_t krmin_len;
	uint64_t misordered; /* a header whose sequence was not the next one (never expected) */
	uint64_t strays;     /* messages of holders already gone, put back */
};

/* A port vQP's sender side (virtqp_send.c). */
struct kr_vq_send {
	uint32_t port;
	uint32_t slot;
	uint32_t nonce;
	uint64_t cookie;
	uint64_t table_va;
	uint32_t rkey;
	uint32_t sent;	  /* messages posted */
	uint32_t granted; /* credits known so far */
	uint32_t best;	  /* the most credits seen ahead at once: half of it left pulls more */
	bool reading;	  /* a credit READ is in flight */
	bool claimed;	  /* holds its slot */
	uint32_t pending; /* internal requests in flight (connect and disconnect wait on them) */
	int failed;	  /* the status an internal request failed with, else 0 */
	uint64_t next_read_ns; /* no new credit last time: not before this */
	uint64_t backoff_ns;
	uint64_t *scratch;	   /* heap: [0] CAS result, [1] FAA result, [2] READ target */
	struct kr_msg_tail *tails; /* heap: [ntails], one per message in flight */
	uint32_t ntails;
};

/* virtqp_conn.c */
struct kr_dct_rec;
/* The DC address vector to the DC target rec names, with the launch's DC key. */
void kr_vq_rec_av(const struct kr_ctx *ctx, const struct kr_dct_rec *rec, struct kr_devx_dc_av *av);
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

/* virtqp_look.c: the MetaServer lookup's READ on the caller's DCI (kr_job_look_read_fn) */
#define KR_VQ_LOOK_NODE 0u /* what its vQP records as the peer: no node has id 0 */
int kr_vq_look_read(struct kr_ctx *ctx, const struct kr_devx_dc_av *av, uint64_t raddr,
		    uint32_t rkey, void *buf, uint32_t len);

/* virtqp_tables.c */
/*
 * A DCI's (or RC QP's) ent and redo tables for d->cnt requests: a mapping an
 * earlier DCI of the process gave back, else a new one (zero pages mapped on
 * touch). 0 or -ENOMEM. Free: kept for the next, or unmapped.
 */
int kr_vq_tables_alloc(struct kr_vq_dci *d);
void kr_vq_tables_free(struct kr_vq_dci *d);

/* virtqp_dci.c */
/* A DCI for ctx: a spare of the process, else (unless spare_only) a new lease. NULL + errno. */
struct kr_vq_dci *kr_vq_dci_new(struct kr_ctx *ctx, bool spare_only);
/* Give d back to the keeper (if leased) and free it. */
void kr_vq_dci_free(struct kr_vq_dci *d);
/* Nothing in flight on d, no error seen, no vQP on it: another holder may take it as it is. */
bool kr_vq_dci_idle(const struct kr_vq_dci *d);

/* virtqp_policy.c */
/*
 * The DCI of the calling thread a new vQP to target key with credits goes
 * on (kr_connect()'s policy), leasing one if the policy says so. Then
 * kr_vq_dci_hold(), or kr_vq_dci_unpick() if the connect fails. NULL +
 * errno (EINVAL: credits beyond a DCI's ring; ENOSPC: no DCI of the thread
 * has the credits and none may be added; or kr_vq_dci_new()'s).
 */
struct kr_vq_dci *kr_vq_dci_pick(struct kr_ctx *ctx, uint64_t key, uint32_t credits);
/* A vQP to target key with credits holds d. 0 or -ENOMEM (nothing held). */
int kr_vq_dci_hold(struct kr_vq_dci *d, uint64_t key, uint32_t credits);
/* A pick no vQP took: a DCI nothing holds leaves the thread's set (as by kr_vq_dci_put()). */
void kr_vq_dci_unpick(struct kr_vq_dci *d);
/*
 * A vQP to target key lets go of d (its credits are the caller's to return);
 * the last one takes d out of its thread's set and keeps it as a spare or
 * gives it back.
 */
void kr_vq_dci_put(struct kr_vq_dci *d, uint64_t key);
/*
 * Reap the DCI's CQ, deliver each completion to its vQP, recover the DCI
 * once every request of a broken one is accounted for. 0, or -ENOTCONN /
 * -EIO (a CQE named nothing we posted).
 */
int kr_vq_dci_progress(struct kr_vq_dci *d);
/*
 * kr_vq_dci_wait() - reap d's completions (each queued for its vQP, as a
 * poll does) until every request posted before sequence end has its CQE,
 * at most wait_ns. Requests complete in order, so then none of them writes
 * memory any more. A recovery ends the wait too: it comes only once every
 * request of the old lease was reaped. 0, -ETIMEDOUT, -ENOTCONN (the
 * keeper, and with it the device, is gone: nothing writes either), or
 * kr_vq_dci_progress()'s errors.
 */
int kr_vq_dci_wait(struct kr_vq_dci *d, uint64_t end, uint64_t wait_ns);
/*
 * The dispatch check: a completion names the oldest request on d without its
 * CQE (seq: the posting sequence its WQE carried as wr_id).
 */
static inline bool kr_vq_dci_is_head(const struct kr_vq_dci *d, uint64_t seq)
{
	return d->head != d->tail && seq == d->head;
}

/*
 * Post e, the ring entry at d->tail with its wr complete (wr_id d->tail, sge
 * its own, its request checked by kr_post_*), and ring unless more follow
 * (KR_POST_MORE: one doorbell for the batch). 0 or -errno. Inline: the data
 * path.
 */
static inline int kr_vq_dci_post(struct kr_vq_dci *d, struct kr_vq_ent *e, bool ring)
{
	int rc = kr_devx_qp_post_checked(d->qp, &e->wr);

	if (rc)
		return rc;
	d->tail++;
	if (ring)
		kr_devx_qp_ring(d->qp);
	return 0;
}

/*
 * Ring what KR_POST_MORE left unrung on d: a poll that finds nothing, a
 * disconnect and a promotion's drain must not wait for a post that may
 * never come. A broken DCI's requests are posted again on recovery.
 */
static inline void kr_vq_dci_ring_pending(struct kr_vq_dci *d)
{
	if (d->leased && !d->broken && d->qp->sq_pi != d->qp->sq_db_pi)
		kr_devx_qp_ring(d->qp);
}
/* virtqp_spare.c: DCIs kept between the process's threads */
/* Keep d, whose last vQP went, for the next thread: true, or false (the caller gives it back). */
bool kr_vq_spare_put(struct kr_vq_dci *d);
/* A kept DCI of ctx's attachment, or NULL. */
struct kr_vq_dci *kr_vq_spare_get(struct kr_ctx *ctx);
/* DCIs the process keeps as spares now (tests: none after kr_detach()). */
uint32_t kr_vq_spare_held(void);
/* Keep at most n (capped at 8) from now on; 0 gives every DCI back at its thread's last disconnect. */
void kr_vq_spare_max(uint32_t n);

/*
 * WQEBBs a request of this shape takes on a DCI (devx_wqe.h's layout: the
 * opcode's head, the address vector, then the inline payload after its
 * header or nsge data segments); nsge 1 or 2. On an RC QP, which has no
 * address vector, it counts one unit more than the WQE takes: never less.
 */
static inline uint32_t kr_vq_wqebbs(enum kr_devx_wr_opcode op, bool inl, uint32_t len,
				    uint32_t nsge)
{
	uint32_t ds = kr_wr_kinds[op].head_ds + KR_AV_DS;

	ds += inl ? (sizeof(struct mlx5_wqe_inl_data_seg) + len + KR_DS_SIZE - 1) / KR_DS_SIZE
		  : nsge;
	return (ds * KR_DS_SIZE + KR_WQEBB_SIZE - 1) >> KR_WQEBB_SHIFT;
}

/*
 * The largest WQE a vQP posts, in 16-byte units: a WRITE's head (ctrl,
 * raddr), the DC address vector, then KR_POST_MAX_INLINE inline bytes after
 * their header.
 */
#define KR_VQ_MAX_DS                                                                               \
	((uint32_t)(2u + KR_AV_DS +                                                                \
		    (sizeof(struct mlx5_wqe_inl_data_seg) + KR_POST_MAX_INLINE + KR_DS_SIZE - 1) /  \
			KR_DS_SIZE))

/* qp takes every WQE a vQP posts (kr_devx_qp_post_checked relies on it). */
static inline bool kr_vq_qp_fits(const struct kr_devx_qp *qp)
{
	return kr_devx_qp_max_wqe_ds(qp) >= KR_VQ_MAX_DS;
}

/* virtqp_promote.c */
/* Every KR_VQ_RATE_POSTS posts: promote a hot vQP, demote a cold one. */
void kr_vq_promote_tick(struct kr_vqp *v) __attribute__((cold));
/*
 * Move v's promotion along (kr_poll, and a post while v->promo is set and not
 * KR_PROMO_RC, whose cold check is the tick's): 0, or -EAGAIN while posts
 * must wait for v's requests in flight to drain. A post (from_post) leaves
 * what costs a call or an allocation (asking, taking the answer) to the
 * next kr_poll.
 */
int kr_vq_promote_step(struct kr_vqp *v, bool from_post) __attribute__((cold));
/* kr_disconnect(): let v's RC slot (and a DCI picked to go back to) go. */
void kr_vq_promote_drop(struct kr_vqp *v);

/*
 * virtqp_post.c: the checks and the post of one request (kr_post_* and
 * internal ones); _msg: a port message, a SEND with krcore's imm and tail
 * (or NULL) after local (struct kr_vq_req's fields), built with its opcode
 * known.
 */
int kr_vq_post_req(struct kr_vqp *v, const struct kr_vq_req *r);
int kr_vq_post_msg(struct kr_vqp *v, const void *local, uint32_t len, uint32_t imm,
		   const void *tail, uint64_t wr_id, uint32_t flags);

/* virtqp_send.c */
/* kr_connect() with opts->port set. NULL + errno as kr_connect(). */
struct kr_vqp *kr_vq_connect_port(struct kr_ctx *ctx, uint32_t peer,
				  const struct kr_connect_opts *opts);
/* An internal request of v completed with status (virtqp_dci.c's dispatch). */
void kr_vq_send_internal(struct kr_vqp *v, const struct kr_vq_ent *e, int status);
/*
 * kr_disconnect() of a port vQP: let its slot go (waits for it, bounded).
 * Returns the sender state, which kr_vq_send_free() frees once nothing of
 * the vQP is in flight.
 */
struct kr_vq_send *kr_vq_send_close(struct kr_vqp *v);
/*
 * Free a sender state; its heap buffers (internal requests' results, SEND
 * trailers) only when quiet: no request that reads or writes them is in
 * flight (else they stay allocated: the device may still use them).
 */
void kr_vq_send_free(struct kr_ctx *ctx, struct kr_vq_send *s, bool quiet);

#endif /* KR_VIRTQP_H */
