/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/dct: DC transport metadata. A launch's DC target on a node is named by
 * (launch tag, DCT number) plus the node's address; the DC access key is not
 * in any record: every rank derives it from its launch key (pool_launch.c).
 * A MetaServer keeps one fixed-size row of slots per node in registered
 * memory, so that a lookup is exactly one one-sided READ; a node cache in
 * each tenant zone serves every job of the launch on the node. Private
 * header of the folder (the seam with src/virtqp).
 */
#ifndef KR_DCT_H
#define KR_DCT_H

#include <stdint.h>

#include "devx.h"

struct kr_ctx;

/* Where to send DC requests for one launch on one node (the key: the caller's launch's). */
struct kr_dct_rec {
	uint32_t node_id;
	uint32_t tenant;   /* the launch's tenant slot on that node (for diagnostics) */
	uint32_t dctn;     /* 24 bits */
	uint64_t tag;      /* the launch tag */
	struct kr_devx_addr addr; /* the node's port: GID, and MAC (RoCE) or LID (IB) */
};

/*
 * kr_dct_resolve() - the DCT record of the caller's launch on node_id: from
 * the node cache, else by one READ of the node's row at a MetaServer
 * (falling back to the next replica), then cached. node_id == the caller's
 * own node gives its keeper's DCT. Returns 0, -ENOENT (no such node
 * registered, or the launch has no rank there), -EHOSTUNREACH (no
 * MetaServer answered), -EAGAIN (the row stayed torn after retries),
 * -ENOTCONN (keeper gone), -EINVAL.
 */
int kr_dct_resolve(struct kr_ctx *ctx, uint32_t node_id, struct kr_dct_rec *rec);
/* kr_dct_self_node() - this node's id as its keeper published it; 0 when it has none. */
uint32_t kr_dct_self_node(struct kr_ctx *ctx);

struct kr_dct_port_rec;
/*
 * kr_dct_resolve_port() - port of the caller's launch on node_id (not this
 * node: its ports are in the zone), with the node's record: one READ of the
 * node's MetaServer row, which holds both. 0, -ECONNREFUSED (the node is
 * there, the port is not bound by our launch, or not yet published), and
 * kr_dct_resolve()'s errors.
 */
int kr_dct_resolve_port(struct kr_ctx *ctx, uint32_t node_id, uint32_t port, struct kr_dct_rec *rec,
			struct kr_dct_port_rec *prec);

/* Drop node_id's cached record (a remote error showed it stale); the next resolve re-reads it. */
void kr_dct_invalidate(struct kr_ctx *ctx, uint32_t node_id);


/* ===== appended by src/dct (h11): records, slots, node cache ===== */
/*
 * Files, one role each:
 *   dct_rec.c      both: the record's wire form (version, CRC32C)
 *   dct_port.c     both: a bound port's record in a MetaServer row
 *   dct_meta.c     both: MetaServer slot writer protocol, the reader's check
 *   dct_cache.c    both: the node cache in a tenant zone (seqlock entries, CLOCK)
 *   dct_resolve.c  job: kr_dct_resolve/kr_dct_invalidate, the one-READ lookup
 *   dct_keeper.c   keeper: options, node id, the zone's dct block, static peers
 *   dct_server.c   keeper: the MetaServer table and thread, registration
 *
 * Lookups and the cache live in the tenant zone, not the pool segment: the
 * records carry the tenant's DC keys, and the segment is readable by every
 * tenant (and krctl). Each tenant's cache is shared by all its jobs.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define KR_DCT_REC_VERSION 3u /* 3: the port's MAC or LID */
#define KR_DCT_F_STATIC	   1u /* from --peers: never evicted nor invalidated */
#define KR_DCT_F_LID	   2u /* wire only: l2 holds a LID (InfiniBand), else a MAC */

/*
 * The record on the wire and in shared memory (MetaServer slots, the node
 * cache): routing data only, (dctn, launch tag) plus the node address, a
 * write generation, a version (0 = empty) and a CRC32C over the first 44
 * bytes. Little-endian fields (every supported host is).
 */
