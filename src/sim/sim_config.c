/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parse a sim device name into struct sim_config (sim.h):
 *
 *   <name>[@<ipv4>[:<udp port>]][,<key>=<value>...]
 *
 * plus KR_SIM_OPTIONS, a comma-separated list of the same keys read from the
 * environment and applied before the device name's options (so the name wins).
 * profile=<name> is applied first, whichever source sets it (the device name
 * wins there too); every other key then overrides what the profile set.
 *
 * Strict: an unknown key, a key without '=', an empty option, a value that is
 * not a number of the right kind or lies out of range, is refused with
 * -EINVAL and a logged message naming the option and where it came from.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kr_log.h"
#include "sim/sim.h"

#define SIM_CONFIG_NAME_MAX 59		/* "sim:" + name fits ctx->name[64] */
#define SIM_CONFIG_UDP_PORT 4791	/* IANA RoCEv2 */
#define SIM_CONFIG_MAX_US   10000000ull /* 10 s: no command or delay is longer */
#define SIM_CONFIG_MAX_NS   (SIM_CONFIG_MAX_US * 1000ull)
#define SIM_CONFIG_MAX_GBPS 10000.0 /* 10 Tb/s */
#define SIM_CONFIG_ENV	    "KR_SIM_OPTIONS"
#define SIM_LIBMLX5_OLDEST  33 /* the singleton NC UAR page */

enum sim_opt_kind {
	SIM_OPT_RATE,	 /* fraction in [0, 1] -> parts per million (uint32_t) */
	SIM_OPT_US,	 /* microseconds -> nanoseconds (uint64_t) */
	SIM_OPT_NS,	 /* nanoseconds (uint64_t) */
	SIM_OPT_GBPS,	 /* Gb/s, may be fractional -> bits per second (uint64_t) */
	SIM_OPT_SEED,	 /* any uint64_t, decimal or 0x hex */
	SIM_OPT_RELEASE, /* an rdma-core release number (uint32_t) */
	SIM_OPT_OFF,	 /* 0 or 1; the bool is set by 0 */
	SIM_OPT_NAME,	 /* [A-Za-z0-9_-]{1,31} (char[32]) */
};

struct sim_opt {
	const char *key;
	enum sim_opt_kind kind;
	size_t off;
};

#define SIM_OPT(k, kind, field)                                                                    \
	{                                                                                          \
		(k), (kind), offsetof(struct sim_config, field)                                    \
	}

static const struct sim_opt sim_opts[] = {
    SIM_OPT("blueflame", SIM_OPT_OFF, no_blueflame),
    SIM_OPT("cmdq", SIM_OPT_NAME, cmdq),
    SIM_OPT("corrupt", SIM_OPT_RATE, corrupt_ppm),
    SIM_OPT("delay", SIM_OPT_RATE, delay_ppm),
    SIM_OPT("delay_us", SIM_OPT_US, delay_ns),
    SIM_OPT("drop", SIM_OPT_RATE, drop_ppm),
    SIM_OPT("dup", SIM_OPT_RATE, dup_ppm),
    SIM_OPT("libmlx5", SIM_OPT_RELEASE, libmlx5),
    SIM_OPT("reorder", SIM_OPT_RATE, reorder_ppm),
    SIM_OPT("seed", SIM_OPT_SEED, seed),
    SIM_OPT("wire_gbps", SIM_OPT_GBPS, wire_bps),
    SIM_OPT("wire_latency_ns", SIM_OPT_NS, wire_latency_ns),
};

/* An unsigned integer, digits only (0x hex if hex): no sign, no spaces, no overflow. */
static bool sim_parse_u64(const char *s, bool hex, uint64_t *v)
{
	int base = 10;
	char *end;

	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s || !(base == 16 ? strchr("0123456789abcdefABCDEF", *s) : strchr("0123456789", *s)))
		return false;
	errno = 0;
	*v = strtoull(s, &end, base);
	return !errno && !*end;
}

/* A non-negative finite decimal number ("0.05", "1", ".5", "1e-3"). */
static bool sim_parse_double(const char *s, double *v)
{
	char *end;

	if (!*s || !strchr("0123456789.", *s))
		return false;
	errno = 0;
	*v = strtod(s, &end);
	return !errno && !*end && isfinite(*v) && *v >= 0;
}

static int sim_opt_bad(const char *name, const char *origin, const char *key, const char *val,
		       const char *why)
{
	KR_ERR("sim", "sim:%s: option %s=%s (%s): %s", name, key, val, origin, why);
	return -EINVAL;
}

/* cmd_<command>_us: the cost class it names, or SIM_COST_NCMDS. */
static enum sim_cost_cmd sim_opt_cmd_of(const char *key)
{
	size_t len = strlen(key);

	if (len <= 7 || strncmp(key, "cmd_", 4) || strcmp(key + len - 3, "_us"))
		return SIM_COST_NCMDS;
	for (unsigned int c = 0; c < SIM_COST_NCMDS; c++) {
		const char *n = sim_cost_cmd_name((enum sim_cost_cmd)c);

		if (strlen(n) == len - 7 && !strncmp(key + 4, n, len - 7))
			return (enum sim_cost_cmd)c;
	}
	return SIM_COST_NCMDS;
}

