/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_metaserver: keepers sharing a --cluster-key seal their MetaServer
 * datagrams (meta_seal.c). Node 1 is the MetaServer (127.0.0.2), node 2
 * registers with it; both resolve each other. Then, from uid 65534:
 *   - a REGISTER in the clear, one sealed with another key, a cut one and an
 *     oversized one for node 5: none answered, node 5 never appears;
 *   - a sealed REGISTER of node 6 captured and replayed, an older one sent
 *     after a newer one, one stamped 10 s ago: none answered, node 6 keeps
 *     the newest record;
 * and the drops show in krctl. A key file readable by others, or not 64 hex
 * digits, stops the keeper at start.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "sec_fixture.h"
#include "sec_meta.h"
#include "sim_mp.h"

#define KEY_HEX "00112233445566778899aabbccddeeff0123456789abcdeffedcba9876543210"

struct attack {
	uint16_t mport;
	struct kr_meta_key key; /* the cluster's: to build the replays */
	uint64_t tag;		/* the tests' launch: node 6's record is for it */
};

/*
 * A sealed REGISTER of a node with our launch answered: the reply (opened
 * with the cluster key) holds routing data only: neither the launch's DC
 * key nor the table's appears anywhere in it.
 */
static void reply_has_no_key(const struct attack *a, uint64_t dc_key)
{
	struct sockaddr_in ms = {.sin_family = AF_INET, .sin_port = htons(a->mport)};
	struct timeval tv = {.tv_sec = 1};
	uint64_t table_key = kr_meta_table_key(&a->key);
	struct kr_meta_box box, in;
	struct kr_meta_msg m, rep;
	enum kr_meta_drop why;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	CHECK(fd >= 0);
	CHECK(inet_pton(AF_INET, "127.0.0.2", &ms.sin_addr) == 1);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	fake(&m, 7, 0x777, kr_meta_wall_ns());
	n = (ssize_t)kr_meta_seal(&a->key, &m, &box);
	CHECK_EQ(sendto(fd, &box, (size_t)n, 0, (struct sockaddr *)&ms, sizeof(ms)), n);
	n = recv(fd, &in, sizeof(in), MSG_TRUNC);
	CHECK(kr_meta_open(&a->key, &in, n, KR_META_REPLY, &rep, &why));
	CHECK(table_key != 0);
	for (size_t i = 0; i + 8 <= sizeof(rep); i++) {
		CHECK(memcmp((uint8_t *)&rep + i, &dc_key, 8) != 0);
		CHECK(memcmp((uint8_t *)&rep + i, &table_key, 8) != 0);
	}
	CHECK(rep.table_dctn && rep.table_rkey && rep.table_va && rep.ntenants == 1);
	close(fd);
}

static int attacker(void *arg)
{
	const struct attack *a = arg;
	struct sockaddr_in ms = {.sin_family = AF_INET, .sin_port = htons(a->mport)};
	struct timeval tmo = {.tv_usec = 300000};
	struct kr_meta_key other = {.set = true};
	struct kr_meta_box box, v1, v2;
	struct kr_meta_msg m;
	uint8_t big[sizeof(box) + 100];
	uint64_t now = kr_meta_wall_ns();
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	SEC_EXPECT(fd >= 0);
	SEC_EXPECT(inet_pton(AF_INET, "127.0.0.2", &ms.sin_addr) == 1);
	SEC_EXPECT(!setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)));

	/* node 5: in the clear, another key, cut, oversized */
	fake(&m, 5, 0x555, now);
	SEC_EXPECT(!answered(fd, &ms, &m, sizeof(m)));
	memset(other.k, 0x42, sizeof(other.k));
	SEC_EXPECT(!answered(fd, &ms, &box, kr_meta_seal(&other, &m, &box)));
	kr_meta_seal(&a->key, &m, &box);
	SEC_EXPECT(!answered(fd, &ms, &box, 100));
	memset(big, 0, sizeof(big));
	memcpy(big, &box, sizeof(box));
	SEC_EXPECT(!answered(fd, &ms, big, sizeof(big)));

	/* node 6: v1 and v2 taken (as a keeper's would be), then replays */
	fake(&m, 6, 0x601, now);
	kr_meta_seal(&a->key, &m, &v1);
	fake(&m, 6, 0x602, now + 1000);
	kr_meta_seal(&a->key, &m, &v2);
	SEC_EXPECT(answered(fd, &ms, &v1, sizeof(v1)));
	SEC_EXPECT(answered(fd, &ms, &v2, sizeof(v2)));
	SEC_EXPECT(!answered(fd, &ms, &v1, sizeof(v1))); /* older than the last */
	SEC_EXPECT(!answered(fd, &ms, &v2, sizeof(v2))); /* the same again */
	fake(&m, 6, 0x603, now - 10000000000ull);	 /* 10 s old */
	kr_meta_seal(&a->key, &m, &box);
	SEC_EXPECT(!answered(fd, &ms, &box, sizeof(box)));
	close(fd);
	return 0;
}

