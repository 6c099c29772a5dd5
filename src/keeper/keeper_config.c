/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keeper configuration: defaults, a "key = value" file, the same keys as
 * command-line flags, and validation with a message that names the bad key.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keeper/keeper.h"

void kr_keeper_cfg_default(struct kr_keeper_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->socket, sizeof(cfg->socket), "%s", kr_msg_socket_default());
	cfg->tenants = 2;
	cfg->dcis = 8;
	cfg->rc_spares = 2;
	cfg->jobs = 8;
	cfg->vqps = 64;
	cfg->ports = 4;
	cfg->heap_mb = 4;
	cfg->warm_heaps = 4;
	cfg->hugepages_mb = 256;
	cfg->low_water = 2;
	cfg->gid_index = -1;
	cfg->base_va = KR_POOL_BASE_VA;
	cfg->ready_fd = -1;
	cfg->group = -1;
}

static int cfg_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int cfg_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int cfg_u32(const char *key, const char *val, uint32_t *out, char *err, size_t errlen)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(val, &end, 0);
	if (errno || end == val || *end || val[0] == '-' || v > UINT32_MAX)
		return cfg_err(err, errlen, "%s: '%s' is not a number", key, val);
	*out = (uint32_t)v;
	return 0;
}

static bool cfg_bool(const char *val, bool *out)
{
	if (!strcmp(val, "1") || !strcmp(val, "true") || !strcmp(val, "yes")) {
		*out = true;
		return true;
	}
	if (!strcmp(val, "0") || !strcmp(val, "false") || !strcmp(val, "no")) {
		*out = false;
		return true;
	}
	return false;
}

/*
 * kr_keeper_cfg_set() - apply one key of keeper_config_keys.c's table: a
 * number or switch where the table says, the others by the code below (and
 * keeper_dct.c's). Returns 0 or -EINVAL with err set ("unknown key" for a
 * key the table lacks or one given only on the command line).
 */
int kr_keeper_cfg_set(struct kr_keeper_cfg *cfg, const char *key, const char *val, char *err,
		    size_t errlen)
{
	const struct kr_keeper_cfg_key *k;
	uint32_t n = 0, uid = 0;
	bool b;
	int rc;

	if (!key || !val)
		return cfg_err(err, errlen, "missing key or value");
	k = kr_keeper_cfg_key_find(key);
	if (!k || k->cli_only)
		return cfg_err(err, errlen, "unknown key '%s'", key);
	if (k->kind == KR_CFG_U32) {
		rc = cfg_u32(key, val, &n, err, errlen);
		if (!rc)
			*(uint32_t *)((char *)cfg + k->off) = n;
		return rc;
	}
	if (k->kind == KR_CFG_BOOL) {
		if (!cfg_bool(val, &b))
			return cfg_err(err, errlen, "%s: expected true or false, got '%s'", key,
				       val);
		*(bool *)((char *)cfg + k->off) = b;
		return 0;
	}
	rc = kr_keeper_dct_cfg_set(cfg, key, val, err, errlen); /* keeper_dct.c keys */
	if (rc != -ENOENT)
		return rc;
	if (!strcmp(key, "device")) {
		if (strlen(val) >= sizeof(cfg->device))
			return cfg_err(err, errlen, "device: name too long");
		snprintf(cfg->device, sizeof(cfg->device), "%s", val);
		return 0;
	}
	if (!strcmp(key, "socket")) {
		if (!*val || strlen(val) >= sizeof(cfg->socket))
			return cfg_err(err, errlen, "socket: path empty or longer than %zu bytes",
				       sizeof(cfg->socket) - 1);
		snprintf(cfg->socket, sizeof(cfg->socket), "%s", val);
		return 0;
	}
	if (!strcmp(key, "group")) {
		const struct group *g = getgrnam(val);
		unsigned long v;
		char *end;

		if (g) {
			cfg->group = g->gr_gid;
			return 0;
		}
		errno = 0;
		v = strtoul(val, &end, 10);
		if (!*val || errno || *end || v >= UINT32_MAX)
			return cfg_err(err, errlen, "group: no group named '%s'", val);
		cfg->group = (int64_t)v;
		return 0;
	}
	if (!strcmp(key, "base-virtaddr")) {
		unsigned long long v;
		char *end;

		errno = 0;
		v = strtoull(val, &end, 0);
		if (errno || end == val || *end || (v & (KR_POOL_PAGE - 1)))
			return cfg_err(err, errlen,
				       "base-virtaddr: '%s' is not a 2 MB aligned address", val);
		cfg->base_va = v;
		return 0;
	}
	if (!strcmp(key, "gid-index")) {
		rc = cfg_u32(key, val, &n, err, errlen);
		if (rc)
			return rc;
		if (n > 255) /* an index in ads.src_addr_index and the AV is 8 bits */
			return cfg_err(err, errlen, "gid-index: %u is not in 0..255", n);
		cfg->gid_index = (int32_t)n;
		return 0;
	}
	if (!strcmp(key, "traffic-class") || !strcmp(key, "priority")) {
		uint32_t max = key[0] == 't' ? 255 : 15;

		rc = cfg_u32(key, val, &n, err, errlen);
		if (rc)
			return rc;
		if (n > max) /* an 8-bit traffic class; a 4-bit SL (3-bit PCP on Ethernet) */
			return cfg_err(err, errlen, "%s: %u is not in 0..%u", key, n, max);
		*(key[0] == 't' ? &cfg->traffic_class : &cfg->priority) = (uint8_t)n;
		return 0;
	}
	if (!strncmp(key, "tenant.", 7)) {
		char *end;
		unsigned long t = strtoul(key + 7, &end, 10);

		if (end == key + 7 || strcmp(end, ".uid") || t >= KR_POOL_MAX_TENANTS)
			return cfg_err(err, errlen, "%s: expected tenant.<0..%u>.uid", key,
				       KR_POOL_MAX_TENANTS - 1);
		rc = cfg_u32(key, val, &uid, err, errlen);
		if (rc)
			return rc;
		if (uid == UINT32_MAX)
			return cfg_err(err, errlen, "%s: uid out of range", key);
		cfg->tenant_uid[t] = uid + 1;
		return 0;
	}

	/* a KR_CFG_OWN key of the table that no code above parses */
	return cfg_err(err, errlen, "%s: no parser for this key", key);
}

