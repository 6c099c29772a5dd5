/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_meta_spoof: a local user cannot redirect connects through the
 * MetaServer (issue: another user on the node...; item 7). Anyone on the
 * node can send the registration socket a UDP datagram; a forged REGISTER
 * used to rewrite a node's row (the MetaServer's own included), so a root
 * launch's next connect went to the attacker with its DC key.
 *   1. A keeper refuses to run a MetaServer (--metaserver) or register
 *      (--metaserver-addr) without --cluster-key, saying why; with
 *      --insecure-metaserver it starts (and warns).
 *   2. Keyed (node 1 the MetaServer, node 2 registered): uid 65534's
 *      REGISTERs in the clear for node 2 and node 1 are dropped and both
 *      rows stay; a REGISTER sealed with the cluster key but for the
 *      MetaServer's own node id is dropped too (its row is its event
 *      loop's); one sealed for node 4 is taken (the control).
 *   3. Insecure (--insecure-metaserver on both): a forged REGISTER for
 *      the MetaServer's own id is still dropped; one for node 3 is taken,
 *      as documented (nothing authenticates it).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "sec_meta.h"
#include "sim_mp.h"

struct spoof {
	uint16_t mport;
	bool keyed;
	uint32_t dctn1, dctn2; /* the true records */
};

/* As uid 65534: forged REGISTERs in the clear for node 1 (and 2 when keyed; 3 when not). */
static int attacker(void *arg)
{
	const struct spoof *s = arg;
	struct sockaddr_in ms = {.sin_family = AF_INET, .sin_port = htons(s->mport)};
	struct timeval tmo = {.tv_usec = 300000};
	struct kr_meta_msg m;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	SEC_EXPECT(fd >= 0);
	SEC_EXPECT(inet_pton(AF_INET, "127.0.0.2", &ms.sin_addr) == 1);
	SEC_EXPECT(!setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)));
	for (int i = 0; i < 20; i++) { /* keyed: nodes 1 and 2; insecure: only node 1 is kept */
		fake(&m, s->keyed ? 1 + (uint32_t)(i % 2) : 1, 0x6660 + (uint32_t)i,
		     kr_meta_wall_ns());
		SEC_EXPECT(!answered(fd, &ms, &m, sizeof(m)));
	}
	if (!s->keyed) { /* nothing authenticates another node's row: taken */
		fake(&m, 3, 0x333, kr_meta_wall_ns());
		SEC_EXPECT(answered(fd, &ms, &m, sizeof(m)));
	}
	close(fd);
	return 0;
}

/* With the cluster key: a sealed REGISTER for node, answered or not. */
static bool sealed_register(const struct spoof *s, const struct kr_meta_key *key, uint32_t node,
			    uint32_t dctn)
{
	struct sockaddr_in ms = {.sin_family = AF_INET, .sin_port = htons(s->mport)};
	struct timeval tmo = {.tv_usec = 300000};
	struct kr_meta_box box;
	struct kr_meta_msg m;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	bool got;

	CHECK(fd >= 0);
	CHECK(inet_pton(AF_INET, "127.0.0.2", &ms.sin_addr) == 1);
	CHECK_OK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)));
	fake(&m, node, dctn, kr_meta_wall_ns());
	got = answered(fd, &ms, &box, kr_meta_seal(key, &m, &box));
	close(fd);
	return got;
}

/* 1. No key, no start; --insecure-metaserver starts. */
static void unkeyed_refused(const char *dev, const char *ms)
{
	const char *serve[] = {"--device",
			       dev,
			       "--node-id",
			       "8",
			       "--metaserver",
			       "--meta-listen",
			       ms,
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
			       NULL,
			       NULL};
	const char *const reg[] = {
	    "--device", dev, "--node-id", "9", "--metaserver-addr", ms,	 "--tenants",	"1",
	    "--dcis",	"2", "--jobs",	  "1", "--heap-mb",	    "2", "--hugepages", "32",
	    NULL};
	struct kp_keeper k;

	kp_keeper_init(&k);
	CHECK(kp_keeper_start_bare(&k, serve) > 0);
	CHECK(kp_log_has(&k, "--metaserver without --cluster-key"));
	CHECK(kp_keeper_start_bare(&k, reg) > 0);
	CHECK(kp_log_has(&k, "--metaserver-addr without --cluster-key"));
	/* the same MetaServer, told it is insecure: it runs */
	serve[17] = "--insecure-metaserver";
	CHECK_OK(kp_keeper_start_bare(&k, serve));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
}