/* One key=value (not profile) into cfg. */
static int sim_opt_apply(struct sim_config *cfg, const char *origin, const char *key,
			 const char *val)
{
	const struct sim_opt *o = NULL;
	enum sim_cost_cmd c;
	uint64_t u;
	double d;

	c = sim_opt_cmd_of(key);
	if (c != SIM_COST_NCMDS) {
		if (!sim_parse_u64(val, false, &u) || u > SIM_CONFIG_MAX_US)
			return sim_opt_bad(cfg->name, origin, key, val,
					   "not a whole number of microseconds up to 10 s");
		cfg->cmd_ns[c] = u * 1000;
		return 0;
	}
	for (size_t i = 0; i < sizeof(sim_opts) / sizeof(sim_opts[0]); i++)
		if (!strcmp(sim_opts[i].key, key))
			o = &sim_opts[i];
	if (!o)
		return sim_opt_bad(cfg->name, origin, key, val, "unknown option");

	switch (o->kind) {
	case SIM_OPT_RATE:
		if (!sim_parse_double(val, &d) || d > 1.0)
			return sim_opt_bad(cfg->name, origin, key, val,
					   "a rate is a fraction in [0, 1]");
		*(uint32_t *)((char *)cfg + o->off) = (uint32_t)llround(d * 1e6);
		return 0;
	case SIM_OPT_US:
		if (!sim_parse_u64(val, false, &u) || u > SIM_CONFIG_MAX_US)
			return sim_opt_bad(cfg->name, origin, key, val,
					   "not a whole number of microseconds up to 10 s");
		*(uint64_t *)((char *)cfg + o->off) = u * 1000;
		return 0;
	case SIM_OPT_NS:
		if (!sim_parse_u64(val, false, &u) || u > SIM_CONFIG_MAX_NS)
			return sim_opt_bad(cfg->name, origin, key, val,
					   "not a whole number of nanoseconds up to 10 s");
		*(uint64_t *)((char *)cfg + o->off) = u;
		return 0;
	case SIM_OPT_GBPS:
		if (!sim_parse_double(val, &d) || d > SIM_CONFIG_MAX_GBPS ||
		    (d > 0 && d * 1e9 < 1.0))
			return sim_opt_bad(cfg->name, origin, key, val,
					   "not a bandwidth in Gb/s up to 10000 (0 = unlimited)");
		*(uint64_t *)((char *)cfg + o->off) = (uint64_t)llround(d * 1e9);
		return 0;
	case SIM_OPT_SEED:
		if (!sim_parse_u64(val, true, &u))
			return sim_opt_bad(cfg->name, origin, key, val,
					   "not a 64-bit unsigned number");
		*(uint64_t *)((char *)cfg + o->off) = u;
		return 0;
	case SIM_OPT_RELEASE:
		if (!sim_parse_u64(val, false, &u) || u < SIM_LIBMLX5_OLDEST || u > 999)
			return sim_opt_bad(cfg->name, origin, key, val,
					   "not an rdma-core release from 33 (devx UARs) to 999");
		*(uint32_t *)((char *)cfg + o->off) = (uint32_t)u;
		return 0;
	case SIM_OPT_OFF:
		if (strcmp(val, "0") && strcmp(val, "1"))
			return sim_opt_bad(cfg->name, origin, key, val, "not 0 or 1");
		*(bool *)((char *)cfg + o->off) = !strcmp(val, "0");
		return 0;
	case SIM_OPT_NAME:
		if (!*val || strlen(val) >= sizeof(cfg->cmdq) ||
		    strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
			strlen(val))
			return sim_opt_bad(cfg->name, origin, key, val,
					   "not 1 to 31 letters, digits, '_' or '-'");
		snprintf((char *)cfg + o->off, sizeof(cfg->cmdq), "%s", val);
		return 0;
	}
	return -EINVAL;
}

/*
 * Walk the comma-separated options of list (from origin). Pass 0 only
 * records the last profile= (a copy in *profile, freed by the caller);
 * pass 1 applies everything else.
 */
static int sim_opts_walk(struct sim_config *cfg, const char *list, const char *origin, int pass,
			 char **profile, const char **profile_origin)
{
	char *copy, *tok, *save = NULL, *eq;
	int rc = 0;

	if (!list || !*list)
		return 0;
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	/* strtok_r would skip empty options: walk by hand to refuse them */
	for (tok = copy; tok; tok = save) {
		save = strchr(tok, ',');
		if (save)
			*save++ = '\0';
		if (!*tok) {
			KR_ERR("sim", "sim:%s: empty option in \"%s\" (%s)", cfg->name, list,
			       origin);
			rc = -EINVAL;
			break;
		}
		eq = strchr(tok, '=');
		if (!eq || eq == tok) {
			KR_ERR("sim", "sim:%s: option \"%s\" (%s) is not <key>=<value>", cfg->name,
			       tok, origin);
			rc = -EINVAL;
			break;
		}
		*eq++ = '\0';
		if (!strcmp(tok, "profile")) {
			if (pass == 0) {
				free(*profile);
				*profile = strdup(eq);
				if (!*profile) {
					rc = -ENOMEM;
					break;
				}
				*profile_origin = origin;
			}
			continue;
		}
		if (pass == 1) {
			rc = sim_opt_apply(cfg, origin, tok, eq);
			if (rc)
				break;
		}
	}
	free(copy);
	return rc;
}