struct kr_dct_wire {
	uint8_t version;
	uint8_t flags;
	uint8_t l2[6];	      /* RoCE: the port's MAC; IB (KR_DCT_F_LID): its LID, little-endian */
	uint32_t node_id;
	uint32_t dctn_tenant; /* DCT number (bits 23:0), tenant slot (31:24) */
	uint64_t tag;
	uint8_t gid[16];
	uint32_t gen;
	uint32_t crc;
};
_Static_assert(sizeof(struct kr_dct_wire) == 48, "kr_dct_wire layout");
_Static_assert(offsetof(struct kr_dct_wire, crc) == 44, "kr_dct_wire.crc");

/* dct_rec.c */
uint32_t kr_dct_crc32c(const void *buf, size_t len);
/* Encode rec (dctn must fit 24 bits) with gen and flags. 0 or -EINVAL. */
int kr_dct_rec_encode(const struct kr_dct_rec *rec, uint32_t gen, uint32_t flags,
		      struct kr_dct_wire *w);
/* Decode and check: 0, -ENOENT (empty), -EBADMSG (bad version or CRC). */
int kr_dct_rec_decode(const struct kr_dct_wire *w, struct kr_dct_rec *rec);

/*
 * A bound port (pool_port.c) as a MetaServer row publishes it, after the
 * node's tenant slots: the port's DC target and the binder's sender table,
 * for the launch tag. The node's address is its launch record's, in the
 * same row: one READ gives both.
 */
struct kr_dct_port_rec {
	uint32_t node_id;
	uint32_t port;
	uint32_t dctn;
	uint32_t nslots;
	uint64_t tag;
	uint64_t table_va;
	uint32_t table_rkey;
	uint32_t gen;
};

#define KR_DCT_PORT_VERSION 0x81u /* bit 7: never a launch record's version */

/* The port record in a slot's 48 bytes: CRC32C over the first 44, as struct kr_dct_wire. */
struct kr_dct_port_wire {
	uint8_t version;
	uint8_t rsvd0;
	uint16_t port;
	uint32_t node_id;
	uint32_t dctn;
	uint32_t nslots;
	uint64_t tag;
	uint64_t table_va;
	uint32_t table_rkey;
	uint32_t gen;
	uint32_t rsvd1;
	uint32_t crc;
};
_Static_assert(sizeof(struct kr_dct_port_wire) == 48, "kr_dct_port_wire layout");
_Static_assert(offsetof(struct kr_dct_port_wire, crc) == 44, "kr_dct_port_wire.crc");

/* dct_port.c: encode (port 1..65535, dctn 24 bits, nslots 1..1024) or -EINVAL; decode as
 * kr_dct_rec_decode (-EBADMSG also for a launch record). */
int kr_dct_port_encode(const struct kr_dct_port_rec *rec, struct kr_dct_port_wire *w);
int kr_dct_port_decode(const struct kr_dct_port_wire *w, struct kr_dct_port_rec *rec);

/*
 * One MetaServer slot: one tenant slot of one node, 64 bytes. A node's slots
 * are one row (stride slots, the MetaServer's --tenants), read whole by one
 * RDMA READ; an empty slot (no launch) holds a version-0 record. Notes: written only by the MetaServer keeper (dct_meta.c):
 * seq odd while it updates; seq_end is stored after the record and seq last.
 * A reader (any node, one READ, no order guaranteed inside the READ) accepts
 * a copy only when seq == seq_end, even, non-zero, and the record's CRC holds:
 * a torn copy fails one of them (a record is self-checked, so a mix of two
 * records fails the CRC), an accepted one is a version that was written.
 */
struct kr_dct_slot {
	uint32_t seq;
	uint32_t rsvd;
	struct kr_dct_wire rec;
	uint32_t seq_end;
	uint32_t rsvd2;
};
_Static_assert(sizeof(struct kr_dct_slot) == 64, "kr_dct_slot layout");
_Static_assert(offsetof(struct kr_dct_slot, seq_end) == 56, "kr_dct_slot.seq_end");

/* dct_meta.c: the writer (one thread: the MetaServer keeper) and the reader's check. */
void kr_dct_slot_write(struct kr_dct_slot *slot, const struct kr_dct_wire *w);
/*
 * Check a copy of a slot: 0 (rec filled), -EAGAIN (torn or in update),
 * -ENOENT (empty), -ENOMSG (a port record: kr_dct_slot_check_port's).
 */
