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
 * This header states each call's contract: arguments, return values and
 * errors. How and why the library behaves as it does (DCI placement,
 * promotion, heap growth, credits, recovery, a dying keeper) is told once,
 * in the man pages: kr_attach(3), kr_connect(3), kr_bind(3), krpoold(8).
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
	/*
	 * The launch this job belongs to: 64 hex digits (32 bytes) shared by
	 * its ranks. Default: $KR_LAUNCH_KEY, else a random key (a launch of
	 * this job alone). Jobs reach only memory of their own launch.
	 */
	const char *launch_key;
	/*
	 * DC initiators each thread may post through (1..KR_DCIS_PER_THREAD_MAX;
	 * see kr_connect()). 0: $KR_DCIS_PER_THREAD, else
	 * KR_DCIS_PER_THREAD_DEFAULT.
	 */
	uint32_t dcis_per_thread;
	/*
	 * Requests per second on one vQP that move it from DC onto an RC QP
	 * of its own (kr_connect(), "Promotion"). 0: $KR_PROMOTE_RATE (a
	 * number, or "off"), else KR_PROMOTE_RATE_DEFAULT; KR_PROMOTE_OFF:
	 * never.
	 */
	uint32_t promote_rate;
	/*
	 * The uid the keeper runs as, when it is neither root nor this
	 * process's uid (a service account). 0: $KR_KEEPER_UID, else none.
	 * kr_attach() sends the launch's key to no other (EPERM).
	 */
	uint32_t keeper_uid;
};

/* A thread spreads its peers over up to this many DCIs (kr_connect()). */
#define KR_DCIS_PER_THREAD_DEFAULT 8u
#define KR_DCIS_PER_THREAD_MAX	   16u
/* A vQP posting 100,000 requests a second or more gets an RC QP (kr_connect()). */
#define KR_PROMOTE_RATE_DEFAULT 100000u
#define KR_PROMOTE_OFF		0xffffffffu

/*
 * kr_attach() - attach this process to the local keeper: receive and map its
 * hugepage segments, the device's doorbells and this job's heap
 * (kr_attach(3); with kmod-min also "With kmod-min" there).
 * @opts: NULL for the defaults.
 *
 * One attach per process at a time. Returns a context, or NULL with errno:
 * ENOENT or ECONNREFUSED (no keeper at the socket), EACCES (socket not
 * accessible: not in the keeper's group), EUSERS (the uid holds as many
 * connections as it may), EINVAL (bad opts, a launch key that is not 64 hex
 * digits, dcis_per_thread or $KR_DCIS_PER_THREAD above
 * KR_DCIS_PER_THREAD_MAX or not a number, $KR_KEEPER_UID not a uid),
 * EALREADY (already attached), ENOSPC (no free job slot, no tenant slot free
 * for a new launch, or no warm heap within 2 s), EDQUOT (a new launch, and
 * this uid holds as many tenant slots as krpoold --uid-launches allows),
 * EPERM (the launch is bound on this node under another uid or key; or the
 * socket is served by a uid other than root, this process's and keeper_uid:
 * sent nothing), EADDRINUSE (the keeper's addresses are taken in this
 * process), EPROTO (another protocol or a malformed reply), ENODEV (the
 * keeper fences its jobs with kmod-min and this process cannot open
 * /dev/krmin), ENOMEM, ENOTCONN or EPIPE (the keeper went away during the
 * attach).
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
	uint32_t tenant;      /* tenant slot of this job (its launch's on this node) */
	uint32_t job;         /* job slot */
	uint64_t launch_tag;  /* names the job's launch (public; see kr_attach_opts) */
	int32_t keeper_pid;
	uint32_t dci_leases;  /* DCIs this job holds */
	size_t heap_len;      /* bytes the kr_malloc heap may grow to (krpoold --heap-mb) */
	uint32_t dcis_per_thread; /* see kr_attach_opts */
	uint32_t node; /* this node's id (krpoold --node-id): what peers kr_connect() to */
	uint32_t promote_rate; /* see kr_attach_opts; KR_PROMOTE_OFF: never */
	uint32_t flags; /* KR_CTX_F_* */
};
/*
 * The device's work runs on this host's CPUs (the sim): a loop that polls
 * and finds nothing should give its core up (sched_yield), or the device
 * waits for it. A ConnectX never sets it.
 */
