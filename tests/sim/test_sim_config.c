/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_config_parse(): the device-name syntax of a simulated host, every
 * option and its units, the connectx4 profile (present, calibrated to the
 * ~49 ms verbs connection it models, overridable key by key), KR_SIM_OPTIONS
 * merged under the device name, and every malformed option refused with
 * -EINVAL (and a zeroed config). Then the same through kr_devx_open().
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "kr_test.h"
#include "sim/sim.h"

static bool cfg_is_zero(const struct sim_config *c)
{
	static const struct sim_config zero;

	return !memcmp(c, &zero, sizeof(zero));
}

static void parse_ok(const char *spec, struct sim_config *c)
{
	int rc = sim_config_parse(spec, c);

	if (rc)
		KR_FAIL("sim_config_parse(\"%s\") = %d, expected 0", spec, rc);
}

static void parse_bad(const char *spec)
{
	struct sim_config c;
	int rc;

	memset(&c, 0xa5, sizeof(c));
	rc = sim_config_parse(spec, &c);
	if (rc != -EINVAL)
		KR_FAIL("sim_config_parse(\"%s\") = %d, expected -EINVAL", spec, rc);
	if (!cfg_is_zero(&c))
		KR_FAIL("sim_config_parse(\"%s\") failed but left the config set", spec);
}

static void test_head(void)
{
	struct sim_config c;
	struct in_addr a;

	parse_ok("pp_a", &c);
	CHECK(!strcmp(c.name, "pp_a"));
	CHECK(!c.has_addr);
	CHECK_EQ(c.udp_port, 4791);
	CHECK(!c.profile[0]);
	for (int i = 0; i < SIM_COST_NCMDS; i++)
		CHECK_EQ(c.cmd_ns[i], 0);
	CHECK_EQ(c.wire_latency_ns + c.wire_bps + c.seed + c.delay_ns, 0);
	CHECK_EQ(c.drop_ppm + c.dup_ppm + c.reorder_ppm + c.delay_ppm + c.corrupt_ppm, 0);

	parse_ok("h1@10.1.2.3", &c);
	CHECK(!strcmp(c.name, "h1"));
	CHECK(c.has_addr);
	inet_pton(AF_INET, "10.1.2.3", &a);
	CHECK_EQ(c.addr.s_addr, a.s_addr);
	CHECK_EQ(c.udp_port, 4791);

	parse_ok("h1@127.0.0.2:5000,drop=0.5", &c);
	CHECK(c.has_addr);
	CHECK_EQ(c.udp_port, 5000);
	CHECK_EQ(c.drop_ppm, 500000);

	/* 59 bytes of name is the most "sim:" + name allows in a 64-byte ctx name */
	parse_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", &c);
	CHECK_EQ(strlen(c.name), 59);
}

static void test_keys(void)
{
	struct sim_config c;
	char spec[128];

	parse_ok("h,drop=0.05,dup=0.1,reorder=0.02,delay=0.01,delay_us=300,corrupt=1,seed=42", &c);
	CHECK_EQ(c.drop_ppm, 50000);
	CHECK_EQ(c.dup_ppm, 100000);
	CHECK_EQ(c.reorder_ppm, 20000);
	CHECK_EQ(c.delay_ppm, 10000);
	CHECK_EQ(c.delay_ns, 300000);
	CHECK_EQ(c.corrupt_ppm, 1000000);
	CHECK_EQ(c.seed, 42);

	parse_ok("h,drop=0,dup=.5,reorder=1e-3", &c);
	CHECK_EQ(c.drop_ppm, 0);
	CHECK_EQ(c.dup_ppm, 500000);
	CHECK_EQ(c.reorder_ppm, 1000);

	parse_ok("h,seed=0xdeadbeefcafef00d", &c);
	CHECK(c.seed == 0xdeadbeefcafef00dull);
	parse_ok("h,seed=18446744073709551615", &c);
	CHECK(c.seed == UINT64_MAX);
	/* the libmlx5 UAR model and BlueFlame (sim_bell.c) */
	CHECK_EQ(c.libmlx5, 0); /* 44 */
	CHECK(!c.no_blueflame);
	parse_ok("h,libmlx5=45,blueflame=0", &c);
	CHECK_EQ(c.libmlx5, 45);
	CHECK(c.no_blueflame);
	parse_ok("h,libmlx5=33,blueflame=1", &c);
	CHECK_EQ(c.libmlx5, 33);
	CHECK(!c.no_blueflame);

	parse_ok("h,wire_latency_ns=1500,wire_gbps=25", &c);
	CHECK_EQ(c.wire_latency_ns, 1500);
	CHECK(c.wire_bps == 25000000000ull);
	parse_ok("h,wire_gbps=12.5", &c);
	CHECK(c.wire_bps == 12500000000ull);

	/* the last of a key wins */
	parse_ok("h,drop=0.1,drop=0.2", &c);
	CHECK_EQ(c.drop_ppm, 200000);

	parse_ok("h,cmd_create_qp_us=2000", &c);
	CHECK_EQ(c.cmd_ns[SIM_COST_CREATE_QP], 2000000);

	/* every command class has a key, and it sets that class only */
	for (int i = 0; i < SIM_COST_NCMDS; i++) {
		const char *n = sim_cost_cmd_name((enum sim_cost_cmd)i);

		CHECK(n != NULL);
		snprintf(spec, sizeof(spec), "h,cmd_%s_us=7", n);
		parse_ok(spec, &c);
		for (int j = 0; j < SIM_COST_NCMDS; j++)
			CHECK_EQ(c.cmd_ns[j], i == j ? 7000 : 0);
	}
	CHECK(sim_cost_cmd_name(SIM_COST_NCMDS) == NULL);
}

