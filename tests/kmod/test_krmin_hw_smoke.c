/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_krmin_hw_smoke (in the qemu guest, krmin.ko loaded): the operator's
 * first command, scripts/hw-smoke.sh --sim, run where kmod-min is: its
 * report says "mode: kmod", node 1's keeper says it fences its DCIs through
 * the module (node 2's, a second keeper on the machine, runs trusted as the
 * module keeps one keeper) and every step passes — devices, keepers, a
 * region served on node 2 read, written and CASed by hello_krcore on node 1.
 * The script, the tools and the examples come into the guest as a source
 * and a build tree under /krsmoke, bash at its own path (meson:
 * KRMIN_GUEST_FILES). On the host without the module
 * test_hw_smoke_sim runs the same script in trusted mode.
 */
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"

#define REPORT "/tmp/hw-smoke-report.txt"

/* The guest's loopback up: the sim hosts talk UDP on 127.0.0.2 and .3. */
static void loopback_up(void)
{
	struct ifreq ifr = {0};
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	CHECK(s >= 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	CHECK_OK(ioctl(s, SIOCGIFFLAGS, &ifr));
	ifr.ifr_flags |= IFF_UP;
	CHECK_OK(ioctl(s, SIOCSIFFLAGS, &ifr));
	close(s);
}

/* Does a line of the report hold needle (at its start, when start)? */
static bool report_has_at(const char *needle, bool start)
{
	char line[1024];
	FILE *f = fopen(REPORT, "r");
	bool found = false;

	while (f && fgets(line, sizeof(line), f)) {
		const char *at = strstr(line, needle);

		found |= at && (!start || at == line);
	}
	if (f)
		fclose(f);
	return found;
}

static bool report_has(const char *needle)
{
	return report_has_at(needle, false);
}

int main(void)
{
	char cmd[1024];
	int rc;

	if (access("/dev/krmin", F_OK))
		KR_SKIP("no /dev/krmin: runs in the kmod suite's qemu guest");
	loopback_up();
	setenv("KR_SMOKE_REPORT", REPORT, 1);
	snprintf(cmd, sizeof(cmd), "%s %s --sim %s", KR_BASH, KR_HW_SMOKE, KR_BUILD_DIR);
	rc = system(cmd);
	CHECK(rc != -1);
	if (!report_has("mode: kmod") || !report_has("PASS: every step"))
		system("cat " REPORT);
	CHECK_EQ(WEXITSTATUS(rc), 0);
	CHECK(report_has("mode: kmod (kmod-min fences the queues"));
	/* krctl status of each keeper, unindented: node 1 holds the module,
	 * node 2 (the machine's second keeper) runs trusted */
	CHECK(report_has_at("mode: kmod (kmod-min fences", true));
	CHECK(report_has_at("mode: trusted (no kmod-min", true));
	CHECK(report_has("PASS: every step"));
	printf("hw_smoke: scripts/hw-smoke.sh --sim with kmod-min: mode kmod, every step passed\n");
	KR_PASS("test_krmin_hw_smoke");
}
