/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_scribble: no bytes a job writes where it may write can crash or stall
 * the keeper or reach another job. A job of uid 65534 (a tenant of its own)
 * holds two DCI leases and, for several seeds, writes random and boundary
 * values over everything it maps writable (its zone's DCI rings, CQs and
 * doorbell records, its heap, its UAR page) and rings the doorbell, while a
 * root job WRITEs and READs through a DCI of its own and checks every byte.
 * Afterwards the keeper still serves: the attacker's slot is reclaimed and
 * usable again, and root's data is right.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"

#define SEEDS	  6u
#define ROUND_MS  250.0
#define MAX_PAGES KR_ATTACH_MAX_REGIONS

static struct kp_keeper K;

/* One 8-byte value: random, or one of the values that break bounds. */
static uint64_t nasty(uint64_t *s)
{
	static const uint64_t edge[] = {0,
					1,
					0x7f,
					0xff,
					0xffff,
					0x10000,
					0x7fffffff,
					0x80000000,
					0xffffffff,
					0x100000000ull,
					0x7fffffffffffffffull,
					0x8000000000000000ull,
					~0ull};
	uint64_t r = sec_rnd(s);

	return r & 1 ? sec_rnd(s) : edge[(r >> 1) % (sizeof(edge) / sizeof(edge[0]))];
}

/* What a sim doorbell does (struct sim_bell: seq at 8): bump, wake the engine. */
static void ring(uint8_t *bell)
{
	__atomic_fetch_add((uint32_t *)(bell + 8), 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, (uint32_t *)(bell + 8), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static int attacker(void *arg)
{
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	uint8_t *page[MAX_PAGES], *bell;
	unsigned int nfds = 0, np = 0;
	uint64_t writes = 0;
	int conn;

	(void)arg;
	SEC_EXPECT(rep != NULL);
	conn = sec_attach_raw(K.sock, rep, fds, &nfds, 0);
	SEC_EXPECT(conn >= 0);
	for (uint32_t i = 0; i < 2; i++) {
		struct kr_msg_lease req = {.kind = KR_SLOT_DCI};
		struct kr_msg_reply lrep;

		kr_msg_init(&req.hdr, KR_MSG_LEASE, sizeof(req), 2 + i);
		SEC_EXPECT(
		    kr_msg_call(conn, &req, sizeof(req), &lrep, sizeof(lrep), NULL, 0, NULL) == 0 &&
		    lrep.status == 0);
	}
	for (uint32_t i = 0; i < rep->nregions; i++) {
		const struct kr_msg_region *g = &rep->region[i];

		if (!(g->prot & PROT_WRITE))
			continue;
		page[np] = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[g->fd_index],
				(off_t)g->off);
		SEC_EXPECT(page[np] != MAP_FAILED);
		np++;
	}
	bell = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[rep->uar_fd_index], 0);
	SEC_EXPECT(bell != MAP_FAILED && np > 0);

	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		uint64_t s = seed * 0x9e3779b97f4a7c15ull;
		double t0 = kp_now_ms();

		while (kp_now_ms() - t0 < ROUND_MS) {
			/* a burst of 8-byte stores at random places, then a doorbell */
			for (int n = 0; n < 256; n++) {
				uint64_t r = sec_rnd(&s);
				uint8_t *p = page[r % np] + ((r >> 16) % (KR_POOL_PAGE / 8)) * 8;
				uint64_t v = nasty(&s);

				memcpy(p, &v, 8);
				writes++;
			}
			if (seed % 3 == 0) /* whole pages of one value now and then */
				memset(page[sec_rnd(&s) % np], (int)(sec_rnd(&s) & 0xff),
				       KR_POOL_PAGE);
			ring(bell);
			if ((sec_rnd(&s) & 15) == 0) { /* and over the UAR page too */
				for (uint32_t b = 0; b < 4096; b += 8) {
					uint64_t v = nasty(&s);

					memcpy(bell + b, &v, 8);
				}
			}
		}
	}
	printf("attacker: %llu stores over %u pages, %u seeds\n", (unsigned long long)writes, np,
	       SEEDS);
	fflush(stdout);
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	close(conn); /* the keeper reclaims the job and resets its DCIs */
	free(rep);
	return 0;
}

static int comeback(void *arg)
{
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 0;
	int conn = -1;

	(void)arg;
	SEC_EXPECT(rep != NULL);
	conn = sec_attach_raw(K.sock, rep, fds, &nfds, 5000);
	SEC_EXPECT(conn >= 0);
	close(conn);
	return 0;
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "2",		"--dcis", "4",	     "--jobs", "1", "--heap-mb",
	    "2",	 "--hugepages", "32",	  "--group", "65534",  NULL};
	struct sec_victim v;

	sec_keeper_start(&K, args);
	sec_victim_start(&v, &K);
	CHECK_EQ(sec_victim_until_exit(&v, sec_spawn_nobody(attacker, NULL)), 0);
	CHECK_EQ(kill(K.pid, 0), 0);
	printf("root job: %u rounds of WRITE+READ verified during the scribbling\n", v.rounds);
	fflush(stdout);

	/* the keeper reclaims the attacker's slot and serves it again */
	CHECK_EQ(sec_as_nobody(comeback, NULL), 0);
	sec_victim_round(&v, 10);
	sec_victim_stop(&v);
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_scribble");
}
