/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every key of the keeper's configuration, once: its option letter, its
 * argument, an example value, its help and, for plain numbers and switches,
 * where it is stored. krpoold builds its options and --help from this table,
 * and kr_keeper_cfg_set() takes only the keys it lists; test_keeper_cfg_keys checks that the parser takes
 * every key and that krpoold(8) and the sample configuration
 * (tools/systemd/krpoold.conf) name every one, and no other.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "keeper/keeper.h"

#define KEY_ARG(n, a, ex, h)                                                                       \
	{                                                                                          \
		.name = (n), .arg = (a), .example = (ex), .help = (h)                              \
	}
#define KEY_U32(n, field, ex, h)                                                                   \
	{                                                                                          \
		.name = (n), .arg = "N", .example = (ex), .help = (h), .kind = KR_CFG_U32,         \
		.off = offsetof(struct kr_keeper_cfg, field)                                       \
	}
#define KEY_FLAG(n, h)                                                                             \
	{                                                                                          \
		.name = (n), .example = "true", .help = (h)                                        \
	}
#define KEY_BOOL(n, field, h)                                                                      \
	{                                                                                          \
		.name = (n), .example = "true", .help = (h), .kind = KR_CFG_BOOL,                  \
		.off = offsetof(struct kr_keeper_cfg, field)                                       \
	}

const struct kr_keeper_cfg_key kr_keeper_cfg_keys[] = {
    {.name = "config",
     .letter = 'c',
     .arg = "FILE",
     .cli_only = true,
     .help = "read key = value settings (keys as the long options)"},
    {.name = "device",
     .letter = 'd',
     .arg = "NAME",
     .example = "sim:keys",
     .help = "mlx5_<n> or sim:<name> (default: first mlx5, else sim)"},
    KEY_ARG("gid-index", "N", "3",
	    "GID table entry to send from (default: the port's RoCE v2\n"
	    "IPv4 entry, else RoCE v2 IPv6; on InfiniBand the first)"),
    KEY_ARG("traffic-class", "N", "0",
	    "GRH traffic class of every path, 0..255 (RoCE v2: DSCP\n"
	    "<< 2 | ECN; default 0)"),
    KEY_ARG("priority", "N", "0",
	    "Ethernet priority 0..7 (PFC class) or InfiniBand SL\n"
	    "0..15 of every path (default 0)"),
    KEY_BOOL("trusted", trusted, "mlx5: hand jobs the device's command fd so they can ring\n"
			"doorbells (they could issue firmware commands; required on\n"
			"hardware until kmod-min maps one UAR page per tenant)"),
    KEY_BOOL("require-kmod", require_kmod, "refuse to start without kmod-min (/dev/krmin), which\n"
			     "lets each job map only the DCIs it leases"),
    KEY_U32("tenants", tenants, "2", "tenant slots: a PD, a DCT and pools each (default 2)"),
    KEY_U32("dcis", dcis, "8", "DCIs per tenant (default 8)"),
    KEY_U32("rc-spares", rc_spares, "2", "spare RC QPs per tenant (default 2)"),
    KEY_U32("jobs", jobs, "8", "attached jobs per tenant, each with a heap (default 8)"),
    KEY_U32("vqps", vqps, "64", "vQP slots per tenant (default 64)"),
    KEY_U32("ports", ports, "4", "receive endpoints (ports bound) per tenant (default 4)"),
    KEY_U32("heap-mb", heap_mb, "4",
	    "most a job's heap grows to, MB, even (default 4);\n"
	    "backed 2 MB at attach, doubling as the job allocates"),
    KEY_U32("warm-heaps", warm_heaps, "4",
	    "free heaps kept backed and registered in a launch's\n"
	    "tenant (a free tenant keeps 1), so an attach issues no\n"
	    "firmware command (default 4)"),
    {.name = "hugepages",
     .arg = "MB",
     .example = "256",
     .help = "hugepage budget (default 256)",
     .kind = KR_CFG_U32,
     .off = offsetof(struct kr_keeper_cfg, hugepages_mb)},
    KEY_U32("low-water", low_water, "2", "grow the pool when fewer DCIs are free (default 2)"),
    KEY_U32("dcis-max", dcis_max, "8", "DCIs per tenant the pool may grow to (default: dcis)"),
    KEY_U32("rc-max", rc_max, "2", "RC QPs per tenant it may grow to (default: rc-spares)"),
    KEY_U32("uid-launches", uid_launches, "1",
	    "tenant slots (launches) one uid may hold, besides slots\n"
	    "pinned to it (default: half the unpinned ones, at least\n"
	    "1; root is not limited); more: EDQUOT"),
    KEY_U32("uid-ports", uid_ports, "4", "ports one uid may bind on them (default: all of theirs)"),
    {.name = "socket",
     .letter = 's',
     .arg = "PATH",
     .example = "/run/krcore/krpoold.sock",
     .help = "UNIX socket (default $KR_KEEPER_SOCKET or " KR_POOL_DEFAULT_SOCKET ")"},
    KEY_ARG("group", "NAME|GID", "0",
	    "who may connect: the socket's group, mode 0660\n"
	    "(default: the keeper's own group)"),
    KEY_ARG("base-virtaddr", "A", "0x200000000000",
	    "where the hugepages are mapped (default 0x200000000000)"),
    KEY_ARG("node-id", "N", "1", "this node's id (default: GID's IPv4 low 16 bits, else 1)"),
    KEY_ARG("peers", "FILE", "/etc/krcore/peers",
	    "static peers: <node_id> <gid> <mac|lid=N> <tag> <dctn>..."),
    KEY_FLAG("metaserver", "keep the cluster's DCT slot table (one slot per node)"),
    KEY_ARG("max-nodes", "N", "16384", "MetaServer slots: node ids 1..N-1 (default 16384)"),
    KEY_ARG("meta-listen", "A", "127.0.0.1:4800",
	    "MetaServer registration socket, IPv4:port (loopback)"),
    KEY_ARG("metaserver-addr", "A[,A...]", "127.0.0.1:4800",
	    "MetaServers to register with (lookups: nearest first)"),
    KEY_ARG("cluster-key", "FILE", "/etc/krcore/cluster.key",
	    "seal MetaServer datagrams with this key (64 hex, 0600);\n"
	    "required with --metaserver / --metaserver-addr"),
    KEY_FLAG("insecure-metaserver", "run them without a key (any user reaching the\n"
				    "socket could redirect connects)"),
    {.name = "foreground",
     .letter = 'f',
     .example = "true",
     .help = "do not daemonise (systemd Type=notify uses this)",
     .kind = KR_CFG_BOOL,
     .off = offsetof(struct kr_keeper_cfg, foreground)},
    {.name = "verbose",
     .letter = 'v',
     .example = "true",
     .help = "log at info level",
     .kind = KR_CFG_BOOL,
     .off = offsetof(struct kr_keeper_cfg, verbose)},
    {.name = "tenant.N.uid",
     .arg = "UID",
     .example = "1000",
     .file_only = true,
     .help = "pin tenant slot N to a uid (configuration file only)"},
    {.name = "help", .letter = 'h', .cli_only = true, .help = "this text"},
};

