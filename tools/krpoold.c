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

#define KEYS_MAX   64
#define KEY_OPT(i) (256 + (int)(i)) /* getopt's val of key i: above every letter */

/* getopt's tables, from the keys' (keeper_config_keys.c). */
static struct option long_opts[KEYS_MAX + 1];
static char short_opts[2 * KEYS_MAX + 1];

static void opts_build(void)
{
	size_t n = 0, s = 0;

	for (size_t i = 0; i < kr_keeper_cfg_nkeys && n < KEYS_MAX; i++) {
		const struct kr_keeper_cfg_key *k = &kr_keeper_cfg_keys[i];

		if (k->file_only)
			continue;
		long_opts[n++] = (struct option){
		    .name = k->name,
		    .has_arg = k->arg ? required_argument : no_argument,
		    .val = KEY_OPT(i),
		};
		if (k->letter) {
			short_opts[s++] = k->letter;
			if (k->arg)
				short_opts[s++] = ':';
		}
	}
}

/* The key getopt returned (its letter or KEY_OPT), NULL for anything else. */
static const struct kr_keeper_cfg_key *opt_key(int opt)
{
	if (opt >= KEY_OPT(0))
		return &kr_keeper_cfg_keys[opt - KEY_OPT(0)];
	for (size_t i = 0; i < kr_keeper_cfg_nkeys; i++)
		if (opt > 0 && kr_keeper_cfg_keys[i].letter == opt)
			return &kr_keeper_cfg_keys[i];
	return NULL;
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
	const struct kr_keeper_cfg_key *key;
	char err[256];
	int opt, rc;

	kr_keeper_cfg_default(&cfg);
	opts_build();
	/* the file first, so flags override it */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		key = opt_key(opt);
		if (key && !strcmp(key->name, "config") &&
		    kr_keeper_cfg_load(&cfg, optarg, err, sizeof(err))) {
			fprintf(stderr, "krpoold: %s\n", err);
			return 2;
		}
	}
	optind = 1;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		key = opt_key(opt);
		if (!key) {
			kr_keeper_cfg_usage(stderr);
			return 2;
		}
		if (!strcmp(key->name, "help")) {
			kr_keeper_cfg_usage(stdout);
			return 0;
		}
		if (key->cli_only) /* --config: read above */
			continue;
		/* a switch given is true */
		rc = kr_keeper_cfg_set(&cfg, key->name, key->arg ? optarg : "true", err, sizeof(err));
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
