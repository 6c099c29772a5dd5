/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A keeper on a simulated host with a static peer directory: a job resolves
 * its own node (from its tenant zone, no syscall) and the peers of the file
 * that its launch has (from the node cache), gets -ENOENT for an unknown
 * node and for a node where only another launch is, and a static
 * entry survives kr_dct_invalidate. The node id defaults to the low 16 bits
 * of the GID's IPv4 address.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "pool_fixture.h"
#include "sim_mp.h"

int main(void)
{
	static const char *const addrs[] = {"127.0.0.5"};
	struct kp_keeper k;
	struct kr_dct_rec rec;
	struct kr_launch me;
	struct kr_ctx *ctx;
	char dev[64], peers[160];
	uint8_t gid9[16] = {[10] = 0xff, [11] = 0xff, [12] = 127, [15] = 9};
	uint8_t mac9[6] = {0x02, 0x6b, 0x7f, 0, 0, 9};
	uint16_t port;
	FILE *f;

	kp_require_hugepages(32);
	port = mp_pick_port(addrs, 1);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.5");
	snprintf(dev, sizeof(dev), "sim:dctA@127.0.0.5:%u", port);
	kp_keeper_init(&k);
	snprintf(peers, sizeof(peers), "%s/peers", k.dir);
	f = fopen(peers, "w");
	CHECK(f != NULL);
	CHECK_OK(kr_launch_init(NULL, &me)); /* the tests' launch (KR_LAUNCH_KEY) */
	CHECK(!me.lone);
	fprintf(f,
		"# node gid mac|lid (tag dctn) per launch on the node\n"
		"9 127.0.0.9 02:6b:7f:00:00:09 0x%016llx 0x1234 0x77 0x5678\n"
		"11 ::ffff:127.0.0.11 lid=0x11 0x77 0x99   # another launch only\n",
		(unsigned long long)me.tag);
	fclose(f);
	{
		const char *const a[] = {"--device", dev,   "--tenants", "2", "--dcis",	     "2",
					 "--jobs",   "1",   "--heap-mb", "2", "--hugepages", "64",
					 "--peers",  peers, NULL};

		CHECK_OK(kp_keeper_start(&k, a));
	}
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);

	/* own node: the node id comes from 127.0.0.5, the record from the tenant zone */
	CHECK_OK(kr_dct_resolve(ctx, 0xffffffffu, &rec));
	CHECK_EQ(rec.node_id, 5);
	CHECK_EQ(rec.tenant, ctx->tenant);
	CHECK_EQ(rec.dctn, ctx->zone->dctn);
	CHECK(rec.tag == me.tag);
	CHECK(!memcmp(&rec.addr, &ctx->zone->port.addr, sizeof(rec.addr)));
	CHECK_EQ(ctx->zone->port.gid_index, 3); /* the sim port's RoCE v2 IPv4 entry */
	CHECK_EQ(kp_krctl_json(&k, "status", "gid_index", -1), 3);
	memset(&rec, 0, sizeof(rec));
	CHECK_OK(kr_dct_resolve(ctx, 5, &rec));
	CHECK_EQ(rec.dctn, ctx->zone->dctn);

	/* static peers: the pairs of this job's launch only */
	CHECK_OK(kr_dct_resolve(ctx, 9, &rec));
	CHECK_EQ(rec.node_id, 9);
	CHECK_EQ(rec.dctn, 0x1234);
	CHECK(rec.tag == me.tag);
	CHECK(!memcmp(rec.addr.gid, gid9, 16));
	CHECK(!memcmp(rec.addr.mac, mac9, 6));
	CHECK_EQ(rec.addr.lid, 0);
	CHECK_ERR(kr_dct_resolve(ctx, 11, &rec), -ENOENT);
	CHECK_ERR(kr_dct_resolve(ctx, 12, &rec), -ENOENT);
	CHECK_ERR(kr_dct_resolve(ctx, 0, &rec), -EINVAL);
	CHECK_ERR(kr_dct_resolve(NULL, 9, &rec), -EINVAL);
	/* a static entry has nothing to be refreshed from: it stays */
	kr_dct_invalidate(ctx, 9);
	CHECK_OK(kr_dct_resolve(ctx, 9, &rec));

	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);

	/* a bad peers file stops the keeper at start with a message */
	for (int i = 0; i < 7; i++) {
		static const char *const bad[] = {
		    "9 not-a-gid 02:00:00:00:00:01 1 2\n", "9 127.0.0.9 02:00:00:00:00:01 0x12\n",
		    "9 127.0.0.9 02:00:00:00:00:01 0 0x12\n",
		    "9 127.0.0.9 02:00:00:00:00:01 0x12 0x1000000\n",
		    "9 127.0.0.9 0x12 0x34\n",		   /* no MAC or LID */
		    "9 127.0.0.9 02:00:00:00:01 0x12 0x34\n", /* a short MAC */
		    "9 127.0.0.9 lid=0xc000 0x12 0x34\n"};	   /* a multicast LID */
		const char *const a[] = {"--device", dev,   "--tenants", "1", "--dcis",	     "2",
					 "--jobs",   "1",   "--heap-mb", "2", "--hugepages", "64",
					 "--peers",  peers, NULL};

		f = fopen(peers, "w");
		CHECK(f != NULL);
		fputs(bad[i], f);
		fclose(f);
		CHECK(kp_keeper_start(&k, a) > 0);
	}
	kp_keeper_fini(&k);
	KR_PASS("dct_self_peers");
}
