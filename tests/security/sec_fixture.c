/* SPDX-License-Identifier: BSD-3-Clause */
/* Security test helpers: see sec_fixture.h. */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "sec_fixture.h"

void sec_require_root(void)
{
	if (geteuid() != 0)
		KR_SKIP("needs root: attackers are children dropped to uid %u", SEC_UID);
}

void sec_drop(void)
{
	if (setgroups(0, NULL) || setresgid(SEC_GID, SEC_GID, SEC_GID) ||
	    setresuid(SEC_UID, SEC_UID, SEC_UID) || geteuid() != SEC_UID) {
		perror("sec_drop");
		_exit(1);
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	unsetenv("KR_LAUNCH_KEY"); /* an attacker is a launch of its own */
}

pid_t sec_spawn_nobody(int (*fn)(void *arg), void *arg)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		sec_drop();
		fflush(stdout);
		_exit(fn(arg));
	}
	return pid;
}

int sec_wait(pid_t pid)
{
	int status;

	CHECK_EQ(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int sec_as_nobody(int (*fn)(void *arg), void *arg)
{
	return sec_wait(sec_spawn_nobody(fn, arg));
}

/* This process's launch key: the tests' (KR_LAUNCH_KEY), else one of its own. NULL: bad. */
static const uint8_t *sec_key(void)
{
	static uint8_t key[KR_LAUNCH_KEY_BYTES]; /* one launch per process */
	static pid_t key_pid;
	int rc;

	if (key_pid != getpid()) {
		rc = kr_launch_key_get(NULL, key);
		if (rc < 0)
			return NULL;
		if (rc == 1 && sodium_init() < 0)
			return NULL;
		if (rc == 1)
			randombytes_buf(key, sizeof(key));
		key_pid = getpid();
	}
	return key;
}

const struct kr_launch *sec_launch(void)
{
	static struct kr_launch l; /* one launch per process */
	static pid_t l_pid;
	const uint8_t *key = sec_key();

	if (l_pid != getpid()) {
		if (!key || kr_launch_derive(key, &l))
			return NULL;
		l_pid = getpid();
	}
	return &l;
}

/*
 * One ATTACH giving launch key key (NULL: a lone job's, drawn by the keeper):
 * the reply's status, or the call's -errno; *fd kept on 0.
 */
static int attach_named(const char *sock, const uint8_t *key, struct kr_msg_attach_reply *rep,
			int *fds, unsigned int *nfds, int *fd)
{
	struct kr_msg_attach req = {.flags = key ? 0 : KR_ATTACH_F_LONE};
	int rc;

	if (key)
		memcpy(req.launch_key, key, sizeof(req.launch_key));
	*fd = kr_msg_connect(sock);
	if (*fd < 0)
		return *fd;
	kr_msg_init(&req.hdr, KR_MSG_ATTACH, sizeof(req), 1);
	*nfds = 0;
	rc = kr_msg_call(*fd, &req, sizeof(req), rep, sizeof(*rep), fds, KR_ATTACH_MAX_REGIONS + 1,
			 nfds);
	if (!rc)
		rc = rep->status;
	if (rc) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

static int attach_once(const char *sock, struct kr_msg_attach_reply *rep, int *fds,
		       unsigned int *nfds)
{
	const uint8_t *key = sec_key();
	int fd;

	if (!key)
		return -1;
	attach_named(sock, key, rep, fds, nfds, &fd);
	return fd;
}

int sec_attach_launch(const char *sock, const uint8_t *key, uint64_t *tag, int *conn)
{
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 0;
	int rc;

	*conn = -1;
	if (!rep)
		return -ENOMEM;
	for (double t0 = kp_now_ms();;) {
		rc = attach_named(sock, key, rep, fds, &nfds, conn);
		for (unsigned int i = 0; i < nfds; i++)
			close(fds[i]);
		if (rc != -EAGAIN || kp_now_ms() - t0 > 5000)
			break;
		usleep(1000); /* a heap being warmed */
	}
	if (tag)
		*tag = rc ? 0 : rep->launch_tag;
	free(rep);
	return rc;
}

int sec_attach_raw(const char *sock, struct kr_msg_attach_reply *rep, int *fds, unsigned int *nfds,
		   int timeout_ms)
{
	int fd = attach_once(sock, rep, fds, nfds);

	for (int waited = 0; fd < 0 && waited < timeout_ms; waited += 20) {
		usleep(20000);
		fd = attach_once(sock, rep, fds, nfds);
	}
	return fd;
}

void sec_keeper_start(struct kp_keeper *k, const char *const *args)
{
	sec_require_root();
	kp_require_hugepages(16);
	kp_keeper_init(k);
	CHECK_OK(chmod(k->dir, 0755));
	CHECK_OK(kp_keeper_start(k, args));
}

void sec_victim_start(struct sec_victim *v, const struct kp_keeper *k)
{
	memset(v, 0, sizeof(*v));
	v->k = k;
	v->ctx = kp_attach(k, 5000);
	CHECK(v->ctx != NULL);
	v->src = kr_malloc(v->ctx, SEC_VICTIM_LEN);
	v->dst = kr_malloc(v->ctx, SEC_VICTIM_LEN);
	v->chk = kr_malloc(v->ctx, SEC_VICTIM_LEN);
	CHECK(v->src && v->dst && v->chk);
	CHECK_OK(kr_lease_alloc(v->ctx, KR_LEASE_DCI, &v->dci));
}

void sec_victim_round(struct sec_victim *v, int n)
{
	int rc = kp_dci_write_read(v->ctx, &v->dci, v->src, v->dst, v->chk, SEC_VICTIM_LEN, n,
				   (uint64_t)(++v->rounds) << 8);

	if (rc) {
		int status = 0;

		kp_log_dump(v->k); /* what the keeper said, and how it ended if it did */
		if (waitpid(v->k->pid, &status, WNOHANG) == v->k->pid)
			fprintf(stderr, "keeper %s %d\n", WIFSIGNALED(status) ? "killed by signal" : "exited",
				WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		KR_FAIL("victim round %u: %d (%s)", v->rounds, rc, strerror(-rc));
	}
}

int sec_victim_until_exit(struct sec_victim *v, pid_t pid)
{
	int status;

	for (;;) {
		sec_victim_round(v, 4);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void sec_victim_stop(struct sec_victim *v)
{
	CHECK_OK(kr_lease_free(v->ctx, &v->dci));
	CHECK_OK(kr_detach(v->ctx));
	v->ctx = NULL;
}

struct lender_arg {
	const struct kp_keeper *k;
	uint32_t len;
	uint8_t fill, expect;
};

static void lender(int out, int in, void *arg)
{
	const struct lender_arg *a = arg;
	struct kr_ctx *ctx = kp_attach(a->k, 5000);
	struct kr_dct_rec self;
	struct kr_mr_key key;
	struct sec_lent l;
	struct kr_mr *mr;
	uint8_t *buf;
	char c;

	if (!ctx || !(buf = kr_malloc(ctx, a->len)))
		_exit(2);
	memset(buf, a->fill, a->len);
	mr = kr_reg_mr(ctx, buf, a->len,
		       KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE |
			   KR_MR_REMOTE_ATOMIC);
	if (!mr || kr_mr_key(mr, &key) || kr_dct_resolve(ctx, KR_NODE_SELF, &self))
		_exit(3);
	l = (struct sec_lent){.addr = key.addr, .rkey = key.rkey, .dctn = self.dctn};
	if (write(out, &l, sizeof(l)) != sizeof(l) || read(in, &c, 1) != 1)
		_exit(4);
	for (uint32_t i = 0; i < a->len; i++)
		if (buf[i] != a->expect)
			_exit(5);
	_exit(kr_detach(ctx) ? 6 : 0);
}

pid_t sec_lender_start(const struct kp_keeper *k, uint32_t len, uint8_t fill, uint8_t expect,
		       struct sec_lent *l, int *go)
{
	struct lender_arg a = {.k = k, .len = len, .fill = fill, .expect = expect};

	return kp_fork_rank(lender, &a, l, sizeof(*l), go);
}

long long sec_violations_wait(const struct kp_keeper *k, int idx, long long at_least)
{
	long long v = kp_krctl_json(k, "pool", "dct_key_violations", idx);

	for (double t0 = kp_now_ms(); v < at_least && kp_now_ms() - t0 < 5000;) {
		usleep(100 * 1000);
		v = kp_krctl_json(k, "pool", "dct_key_violations", idx);
	}
	return v;
}

void sec_lender_done(pid_t pid, int go)
{
	int status;

	CHECK_EQ(write(go, "g", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(go);
}
