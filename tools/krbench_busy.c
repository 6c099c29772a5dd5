/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench attach --busy N: keep about N DCIs of the keeper resetting while
 * attaches are timed. Churn jobs (up to KB_CHURN_DCIS DCIs each: a process
 * holds at most 64) lease every DCI they can and give them all back, over
 * and over: each one given back is reset by the keeper's worker (QUERY_QP,
 * 2RST, QUERY_CQ, RST->INIT->RTR->RTS; ~7 ms of firmware under the
 * connectx4 cost model) before anyone gets it again. An attach must not
 * wait for that: krbench attach prints its p99 idle and busy, and the ratio.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "krbench.h"
#include "job/job.h"
#include "keeper/keeper.h"

#define KB_CHURN_DCIS 50

static volatile sig_atomic_t churn_stop;

static void churn_on_term(int sig)
{
	(void)sig;
	churn_stop = 1;
}

/* One churn job: lease up to n DCIs, give them all back, again; one byte on ready after round 1. */
static int churn(const char *sock, int n, int ready)
{
	struct kr_attach_opts o = {.socket_path = sock};
	struct kr_lease l[KB_CHURN_DCIS];
	struct kr_ctx *ctx = kr_attach(&o);
	bool told = false;

	signal(SIGTERM, churn_on_term);
	/* ENOSPC: a job slot or heap is still being made ready */
	for (double t0 = kb_now_us(); !ctx && errno == ENOSPC && kb_now_us() - t0 < 10e6;) {
		usleep(1000);
		ctx = kr_attach(&o);
	}
	if (!ctx)
		return 2;
	while (!churn_stop) {
		int got = 0;

		while (got < n && !churn_stop) {
			int rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &l[got]);

			if (rc == -ENOSPC) /* the rest are being reset: give ours back first */
				break;
			if (rc)
				return 3;
			got++;
		}
		for (int i = 0; i < got; i++)
			if (kr_lease_free(ctx, &l[i]))
				return 4;
		if (!told) {
			told = write(ready, "r", 1) == 1;
			close(ready);
		}
		if (!got)
			usleep(200);
	}
	kr_detach(ctx);
	return 0;
}

/* kb_churn_start() - see krbench.h. */
int kb_churn_start(struct kb_churn *c, const char *sock, int ndci)
{
	memset(c, 0, sizeof(*c));
	for (int left = ndci; left > 0 && c->n < KB_CHURN_MAX; left -= KB_CHURN_DCIS) {
		int p[2];
		char b;

		if (pipe(p))
			return -errno;
		c->pid[c->n] = fork();
		if (c->pid[c->n] < 0) {
			close(p[0]);
			close(p[1]);
			return -errno;
		}
		if (c->pid[c->n] == 0) {
			close(p[0]);
			_exit(churn(sock, left < KB_CHURN_DCIS ? left : KB_CHURN_DCIS, p[1]));
		}
		close(p[1]);
		c->n++;
		/* its first round is under way before the timing starts */
		if (read(p[0], &b, 1) != 1) {
			close(p[0]);
			return -EIO;
		}
		close(p[0]);
	}
	return 0;
}

/* kb_churn_stop() - see krbench.h. */
int kb_churn_stop(struct kb_churn *c)
{
	int rc = 0;

	for (int i = 0; i < c->n; i++)
		kill(c->pid[i], SIGTERM);
	for (int i = 0; i < c->n; i++) {
		int st;

		if (waitpid(c->pid[i], &st, 0) != c->pid[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			rc = -EIO;
	}
	c->n = 0;
	return rc;
}
