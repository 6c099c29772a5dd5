/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keeper side of the DC metadata: the node's identity (--node-id), the static peer
 * directory (--peers FILE) and the dct block of each tenant zone (node id,
 * node cache), written before the socket listens, so before any job reads.
 *
 * Peers file: '#' comments, one line per node:
 *   <node_id> <gid> <mac|lid=N> <tag> <dctn> [<tag> <dctn> ...]
 * one (launch tag, DCT number) pair per launch on that node; gid is an IPv6
 * address (RoCE: ::ffff:a.b.c.d) or a bare IPv4 address; then the port's
 * MAC on RoCE or its LID on InfiniBand (krctl status shows a keeper's);
 * numbers take 0x prefixes. The file is read at start; when a launch binds a tenant slot its
 * pairs go into the slot's node cache as static entries: never evicted,
 * never invalidated, gone when the launch leaves.
 *
 * The keeper is the cache's only writer: jobs map it read-only and report
 * (KR_MSG_CACHE) what they read from a MetaServer and what failed them; a
 * report is taken only as a well-formed record of the reporting job's own
 * launch.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keeper/meta/meta.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

/* A file path option: 0, or -EINVAL (empty or too long; err says which). */
static int cfg_path(const char *key, const char *val, char *dst, size_t cap, char *err,
		    size_t errlen)
{
	if (!*val || strlen(val) >= cap) {
		snprintf(err, errlen, "%s: path empty or longer than %zu bytes", key, cap - 1);
		return -EINVAL;
	}
	snprintf(dst, cap, "%s", val);
	return 0;
}

int kr_keeper_dct_cfg_set(struct kr_keeper_cfg *cfg, const char *key, const char *val, char *err,
		   size_t errlen)
{
	if (!strcmp(key, "node-id")) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(val, &end, 0);
		if (errno || end == val || *end || val[0] == '-' || v == 0 || v >= 0xffffffffu) {
			snprintf(err, errlen, "node-id: '%s' is not a number in 1..%u", val,
				 0xfffffffeu);
			return -EINVAL;
		}
		cfg->node_id = (uint32_t)v;
		return 0;
	}
	if (!strcmp(key, "cluster-key"))
		return cfg_path(key, val, cfg->cluster_key, sizeof(cfg->cluster_key), err, errlen);
	if (!strcmp(key, "peers"))
		return cfg_path(key, val, cfg->peers, sizeof(cfg->peers), err, errlen);
	if (!strcmp(key, "metaserver") || !strcmp(key, "insecure-metaserver")) {
		bool *dst = key[0] == 'm' ? &cfg->metaserver : &cfg->insecure_meta;

		if (!strcmp(val, "1") || !strcmp(val, "true") || !strcmp(val, "yes"))
			*dst = true;
		else if (!strcmp(val, "0") || !strcmp(val, "false") || !strcmp(val, "no"))
			*dst = false;
		else {
			snprintf(err, errlen, "%s: expected true or false, got '%s'", key, val);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "max-nodes")) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(val, &end, 0);
		if (errno || end == val || *end || v < 2 || v > (1u << 20)) {
			snprintf(err, errlen, "max-nodes: '%s' is not a number in 2..%u", val,
				 1u << 20);
			return -EINVAL;
		}
		cfg->max_nodes = (uint32_t)v;
		return 0;
	}
	if (!strcmp(key, "meta-listen") || !strcmp(key, "metaserver-addr")) {
		char *dst = key[5] == 'l' ? cfg->meta_listen : cfg->meta_addr;
		size_t cap = key[5] == 'l' ? sizeof(cfg->meta_listen) : sizeof(cfg->meta_addr);
		struct sockaddr_in sa;

		if (!*val || strlen(val) >= cap) {
			snprintf(err, errlen, "%s: empty or longer than %zu bytes", key, cap - 1);
			return -EINVAL;
		}
		if (key[5] == 'l' && kr_meta_parse_inet(val, &sa)) {
			snprintf(err, errlen, "%s: '%s' is not IPv4:port", key, val);
			return -EINVAL;
		}
		if (key[5] != 'l') {
			char list[sizeof(cfg->meta_addr)], *save = NULL;
			unsigned int n = 0;

			snprintf(list, sizeof(list), "%s", val);
			for (char *a = strtok_r(list, ",", &save); a;
			     a = strtok_r(NULL, ",", &save), n++) {
				if (kr_meta_parse_inet(a, &sa) || n >= KR_DCT_MAX_META) {
					snprintf(err, errlen,
						 "%s: '%s' is not a list of at most %u IPv4:port",
						 key, val, KR_DCT_MAX_META);
					return -EINVAL;
				}
			}
		}
		snprintf(dst, cap, "%s", val);
		return 0;
	}
	return -ENOENT;
}

