/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MetaServer service: the slot table (--metaserver) and the server
 * thread that writes it on a registration. This node's own registration
 * with the replicas (--metaserver-addr) is meta_register.c. The keeper
 * gives it the table and its target (keeper_meta.c) and tells it this
 * node's row; it calls nothing of the keeper.
 *
 * The table: one hugepage memzone, one row per node id of `tenants` slots
 * of 64 bytes (struct kr_dct_slot) then `ports` port slots (the node's bound
 * ports, abi_port_rec.c), so a node's launches and ports are one READ. It
 * holds routing data only (launch tags, DCT numbers, GIDs), no key. It is
 * one MR with remote READ only, in a PD of its own with a DCT of its own
 * (the table target) whose DC key every keeper derives from the cluster
 * key: any job of a keeper in the cluster reads it, nobody writes it
 * remotely, and no tenant's PD holds it. The writers are this keeper's
 * registration thread (other nodes' rows) and its event loop (its own row,
 * when a launch comes or leaves): never the same row.
 *
 * Registration is a UDP datagram to the MetaServer keeper's --meta-listen
 * socket, not a DC SEND: it needs the MetaServer's DCT record and key before
 * the first message (a chicken-and-egg the control socket avoids), it works
 * before any DCI is leased, and a lost datagram is simply re-sent (the
 * request is idempotent: the same records written again). The keepers
 * share a --cluster-key: every datagram is sealed (meta_seal.c), and one that
 * is not, is replayed or is cut is dropped, counted and answered with
 * nothing. Without a key any user of any node that reaches the socket (on
 * loopback: every local user) could register a node and redirect connects
 * to itself, so a keeper runs a MetaServer or registers without one only
 * when told --insecure-metaserver. A registration never writes the
 * MetaServer's own row: the keeper's event loop alone does (kr_meta_own_set).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "keeper/meta/meta.h"

struct kr_meta {
	uint8_t *table;	   /* the keeper's memory; NULL: no table here */
	uint32_t max_nodes;
	uint32_t ntenants; /* tenant slots per row, */
	uint32_t nports;   /* then port slots (the MetaServer keeper's --ports) */
	int sock;
	pthread_t th;
	bool th_ok;
	volatile int stop;
	struct kr_meta_msg reply;      /* where the table is: every reply */
	struct kr_meta_reg *reg;       /* meta_register.c: registration with the replicas */
	const struct kr_meta_key *key; /* --cluster-key, or none (the keeper's) */
	uint64_t *last_ts;	       /* sealed: the newest registration taken per node */
	uint64_t *drops;	       /* the pool segment's meta_drops[] */
};

