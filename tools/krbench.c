/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench: perftest-style benchmarks.
 *   krbench attach [-n CYCLES] [--json] [--socket PATH] [--krpoold PATH]
 * times kr_attach() and kr_detach() over CYCLES attach/detach cycles. Without
 * --socket it starts a keeper on the sim in a temporary directory (krpoold
 * next to this binary, or --krpoold) and stops it at the end.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "pool.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *sorted, int n, double p)
{
	int i = (int)(p / 100.0 * (n - 1) + 0.5);

	return sorted[i < n ? i : n - 1];
}

struct keeper {
	pid_t pid;
	char dir[64];
	char sock[128];
};

static int keeper_start(struct keeper *k, const char *krpoold)
{
	char self[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n;

	if (!krpoold) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return -errno;
		self[n] = '\0';
		*strrchr(self, '/') = '\0';
		snprintf(path, sizeof(path), "%s/krpoold", self);
		krpoold = path;
	}
	snprintf(k->dir, sizeof(k->dir), "/tmp/krbench.XXXXXX");
	if (!mkdtemp(k->dir))
		return -errno;
	snprintf(k->sock, sizeof(k->sock), "%s/krpoold.sock", k->dir);
	k->pid = fork();
	if (k->pid < 0)
		return -errno;
	if (k->pid == 0) {
		execl(krpoold, krpoold, "--foreground", "--socket", k->sock, "--device",
		      "sim:krbench", "--tenants", "1", "--dcis", "4", "--jobs", "4", "--heap-mb",
		      "2", "--hugepages", "64", (char *)NULL);
		fprintf(stderr, "krbench: cannot run %s: %s\n", krpoold, strerror(errno));
		_exit(127);
	}
	for (double t0 = now_us(); now_us() - t0 < 20e6;) {
		int status, fd;

		if (waitpid(k->pid, &status, WNOHANG) == k->pid) {
			k->pid = 0;
			return -ECHILD;
		}
		fd = kr_msg_connect(k->sock);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

static void keeper_stop(struct keeper *k)
{
	char lock[160];

	if (k->pid > 0) {
		kill(k->pid, SIGTERM);
		waitpid(k->pid, NULL, 0);
	}
	snprintf(lock, sizeof(lock), "%s.lock", k->sock);
	unlink(lock);
	unlink(k->sock);
	rmdir(k->dir);
}

static int bench_attach(int cycles, bool json, const char *sock, const char *krpoold)
{
	struct keeper k = {0};
	struct kr_attach_opts o;
	double *ta, *td;
	int busy = 0, rc = 0;

	ta = calloc((size_t)cycles, sizeof(*ta));
	td = calloc((size_t)cycles, sizeof(*td));
	if (!ta || !td)
		return 1;
	if (!sock) {
		rc = keeper_start(&k, krpoold);
		if (rc) {
			fprintf(stderr, "krbench: cannot start a keeper: %s\n", strerror(-rc));
			keeper_stop(&k);
			return 1;
		}
		sock = k.sock;
	}
	o = (struct kr_attach_opts){.socket_path = sock};
	for (int i = 0; i < cycles;) {
		struct kr_ctx *ctx;
		double t0 = now_us(), t1, t2;

		ctx = kr_attach(&o);
		t1 = now_us();
		if (!ctx) {
			if (errno == ENOSPC && busy++ < 100000)
				continue; /* every job slot still being scrubbed: not timed */
			fprintf(stderr, "krbench: attach %d: %s\n", i, strerror(errno));
			rc = 1;
			break;
		}
		if (kr_detach(ctx)) {
			fprintf(stderr, "krbench: detach %d failed\n", i);
			rc = 1;
			break;
		}
		t2 = now_us();
		ta[i] = t1 - t0;
		td[i] = t2 - t1;
		i++;
	}
	if (!rc) {
		qsort(ta, (size_t)cycles, sizeof(*ta), cmp_double);
		qsort(td, (size_t)cycles, sizeof(*td), cmp_double);
		if (json)
			printf("{\"bench\": \"attach\", \"cycles\": %d, \"p50_us\": %.1f, "
			       "\"p99_us\": %.1f, \"min_us\": %.1f, \"max_us\": %.1f, "
			       "\"detach_p50_us\": %.1f, \"detach_p99_us\": %.1f, "
			       "\"busy_retries\": %d}\n",
			       cycles, pct(ta, cycles, 50), pct(ta, cycles, 99), ta[0],
			       ta[cycles - 1], pct(td, cycles, 50), pct(td, cycles, 99), busy);
		else
			printf("attach over %d cycles: p50 %.1f us, p99 %.1f us, min %.1f us, max "
			       "%.1f us; detach p50 %.1f us, p99 %.1f us\n",
			       cycles, pct(ta, cycles, 50), pct(ta, cycles, 99), ta[0],
			       ta[cycles - 1], pct(td, cycles, 50), pct(td, cycles, 99));
	}
	if (k.dir[0])
		keeper_stop(&k);
	free(ta);
	free(td);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: krbench attach [-n CYCLES] [--json] [--socket PATH] [--krpoold PATH]\n"
		   "  -n, --cycles N    attach/detach cycles (default 1000)\n"
		   "  -j, --json        one JSON object (p50_us, p99_us, ...)\n"
		   "  -s, --socket PATH an existing keeper (default: start one on the sim)\n"
		   "      --krpoold P   the keeper binary to start (default: next to krbench)\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cycles", required_argument, NULL, 'n'}, {"json", no_argument, NULL, 'j'},
	    {"socket", required_argument, NULL, 's'}, {"krpoold", required_argument, NULL, 'k'},
	    {"help", no_argument, NULL, 'h'},	      {NULL, 0, NULL, 0},
	};
	const char *sock = NULL, *krpoold = NULL;
	int cycles = 1000, opt;
	bool json = false;

	while ((opt = getopt_long(argc, argv, "n:js:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			cycles = atoi(optarg);
			break;
		case 'j':
			json = true;
			break;
		case 's':
			sock = optarg;
			break;
		case 'k':
			krpoold = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || strcmp(argv[optind], "attach") || cycles < 1 ||
	    cycles > 1000000) {
		usage(stderr);
		return 2;
	}
	return bench_attach(cycles, json, sock, krpoold);
}
