/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_launch_squat: no one without a launch's key can hold its name on a
 * node (issue: another user on the node...; item 3). The launch tag is
 * public (krctl status shows it). Root's launch L has a rank that attaches
 * and leaves; once L's tenant slot is free again, uid 65534 attaches naming
 * L's tag with a key of its own: refused (EPERM), and L's next rank attaches
 * as before. Before the tag was a hash of the key, the attacker bound the
 * tag with its key and L's next rank got EPERM.
 *
 * Positive control: uid 65534 attaches with a launch of its own (its key,
 * its tag).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "kr_test.h"
#include "sec_fixture.h"

static struct kp_keeper K;
static uint64_t g_tag; /* L's tag, public */

/* Is a tenant slot of K bound to tag (through an observer's copy)? */
static bool launch_bound(uint64_t tag)
{
	struct kr_ctx *obs = kr_job_observe(K.sock);
	bool bound = false;

	CHECK(obs != NULL);
	for (uint32_t i = 0; i < obs->seg->ntenants; i++)
		bound |= kr_seg_tenant(obs->seg, i)->launch_tag == tag;
	kr_detach(obs);
	return bound;
}

/* As uid 65534: squat L's tag (refused), then a launch of its own (fine). */
static int attacker(void *arg)
{
	uint64_t key;
	int conn, rc;

	(void)arg;
	for (int i = 0; i < 20; i++) { /* keys of its own, each refused */
		randombytes_buf(&key, sizeof(key));
		rc = sec_attach_launch(K.sock, g_tag, key, &conn);
		SEC_EXPECT(rc == -EPERM);
	}
	SEC_EXPECT(sec_attach_launch(K.sock, g_tag, 0, &conn) == -EPERM);
	/* the control: its own launch */
	randombytes_buf(&key, sizeof(key));
	rc = sec_attach_launch(K.sock, kr_launch_tag_of(key), key, &conn);
	SEC_EXPECT(rc == 0);
	close(conn);
	return 0;
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "3",		"--dcis", "2",	     "--jobs", "2", "--heap-mb",
	    "2",	 "--hugepages", "32",	  "--group", "65534",  NULL};
	struct kr_ctx *a;
	struct kr_ctx_attr ca;

	CHECK(sodium_init() >= 0);
	sec_keeper_start(&K, args);
	/* L's first rank */
	a = kp_attach(&K, 5000);
	CHECK(a != NULL);
	CHECK_OK(kr_ctx_query(a, &ca));
	g_tag = ca.launch_tag;
	CHECK(launch_bound(g_tag));
	CHECK_OK(kr_detach(a));
	/* L left: its slot is free once it lingered */
	for (double t0 = kp_now_ms(); launch_bound(g_tag); usleep(20000))
		CHECK(kp_now_ms() - t0 < 10000);

	CHECK_EQ(sec_as_nobody(attacker, NULL), 0);
	CHECK(!launch_bound(g_tag));

	/* L's next rank */
	a = kp_attach(&K, 5000);
	if (!a)
		KR_FAIL("L's next rank: %s (its name was taken)", strerror(errno));
	CHECK_OK(kr_detach(a));
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_launch_squat");
}
