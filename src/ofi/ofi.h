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
 *   ofi_domain_ops.c  the provider's own operations: heap memory (fi_krcore.h)
 *   ofi_av.c      address vectors: (node, port, launch) addresses
 *   ofi_eq.c      event queues (an RDM endpoint raises no events)
 *   ofi_cq.c      completion queues: reading one drives its endpoints
 *   ofi_ep.c      endpoints: a krcore port to receive on, binds, names
 *   ofi_ep_ops.c  fi_send/fi_recv and the tagged calls, decoded into ops
 *   ofi_peer.c    peers: a vQP to each on first use, their queued SENDs
 *   ofi_tx.c      sending: eager copies, staged chunks for large messages
 *   ofi_rx.c      receiving: matching, unexpected messages, chunk READs
 *   ofi_probe.c   probes: FI_PEEK, FI_CLAIM, FI_DISCARD
 *   ofi_mr.c      memory registration: what peers' RMA and atomics may reach
 *   ofi_rma.c     RMA and atomics: requests in pieces, served by the target
 *   ofi_rma_direct.c  READ/WRITE on a peer's heap region by the NIC
 *   ofi_rma_ops.c fi_read/fi_write/fi_atomic and their forms, decoded
 *   ofi_atomic.c  applying an atomic operation to memory (the target's side)
 *   ofi_cntr.c    counters
 *   ofi_fid.c     the answers of operations an object does not support
 *
 * Every object of a domain runs under the domain's lock (FI_THREAD_SAFE):
 * progress is manual, made by fi_cq_read and the data calls.
 */
#ifndef KR_OFI_H
#define KR_OFI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <krcore/fi_krcore.h>
#include <krcore/krcore.h>

#define KR_OFI_NAME    "krcore"
#define KR_OFI_VERSION FI_VERSION(0, 1)
#define KR_OFI_API     FI_VERSION(1, 17) /* the libfabric it is built for */
#define KR_OFI_MSG_MAX (64ull << 20)	 /* largest message (copied through the heap) */
#define KR_OFI_QUEUE   256u		 /* tx and rx operations outstanding per endpoint */

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
	 FI_DIRECTED_RECV | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ |             \
	 FI_REMOTE_WRITE)

/* ofi_fabric.c */
int kr_ofi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);

/* ofi_domain.c */
/*
 * The domain lock guards every endpoint and CQ of the domain and the
 * krcore objects under them (vQPs, the port): krcore wants a vQP used by one
 * thread at a time.
 */
struct kr_ofi_domain {
	struct fid_domain dom;
	struct kr_ctx *ctx; /* the process's attach, shared by its domains */
	uint32_t node;
	uint64_t launch_tag;
	bool host_cpu; /* KR_CTX_F_HOST_CPU: the device needs this host's cores (the sim) */
	uint32_t refs; /* AVs, endpoints, CQs, counters and MRs open on it */
	pthread_mutex_t lock;
	struct kr_ofi_mr *mrs;		    /* its registrations (ofi_mr.c) */
	struct fi_krcore_copy_stats copies; /* under lock */
};
int kr_ofi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		       void *context);
/* ofi_domain_ops.c: fi_open_ops on a domain (FI_KRCORE_DOMAIN_OPS). */
int kr_ofi_domain_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
			   void *context);

/* ofi_av.c */
int kr_ofi_av_open(struct fid_domain *dom, struct fi_av_attr *attr, struct fid_av **av,
		   void *context);

/* Look up fi_addr: 0, or -FI_EINVAL (not in the AV). */
int kr_ofi_av_get(struct fid_av *av, fi_addr_t fi_addr, struct kr_ofi_addr *out);
/* The fi_addr of (node, port), or FI_ADDR_NOTAVAIL; *gen: the AV's generation it holds for. */
fi_addr_t kr_ofi_av_find(struct fid_av *av, uint32_t node, uint16_t port, uint32_t *gen);
/* Addresses the AV has held (removed ones too). */
uint32_t kr_ofi_av_count(struct fid_av *av);
/* Changes with every insert and remove: a cached kr_ofi_av_find() answer is stale. */
uint32_t kr_ofi_av_gen(struct fid_av *av);

/* ofi_eq.c */
int kr_ofi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq,
		   void *context);

/* ---- the data path: wire format, operations, endpoints, CQs ---- */

/*
 * What the provider puts in front of each krcore SEND. Messages up to
 * KR_OFI_EAGER_MAX go whole (EAGER, the payload after the header); larger
 * ones go in chunks of KR_OFI_CHUNK the sender stages in its heap: RTS
 * names the first, CHUNK each later one, the receiver READs each and
 * answers ACK, which frees the sender's staging slot for the next.
 */