#define KR_CTX_F_HOST_CPU 1u

/*
 * kr_ctx_query() - describe the attachment and check that the keeper is alive
 * (one non-blocking socket check). Returns 0, -EINVAL, or -ENOTCONN when the
 * keeper has gone away (attr is still filled in).
 */
int kr_ctx_query(struct kr_ctx *ctx, struct kr_ctx_attr *attr);

/*
 * kr_malloc() - RDMA-ready memory from the job's heap, which the keeper
 * registered as this job's own MR (no registration call needed; kr_reg_mr()
 * still gives a key for a sub-range). 16-byte aligned. How the heap grows:
 * kr_attach(3).
 * Returns NULL with errno: EINVAL (NULL ctx or len 0), ENOMEM (heap full:
 * past kr_ctx_attr.heap_len, or the node has no free hugepage), ENOTCONN
 * (the keeper went away).
 */
void *kr_malloc(struct kr_ctx *ctx, size_t len);
/*
 * kr_free() - return memory from kr_malloc(); NULL is ignored, and so is
 * (logged) a pointer outside the heap or, among blocks of up to 4 KB, one
 * that is no block handed out (inside one, freed twice). Safe after the
 * keeper died (the heap stays mapped until kr_detach()).
 */
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
 * the given rights (enum kr_access), inside the job's own heap (kr_malloc
 * memory); the key covers exactly the range, so a peer given its rkey
 * reaches nothing else. Memory outside the heap: kr_reg_mr_fd().
 * Returns an MR, or NULL with errno: EINVAL (NULL ctx, len 0, unknown access
 * bits, remote write or atomic rights without KR_MR_LOCAL_WRITE, range
 * outside the heap's backed part), ENOSPC (too many MRs for this job),
 * EREMOTEIO (the device refused), ENOTCONN or EPIPE (keeper gone), ENOMEM.
 */
struct kr_mr *kr_reg_mr(struct kr_ctx *ctx, void *addr, size_t len, uint32_t access);
/*
 * kr_reg_mr_fd() - a memory key over memory the job shares as a file: len
 * bytes at offset off of fd, which the job has mapped MAP_SHARED so that
 * byte off is at addr (addr and off then agree modulo 4096). fd must be a
 * memfd (memfd_create with MFD_ALLOW_SEALING, MFD_HUGETLB for hugepages)
 * sealed with F_SEAL_SHRINK and holding off + len bytes; O_RDWR unless
 * access grants no write. The keeper maps the file itself and registers it
 * in this job's PD only; the key names addr, so peers and this job's posts
 * use plain pointers (posts may take their local buffer from it). Released
 * by kr_dereg_mr() or when the job dies; the caller may close fd at once.
 * Returns an MR, or NULL with errno: EINVAL (bad argument, a file that is
 * not a sealed memfd — a regular file, socket or device — or too short,
 * write rights on a read-only descriptor), EBADF (fd not open), EOPNOTSUPP
 * (a dma-buf: the device cannot import one), ENOSPC, ENOMEM, EREMOTEIO,
 * ENOTCONN.
 */
struct kr_mr *kr_reg_mr_fd(struct kr_ctx *ctx, int fd, uint64_t off, size_t len, void *addr,
			   uint32_t access);
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
	KR_LEASE_RC = 2,  /* a spare RC QP, in INIT until the keeper connects it to a peer */
	KR_LEASE_VQP = 3, /* a virtual QP slot */
};

