/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/devx: the mlx5 driver. Private header of the folder.
 *
 * Everything above the ops table (PRM mailboxes, WQE bytes, CQE parsing) is
 * shared by every backend: hw (rdma-core libmlx5 DEVX, devx_hw.c), the
 * driver's own, and those a program adds (kr_devx_backend_add), which serve
 * the device names that begin with their prefix. The driver never names one
 * of those: what differs between backends, callers learn from the ops table
 * and the capabilities a backend states (enum kr_devx_backend_caps).
 *
 * Errors: 0 or a negative errno. A firmware command that completes with a bad
 * status returns -EREMOTEIO; its status and syndrome are in ctx->last_err (and
 * in the out mailbox) and are logged.
 */
#ifndef KR_DEVX_H
#define KR_DEVX_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "common/kr_barrier.h"
#include "devx/devx_prm.h"

struct kr_devx_ctx;
struct kr_devx_obj;
struct kr_devx_uar_ref;

/* ---- the port's address (devx_port.c; entries from the backend) ---- */

/* What a GID table entry is (sysfs gid_attrs/types: "IB/RoCE v1", "RoCE v2"). */
enum kr_devx_gid_type {
	KR_GID_TYPE_IB = 1,	 /* InfiniBand port */
	KR_GID_TYPE_ROCE_V1 = 2, /* Ethernet, RoCE v1: Ethertype 0x8915, not routable */
	KR_GID_TYPE_ROCE_V2 = 3, /* Ethernet, RoCE v2: UDP/IP (port 4791) */
};

struct kr_devx_gid_entry {
	uint8_t gid[16];
	uint8_t type;	/* enum kr_devx_gid_type */
	uint8_t mac[6]; /* RoCE: the MAC of the entry's net device */
};

/* What a peer needs to reach a port: its GID, and its MAC (RoCE) or LID (IB). */
struct kr_devx_addr {
	uint8_t gid[16];
	uint8_t mac[6];
	uint16_t lid;
};
_Static_assert(sizeof(struct kr_devx_addr) == 24, "kr_devx_addr layout");

/*
 * The port a context sends from: its address and the GID index its QPs and
 * DCTs name (selected at open, kr_devx_port_select). Fixed layout: the
 * keeper copies it into tenant zones for its jobs.
 */
struct kr_devx_port {
	struct kr_devx_addr addr;
	uint16_t gid_index; /* KR_DEVX_GID_NONE: no usable GID */
	uint8_t num;	    /* 1-based port number */
	uint8_t roce;	    /* link layer Ethernet */
	uint8_t gid_type;   /* enum kr_devx_gid_type */
	/* quality of service every path from this port carries (krpoold
	 * --traffic-class, --priority): the GRH traffic class (DSCP << 2 | ECN
	 * on RoCE v2) and the InfiniBand SL or Ethernet priority (PCP) */
	uint8_t tclass;
	uint8_t sl;
	uint8_t rsvd[1];
};
_Static_assert(sizeof(struct kr_devx_port) == 32, "kr_devx_port layout");

#define KR_DEVX_GID_NONE 0xffffu

/* A umem: memory the device may DMA, named by id in PRM commands. */
struct kr_devx_umem {
	struct kr_devx_ctx *ctx;
	uint32_t id;
	void *addr;
	size_t size;
	void *priv; /* backend handle */
};

/* A UAR page: doorbells are 8-byte writes at reg_addr. */
struct kr_devx_uar {
	struct kr_devx_ctx *ctx;
	uint32_t page_id; /* qpc.uar_page, cqc.uar_page */
	void *reg_addr;   /* doorbell register (hw: UAR MMIO, BF offset) */
	void *base_addr;  /* start of the UAR page */
	void *priv;
	int shared_fd;	  /* hw, --trusted: the command fd handed to jobs (kr_devx_uar_export), or -1 */
	/* BlueFlame (a write-combining page, one writer): bytes of each of the
	 * register's two buffers, which doorbells and WQE copies alternate
	 * between (bf_off: the next one's offset from reg_addr); 0: doorbells
	 * at reg_addr only */
	uint32_t bf_size;
	uint32_t bf_off;
	/* kr_devx_uar_alloc_private: the page's other register, held unused so
	 * that no one else gets a register of this page; NULL otherwise */
	struct kr_devx_uar *sibling;
};

/*
 * ops->alloc_uar flags, as libmlx5's mlx5dv_devx_alloc_uar (rdma-core 44):
 * 0 is MLX5DV_UAR_ALLOC_TYPE_NC, the context's one non-cached page, the same
 * page on every call. KR_DEVX_UAR_BLUEFLAME is MLX5DV_UAR_ALLOC_TYPE_BF: one
 * BlueFlame register from a free list, each page split into two registers
 * (0x800 and 0x800 + bf_reg_size) that two calls may hand out; -EOPNOTSUPP
 * on a device without BlueFlame. KR_DEVX_UAR_NC_DEDICATED is
 * MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED (rdma-core >= 45): a doorbell page of
 * its own per call; -EOPNOTSUPP with an older libmlx5.
 */
enum kr_devx_uar_flags {
	KR_DEVX_UAR_BLUEFLAME = 1u << 0,
	KR_DEVX_UAR_NC_DEDICATED = 1u << 1,
};

/*
 * devx_uar.c: a UAR page no other UAR of ctx shares, for a QP whose holder
 * maps the page (kmod-min) and must ring no one else's QP through it. Both
 * BlueFlame registers of one page (the one at the lower offset rings, the
 * other is held in ->sibling), else a dedicated doorbell page. 0,
 * -EOPNOTSUPP (no BlueFlame and a libmlx5 without dedicated pages: pages
 * cannot be kept apart), -EAGAIN (no two registers of one page came), or the
 * allocation's error. Freed with kr_devx_uar_free_private.
 */
int kr_devx_uar_alloc_private(struct kr_devx_ctx *ctx, struct kr_devx_uar **uar);
void kr_devx_uar_free_private(struct kr_devx_uar *uar);

/* A firmware object created through obj_create (PD, CQ, QP, RMP, DCT, MKEY). */
struct kr_devx_obj {
	struct kr_devx_ctx *ctx;
	uint16_t create_op; /* KR_CMD_OP_* that created it */
	uint32_t id;        /* pdn, cqn, qpn, rmpn, dctn or mkey index */
	void *priv;
};

/* Status of the last failed command, for callers that want it after -EREMOTEIO. */
struct kr_devx_cmd_err {
	uint16_t opcode;
	uint8_t status;
	uint32_t syndrome;
};

/*
 * The DEVX boundary, in the shape of rdma-core's mlx5dv_devx_* family. Every
 * call returns 0 or a negative errno; command calls return -EREMOTEIO when the
 * out mailbox carries a bad status (the mailbox is still filled in). Members
 * are sorted; backends define one static const instance each.
 */
