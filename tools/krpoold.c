/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krpoold: the pool keeper. Owns the device, keeps DCIs, DCTs and RC QPs
 * warm in hugepage shared memory, and serves attach requests on a UNIX
 * socket. The logic is in src/keeper/; this is flags, the config file and
 * daemonising.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/keeper.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: krpoold [options]\n"
		"  -c, --config FILE     read key = value settings (keys as the long options)\n"
		"  -d, --device NAME     mlx5_<n> or sim:<name> (default: first mlx5, else sim)\n"
		"      --gid-index N     GID table entry to send from (default: the port's RoCE v2\n"
		"                        IPv4 entry, else RoCE v2 IPv6; on InfiniBand the first)\n"
		"      --traffic-class N GRH traffic class of every path, 0..255 (RoCE v2: DSCP\n"
		"                        << 2 | ECN; default 0)\n"
		"      --priority N      Ethernet priority 0..7 (PFC class) or InfiniBand SL\n"
		"                        0..15 of every path (default 0)\n"
		"      --trusted         mlx5: hand jobs the device's command fd so they can ring\n"
		"                        doorbells (they could issue firmware commands; required on\n"
		"                        hardware until kmod-min maps one UAR page per tenant)\n"
		"      --require-kmod    refuse to start without kmod-min (/dev/krmin), which\n"
		"                        lets each job map only the DCIs it leases\n"
		"      --tenants N       tenant slots: a PD, a DCT and pools each (default 2)\n"
		"      --dcis N          DCIs per tenant (default 8)\n"
		"      --rc-spares N     spare RC QPs per tenant (default 2)\n"
		"      --jobs N          attached jobs per tenant, each with a heap (default 8)\n"
		"      --vqps N          vQP slots per tenant (default 64)\n"
		"      --ports N         receive endpoints (ports bound) per tenant (default 4)\n"
		"      --heap-mb N       most a job's heap grows to, MB, even (default 4);\n"
		"                        backed 2 MB at attach, doubling as the job allocates\n"
		"      --warm-heaps N    free heaps kept backed and registered in a launch's\n"
		"                        tenant (a free tenant keeps 1), so an attach issues no\n"
		"                        firmware command (default 4)\n"
		"      --hugepages MB    hugepage budget (default 256)\n"
		"      --low-water N     grow the pool when fewer DCIs are free (default 2)\n"
		"      --dcis-max N      DCIs per tenant the pool may grow to (default: dcis)\n"
		"      --rc-max N        RC QPs per tenant it may grow to (default: rc-spares)\n"
		"      --uid-launches N  tenant slots (launches) one uid may hold, besides slots\n"
		"                        pinned to it (default: half the unpinned ones, at least\n"
		"                        1; root is not limited); more: EDQUOT\n"
		"      --uid-ports N     ports one uid may bind on them (default: all of theirs)\n"
		"  -s, --socket PATH     UNIX socket (default $KR_KEEPER_SOCKET or %s)\n"
		"      --group NAME|GID  who may connect: the socket's group, mode 0660\n"
		"                        (default: the keeper's own group)\n"
		"      --base-virtaddr A where the hugepages are mapped (default 0x%llx)\n"
		"      --node-id N       this node's id (default: GID's IPv4 low 16 bits, else 1)\n"
		"      --peers FILE      static peers: <node_id> <gid> <mac|lid=N> <tag> <dctn>...\n"
		"      --metaserver      keep the cluster's DCT slot table (one slot per node)\n"
		"      --max-nodes N     MetaServer slots: node ids 1..N-1 (default 16384)\n"
		"      --meta-listen A   MetaServer registration socket, IPv4:port (loopback)\n"
		"      --metaserver-addr A[,A...]  MetaServers to register with (lookups: nearest first)\n"
		"      --cluster-key FILE  seal MetaServer datagrams with this key (64 hex, 0600);\n"
		"                        required with --metaserver / --metaserver-addr\n"
		"      --insecure-metaserver  run them without a key (any user reaching the\n"
		"                        socket could redirect connects)\n"
		"  -f, --foreground      do not daemonise (systemd Type=notify uses this)\n"
		"  -v, --verbose         log at info level\n"
		"  -h, --help\n",
		KR_POOL_DEFAULT_SOCKET, (unsigned long long)KR_POOL_BASE_VA);
}