enum kr_ofi_wire_op {
	KR_OFI_W_EAGER = 1,
	KR_OFI_W_RTS,
	KR_OFI_W_CHUNK,
	KR_OFI_W_ACK,
	KR_OFI_W_NOP, /* nothing: a SEND that fails when the peer's port is gone */
	/*
	 * RMA and atomics (ofi_rma.c): a request names the target's key (tag,
	 * 64 bits), address (addr), the operation's length (len) and this piece
	 * of it (off, clen); the target answers each with RESP (same msg_id and
	 * off, status in data: 0 or a positive FI_E* value). An ATOMIC's data
	 * is enum fi_op | datatype << 8 | kind << 16, its payload the operands
	 * and then the compare values.
	 */
	KR_OFI_W_RMA_WRITE, /* payload: clen bytes to write at addr + off */
	KR_OFI_W_RMA_READ,  /* RESP carries clen bytes from addr + off */
	KR_OFI_W_ATOMIC,
	KR_OFI_W_RESP,
	/*
	 * The target's answer to a request flagged KR_OFI_WF_WANT, before its
	 * RESP, when the key's region is heap memory with a krcore key: tag the
	 * key, off its first address, len its length, addr where it is, rkey its
	 * krcore key, data its rights (KR_OFI_DK_*). The initiator's later
	 * operations on it go by the NIC (ofi_rma_direct.c).
	 */
	KR_OFI_W_MR_INFO,
};
#define KR_OFI_WF_TAGGED 1u
#define KR_OFI_WF_DATA	 2u
#define KR_OFI_WF_WANT	 4u /* RMA request: answer MR_INFO first if the NIC may serve the key */
struct kr_ofi_wire {
	uint8_t op, flags; /* enum kr_ofi_wire_op, KR_OFI_WF_* */
	uint16_t rsvd;
	uint32_t data; /* remote CQ data (KR_OFI_WF_DATA) */
	uint64_t tag;
	uint64_t len;	 /* the message's length */
	uint64_t off;	 /* RTS/CHUNK/ACK: the chunk's offset in the message */
	uint64_t addr;	 /* RTS/CHUNK: where the sender staged it */
	uint32_t clen;	 /* RTS/CHUNK/ACK: the chunk's length */
	uint32_t rkey;	 /* RTS/CHUNK: the staging area's key */
	uint32_t msg_id; /* RTS/CHUNK/ACK: the sender's message */
	uint32_t pad;
};
#define KR_OFI_INLINE	  (KR_POST_MAX_INLINE - (uint32_t)sizeof(struct kr_ofi_wire))
#define KR_OFI_EAGER_MAX  4096u	       /* payload of one EAGER SEND */
#define KR_OFI_CHUNK	  (128u << 10) /* a staged chunk */
#define KR_OFI_STAGES	  4u	       /* staging slots each way per endpoint */
#define KR_OFI_MSG_STAGES 2u	       /* of them, one message's at once */
#define KR_OFI_RX_BUFS	  32u	       /* receive buffers added to the port at a time */
#define KR_OFI_RX_CHUNKS  (KR_PORT_MAX_RECV / KR_OFI_RX_BUFS) /* ... at most this many times */
#define KR_OFI_WINDOW	  16u /* receive buffers promised to one sender at a time */
#define KR_OFI_RX_BUF	  (KR_OFI_EAGER_MAX + (uint32_t)sizeof(struct kr_ofi_wire))

struct kr_ofi_ep;
struct kr_ofi_cq;
struct kr_ofi_mr;
struct kr_ofi_rma;
struct kr_ofi_cntr;

/* What a counter bound to an endpoint counts (fi_ep_bind flags FI_SEND ... FI_REMOTE_WRITE). */
enum kr_ofi_cntr_kind {
	KR_OFI_CNTR_SEND,
	KR_OFI_CNTR_RECV,
	KR_OFI_CNTR_READ,
	KR_OFI_CNTR_WRITE,
	KR_OFI_CNTR_REMOTE_READ,
	KR_OFI_CNTR_REMOTE_WRITE,
	KR_OFI_CNTR_KINDS
};

/* The largest piece of an RMA (a request's or answer's payload), and of an atomic's operands. */
#define KR_OFI_RMA_PIECE KR_OFI_EAGER_MAX

/* What a krcore completion's wr_id points at. */
enum kr_ofi_req_kind { KR_OFI_REQ_SEND = 1, KR_OFI_REQ_READ, KR_OFI_REQ_DIRECT };

/* Requests of one RMA operation out at once: pieces asked of the target, or direct requests. */
#define KR_OFI_RMA_OUT 8u