/* "<name>[@<ipv4>[:<port>]]" of len bytes. */
static int sim_config_head(struct sim_config *cfg, const char *head, size_t len)
{
	const char *at = memchr(head, '@', len), *colon;
	size_t name_len = at ? (size_t)(at - head) : len;
	char ip[INET_ADDRSTRLEN], port[8];
	size_t ip_len;
	uint64_t u;

	if (!name_len || name_len > SIM_CONFIG_NAME_MAX) {
		KR_ERR("sim", "sim:%.*s: a host name has 1 to %d bytes", (int)len, head,
		       SIM_CONFIG_NAME_MAX);
		return -EINVAL;
	}
	memcpy(cfg->name, head, name_len);
	cfg->name[name_len] = '\0';
	cfg->udp_port = SIM_CONFIG_UDP_PORT;
	if (!at)
		return 0;

	at++;
	len -= name_len + 1;
	colon = memchr(at, ':', len);
	ip_len = colon ? (size_t)(colon - at) : len;
	if (!ip_len || ip_len >= sizeof(ip)) {
		KR_ERR("sim", "sim:%s: address \"%.*s\" is not an IPv4 address", cfg->name,
		       (int)len, at);
		return -EINVAL;
	}
	memcpy(ip, at, ip_len);
	ip[ip_len] = '\0';
	if (inet_pton(AF_INET, ip, &cfg->addr) != 1) {
		KR_ERR("sim", "sim:%s: address \"%s\" is not an IPv4 address", cfg->name, ip);
		return -EINVAL;
	}
	cfg->has_addr = true;
	if (!colon)
		return 0;
	len -= ip_len + 1;
	if (!len || len >= sizeof(port)) {
		KR_ERR("sim", "sim:%s: UDP port \"%.*s\" is not 1..65535", cfg->name, (int)len,
		       colon + 1);
		return -EINVAL;
	}
	memcpy(port, colon + 1, len);
	port[len] = '\0';
	if (!sim_parse_u64(port, false, &u) || u < 1 || u > 65535) {
		KR_ERR("sim", "sim:%s: UDP port \"%s\" is not 1..65535", cfg->name, port);
		return -EINVAL;
	}
	cfg->udp_port = (uint16_t)u;
	return 0;
}

/*
 * sim_config_parse() - see sim.h. Returns 0, -EINVAL (bad spec,
 * logged), -ENOMEM.
 */
int sim_config_parse(const char *spec, struct sim_config *cfg)
{
	const char *opts, *env, *profile_origin = NULL;
	const struct sim_cost_profile *p;
	char *profile = NULL;
	int rc;

	if (!spec || !cfg)
		return -EINVAL;
	memset(cfg, 0, sizeof(*cfg));
	opts = strchr(spec, ',');
	rc = sim_config_head(cfg, spec, opts ? (size_t)(opts - spec) : strlen(spec));
	if (rc)
		goto out;
	if (opts && !*++opts) {
		KR_ERR("sim", "sim:%s: empty option after ','", cfg->name);
		rc = -EINVAL;
		goto out;
	}
	env = getenv(SIM_CONFIG_ENV);

	/* the profile first, the device name's over the environment's */
	rc = sim_opts_walk(cfg, env, SIM_CONFIG_ENV, 0, &profile, &profile_origin);
	if (!rc)
		rc = sim_opts_walk(cfg, opts, "device name", 0, &profile, &profile_origin);
	if (rc)
		goto out;
	if (profile && strcmp(profile, "none")) {
		p = sim_cost_profile_find(profile);
		if (!p) {
			rc = sim_opt_bad(cfg->name, profile_origin, "profile", profile,
					 "unknown profile (none, connectx4)");
			goto out;
		}
		snprintf(cfg->profile, sizeof(cfg->profile), "%s", p->name);
		memcpy(cfg->cmd_ns, p->cmd_ns, sizeof(cfg->cmd_ns));
		cfg->wire_latency_ns = p->wire_latency_ns;
		cfg->wire_bps = p->wire_bps;
	}

	/* then every other key, the device name's last */
	rc = sim_opts_walk(cfg, env, SIM_CONFIG_ENV, 1, &profile, &profile_origin);
	if (!rc)
		rc = sim_opts_walk(cfg, opts, "device name", 1, &profile, &profile_origin);
	if (rc)
		goto out;
	if (cfg->delay_ppm && !cfg->delay_ns) {
		KR_ERR("sim", "sim:%s: delay=<rate> needs delay_us=<how long>", cfg->name);
		rc = -EINVAL;
	}
out:
	free(profile);
	if (rc)
		memset(cfg, 0, sizeof(*cfg));
	return rc;
}