struct kr_devx_ops {
	int (*alloc_uar)(struct kr_devx_ctx *ctx, uint32_t flags, struct kr_devx_uar **uar);
	void (*close)(struct kr_devx_ctx *ctx);
	/* 8-byte doorbell write at uar->reg_addr (+ bf_off, which it then flips);
	 * val is already big-endian bytes. */
	void (*doorbell)(struct kr_devx_uar *uar, uint64_t val);
	/* BlueFlame: the whole WQE (len bytes, a multiple of 64, at most
	 * uar->bf_size) written to the register's next buffer instead; only
	 * for a UAR with bf_size (hw). */
	void (*bf_copy)(struct kr_devx_uar *uar, const void *wqe, uint32_t len);
	void (*free_uar)(struct kr_devx_uar *uar);
	int (*general_cmd)(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			   size_t outlen);
	int (*obj_create)(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			  size_t outlen, struct kr_devx_obj **obj);
	int (*obj_destroy)(struct kr_devx_obj *obj);
	int (*obj_modify)(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
			  size_t outlen);
	int (*obj_query)(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
			 size_t outlen);
	int (*query_eqn)(struct kr_devx_ctx *ctx, uint32_t vector, uint32_t *eqn);
	/* GID table entry of port (1-based) at index: 0, -ENODATA (empty), -EINVAL. */
	int (*query_gid_entry)(struct kr_devx_ctx *ctx, uint8_t port, uint16_t index,
			       struct kr_devx_gid_entry *entry);
	/* The port's LID (InfiniBand; 0 on Ethernet). */
	int (*query_lid)(struct kr_devx_ctx *ctx, uint8_t port, uint16_t *lid);
	/* What a syndrome of this device's firmware means; NULL: none named (ConnectX). */
	const char *(*syndrome_str)(uint32_t syndrome);
	/* kr_devx_uar_export/_import/_wrap on this device (devx_share.c says what each does). */
	int (*uar_export)(struct kr_devx_uar *uar, int *fd, struct kr_devx_uar_ref *ref);
	int (*uar_import)(struct kr_devx_ctx *ctx, uint32_t page_id, struct kr_devx_uar **uar);
	int (*uar_wrap)(struct kr_devx_ctx *ctx, uint32_t page_id, void *page, uint32_t reg_off,
			uint32_t bf_size, struct kr_devx_uar **uar);
	int (*umem_dereg)(struct kr_devx_umem *umem);
	/*
	 * Pin [addr, addr + size) as a umem. access: KR_ACCESS_UMEM bits only,
	 * as the kernel's devx_umem_get takes them; anything else is -EINVAL
	 * (remote atomic rights live in the mkey, never in a umem).
	 */
	int (*umem_reg)(struct kr_devx_ctx *ctx, void *addr, size_t size, uint32_t access,
			struct kr_devx_umem **umem);
	/*
	 * Completion events (devx_event.c), as mlx5dv_devx_create_event_channel,
	 * _subscribe_devx_event_fd and the CQ doorbell at UAR offset 0x20 (val
	 * big-endian bytes: arm word, then the CQN). NULL: none (a job's view).
	 */
	int (*event_ch_open)(struct kr_devx_ctx *ctx, void **priv);
	void (*event_ch_close)(struct kr_devx_ctx *ctx, void *priv);
	int (*event_subscribe_fd)(struct kr_devx_ctx *ctx, void *priv, struct kr_devx_obj *obj,
				  uint16_t event_num, int fd);
	void (*cq_doorbell)(struct kr_devx_uar *uar, uint64_t val);
};

/* General device capabilities (QUERY_HCA_CAP, general, current). */
struct kr_devx_caps {
	uint8_t log_max_qp;
	uint8_t log_max_qp_sz;
	uint8_t log_max_cq;
	uint8_t log_max_cq_sz;
	uint8_t log_max_srq;
	uint8_t log_max_srq_sz;
	uint8_t log_max_pd;
	uint8_t log_max_mkey;
	uint8_t log_max_msg;
	uint8_t log_max_ra_req_dc;
	uint8_t log_max_ra_res_dc;
	uint8_t log_max_ra_req_qp;
	uint8_t log_max_ra_res_qp;
	uint8_t num_ports;
	uint8_t port_type; /* KR_PORT_TYPE_IB or KR_PORT_TYPE_ETH (RoCE) */
	uint8_t cqe_version;  /* 1: CQEs carry user_index (what the poller dispatches on) */
	uint8_t qp_ts_format; /* KR_TS_CAP_*: RoCE capability page, else the SQ's (general) */
	bool basic_cyclic_rcv_wqe; /* receive WQEs of a cyclic RMP without a next segment */
	uint16_t bf_reg_size;	   /* BlueFlame register bytes (1 << log_bf_reg_size), 0: none */
	uint16_t max_wqe_sz_sq;
	uint16_t max_wqe_sz_rq;
	uint16_t max_wqe_sz_sq_dc;
	uint16_t gid_table_len; /* entries: RoCE page's roce_address_table_size on Ethernet,
				 * else 8 << cap.gid_table_size (PRM encoding) */
	uint16_t vhca_id;
	bool dct;
	bool roce;
	bool atomic;
	bool rc;
};

/* Resource kinds the CQ poller dispatches to through user_index. */
enum kr_devx_rsc_type {
	KR_DEVX_RSC_NONE = 0,
	KR_DEVX_RSC_QP,
	KR_DEVX_RSC_SRQ,
	KR_DEVX_RSC_DCT,
};

struct kr_devx_rsc {
	enum kr_devx_rsc_type type;
	void *obj; /* struct kr_devx_qp / kr_devx_dct, in this process */
};

/* An open device. Process-local; the backend keeps its state in priv. */
struct kr_devx_ctx {
	const struct kr_devx_ops *ops;
	const struct kr_devx_backend *backend; /* what opened it, and what it can do */
	char name[64];
	struct kr_devx_caps caps;
	struct kr_devx_port port; /* port 1, as kr_devx_open selected it */
	struct kr_devx_cmd_err last_err;
	bool share_cmd_fd; /* hw: kr_devx_uar_export may hand jobs the command fd (--trusted) */
	uint32_t eqn; /* completion EQ for CQs (query_eqn vector 0) */
	/* user_index -> resource, for CQE dispatch (cqe_version 1). Index 0 unused. */
	struct kr_devx_rsc *rsc;
	uint32_t rsc_cap;
	void *priv;
	uint8_t *mkey_last; /* devx_mr.c: the last mkc.mkey_7_0 per key index (low 16 bits) */
};

/*
 * Name a view ctx: name cut to fit, or fallback when NULL. A copy, not
 * snprintf: a fresh process's attach names its view, and printf's code
 * faulted in for it cost 31-57 us on a VM that traps page faults.
 */
static inline void kr_devx_name_set(struct kr_devx_ctx *ctx, const char *name, const char *fallback)
{
	const char *s = name ? name : fallback;
	size_t n = strnlen(s, sizeof(ctx->name) - 1);

	memcpy(ctx->name, s, n);
	ctx->name[n] = '\0';
}

/* ---- device (devx_device.c) ---- */

struct kr_devx_dev_info {
	char name[64]; /* "mlx5_0", or an added backend's prefix and name */
	const struct kr_devx_backend *backend;
};

/*
 * What a backend states about itself (kr_devx_backend.caps). Callers above
 * the driver decide by these, never by which backend it is.
 */
enum kr_devx_backend_caps {
	/* kr_devx_uar_export hands a UAR page as a descriptor of its own, with
	 * nothing else of the device: no command fd, so no --trusted needed. */
	KR_DEVX_BE_UAR_FD = 1u << 0,
	/* UAR pages are device MMIO at the command fd's mmap offsets (kmod-min
	 * maps them as I/O memory); else ordinary pages it pins. */
	KR_DEVX_BE_UAR_MMIO = 1u << 1,
	/* Doorbells rung in another process wake the device only through a page
	 * exported to that process (a software device sleeps when idle): a
	 * fenced job needs its tenant's page besides its DCIs' own. */
	KR_DEVX_BE_WAKE_PAGE = 1u << 2,
	/* The device's work runs on the host's own CPUs (a software device: its
	 * engine and receive threads): a thread that polls it empty for a
	 * while gives its core up now and then, or on a small host the device
	 * waits a scheduler slice (ms) for a core the poller holds. */
	KR_DEVX_BE_HOST_CPU = 1u << 3,
};