int kr_meta_parse_inet(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	unsigned long port;
	char *end;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	port = strtoul(colon + 1, &end, 10);
	if (end == colon + 1 || *end || !port || port > 65535)
		return -EINVAL;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

static struct kr_dct_slot *meta_slot(struct kr_meta *d, uint32_t node, uint32_t t)
{
	return (struct kr_dct_slot *)d->table + (size_t)node * (d->ntenants + d->nports) + t;
}

/* The row's port slots from a REGISTER: each bound port, in order; empty after them. */
static void meta_apply_ports(struct kr_meta *d, const struct kr_meta_msg *m)
{
	for (uint32_t i = 0; i < d->nports; i++) {
		struct kr_dct_slot *slot = meta_slot(d, m->node_id, d->ntenants + i);
		struct kr_dct_port_wire pw;
		struct kr_dct_wire w;

		memset(&pw, 0, sizeof(pw));
		if (i < m->nports) {
			const struct kr_meta_msg_port *mp = &m->p[i];
			struct kr_dct_port_rec pr = {.node_id = m->node_id,
						     .port = mp->port,
						     .dctn = mp->dctn,
						     .nslots = mp->nslots,
						     .tag = mp->tag,
						     .table_va = mp->table_va,
						     .table_rkey = mp->table_rkey,
						     .gen = mp->gen};

			if (kr_dct_port_encode(&pr, &pw))
				memset(&pw, 0, sizeof(pw)); /* out of range: not published */
		}
		memcpy(&w, &pw, sizeof(w));
		if (memcmp(&w, &slot->rec, sizeof(w)))
			kr_dct_slot_write(slot, &w);
	}
	if (m->nports > d->nports)
		KR_WARN_RATELIMITED("dct",
				    "MetaServer: node %u has %u ports bound; the table has %u per "
				    "node (--ports): not all published",
				    m->node_id, m->nports, d->nports);
}

/*
 * Write the row of one REGISTER: a slot per tenant slot of the node, empty
 * where no launch is; what does not fit the row is not published (warned).
 * 0, -EINVAL (node id out of the table).
 */
static int meta_apply(struct kr_meta *d, const struct kr_meta_msg *m)
{
	if (!m->node_id || m->node_id >= d->max_nodes || m->ntenants > KR_META_MSG_TENANTS ||
	    m->nports > KR_META_MSG_PORTS)
		return -EINVAL;
	for (uint32_t t = 0; t < d->ntenants; t++) {
		struct kr_dct_slot *slot = meta_slot(d, m->node_id, t);
		struct kr_dct_rec rec = {.node_id = m->node_id, .tenant = t};
		struct kr_dct_wire w;

		memset(&w, 0, sizeof(w));
		if (t < m->ntenants && m->t[t].dctn && m->t[t].tag) {
			rec.dctn = m->t[t].dctn;
			rec.tag = m->t[t].tag;
			rec.addr = m->addr;
			if (kr_dct_rec_encode(&rec, slot->seq / 2 + 1, 0, &w))
				memset(&w, 0, sizeof(w)); /* a DCT number out of range */
		}
		if (memcmp(&w, &slot->rec, sizeof(w)))
			kr_dct_slot_write(slot, &w);
	}
	for (uint32_t t = d->ntenants; t < m->ntenants; t++)
		if (m->t[t].dctn)
			KR_WARN_RATELIMITED("dct",
					    "MetaServer: node %u serves a launch in tenant slot %u; "
					    "the table has %u per node (--tenants): not published",
					    m->node_id, t, d->ntenants);
	meta_apply_ports(d, m);
	return 0;
}

/* Where the table is: no launch, no key (the table's key is derived, not sent). */
static void meta_reply_fill(const struct kr_meta *d, const struct kr_meta_cfg *cfg,
			    struct kr_meta_msg *r)
{
	memset(r, 0, sizeof(*r));
	r->magic = KR_META_MSG_MAGIC;
	r->version = KR_META_MSG_VERSION;
	r->type = KR_META_REPLY;
	r->node_id = cfg->node_id;
	r->addr = cfg->addr;
	r->ntenants = d->ntenants;
	r->nports = d->nports;
	r->max_nodes = d->max_nodes;
	r->table_dctn = cfg->table_dctn;
	r->table_va = (uintptr_t)d->table;
	r->table_rkey = cfg->table_rkey;
}

static void meta_drop(uint64_t *drops, enum kr_meta_drop why)
{
	__atomic_fetch_add(&drops[why], 1, __ATOMIC_RELAXED);
}

/* A registration from the network: opened, checked, newer than its node's last. */
static bool meta_take(struct kr_meta *d, const struct kr_meta_box *in, ssize_t n,
		      struct kr_meta_msg *req, enum kr_meta_drop *why)
{
	if (!kr_meta_open(d->key, in, n, KR_META_REGISTER, req, why))
		return false;
	if (req->node_id >= d->max_nodes || req->node_id == d->reply.node_id) {
		*why = KR_META_DROP_BAD; /* our own row is ours to write */
		return false;
	}
	if (!d->key->set)
		return true;
	/* sealed: a copy replayed within the clock window must not write a record */
	if (req->ts_ns <= d->last_ts[req->node_id]) {
		*why = KR_META_DROP_REPLAY;
		return false;
	}
	d->last_ts[req->node_id] = req->ts_ns;
	return true;
}

static void *meta_thread(void *arg)
{
	struct kr_meta *d = arg;
	struct kr_meta_box in, out;
	struct kr_meta_msg req, rep;

	while (!d->stop) {
		struct pollfd pfd = {.fd = d->sock, .events = POLLIN};
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		enum kr_meta_drop why;
		ssize_t n;
		size_t len;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		/* MSG_TRUNC: the true length, so a longer datagram is not taken cut */
		n = recvfrom(d->sock, &in, sizeof(in), MSG_DONTWAIT | MSG_TRUNC,
			     (struct sockaddr *)&from, &flen);
		if (n < 0)
			continue;
		if (!meta_take(d, &in, n, &req, &why)) {
			meta_drop(d->drops, why);
			KR_WARN_RATELIMITED("dct",
					    "MetaServer: dropped a datagram of %zd bytes (%s)", n,
					    why == KR_META_DROP_SIZE   ? "size"
					    : why == KR_META_DROP_AUTH ? "not sealed with our key"
					    : why == KR_META_DROP_BAD  ? "malformed"
								       : "replayed or stale");
			continue; /* no reply: nothing for a sender without the key */
		}
		rep = d->reply;
		rep.seq = req.seq;
		rep.ts_ns = kr_meta_wall_ns();
		rep.status = meta_apply(d, &req);
		if (!rep.status)
			KR_INFO("dct", "MetaServer: node %u registered", req.node_id);
		len = kr_meta_seal(d->key, &rep, &out);
		if (sendto(d->sock, &out, len, MSG_NOSIGNAL, (struct sockaddr *)&from, flen) < 0)
			KR_ERR_RATELIMITED("dct", "MetaServer: reply: %s", strerror(errno));
	}
	return NULL;
}

/* kr_meta_own_set() - see meta.h. */
void kr_meta_own_set(struct kr_meta *m, const struct kr_meta_msg *own)
{
	if (!m)
		return;
	if (m->table)
		meta_apply(m, own); /* this node's row: only the keeper's event loop writes it */
	kr_meta_reg_own(m->reg, own);
}

/* kr_meta_list_take() - see meta.h. */
bool kr_meta_list_take(struct kr_meta *m, uint32_t *gen, struct kr_dct_meta_addr *list,
		       uint32_t *n)
{
	return m && m->reg && kr_meta_reg_list(m->reg, gen, list, n);
}

/* The table, and its socket when it listens; own: this node's row. */
static int meta_serve_start(struct kr_meta *d, const struct kr_meta_cfg *cfg,
			    const struct kr_meta_msg *own)
{
	struct sockaddr_in sa;
	int rc;

	d->table = cfg->table;
	d->max_nodes = cfg->max_nodes;
	d->ntenants = cfg->ntenants;
	d->nports = cfg->nports;
	if (cfg->node_id >= d->max_nodes) {
		KR_ERR("dct", "node id %u does not fit --max-nodes %u", cfg->node_id,
		       d->max_nodes);
		return -EINVAL;
	}
	meta_reply_fill(d, cfg, &d->reply);
	/* this node's own row (itself first in its jobs' list: kr_meta_reg_start) */
	rc = meta_apply(d, own);
	if (rc)
		return rc;
	if (!cfg->listen[0])
		return 0; /* a MetaServer for this node's jobs only */
	if (kr_meta_parse_inet(cfg->listen, &sa)) {
		KR_ERR("dct", "meta-listen: '%s' is not IPv4:port", cfg->listen);
		return -EINVAL;
	}
	if ((ntohl(sa.sin_addr.s_addr) >> 24) != 127 && !d->key->set)
		KR_WARN("dct",
			"meta-listen %s without --cluster-key: registrations are not "
			"authenticated and the table is open to any reader; keep this socket "
			"and the fabric private",
			cfg->listen);
	d->last_ts = calloc(d->max_nodes, sizeof(*d->last_ts));
	if (!d->last_ts)
		return -ENOMEM;
	d->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (d->sock < 0)
		return -errno;
	if (bind(d->sock, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		KR_ERR("dct", "meta-listen %s: %s", cfg->listen, strerror(errno));
		return rc;
	}
	rc = -pthread_create(&d->th, NULL, meta_thread, d);
	if (rc)
		return rc;
	d->th_ok = true;
	KR_INFO("dct",
		"MetaServer: %u nodes x (%u tenants + %u ports) (%lu KB), registrations on %s",
		d->max_nodes, d->ntenants, d->nports,
		(unsigned long)(kr_meta_table_bytes(d->max_nodes, d->ntenants + d->nports) >> 10),
		cfg->listen);
	return 0;
}

/* kr_meta_start() - see meta.h. */
int kr_meta_start(const struct kr_meta_cfg *cfg, const struct kr_meta_msg *own,
		  struct kr_meta **out)
{
	struct kr_meta *d = calloc(1, sizeof(*d));
	int rc;

	*out = d;
	if (!d)
		return -ENOMEM;
	d->sock = -1;
	d->key = cfg->key;
	d->drops = cfg->drops;
	if (cfg->table) {
		rc = meta_serve_start(d, cfg, own);
		if (rc)
			return rc;
	}
	return kr_meta_reg_start(cfg, cfg->table ? &d->reply : NULL, own, &d->reg);
}

/* kr_meta_stop() - see meta.h. */
void kr_meta_stop(struct kr_meta *d)
{
	if (!d)
		return;
	kr_meta_reg_stop(d->reg);
	d->stop = 1;
	if (d->th_ok)
		pthread_join(d->th, NULL);
	if (d->sock >= 0)
		close(d->sock);
	free(d->last_ts);
	free(d);
}