/* A peer's region its NIC serves: learnt from an MR_INFO (ofi_rma_direct.c). */
#define KR_OFI_DK_READ	1u
#define KR_OFI_DK_WRITE 2u
#define KR_OFI_DKEYS	8u /* remembered per peer, the oldest replaced */
struct kr_ofi_dkey {
	uint64_t key, offset, len; /* as the application names it */
	uint64_t va;		   /* where its first byte is, for the NIC */
	uint32_t rkey;
	uint8_t rights; /* KR_OFI_DK_*, 0: the entry is empty */
};

/* A send operation (fi_send, fi_tsend, ...). */
struct kr_ofi_tx {
	struct kr_ofi_tx *next; /* the endpoint's large sends under way */
	void *context;
	uint64_t flags; /* FI_SEND | FI_MSG or FI_TAGGED; FI_COMPLETION: report it */
	uint64_t tag;
	uint32_t data;
	uint8_t wflags; /* KR_OFI_WF_* */
	const uint8_t *buf;
	size_t len;
	struct kr_ofi_peer *peer;
	uint32_t msg_id;
	uint32_t stages;      /* chunks announced and not yet acknowledged */
	size_t staged, acked; /* bytes announced, bytes the receiver has */
	int err;	      /* first error (-FI_E*), reported at the end */
	/*
	 * In place: the registration buf lies in, whose krcore key the receiver
	 * READs under (NULL: staged); it refuses to close until tx ends.
	 */
	struct kr_ofi_mr *place_mr;
	uint64_t place_off[KR_OFI_MSG_STAGES]; /* in place: the chunks announced, by offset */
	uint32_t place_busy;		       /* ... which of them are (bit i: place_off[i]) */
};

/* One krcore SEND the provider posts (a message, or a chunk's RTS/CHUNK/ACK). */
struct kr_ofi_wsend {
	uint8_t kind; /* KR_OFI_REQ_SEND */
	struct kr_ofi_wsend *next;
	struct kr_ofi_tx *tx;	    /* EAGER: the operation it completes, NULL for an inject */
	struct kr_ofi_rx *done_rx;  /* the last ACK of a large receive: complete it once posted */
	uint8_t *bounce;	    /* heap copy of wire + payload, NULL: inline */
	uint32_t len;		    /* wire + payload */
	struct kr_ofi_wire w;	    /* inline: the header ... */
	uint8_t inl[KR_OFI_INLINE]; /* ... and the payload after it */
};

/* A FIFO of SENDs: a peer's queued ones, its posted ones. */
struct kr_ofi_wq {
	struct kr_ofi_wsend *head, *tail;
};

static inline void kr_ofi_wq_push(struct kr_ofi_wq *q, struct kr_ofi_wsend *ws)
{
	ws->next = NULL;
	if (q->tail)
		q->tail->next = ws;
	else
		q->head = ws;
	q->tail = ws;
}

/* The oldest, taken off q, or NULL. */
static inline struct kr_ofi_wsend *kr_ofi_wq_pop(struct kr_ofi_wq *q)
{
	struct kr_ofi_wsend *ws = q->head;

	if (ws && !(q->head = ws->next))
		q->tail = NULL;
	return ws;
}

/* A chunk the sender announced and the receiver has not READ yet. */
struct kr_ofi_ann {
	uint64_t off, addr;
	uint32_t clen, rkey;
};

/* A receive operation (fi_recv, fi_trecv, ...). */
struct kr_ofi_rx {
	struct kr_ofi_rx *next;
	void *context;
	uint64_t flags; /* FI_RECV | FI_MSG or FI_TAGGED; FI_COMPLETION: report it */
	uint64_t tag, ignore;
	fi_addr_t src; /* FI_ADDR_UNSPEC: any */
	uint8_t *buf;
	size_t len;
	/* the message it took, while its chunks come */
	struct kr_ofi_wire w;
	fi_addr_t msrc;
	struct kr_ofi_peer *peer;
	struct kr_ofi_ann ann[KR_OFI_MSG_STAGES];
	uint32_t nann, reading;
	size_t got;
	int err;
	bool discard; /* FI_DISCARD: take the message, keep no byte of it */
	bool bounce;  /* buf is not memory the NIC reaches: chunks go through read slots */
};

/* A message that arrived before a receive for it was posted. */
struct kr_ofi_unexp {
	struct kr_ofi_unexp *next;
	struct kr_ofi_wire w;
	fi_addr_t src;
	struct kr_ofi_peer *peer;
	uint8_t *payload;			  /* EAGER: a copy (malloc) */
	struct kr_ofi_ann ann[KR_OFI_MSG_STAGES]; /* RTS: the chunks announced so far */
	uint32_t nann;
};

