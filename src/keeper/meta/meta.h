/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/keeper/meta: the MetaServer service krpoold hosts, and its
 * registration with the MetaServer replicas. Private header of the folder.
 *
 * Files, one role each:
 *   meta_server.c    the MetaServer table and thread
 *   meta_register.c  a keeper's registration with every replica, the list it publishes
 *   meta_seal.c      the cluster key, sealed datagrams
 */
#ifndef KR_META_H
#define KR_META_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/abi.h"
#include "devx/devx.h"


/*
 * Registration with a MetaServer keeper: one UDP datagram each way on its
 * --meta-listen socket. A keeper sends REGISTER with its launches (tag, DCT
 * number per tenant slot); the MetaServer writes the node's row (it is its
 * only writer) and replies with where its table is (its DCT, va, rkey),
 * which the keeper publishes to its tenant zones. No key travels: the
 * table's DC key is derived from the cluster key on each side. With
 * --cluster-key every datagram is a sealed struct kr_meta_box (meta_seal.c);
 * without, the message in the clear (loopback or a private test network).
 * Host byte order (little-endian clusters only).
 */
#define KR_META_MSG_MAGIC   0x6b724d31u /* "krM1" */
#define KR_META_MSG_VERSION 5u		/* 5: bound ports after the tenants */
#define KR_META_BOX_MAGIC   0x6b724d42u	  /* "krMB" */
#define KR_META_SKEW_NS	    5000000000ull /* sealed: sender's clock within 5 s of ours */

enum kr_meta_msg_type {
	KR_META_REGISTER = 1,
	KR_META_REPLY = 0x81,
};

/* REGISTER: the launch in one tenant slot (dctn 0 and tag 0: none). */
struct kr_meta_msg_tenant {
	uint32_t dctn;
	uint32_t rsvd;
	uint64_t tag;
};
_Static_assert(sizeof(struct kr_meta_msg_tenant) == 16, "kr_meta_msg_tenant layout");

/* REGISTER: a bound port of the node (the launch of tag holds it). */
struct kr_meta_msg_port {
	uint32_t port;
	uint32_t dctn;
	uint64_t tag;
	uint64_t table_va;
	uint32_t table_rkey;
	uint16_t nslots;
	uint16_t gen; /* the binding's, low bits: a rebind shows as a change */
};
_Static_assert(sizeof(struct kr_meta_msg_port) == 32, "kr_meta_msg_port layout");

struct kr_meta_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t seq;
	int32_t status; /* reply: 0 or -errno */
	uint32_t node_id;
	uint32_t ntenants;  /* register: entries in t[]; reply: the table's stride */
	uint32_t max_nodes; /* reply */
	uint32_t table_dctn; /* reply: the DCT the table is read through */
	struct kr_devx_addr addr; /* the sender's port: register, the node's; reply, the table's */
	uint64_t ts_ns; /* the sender's CLOCK_REALTIME: sealed messages are refused outside
			   KR_META_SKEW_NS, and a registration not newer than its node's last */
	uint64_t table_va; /* reply */
	uint32_t table_rkey; /* reply */
	/* register: entries in p[]; reply: port slots per row, after ntenants tenant slots */
	uint32_t nports;
	struct kr_meta_msg_tenant t[KR_META_MSG_TENANTS];
	struct kr_meta_msg_port p[KR_META_MSG_PORTS];
};
_Static_assert(sizeof(struct kr_meta_msg) == 80 + 16 * KR_META_MSG_TENANTS + 32 * KR_META_MSG_PORTS,
	       "kr_meta_msg layout");

/* A sealed message: crypto_secretbox of the whole struct kr_meta_msg. */
struct kr_meta_box {
	uint32_t magic; /* KR_META_BOX_MAGIC */
	uint32_t rsvd;
	uint8_t nonce[24]; /* random per datagram */
	uint8_t mac[16];
	uint8_t sealed[sizeof(struct kr_meta_msg)];
};

/* The cluster key (--cluster-key), or none. */
struct kr_meta_key {
	bool set;
	uint8_t k[32];
};

/* Datagrams a MetaServer or a registering keeper dropped, by why (krctl status). */
enum kr_meta_drop {
	KR_META_DROP_SIZE,   /* truncated, oversized or short */
	KR_META_DROP_AUTH,   /* not sealed with the cluster key (or sealed when we have none) */
	KR_META_DROP_BAD,    /* wrong magic, version, type or fields */
	KR_META_DROP_REPLAY, /* sealed, but outside the clock window or not newer: replayed */
	KR_META_DROP_N
};

/* meta_seal.c (keeper side) */
uint64_t kr_meta_wall_ns(void);
/* The DC key of every MetaServer table's DCT: derived from the cluster key; 0 without one. */
uint64_t kr_meta_table_key(const struct kr_meta_key *key);
/*
 * kr_meta_key_load() - the key from path: 64 hex digits (and a newline) in a
 * regular file of this uid, mode 0600 or stricter. 0, -EPERM (ownership or
 * mode), -EINVAL (content), -errno (open); reported.
 */
int kr_meta_key_load(const char *path, struct kr_meta_key *key);
/* Seal m into out (copy in the clear without a key); the datagram's length. */
size_t kr_meta_seal(const struct kr_meta_key *key, const struct kr_meta_msg *m,
		    struct kr_meta_box *out);