/*
 * A devx backend: the hw one is the driver's own (devx_hw.c); others are
 * added by the program (kr_devx_backend_add) and serve the names that begin
 * with their prefix. Static const instances.
 */
struct kr_devx_backend {
	const char *name;   /* what krdevinfo shows ("hw" for the driver's own) */
	const char *prefix; /* the device names it serves ("name:"); NULL: every other */
	uint32_t caps;	    /* enum kr_devx_backend_caps */
	/* open the device (its full name); NULL: this program cannot (a job) */
	int (*open)(const char *name, struct kr_devx_ctx **ctx);
	/* the devices it can open, up to max (returns how many); NULL: none */
	int (*list)(struct kr_devx_dev_info *info, int max);
	/* kr_devx_import: a doorbell-only view from what uar_export handed over */
	int (*import)(const char *name, int fd, const struct kr_devx_uar_ref *ref,
		      struct kr_devx_ctx **ctx);
};

/*
 * devx_backend.c: kr_devx_backend_add() - serve the names that begin with be->prefix
 * through be in this process, from now on. A backend that can open devices
 * takes the place of one for the same prefix that cannot (a job's
 * doorbell-only part), never the other way round. Returns 0, -EINVAL (no
 * prefix), -ENOSPC (more than 4 backends).
 */
int kr_devx_backend_add(const struct kr_devx_backend *be);
/* Does the backend behind ctx state cap (enum kr_devx_backend_caps)? */
static inline bool kr_devx_has(const struct kr_devx_ctx *ctx, uint32_t cap)
{
	return (ctx->backend->caps & cap) == cap;
}
/* The hw backend (devx_hw.c): mlx5 devices through rdma-core DEVX. */
extern const struct kr_devx_backend kr_devx_hw_backend;
/*
 * A ConnectX as a job sees it (devx_hw_view.c): kr_devx_import only, the
 * same import as kr_devx_hw_backend's, and nothing of rdma-core: a program
 * that never opens a device does not load libibverbs and libmlx5.
 */
extern const struct kr_devx_backend kr_devx_hw_view_backend;
/* devx_backend.c: the i-th added backend (NULL past the last). */
const struct kr_devx_backend *kr_devx_backend_at(uint32_t i);
/* devx_backend.c: the added backend whose prefix begins name, or NULL (a ConnectX's name). */
const struct kr_devx_backend *kr_devx_backend_added(const char *name);

/*
 * kr_devx_open() - open a device by name through the backend that serves it
 * (kr_devx_backend_add; an mlx5 device through rdma-core DEVX otherwise).
 * Queries caps and the completion EQ. Returns 0, -ENODEV (no such device, or
 * no backend here that can open it), -EOPNOTSUPP (no DEVX), -ENOMEM, or the
 * backend's error.
 */
int kr_devx_open(const char *name, struct kr_devx_ctx **ctx);
/* devx_backend.c: close what kr_devx_open or kr_devx_import gave. */
void kr_devx_close(struct kr_devx_ctx *ctx);
/* Fills up to max entries: hw mlx5 devices, then each added backend's. Returns count. */
int kr_devx_list(struct kr_devx_dev_info *info, int max);
int kr_devx_caps_query(struct kr_devx_ctx *ctx, struct kr_devx_caps *caps);
/*
 * kr_devx_caps_check() - can krcore drive a device with these caps? It needs
 * CQE version 1 (the CQ poller finds a CQE's QP, SRQ or DCT by user_index)
 * and DC. Returns 0 or -EOPNOTSUPP with the reason logged under name.
 */
int kr_devx_caps_check(const char *name, const struct kr_devx_caps *caps);
/*
 * kr_devx_ts_format() - qpc.ts_format for a QP on a device with caps, as the
 * kernel's mlx5_get_qp_default_ts chooses it: free-running when the
 * capability (the RoCE page's qp_ts_format, else the SQ's) offers nothing
 * else, DEFAULT for any other capability. Firmware refuses a QP asking for
 * a format its device lacks.
 */
uint8_t kr_devx_ts_format(const struct kr_devx_caps *caps);

/*
 * The hw backend (devx_hw.c): open an mlx5 device by its verbs name through
 * rdma-core DEVX (-ENODEV, -EOPNOTSUPP, -ENOMEM, -errno), and list the mlx5
 * devices that support mlx5dv (returns how many were written, up to max).
 */
int kr_devx_hw_open(const char *name, struct kr_devx_ctx **ctx);
int kr_devx_hw_list(struct kr_devx_dev_info *info, int max);

/*
 * The hw backend's GID table reader (devx_gid_sysfs.c), the kernel's view
 * under <sysfs>/class/infiniband/<dev>/ports/<port>/ (gids/, gid_attrs/types/,
 * gid_attrs/ndevs/, link_layer) and the MAC in <sysfs>/class/net/<ndev>/.
 * sysfs is "/sys" on a host, a fixture directory in tests. Returns 0,
 * -ENODATA (empty entry), -ENOENT (no such device or port), -EBADMSG
 * (unreadable content).
 */
int kr_devx_sysfs_gid_entry(const char *sysfs, const char *dev, uint8_t port, uint16_t index,
			    struct kr_devx_gid_entry *entry);

/* ---- port selection and paths (devx_port.c) ---- */

/*
 * kr_devx_gid_pick() - the GID index to send from, out of n entries (tab[i]
 * is index i; type 0 = empty). want >= 0 forces that index (an entry must
 * be there). Otherwise, on Ethernet: a RoCE v2 entry, IPv4-mapped first,
 * then global IPv6, then link-local (RoCE v1 is never picked by itself);
 * on InfiniBand: the first IB entry. Returns the index, -ENOENT (nothing
 * usable), -EINVAL (want out of range or empty).
 */
int kr_devx_gid_pick(const struct kr_devx_gid_entry *tab, uint32_t n, bool roce, int want);
/*
 * kr_devx_port_select() - read port's GID table through ctx's backend, pick
 * with kr_devx_gid_pick and fill *out (address, index, link layer). Returns
 * 0, -ENOENT / -EINVAL as kr_devx_gid_pick, or the backend's errno.
 */
int kr_devx_port_select(struct kr_devx_ctx *ctx, uint8_t port, int want,
			struct kr_devx_port *out);
/*
 * kr_devx_udp_sport() - the RoCE v2 UDP source port for traffic between
 * local and remote QP (or DCT) numbers, spread as the kernel spreads RC
 * QPs: a flow label hashed from the two numbers, folded into
 * 0xc000..0xffff. Stable per pair, so ECMP keeps a flow on one path.
 */
uint16_t kr_devx_udp_sport(uint32_t lqpn, uint32_t rqpn);
/* "InfiniBand", "RoCE v1", "RoCE v2" (enum kr_devx_gid_type), else "?". */
const char *kr_devx_gid_type_str(uint8_t type);

/* Register obj at a fresh user_index for CQE dispatch; returns it (>0) or -ENOMEM. */
int kr_devx_rsc_alloc(struct kr_devx_ctx *ctx, enum kr_devx_rsc_type type, void *obj);
void kr_devx_rsc_free(struct kr_devx_ctx *ctx, uint32_t user_index);