/* A READ of an announced chunk into one of the endpoint's read slots, or in place. */
struct kr_ofi_read {
	uint8_t kind;  /* KR_OFI_REQ_READ */
	bool in_place; /* straight into the receive's buffer (heap or registered memfd) */
	struct kr_ofi_rx *rx;
	uint64_t off;
	uint32_t clen;
};

/* Another endpoint this one sends to or receives from. */
struct kr_ofi_peer {
	struct kr_ofi_peer *next;
	uint32_t node;
	uint16_t port;
	fi_addr_t fi_addr;	 /* in the endpoint's AV, FI_ADDR_NOTAVAIL: not there */
	uint32_t av_gen;	 /* the AV's generation fi_addr was found in */
	struct kr_vqp *v;	 /* NULL until the first SEND to it */
	struct kr_ofi_wq queued; /* SENDs not posted yet, in order */
	struct kr_ofi_wq posted; /* posted, completing in this order */
	uint32_t inflight;	 /* krcore requests posted, not completed */
	uint64_t refused_ns;	 /* first ECONNREFUSED of a connect still failing */
	int err;		 /* the vQP failed: every later operation fails with it */
	int fail_err;		 /* a failure seen inside a completion, for the next progress */
	uint64_t heard_ns;	 /* last message from it or completion of ours to it */
	uint32_t sends;		 /* SENDs posted to it, and connects (counting, not timing) */
	uint32_t sends_seen;	 /* sends at the last keepalive look */
	bool nop_out;		 /* a keepalive NOP is queued or in flight */
	/* RMA by the NIC (ofi_rma_direct.c): a vQP of its own: a refused key fails nothing else */
	struct kr_vqp *rv;		     /* one-sided only; NULL until the first */
	uint32_t rv_out;		     /* its requests in flight */
	uint32_t rv_fails;		     /* direct operations that failed and went again */
	struct kr_ofi_dkey dk[KR_OFI_DKEYS]; /* its regions the NIC serves */
	uint32_t dk_next;		     /* the entry to replace next */
};

struct kr_ofi_ep {
	struct fid_ep ep;
	struct kr_ofi_domain *dom;
	struct fid_av *av;
	struct kr_ofi_cq *tx_cq, *rx_cq;
	uint64_t tx_flags, rx_flags; /* op_flags (the short calls' flags) */
	bool tx_sel, rx_sel;	     /* FI_SELECTIVE_COMPLETION bound */
	uint64_t caps;
	bool enabled;
	struct kr_port *port;
	uint16_t port_no;
	uint8_t *rx_chunk[KR_OFI_RX_CHUNKS]; /* each KR_OFI_RX_BUFS x KR_OFI_RX_BUF, heap */
	uint32_t rx_nchunks;
	bool rx_short;	   /* the heap refused a chunk (warned once) */
	uint32_t rx_tried; /* buffers wanted when it refused: not asked again for as many */
	struct kr_ofi_peer *peers;
	struct kr_ofi_rx *posted[2], **posted_tail[2]; /* [0] FI_MSG, [1] FI_TAGGED */
	struct kr_ofi_unexp *unexp[2], **unexp_tail[2];
	struct kr_ofi_unexp *claimed; /* taken by FI_PEEK | FI_CLAIM, not received yet */
	struct kr_ofi_rx *rndv_rx;    /* receives taking chunks */
	struct kr_ofi_tx *rndv_tx;    /* sends staging chunks */
	uint8_t *stage;		      /* KR_OFI_STAGES x KR_OFI_CHUNK, heap, READ by peers */
	struct kr_mr *stage_mr;
	uint32_t stage_rkey;
	struct {
		struct kr_ofi_tx *tx;
		uint64_t off;
	} stage_slot[KR_OFI_STAGES];
	uint8_t *rslots; /* KR_OFI_STAGES x KR_OFI_CHUNK, heap: READ targets */
	struct kr_ofi_read reads[KR_OFI_STAGES];
	uint32_t next_msg_id;
	uint64_t keepalive_ns;	/* next look for peers a large transfer waits on */
	struct kr_ofi_rma *rma; /* RMA and atomic operations under way, oldest first */
	uint32_t next_rma_id;
	struct kr_ofi_cntr *cntr[KR_OFI_CNTR_KINDS]; /* bound counters, by enum kr_ofi_cntr_kind */
};

/* The endpoints a CQ or a counter reports for: reading it moves them on (manual progress). */
struct kr_ofi_ep_set {
	struct kr_ofi_ep *ep[8];
	uint32_t n;
};

