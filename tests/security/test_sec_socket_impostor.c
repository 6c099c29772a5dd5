/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_socket_impostor: a user who answers on the keeper's socket path gets
 * no attach, and no launch key (issue: another user on the node...; item 6).
 *
 *   1. uid 65534 listens on a socket path and records every byte it is
 *      sent; a root job attaching there fails with EPERM and the impostor
 *      received nothing. Positive control: the same job naming 65534 as its
 *      keeper's uid (kr_attach_opts.keeper_uid, and $KR_KEEPER_UID) does
 *      send its attach there (the check is the uid, not the path), and
 *      attaches to the real keeper as before.
 *   2. The keeper refuses a socket directory another uid can write, sticky
 *      or not (where uid 65534 planted the lock file first), with a message;
 *      it starts in one only root writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"

static struct kp_keeper K;
static char impostor_path[100]; /* a sockaddr_un path */
static int report_fd; /* the impostor writes what it received here: one line per connection */

/* As uid 65534: listen on impostor_path, accept until killed, report bytes received. */
static int impostor(void *arg)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int ls;

	(void)arg;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", impostor_path);
	ls = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	SEC_EXPECT(ls >= 0);
	umask(0);
	SEC_EXPECT(bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	SEC_EXPECT(listen(ls, 8) == 0);
	SEC_EXPECT(write(report_fd, "L", 1) == 1); /* listening */
	for (;;) {
		int c = accept(ls, NULL, NULL);
		struct pollfd p = {.fd = c, .events = POLLIN};
		char buf[4096], line[32];
		ssize_t n = 0;

		if (c < 0)
			continue;
		if (poll(&p, 1, 2000) == 1)
			n = recv(c, buf, sizeof(buf), MSG_DONTWAIT);
		snprintf(line, sizeof(line), "%zd\n", n > 0 ? n : 0);
		SEC_EXPECT(write(report_fd, line, strlen(line)) > 0);
		close(c);
	}
}

/* What the impostor reports for the next connection: bytes received. */
static long impostor_got(int rfd)
{
	char line[32];
	size_t n = 0;

	while (n < sizeof(line) - 1 && read(rfd, &line[n], 1) == 1 && line[n] != '\n')
		n++;
	line[n] = '\0';
	return n ? atol(line) : -1;
}

static void job_side(int rfd)
{
	struct kr_attach_opts o = {.socket_path = impostor_path};
	struct kr_ctx *ctx;

	/* 1. not root, not ours: refused before a byte goes out */
	errno = 0;
	CHECK(kr_attach(&o) == NULL);
	CHECK_EQ(errno, EPERM);
	/* the check happens before sending: the impostor had a connection and no byte */
	CHECK_EQ(impostor_got(rfd), 0);

	/* positive control: the same job trusting uid 65534 sends its attach there */
	o.keeper_uid = SEC_UID;
	CHECK(kr_attach(&o) == NULL); /* the impostor answers nothing */
	CHECK(impostor_got(rfd) > 0);
	o.keeper_uid = 0;
	CHECK_OK(setenv("KR_KEEPER_UID", "65534", 1));
	CHECK(kr_attach(&o) == NULL);
	CHECK(impostor_got(rfd) > 0);
	CHECK_OK(setenv("KR_KEEPER_UID", "nobody", 1));
	CHECK(kr_attach(&o) == NULL);
	CHECK_EQ(errno, EINVAL);
	CHECK_OK(unsetenv("KR_KEEPER_UID"));

	/* and the real keeper (root) still takes it */
	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	CHECK_OK(kr_detach(ctx));
}

/* As uid 65534: plant <sock>.lock in the shared directory before the keeper starts. */
static int plant_lock(void *arg)
{
	char lock[120];
	int fd;

	snprintf(lock, sizeof(lock), "%s.lock", (const char *)arg);
	fd = open(lock, O_CREAT | O_RDWR, 0666);
	SEC_EXPECT(fd >= 0);
	close(fd);
	return 0;
}

static void keeper_dir(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "2",  "--jobs", "1",
					   "--heap-mb", "2", "--hugepages", "32", NULL};
	char dir[80], sock[100], lock[120];
	struct kp_keeper k;

	kp_keeper_init(&k);
	CHECK(strlen(k.dir) < sizeof(dir) - 8);
	snprintf(dir, sizeof(dir), "%s/shared", k.dir);
	CHECK_OK(mkdir(dir, 0755));
	CHECK_OK(chmod(dir, 01777)); /* like /tmp */
	CHECK_OK(chmod(k.dir, 0755));
	snprintf(sock, sizeof(sock), "%s/krpoold.sock", dir);
	CHECK_EQ(sec_as_nobody(plant_lock, sock), 0);
	CHECK(strlen(sock) < sizeof(k.sock));
	memcpy(k.sock, sock, strlen(sock) + 1);
	CHECK(kp_keeper_start(&k, args) > 0);
	CHECK(kp_log_has(&k, "writable by other users"));
	/* positive control: a directory only root writes */
	CHECK_OK(chmod(dir, 0755));
	snprintf(lock, sizeof(lock), "%s.lock", sock);
	unlink(lock); /* 65534's: a keeper refuses a lock file not its own */
	CHECK_OK(kp_keeper_start(&k, args));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	rmdir(dir);
	kp_keeper_fini(&k);
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "2",		"--dcis", "2",	     "--jobs", "2", "--heap-mb",
	    "2",	 "--hugepages", "32",	  "--group", "65534",  NULL};
	char dir[80], c;
	int p[2];
	pid_t imp;

	sec_keeper_start(&K, args);
	CHECK(strlen(K.dir) < sizeof(dir) - 4);
	snprintf(dir, sizeof(dir), "%s/imp", K.dir);
	CHECK_OK(mkdir(dir, 0755));
	CHECK_OK(chown(dir, SEC_UID, SEC_GID));
	snprintf(impostor_path, sizeof(impostor_path), "%s/krpoold.sock", dir);
	CHECK_OK(pipe(p));
	report_fd = p[1];
	imp = sec_spawn_nobody(impostor, NULL);
	close(p[1]);
	CHECK_EQ(read(p[0], &c, 1), 1);
	CHECK_EQ(c, 'L');
	job_side(p[0]);
	kill(imp, SIGKILL);
	sec_wait(imp);
	close(p[0]);
	unlink(impostor_path);
	rmdir(dir);

	keeper_dir();
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_socket_impostor");
}
