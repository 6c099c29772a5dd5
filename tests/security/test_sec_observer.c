/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_observer: an observer gets status and nothing else.
 *   - a keeper's socket is mode 0660 in the keeper's group: uid 65534 cannot
 *     even connect (EACCES); with --group 65534 it can;
 *   - the observer attach reply carries no descriptor and no region; the
 *     segment comes as a copy (KR_MSG_STATUS), bounded: an offset or length
 *     outside the segment is refused with -EINVAL and the connection goes on;
 *   - a job's connection gets -EPERM for KR_MSG_STATUS (it maps the segment);
 *   - an observer that lingers is closed after KR_POOL_HELLO_MS;
 *   - krctl run as uid 65534 still prints the status.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"

static struct kp_keeper K;

static int connect_fails(void *arg)
{
	int fd = kr_msg_connect((const char *)arg);

	if (fd >= 0) {
		fprintf(stderr, "uid %u connected to a 0660 root socket\n", SEC_UID);
		return 1;
	}
	return fd == -EACCES ? 0 : 2;
}

static int status_call(int fd, uint32_t seq, uint64_t off, uint32_t len,
		       struct kr_msg_status_reply *rep)
{
	struct kr_msg_status req = {.off = off, .len = len};
	int rc;

	kr_msg_init(&req.hdr, KR_MSG_STATUS, sizeof(req), seq);
	rc = kr_msg_call(fd, &req, sizeof(req), rep, sizeof(*rep), NULL, 0, NULL);
	return rc ? rc : rep->status;
}

/* As uid 65534: observe by hand and poke at the bounds. */
static int observer(void *arg)
{
	struct kr_msg_attach req = {.flags = KR_ATTACH_F_OBSERVE};
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	struct kr_msg_status_reply *st = calloc(1, sizeof(*st));
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 99;
	uint64_t size;
	char c;
	int fd;

	(void)arg;
	SEC_EXPECT(rep && st);
	fd = kr_msg_connect(K.sock);
	SEC_EXPECT(fd >= 0);
	kr_msg_init(&req.hdr, KR_MSG_ATTACH, sizeof(req), 1);
	SEC_EXPECT(kr_msg_call(fd, &req, sizeof(req), rep, sizeof(*rep), fds,
			       KR_ATTACH_MAX_REGIONS + 1, &nfds) == 0);
	SEC_EXPECT(rep->status == 0);
	SEC_EXPECT(nfds == 0 && rep->nfds == 0 && rep->nregions == 0); /* no descriptor at all */
	size = rep->seg_len;
	SEC_EXPECT(size >= sizeof(struct kr_pool_seg));

	SEC_EXPECT(status_call(fd, 2, 0, 64, st) == 0);
	SEC_EXPECT(st->len == 64 && st->seg_len == size);
	SEC_EXPECT(((const struct kr_pool_seg *)st->data)->magic != 0);
	/* bounds: past the end, straddling it, empty, too long */
	SEC_EXPECT(status_call(fd, 3, size, 1, st) == -EINVAL);
	SEC_EXPECT(status_call(fd, 4, size - 8, 16, st) == -EINVAL);
	SEC_EXPECT(status_call(fd, 5, 0, 0, st) == -EINVAL);
	SEC_EXPECT(status_call(fd, 6, 0, KR_STATUS_CHUNK + 1, st) == -EINVAL);
	SEC_EXPECT(status_call(fd, 7, UINT64_MAX - 4, 8, st) == -EINVAL);
	SEC_EXPECT(status_call(fd, 8, size - 8, 8, st) == 0); /* the connection goes on */

	/* a lingering observer is closed: EOF well after KR_POOL_HELLO_MS */
	for (double t0 = kp_now_ms();;) {
		struct timeval tv = {.tv_sec = 1};
		ssize_t n;

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = recv(fd, &c, 1, 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
		SEC_EXPECT(kp_now_ms() - t0 < 10.0 * KR_POOL_HELLO_MS);
	}
	close(fd);
	free(rep);
	free(st);
	return 0;
}

/* As uid 65534: krctl works from the copy. */
static int krctl_status(void *arg)
{
	const char *argv[] = {kp_tool("KRCTL"), "--socket", K.sock, "status", NULL};
	char *out = arg;

	return kp_run(argv, out, 4096, 10);
}

/* A job asking for the copy: refused, it maps the segment already. */
static void job_status_refused(void)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	struct kr_msg_status_reply *st = calloc(1, sizeof(*st));

	CHECK(ctx && st);
	CHECK_EQ(status_call(ctx->sock, 1000, 0, 64, st), -EPERM);
	CHECK_OK(kr_detach(ctx));
	free(st);
}

int main(void)
{
	static const char *const base[] = {"--tenants", "1", "--dcis",	    "2",  "--jobs", "1",
					   "--heap-mb", "2", "--hugepages", "32", NULL};
	static const char *const grp[] = {"--tenants", "1", "--dcis",	   "2",	 "--jobs",  "1",
					  "--heap-mb", "2", "--hugepages", "32", "--group", "65534",
					  NULL};
	struct stat st;
	char *out = calloc(1, 4096);

	sec_require_root();
	kp_require_hugepages(16);
	CHECK(out != NULL);

	/* default: the keeper's group only */
	kp_keeper_init(&K);
	CHECK_OK(kp_keeper_start(&K, base));
	CHECK_OK(lstat(K.sock, &st));
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0660);
	CHECK_EQ(st.st_gid, getegid());
	CHECK_OK(chmod(K.dir, 0755)); /* the directory is not what stops it */
	CHECK_EQ(sec_as_nobody(connect_fails, K.sock), 0);
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);

	/* --group 65534: nobody may connect, and observes without any descriptor */
	kp_keeper_init(&K);
	CHECK_OK(chmod(K.dir, 0755));
	CHECK_OK(kp_keeper_start(&K, grp));
	CHECK_OK(lstat(K.sock, &st));
	CHECK_EQ(st.st_gid, SEC_GID);
	CHECK_EQ(st.st_mode & 07777, 0660);
	CHECK_EQ(sec_as_nobody(observer, NULL), 0);
	CHECK_EQ(sec_as_nobody(krctl_status, out), 0);
	job_status_refused();
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	free(out);
	KR_PASS("sec_observer");
}