/* ---- command execution (devx_cmd.c) ---- */

/*
 * Run a command through ops->general_cmd / obj_* and turn a bad mailbox status
 * into -EREMOTEIO with ctx->last_err set and an error logged (opcode, status,
 * syndrome, errno). All builders go through these.
 */
int kr_devx_cmd(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out, size_t outlen);
int kr_devx_cmd_create(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
		       size_t outlen, struct kr_devx_obj **obj);
int kr_devx_cmd_modify(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
		       size_t outlen);
int kr_devx_cmd_query(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
		      size_t outlen);
int kr_devx_cmd_destroy(struct kr_devx_obj *obj);
const char *kr_devx_cmd_status_str(uint8_t status);
/* What a firmware syndrome means, NULL when unknown (ConnectX's have no public names). */
const char *kr_devx_syndrome_name(const struct kr_devx_ctx *ctx, uint32_t syndrome);

/* ---- queue memory (devx_qmem.c): the buffer behind a CQ, QP or SRQ ---- */

#define KR_DEVX_QBUF_ALIGN 4096u /* caller buffers for CQ, QP, SRQ: page aligned */

/*
 * Use user_buf (checked by the caller) or allocate size bytes, zero them and
 * register them as one umem. Returns 0, -ENOMEM or the backend's errno;
 * nothing is held on failure.
 */
int kr_devx_qmem_alloc(struct kr_devx_ctx *ctx, void *user_buf, size_t size, const char *what,
		       void **buf, bool *own_buf, struct kr_devx_umem **umem);
/* Deregister *umem (NULLed), free buf if owned. Deregistration errno: nothing freed. */
int kr_devx_qmem_free(struct kr_devx_ctx *ctx, struct kr_devx_umem **umem, void *buf, bool own_buf,
		      const char *what);

/* ---- PD, UAR, umem, memory keys (devx_pd.c, devx_mr.c) ---- */

struct kr_devx_pd {
	struct kr_devx_obj *obj;
	uint32_t pdn;
};
int kr_devx_pd_alloc(struct kr_devx_ctx *ctx, struct kr_devx_pd *pd);
int kr_devx_pd_free(struct kr_devx_pd *pd);

enum kr_devx_access {
	KR_ACCESS_LOCAL_WRITE = 1u << 0,
	KR_ACCESS_REMOTE_WRITE = 1u << 1,
	KR_ACCESS_REMOTE_READ = 1u << 2,
	KR_ACCESS_REMOTE_ATOMIC = 1u << 3,
};
/*
 * What a umem may be registered with: Linux's devx_umem_get() (6.1) takes
 * local write, remote write and remote read and refuses any other access
 * bit with EINVAL (later kernels add only relaxed ordering); UCX registers
 * its umems with exactly these. An MR's atomic right is the mkey's `a` bit.
 */
#define KR_ACCESS_UMEM (KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ)

/* A memory region: umem + CREATE_MKEY (MTT mode over the umem). */
struct kr_devx_mr {
	struct kr_devx_obj *obj;
	struct kr_devx_umem *umem;
	void *addr; /* what requests name (the IOVA), not always where the pages are mapped */
	size_t len;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t access; /* KR_ACCESS_* */
};
int kr_devx_mr_reg(struct kr_devx_ctx *ctx, const struct kr_devx_pd *pd, void *addr, size_t len,
		   uint32_t access, struct kr_devx_mr *mr);
int kr_devx_mr_reg_iova(struct kr_devx_ctx *ctx, const struct kr_devx_pd *pd, void *addr,
			size_t len, uint64_t iova, uint32_t access, struct kr_devx_mr *mr);
int kr_devx_mr_dereg(struct kr_devx_mr *mr);

/* ---- CQ (devx_cq.c control, devx_cq_poll.c data path) ---- */

struct kr_devx_cq_attr {
	uint32_t ncqe;             /* power of two */
	struct kr_devx_uar *uar;
	void *buf;                 /* optional: caller memory (e.g. shared or hugepage) */
	size_t buf_len;            /* >= kr_devx_cq_buf_size(ncqe) when buf is set */
};

struct kr_devx_cq {
	struct kr_devx_ctx *ctx;
	struct kr_devx_obj *obj;
	struct kr_devx_umem *umem;
	uint32_t cqn;
	struct mlx5_cqe64 *cqes;
	uint32_t ncqe;
	uint32_t log_ncqe;
	uint32_t cons_index;
	volatile uint32_t *dbrec; /* [0] consumer index (set_ci), [1] arm */
	struct kr_devx_uar *uar;
	void *buf;
	bool own_buf;
	uint32_t arm_sn; /* events taken (devx_event.c): the arm's 2-bit sequence number */
};

/* Bytes of a CQ buffer: CQEs then a 64-byte doorbell record, page aligned. */
size_t kr_devx_cq_buf_size(uint32_t ncqe);
int kr_devx_cq_create(struct kr_devx_ctx *ctx, const struct kr_devx_cq_attr *attr,
		      struct kr_devx_cq *cq);
int kr_devx_cq_destroy(struct kr_devx_cq *cq);

/* What the device says of a CQ (QUERY_CQ): its counters, 24 bits each. */
struct kr_devx_cq_info {
	uint32_t producer_counter; /* CQEs the device has written */
	uint32_t consumer_counter; /* consumer index software last published */
	uint8_t log_size;
};
int kr_devx_cq_query(struct kr_devx_cq *cq, struct kr_devx_cq_info *info);

/* ---- completion events (devx_event.c) ---- */

/* Where a CQ's completion events go: an eventfd the caller polls. */
struct kr_devx_event_ch {
	struct kr_devx_ctx *ctx;
	void *priv;
};

/*
 * kr_devx_event_ch_open() - a channel for completion events. Returns 0,
 * -EINVAL, -EOPNOTSUPP (the context has none: a job's view), -ENOMEM or the
 * backend's errno.
 */
int kr_devx_event_ch_open(struct kr_devx_ctx *ctx, struct kr_devx_event_ch **ch);
/* Close ch; its subscriptions end with it. NULL is a no-op. */
void kr_devx_event_ch_close(struct kr_devx_event_ch *ch);
/*
 * kr_devx_cq_notify() - each completion event of cq signals the eventfd efd
 * (one event per kr_devx_cq_arm). Ends when cq is destroyed or ch closed.
 * Returns 0, -EINVAL (NULL, a CQ of another context, efd not an eventfd),
 * -EOPNOTSUPP, or the backend's errno.
 */
int kr_devx_cq_notify(struct kr_devx_event_ch *ch, struct kr_devx_cq *cq, int efd);
/*
 * kr_devx_cq_arm() - one event at the next CQE past the consumer index, at
 * once if one is there already. Call kr_devx_cq_event_taken() for each event
 * before arming again (the arm's sequence number moves on, as the device
 * expects). Returns 0, -EINVAL or -EOPNOTSUPP.
 */
int kr_devx_cq_arm(struct kr_devx_cq *cq);
void kr_devx_cq_event_taken(struct kr_devx_cq *cq);

/* ---- QP: RC and DCI (devx_qp.c) ---- */

enum kr_devx_qp_type {
	KR_DEVX_QP_RC,
	KR_DEVX_QP_DCI,
};

struct kr_devx_srq;