static void test_profile(void)
{
	const struct sim_cost_profile *p = sim_cost_profile_find("connectx4");
	struct sim_config c;
	uint64_t conn;

	CHECK(p != NULL);
	CHECK(sim_cost_profile_find("connectx5") == NULL);
	for (int i = 0; i < SIM_COST_NCMDS; i++)
		if (!p->cmd_ns[i])
			KR_FAIL("connectx4 has no value for %s",
				sim_cost_cmd_name((enum sim_cost_cmd)i));
	CHECK(p->wire_latency_ns > 0);
	CHECK(p->wire_bps == 100000000000ull);

	/* one verbs RC connection as KRCore's artifact builds it (~49 ms measured,
	 * of which the QP number exchange is not a firmware command) */
	conn = p->cmd_ns[SIM_COST_OPEN] + 2 * p->cmd_ns[SIM_COST_QUERY_HCA_CAP] +
	       p->cmd_ns[SIM_COST_ALLOC_PD] + 2 * p->cmd_ns[SIM_COST_CREATE_CQ] +
	       p->cmd_ns[SIM_COST_CREATE_QP] + p->cmd_ns[SIM_COST_RST2INIT] +
	       p->cmd_ns[SIM_COST_INIT2RTR] + p->cmd_ns[SIM_COST_RTR2RTS] +
	       3 * p->cmd_ns[SIM_COST_UMEM_REG];
	printf("connectx4: one verbs RC connection = %.2f ms of modelled firmware time\n",
	       conn / 1e6);
	CHECK(conn >= 40000000ull && conn <= 49000000ull);

	parse_ok("h,profile=connectx4", &c);
	CHECK(!strcmp(c.profile, "connectx4"));
	CHECK(!memcmp(c.cmd_ns, p->cmd_ns, sizeof(c.cmd_ns)));
	CHECK_EQ(c.wire_latency_ns, p->wire_latency_ns);
	CHECK(c.wire_bps == p->wire_bps);

	/* individual keys override the profile, wherever they stand */
	parse_ok("h,cmd_create_qp_us=1,profile=connectx4,wire_latency_ns=0", &c);
	CHECK_EQ(c.cmd_ns[SIM_COST_CREATE_QP], 1000);
	CHECK_EQ(c.cmd_ns[SIM_COST_INIT2RTR], p->cmd_ns[SIM_COST_INIT2RTR]);
	CHECK_EQ(c.wire_latency_ns, 0);
	CHECK(c.wire_bps == p->wire_bps);

	parse_ok("h,profile=none", &c);
	CHECK(!c.profile[0]);
	CHECK_EQ(c.cmd_ns[SIM_COST_OPEN], 0);
}

static void test_env(void)
{
	const struct sim_cost_profile *p = sim_cost_profile_find("connectx4");
	struct sim_config c;

	/* appended to every host, the device name wins */
	CHECK_OK(setenv("KR_SIM_OPTIONS", "drop=0.2,seed=7", 1));
	parse_ok("h,drop=0.1", &c);
	CHECK_EQ(c.drop_ppm, 100000);
	CHECK_EQ(c.seed, 7);
	parse_ok("h2@127.0.0.9", &c);
	CHECK_EQ(c.drop_ppm, 200000);
	CHECK(c.has_addr);

	CHECK_OK(setenv("KR_SIM_OPTIONS", "profile=connectx4", 1));
	parse_ok("h,cmd_open_us=5", &c);
	CHECK(!strcmp(c.profile, "connectx4"));
	CHECK_EQ(c.cmd_ns[SIM_COST_OPEN], 5000);
	CHECK_EQ(c.cmd_ns[SIM_COST_CREATE_QP], p->cmd_ns[SIM_COST_CREATE_QP]);
	parse_ok("h,profile=none", &c);
	CHECK(!c.profile[0]);
	CHECK_EQ(c.cmd_ns[SIM_COST_CREATE_QP], 0);

	/* the environment's profile goes first even if a key comes before it there */
	CHECK_OK(setenv("KR_SIM_OPTIONS", "cmd_create_qp_us=3,profile=connectx4", 1));
	parse_ok("h", &c);
	CHECK_EQ(c.cmd_ns[SIM_COST_CREATE_QP], 3000);

	/* a bad environment fails every host */
	CHECK_OK(setenv("KR_SIM_OPTIONS", "bogus=1", 1));
	parse_bad("h");
	CHECK_OK(setenv("KR_SIM_OPTIONS", "", 1));
	parse_ok("h", &c);
	CHECK_OK(unsetenv("KR_SIM_OPTIONS"));
}