const size_t kr_keeper_cfg_nkeys = sizeof(kr_keeper_cfg_keys) / sizeof(kr_keeper_cfg_keys[0]);

/* kr_keeper_cfg_key_find() - see keeper.h. */
const struct kr_keeper_cfg_key *kr_keeper_cfg_key_find(const char *key)
{
	if (!strncmp(key, "tenant.", 7))
		key = "tenant.N.uid"; /* kr_keeper_cfg_set() checks N and the suffix */
	for (size_t i = 0; i < kr_keeper_cfg_nkeys; i++)
		if (!strcmp(kr_keeper_cfg_keys[i].name, key))
			return &kr_keeper_cfg_keys[i];
	return NULL;
}

/* kr_keeper_cfg_usage() - see keeper.h. */
void kr_keeper_cfg_usage(FILE *f)
{
	fprintf(f, "usage: krpoold [options]\n");
	for (size_t i = 0; i < kr_keeper_cfg_nkeys; i++) {
		const struct kr_keeper_cfg_key *k = &kr_keeper_cfg_keys[i];
		char left[64];
		const char *h = k->help, *nl;
		int n;

		if (k->file_only)
			continue;
		if (k->letter)
			n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", k->letter, k->name,
				     k->arg ? " " : "", k->arg ? k->arg : "");
		else
			n = snprintf(left, sizeof(left), "      --%s%s%s", k->name,
				     k->arg ? " " : "", k->arg ? k->arg : "");
		/* the help starts at column 24, or two spaces after a longer option */
		fprintf(f, "%s%*s", left, n < 24 ? 24 - n : 2, "");
		while ((nl = strchr(h, '\n'))) {
			fprintf(f, "%.*s\n%24s", (int)(nl - h), h, "");
			h = nl + 1;
		}
		fprintf(f, "%s\n", h);
	}
	fprintf(f, "Every key but config and help may also stand in the file given with -c,\n"
		   "as key = value (a switch: true or false), plus tenant.N.uid = UID.\n");
}
