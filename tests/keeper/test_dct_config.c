/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit: the keeper's DC metadata options (node-id, peers, metaserver, max-nodes,
 * meta-listen, metaserver-addr) through kr_keeper_cfg_set, as flags and config
 * file keys, and the MetaServer table in the hugepage budget.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "job/job.h"
#include "keeper/keeper.h"

static int set(struct kr_keeper_cfg *c, const char *k, const char *v)
{
	char err[256] = "";
	int rc = kr_keeper_cfg_set(c, k, v, err, sizeof(err));

	if (rc)
		CHECK(strstr(err, k) != NULL); /* the message names the key */
	return rc;
}

/* The MetaServer list's order: self, answering replicas nearest first (1.5x to pass), down last. */
static void meta_order(void)
{
	struct kr_meta_peer p[5] = {
	    {.rtt_ns = 300000}, /* 0: live, 300 us */
	    {.self = true},	/* 1: this keeper's own table */
	    {.rtt_ns = 250000}, /* 2: live, 250 us: not 1.5x nearer than 0 */
	    {.rtt_ns = 90000, .misses = KR_META_DOWN_MISSES}, /* 3: down */
	    {0},					      /* 4: never answered */
	};
	uint32_t prev[5] = {0, 1, 2, 3, 4}, order[5];

	kr_meta_order(p, 5, prev, order);
	CHECK_EQ(order[0], 1);
	CHECK_EQ(order[1], 0); /* kept ahead of 2: jitter does not reorder */
	CHECK_EQ(order[2], 2);
	CHECK_EQ(order[3], 3);
	CHECK_EQ(order[4], 4);
	p[2].rtt_ns = 150000; /* now 2x nearer */
	memcpy(prev, order, sizeof(prev));
	kr_meta_order(p, 5, prev, order);
	CHECK_EQ(order[0], 1);
	CHECK_EQ(order[1], 2);
	CHECK_EQ(order[2], 0);
	p[3].misses = 0; /* back, and the nearest */
	memcpy(prev, order, sizeof(prev));
	kr_meta_order(p, 5, prev, order);
	CHECK_EQ(order[1], 3);
	p[2].misses = KR_META_DOWN_MISSES; /* goes down: behind every live one */
	memcpy(prev, order, sizeof(prev));
	kr_meta_order(p, 5, prev, order);
	CHECK_EQ(order[0], 1);
	CHECK_EQ(order[1], 3);
	CHECK_EQ(order[2], 0);
	CHECK(order[3] == 2 || order[3] == 4);
}

int main(void)
{
	struct kr_keeper_cfg c;
	uint64_t plain, ms;
	char err[256];

	kr_keeper_cfg_default(&c);
	CHECK_EQ(c.node_id, 0);
	CHECK(!c.metaserver);
	CHECK_OK(set(&c, "node-id", "42"));
	CHECK_EQ(c.node_id, 42);
	CHECK_ERR(set(&c, "node-id", "0"), -EINVAL);
	CHECK_ERR(set(&c, "node-id", "-3"), -EINVAL);
	CHECK_ERR(set(&c, "node-id", "4294967295"), -EINVAL);
	CHECK_ERR(set(&c, "node-id", "x"), -EINVAL);
	CHECK_OK(set(&c, "peers", "/etc/krcore/peers"));
	CHECK(!strcmp(c.peers, "/etc/krcore/peers"));
	CHECK_ERR(set(&c, "peers", ""), -EINVAL);
	CHECK_OK(set(&c, "max-nodes", "10001"));
	CHECK_EQ(c.max_nodes, 10001);
	CHECK_ERR(set(&c, "max-nodes", "1"), -EINVAL);
	CHECK_ERR(set(&c, "max-nodes", "2000000"), -EINVAL);
	CHECK_OK(set(&c, "meta-listen", "127.0.0.2:4792"));
	CHECK_ERR(set(&c, "meta-listen", "127.0.0.2"), -EINVAL);
	CHECK_ERR(set(&c, "meta-listen", "host:4792"), -EINVAL);
	CHECK_ERR(set(&c, "meta-listen", "127.0.0.2:0"), -EINVAL);
	CHECK_OK(set(&c, "metaserver-addr", "127.0.0.2:4792,127.0.0.4:4792"));
	CHECK_ERR(set(&c, "metaserver-addr", "127.0.0.2:4792,nope"), -EINVAL);
	CHECK_ERR(set(&c, "metaserver-addr", "1.1.1.1:1,1.1.1.1:2,1.1.1.1:3,1.1.1.1:4,1.1.1.1:5"),
		  -EINVAL);
	CHECK(!strcmp(c.meta_addr, "127.0.0.2:4792,127.0.0.4:4792"));
	CHECK_ERR(set(&c, "metaserver", "maybe"), -EINVAL);
	CHECK(!c.insecure_meta);
	CHECK_OK(set(&c, "insecure-metaserver", "true"));
	CHECK(c.insecure_meta);
	CHECK_ERR(set(&c, "insecure-metaserver", "maybe"), -EINVAL);
	CHECK_OK(set(&c, "insecure-metaserver", "false"));

	/* the table counts in the hugepage budget, one slot per node and tenant */
	plain = kr_keeper_cfg_hugepage_bytes(&c);
	CHECK_OK(set(&c, "metaserver", "true"));
	ms = kr_keeper_cfg_hugepage_bytes(&c);
	CHECK(ms >= plain + (uint64_t)c.tenants * 10001 * sizeof(struct kr_dct_slot));
	CHECK_OK(kr_keeper_cfg_check(&c, err, sizeof(err)));
	meta_order();
	KR_PASS("dct_config");
}