/* RoCE GID ::ffff:a.b.c.d gives (c << 8 | d); anything else, or 0, gives 1. */
static uint32_t node_id_of_gid(const uint8_t gid[16])
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	uint32_t id;

	if (memcmp(gid, v4mapped, sizeof(v4mapped)))
		return 1;
	id = (uint32_t)gid[14] << 8 | gid[15];
	return id ? id : 1;
}

/* "aa:bb:cc:dd:ee:ff" (RoCE) or "lid=N" (InfiniBand, N in 1..0xbfff: a unicast LID) */
static int parse_l2(const char *s, struct kr_devx_addr *a)
{
	unsigned int b[6];
	unsigned long v;
	char *end;
	int used = 0;

	if (!strncmp(s, "lid=", 4)) {
		errno = 0;
		v = strtoul(s + 4, &end, 0);
		if (errno || end == s + 4 || *end || v == 0 || v >= 0xc000)
			return -EINVAL;
		a->lid = (uint16_t)v;
		return 0;
	}
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &used) != 6 ||
	    s[used])
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		a->mac[i] = (uint8_t)b[i];
	return 0;
}

static int parse_gid(const char *s, uint8_t gid[16])
{
	struct in_addr a4;

	if (inet_pton(AF_INET6, s, gid) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &a4) == 1) {
		memset(gid, 0, 16);
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &a4, 4);
		return 0;
	}
	return -EINVAL;
}

/* One "<tag> <dctn>" pair of a peers line into rec. 0, -ENOENT (none left), -EINVAL. */
static int peers_pair(char **save, struct kr_dct_rec *rec)
{
	char *tag = strtok_r(NULL, " \t\r\n", save), *dctn, *end;
	unsigned long long v;

	if (!tag)
		return -ENOENT;
	dctn = strtok_r(NULL, " \t\r\n", save);
	if (!dctn)
		return -EINVAL;
	errno = 0;
	rec->tag = strtoull(tag, &end, 0);
	if (errno || *end || !rec->tag)
		return -EINVAL;
	v = strtoull(dctn, &end, 0);
	if (errno || *end || v == 0 || v > 0xffffff)
		return -EINVAL;
	rec->dctn = (uint32_t)v;
	return 0;
}

/* Read --peers into k->peers (keeper-private until a launch of theirs binds). */
static int peers_load(struct kr_keeper *k)
{
	char line[1024];
	unsigned int lineno = 0;
	FILE *f = fopen(k->cfg.peers, "re");
	int rc = 0;

	if (!f) {
		rc = -errno;
		KR_ERR("dct", "peers %s: %s", k->cfg.peers, strerror(errno));
		return rc;
	}
	while (fgets(line, sizeof(line), f) && !rc) {
		char *save = NULL, *tok, *hash = strchr(line, '#');
		struct kr_dct_rec rec = {0};
		unsigned long long v;
		char *end;

		lineno++;
		if (hash)
			*hash = '\0';
		tok = strtok_r(line, " \t\r\n", &save);
		if (!tok)
			continue;
		errno = 0;
		v = strtoull(tok, &end, 0);
		if (errno || *end || v == 0 || v >= 0xffffffffu)
			goto bad;
		rec.node_id = (uint32_t)v;
		tok = strtok_r(NULL, " \t\r\n", &save);
		if (!tok || parse_gid(tok, rec.addr.gid))
			goto bad;
		tok = strtok_r(NULL, " \t\r\n", &save);
		if (!tok || parse_l2(tok, &rec.addr))
			goto bad;
		while (!(rc = peers_pair(&save, &rec))) {
			struct kr_dct_rec *p;

			if (k->npeers == KR_DCT_CACHE_SETS * KR_DCT_CACHE_WAYS) {
				KR_ERR("dct", "peers %s:%u: more than %u entries", k->cfg.peers,
				       lineno, k->npeers);
				rc = -E2BIG;
				break;
			}
			p = realloc(k->peers, (k->npeers + 1) * sizeof(*p));
			if (!p) {
				rc = -ENOMEM;
				break;
			}
			k->peers = p;
			k->peers[k->npeers++] = rec;
		}
		if (rc == -ENOENT) {
			rc = 0;
			continue;
		}
		if (rc != -EINVAL)
			break;
	bad:
		KR_ERR("dct",
		       "peers %s:%u: expected <node_id> <gid> <mac|lid=N> <tag> <dctn> [<tag> <dctn>...]",
		       k->cfg.peers, lineno);
		rc = -EINVAL;
	}
	fclose(f);
	if (!rc)
		KR_INFO("dct", "%u static peer launches from %s", k->npeers, k->cfg.peers);
	return rc;
}