struct kr_devx_qp_attr {
	enum kr_devx_qp_type type;
	uint32_t pdn;
	struct kr_devx_cq *send_cq;
	struct kr_devx_cq *recv_cq; /* RC only */
	struct kr_devx_srq *srq;    /* RC only, optional: receives come from the SRQ */
	struct kr_devx_uar *uar;
	uint32_t sq_wqebb;          /* send queue size in 64-byte WQEBBs, power of two */
	uint32_t rq_wqe;            /* receive WQEs, power of two; 0 = no RQ (DCI, SRQ) */
	uint32_t max_recv_sge;      /* per receive WQE, >= 1 when rq_wqe > 0 */
	void *buf;                  /* optional caller memory for SQ+RQ+dbrec */
	size_t buf_len;             /* >= kr_devx_qp_buf_size(attr) when buf is set */
};

/* Path and transport parameters for the RST->INIT->RTR->RTS transitions. */
struct kr_devx_qp_conn {
	uint8_t port;           /* 1-based */
	uint32_t access;        /* KR_ACCESS_REMOTE_*: responder rights (RC) */
	uint32_t remote_qpn;    /* RC only */
	/* path to the peer: kr_devx_qp_conn_path() fills these five */
	uint8_t rgid[16];       /* RC: peer GID */
	uint8_t rmac[6];        /* RC on RoCE: peer MAC (ads.rmac) */
	uint16_t rlid;          /* RC on InfiniBand: peer LID (ads.rlid) */
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint16_t udp_sport;     /* RoCE v2 */
	uint8_t tclass;         /* ads.tclass, and ads.dscp = tclass >> 2 on RoCE v2 */
	uint8_t sl;             /* ads.sl (IB) or ads.eth_prio (RoCE) */
	uint8_t mtu;            /* KR_MTU_* */
	uint32_t rq_psn;        /* RC */
	uint32_t sq_psn;
	uint8_t min_rnr_nak;    /* responder RNR timer code (RC) */
	uint8_t ack_timeout;    /* 4.096us * 2^ack_timeout */
	uint8_t retry_count;    /* 0..7 */
	uint8_t rnr_retry;      /* 0..7, 7 = infinite */
	uint8_t log_sra_max;    /* outstanding READ/atomic as requester */
	uint8_t log_rra_max;    /* as responder (RC) */
};

struct kr_devx_qp {
	struct kr_devx_ctx *ctx;
	struct kr_devx_obj *obj;
	struct kr_devx_umem *umem;
	enum kr_devx_qp_type type;
	uint32_t qpn;
	uint32_t user_index;
	struct kr_devx_cq *send_cq;
	struct kr_devx_cq *recv_cq;
	struct kr_devx_srq *srq;
	struct kr_devx_uar *uar;
	void *buf;
	bool own_buf;
	volatile uint32_t *dbrec; /* [MLX5_RCV_DBR], [MLX5_SND_DBR], big-endian */

	/* send queue, data path */
	uint8_t *sq_buf;
	uint32_t sq_wqebb_cnt;     /* power of two */
	uint32_t sq_pi;            /* WQEBBs produced (free-running) */
	uint32_t sq_ci;            /* WQEBBs known consumed (free-running) */
	uint32_t sq_db_pi;         /* sq_pi at the last doorbell */
	void *sq_last_ctrl;        /* control segment of the last WQE posted */
	uint64_t *sq_wrid;         /* wr_id by first WQEBB index */
	uint32_t *sq_wqe_next;     /* sq_pi after the WQE that starts at this index */

	/* receive queue, data path (absent for DCI and SRQ-attached RC) */
	uint8_t *rq_buf;
	uint32_t rq_wqe_cnt;
	uint32_t rq_log_stride;    /* bytes per receive WQE, log2 */
	uint32_t rq_pi;
	uint32_t rq_ci;
	uint64_t *rq_wrid;
};

size_t kr_devx_qp_buf_size(const struct kr_devx_qp_attr *attr);
int kr_devx_qp_create(struct kr_devx_ctx *ctx, const struct kr_devx_qp_attr *attr,
		      struct kr_devx_qp *qp);
int kr_devx_qp_destroy(struct kr_devx_qp *qp);

enum kr_devx_qp_transition {
	KR_QP_RST2INIT,
	KR_QP_INIT2RTR,
	KR_QP_RTR2RTS,
	KR_QP_2ERR,
	KR_QP_2RST, /* also resets the software ring indices */
};
/* conn may be NULL for 2ERR and 2RST. */
int kr_devx_qp_modify(struct kr_devx_qp *qp, enum kr_devx_qp_transition tr,
		      const struct kr_devx_qp_conn *conn);
/* RST->INIT->RTR->RTS in one call. */
int kr_devx_qp_connect(struct kr_devx_qp *qp, const struct kr_devx_qp_conn *conn);

struct kr_devx_qp_info {
	uint8_t state; /* KR_QPC_STATE_* */
	uint32_t next_send_psn;
	uint32_t next_rcv_psn;
	uint16_t hw_sq_wqebb_counter;
};
int kr_devx_qp_query(struct kr_devx_qp *qp, struct kr_devx_qp_info *info);

/*
 * A QP brought back to RTS after 2RST starts its next life at a send PSN
 * this far past where the last one stopped, so that no late response or
 * request of the old life can be taken for one of the new (IBA 9.7.5: PSNs
 * are what tells a duplicate; a reused QP must not restart at the PSN its
 * previous life's packets still carry).
 */
#define KR_PSN_RENEW_GAP (1u << 16)
int kr_devx_qp_renew_psn(struct kr_devx_qp *qp, uint32_t *sq_psn, struct kr_devx_qp_info *info);

/* ---- SRQ as an RMP with a cyclic WQ (devx_srq.c) ---- */

struct kr_devx_srq_attr {
	uint32_t pdn;
	uint32_t nwqe;     /* power of two */
	uint32_t max_sge;  /* >= 1 */
	void *buf;         /* optional caller memory */
	size_t buf_len;
};

struct kr_devx_srq {
	struct kr_devx_ctx *ctx;
	struct kr_devx_obj *obj;
	struct kr_devx_umem *umem;
	uint32_t srqn;
	void *buf;
	bool own_buf;
	uint8_t *wq_buf;
	uint32_t nwqe;
	uint32_t log_stride;
	uint32_t pi;
	volatile uint32_t *dbrec; /* [0]: receive counter, big-endian */
	uint64_t *wrid;
	uint32_t ci; /* WQEs known consumed: advanced by kr_devx_cq_poll (zero at create) */
};

size_t kr_devx_srq_buf_size(const struct kr_devx_srq_attr *attr);
int kr_devx_srq_create(struct kr_devx_ctx *ctx, const struct kr_devx_srq_attr *attr,
		       struct kr_devx_srq *srq);
int kr_devx_srq_destroy(struct kr_devx_srq *srq);

/* ---- DCT (devx_dct.c) ---- */

struct kr_devx_dct_attr {
	uint32_t pdn;
	struct kr_devx_cq *cq;
	struct kr_devx_srq *srq;
	uint64_t dc_key;
	uint32_t access;     /* KR_ACCESS_REMOTE_* */
	uint8_t port;
	uint8_t mtu;
	uint8_t min_rnr_nak;
	uint8_t gid_index;
	uint8_t hop_limit;
	uint8_t tclass; /* dctc.tclass, dctc.dscp = tclass >> 2 on RoCE v2 */
	uint8_t sl;	/* dctc.eth_prio on RoCE */
};