static char *cfg_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/*
 * kr_keeper_cfg_load() - apply every "key = value" line of path. Returns 0,
 * -ENOENT/-EACCES (cannot open), -EINVAL (err names the file, line and key).
 */
int kr_keeper_cfg_load(struct kr_keeper_cfg *cfg, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	int rc;

	if (!f) {
		rc = -errno;
		cfg_err(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = kr_keeper_cfg_read(cfg, f, path, err, errlen);
	fclose(f);
	return rc;
}

/* kr_keeper_cfg_read() - see keeper.h. */
int kr_keeper_cfg_read(struct kr_keeper_cfg *cfg, FILE *f, const char *path, char *err, size_t errlen)
{
	char line[512], msg[256];
	unsigned int lineno = 0;
	int rc = 0;

	while (fgets(line, sizeof(line), f)) {
		char *hash, *eq, *key, *val;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			rc = cfg_err(err, errlen, "%s:%u: line too long", path, lineno);
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		key = cfg_trim(line);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			rc = cfg_err(err, errlen, "%s:%u: expected key = value", path, lineno);
			break;
		}
		*eq = '\0';
		val = cfg_trim(eq + 1);
		key = cfg_trim(key);
		rc = kr_keeper_cfg_set(cfg, key, val, msg, sizeof(msg));
		if (rc) {
			cfg_err(err, errlen, "%s:%u: %s", path, lineno, msg);
			break;
		}
	}
	return rc;
}

static uint64_t cfg_pages(uint64_t bytes)
{
	return (bytes + KR_POOL_PAGE - 1) / KR_POOL_PAGE;
}

/*
 * Pages at start: the pool segment (a 2 MB-aligned memzone: one page more
 * for the heap element header in front of it), the keeper zones packed
 * together (one page more for the same), per tenant its job zone and warm
 * heaps (hugetlb memfds), and the MetaServer table. Job heaps past the warm
 * ones come from the node's free hugepages as jobs attach and allocate.
 */
uint64_t kr_keeper_cfg_hugepage_bytes(const struct kr_keeper_cfg *cfg)
{
	struct kr_pool_seg s;
	uint64_t pages;

	kr_keeper_seg_layout(cfg, &s);
	pages = cfg_pages(s.size) + 1;
	pages += cfg_pages((uint64_t)cfg->tenants * kr_keeper_kzone_size(cfg)) + 1;
	pages += (uint64_t)cfg->tenants * (cfg_pages(kr_keeper_zone_size(cfg)) +
					   (cfg->warm_heaps ? 1 : 0) * cfg_pages(KR_HEAP_FIRST));
	pages += cfg_pages(kr_keeper_meta_hugepage_bytes(cfg)); /* the DC metadata: MetaServer table */
	return pages * KR_POOL_PAGE;
}

/*
 * kr_keeper_cfg_check() - every number in range, the socket set, the heap a
 * whole number of hugepages, and the layout inside the hugepage budget.
 * Returns 0 or -EINVAL with err naming the key.
 */
int kr_keeper_cfg_check(const struct kr_keeper_cfg *cfg, char *err, size_t errlen)
{
	uint64_t need, heap_pages;

	if (cfg->tenants < 1 || cfg->tenants > KR_POOL_MAX_TENANTS)
		return cfg_err(err, errlen, "tenants: %u is not in 1..%u", cfg->tenants,
			       KR_POOL_MAX_TENANTS);
	if (cfg->dcis < 1 || cfg->dcis > KR_POOL_MAX_DCIS)
		return cfg_err(err, errlen, "dcis: %u is not in 1..%u (per tenant)", cfg->dcis,
			       KR_POOL_MAX_DCIS);
	if (cfg->rc_spares > KR_POOL_MAX_RC)
		return cfg_err(err, errlen, "rc-spares: %u is above %u (per tenant)",
			       cfg->rc_spares, KR_POOL_MAX_RC);
	if (cfg->jobs < 1 || cfg->jobs > KR_POOL_MAX_JOBS)
		return cfg_err(err, errlen, "jobs: %u is not in 1..%u (per tenant)", cfg->jobs,
			       KR_POOL_MAX_JOBS);
	if (cfg->vqps > KR_POOL_MAX_VQPS)
		return cfg_err(err, errlen, "vqps: %u is above %u (per tenant)", cfg->vqps,
			       KR_POOL_MAX_VQPS);
	if (cfg->ports > KR_POOL_MAX_PORTS)
		return cfg_err(err, errlen, "ports: %u is above %u (per tenant)", cfg->ports,
			       KR_POOL_MAX_PORTS);
	if (cfg->heap_mb < 2 || cfg->heap_mb > KR_POOL_MAX_HEAP_MB || cfg->heap_mb % 2)
		return cfg_err(err, errlen, "heap-mb: %u is not an even number in 2..%u",
			       cfg->heap_mb, KR_POOL_MAX_HEAP_MB);
	if (cfg->warm_heaps > KR_POOL_MAX_JOBS)
		return cfg_err(err, errlen, "warm-heaps: %u is above %u", cfg->warm_heaps,
			       KR_POOL_MAX_JOBS);
	if (cfg->dcis_max && (cfg->dcis_max < cfg->dcis || cfg->dcis_max > KR_POOL_MAX_DCIS))
		return cfg_err(err, errlen, "dcis-max: %u is not in dcis (%u)..%u", cfg->dcis_max,
			       cfg->dcis, KR_POOL_MAX_DCIS);
	if (cfg->rc_max && (cfg->rc_max < cfg->rc_spares || cfg->rc_max > KR_POOL_MAX_RC))
		return cfg_err(err, errlen, "rc-max: %u is not in rc-spares (%u)..%u", cfg->rc_max,
			       cfg->rc_spares, KR_POOL_MAX_RC);
	if (cfg->low_water > cfg->dcis)
		return cfg_err(err, errlen, "low-water: %u is above dcis (%u)", cfg->low_water,
			       cfg->dcis);
	if (cfg->uid_launches > cfg->tenants)
		return cfg_err(err, errlen, "uid-launches: %u is above tenants (%u)",
			       cfg->uid_launches, cfg->tenants);
	if (cfg->uid_ports > cfg->tenants * cfg->ports)
		return cfg_err(err, errlen, "uid-ports: %u is above tenants x ports (%u)",
			       cfg->uid_ports, cfg->tenants * cfg->ports);
	if (!cfg->socket[0])
		return cfg_err(err, errlen, "socket: no path");
	for (uint32_t t = cfg->tenants; t < KR_POOL_MAX_TENANTS; t++)
		if (cfg->tenant_uid[t])
			return cfg_err(err, errlen, "tenant.%u.uid: only %u tenants configured", t,
				       cfg->tenants);
	for (uint32_t a = 0; a < cfg->tenants; a++)
		for (uint32_t b = a + 1; b < cfg->tenants; b++)
			if (cfg->tenant_uid[a] && cfg->tenant_uid[a] == cfg->tenant_uid[b])
				return cfg_err(err, errlen,
					       "tenant.%u.uid: uid %u also pinned to "
					       "tenant %u",
					       b, cfg->tenant_uid[b] - 1, a);
	/* one attach reply carries the segment, the zone and the heap's first pages */
	heap_pages = cfg_pages(KR_HEAP_FIRST);
	{
		struct kr_pool_seg s;

		kr_keeper_seg_layout(cfg, &s);
		if (cfg_pages(s.size) + cfg_pages(kr_keeper_zone_size(cfg)) + heap_pages >
		    KR_ATTACH_MAX_REGIONS)
			return cfg_err(err, errlen,
				       "heap-mb/dcis/vqps: a job would map more than %u hugepages",
				       KR_ATTACH_MAX_REGIONS);
	}
	need = kr_keeper_cfg_hugepage_bytes(cfg) + KR_POOL_EAL_RESERVE;
	if (need > (uint64_t)cfg->hugepages_mb << 20)
		return cfg_err(err, errlen,
			       "hugepages: the pool needs %" PRIu64 " MB of hugepages (plus the "
			       "EAL's own), above the budget of %u MB; raise --hugepages or lower "
			       "--tenants/--jobs/--heap-mb",
			       need >> 20, cfg->hugepages_mb);
	return 0;
}
