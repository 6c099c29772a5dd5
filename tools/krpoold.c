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

#define KEYS_MAX 64

/*
 * getopt's table from the keys' (keeper_config_keys.c): val is the short
 * letter, else 1 for a key with a value, 2 for a switch.
 */
static struct option long_opts[KEYS_MAX + 1];

static void opts_build(void)
{
	size_t n = 0;

	for (size_t i = 0; i < kr_keeper_cfg_nkeys && n < KEYS_MAX; i++) {
		const struct kr_keeper_cfg_key *k = &kr_keeper_cfg_keys[i];

		if (k->file_only)
			continue;
		long_opts[n++] = (struct option){
		    .name = k->name,
		    .has_arg = k->arg ? required_argument : no_argument,
		    .val = k->letter ? k->letter : k->arg ? 1 : 2,
		};
	}
}

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
	opts_build();
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
			kr_keeper_cfg_usage(stdout);
			return 0;
		case 1:
			rc = kr_keeper_cfg_set(&cfg, long_opts[idx].name, optarg, err, sizeof(err));
			break;
		case 2: /* switches: --trusted, --metaserver, ... */
			rc = kr_keeper_cfg_set(&cfg, long_opts[idx].name, "true", err, sizeof(err));
			break;
		default:
			kr_keeper_cfg_usage(stderr);
			return 2;
		}
		if (rc) {
			fprintf(stderr, "krpoold: --%s\n", err);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "krpoold: unexpected argument '%s'\n", argv[optind]);
		kr_keeper_cfg_usage(stderr);
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