int kr_dct_slot_check(const struct kr_dct_slot *copy, struct kr_dct_rec *rec);
/* The same for a port slot: -ENOMSG for a launch record. */
int kr_dct_slot_check_port(const struct kr_dct_slot *copy, struct kr_dct_port_rec *rec);

/*
 * The node cache and the node's identity, in each tenant zone: the records
 * of the launch that holds the tenant (entries of its tag only). Set-associative, KR_DCT_CACHE_WAYS
 * entries per set, CLOCK inside a set: bounded whatever the cluster size.
 * Notes: jobs only read it (the zone head is mapped read-only in jobs); the
 * keeper alone writes: the header before any job attaches, the static
 * peers, and what jobs report (KR_MSG_CACHE: a record a job read from a
 * MetaServer, or a node to forget). An entry is a seqlock: the writer takes
 * it by CAS seq even -> odd, writes, releases with seq + 2; readers copy and
 * re-check seq and the CRC. No pointers: offsets from the zone start only.
 */
#define KR_DCT_CACHE_SETS 256u
#define KR_DCT_CACHE_WAYS 8u
#define KR_DCT_ZONE_MAGIC 0x6b72646du /* "krdm" */

struct kr_dct_centry {
	uint32_t seq; /* odd while a writer holds it */
	uint32_t ref; /* CLOCK reference bit */
	struct kr_dct_wire rec;
	uint64_t rsvd;
};
_Static_assert(sizeof(struct kr_dct_centry) == 64, "kr_dct_centry layout");

#define KR_DCT_MAX_META 4u /* MetaServer replicas, in lookup order */

/*
 * Where a MetaServer's slot table is (keeper-written). Any job of a node
 * reads it through the table's own DCT (remote READ only), whose key every
 * keeper of the cluster derives from the cluster key (0 without one).
 */
struct kr_dct_meta_addr {
	uint32_t node_id;
	uint32_t dctn;
	uint64_t dc_key;
	struct kr_devx_addr addr; /* the MetaServer's port */
	uint64_t va; /* slot table base: node n's row at va + n * stride * 64 */
	uint32_t rkey;
	uint32_t max_nodes;
	uint32_t stride; /* slots per row */
	uint32_t rsvd;
};
_Static_assert(sizeof(struct kr_dct_meta_addr) == 64, "kr_dct_meta_addr layout");

struct kr_dct_zone {
	uint32_t magic;
	uint32_t node_id; /* this node */
	uint32_t tenant;
	uint32_t nsets;
	uint32_t ways;
	uint32_t nmeta;
	uint64_t entries_off; /* from the zone start: struct kr_dct_centry[nsets * ways] */
	uint64_t hands_off;   /* from the zone start: uint32_t[nsets] CLOCK hands */
	uint64_t rsvd_hits, rsvd_misses; /* unused: jobs cannot write here (their own: look_stats) */
	uint64_t inserts, evictions, invalidations; /* the keeper's */
	uint64_t meta_seq; /* even: meta[0..nmeta) stable; odd: the keeper rewrites it */
	uint64_t launch_tag; /* the launch holding the tenant: the cache has its records only */
	struct kr_dct_meta_addr meta[KR_DCT_MAX_META];
};
_Static_assert(sizeof(struct kr_dct_zone) == 96 + 64 * KR_DCT_MAX_META, "kr_dct_zone layout");

/* Bytes the dct block takes in a tenant zone (header, hands, entries). */
uint64_t kr_dct_zone_bytes(void);
/* Lay out and reset the block at zone + off (keeper, before jobs attach). */
void kr_dct_zone_init(void *zone, uint64_t off, uint32_t node_id, uint32_t tenant);

/* dct_cache.c: the cache itself. Lookups only read (jobs); the rest is the keeper's. */
int kr_dct_cache_lookup(const void *zone, const struct kr_dct_zone *dz, uint32_t node_id,
			struct kr_dct_rec *rec);
/* true when node_id's entry is a static peer's (never forgotten). */
bool kr_dct_cache_is_static(const void *zone, const struct kr_dct_zone *dz, uint32_t node_id);
/* Insert or replace; best effort (0, or -EBUSY when a writer holds every candidate). */
int kr_dct_cache_insert(void *zone, struct kr_dct_zone *dz, const struct kr_dct_rec *rec,
			uint32_t flags);