/* A lease as the keeper recorded it in the pool segment. */
struct kr_lease {
	uint32_t kind;  /* enum kr_lease_kind */
	uint32_t index; /* slot within the tenant */
	uint32_t gen;   /* generation of the grant */
	uint32_t qpn;   /* DCI and RC: its QP number; 0 for a vQP slot */
};

/*
 * kr_lease_alloc() - lease one object of kind from the keeper's pool. The
 * lease is recorded in the pool segment with this process's pid and a new
 * generation. No firmware command runs: the object is already warm.
 * A KR_LEASE_RC QP stays in INIT, in keeper-only memory: the job holds it
 * (and its QP number) for the connect the virtual QP layer asks of the
 * keeper; the keeper resets it to INIT when it comes back (free, detach or
 * death of the job).
 * Returns 0, -EINVAL (NULL argument, unknown kind, or a kind the keeper
 * was started without: --rc-spares 0 or --vqps 0), -ENOSPC (none free in
 * the tenant's pool: retry later, the keeper refills), -EBUSY (this job's
 * requests failed too often lately, e.g. guessed keys: its leases are refused
 * for a second; krpoold(8)), -EMFILE (this process
 * holds the most DCIs it may), -ENOTCONN or -EPIPE (keeper gone); with
 * kmod-min also -EACCES (the module refused the lease's token: the keeper
 * took the DCI back meanwhile) or another mmap errno.
 */
int kr_lease_alloc(struct kr_ctx *ctx, uint32_t kind, struct kr_lease *lease);
/*
 * kr_lease_free() - give a lease back; the keeper resets the object before
 * anyone else gets it (a DCI to RTS, an RC QP to INIT), in the background. Returns 0, -EINVAL (not a lease this job holds, or
 * stale generation), -ENOTCONN or -EPIPE (keeper gone).
 */
int kr_lease_free(struct kr_ctx *ctx, const struct kr_lease *lease);

/* ---- virtual QPs: connect and post (src/job/virtqp) ---- */

struct kr_vqp;

/* kr_connect()'s peer for "this node", whatever its node id. */
#define KR_NODE_SELF 0xffffffffu

/* Options of kr_connect(); NULL or 0 fields mean the defaults. */
struct kr_connect_opts {
	uint32_t credits; /* send-queue share in 64-byte WQEBBs: 0 = 32 (8 vQPs per DCI) */
	uint32_t flags;   /* reserved, must be 0 */
	/*
	 * Two-sided messages: the port a peer job bound with kr_bind() (1..65535);
	 * 0 = none (one-sided operations only, kr_post_send() gives
	 * -EDESTADDRREQ). reply_port: a port of this job the receiver may answer
	 * on (kr_port_sender()), 0 = none.
	 */
	uint32_t port;
	uint32_t reply_port;
};

/*
 * kr_connect() - a virtual QP to the caller's tenant on node @peer
 * (KR_NODE_SELF: this node's keeper), with RC semantics (reliable, in order
 * per vQP) over one of the DC initiators the calling thread posts through.
 * No firmware command and no handshake. Which DCI, promotion to an RC QP
 * of its own, and errors on a shared DCI: kr_connect(3).
 *
 * Use the vQP from the thread that created it (or serialise).
 * Disconnect every vQP before kr_detach(). With opts->port the vQP reaches
 * the receive endpoint of that port on the peer (kr_bind(3)) and claims a
 * sender slot there first (a round trip, waited for here).
 *
 * Returns a vQP, or NULL with errno: EINVAL (NULL ctx, bad opts, a port
 * above 65535), ECONNREFUSED (no job of the launch has that port bound on
 * the peer, or it is not published yet: retry), EUSERS (the port's table has
 * no free sender slot), ETIMEDOUT (the receiver did not answer the slot
 * claim), ENOSPC (none of the thread's DCIs has the credits asked for and it
 * may lease no other: disconnect a vQP or connect from another thread; or no
 * DCI free in the pool: retry), ENOENT (no such node), EHOSTUNREACH/EAGAIN
 * (metadata lookup failed, retry), EBUSY (the job is throttled for too many
 * failed requests, see kr_lease_alloc()), EMFILE (the process holds the most
 * DCIs it may), ENOTCONN/EPIPE (keeper gone), ENOMEM.
 */
