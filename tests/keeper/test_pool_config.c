/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keeper configuration: defaults are valid, every bad value is refused with a
 * message naming the key, the file format (comments, blanks, bad lines) and
 * the hugepage budget check. No keeper, no hugepages needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kr_test.h"
#include "job/job.h"
#include "keeper/keeper.h"

static void expect_bad(const char *key, const char *val, const char *msg_part)
{
	struct kr_keeper_cfg c;
	char err[256] = "";
	int rc;

	kr_keeper_cfg_default(&c);
	rc = kr_keeper_cfg_set(&c, key, val, err, sizeof(err));
	if (!rc)
		rc = kr_keeper_cfg_check(&c, err, sizeof(err));
	if (rc != -EINVAL)
		KR_FAIL("%s = %s accepted", key, val);
	if (!strstr(err, msg_part))
		KR_FAIL("%s = %s: message '%s' lacks '%s'", key, val, err, msg_part);
}

int main(void)
{
	struct kr_keeper_cfg c;
	char err[256], path[] = "/tmp/krcfg.XXXXXX";
	FILE *f;
	int fd;

	unsetenv("KR_KEEPER_SOCKET");
	kr_keeper_cfg_default(&c);
	CHECK_OK(kr_keeper_cfg_check(&c, err, sizeof(err)));
	CHECK(!strcmp(c.socket, KR_POOL_DEFAULT_SOCKET));
	setenv("KR_KEEPER_SOCKET", "/tmp/x.sock", 1);
	kr_keeper_cfg_default(&c);
	CHECK(!strcmp(c.socket, "/tmp/x.sock"));

	CHECK_EQ(c.group, -1); /* default: the keeper's own group */
	CHECK_OK(kr_keeper_cfg_set(&c, "group", "root", err, sizeof(err)));
	CHECK_EQ(c.group, 0);
	CHECK_OK(kr_keeper_cfg_set(&c, "group", "65534", err, sizeof(err)));
	CHECK_EQ(c.group, 65534);
	CHECK(!c.trusted); /* hardware needs the operator's word */
	CHECK_OK(kr_keeper_cfg_set(&c, "trusted", "true", err, sizeof(err)));
	CHECK(c.trusted);
	expect_bad("trusted", "maybe", "true or false");
	CHECK_EQ(c.gid_index, -1); /* default: chosen from the GID table */
	CHECK_OK(kr_keeper_cfg_set(&c, "gid-index", "3", err, sizeof(err)));
	CHECK_EQ(c.gid_index, 3);
	expect_bad("gid-index", "256", "0..255");
	expect_bad("gid-index", "-1", "not a number");
	CHECK_EQ(c.traffic_class, 0);
	CHECK_EQ(c.priority, 0);
	CHECK_OK(kr_keeper_cfg_set(&c, "traffic-class", "184", err, sizeof(err)));
	CHECK_OK(kr_keeper_cfg_set(&c, "priority", "15", err, sizeof(err)));
	CHECK_EQ(c.traffic_class, 184);
	CHECK_EQ(c.priority, 15);
	expect_bad("traffic-class", "256", "0..255");
	expect_bad("priority", "16", "0..15");
	expect_bad("priority", "x", "not a number");
	expect_bad("group", "no-such-group-krcore", "no group named");
	expect_bad("group", "", "no group named");
	expect_bad("group", "4294967296", "no group named");
	expect_bad("tenants", "0", "tenants");
	expect_bad("tenants", "65", "tenants");
	expect_bad("dcis", "0", "dcis");
	expect_bad("dcis", "-1", "not a number");
	expect_bad("dcis", "4x", "not a number");
	expect_bad("jobs", "0", "jobs");
	expect_bad("heap-mb", "3", "heap-mb");
	expect_bad("heap-mb", "128", "heap-mb");
	expect_bad("warm-heaps", "65", "warm-heaps");
	expect_bad("rc-spares", "1000", "rc-spares");
	expect_bad("vqps", "5000", "vqps");
	expect_bad("hugepages", "8", "hugepages");
	expect_bad("low-water", "100", "low-water");
	expect_bad("dcis-max", "4", "dcis-max"); /* below dcis (8) */
	expect_bad("dcis-max", "257", "dcis-max");
	expect_bad("rc-max", "1", "rc-max"); /* below rc-spares (2) */
	expect_bad("rc-max", "65", "rc-max");
	expect_bad("socket", "", "socket");
	expect_bad("base-virtaddr", "0x1234", "base-virtaddr");
	expect_bad("tenant.70.uid", "5", "tenant.");
	expect_bad("tenant.3.uid", "5", "only 2 tenants");
	expect_bad("colour", "blue", "unknown key");
	expect_bad("foreground", "maybe", "foreground");

	/* growth: slots for the max, counted in the hugepage budget */
	kr_keeper_cfg_default(&c);
	CHECK_EQ(kr_keeper_cfg_dci_slots(&c), c.dcis); /* no growth by default */
	CHECK_EQ(kr_keeper_cfg_rc_slots(&c), c.rc_spares);
	{
		uint64_t base = kr_keeper_cfg_hugepage_bytes(&c);

		CHECK_OK(kr_keeper_cfg_set(&c, "dcis-max", "256", err, sizeof(err)));
		CHECK_OK(kr_keeper_cfg_set(&c, "rc-max", "8", err, sizeof(err)));
		CHECK_OK(kr_keeper_cfg_check(&c, err, sizeof(err)));
		CHECK_EQ(kr_keeper_cfg_dci_slots(&c), 256);
		CHECK_EQ(kr_keeper_cfg_rc_slots(&c), 8);
		CHECK(kr_keeper_cfg_hugepage_bytes(&c) > base);
	}

	/* 64 DCIs over 4 tenants fits the default budget */
	kr_keeper_cfg_default(&c);
	CHECK_OK(kr_keeper_cfg_set(&c, "tenants", "4", err, sizeof(err)));
	CHECK_OK(kr_keeper_cfg_set(&c, "dcis", "16", err, sizeof(err)));
	CHECK_OK(kr_keeper_cfg_check(&c, err, sizeof(err)));
	printf("4 tenants x 16 DCIs, 8 jobs x 4 MB heaps: %llu MB of hugepages at start\n",
	       (unsigned long long)(kr_keeper_cfg_hugepage_bytes(&c) >> 20));
	/* heaps are not reserved at start: more jobs or bigger heaps cost nothing there */
	{
		uint64_t before = kr_keeper_cfg_hugepage_bytes(&c);

		CHECK_OK(kr_keeper_cfg_set(&c, "heap-mb", "64", err, sizeof(err)));
		CHECK_OK(kr_keeper_cfg_set(&c, "jobs", "64", err, sizeof(err)));
		CHECK_OK(kr_keeper_cfg_check(&c, err, sizeof(err)));
		CHECK_EQ(kr_keeper_cfg_hugepage_bytes(&c), before);
		/* at start each (free) tenant keeps one heap warm, or none */
		CHECK_OK(kr_keeper_cfg_set(&c, "warm-heaps", "0", err, sizeof(err)));
		CHECK_EQ(kr_keeper_cfg_hugepage_bytes(&c), before - 4 * KR_HEAP_FIRST);
	}

	/* two tenants cannot pin the same uid */
	kr_keeper_cfg_default(&c);
	CHECK_OK(kr_keeper_cfg_set(&c, "tenant.0.uid", "1000", err, sizeof(err)));
	CHECK_OK(kr_keeper_cfg_set(&c, "tenant.1.uid", "1000", err, sizeof(err)));
	CHECK_ERR(kr_keeper_cfg_check(&c, err, sizeof(err)), -EINVAL);

	/* the file */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	CHECK(f != NULL);
	fprintf(f, "# keeper\n\ntenants = 3   # three\ndcis=5\n  device = sim:cfgtest\n"
		   "tenant.2.uid = 4242\n");
	fclose(f);
	kr_keeper_cfg_default(&c);
	CHECK_OK(kr_keeper_cfg_load(&c, path, err, sizeof(err)));
	CHECK_EQ(c.tenants, 3);
	CHECK_EQ(c.dcis, 5);
	CHECK(!strcmp(c.device, "sim:cfgtest"));
	CHECK_EQ(c.tenant_uid[2], 4243);
	CHECK_OK(kr_keeper_cfg_check(&c, err, sizeof(err)));
	f = fopen(path, "w");
	CHECK(f != NULL);
	fprintf(f, "tenants = 2\nthis line is wrong\n");
	fclose(f);
	CHECK_ERR(kr_keeper_cfg_load(&c, path, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, ":2:") != NULL);
	unlink(path);
	CHECK_ERR(kr_keeper_cfg_load(&c, path, err, sizeof(err)), -ENOENT);
	KR_PASS("pool_config");
}