/* ofi_cq.c */
struct kr_ofi_cq {
	struct fid_cq cq;
	struct kr_ofi_domain *dom;
	enum fi_cq_format format;
	struct kr_ofi_ep_set eps;	/* bound endpoints */
	struct fi_cq_tagged_entry *ent; /* ring of completions */
	fi_addr_t *src;
	size_t head, count, cap;
	struct fi_cq_err_entry *errs; /* errors not read yet */
	size_t nerr, errcap;
	uint64_t empty_since; /* first of the reads that found nothing, 0: the last found some */
};
int kr_ofi_cq_open(struct fid_domain *dom, struct fi_cq_attr *attr, struct fid_cq **cq,
		   void *context);
/* Queue a completion (domain lock held). 0 or -FI_ENOMEM. */
int kr_ofi_cq_done(struct kr_ofi_cq *cq, const struct fi_cq_tagged_entry *e, fi_addr_t src);
/* Queue an error completion: err a positive FI_E* value, olen what did not fit. */
int kr_ofi_cq_fail(struct kr_ofi_cq *cq, const struct fi_cq_tagged_entry *e, int err,
		   int prov_errno, size_t olen);

/* ofi_ep.c */
/* One iovec (or none) as a buffer (iov_limit 1). 0 or -FI_EINVAL. */
static inline int kr_ofi_one_iov(const struct iovec *iov, size_t count, void **buf, size_t *len)
{
	if (count > 1 || (count && !iov))
		return -FI_EINVAL;
	*buf = count ? iov[0].iov_base : NULL;
	*len = count ? iov[0].iov_len : 0;
	return 0;
}

/*
 * FI_COMPLETION for a transmit (receive) operation with flags (the short
 * calls pass the endpoint's op_flags): every operation completes unless
 * the CQ was bound with FI_SELECTIVE_COMPLETION.
 */
static inline uint64_t kr_ofi_tx_compl(const struct kr_ofi_ep *ep, uint64_t flags)
{
	return !ep->tx_sel || (flags & FI_COMPLETION) ? FI_COMPLETION : 0;
}

static inline uint64_t kr_ofi_rx_compl(const struct kr_ofi_ep *ep, uint64_t flags)
{
	return !ep->rx_sel || (flags & FI_COMPLETION) ? FI_COMPLETION : 0;
}
int kr_ofi_ep_open(struct fid_domain *dom, struct fi_info *info, struct fid_ep **ep, void *context);
/* Move the endpoint's traffic on (domain lock held): poll its port and vQPs, post what waits. */
void kr_ofi_ep_progress(struct kr_ofi_ep *ep);
/* Put ep in s, once: 0, or -FI_ENOSPC (s is full). */
int kr_ofi_ep_set_add(struct kr_ofi_ep_set *s, struct kr_ofi_ep *ep);
/* Take ep out of s (if there). */
void kr_ofi_ep_set_del(struct kr_ofi_ep_set *s, const struct kr_ofi_ep *ep);
/* kr_ofi_ep_progress() each endpoint of s. */
void kr_ofi_ep_set_progress(const struct kr_ofi_ep_set *s);
extern struct fi_ops_msg kr_ofi_msg_ops;
extern struct fi_ops_tagged kr_ofi_tagged_ops;

/* ofi_peer.c */
/* The peer at fi_addr (made on first use), or NULL with *err (-FI_EINVAL: not in the AV). */
struct kr_ofi_peer *kr_ofi_peer_at(struct kr_ofi_ep *ep, fi_addr_t fi_addr, int *err);
/* The peer (node, port) a message came from, made on first use; NULL: no memory. */
struct kr_ofi_peer *kr_ofi_peer_of(struct kr_ofi_ep *ep, uint32_t node, uint16_t port);
/* The peer's fi_addr in the endpoint's AV now (FI_ADDR_NOTAVAIL: none). */
fi_addr_t kr_ofi_peer_addr(struct kr_ofi_ep *ep, struct kr_ofi_peer *p);
/*
 * Queue one SEND to p: wire header w, then len bytes of payload (copied now);
 * tx: the send it completes (EAGER) or belongs to; done_rx: a receive to
 * complete once this SEND is posted. 0 or -FI_E*.
 */
int kr_ofi_peer_send(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const struct kr_ofi_wire *w,
		     const void *payload, uint32_t len, struct kr_ofi_tx *tx,
		     struct kr_ofi_rx *done_rx);
/* Fail p if it failed, take its vQP's completions, post its queued SENDs while credits last. */
void kr_ofi_peer_progress(struct kr_ofi_ep *ep, struct kr_ofi_peer *p);
/* p's vQP, made if need be: 0, -FI_EAGAIN (not yet: try later), or p's failure. */
int kr_ofi_peer_ready(struct kr_ofi_ep *ep, struct kr_ofi_peer *p);
/*
 * A peer a large transfer or an RMA waits on that was silent for a while
 * gets a NOP SEND: if its job died (its port with it) the SEND fails and so
 * does the peer, so neither side's transfer waits for ever. A peer nothing
 * was posted to over a whole look (100 ms), with nothing in flight or
 * awaited, is disconnected: its port takes back the credits it granted us
 * (the next SEND connects again). Called from progress.
 */