int kr_keeper_dct_init(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	struct kr_zone_hdr *z = (struct kr_zone_hdr *)t->zone;

	if (!k->cfg.node_id)
		k->cfg.node_id = node_id_of_gid(z->port.addr.gid);
	if (!z->dct_off || z->dct_off + kr_dct_zone_bytes() > t->zone_len)
		return -EINVAL;
	kr_dct_zone_init(t->zone, z->dct_off, k->cfg.node_id, t->idx);
	if (k->peers_read) /* once, at start: a renewed slot keeps the list */
		return 0;
	k->peers_read = true;
	KR_INFO("dct", "node id %u", k->cfg.node_id);
	return k->cfg.peers[0] ? peers_load(k) : 0;
}

/* kr_keeper_dct_bind() - see keeper.h. */
void kr_keeper_dct_bind(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	uint8_t *zone = t->zone;
	struct kr_dct_zone *dz = (struct kr_dct_zone *)(zone + kr_keeper_zone_dct_off(&k->cfg));

	kr_dct_cache_clear(zone, dz);
	__atomic_store_n(&dz->launch_tag, t->bound ? t->launch_tag : 0, __ATOMIC_RELEASE);
	for (uint32_t i = 0; t->bound && i < k->npeers; i++) {
		struct kr_dct_rec rec = k->peers[i];

		if (rec.tag != t->launch_tag || rec.node_id == k->cfg.node_id)
			continue;
		if (kr_dct_cache_insert(zone, dz, &rec, KR_DCT_F_STATIC))
			KR_WARN("dct", "tenant %u: static peer node %u does not fit the cache",
				t->idx, rec.node_id);
	}
}

int kr_keeper_cache_report(struct kr_keeper *k, uint32_t t, const struct kr_msg_cache *m)
{
	/* the keeper's own layout, not the zone header's dct_off */
	uint8_t *zone = k->tenant[t].zone;
	struct kr_dct_zone *dz = (struct kr_dct_zone *)(zone + kr_keeper_zone_dct_off(&k->cfg));
	struct kr_dct_wire w;
	struct kr_dct_rec rec;

	_Static_assert(sizeof(w) == KR_CACHE_REC_BYTES, "KR_CACHE_REC_BYTES");
	switch (m->op) {
	case KR_CACHE_PUT:
		memcpy(&w, m->rec, sizeof(w));
		if (m->node_id || kr_dct_rec_decode(&w, &rec) || !k->tenant[t].bound ||
		    rec.tag != k->tenant[t].launch_tag || !rec.node_id ||
		    rec.node_id == 0xffffffffu || rec.node_id == k->cfg.node_id)
			return -EINVAL;
		return kr_dct_cache_insert(zone, dz, &rec, 0);
	case KR_CACHE_FORGET:
		if (!m->node_id || m->node_id == 0xffffffffu)
			return -EINVAL;
		for (size_t i = 0; i < sizeof(m->rec); i++)
			if (m->rec[i])
				return -EINVAL;
		kr_dct_cache_invalidate(zone, dz, m->node_id);
		return 0;
	default:
		return -EINVAL;
	}
}
