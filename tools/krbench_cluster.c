/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench: a simulated cluster on this machine. Node i (1..N) is a keeper
 * on sim host "kb<i>" at 127.0.0.<i + 1>, all on one UDP port; node 1 also
 * serves the MetaServer (registrations on 127.0.0.2, the next port), the
 * others register with it. Keepers run in the foreground as children, their
 * output in <dir>/node<i>.log. And a target: a job attached to one keeper
 * that exposes 8 known bytes for READs and echoes UDP datagrams (the floor
 * krbench read --peer compares READs with).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include <sodium.h>

#include "krbench.h"
#include "job/job.h"
#include "keeper/keeper.h"

#define KB_KEEPER_WAIT_US 20e6
#define KB_KEEPER_PAGES	  32			/* --hugepages of each keeper */
#define KB_TARGET_VAL	  0x6b72636f72653a31ull /* "krcore:1" */

static bool udp_port_free(int host, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	a.sin_addr.s_addr = htonl(0x7f000000u + (uint32_t)host + 2);
	ok = !bind(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return ok;
}

/* A port free on every host (and the next one on 127.0.0.2 for the MetaServer). */
static uint16_t pick_port(int hosts)
{
	unsigned int seed = (unsigned int)(kb_now_us()) ^ ((unsigned int)getpid() << 16);

	for (int tries = 0; tries < 64; tries++) {
		uint16_t port = (uint16_t)(20000 + rand_r(&seed) % 40000);
		int h = 0;

		while (h < hosts && udp_port_free(h, port))
			h++;
		if (h == hosts && udp_port_free(0, (uint16_t)(port + 1)))
			return port;
	}
	return 0;
}

void kb_sim_device(const struct kb_cluster *c, const char *name, int host, char *buf, size_t len)
{
	snprintf(buf, len, "sim:%s@127.0.0.%d:%u%s%s", name, host + 2, c->port,
		 strcmp(g_profile, "none") ? ",profile=" : "",
		 strcmp(g_profile, "none") ? g_profile : "");
}

#define KR_STR_(x) #x
#define KR_STR(x)  KR_STR_(x)

static long free_hugepages(void)
{
	char line[128];
	long n = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* A keeper that did not start: what it said. */
static void keeper_log_dump(const struct kb_cluster *c, int node)
{
	char path[96], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/node%d.log", c->dir, node);
	f = fopen(path, "r");
	fprintf(stderr, "krbench: the keeper of node %d did not start; it said:\n", node);
	while (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "  %s", line);
	if (f)
		fclose(f);
}

/* The cluster's key (64 random hex digits, 0600): its MetaServer datagrams are sealed. */
static int cluster_key(const struct kb_cluster *c)
{
	char path[96], hex[66];
	uint8_t key[32];
	int fd, rc = 0;

	if (sodium_init() < 0)
		return -EIO;
	randombytes_buf(key, sizeof(key));
	sodium_bin2hex(hex, sizeof(hex) - 1, key, sizeof(key));
	sodium_memzero(key, sizeof(key));
	strcat(hex, "\n");
	snprintf(path, sizeof(path), "%s/cluster.key", c->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, hex, strlen(hex)) != (ssize_t)strlen(hex))
		rc = -errno;
	if (fd >= 0)
		close(fd);
	sodium_memzero(hex, sizeof(hex));
	return rc;
}

static pid_t keeper_spawn(const struct kb_cluster *c, int node, const char *krpoold)
{
	char dev[96], name[16], id[16], ms[32], log[96], key[96];
	pid_t pid;

	snprintf(name, sizeof(name), "kb%d", node);
	kb_sim_device(c, name, node - 1, dev, sizeof(dev));
	snprintf(id, sizeof(id), "%d", node);
	snprintf(ms, sizeof(ms), "127.0.0.2:%u", c->mport);
	snprintf(log, sizeof(log), "%s/node%d.log", c->dir, node);
	snprintf(key, sizeof(key), "%s/cluster.key", c->dir);
	pid = fork();
	if (pid)
		return pid;
	{
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
	}
	/*
	 * node 1's MetaServer table sized for this cluster, not for 16384 nodes;
	 * its pool big enough for a thread that fans out over 8 DCIs with more
	 * than a quarter left, and an RC spare for each of its peers
	 * (krbench fanout's promoted row)
	 */
	execl(krpoold, krpoold, "--foreground", "--socket", c->sock[node - 1], "--device", dev,
	      "--cluster-key", key, "--node-id", id,
	      node == 1 ? "--meta-listen" : "--metaserver-addr", ms, "--tenants", "1", "--dcis",
	      node == 1 ? "16" : "8", "--rc-spares", node == 1 ? "8" : "2", "--jobs", "4",
	      "--heap-mb", "2", "--hugepages", KR_STR(KB_KEEPER_PAGES), "--max-nodes", "64",
	      node == 1 ? "--metaserver" : (char *)NULL, (char *)NULL);
	fprintf(stderr, "krbench: cannot run %s: %s\n", krpoold, strerror(errno));
	_exit(127);
}

int kb_cluster_start(struct kb_cluster *c, int nodes, int extra_hosts, const char *krpoold)
{
	char path[PATH_MAX];
	int rc;

	memset(c, 0, sizeof(*c));
	if (nodes < 2 || nodes > KB_MAX_NODES) {
		fprintf(stderr, "krbench: --nodes must be 2..%d\n", KB_MAX_NODES);
		return -EINVAL;
	}
	rc = kb_tool_path("krpoold", krpoold, path, sizeof(path));
	if (rc)
		return rc;
	if (free_hugepages() < (long)nodes * KB_KEEPER_PAGES) {
		fprintf(stderr,
			"krbench: %d keepers need %d free 2 MB hugepages (have %ld): echo 512 > "
			"/proc/sys/vm/nr_hugepages; mount -t hugetlbfs nodev /dev/hugepages\n",
			nodes, nodes * KB_KEEPER_PAGES, free_hugepages());
		return -ENOMEM;
	}
	c->port = pick_port(nodes + extra_hosts);
	if (!c->port) {
		fprintf(stderr, "krbench: no free UDP port on 127.0.0.2..%d\n",
			nodes + extra_hosts + 1);
		return -EADDRINUSE;
	}
	c->mport = (uint16_t)(c->port + 1);
	snprintf(c->dir, sizeof(c->dir), "/tmp/krbench.XXXXXX");
	if (!mkdtemp(c->dir)) {
		c->dir[0] = '\0';
		return -errno;
	}
	rc = cluster_key(c);
	if (rc) {
		fprintf(stderr, "krbench: cannot write %s/cluster.key: %s\n", c->dir,
			strerror(-rc));
		rmdir(c->dir);
		return rc;
	}
	c->nodes = nodes;
	for (int n = 1; n <= nodes; n++) {
		snprintf(c->sock[n - 1], sizeof(c->sock[n - 1]), "%s/node%d.sock", c->dir, n);
		c->pid[n - 1] = keeper_spawn(c, n, path);
		if (c->pid[n - 1] < 0) {
			rc = -errno;
			kb_cluster_stop(c);
			return rc;
		}
	}
	for (int n = 1; n <= nodes; n++) {
		double t0 = kb_now_us();
		int fd = -1, status;

		while ((fd = kr_msg_connect(c->sock[n - 1])) < 0 &&
		       kb_now_us() - t0 < KB_KEEPER_WAIT_US) {
			if (waitpid(c->pid[n - 1], &status, WNOHANG) == c->pid[n - 1]) {
				c->pid[n - 1] = 0;
				break;
			}
			usleep(10000);
		}
		if (fd < 0) {
			keeper_log_dump(c, n);
			kb_cluster_stop(c);
			return -ECHILD;
		}
		close(fd);
	}
	return 0;
}

void kb_cluster_stop(struct kb_cluster *c)
{
	char f[192];

	for (int n = 1; n <= c->nodes; n++) {
		if (c->pid[n - 1] > 0) {
			kill(c->pid[n - 1], SIGTERM);
			waitpid(c->pid[n - 1], NULL, 0);
		}
		snprintf(f, sizeof(f), "%s.lock", c->sock[n - 1]);
		unlink(f);
		unlink(c->sock[n - 1]);
		snprintf(f, sizeof(f), "%s/node%d.log", c->dir, n);
		unlink(f);
	}
	snprintf(f, sizeof(f), "%s/cluster.key", c->dir);
	unlink(f);
	if (c->dir[0])
		rmdir(c->dir);
	c->nodes = 0;
}

/* A UDP socket on 127.0.0.1, any port: the echo of the target job. */
static int udp_echo_socket(uint16_t *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Until down closes: echo every datagram to its sender. */
static void serve_echo(int udp, int down)
{
	struct pollfd p[2] = {{.fd = down, .events = POLLIN}, {.fd = udp, .events = POLLIN}};

	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return;
		if (p[0].revents) {
			char c;

			if (read(down, &c, 1) <= 0)
				return;
		}
		if (p[1].revents & POLLIN) {
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			char buf[64];
			ssize_t n =
			    recvfrom(udp, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

			if (n > 0)
				sendto(udp, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
		}
	}
}

/* The target job: attach, register 4 KiB, report, echo UDP until the end. */
static int target_main(const char *sock, int up, int down)
{
	struct kr_attach_opts o = {.socket_path = sock};
	struct kr_ctx *ctx = NULL;
	struct kr_mr_key key;
	struct kr_mr *mr = NULL;
	uint64_t *buf, msg[3];
	uint16_t port = 0;
	int udp;

	for (double t0 = kb_now_us(); !ctx && kb_now_us() - t0 < 10e6;)
		if (!(ctx = kr_attach(&o)))
			usleep(10000);
	if (!ctx)
		return 1;
	buf = kr_malloc(ctx, 4096);
	if (buf) {
		buf[0] = KB_TARGET_VAL;
		mr = kr_reg_mr(ctx, buf, 4096, KR_MR_REMOTE_READ);
	}
	udp = udp_echo_socket(&port);
	if (!mr || kr_mr_key(mr, &key) || udp < 0)
		return 1;
	msg[0] = key.addr;
	msg[1] = key.rkey;
	msg[2] = port;
	if (write(up, msg, sizeof(msg)) != sizeof(msg))
		return 1;
	serve_echo(udp, down);
	close(udp);
	kr_dereg_mr(mr);
	kr_detach(ctx);
	return 0;
}

int kb_target_start(struct kb_target *t, const char *sock)
{
	int up[2], down[2];
	uint64_t msg[3];

	memset(t, 0, sizeof(*t));
	if (pipe2(up, O_CLOEXEC))
		return -errno;
	if (pipe2(down, O_CLOEXEC)) {
		close(up[0]);
		close(up[1]);
		return -errno;
	}
	t->pid = fork();
	if (t->pid == 0) {
		close(up[0]);
		close(down[1]);
		_exit(target_main(sock, up[1], down[0]));
	}
	close(up[1]);
	close(down[0]);
	t->ctl = down[1];
	if (t->pid < 0 || read(up[0], msg, sizeof(msg)) != sizeof(msg)) {
		close(up[0]);
		kb_target_wait(t);
		fprintf(stderr, "krbench: the target job did not start\n");
		return -ECHILD;
	}
	close(up[0]);
	t->addr = msg[0];
	t->rkey = (uint32_t)msg[1];
	t->udp_port = (uint16_t)msg[2];
	t->val = KB_TARGET_VAL;
	return 0;
}

void kb_target_stop(struct kb_target *t)
{
	if (t->ctl > 0)
		close(t->ctl);
	t->ctl = -1;
}

void kb_target_wait(struct kb_target *t)
{
	kb_target_stop(t);
	if (t->pid > 0)
		waitpid(t->pid, NULL, 0);
	t->pid = 0;
}