void kr_ofi_peers_keepalive(struct kr_ofi_ep *ep);
/* Forget every peer (endpoint close): disconnect, drop what is queued. */
void kr_ofi_peers_free(struct kr_ofi_ep *ep);

/* ofi_tx.c */
/* Start a send of len bytes of buf to fi_addr. 0 or -FI_E* (-FI_EAGAIN: retry after progress). */
int kr_ofi_tx_start(struct kr_ofi_ep *ep, fi_addr_t dest, const void *buf, size_t len, uint64_t tag,
		    uint64_t data, uint64_t flags, void *context);
/* A SEND of ours completed (status a kr_wc_status). */
void kr_ofi_tx_sent(struct kr_ofi_ep *ep, struct kr_ofi_wsend *ws, uint32_t status);
/* The receiver READ a chunk of message msg_id (an ACK from p). */
void kr_ofi_tx_acked(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const struct kr_ofi_wire *w);
/* Stage chunks of large sends while slots are free. */
void kr_ofi_tx_progress(struct kr_ofi_ep *ep);
/* Fail every operation of p (its vQP went to error). */
void kr_ofi_tx_peer_failed(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, int err);
/* Report a finished send (to the tx CQ if it asked for a completion or failed) and free it. */
void kr_ofi_tx_complete(struct kr_ofi_ep *ep, struct kr_ofi_tx *tx);
/* Free the large sends still under way (endpoint close): no completions. */
void kr_ofi_tx_free(struct kr_ofi_ep *ep);

/* ofi_rx.c */
/* Does receive rx take message w from src (its tag outside the ignore bits, its source)? */
bool kr_ofi_rx_matches(const struct kr_ofi_rx *rx, const struct kr_ofi_wire *w, fi_addr_t src);
/* rx takes message w from p: an EAGER one's payload (completes), or a large one's chunks. */
void kr_ofi_rx_take(struct kr_ofi_ep *ep, struct kr_ofi_rx *rx, const struct kr_ofi_wire *w,
		    fi_addr_t src, struct kr_ofi_peer *p, const uint8_t *payload,
		    const struct kr_ofi_ann *ann, uint32_t nann);
/* Report a finished receive (to the rx CQ: success, truncation or error) and free it. */
void kr_ofi_rx_complete(struct kr_ofi_ep *ep, struct kr_ofi_rx *rx);
/* Post a receive. 0 or -FI_E*. */
int kr_ofi_rx_post(struct kr_ofi_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		   uint64_t ignore, uint64_t flags, void *context);
/* A message of len bytes (wire header first) arrived from p. */
void kr_ofi_rx_arrived(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const uint8_t *msg,
		       uint32_t len);
/* A chunk READ finished (status a kr_wc_status). */
void kr_ofi_rx_read_done(struct kr_ofi_ep *ep, struct kr_ofi_read *r, uint32_t status);
/* Start READs of announced chunks while read slots are free. */
void kr_ofi_rx_progress(struct kr_ofi_ep *ep);
/* Fail the large receives coming from p (its vQP went to error). */
void kr_ofi_rx_peer_failed(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, int err);
/* ofi_probe.c */
/*
 * fi_trecvmsg with FI_PEEK (| FI_CLAIM or FI_DISCARD): look for a matching
 * unexpected message and complete the peek with what it found, or with
 * FI_ENOMSG. 0 or -FI_E*.
 */
int kr_ofi_rx_peek(struct kr_ofi_ep *ep, fi_addr_t src, uint64_t tag, uint64_t ignore,
		   uint64_t flags, void *context);
/* fi_trecvmsg with FI_CLAIM (| FI_DISCARD): receive the message a peek claimed into context. */
int kr_ofi_rx_claim(struct kr_ofi_ep *ep, void *buf, size_t len, uint64_t flags, void *context);
/* Drop an unexpected message (a large one's chunks are acknowledged unread). */
void kr_ofi_unexp_drop(struct kr_ofi_ep *ep, struct kr_ofi_unexp *u);
/* Cancel the receive posted with context: 0, or -FI_ENOENT. */
int kr_ofi_rx_cancel(struct kr_ofi_ep *ep, void *context);
/* Drop every receive and unexpected message (endpoint close). */
void kr_ofi_rx_free(struct kr_ofi_ep *ep);

/* ofi_mr.c */
/*
 * A registration: len bytes at base, reached by peers as key and addresses
 * offset .. offset + len - 1 (mr_mode 0: the application picks the key, an
 * address is relative to the region's offset, not a virtual address).
 */
