/* SPDX-License-Identifier: BSD-3-Clause */
#include "pool_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kr_test.h"

double kp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

void kp_require_hugepages(unsigned int pages)
{
	char line[256];
	unsigned long free_pages = 0;
	bool mounted = false;
	FILE *f;

	f = fopen("/proc/meminfo", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			sscanf(line, "HugePages_Free: %lu", &free_pages);
		fclose(f);
	}
	f = fopen("/proc/mounts", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strstr(line, " hugetlbfs "))
				mounted = true;
		fclose(f);
	}
	if (!mounted)
		KR_SKIP("no hugetlbfs mount (mount -t hugetlbfs nodev /dev/hugepages)");
	if (free_pages < pages)
		KR_SKIP("%lu free 2 MB hugepages, need %u (echo 512 > /proc/sys/vm/nr_hugepages)",
			free_pages, pages);
}

const char *kp_tool(const char *env)
{
	const char *p = getenv(env);

	if (!p || access(p, X_OK))
		KR_SKIP("$%s does not name a built tool (run through meson test)", env);
	return p;
}

void kp_keeper_init(struct kp_keeper *k)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->dir, sizeof(k->dir), "/tmp/krpool.XXXXXX");
	CHECK(mkdtemp(k->dir) != NULL);
	snprintf(k->sock, sizeof(k->sock), "%s/krpoold.sock", k->dir);
	snprintf(k->log, sizeof(k->log), "%s/krpoold.log", k->dir);
}

static char key_path[64];
static pid_t key_made_by;

/* The test is over: its key and the directory made for it go (its children keep them). */
static void key_remove(void)
{
	char *slash;

	if (key_made_by != getpid())
		return;
	unlink(key_path);
	slash = strrchr(key_path, '/');
	if (slash) {
		*slash = '\0';
		rmdir(key_path);
	}
}

/* kp_cluster_key() - see pool_fixture.h. */
const char *kp_cluster_key(void)
{
	char *path = key_path;
	uint8_t key[32];
	char hex[2 * sizeof(key) + 2];
	int fd;

	if (key_made_by == getpid())
		return path;
	snprintf(path, sizeof(key_path), "/tmp/krkey.XXXXXX");
	CHECK(mkdtemp(path) != NULL);
	strcat(path, "/cluster.key");
	fd = open("/dev/urandom", O_RDONLY);
	CHECK(fd >= 0 && read(fd, key, sizeof(key)) == (ssize_t)sizeof(key));
	close(fd);
	for (size_t i = 0; i < sizeof(key); i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	strcat(hex, "\n");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && write(fd, hex, strlen(hex)) == (ssize_t)strlen(hex));
	close(fd);
	key_made_by = getpid();
	atexit(key_remove);
	return path;
}

/* Does the keeper's argument list name a MetaServer role without saying how it is keyed? */
static bool meta_unkeyed(const char *const *extra)
{
	bool role = false;

	for (; extra && *extra; extra++) {
		if (!strcmp(*extra, "--cluster-key") || !strcmp(*extra, "--insecure-metaserver"))
			return false;
		role |= !strcmp(*extra, "--metaserver") || !strcmp(*extra, "--metaserver-addr");
	}
	return role;
}