/* 2 and 3: a MetaServer and a registered node, keyed or not; the attacks. */
static void pair(const char *dev1, const char *dev2, const char *ms, struct spoof *s,
		 const char *keyf)
{
	const char *k1[24] = {"--device",      dev1, "--node-id", "1", "--metaserver",
			      "--meta-listen", ms};
	const char *k2[24] = {"--device", dev2, "--node-id", "2", "--metaserver-addr", ms};
	int n1 = 7, n2 = 6;

	for (const char *const *c =
		 (const char *const[]){"--tenants", "1", "--dcis", "2", "--jobs", "2", "--heap-mb",
				       "2", "--hugepages", "32", NULL};
	     *c; c++)
		k1[n1++] = k2[n2++] = *c;
	if (keyf) {
		k1[n1++] = k2[n2++] = "--cluster-key";
		k1[n1++] = k2[n2++] = keyf;
	} else {
		k1[n1++] = k2[n2++] = "--insecure-metaserver";
	}
	k1[n1] = k2[n2] = NULL;
	struct kp_keeper a, b;
	struct kp_holder h1, h2;
	struct kr_meta_key key;
	uint32_t dctn;

	kp_keeper_init(&a);
	kp_keeper_init(&b);
	CHECK_OK(chmod(a.dir, 0755));
	CHECK_OK(chmod(b.dir, 0755));
	CHECK_OK(kp_keeper_start_bare(&a, k1));
	CHECK_OK(kp_keeper_start_bare(&b, k2));
	if (!keyf)
		CHECK(kp_log_has(
		    &a, "--insecure-metaserver: MetaServer datagrams are not authenticated"));
	h1 = kp_hold(&a);
	h2 = kp_hold(&b);
	CHECK_OK(resolve(&b, 1, &s->dctn1));
	CHECK_OK(resolve(&a, 2, &s->dctn2));

	s->keyed = keyf != NULL;
	CHECK_EQ(sec_as_nobody(attacker, s), 0);
	CHECK_OK(resolve(&b, 1, &dctn)); /* the MetaServer's own row */
	CHECK_EQ(dctn, s->dctn1);
	if (keyf) {
		CHECK_OK(resolve(&a, 2, &dctn)); /* a registered node's row */
		CHECK_EQ(dctn, s->dctn2);
		CHECK_OK(kr_meta_key_load(keyf, &key));
		CHECK(
		    !sealed_register(s, &key, 1, 0x111)); /* sealed, but the MetaServer's own id */
		CHECK_OK(resolve(&b, 1, &dctn));
		CHECK_EQ(dctn, s->dctn1);
		CHECK(sealed_register(s, &key, 4, 0x444)); /* the control */
		CHECK_OK(resolve(&b, 4, &dctn));
		CHECK_EQ(dctn, 0x444);
	} else {
		CHECK_OK(resolve(&b, 3, &dctn));
		CHECK_EQ(dctn, 0x333);
	}
	kp_hold_release(&h1);
	kp_hold_release(&h2);
	CHECK_EQ(kp_keeper_stop(&b, SIGTERM), 0);
	CHECK_EQ(kp_keeper_stop(&a, SIGTERM), 0);
	kp_keeper_fini(&b);
	kp_keeper_fini(&a);
}

int main(void)
{
	static const char *const addrs[] = {"127.0.0.2", "127.0.0.3"};
	char dev1[64], dev2[64], ms[32];
	struct spoof s = {0};
	struct kr_launch me;
	uint16_t port;

	sec_require_root();
	kp_require_hugepages(80);
	port = mp_pick_port(addrs, 2);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.2-3");
	s.mport = (uint16_t)(port + 1);
	snprintf(dev1, sizeof(dev1), "sim:sp1@127.0.0.2:%u", port);
	snprintf(dev2, sizeof(dev2), "sim:sp2@127.0.0.3:%u", port);
	snprintf(ms, sizeof(ms), "127.0.0.2:%u", s.mport);
	CHECK_OK(kr_launch_init(NULL, &me));
	g_tag = me.tag;

	unkeyed_refused("sim:sp0", ms);
	pair(dev1, dev2, ms, &s, kp_cluster_key());
	pair(dev1, dev2, ms, &s, NULL);
	KR_PASS("sec_meta_spoof");
}