/* Drop node_id's entry unless static. true when one was dropped. */
bool kr_dct_cache_invalidate(void *zone, struct kr_dct_zone *dz, uint32_t node_id);
/* Drop every entry, static ones too (the keeper, when a launch comes or leaves). */
void kr_dct_cache_clear(void *zone, struct kr_dct_zone *dz);

/*
 * Registration with a MetaServer keeper: one UDP datagram each way on its
 * --meta-listen socket. A keeper sends REGISTER with its launches (tag, DCT
 * number per tenant slot); the MetaServer writes the node's row (it is its
 * only writer) and replies with where its table is (its DCT, va, rkey),
 * which the keeper publishes to its tenant zones. No key travels: the
 * table's DC key is derived from the cluster key on each side. With
 * --cluster-key every datagram is a sealed struct kr_meta_box (dct_seal.c);
 * without, the message in the clear (loopback or a private test network).
 * Host byte order (little-endian clusters only).
 */
#define KR_META_MSG_MAGIC   0x6b724d31u /* "krM1" */
#define KR_META_MSG_VERSION 5u		/* 5: bound ports after the tenants */
#define KR_META_MSG_TENANTS 64u
#define KR_META_MSG_PORTS   16u		  /* ports a node publishes; a row's port slots at most */
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

/* dct_seal.c (keeper side) */
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
 * dct_register.c: the order of the MetaServer list a keeper publishes to its
 * jobs. Each replica as the registration thread sees it.
 */
struct kr_meta_peer {
	uint64_t rtt_ns; /* smoothed round trip of REGISTER/reply; 0: never answered */
	uint32_t misses; /* rounds without a reply since its last one */
	bool self;	 /* this keeper's own table (--metaserver) */
};
#define KR_META_DOWN_MISSES 2u /* a replica that missed this many rounds goes last */

/*
 * kr_dct_meta_order() - order[0..n) from prev[0..n) (the order published
 * before, a permutation of 0..n): this keeper's own table first, then the
 * replicas that answer, nearest first, then those down or never heard. A
 * replica passes one ahead of it only when 1.5 times nearer, so that jitter
 * does not reorder the list every round.
 */
void kr_dct_meta_order(const struct kr_meta_peer *p, uint32_t n, const uint32_t *prev,
		       uint32_t *order);

/*
 * A job's copy of its zone's MetaServer list (the keeper may rewrite it at
 * any time): up to KR_DCT_MAX_META entries into out. Returns how many (0
 * when the list never held still).
 */
uint32_t kr_dct_meta_snapshot(const struct kr_dct_zone *dz, struct kr_dct_meta_addr *out);

/* dct_register.c, keeper side: the registration thread. */
struct kr_keeper;
struct kr_meta_reg;
/*
 * kr_meta_reg_start() - publish the MetaServer list in every tenant zone
 * (self, this keeper's own table as its REPLY, first when not NULL) and keep
 * this node registered with every --metaserver-addr replica. Waits up to 1 s
 * for their first answers. 0, -EINVAL (a bad address), -errno.
 */
int kr_meta_reg_start(struct kr_keeper *k, const struct kr_meta_msg *self,
		      const struct kr_meta_key *key, uint64_t *drops, struct kr_meta_reg **out);
void kr_meta_reg_stop(struct kr_meta_reg *r);
/* dct_server.c: this node's REGISTER (node id, GID, every tenant slot's launch). */
void kr_keeper_meta_own(struct kr_keeper *k, struct kr_meta_msg *m);
/* dct_register.c: register again now (a launch came or left). */
void kr_meta_reg_wake(struct kr_meta_reg *r);

/* Parse "a.b.c.d:port". 0 or -EINVAL. */
struct sockaddr_in;
int kr_dct_parse_inet(const char *s, struct sockaddr_in *sa);

/* What this process's MetaServer lookups did (for tests and diagnostics). */
struct kr_dct_look_stats {
	uint64_t reads;         /* READs posted */
	uint64_t local_errors;  /* completed with a local error: a bug on our side */
	uint64_t remote_errors; /* error completion or timeout: MetaServer unreachable */
	uint64_t torn;          /* copies refused as torn or in update */
	uint64_t hits;          /* node cache hits and misses of this process */
	uint64_t misses;
};
void kr_dct_look_stats_get(struct kr_dct_look_stats *st);

#endif /* KR_DCT_H */
