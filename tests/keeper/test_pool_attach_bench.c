/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `krbench attach --json` runs 1,000 attach/detach cycles against a keeper it
 * starts on the sim and prints p50_us and p99_us. The test checks the run
 * succeeds and the JSON carries both numbers (timing never decides the
 * outcome); the numbers go to the log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kr_test.h"
#include "pool_fixture.h"

static double field(const char *json, const char *name)
{
	const char *p = strstr(json, name);

	if (!p)
		KR_FAIL("no %s in %s", name, json);
	p = strchr(p, ':');
	CHECK(p != NULL);
	return strtod(p + 1, NULL);
}

int main(void)
{
	const char *argv[] = {kp_tool("KRBENCH"), "attach",	      "-n", "1000", "--json",
			      "--krpoold",	  kp_tool("KRPOOLD"), NULL};
	char out[1024];
	double p50, p99;

	kp_require_hugepages(16);
	CHECK_EQ(kp_run(argv, out, sizeof(out), 120), 0);
	printf("%s", out);
	p50 = field(out, "\"p50_us\"");
	p99 = field(out, "\"p99_us\"");
	CHECK(p50 > 0 && p99 >= p50);
	CHECK_EQ((int)field(out, "\"cycles\""), 1000);
	KR_PASS("pool_attach_bench");
}
