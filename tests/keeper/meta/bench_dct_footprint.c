/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Footprint of the metadata at cluster size N (suite bench): a MetaServer
 * keeper (node 1) and a plain keeper (node 2) on simulated hosts; N - 2 more
 * nodes register with the MetaServer (fake registrations, one datagram
 * each); a job on node 2 then resolves every node (one READ each, filling
 * its node cache up to its bound). Prints, per keeper, the hugepages its
 * process has touched (HugetlbPages) and its RSS (VmRSS) from /proc, and
 * the hugepages it holds, reserved or touched, as it reports them itself
 * (krctl pool's hugepages_mib), as JSON:
 *   bench_dct_footprint [N ...]     (default 16 1024 10000)
 * Pass/fail never depends on the numbers: only on every lookup succeeding.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "pool_fixture.h"
#include "sim_mp.h"

/* kB of a "Name:   N kB" line of /proc/<pid>/status; -1 if absent. */
static long proc_kb(pid_t pid, const char *name)
{
	char path[64], line[256];
	size_t nl = strlen(name);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, nl) && line[nl] == ':')
			v = strtol(line + nl + 1, NULL, 10);
	fclose(f);
	return v;
}

/* What the keeper reports holding (pool segment), MiB; -1 if it cannot be asked. */
static double keeper_mib(const struct kp_keeper *k)
{
	struct kr_ctx *obs = kr_job_observe(k->sock);
	double mib;

	if (!obs)
		return -1;
	mib = (double)obs->seg->hugepage_bytes / (1 << 20);
	kr_detach(obs);
	return mib;
}

static uint64_t g_tag; /* the launch of the tests (KR_LAUNCH_KEY) */

static void register_fake(const char *ip, uint16_t port, uint32_t node)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct kr_meta_msg m, rep;
	struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	CHECK(fd >= 0);
	CHECK(inet_pton(AF_INET, ip, &sa.sin_addr) == 1);
	CHECK_OK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&m, 0, sizeof(m));
	m.magic = KR_META_MSG_MAGIC;
	m.version = KR_META_MSG_VERSION;
	m.type = KR_META_REGISTER;
	m.node_id = node;
	m.ntenants = 1;
	m.t[0].dctn = 0x10000 + node;
	m.t[0].tag = g_tag; /* the resolving job's launch: it finds only its own */
	m.addr.gid[10] = m.addr.gid[11] = 0xff;
	m.addr.gid[12] = 10;
	m.addr.gid[14] = (uint8_t)(node >> 8);
	m.addr.gid[15] = (uint8_t)node;
	for (int tries = 0; tries < 20; tries++) {
		m.seq = (uint32_t)tries + 1;
		CHECK(send(fd, &m, sizeof(m), 0) == sizeof(m));
		if (recv(fd, &rep, sizeof(rep), 0) == sizeof(rep) && rep.seq == m.seq) {
			CHECK_OK(rep.status);
			close(fd);
			return;
		}
	}
	KR_FAIL("node %u: no answer from the MetaServer", node);
}

/* A job on k resolves nodes 1..n; exits 0 when every record is right. */
static int job_resolve_all(const struct kp_keeper *k, uint32_t n)
{
	struct kr_ctx *ctx = kp_attach(k, 5000);

	if (!ctx)
		return 2;
	for (uint32_t node = 3; node <= n; node++) {
		struct kr_dct_rec r;
		int rc = kr_dct_resolve(ctx, node, &r);

		if (rc || r.dctn != 0x10000 + node) {
			fprintf(stderr, "node %u: rc %d dctn 0x%x\n", node, rc, r.dctn);
			return 4;
		}
	}
	kr_detach(ctx);
	return 0;
}

static void run(uint32_t n, uint16_t port, bool first)
{
	struct kp_keeper ms, plain;
	char dev1[64], dev2[64], listen[32], nodes[16];
	pid_t pid;
	int status;

	snprintf(dev1, sizeof(dev1), "sim:f1@127.0.0.2:%u", port);
	snprintf(dev2, sizeof(dev2), "sim:f2@127.0.0.3:%u", port);
	snprintf(listen, sizeof(listen), "127.0.0.2:%u", port + 1);
	snprintf(nodes, sizeof(nodes), "%u", n + 1);
	{
		const char *const a1[] = {
		    "--device",
		    dev1,
		    "--node-id",
		    "1",
		    "--metaserver",
		    "--insecure-metaserver", /* the fake nodes below are not sealed */
		    "--max-nodes",
		    nodes,
		    "--meta-listen",
		    listen,
		    "--tenants",
		    "1",
		    "--dcis",
		    "2",
		    "--jobs",
		    "1",
		    "--heap-mb",
		    "2",
		    "--hugepages",
		    "32",
		    NULL};
		const char *const a2[] = {"--device",
					  dev2,
					  "--node-id",
					  "2",
					  "--insecure-metaserver",
					  "--metaserver-addr",
					  listen,
					  "--tenants",
					  "1",
					  "--dcis",
					  "2",
					  "--jobs",
					  "1",
					  "--heap-mb",
					  "2",
					  "--hugepages",
					  "32",
					  NULL};

		kp_keeper_init(&ms);
		kp_keeper_init(&plain);
		CHECK_OK(kp_keeper_start(&ms, a1));
		CHECK_OK(kp_keeper_start(&plain, a2));
	}
	for (uint32_t node = 3; node <= n; node++)
		register_fake("127.0.0.2", (uint16_t)(port + 1), node);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(job_resolve_all(&plain, n));
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("%s{\"nodes\": %u, \"slot_bytes\": %zu, \"cache_entries\": %u, "
	       "\"metaserver\": {\"hugepages_kb\": %ld, \"rss_kb\": %ld, \"hugepages_mib\": %.1f}, "
	       "\"plain\": {\"hugepages_kb\": %ld, \"rss_kb\": %ld, \"hugepages_mib\": %.1f}}",
	       first ? "" : ",\n ", n, sizeof(struct kr_dct_slot),
	       KR_DCT_CACHE_SETS * KR_DCT_CACHE_WAYS, proc_kb(ms.pid, "HugetlbPages"),
	       proc_kb(ms.pid, "VmRSS"), keeper_mib(&ms), proc_kb(plain.pid, "HugetlbPages"),
	       proc_kb(plain.pid, "VmRSS"), keeper_mib(&plain));
	fflush(stdout);
	CHECK_EQ(kp_keeper_stop(&plain, SIGTERM), 0);
	CHECK_EQ(kp_keeper_stop(&ms, SIGTERM), 0);
	kp_keeper_fini(&ms);
	kp_keeper_fini(&plain);
}

int main(int argc, char **argv)
{
	static const char *const addrs[] = {"127.0.0.2", "127.0.0.3"};
	static const uint32_t def[] = {16, 1024, 10000};
	uint16_t port;
	int n = argc > 1 ? argc - 1 : 3;

	kp_require_hugepages(40);
	{
		struct kr_launch l;

		CHECK_OK(kr_launch_init(NULL, &l));
		g_tag = l.tag;
	}
	port = mp_pick_port(addrs, 2);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.2/127.0.0.3");
	printf("[");
	for (int i = 0; i < n; i++) {
		uint32_t nodes = argc > 1 ? (uint32_t)strtoul(argv[i + 1], NULL, 0) : def[i];

		CHECK(nodes >= 3 && nodes < (1u << 20));
		run(nodes, port, i == 0);
	}
	printf("]\n");
	KR_PASS("dct_footprint");
}