static const struct option long_opts[] = {
    {"config", required_argument, NULL, 'c'},  {"device", required_argument, NULL, 'd'},
    {"tenants", required_argument, NULL, 1},   {"dcis", required_argument, NULL, 1},
    {"rc-spares", required_argument, NULL, 1}, {"jobs", required_argument, NULL, 1},
    {"vqps", required_argument, NULL, 1},      {"heap-mb", required_argument, NULL, 1},
    {"ports", required_argument, NULL, 1},     {"warm-heaps", required_argument, NULL, 1},
    {"hugepages", required_argument, NULL, 1}, {"low-water", required_argument, NULL, 1},
    {"socket", required_argument, NULL, 's'},  {"base-virtaddr", required_argument, NULL, 1},
    {"group", required_argument, NULL, 1},     {"gid-index", required_argument, NULL, 1},
    {"traffic-class", required_argument, NULL, 1}, {"priority", required_argument, NULL, 1},
    {"trusted", no_argument, NULL, 2},         {"require-kmod", no_argument, NULL, 2},
    {"foreground", no_argument, NULL, 'f'},    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    /* the DC metadata: node identity and metadata */
    {"node-id", required_argument, NULL, 1},   {"peers", required_argument, NULL, 1},
    {"metaserver", no_argument, NULL, 2},      {"max-nodes", required_argument, NULL, 1},
    {"meta-listen", required_argument, NULL, 1},
    {"metaserver-addr", required_argument, NULL, 1},
    {"cluster-key", required_argument, NULL, 1},
    {"insecure-metaserver", no_argument, NULL, 2},
    /* growth (src/keeper/keeper_grow.c) */
    {"dcis-max", required_argument, NULL, 1},  {"rc-max", required_argument, NULL, 1},
    /* quotas per uid (src/keeper/keeper_quota.c) */
    {"uid-launches", required_argument, NULL, 1}, {"uid-ports", required_argument, NULL, 1},
    {NULL, 0, NULL, 0},
};

/* Fork; the parent returns only to exit with the child's start-up verdict. */
static int daemonise(struct kr_keeper_cfg *cfg)
{
	int pfd[2], status;
	pid_t pid;
	char c;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(pfd[0]);
		setsid();
		if (chdir("/"))
			_exit(1);
		cfg->ready_fd = pfd[1];
		return 0;
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) == 1)
		exit(0);
	waitpid(pid, &status, 0);
	exit(WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : 1);
}

int main(int argc, char **argv)
{
	struct kr_keeper_cfg cfg;
	char err[256];
	int opt, idx, rc;

	kr_keeper_cfg_default(&cfg);
	/* the file first, so flags override it */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "c:d:s:fvh", long_opts, &idx)) != -1) {
		if (opt == 'c' && kr_keeper_cfg_load(&cfg, optarg, err, sizeof(err))) {
			fprintf(stderr, "krpoold: %s\n", err);
			return 2;
		}
	}
	optind = 1;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "c:d:s:fvh", long_opts, &idx)) != -1) {
		rc = 0;
		switch (opt) {
		case 'c':
			break;
		case 'd':
			rc = kr_keeper_cfg_set(&cfg, "device", optarg, err, sizeof(err));
			break;
		case 's':
			rc = kr_keeper_cfg_set(&cfg, "socket", optarg, err, sizeof(err));
			break;
		case 'f':
			cfg.foreground = true;
			break;
		case 'v':
			cfg.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 1:
			rc = kr_keeper_cfg_set(&cfg, long_opts[idx].name, optarg, err, sizeof(err));
			break;
		case 2: /* flags: --metaserver, --insecure-metaserver (keeper_dct.c, src/keeper/meta), --trusted, ... */
			rc = kr_keeper_cfg_set(&cfg, long_opts[idx].name, "true", err, sizeof(err));
			break;
		default:
			usage(stderr);
			return 2;
		}
		if (rc) {
			fprintf(stderr, "krpoold: --%s\n", err);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "krpoold: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (kr_keeper_cfg_check(&cfg, err, sizeof(err))) {
		fprintf(stderr, "krpoold: --%s\n", err);
		return 2;
	}
	if (cfg.verbose)
		setenv("KR_LOG", "info", 0);
	if (!cfg.foreground) {
		rc = daemonise(&cfg);
		if (rc) {
			fprintf(stderr, "krpoold: cannot daemonise: %s\n", strerror(-rc));
			return 1;
		}
	}
	rc = kr_keeper_run(&cfg);
	if (rc == -EADDRINUSE)
		return 3;
	return rc ? 1 : 0;
}