struct kr_vqp *kr_connect(struct kr_ctx *ctx, uint32_t peer, const struct kr_connect_opts *opts);

/*
 * kr_disconnect() - forget a vQP: completions not yet polled are dropped;
 * requests still in flight are waited for (their completions dropped too),
 * so when it returns 0 no request of the vQP reads or writes its local
 * buffers any more: they may be freed or reused. The wait is a round trip,
 * at most the transport's retries (a peer that no longer answers: about
 * 150 ms), never more than KR_DISCONNECT_WAIT_MS. Returns 0, -EINVAL (NULL),
 * or -ETIMEDOUT (the vQP is gone all the same, but a request of it was still
 * in flight after KR_DISCONNECT_WAIT_MS: its local buffer may be written
 * until the keeper resets the queue it went on; do not reuse it).
 */
int kr_disconnect(struct kr_vqp *vqp);
/* kr_disconnect()'s longest wait for the vQP's requests in flight, in milliseconds. */
#define KR_DISCONNECT_WAIT_MS 5000u

/*
 * Peers of a job started by a PMIx launcher (Open MPI's mpirun, Slurm's
 * srun), found through the launcher's key-value store instead of the
 * MetaServer. kr_pmix_exchange() - collective over the job: publish this
 * rank's endpoint (its node's DC target record for its launch: node id, DCT
 * number, port address; never a key) and fence until every rank's is in.
 * Call it once per attachment, after kr_attach(). Returns 0, -EINVAL,
 * -ENODEV (the keeper has no node id), -ENXIO (not started by a PMIx
 * launcher), -EIO (the store refused), -EOPNOTSUPP (built without PMIx).
 */
int kr_pmix_exchange(struct kr_ctx *ctx);
/*
 * kr_connect_rank() - kr_connect() to the node of @rank of this PMIx job,
 * its DC target taken from the store (no MetaServer READ); a rank of this
 * node gives the KR_NODE_SELF vQP. One-sided only (opts->port must be 0).
 * NULL with errno: as kr_connect(), and ENXIO (no kr_pmix_exchange() for
 * this attachment), ENOENT (no such rank or it published nothing), EPROTO
 * (the rank's record is not of this launch), EOPNOTSUPP (built without PMIx).
 */
struct kr_vqp *kr_connect_rank(struct kr_ctx *ctx, uint32_t rank,
			       const struct kr_connect_opts *opts);

/* Flags of kr_post_*(). Every request produces exactly one struct kr_wc. */
enum kr_post_flags {
	KR_POST_INLINE = 1u << 0, /* WRITE/SEND: copy up to KR_POST_MAX_INLINE bytes into the WQE */
	KR_POST_FENCE = 1u << 1,  /* wait for this vQP's earlier READs/atomics first */
	/*
	 * More requests follow: the request is queued without a doorbell, and the
	 * next post without KR_POST_MORE on any vQP of the same DCI (a promoted
	 * vQP: its own RC QP) rings one doorbell for all of them (a post list). A
	 * kr_poll() that finds nothing and kr_disconnect() ring it too, so a
	 * batch left open still goes out.
	 */
	KR_POST_MORE = 1u << 2,
};

/* Largest KR_POST_INLINE payload. */
#define KR_POST_MAX_INLINE 256u
/* Largest message. */
#define KR_POST_MAX_LEN (1u << 30)