struct kr_devx_dct {
	struct kr_devx_ctx *ctx;
	struct kr_devx_obj *obj;
	uint32_t dctn;
	uint64_t dc_key;
	uint32_t user_index;
	struct kr_devx_srq *srq;
	struct kr_devx_cq *cq;
};

int kr_devx_dct_create(struct kr_devx_ctx *ctx, const struct kr_devx_dct_attr *attr,
		       struct kr_devx_dct *dct);
int kr_devx_dct_drain(struct kr_devx_dct *dct);
/* *state = KR_DCTC_STATE_* */
int kr_devx_dct_query(struct kr_devx_dct *dct, uint8_t *state);
int kr_devx_dct_key_violations(struct kr_devx_dct *dct, uint32_t *count);
int kr_devx_dct_destroy(struct kr_devx_dct *dct);

/* ---- data path: WQEs, doorbells (devx_wqe.c), CQEs (devx_cq_poll.c) ---- */

struct kr_devx_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/*
 * Where a DCI request goes: the DC target and its address (48-byte AV).
 * Fill the address with kr_devx_dc_av_path(): the rules of rdma-core's
 * mlx5_create_ah. RoCE: rmac, the UDP source port in rlid, GRH bit clear
 * (every RoCE packet has a GRH; the bit is reserved). InfiniBand: the
 * target's LID in rlid, GRH bit set (krcore always routes globally).
 */
struct kr_devx_dc_av {
	uint32_t dctn;
	uint64_t dc_key;
	uint8_t rgid[16];
	uint8_t rmac[6];
	uint8_t hop_limit;
	uint8_t tclass;
	uint32_t flow_label;
	uint8_t sgid_index; /* local GID index (grh_gid_fl bits 27:20) */
	bool grh;	    /* grh_gid_fl bit 30: InfiniBand only */
	uint16_t rlid;	    /* InfiniBand: the target's LID; RoCE v2: the UDP source port */
	/* rdma-core's mlx5_create_ah: the SL (IB), the priority << 1 (RoCE) */
	uint8_t stat_rate_sl;
};

/*
 * A DC address vector as a WQE carries it (48 bytes, big-endian), made once
 * by kr_devx_dc_av_encode(): a poster that sends many requests to one target
 * copies it into each WQE instead of encoding the address at every post
 * (rdma-core keeps the same in an address handle).
 */
struct kr_devx_av_wqe {
	uint8_t bytes[48];
} __attribute__((aligned(16)));
void kr_devx_dc_av_encode(const struct kr_devx_dc_av *av, struct kr_devx_av_wqe *wqe);

/*
 * kr_devx_dc_av_path() - address av to peer from the local port: GID,
 * MAC or LID, GID index, hop limit, GRH rule, UDP source port from
 * (local_id, dctn). dctn and dc_key are left to the caller.
 */
void kr_devx_dc_av_path(struct kr_devx_dc_av *av, const struct kr_devx_port *local,
			const struct kr_devx_addr *peer, uint32_t local_id, uint32_t dctn);
/*
 * kr_devx_qp_conn_path() - address an RC connection to peer from the local
 * port: rgid, rmac (RoCE) or rlid (IB), sgid_index, hop_limit and the UDP
 * source port from the two QP numbers. The rest of conn is the caller's.
 */
/* ---- an RC connection the verbs way (devx_rc.c): the baselines' ---- */
struct kr_devx_rc {
	struct kr_devx_cq cq; /* sq_wqebb CQEs, the QP's send and receive CQ */
	struct kr_devx_qp qp;
};
/* A CQ and an RC QP in RST, in pd, ringing uar. 0, or the devx error (nothing left made). */
int kr_devx_rc_create(struct kr_devx_ctx *ctx, const struct kr_devx_pd *pd, struct kr_devx_uar *uar,
		      uint32_t sq_wqebb, uint32_t rq_wqe, struct kr_devx_rc *rc);
/*
 * RST->INIT->RTR->RTS towards remote_qpn at peer: READ and WRITE rights,
 * MTU 1024, ack timeout 14 (67 ms), 7 retries, RNR retry forever, 16
 * READs/atomics in flight each way. 0 or the devx error.
 */
int kr_devx_rc_connect(struct kr_devx_rc *rc, const struct kr_devx_addr *peer, uint32_t remote_qpn,
		       uint32_t rq_psn, uint32_t sq_psn);
void kr_devx_rc_destroy(struct kr_devx_rc *rc);

void kr_devx_qp_conn_path(struct kr_devx_qp_conn *conn, const struct kr_devx_port *local,
			  const struct kr_devx_addr *peer, uint32_t lqpn, uint32_t rqpn);

enum kr_devx_wr_opcode {
	KR_WR_RDMA_WRITE,
	KR_WR_RDMA_WRITE_IMM,
	KR_WR_SEND,
	KR_WR_SEND_IMM,
	KR_WR_RDMA_READ,
	KR_WR_ATOMIC_CS,
	KR_WR_ATOMIC_FA,
};

enum kr_devx_wr_flags {
	KR_WR_SIGNALED = 1u << 0, /* write a CQE on success */
	KR_WR_INLINE = 1u << 1,   /* copy the payload into the WQE (WRITE/SEND) */
	KR_WR_FENCE = 1u << 2,    /* wait for earlier READ/atomics first */
};

struct kr_devx_wr {
	uint64_t wr_id;
	enum kr_devx_wr_opcode opcode;
	uint32_t flags;              /* KR_WR_* */
	uint32_t imm;                /* host order; sent big-endian */
	const struct kr_devx_sge *sge;
	uint32_t num_sge;
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add;        /* CAS compare value, or FAA addend */
	uint64_t swap;               /* CAS swap value */
	union { /* DCI: required; RC: NULL */
		const struct kr_devx_dc_av *av;		/* kr_devx_qp_post_send */
		const struct kr_devx_av_wqe *av_wqe;	/* kr_devx_qp_post_checked: encoded */
	};
};

/* Largest inline payload a post accepts. */
#define KR_DEVX_MAX_INLINE 256u

/*
 * kr_devx_qp_post_send() - build one send WQE at the producer index. Does not
 * ring the doorbell (see kr_devx_qp_ring), so posts batch.
 * Returns 0, -EINVAL (bad opcode for the QP type, num_sge, inline too large,
 * missing av on a DCI, atomic not 8-byte aligned or length != 8), -EAGAIN (send
 * queue full: nothing was written).
 */
int kr_devx_qp_post_send(struct kr_devx_qp *qp, const struct kr_devx_wr *wr);
/* kr_devx_qp_post_checked(): the vQP's post, inline (devx_wqe.h). */
/* The largest send WQE qp takes, in 16-byte units: the device's limit and its ring's. */
uint32_t kr_devx_qp_max_wqe_ds(const struct kr_devx_qp *qp);
/* Publish every WQE posted since the last ring: dbrec, then one UAR doorbell. */
void kr_devx_qp_ring(struct kr_devx_qp *qp);
/* Post one receive WQE and update the RQ doorbell record. -EINVAL, -EAGAIN (full). */
int kr_devx_qp_post_recv(struct kr_devx_qp *qp, const struct kr_devx_sge *sge, uint32_t num_sge,
			 uint64_t wr_id);
int kr_devx_srq_post_recv(struct kr_devx_srq *srq, const struct kr_devx_sge *sge,
			  uint32_t num_sge, uint64_t wr_id);