static int keeper_start(struct kp_keeper *k, const char *const *extra, bool add_key)
{
	const char *argv[48];
	int argc = 0, status;
	pid_t pid;

	argv[argc++] = kp_tool("KRPOOLD");
	argv[argc++] = "--foreground";
	argv[argc++] = "--socket";
	argv[argc++] = k->sock;
	if (add_key && meta_unkeyed(extra)) { /* the test's keepers share one cluster key */
		argv[argc++] = "--cluster-key";
		argv[argc++] = kp_cluster_key();
	}
	for (; extra && *extra && argc < 46; extra++)
		argv[argc++] = *extra;
	argv[argc] = NULL;

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int fd = open(k->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		/* a test that fails (exit) or is killed takes its keeper with it */
		prctl(PR_SET_PDEATHSIG, SIGTERM);

		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	k->pid = pid;
	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 20000;) {
		int fd;

		if (waitpid(pid, &status, WNOHANG) == pid) {
			k->pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		fd = kr_msg_connect(k->sock);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		sleep_ms(10);
	}
	return -ETIMEDOUT;
}

int kp_keeper_start(struct kp_keeper *k, const char *const *extra)
{
	return keeper_start(k, extra, true);
}

int kp_keeper_start_bare(struct kp_keeper *k, const char *const *extra)
{
	return keeper_start(k, extra, false);
}

bool kp_log_has(const struct kp_keeper *k, const char *needle)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(k->log, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

pid_t kp_fork_job(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* the test ended before the line above */
			_exit(1);
	}
	return pid;
}

void kp_log_dump(const struct kp_keeper *k)
{
	char line[512];
	FILE *f = fopen(k->log, "r");

	if (!f)
		return;
	fprintf(stderr, "--- %s\n", k->log);
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fprintf(stderr, "---\n");
	fclose(f);
}

int kp_keeper_stop(struct kp_keeper *k, int sig)
{
	int status = 0;

	if (k->pid <= 0)
		return 0;
	kill(k->pid, sig);
	waitpid(k->pid, &status, 0);
	k->pid = 0;
	return status;
}

void kp_keeper_fini(struct kp_keeper *k)
{
	char path[160];

	if (k->pid > 0)
		kp_keeper_stop(k, SIGKILL);
	if (getenv("KP_KEEP_LOG")) {
		fprintf(stderr, "keeper log: %s\n", k->log);
		return;
	}
	unlink(k->log);
	unlink(k->sock);
	snprintf(path, sizeof(path), "%s.lock", k->sock);
	unlink(path);
	rmdir(k->dir);
}

int kp_run(const char *const *argv, char *out, size_t cap, int timeout_s)
{
	int pfd[2], status;
	size_t len = 0;
	double t0 = kp_now_ms();
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		ssize_t n;

		if (kp_now_ms() - t0 > timeout_s * 1000.0) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(pfd[0], out + len, cap - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == cap - 1)
			break;
	}
	out[len] = '\0';
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void kp_seg_header(const struct kp_keeper *k, struct kr_pool_seg *out)
{
	struct kr_ctx *obs = kr_job_observe(k->sock);

	CHECK(obs != NULL);
	*out = *obs->seg;
	kr_detach(obs);
}

struct kr_vqp *kp_connect_wait(struct kr_ctx *ctx, uint32_t peer)
{
	double t0 = kp_now_ms();
	struct kr_vqp *v;

	while (!(v = kr_connect(ctx, peer, NULL)) && errno == ENOSPC && kp_now_ms() - t0 < 10000)
		sleep_ms(1);
	return v;
}

int kp_lease_wait(struct kr_ctx *ctx, uint32_t kind, struct kr_lease *l, int timeout_ms)
{
	double t0 = kp_now_ms();
	int rc;

	while ((rc = kr_lease_alloc(ctx, kind, l)) == -ENOSPC && kp_now_ms() - t0 < timeout_ms)
		sleep_ms(1);
	return rc;
}

struct kr_ctx *kp_attach(const struct kp_keeper *k, int timeout_ms)
{
	return kp_attach_sock(k->sock, timeout_ms);
}

struct kr_ctx *kp_attach_sock(const char *sock, int timeout_ms)
{
	struct kr_attach_opts o = {.socket_path = sock};
	double t0 = kp_now_ms();
	struct kr_ctx *ctx;

	for (;;) {
		ctx = kr_attach(&o);
		if (ctx || (errno != ENOSPC && errno != ECONNREFUSED && errno != ENOENT) ||
		    kp_now_ms() - t0 > timeout_ms)
			return ctx;
		sleep_ms(5);
	}
}

static int poll_one(struct kr_devx_cq *cq, struct kr_devx_wc *wc, struct kr_ctx *ctx)
{
	double t0 = kp_now_ms();
	struct kr_ctx_attr attr;
	int n;

	while ((n = kr_devx_cq_poll(cq, wc, 1)) == 0) {
		if (kp_now_ms() - t0 > 5000)
			return kr_ctx_query(ctx, &attr) ? -ENOTCONN : -ETIMEDOUT;
	}
	return n < 0 ? n : 0;
}

int kp_dci_write_read(struct kr_ctx *ctx, const struct kr_lease *l, uint8_t *src, uint8_t *dst,
		      uint8_t *chk, uint32_t len, int n, uint64_t wr_base)
{
	struct kr_devx_dc_av av;
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
	struct kr_devx_wc wc;
	int rc;

	rc = kr_job_dci_qp(ctx, l, &qp, &cq);
	if (!rc)
		rc = kr_job_tenant_av(ctx, &av);
	if (rc)
		return rc;
	for (int i = 0; i < n; i++) {
		struct kr_devx_sge s = {
		    .addr = (uintptr_t)src, .length = len, .lkey = kr_job_heap_lkey(ctx)};
		struct kr_devx_wr wr = {.wr_id = wr_base + (uint64_t)i,
					.opcode = KR_WR_RDMA_WRITE,
					.flags = KR_WR_SIGNALED,
					.sge = &s,
					.num_sge = 1,
					.remote_addr = (uintptr_t)dst,
					.rkey = ctx->heap_rkey,
					.av = &av};

		for (uint32_t b = 0; b < len; b++)
			src[b] = (uint8_t)(wr_base * 31 + (uint64_t)i * 7 + b);
		rc = kr_devx_qp_post_send(qp, &wr);
		if (rc)
			return rc;
		kr_devx_qp_ring(qp);
		rc = poll_one(cq, &wc, ctx);
		if (rc)
			return rc;
		if (wc.status != KR_WC_SUCCESS || wc.wr_id != wr.wr_id || wc.qpn != l->qpn)
			return -EIO;
		if (memcmp(src, dst, len))
			return -EIO;
	}
	{
		struct kr_devx_sge s = {
		    .addr = (uintptr_t)chk, .length = len, .lkey = kr_job_heap_lkey(ctx)};
		struct kr_devx_wr wr = {.wr_id = wr_base + 0x100000u,
					.opcode = KR_WR_RDMA_READ,
					.flags = KR_WR_SIGNALED,
					.sge = &s,
					.num_sge = 1,
					.remote_addr = (uintptr_t)dst,
					.rkey = ctx->heap_rkey,
					.av = &av};

		memset(chk, 0, len);
		rc = kr_devx_qp_post_send(qp, &wr);
		if (rc)
			return rc;
		kr_devx_qp_ring(qp);
		rc = poll_one(cq, &wc, ctx);
		if (rc)
			return rc;
		if (wc.status != KR_WC_SUCCESS || wc.byte_len != len || memcmp(chk, dst, len))
			return -EIO;
	}
	return 0;
}

int kp_hog_hugepages(int *fds, int max)
{
	int n = 0;

	while (n < max) {
		int fd = memfd_create("hog", MFD_HUGETLB | MFD_CLOEXEC);
		void *p;

		if (fd < 0 || ftruncate(fd, KR_POOL_PAGE)) {
			if (fd >= 0)
				close(fd);
			break;
		}
		p = mmap(NULL, KR_POOL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			close(fd);
			break;
		}
		*(volatile char *)p = 1; /* faulted in: taken from the pool */
		fds[n++] = fd;
	}
	return n;
}

struct kp_holder kp_hold_as(const struct kp_keeper *k, bool other_launch)
{
	struct kp_holder h;
	int p[2], q[2];
	char c;

	CHECK_OK(pipe(p));
	CHECK_OK(pipe(q));
	h.pid = fork();
	CHECK(h.pid >= 0);
	if (h.pid == 0) {
		struct kr_ctx *ctx;

		if (other_launch)
			unsetenv("KR_LAUNCH_KEY"); /* a lone job: a launch of its own */
		ctx = kp_attach(k, 5000);
		close(p[1]);
		close(q[0]);
		if (!ctx || write(q[1], "r", 1) != 1)
			_exit(2);
		(void)!read(p[0], &c, 1); /* until released */
		kr_detach(ctx);
		_exit(0);
	}
	close(p[0]);
	close(q[1]);
	CHECK_EQ(read(q[0], &c, 1), 1);
	close(q[0]);
	h.fd = p[1];
	return h;
}

struct kp_holder kp_hold(const struct kp_keeper *k)
{
	return kp_hold_as(k, false);
}

void kp_hold_release(struct kp_holder *h)
{
	int status;

	CHECK_EQ(write(h->fd, "x", 1), 1);
	close(h->fd);
	CHECK_EQ(waitpid(h->pid, &status, 0), h->pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}


int kp_dci_read(struct kr_ctx *ctx, const struct kr_lease *l, const struct kr_devx_dc_av *av,
		void *dst, uint32_t len, uint64_t addr, uint32_t rkey)
{
	struct kr_devx_sge sge = {
	    .addr = (uintptr_t)dst, .length = len, .lkey = kr_job_heap_lkey(ctx)};
	struct kr_devx_wr wr = {.wr_id = 7,
				.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = addr,
				.rkey = rkey,
				.av = av};

	return kp_dci_post(ctx, l, &wr);
}

int kp_dci_post(struct kr_ctx *ctx, const struct kr_lease *l, const struct kr_devx_wr *wr)
{
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
	struct kr_devx_wc wc;
	int rc;

	rc = kr_job_dci_qp(ctx, l, &qp, &cq);
	if (!rc)
		rc = kr_devx_qp_post_send(qp, wr);
	if (rc)
		return rc;
	kr_devx_qp_ring(qp);
	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 30000;)
		if (kr_devx_cq_poll(cq, &wc, 1) == 1)
			return (int)wc.status;
	return -ETIMEDOUT;
}

long long kp_krctl_json(const struct kp_keeper *k, const char *cmd, const char *key, int idx)
{
	const char *const argv[] = {kp_tool("KRCTL"), "--socket", k->sock, "--json", cmd, NULL};
	static char out[65536];
	char pat[64];
	long long sum = 0;
	int i = 0;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	if (kp_run(argv, out, sizeof(out), 10) != 0)
		return -1;
	for (const char *p = out; (p = strstr(p, pat)); p += strlen(pat), i++) {
		long long v = atoll(p + strlen(pat));

		if (i == idx)
			return v;
		sum += v;
	}
	return idx < 0 ? sum : -1;
}

struct kp_child kp_spawn(void (*fn)(int out, int in, void *arg), void *arg)
{
	struct kp_child c;
	int p[2], q[2];

	CHECK_OK(pipe(p));
	CHECK_OK(pipe(q));
	c.pid = fork();
	CHECK(c.pid >= 0);
	if (c.pid == 0) {
		close(p[0]);
		close(q[1]);
		fn(p[1], q[0], arg);
		_exit(0);
	}
	close(p[1]);
	close(q[0]);
	c.to = q[1];
	c.from = p[0];
	return c;
}

int kp_child_run(struct kp_child *c, const void *orders, size_t olen, void *report, size_t rlen)
{
	int st;

	if (olen && write(c->to, orders, olen) != (ssize_t)olen)
		return -EIO;
	if (read(c->from, report, rlen) != (ssize_t)rlen)
		return -EIO;
	close(c->to);
	close(c->from);
	if (waitpid(c->pid, &st, 0) != c->pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -EIO;
	return 0;
}

pid_t kp_fork_rank(void (*fn)(int out, int in, void *arg), void *arg, void *report, size_t len,
		   int *go)
{
	struct kp_child c = kp_spawn(fn, arg);

	CHECK_EQ(read(c.from, report, len), (ssize_t)len);
	close(c.from);
	*go = c.to;
	return c.pid;
}