/*
 * kr_post_read() / kr_post_write() / kr_post_write_imm() - one-sided RDMA
 * between local [local, local+len) and the peer's [raddr, raddr+len) under
 * rkey. The local buffer must be memory of this job's heap (kr_malloc), which
 * the job's own MR covers (its kr_reg_mr regions are inside it), or of a
 * file it registered (kr_reg_mr_fd); with KR_POST_INLINE (WRITE only) it may
 * be any memory and is copied at once.
 * kr_post_write_imm() also delivers imm to the peer's receive queue.
 *
 * Checked before anything touches the shared ring; on an error nothing is
 * posted. Returns 0, or:
 *   -EINVAL  NULL vqp or local, len 0 or above KR_POST_MAX_LEN, unknown
 *            flags, KR_POST_INLINE on a READ or above KR_POST_MAX_INLINE,
 *            local range outside the job's heap and registered files,
 *            remote range wrapping;
 *   -EAGAIN  beyond the vQP's credits (poll completions first), the shared
 *            DCI is being recovered after another vQP's error, or the vQP is
 *            moving between DC and RC and waits for its requests in flight
 *            (kr_connect(), "Promotion"): poll, retry;
 *   -EIO     the vQP is in the error state (a request of it failed);
 *   -ENOTCONN the keeper went away.
 */
int kr_post_read(struct kr_vqp *vqp, void *local, uint32_t len, uint64_t raddr, uint32_t rkey,
		 uint64_t wr_id, uint32_t flags);
int kr_post_write(struct kr_vqp *vqp, const void *local, uint32_t len, uint64_t raddr,
		  uint32_t rkey, uint64_t wr_id, uint32_t flags);
int kr_post_write_imm(struct kr_vqp *vqp, const void *local, uint32_t len, uint64_t raddr,
		      uint32_t rkey, uint32_t imm, uint64_t wr_id, uint32_t flags);

/*
 * kr_post_cas() / kr_post_faa() - 8-byte atomics on the peer's raddr: compare
 * and swap (if *raddr == compare then *raddr = swap) or fetch and add; the
 * old value lands in local[0..8). local and raddr must be 8-byte aligned
 * (-EINVAL otherwise); other errors as kr_post_read().
 */
int kr_post_cas(struct kr_vqp *vqp, uint64_t *local, uint64_t raddr, uint32_t rkey,
		uint64_t compare, uint64_t swap, uint64_t wr_id, uint32_t flags);
int kr_post_faa(struct kr_vqp *vqp, uint64_t *local, uint64_t raddr, uint32_t rkey, uint64_t add,
		uint64_t wr_id, uint32_t flags);

/* ---- two-sided messages: ports (src/job/virtqp/virtqp_port.c, virtqp_send.c) ---- */

struct kr_port;
struct kr_wc;

/* Options of kr_bind(); NULL or 0 fields mean the defaults. */
struct kr_bind_opts {
	uint32_t senders; /* sender slots (vQPs connected at once): 0 = 16, at most 1024 */
	uint32_t window;  /* buffers promised to one sender at a time: 0 = 16 */
	uint32_t flags;	  /* reserved, must be 0 */
};

/*
 * A plain SEND carries no framing bytes (krcore's sender slot and order ride
 * in the immediate); a SEND with the user's imm carries it in a trailer of
 * this many bytes after the message, which the receive buffer must have
 * room for.
 */
#define KR_SEND_HDR_LEN 16u
/* Largest KR_POST_INLINE kr_post_send_imm() (kr_post_send(): KR_POST_MAX_INLINE). */
#define KR_SEND_MAX_INLINE (KR_POST_MAX_INLINE - KR_SEND_HDR_LEN)
/* Receive buffers a port holds at once. */
#define KR_PORT_MAX_RECV 256u