static void bad_key_refused(const char *dir, const char *content, mode_t mode, const char *dev)
{
	char path[128];
	struct kp_keeper k;

	snprintf(path, sizeof(path), "%s/bad.key", dir);
	key_file(path, content, mode);
	{
		const char *const args[] = {"--device",
					    dev,
					    "--node-id",
					    "9",
					    "--metaserver-addr",
					    "127.0.0.2:9",
					    "--cluster-key",
					    path,
					    "--tenants",
					    "1",
					    "--dcis",
					    "2",
					    "--jobs",
					    "2",
					    "--heap-mb",
					    "2",
					    "--hugepages",
					    "32",
					    NULL};

		kp_keeper_init(&k);
		CHECK(kp_keeper_start(&k, args) > 0); /* it stopped */
		kp_keeper_fini(&k);
	}
	unlink(path);
}

int main(void)
{
	static const char *const addrs[] = {"127.0.0.2", "127.0.0.3"};
	struct kp_keeper k1, k2;
	struct attack a = {0};
	char dev1[64], dev2[64], ms[32], keyf[128], out[4096];
	uint32_t dctn1 = 0, dctn;
	struct kp_holder h1, h2;
	struct kr_launch me;
	uint16_t port;

	sec_require_root();
	kp_require_hugepages(80);
	port = mp_pick_port(addrs, 2);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.2-3");
	a.mport = (uint16_t)(port + 1);
	snprintf(dev1, sizeof(dev1), "sim:ms1@127.0.0.2:%u", port);
	snprintf(dev2, sizeof(dev2), "sim:ms2@127.0.0.3:%u", port);
	snprintf(ms, sizeof(ms), "127.0.0.2:%u", a.mport);
	kp_keeper_init(&k1);
	snprintf(keyf, sizeof(keyf), "%s/cluster.key", k1.dir);
	key_file(keyf, KEY_HEX "\n", 0600);
	CHECK_OK(kr_meta_key_load(keyf, &a.key));
#define COMMON                                                                                     \
	"--cluster-key", keyf, "--tenants", "1", "--dcis", "2", "--jobs", "2", "--heap-mb", "2",   \
	    "--hugepages", "32"
	{
		const char *const a1[] = {"--device",	   dev1, "--node-id", "1", "--metaserver",
					  "--meta-listen", ms,	 COMMON,      NULL};
		const char *const a2[] = {"--device",	       dev2, "--node-id", "2",
					  "--metaserver-addr", ms,   COMMON,	  NULL};

		sec_keeper_start(&k1, a1);
		kp_keeper_init(&k2);
		sec_keeper_start(&k2, a2);
	}
	/* the tests' launch has a rank on both nodes; sealed registration works both ways */
	CHECK_OK(kr_launch_init(NULL, &me));
	g_tag = me.tag;
	h1 = kp_hold(&k1);
	h2 = kp_hold(&k2);
	CHECK_OK(resolve(&k2, 1, &dctn1));
	CHECK_OK(resolve(&k1, 2, &dctn));
	reply_has_no_key(&a, me.dc_key);

	CHECK_EQ(sec_as_nobody(attacker, &a), 0);
	CHECK_EQ(resolve(&k2, 5, &dctn), -ENOENT);
	CHECK_OK(resolve(&k2, 6, &dctn));
	CHECK_EQ(dctn, 0x602);
	/* the MetaServer's own record is untouched */
	CHECK_OK(resolve(&k2, 1, &dctn));
	CHECK_EQ(dctn, dctn1);
	{
		const char *const argv[] = {kp_tool("KRCTL"), "--socket", k1.sock, "status", NULL};

		CHECK_EQ(kp_run(argv, out, sizeof(out), 10), 0);
		printf("%s", strstr(out, "MetaServer") ? strstr(out, "MetaServer") : out);
		CHECK(strstr(out, "2 bad size, 2 unauthenticated, 0 malformed, 3 replayed") !=
		      NULL);
	}

	/* a key others can read, and one that is not a key: no start */
	bad_key_refused(k1.dir, KEY_HEX "\n", 0644, "sim:bad1");
	bad_key_refused(k1.dir, "secret\n", 0600, "sim:bad2");

	kp_hold_release(&h1);
	kp_hold_release(&h2);
	CHECK_EQ(kp_keeper_stop(&k2, SIGTERM), 0);
	CHECK_EQ(kp_keeper_stop(&k1, SIGTERM), 0);
	unlink(keyf);
	kp_keeper_fini(&k2);
	kp_keeper_fini(&k1);
	KR_PASS("sec_metaserver");
}