enum kr_devx_wc_opcode {
	KR_WC_SEND,
	KR_WC_RDMA_WRITE,
	KR_WC_RDMA_READ,
	KR_WC_COMP_SWAP,
	KR_WC_FETCH_ADD,
	KR_WC_RECV,
	KR_WC_RECV_RDMA_WITH_IMM,
};

struct kr_devx_wc {
	uint64_t wr_id;
	int status;             /* enum kr_wc_status */
	enum kr_devx_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t imm;           /* host order, valid when has_imm */
	bool has_imm;
	uint32_t qpn;           /* local QP (or DCT) the completion belongs to */
	uint32_t src_qpn;       /* receive: sender's QP number */
	uint8_t syndrome;       /* PRM syndrome of an error CQE */
	uint8_t vendor_syndrome;
};

/*
 * kr_devx_cq_poll() - reap up to n completions. Returns how many (0..n), or
 * -EIO if a CQE names a resource this process does not know (the CQE is
 * consumed). Error CQEs come back with status != KR_WC_SUCCESS.
 */
int kr_devx_cq_poll(struct kr_devx_cq *cq, struct kr_devx_wc *wc, int n);
/* PRM completion syndrome -> enum kr_wc_status. */
int kr_devx_syndrome_to_status(uint8_t syndrome);

/* ---- sharing the device with jobs (devx_share.c) ---- */

/* Where a job finds the UAR page in the descriptor kr_devx_uar_export gave it. */
struct kr_devx_uar_ref {
	uint32_t page_id;  /* qpc.uar_page of the QPs rung through it */
	uint32_t reg_off;  /* the doorbell register's offset in the page */
	uint64_t mmap_off; /* KR_DEVX_BE_UAR_MMIO: the page's mmap offset on the command fd */
};

/*
 * kr_devx_uar_export() - the descriptor through which a job may ring UAR
 * page uar, and where the page is in it (*ref). Owned by uar: valid while
 * it is allocated, closed with it. A backend with KR_DEVX_BE_UAR_FD: the
 * page's own descriptor, nothing else of the device. On hardware a UAR page can only be mapped
 * through the device's command fd, and whoever holds that fd can issue any
 * DEVX command as the keeper: it is handed out only when the keeper was
 * told to trust its jobs (ctx->share_cmd_fd, krpoold --trusted); with
 * kmod-min a job gets no descriptor at all and maps each leased QP's own
 * page through the module (kr_devx_uar_wrap). Returns 0, -EINVAL,
 * -EOPNOTSUPP (hw, not trusted), -ENOSPC (too many pages exported), -errno.
 */
int kr_devx_uar_export(struct kr_devx_uar *uar, int *fd, struct kr_devx_uar_ref *ref);
/*
 * kr_devx_import() - a doorbell-only view of a device another process opened,
 * from the fd and ref kr_devx_uar_export() gave it (the fd is consumed on
 * success: the view owns it). On hardware fd may be -1 (a fenced keeper
 * sends none): the view then rings only pages kr_devx_uar_wrap() is given.
 * Every firmware command, GID query and UAR/umem allocation on it returns
 * -EPERM: jobs never issue firmware commands through krcore. Close with
 * kr_devx_close(). Returns 0, -EINVAL (not what an export gives), -ENODEV
 * (no backend here serves name), -ENOMEM, -errno.
 */
int kr_devx_import(const char *name, int fd, const struct kr_devx_uar_ref *ref,
		   struct kr_devx_ctx **ctx);
/*
 * kr_devx_uar_import() - the UAR page_id in an imported view (the page it
 * was made from), mapped for doorbells. Returns 0, -EINVAL (not that page),
 * -ENOMEM, -errno (hw mmap). Free with kr_devx_uar_unimport().
 */
int kr_devx_uar_import(struct kr_devx_ctx *ctx, uint32_t page_id, struct kr_devx_uar **uar);
/*
 * kr_devx_uar_wrap() - UAR page_id of the device behind view ctx, as mapped
 * at page by kmod-min (a fenced DCI's own page; the keeper keeps the page
 * allocated while the slot exists), rung at page + reg_off (the ref's
 * reg_off from the keeper);
 * bf_size: the page's BlueFlame buffers (hw; 0: doorbells only). Returns
 * 0, -EINVAL (a reg_off outside the page or unaligned, BlueFlame buffers
 * that do not fit, or what the backend checks of the page), -ENOMEM. Free with
 * kr_devx_uar_unimport(); the caller unmaps the page after.
 */
int kr_devx_uar_wrap(struct kr_devx_ctx *ctx, uint32_t page_id, void *page, uint32_t reg_off,
		     uint32_t bf_size, struct kr_devx_uar **uar);
void kr_devx_uar_unimport(struct kr_devx_uar *uar);
/* The doorbell register's offset in uar's page. */
static inline uint32_t kr_devx_uar_reg_off(const struct kr_devx_uar *uar)
{
	return (uint32_t)((uintptr_t)uar->reg_addr - (uintptr_t)uar->base_addr);
}

/* devx_hw_share.c (export, the keeper's) and devx_hw_view.c (the rest, a job's):
 * the hw side of the calls above. */
int kr_devx_hw_uar_export(struct kr_devx_uar *uar, int *fd, struct kr_devx_uar_ref *ref);
int kr_devx_hw_import(const char *name, int fd, const struct kr_devx_uar_ref *ref,
		      struct kr_devx_ctx **ctx);
int kr_devx_hw_uar_import(struct kr_devx_ctx *ctx, uint32_t page_id, struct kr_devx_uar **uar);
int kr_devx_hw_uar_wrap(struct kr_devx_ctx *ctx, uint32_t page_id, void *page, uint32_t reg_off,
			uint32_t bf_size, struct kr_devx_uar **uar);
/* devx_view.c: a job's view answers -EPERM to all but doorbells (ops members, in order). */
int kr_devx_view_no_uar(struct kr_devx_ctx *ctx, uint32_t flags, struct kr_devx_uar **uar);
void kr_devx_view_free_uar(struct kr_devx_uar *uar);
int kr_devx_view_no_cmd(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			size_t outlen);
int kr_devx_view_no_create(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			   size_t outlen, struct kr_devx_obj **obj);
int kr_devx_view_no_destroy(struct kr_devx_obj *obj);
int kr_devx_view_no_obj_cmd(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
			    size_t outlen);
int kr_devx_view_no_eqn(struct kr_devx_ctx *ctx, uint32_t vector, uint32_t *eqn);
int kr_devx_view_no_gid(struct kr_devx_ctx *ctx, uint8_t port, uint16_t index,
			struct kr_devx_gid_entry *entry);
int kr_devx_view_no_lid(struct kr_devx_ctx *ctx, uint8_t port, uint16_t *lid);
int kr_devx_view_no_umem_reg(struct kr_devx_ctx *ctx, void *addr, size_t size, uint32_t access,
			     struct kr_devx_umem **umem);
int kr_devx_view_no_umem_dereg(struct kr_devx_umem *umem);
/* A view exports nothing: its page came from the keeper. */
int kr_devx_view_no_export(struct kr_devx_uar *uar, int *fd, struct kr_devx_uar_ref *ref);
/*
 * The ops table of a job's view: its own doorbell, close and UAR sharing,
 * -EPERM for the rest.
 */
