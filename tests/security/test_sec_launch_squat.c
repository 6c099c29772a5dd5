/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_launch_squat: no one without a launch's key can hold its name on a
 * node (issue: another user on the node...; item 3). The launch tag is
 * public (krctl status shows it). Root's launch L has a rank that attaches
 * and leaves; once L's tenant slot is free again, uid 65534 tries to take
 * L's name: an attach carries a launch key and the keeper derives the tag
 * from it, so 20 keys of its own with L's tag written into them give it
 * launches of its own (never L's tag), a job without a key or a lone job
 * with one is refused (EINVAL), L's slot stays free, and L's next rank
 * attaches as before. (Before the tag was a hash of the key, the attacker
 * bound the tag with its key and L's next rank got EPERM; before the keeper
 * derived the tag, an attach named it, and one naming L's tag with another
 * key was refused.)
 *
 * Positive control: uid 65534 attaches with a launch of its own.
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

/* One raw ATTACH with key and flags as given: the reply's status. */
static int attach_flags(const uint8_t *key, uint32_t flags)
{
	struct kr_msg_attach req = {.flags = flags};
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	int fd = kr_msg_connect(K.sock), rc;

	SEC_EXPECT(rep != NULL && fd >= 0);
	memcpy(req.launch_key, key, sizeof(req.launch_key));
	kr_msg_init(&req.hdr, KR_MSG_ATTACH, sizeof(req), 1);
	rc = kr_msg_call(fd, &req, sizeof(req), rep, sizeof(*rep), NULL, 0, NULL);
	if (!rc)
		rc = rep->status;
	SEC_EXPECT(rc || rep->nfds); /* (an accepted one would carry descriptors) */
	close(fd);
	free(rep);
	return rc;
}

/* As uid 65534: try to take L's name (its own launches or refused), then a launch of its own. */
static int attacker(void *arg)
{
	static const uint8_t zero[KR_LAUNCH_KEY_BYTES];
	uint8_t key[KR_LAUNCH_KEY_BYTES];
	uint64_t tag;
	int conn, rc;

	(void)arg;
	for (int i = 0; i < 20; i++) { /* keys of its own, L's public tag inside each */
		randombytes_buf(key, sizeof(key));
		memcpy(key + (i % 4) * 8, &g_tag, sizeof(g_tag));
		rc = sec_attach_launch(K.sock, key, &tag, &conn);
		/* a launch of its own, or none left for it (2 tenant slots besides L's) */
		SEC_EXPECT(rc == 0 || rc == -EDQUOT || rc == -ENOSPC);
		if (!rc) {
			SEC_EXPECT(tag && tag != g_tag);
			close(conn);
		}
	}
	SEC_EXPECT(attach_flags(zero, 0) == -EINVAL); /* a job without a key */
	memcpy(key, &g_tag, sizeof(g_tag));
	SEC_EXPECT(attach_flags(key, KR_ATTACH_F_LONE) == -EINVAL); /* lone, yet a key */
	/* the control: its own launch, once its earlier ones have lingered out */
	for (double t0 = kp_now_ms();; usleep(20000)) {
		rc = sec_attach_launch(K.sock, NULL, &tag, &conn);
		if (rc != -EDQUOT && rc != -ENOSPC)
			break;
		SEC_EXPECT(kp_now_ms() - t0 < 10000);
	}
	SEC_EXPECT(rc == 0 && tag != g_tag);
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