/*
 * kr_bind() - receive two-sided messages on port (1..65535) of this node,
 * in buffers the job posts with kr_post_recv(), completed by kr_poll_recv()
 * (endpoint, sender table and credits: kr_bind(3)). One binding of a port
 * per launch and node. Use a port from one thread at a time; kr_unbind()
 * before kr_detach().
 * Returns a port, or NULL with errno: EINVAL (NULL ctx, port 0 or above
 * 65535, bad opts), EADDRINUSE (this launch has the port bound on this
 * node), ENOSPC (no free receive endpoint: krpoold --ports), EDQUOT (this
 * uid holds as many ports as krpoold --uid-ports allows), EOPNOTSUPP (the
 * keeper has none: --ports 0), EACCES (kmod-min refused the endpoint's
 * pages), ENOMEM (heap full), ENOTCONN/EPIPE (keeper gone).
 */
struct kr_port *kr_bind(struct kr_ctx *ctx, uint32_t port, const struct kr_bind_opts *opts);

/*
 * kr_unbind() - stop receiving: the DC target goes at once (senders' later
 * messages complete in error at the sender), posted buffers and completions
 * not yet polled are dropped. Returns 0, -EINVAL (NULL), -ENOTCONN (keeper
 * gone: local state is released anyway).
 */
int kr_unbind(struct kr_port *port);

/*
 * kr_post_recv() - post buf (kr_malloc memory, len >= 1) for one message of
 * up to len bytes (a message sent with kr_post_send_imm(): up to
 * len - KR_SEND_HDR_LEN, its trailer lands after it in buf). Its completion
 * comes from kr_poll_recv() with wr_id.
 * Returns 0, -EINVAL (NULL, len 0 or above KR_POST_MAX_LEN, buf outside the
 * job's heap), -EAGAIN (KR_PORT_MAX_RECV buffers posted already),
 * -ENOTCONN (keeper gone).
 */
int kr_post_recv(struct kr_port *port, void *buf, uint32_t len, uint64_t wr_id);

/*
 * kr_poll_recv() - up to n received messages, in arrival order (per sender:
 * in the order sent, each exactly once). A completion has opcode
 * KR_WC_OP_RECV, the buffer's wr_id, byte_len (the message, without
 * krcore's header), imm and KR_WC_F_IMM when sent with one, and src: the
 * sender's slot (kr_port_sender()). A message longer than its buffer
 * completes with KR_WC_LOC_LEN_ERR (the sender sees an error too; src is
 * UINT32_MAX: an error names no sender); the port and other senders go on. Also admits and lets go
 * senders and hands out credits for the buffers posted: a port nobody polls stops its senders
 * (kr_post_send() -EAGAIN), it never drops their messages.
 * Returns the number of completions (0..n), -EINVAL (NULL port or wc,
 * n < 0), -ENOTCONN (keeper gone), -EIO (the CQ named a receive never posted).
 */
int kr_poll_recv(struct kr_port *port, struct kr_wc *wc, int n);

/* Who sent on a slot of a port. */
struct kr_port_sender {
	uint32_t node;	     /* the sender's node id */
	uint32_t reply_port; /* the port it asked answers on (kr_connect_opts), 0 = none */
};

/*
 * kr_port_sender() - the sender holding slot src of port now (src from a
 * receive completion). 0, -EINVAL (NULL argument, src out of range),
 * -ENOENT (no sender holds the slot: it disconnected).
 */
int kr_port_sender(const struct kr_port *port, uint32_t src, struct kr_port_sender *out);

/*
 * kr_post_send() / kr_post_send_imm() - one message to the port vqp was
 * connected to (kr_connect_opts.port), from local (kr_malloc memory or a
 * registered file, or any memory with KR_POST_INLINE up to
 * KR_POST_MAX_INLINE bytes, KR_SEND_MAX_INLINE with imm); imm reaches the
 * receiver's completion. Reliable and in order per vQP, completed once the
 * receiver's NIC placed it. A send needs a credit from the receiver
 * (kr_bind(3), "Credits"): without one it returns -EAGAIN and posts
 * nothing; poll and retry.
 *
 * Returns 0, or the errors of kr_post_write() (the local range rules, and
 * -EAGAIN for the send queue), plus -EDESTADDRREQ (vqp was connected
 * without a port).
 */
