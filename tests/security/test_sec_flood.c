/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_flood: one uid cannot lock the others out. uid 65534 opens 5,000
 * connections to a keeper and holds them; the keeper accepts only its
 * tenant's job slots plus 16 and refuses the rest at once with EUSERS (a
 * reply that says so, then close; kr_attach returns EUSERS). Meanwhile root attaches and detaches
 * 200 times: every attach must succeed within a 1 s deadline (the p99 is printed, not asserted).
 * The keeper's log stays short (rate-limited), and once the flood is gone, connections left
 * unattached are closed.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"

#define FLOOD	 5000
#define ATTACHES 200

static struct kp_keeper K;

struct flood {
	int ready[2]; /* the flooder says how many it holds */
	int go[2];    /* the parent says when to let go */
};

/* As uid 65534: connect FLOOD times; count those the keeper refused. */
static int flooder(void *arg)
{
	struct flood *f = arg;
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	static int fds[FLOOD];
	struct kr_attach_opts o = {.socket_path = K.sock};
	int held = 0, refused = 0, other = 0, counts[3];
	char c;

	if (!rep)
		return 1;
	for (int i = 0; i < FLOOD; i++) {
		fds[i] = kr_msg_connect(K.sock);
		if (fds[i] < 0)
			other++;
	}
	/* a refused connection has the keeper's reply waiting, then EOF */
	usleep(200000);
	for (int i = 0; i < FLOOD; i++) {
		struct pollfd p = {.fd = fds[i], .events = POLLIN};
		ssize_t n;

		if (fds[i] < 0)
			continue;
		if (poll(&p, 1, 0) == 1) {
			n = kr_msg_recv(fds[i], rep, sizeof(*rep), NULL, 0, NULL);
			if (n == (ssize_t)sizeof(*rep) && rep->status == -EUSERS && !rep->hdr.seq)
				refused++;
			else
				other++;
			close(fds[i]);
			fds[i] = -1;
		} else {
			held++;
		}
	}
	counts[0] = held;
	counts[1] = refused + 1000000 * other;
	/* through the API: the reason, not a broken pipe */
	counts[2] = kr_attach(&o) ? 0 : errno;
	if (write(f->ready[1], counts, sizeof(counts)) != sizeof(counts))
		return 1;
	if (read(f->go[0], &c, 1) != 1)
		return 1;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "2",		"--dcis", "2",	     "--jobs", "2", "--heap-mb",
	    "2",	 "--hugepages", "32",	  "--group", "65534",  NULL};
	struct rlimit rl = {.rlim_cur = FLOOD + 64, .rlim_max = FLOOD + 64};
	struct flood f;
	double lat[ATTACHES];
	int counts[3], status;
	char log[4096];
	pid_t pid;

	sec_require_root();
	kp_require_hugepages(16);
	CHECK_OK(setrlimit(RLIMIT_NOFILE, &rl)); /* as root; the flooder inherits it */
	kp_keeper_init(&K);
	CHECK_OK(chmod(K.dir, 0755));
	CHECK_OK(kp_keeper_start(&K, args));

	CHECK_OK(pipe(f.ready));
	CHECK_OK(pipe(f.go));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		sec_drop();
		_exit(flooder(&f));
	}
	CHECK_EQ(read(f.ready[0], counts, sizeof(counts)), (ssize_t)sizeof(counts));
	printf("flood of %d connections from uid %u: %d held, %d refused with EUSERS, %d other\n",
	       FLOOD, SEC_UID, counts[0], counts[1] % 1000000, counts[1] / 1000000);
	CHECK_EQ(counts[0], 2 + (int)KR_POOL_UID_CONNS_EXTRA); /* --jobs 2 + the margin */
	CHECK_EQ(counts[1], FLOOD - counts[0]);
	CHECK_EQ(counts[2], EUSERS); /* kr_attach over the limit */

	/* root attaches while the flood holds its connections */
	for (int i = 0; i < ATTACHES; i++) {
		double t0 = kp_now_ms();
		struct kr_ctx *ctx = kp_attach(&K, 1000);

		if (!ctx)
			KR_FAIL("attach %d during the flood: %s", i, strerror(errno));
		lat[i] = kp_now_ms() - t0;
		CHECK(lat[i] < 1000.0);
		CHECK_OK(kr_detach(ctx));
	}
	qsort(lat, ATTACHES, sizeof(lat[0]), cmp_double);
	printf("root attach during the flood: p50 %.3f ms, p99 %.3f ms\n", lat[ATTACHES / 2],
	       lat[ATTACHES * 99 / 100]);

	/* the flooder's held connections never attached: closed after KR_POOL_HELLO_MS */
	CHECK_EQ(write(f.go[1], "g", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* rate-limited: a handful of lines, not thousands */
	{
		FILE *lf = fopen(K.log, "r");
		int lines = 0;

		CHECK(lf != NULL);
		while (fgets(log, sizeof(log), lf))
			lines++;
		fclose(lf);
		printf("keeper log: %d lines\n", lines);
		CHECK(lines < 200);
	}
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_flood");
}
