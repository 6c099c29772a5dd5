/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_paths: the keeper's files cannot be turned against it. It refuses to
 * start, with a message, and touches nothing, when:
 *   - <socket>.lock is a symlink (to a file it would have truncated);
 *   - something other than a socket sits at the socket path;
 *   - the socket directory is a symlink, or writable by other users (by
 *     all, sticky or not, or by its group);
 * and starts in a directory only its owner writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"

static const char *const args[] = {"--tenants", "1", "--dcis",	    "2",  "--jobs", "1",
				   "--heap-mb", "2", "--hugepages", "32", NULL};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	CHECK(fputs(text, f) >= 0);
	CHECK_OK(fclose(f));
}

static void expect_file(const char *path, const char *text)
{
	char buf[64] = {0};
	FILE *f = fopen(path, "r");

	CHECK(f != NULL);
	CHECK(fread(buf, 1, sizeof(buf) - 1, f) == strlen(text));
	CHECK_OK(fclose(f));
	CHECK(strcmp(buf, text) == 0);
}

static bool log_has(const struct kp_keeper *k, const char *what)
{
	char buf[8192] = {0};
	FILE *f = fopen(k->log, "r");
	bool has;

	if (!f)
		return false;
	has = fread(buf, 1, sizeof(buf) - 1, f) > 0 && strstr(buf, what);
	fclose(f);
	return has;
}

/* Start a keeper on sock (a path in k's directory); it must refuse, saying why. */
static void expect_refused(struct kp_keeper *k, const char *sock, const char *why)
{
	snprintf(k->sock, sizeof(k->sock), "%s", sock);
	CHECK(kp_keeper_start(k, args) > 0);
	if (!log_has(k, why))
		KR_FAIL("keeper on %s: no '%s' in its log", sock, why);
}

int main(void)
{
	struct kp_keeper k;
	char p[120], q[120];
	struct stat st;

	sec_require_root();
	kp_require_hugepages(16);
	kp_keeper_init(&k);

	/* the lock file a symlink to a file the keeper would truncate */
	snprintf(p, sizeof(p), "%s/victim", k.dir);
	write_file(p, "precious");
	snprintf(q, sizeof(q), "%s/a.sock.lock", k.dir);
	CHECK_OK(symlink(p, q));
	snprintf(q, sizeof(q), "%s/a.sock", k.dir);
	expect_refused(&k, q, "is a symlink");
	expect_file(p, "precious");

	/* a regular file at the socket path */
	snprintf(q, sizeof(q), "%s/b.sock", k.dir);
	write_file(q, "not a socket");
	expect_refused(&k, q, "is not a socket");
	expect_file(q, "not a socket");

	/* the directory a symlink */
	snprintf(p, sizeof(p), "%s/real", k.dir);
	CHECK_OK(mkdir(p, 0755));
	snprintf(q, sizeof(q), "%s/link", k.dir);
	CHECK_OK(symlink(p, q));
	snprintf(q, sizeof(q), "%s/link/c.sock", k.dir);
	expect_refused(&k, q, "not a directory");

	/* writable by all, sticky or not, or by the group: refused; by its owner only: fine */
	snprintf(p, sizeof(p), "%s/open", k.dir);
	CHECK_OK(mkdir(p, 0755));
	snprintf(q, sizeof(q), "%s/open/d.sock", k.dir);
	CHECK_OK(chmod(p, 0777));
	expect_refused(&k, q, "writable by other users");
	CHECK_OK(chmod(p, 01777));
	expect_refused(&k, q, "writable by other users");
	CHECK_OK(chmod(p, 0775));
	expect_refused(&k, q, "writable by other users");
	CHECK_OK(chmod(p, 0755));
	snprintf(k.sock, sizeof(k.sock), "%s", q);
	CHECK_OK(kp_keeper_start(&k, args));
	CHECK_OK(lstat(q, &st));
	CHECK(S_ISSOCK(st.st_mode));
	CHECK_EQ(st.st_mode & 07777, 0660);
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);

	/* what this test made in the keeper's directory */
	{
		static const char *const made[] = {"victim", "a.sock.lock", "b.sock", "link"};

		for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", k.dir, made[i]);
			unlink(p);
		}
		snprintf(p, sizeof(p), "%s/real", k.dir);
		rmdir(p);
	}
	kp_keeper_fini(&k);
	snprintf(p, sizeof(p), "%s/open", k.dir);
	rmdir(p);
	rmdir(k.dir);
	KR_PASS("sec_paths");
}
