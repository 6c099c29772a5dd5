/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Jobs of the guest tests that run against a fenced keeper
 * (test_krmin_ports, test_krmin_rc): the test program exec's itself as
 * "job NAME IN OUT SOCKET", a fresh process that attaches and runs the
 * named function, talking to the test over two pipes; a job that writes
 * where another's pages are checks the kernel's verdict (SIGSEGV).
 */
#ifndef KT_JOBS_H
#define KT_JOBS_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "krmin_test.h"
#include "pool_fixture.h"

struct kt_job_fn {
	const char *name;
	int (*fn)(struct kr_ctx *ctx, int in, int out);
};

struct kt_job {
	pid_t pid;
	int to, from;
};

static inline int kt_put(int fd, const void *v, size_t n)
{
	return write(fd, v, n) == (ssize_t)n ? 0 : -EIO;
}

static inline int kt_get(int fd, void *v, size_t n)
{
	return read(fd, v, n) == (ssize_t)n ? 0 : -EIO;
}

/* In the exec'd job: attach to argv[5], run argv[2] of fns. Its exit status. */
static inline int kt_job_main(char **argv, const struct kt_job_fn *fns, size_t n)
{
	int in = atoi(argv[3]), out = atoi(argv[4]);
	/* a job that just left (or was killed) holds its slot and heap until the
	 * keeper's worker emptied them: slow under qemu, so ask again a while */
	struct kr_ctx *ctx = kp_attach_sock(argv[5], 30000);
	int rc = 90;

	if (!ctx) {
		fprintf(stderr, "%s: attach: %s\n", argv[2], strerror(errno));
		return 92;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[2], fns[i].name))
			rc = fns[i].fn(ctx, in, out);
	kr_detach(ctx);
	return rc;
}

/* This program again, as job name of the keeper at sock. */
static inline struct kt_job kt_spawn(const char *prog, const char *name, const char *sock)
{
	int a[2], b[2];
	struct kt_job j;

	CHECK_OK(pipe(a));
	CHECK_OK(pipe(b));
	j.pid = fork();
	CHECK(j.pid >= 0);
	if (j.pid == 0) {
		char i[16], o[16];

		close(a[1]);
		close(b[0]);
		snprintf(i, sizeof(i), "%d", a[0]);
		snprintf(o, sizeof(o), "%d", b[1]);
		execl("/proc/self/exe", prog, "job", name, i, o, sock, (char *)NULL);
		_exit(91);
	}
	close(a[0]);
	close(b[1]);
	j.to = a[1];
	j.from = b[0];
	return j;
}

static inline int kt_wait_status(pid_t pid)
{
	int st;

	CHECK_EQ(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* In a job: write at addr, which must not be ours (the caller expects SIGSEGV). Returns if not. */
static inline void kt_poke(uint64_t addr)
{
	signal(SIGSEGV, SIG_DFL); /* the kernel's verdict, not ASan's report */
	*(volatile uint8_t *)(uintptr_t)addr = 0xff;
}

static struct kp_keeper *kt_keeper;

/* At exit (a failed CHECK too): the keeper goes with the test. */
static inline void kt_keeper_reap(void)
{
	if (kt_keeper && kt_keeper->pid > 0)
		kp_keeper_stop(kt_keeper, SIGKILL);
}

/*
 * The test's keeper, with args (--require-kmod among them), stopped at exit
 * whatever happens; skips outside the guest.
 */
static inline void kt_keeper_up(struct kp_keeper *k, const char *const *args)
{
	if (geteuid() != 0)
		KR_SKIP("needs root (the module's keeper)");
	if (access("/dev/" KRMIN_DEV_NAME, F_OK))
		KR_SKIP("no /dev/%s: runs in the kmod suite's qemu guest", KRMIN_DEV_NAME);
	kp_require_hugepages(16);
	kp_keeper_init(k);
	CHECK_OK(kp_keeper_start(k, args));
	kt_keeper = k;
	atexit(kt_keeper_reap);
}

/* Wait (bounded) until the module's owned slots are back to want. */
static inline long kt_owned_settles(long want)
{
	long v = kt_stat("owned");

	for (double t0 = kp_now_ms(); v != want && kp_now_ms() - t0 < 5000; v = kt_stat("owned"))
		usleep(10000);
	return v;
}

#endif
