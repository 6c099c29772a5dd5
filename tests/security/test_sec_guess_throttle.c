/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_guess_throttle: a job of uid 65534 guesses memory keys as fast as it
 * can (a READ with a random rkey, the error, a fresh vQP, again). Each
 * failure breaks its DCI, and the keeper counts the DCIs that come back in
 * error against it (keeper_guard.c): after KR_POOL_ERR_BURST errors its lease
 * requests are refused (-EBUSY) for a while, and after KR_POOL_ERR_DETACH
 * throttles it is detached (-ENOTCONN). A root job's WRITEs and READs stay
 * right all along, and the attacker's errors stay within the budget
 * (burst + rate x time).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../job/virtqp/vq_fixture.h"
#include "kr_test.h"
#include "sec_fixture.h"

#define ATTACK_MS 60000

static struct kp_keeper K;

struct result {
	uint32_t errors; /* guesses that failed */
	uint32_t hits;	 /* guesses that completed (its own heap, by chance) */
	uint32_t busy;	 /* -EBUSY seen: throttled */
	uint32_t first_busy_errors;
	uint32_t detached;
	int other; /* an unexpected errno */
	double ms; /* from the first guess to the detach */
};

static struct result *g_res;
static int g_go[2]; /* root -> attacker: start (forked before root attaches) */

/* What the keeper's answer means for the loop: 1 go on, 0 stop (detached or failed). */
static int outcome(int err)
{
	if (err == EBUSY) {
		if (!g_res->busy++)
			g_res->first_busy_errors = g_res->errors;
		usleep(20000);
		return 1;
	}
	if (err == ENOTCONN || err == EPIPE) {
		g_res->detached = 1;
		return 0;
	}
	if (err == EAGAIN || err == ENOSPC) {
		usleep(1000);
		return 1;
	}
	g_res->other = err;
	return 0;
}

static int attacker(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	struct kr_ctx *ctx;
	double t0;
	uint8_t *buf;
	char c;

	(void)arg;
	close(g_go[1]);
	SEC_EXPECT(read(g_go[0], &c, 1) == 1);
	ctx = kp_attach(&K, 5000);
	SEC_EXPECT(ctx != NULL);
	t0 = kp_now_ms();
	buf = kr_malloc(ctx, 64);
	SEC_EXPECT(buf != NULL);
	while (kp_now_ms() - t0 < ATTACK_MS) {
		struct kr_vqp *v = kr_connect(ctx, KR_NODE_SELF, NULL);
		uint64_t r = sec_rnd(&seed);
		struct kr_wc wc;
		int rc, go = 1;

		if (!v) {
			if (!outcome(errno))
				break;
			continue;
		}
		rc = kr_post_read(v, buf, 8, KR_POOL_BASE_VA + (r >> 40 << 12), (uint32_t)r, 1, 0);
		if (!rc) {
			rc = vq_wait(v, &wc, 1);
			if (rc == 1)
				g_res->errors += wc.status != KR_WC_SUCCESS,
				    g_res->hits += wc.status == KR_WC_SUCCESS;
			else if (rc < 0)
				go = outcome(-rc);
		} else if (rc == -EAGAIN) { /* the DCI recovers on the next poll */
			rc = kr_poll(v, &wc, 1);
			if (rc < 0)
				go = outcome(-rc);
		} else {
			go = outcome(-rc);
		}
		kr_disconnect(v);
		if (!go)
			break;
	}
	g_res->ms = kp_now_ms() - t0;
	kr_detach(ctx);
	return 0;
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "2",		"--dcis", "8",	     "--jobs", "2", "--heap-mb",
	    "2",	 "--hugepages", "32",	  "--group", "65534",  NULL};
	struct sec_victim v;
	char line[256];
	bool logged = false;
	uint32_t budget;
	FILE *log;
	pid_t pid;

	sec_keeper_start(&K, args);
	g_res =
	    mmap(NULL, sizeof(*g_res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(g_res != MAP_FAILED);
	memset(g_res, 0, sizeof(*g_res));
	CHECK_OK(pipe(g_go));
	pid = sec_spawn_nobody(attacker, NULL); /* before this process attaches */
	close(g_go[0]);
	sec_victim_start(&v, &K);
	CHECK_EQ(write(g_go[1], "g", 1), 1);
	close(g_go[1]);
	CHECK_EQ(sec_victim_until_exit(&v, pid), 0);
	printf("attacker: %u failed guesses, %u hits on its own heap, first -EBUSY after %u "
	       "errors, %u -EBUSY, detached %s after %.0f ms; root job: %u rounds verified\n",
	       g_res->errors, g_res->hits, g_res->first_busy_errors, g_res->busy,
	       g_res->detached ? "yes" : "no", g_res->ms, v.rounds);
	CHECK_EQ(g_res->other, 0);
	CHECK(g_res->busy > 0);
	CHECK(g_res->detached);
	/* throttled no later than its burst (plus what was in flight and the refill) */
	CHECK(g_res->first_busy_errors >= KR_POOL_ERR_BURST / 2);
	budget = KR_POOL_ERR_BURST + (uint32_t)(g_res->ms / 1000.0 * KR_POOL_ERR_RATE) + 64;
	CHECK(g_res->errors <= budget);
	CHECK_EQ(kill(K.pid, 0), 0);
	sec_victim_round(&v, 10);

	log = fopen(K.log, "r");
	while (log && fgets(line, sizeof(line), log))
		logged |= strstr(line, "detached after") != NULL;
	if (log)
		fclose(log);
	CHECK(logged);

	sec_victim_stop(&v);
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_guess_throttle");
}