struct kr_ofi_mr {
	struct fid_mr mr;
	struct kr_ofi_domain *dom;
	struct kr_ofi_mr *next; /* the domain's registrations */
	uint8_t *base;
	size_t len;
	uint64_t offset, access;
	struct kr_mr *kmr; /* heap or memfd memory: its krcore key (NIC RMA, sends in place) */
	uint32_t rkey;	   /* kmr's */
	bool kread;	   /* kmr lets peers READ: large sends from it go in place */
	uint32_t sends;	   /* large sends from it under way: fi_close says -FI_EBUSY */
};
extern struct fi_ops_mr kr_ofi_mr_ops;
/* The registration of key in d, or NULL. */
struct kr_ofi_mr *kr_ofi_mr_find(struct kr_ofi_domain *d, uint64_t key);
/*
 * Where a peer's access of len bytes at (key, addr) with rights access
 * (FI_REMOTE_READ or FI_REMOTE_WRITE) lands in this domain's memory, or
 * NULL: no such key, not those rights, or not all of it inside the region.
 */
uint8_t *kr_ofi_mr_reach(struct kr_ofi_domain *d, uint64_t key, uint64_t addr, uint64_t len,
			 uint64_t access);

/*
 * The registration of d holding all of [buf, buf + len) whose krcore key
 * lets peers READ it (its rkey), or NULL.
 */
struct kr_ofi_mr *kr_ofi_mr_send_key(struct kr_ofi_domain *d, const void *buf, size_t len);

/* ofi_mr_file.c */
/*
 * A krcore key (kr_reg_mr_fd, rights access) over [buf, buf + len) when all
 * of it is one shared mapping of a sealed memfd that this process holds a
 * descriptor of; NULL otherwise (served by the provider). A keeper call.
 */
struct kr_mr *kr_ofi_mr_file_key(struct kr_ctx *ctx, const void *buf, size_t len, uint32_t access);

/* ofi_rma.c */
struct kr_ofi_rma;
/* A request of a direct operation (ofi_rma_direct.c): a krcore READ or WRITE of one piece. */
struct kr_ofi_dpiece {
	uint8_t kind; /* KR_OFI_REQ_DIRECT */
	bool busy;
	struct kr_ofi_rma *r;
	uint64_t off;
	uint32_t len;
	uint8_t *bounce; /* heap copy of the piece of a local buffer outside the heap */
};
/* An RMA or atomic operation of the initiator, under way. */
struct kr_ofi_rma {
	struct kr_ofi_rma *next;
	struct kr_ofi_peer *peer;
	void *context;
	uint64_t flags; /* FI_RMA or FI_ATOMIC, FI_READ or FI_WRITE; FI_COMPLETION: report it;
			   FI_INJECT: report nothing, not even a failure (counters count it) */
	uint8_t op;	/* KR_OFI_W_RMA_WRITE, _RMA_READ or _ATOMIC */
	uint32_t id;
	const uint8_t *src; /* WRITE: the bytes; ATOMIC: operand, then compare */
	uint8_t *dst;	    /* READ: where the bytes go; ATOMIC: the old values (fetch) */
	uint8_t *copy;	    /* an inject's own copy of src (malloc) */
	size_t len;	    /* bytes read or written (ATOMIC: count x size) */
	size_t src_len;	    /* ATOMIC: operand and compare bytes sent */
	uint64_t addr, key;
	uint32_t atype;	   /* ATOMIC: enum fi_op | datatype << 8 | kind << 16 */
	uint32_t data;	   /* remote CQ data (FI_REMOTE_CQ_DATA) */
	size_t sent, done; /* bytes requested, bytes answered */
	bool sent_any;	   /* a first piece went (a zero-length one sends one piece too) */
	uint32_t out;	   /* pieces requested, not answered */
	int err;	   /* first failure (-FI_E*), reported at the end */
	/* by the NIC (ofi_rma_direct.c) */
	bool want;	   /* ask the target for the region's krcore key (KR_OFI_WF_WANT) */
	bool direct;	   /* READ/WRITE straight to the target's memory */
	bool bounce_local; /* the local buffer is not heap memory: pieces go through a heap copy */
	uint64_t rva;	   /* direct: where addr is for the NIC */
	uint32_t rkey;
	struct kr_ofi_dpiece dp[KR_OFI_RMA_OUT];
};
/* Start an RMA or atomic operation r (filled by the caller, malloc'ed): 0 or -FI_E* (r freed). */
int kr_ofi_rma_start(struct kr_ofi_ep *ep, struct kr_ofi_rma *r);
/* A request (RMA_WRITE, RMA_READ, ATOMIC) or an answer (RESP) from p. */
void kr_ofi_rma_arrived(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, const struct kr_ofi_wire *w,
			const uint8_t *payload, uint32_t plen);