int kr_post_send(struct kr_vqp *vqp, const void *local, uint32_t len, uint64_t wr_id,
		 uint32_t flags);
int kr_post_send_imm(struct kr_vqp *vqp, const void *local, uint32_t len, uint32_t imm,
		     uint64_t wr_id, uint32_t flags);

/* What a completion was for. */
enum kr_wc_opcode {
	KR_WC_OP_READ = 1,
	KR_WC_OP_WRITE,
	KR_WC_OP_WRITE_IMM,
	KR_WC_OP_CAS,
	KR_WC_OP_FAA,
	KR_WC_OP_SEND,
	KR_WC_OP_RECV,
};

enum kr_wc_flags {
	KR_WC_F_IMM = 1u << 0,      /* imm is valid */
	KR_WC_F_REPOSTED = 1u << 1, /* flushed by another vQP's error, posted again after recovery */
};

/* One completion. */
struct kr_wc {
	uint64_t wr_id;	  /* as posted */
	uint32_t status;  /* enum kr_wc_status */
	uint32_t opcode;  /* enum kr_wc_opcode */
	uint32_t byte_len;
	uint32_t imm;
	uint32_t flags;	  /* enum kr_wc_flags */
	uint32_t src;	  /* KR_WC_OP_RECV: the sender's slot on the port (kr_port_sender()) */
};

/*
 * kr_poll() - up to n completions of vqp, in the order its requests were
 * posted. Also reaps the shared DCI's CQ for the other vQPs on it, and rings
 * the doorbell for a batch left open with KR_POST_MORE when it finds
 * nothing. An error completion moves only this vQP to KR_VQP_ERR; the other
 * vQPs' flushed requests are posted again and complete with
 * KR_WC_F_REPOSTED (kr_connect(3), "Errors on a shared DCI"). A poll that
 * finds nothing reports a dead keeper within ~100 ms (kr_attach(3)).
 *
 * Returns the number of completions (0..n), or -EINVAL (NULL vqp or wc,
 * n < 0), -ENOTCONN (keeper gone, or it detached this job: requests in flight
 * then never complete), -EIO (the CQ named a request never posted),
 * -EBUSY (the replacement DCI was refused: the job is throttled for too many
 * failed requests; poll again later).
 */
int kr_poll(struct kr_vqp *vqp, struct kr_wc *wc, int n);

enum kr_vqp_transport {
	KR_VQP_DC = 1, /* over the thread's shared DC initiator */
	KR_VQP_RC,     /* promoted: over an RC QP of its own (kr_connect()) */
};

enum kr_vqp_state {
	KR_VQP_RTS = 1, /* ready */
	KR_VQP_ERR,     /* a request failed: disconnect */
};

/* What kr_vqp_query() reports. */
struct kr_vqp_attr {
	uint32_t transport; /* enum kr_vqp_transport */
	uint32_t state;	    /* enum kr_vqp_state */
	uint32_t peer;	    /* node id as connected */
	uint32_t dctn;	    /* the peer's DC target */
	uint32_t credits;   /* WQEBBs of the DCI's send queue this vQP holds */
	uint32_t credits_used; /* held by requests whose completion was not polled yet */
	uint32_t dci_qpn;      /* the DCI (or, promoted, the RC QP) it posts through now */
	uint32_t dci_recoveries; /* times that DCI slot was replaced after an error */
	uint32_t promotions;	 /* times it moved onto an RC QP */
	uint32_t demotions;	 /* times it moved back onto a DCI */
};

/* kr_vqp_query() - describe a vQP. 0 or -EINVAL (NULL argument). */
int kr_vqp_query(const struct kr_vqp *vqp, struct kr_vqp_attr *attr);

#ifdef __cplusplus
}
#endif

#endif /* KRCORE_H */