/*
 * Open a datagram of len bytes (recv with MSG_TRUNC: its true length) into
 * m and check what every message must be: its length, sealed with key (in
 * the clear without one), magic, version, type, a node id, at most
 * KR_META_MSG_TENANTS tenants, and when sealed its sender's clock within
 * KR_META_SKEW_NS of ours. false with *why when it must be dropped.
 */
bool kr_meta_open(const struct kr_meta_key *key, const struct kr_meta_box *in, ssize_t len,
		  uint16_t type, struct kr_meta_msg *m, enum kr_meta_drop *why);

/*
 * meta_register.c: the order of the MetaServer list a keeper publishes to its
 * jobs. Each replica as the registration thread sees it.
 */
struct kr_meta_peer {
	uint64_t rtt_ns; /* smoothed round trip of REGISTER/reply; 0: never answered */
	uint32_t misses; /* rounds without a reply since its last one */
	bool self;	 /* this keeper's own table (--metaserver) */
};
#define KR_META_DOWN_MISSES 2u /* a replica that missed this many rounds goes last */

/*
 * kr_meta_order() - order[0..n) from prev[0..n) (the order published
 * before, a permutation of 0..n): this keeper's own table first, then the
 * replicas that answer, nearest first, then those down or never heard. A
 * replica passes one ahead of it only when 1.5 times nearer, so that jitter
 * does not reorder the list every round.
 */
void kr_meta_order(const struct kr_meta_peer *p, uint32_t n, const uint32_t *prev,
		       uint32_t *order);

/*
 * The service, as the keeper starts it (keeper_meta.c). The keeper talks to
 * it one way: it starts and stops it, tells it this node's row when a launch
 * or port comes or leaves (kr_meta_own_set), and takes the MetaServer list
 * its jobs read when it changed (kr_meta_list_take). The service calls
 * nothing of the keeper.
 */
struct kr_meta;
struct kr_meta_cfg {
	uint32_t node_id;
	struct kr_devx_addr addr;      /* this node's port (replies name it) */
	const struct kr_meta_key *key; /* --cluster-key (or none: key->set false) */
	uint64_t *drops;	       /* where dropped datagrams are counted (enum kr_meta_drop) */
	const char *listen;	       /* --meta-listen: "" for this node's jobs only */
	const char *addrs;	       /* --metaserver-addr: the replicas, comma-separated */
	/* --metaserver: the table (table NULL: none), rows of ntenants + nports
	 * slots, max_nodes rows, readable through the DCT table_dctn with rkey */
	uint8_t *table;
	uint32_t max_nodes;
	uint32_t ntenants;
	uint32_t nports;
	uint32_t table_dctn;
	uint32_t table_rkey;
};

/* Bytes of a table of max_nodes rows of row_slots slots. */
static inline uint64_t kr_meta_table_bytes(uint32_t max_nodes, uint32_t row_slots)
{
	return (uint64_t)max_nodes * row_slots * sizeof(struct kr_dct_slot);
}

/*
 * kr_meta_start() - serve the table (cfg->table) on cfg->listen, with own
 * as this node's row in it, and keep this node registered with every
 * replica of cfg->addrs. Waits up to 1 s for the replicas' first answers,
 * so that the list is whole when it returns. 0, -EINVAL (an address that is
 * not IPv4:port, a node id beyond the table), -ENOMEM, -errno (socket,
 * thread).
 */
int kr_meta_start(const struct kr_meta_cfg *cfg, const struct kr_meta_msg *own,
		  struct kr_meta **out);
/* Stop the threads and free the service (the table is the keeper's). */
void kr_meta_stop(struct kr_meta *m);
/*
 * kr_meta_own_set() - this node's REGISTER from now on: written into its
 * own row of the table at once (the caller is the only writer of that row),
 * sent to the replicas in a round now.
 */
void kr_meta_own_set(struct kr_meta *m, const struct kr_meta_msg *own);
/*
 * kr_meta_list_take() - the MetaServers this node's jobs try, in order
 * (this node's table first when it serves one, then the replicas that
 * answer, nearest first, then those down), into list[KR_DCT_MAX_META]: true
 * with *n and a new *gen when it changed since *gen, false otherwise.
 */
bool kr_meta_list_take(struct kr_meta *m, uint32_t *gen, struct kr_dct_meta_addr *list,
		       uint32_t *n);

/* meta_register.c: registration with the replicas (the service's part of it). */
struct kr_meta_reg;
int kr_meta_reg_start(const struct kr_meta_cfg *cfg, const struct kr_meta_msg *self,
		      const struct kr_meta_msg *own, struct kr_meta_reg **out);
void kr_meta_reg_stop(struct kr_meta_reg *r);
void kr_meta_reg_own(struct kr_meta_reg *r, const struct kr_meta_msg *own);
bool kr_meta_reg_list(struct kr_meta_reg *r, uint32_t *gen, struct kr_dct_meta_addr *list,
		      uint32_t *n);

/* Parse "a.b.c.d:port". 0 or -EINVAL. */
struct sockaddr_in;
int kr_meta_parse_inet(const char *s, struct sockaddr_in *sa);

#endif /* KR_META_H */