/* Is wire header w of an RMA message sane with plen bytes of payload? */
bool kr_ofi_rma_wire_sane(const struct kr_ofi_wire *w, uint32_t plen);
/* Request the next pieces of operations under way. */
void kr_ofi_rma_progress(struct kr_ofi_ep *ep);
/* Does an operation of ep wait on an answer from p? */
bool kr_ofi_rma_awaits(const struct kr_ofi_ep *ep, const struct kr_ofi_peer *p);
/* Fail every operation with p (its vQP went to error). */
void kr_ofi_rma_peer_failed(struct kr_ofi_ep *ep, struct kr_ofi_peer *p, int err);
/* Drop every operation (endpoint close): no completions. */
void kr_ofi_rma_free(struct kr_ofi_ep *ep);
/* ofi_rma_direct.c */
/* Does r go by the NIC (a region of its peer's it knows)? Sets r->direct, else r->want. */
void kr_ofi_direct_choose(struct kr_ofi_rma *r);
/* Post r's next direct requests while it may have more out. */
void kr_ofi_direct_post(struct kr_ofi_ep *ep, struct kr_ofi_rma *r);
/* An MR_INFO from p: remember the region. */
void kr_ofi_direct_learn(struct kr_ofi_peer *p, const struct kr_ofi_wire *w);
/* Take the completions of p's direct requests; a failed one sends its operations the other way. */
void kr_ofi_direct_reap(struct kr_ofi_ep *ep, struct kr_ofi_peer *p);
/*
 * Let p's direct vQP go (waiting for what is in flight) and free the pieces on it; the
 * operations that had some start again through the target's provider.
 */
void kr_ofi_direct_drop(struct kr_ofi_ep *ep, struct kr_ofi_peer *p);

/* ofi_rma_ops.c */
extern struct fi_ops_rma kr_ofi_rma_ops;
extern struct fi_ops_atomic kr_ofi_atomic_ops;

/* ofi_atomic.c */
/* The three kinds of atomic call, as a request's tag carries them. */
#define KR_OFI_ATOMIC_WRITE   0u /* fi_atomic */
#define KR_OFI_ATOMIC_FETCH   1u /* fi_fetch_atomic */
#define KR_OFI_ATOMIC_COMPARE 2u /* fi_compare_atomic */
/*
 * The size of datatype dt if op on it is one this provider applies as kind
 * (KR_OFI_ATOMIC_*), else 0.
 */
size_t kr_ofi_atomic_size(enum fi_datatype dt, enum fi_op op, uint32_t kind);
/* The most values of size sz one atomic of kind takes: a piece's worth, half for COMPARE
 * (the compare values ride along). */
static inline size_t kr_ofi_atomic_max(size_t sz, uint32_t kind)
{
	return KR_OFI_RMA_PIECE / sz / (kind == KR_OFI_ATOMIC_COMPARE ? 2 : 1);
}
/*
 * Apply op to count values of dt at dst (the target's memory) with the
 * operands at opnd and, for the compare ops, cmp; the values dst held go
 * to old (NULL: not wanted). The caller checked kr_ofi_atomic_size() (dt
 * indexes a table).
 */
void kr_ofi_atomic_apply(enum fi_datatype dt, enum fi_op op, uint8_t *dst, const uint8_t *opnd,
			 const uint8_t *cmp, uint8_t *old, size_t count);
int kr_ofi_query_atomic(struct fid_domain *dom, enum fi_datatype dt, enum fi_op op,
			struct fi_atomic_attr *attr, uint64_t flags);

/* ofi_cntr.c */
struct kr_ofi_cntr {
	struct fid_cntr cntr;
	struct kr_ofi_domain *dom;
	uint64_t value, err;
	struct kr_ofi_ep_set eps; /* bound endpoints */
};
int kr_ofi_cntr_open(struct fid_domain *dom, struct fi_cntr_attr *attr, struct fid_cntr **cntr,
		     void *context);
/* Bind counter c to ep for the kinds flags names (FI_SEND ... FI_REMOTE_WRITE). 0 or -FI_E*. */
int kr_ofi_cntr_bind(struct kr_ofi_ep *ep, struct kr_ofi_cntr *c, uint64_t flags);
/* Unbind ep from every counter (endpoint close). */
void kr_ofi_cntr_unbind(struct kr_ofi_ep *ep);
/* Count one operation of kind on ep: success, or an error (err nonzero). */
static inline void kr_ofi_cntr_count(struct kr_ofi_ep *ep, enum kr_ofi_cntr_kind kind, int err)
{
	struct kr_ofi_cntr *c = ep->cntr[kind];

	if (c) {
		if (err)
			c->err++;
		else
			c->value++;
	}
}

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