#define KR_DEVX_VIEW_OPS(doorbell_fn, bf_copy_fn, close_fn, export_fn, import_fn, wrap_fn)         \
	{                                                                                          \
		.alloc_uar = kr_devx_view_no_uar, .close = (close_fn), .doorbell = (doorbell_fn),  \
		.bf_copy = (bf_copy_fn), .free_uar = kr_devx_view_free_uar,                        \
		.general_cmd = kr_devx_view_no_cmd, .obj_create = kr_devx_view_no_create,          \
		.obj_destroy = kr_devx_view_no_destroy, .obj_modify = kr_devx_view_no_obj_cmd,     \
		.obj_query = kr_devx_view_no_obj_cmd, .query_eqn = kr_devx_view_no_eqn,            \
		.query_gid_entry = kr_devx_view_no_gid, .query_lid = kr_devx_view_no_lid,          \
		.uar_export = (export_fn), .uar_import = (import_fn), .uar_wrap = (wrap_fn),       \
		.umem_dereg = kr_devx_view_no_umem_dereg, .umem_reg = kr_devx_view_no_umem_reg,    \
	}
/* devx_hw_view.c: one 8-byte doorbell store, flushed (the keeper's and a job's view). */
void kr_devx_hw_doorbell(struct kr_devx_uar *uar, uint64_t val);
void kr_devx_hw_bf_copy(struct kr_devx_uar *uar, const void *wqe, uint32_t len);
/* devx_hw.c: the command fd of an hw context the keeper opened. */
int kr_devx_hw_cmd_fd(struct kr_devx_ctx *ctx);
/* devx_hw.c: its struct ibv_context (devx_hw_event.c). */
void *kr_devx_hw_verbs(struct kr_devx_ctx *ctx);
/* devx_hw_event.c: the hw backend's completion-event ops. */
int kr_devx_hw_event_ch_open(struct kr_devx_ctx *ctx, void **priv);
void kr_devx_hw_event_ch_close(struct kr_devx_ctx *ctx, void *priv);
int kr_devx_hw_event_subscribe_fd(struct kr_devx_ctx *ctx, void *priv, struct kr_devx_obj *obj,
				  uint16_t event_num, int fd);
void kr_devx_hw_cq_doorbell(struct kr_devx_uar *uar, uint64_t val);
/*
 * kr_devx_rsc_set() - register obj at a user_index chosen by another process
 * (a QP the keeper created that a job polls). Returns 0, -EINVAL (index 0 or
 * above 24 bits, NULL obj, type NONE), -EEXIST (index in use), -ENOMEM.
 */
int kr_devx_rsc_set(struct kr_devx_ctx *ctx, uint32_t user_index, enum kr_devx_rsc_type type,
		    void *obj);

/*
 * Data path, one send completion at a time, for a caller that owns the QP
 * and wants no struct kr_devx_wc in between (the vQP poll): look at the next
 * CQE, take it only if it is a successful completion of that QP's send
 * queue, and leave anything else (errors, receives, other resources) for
 * kr_devx_cq_poll(), which reads the same consumer index. devx_cq_poll.c is
 * built on the same readers.
 */

/*
 * The CQE at consumer index ci if the device has written it in this pass, else
 * NULL. *opcode gets its opcode.
 */
static inline struct mlx5_cqe64 *kr_devx_cqe_at(const struct kr_devx_cq *cq, uint32_t ci,
						uint8_t *opcode)
{
	struct mlx5_cqe64 *cqe = &cq->cqes[ci & (cq->ncqe - 1)];
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_RELAXED);

	*opcode = op_own >> 4;
	if (*opcode == MLX5_CQE_INVALID ||
	    (op_own & MLX5_CQE_OWNER_MASK) != ((ci >> cq->log_ncqe) & 1))
		return NULL;
	/* owner bit read before the rest of the CQE */
	kr_rmb_after_cqe_owner();
	return cqe;
}

/*
 * kr_devx_sq_wqe_end() - the send counter past the WQE this QP posted at
 * counter, read from its control segment in the ring: 0 with *end set, or
 * -EPROTO (that WQEBB holds no WQE of this QP starting there). For a caller
 * that did not post it (the keeper checking a ring a job gave back).
 */
int kr_devx_sq_wqe_end(const struct kr_devx_qp *qp, uint16_t counter, uint16_t *end);
/*
 * kr_devx_sq_inline_read() - the inline payload of the WRITE or SEND this QP
 * posted at counter with KR_WR_INLINE, copied out of the ring into buf (up to
 * cap bytes): its length, or -EPROTO (no such WQE there, or not inline). For
 * a poster that must post it again elsewhere and kept no copy (a DCI's
 * requests flushed behind another vQP's error).
 */
int kr_devx_sq_inline_read(const struct kr_devx_qp *qp, uint16_t counter, void *buf, uint32_t cap);

/* A send WQE completed (from its first WQEBB index): its wr_id; the SQ is free up to its end. */
static inline uint64_t kr_devx_sq_complete(struct kr_devx_qp *qp, uint16_t wqe_counter)
{
	uint32_t idx = wqe_counter & (qp->sq_wqebb_cnt - 1);

	qp->sq_ci = qp->sq_wqe_next[idx];
	return qp->sq_wrid[idx];
}

/*
 * kr_devx_cq_next_send() - the next CQE of cq if it is a successful send
 * completion of qp (opcode REQ, qp's user index), with the wr_id its WQE was
 * posted with; nothing is consumed. NULL when the CQ is empty, or when the
 * next CQE is anything else: then *other is set (kr_devx_cq_poll takes it).
 */
static inline const struct mlx5_cqe64 *kr_devx_cq_next_send(const struct kr_devx_cq *cq,
							    const struct kr_devx_qp *qp,
							    uint64_t *wr_id, bool *other)
{
	const struct mlx5_cqe64 *cqe;
	uint8_t opcode;

	cqe = kr_devx_cqe_at(cq, cq->cons_index, &opcode);
	if (!cqe)
		return NULL;
	if (opcode != MLX5_CQE_REQ || (be32toh(cqe->srqn_uidx) & 0xffffff) != qp->user_index) {
		*other = true;
		return NULL;
	}
	*wr_id = qp->sq_wrid[be16toh(cqe->wqe_counter) & (qp->sq_wqebb_cnt - 1)];
	return cqe;
}

/*
 * kr_devx_cq_set_ci() - hand the CQEs before ci back to the device: the
 * consumer index and its doorbell record, once for everything reaped.
 */
static inline void kr_devx_cq_set_ci(struct kr_devx_cq *cq, uint32_t ci)
{
	cq->cons_index = ci;
	/* CQE reads done before the record hands the slots back to the device */
	kr_wmb_before_dbrec();
	cq->dbrec[0] = htobe32(ci & 0xffffff);
}

/*
 * kr_devx_cq_take_send() - consume the CQE kr_devx_cq_next_send() gave: the
 * SQ is free up to its WQE's end, the consumer index moves on and the slot
 * goes back to the device (one record write per CQE: cheaper, for the one
 * completion a poll mostly finds, than keeping the index aside for one
 * write at the end).
 */
static inline void kr_devx_cq_take_send(struct kr_devx_cq *cq, struct kr_devx_qp *qp,
					const struct mlx5_cqe64 *cqe)
{
	kr_devx_sq_complete(qp, be16toh(cqe->wqe_counter));
	kr_devx_cq_set_ci(cq, cq->cons_index + 1);
}

#include "devx/devx_wqe.h" /* after everything its inline functions use */

#endif /* KR_DEVX_H */
