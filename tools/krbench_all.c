/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench all [-n ITERS] [--json] [FILE]: every benchmark, each in its own
 * process (one attachment per process, and a failing bench does not take
 * the others down), their JSON objects gathered into one document
 * {"bench": "all", "runs": [...]} written to FILE (or stdout with --json),
 * a line per run on stdout. scripts/plot.py draws the figures from FILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "krbench.h"

#define KB_ALL_OUT (1u << 20) /* largest JSON a run may print */

/* The runs, in order; -n ITERS and --krpoold are appended when given. */
static const char *const kb_runs[][8] = {
    {"attach", NULL},
    {"read", NULL},
    {"send", NULL},
    {"connect", NULL},
    {"connect", "--profile", "connectx4", NULL},
    {"read", "--peer", "--promote", NULL},
    {"connect", "--nodes", "2", "--profile", "connectx4", NULL},
    {"connect", "--nodes", "4", NULL},
    {"fanout", NULL},
    {"attach", "--busy", "100", NULL},
    {"elastic", NULL},
};

#define KB_NRUNS (int)(sizeof(kb_runs) / sizeof(kb_runs[0]))

/* Run this binary with args + --json; its stdout into out. Exit status or -errno. */
static int run_one(const char *const *args, const char *iters, const char *krpoold, char *out,
		   size_t cap)
{
	const char *argv[16];
	int p[2], a = 0, status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	argv[a++] = "krbench";
	for (int i = 0; args[i]; i++)
		argv[a++] = args[i];
	argv[a++] = "--json";
	if (iters) {
		argv[a++] = "-n";
		argv[a++] = iters;
	}
	if (krpoold) {
		argv[a++] = "--krpoold";
		argv[a++] = krpoold;
	}
	argv[a] = NULL;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		execv("/proc/self/exe", (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && (n = read(p[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	out[len] = '\0';
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -ECHILD;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int kb_bench_all(const char *file, const char *iters, bool json, const char *krpoold)
{
	char *out = malloc(KB_ALL_OUT);
	FILE *f = file ? fopen(file, "w") : stdout;
	int failed = 0, skipped = 0, done = 0;

	if (!out || !f) {
		fprintf(stderr, "krbench all: %s: %s\n", file ? file : "output", strerror(errno));
		free(out);
		return 1;
	}
	fprintf(f, "{\"bench\": \"all\", \"runs\": [");
	for (int r = 0; r < KB_NRUNS; r++) {
		double t0 = kb_now_us();
		int rc = run_one(kb_runs[r], iters, krpoold, out, KB_ALL_OUT);
		char *nl = strchr(out, '\n');
		char name[96] = "";

		for (int i = 0; kb_runs[r][i]; i++)
			snprintf(name + strlen(name), sizeof(name) - strlen(name), "%s%s",
				 i ? " " : "", kb_runs[r][i]);
		if (nl)
			*nl = '\0';
		if (rc == 0 && out[0] == '{') {
			fprintf(f, "%s%s", done++ ? ", " : "", out);
		} else {
			failed += rc != 77;
			skipped += rc == 77;
		}
		if (!json || file)
			printf("%-44s %s (%.1f s)\n", name,
			       rc == 0 && out[0] == '{' ? "ok"
			       : rc == 77		? "skipped: the machine lacks something"
							: "FAILED",
			       (kb_now_us() - t0) / 1e6);
	}
	fprintf(f, "]}\n");
	if (file && fclose(f)) {
		fprintf(stderr, "krbench all: %s: %s\n", file, strerror(errno));
		failed++;
	}
	free(out);
	if (!json || file)
		printf("krbench all: %d runs, %d failed, %d skipped%s%s\n", KB_NRUNS, failed,
		       skipped, file ? "; JSON in " : "", file ? file : "");
	return failed ? 1 : skipped ? 77 : 0;
}