static void test_bad(void)
{
	static const char *const bad[] = {
	    "",
	    ",drop=0.1",
	    "@127.0.0.1",
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 60 bytes */
	    "h@",
	    "h@1.2.3",
	    "h@1.2.3.4.5",
	    "h@localhost",
	    "h@::1",
	    "h@1.2.3.4:",
	    "h@1.2.3.4:0",
	    "h@1.2.3.4:65536",
	    "h@1.2.3.4:12x",
	    "h@1.2.3.4:-1",
	    "h,",
	    "h,,drop=0.1",
	    "h,drop",
	    "h,=1",
	    "h,profile",
	    "h,bogus=1",
	    "h,Drop=0.1",
	    "h,drop=1.5",
	    "h,drop=-0.1",
	    "h,drop=abc",
	    "h,drop=nan",
	    "h,drop=inf",
	    "h,drop=",
	    "h,drop= 0.1",
	    "h,drop=0.1x",
	    "h,dup=2",
	    "h,reorder=-1",
	    "h,corrupt=1.0001",
	    "h,delay=0.1", /* no delay_us */
	    "h,delay_us=-1",
	    "h,delay_us=1.5",
	    "h,delay_us=10000001", /* above 10 s */
	    "h,delay_us=99999999999999999999999",
	    "h,seed=-1",
	    "h,libmlx5=32",
	    "h,libmlx5=1000",
	    "h,libmlx5=x",
	    "h,libmlx5=",
	    "h,blueflame=2",
	    "h,blueflame=no",
	    "h,blueflame=",
	    "h,seed=18446744073709551616",
	    "h,seed=0x",
	    "h,seed=12ab",
	    "h,wire_latency_ns=+5",
	    "h,wire_latency_ns=10000000001",
	    "h,wire_gbps=-1",
	    "h,wire_gbps=20000",
	    "h,wire_gbps=1e-12",
	    "h,cmd_bogus_us=1",
	    "h,cmd__us=1",
	    "h,cmd_create_qp=5",
	    "h,cmd_create_qp_ms=5",
	    "h,cmd_create_qp_us=abc",
	    "h,cmd_create_qp_us=-5",
	    "h,cmd_create_qp_us=20000000",
	    "h,profile=connectx5",
	    "h,profile=",
	    "h,profile=CONNECTX4",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_bad(bad[i]);
	CHECK_ERR(sim_config_parse(NULL, &(struct sim_config){0}), -EINVAL);
	CHECK_ERR(sim_config_parse("h", NULL), -EINVAL);
}

/* Through the front door: options ride on the device name, past 63 bytes. */
static void test_open(void)
{
	struct kr_devx_ctx *ctx = NULL;
	const char *spec = "sim:cfg_open_a,seed=12345678901234,drop=0.01,dup=0.02,reorder=0.03,"
			   "delay=0.04,delay_us=250,cmd_create_qp_us=1";
	struct sim_dev *dev;

	CHECK(strlen(spec) > 63);
	CHECK_OK(kr_devx_open(spec, &ctx));
	CHECK(!strcmp(ctx->name, "sim:cfg_open_a"));
	dev = sim_dev_of(ctx);
	CHECK(!strcmp(dev->cfg.name, "cfg_open_a"));
	CHECK(dev->cfg.seed == 12345678901234ull);
	CHECK_EQ(dev->cfg.reorder_ppm, 30000);
	CHECK_EQ(dev->cfg.cmd_ns[SIM_COST_CREATE_QP], 1000);
	kr_devx_close(ctx);

	CHECK_ERR(kr_devx_open("sim:cfg_open_b,bogus=1", &ctx), -EINVAL);
	CHECK(ctx == NULL);
	CHECK_ERR(kr_devx_open("sim:,drop=0.1", &ctx), -EINVAL);
	/* the plain names of before still work */
	CHECK_OK(kr_devx_open("sim:pp_a", &ctx));
	CHECK(!strcmp(ctx->name, "sim:pp_a"));
	kr_devx_close(ctx);
}

int main(void)
{
	CHECK_OK(kr_devx_backend_add(&kr_sim_backend));
	unsetenv("KR_SIM_OPTIONS");
	test_head();
	test_keys();
	test_profile();
	test_env();
	test_bad();
	test_open();
	KR_PASS("test_sim_config");
}
