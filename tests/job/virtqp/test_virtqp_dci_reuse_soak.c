/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dci_reuse_soak: a DCI is right for its next holder whatever its last one
 * did with it. A keeper with 2 DCIs; 100 lease cycles (a thread's first
 * connect leases a DCI, its last disconnect gives it back and the keeper
 * resets it) with completion counts around every CQ boundary (the DCI CQ has
 * 256 entries): 1, 255, 256, 257, 511, 512, 513, 4096, 10000. Every READ's
 * bytes are checked. Some cycles disconnect with requests still in flight;
 * odd cycles run on a second thread, so a DCI given back by one thread is
 * leased next by another. Before the fix, the reset rewound the CQ consumer
 * index of a DCI that had carried more than 512 completions, the device then
 * dropped every CQE of the next holder as an overrun and it timed out.
 *
 * Twice: once with every DCI given back to the keeper at its thread's last
 * disconnect (the keeper's reset path), once with the process keeping idle
 * DCIs for its next thread (the hand-over path: only DCIs with requests left
 * in flight go back to the keeper).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define WORDS	 1024u
#define CYCLES	 100u
#define INFLIGHT 8u /* the vQP's default credits (32 WQEBBs) hold 16 READs */

static const uint32_t counts[] = {1, 255, 256, 257, 511, 512, 513, 4096, 10000};

struct cycle {
	struct kr_ctx *ctx;
	uint64_t *src; /* READ source: word i holds word_val(i) */
	uint64_t *dst; /* READ targets, one per request in flight */
	uint32_t rkey;
	uint32_t n;	     /* READs to complete */
	bool leave_inflight; /* disconnect with requests outstanding */
	int rc;
	uint64_t reads;
};

static uint64_t word_val(uint32_t i)
{
	return 0x9e3779b97f4a7c15ull * (i + 1);
}

/* One lease cycle: connect (leases the thread's DCI), n READs, disconnect. */
static void *run_cycle(void *p)
{
	struct cycle *c = p;
	struct kr_vqp *v = kr_connect(c->ctx, KR_NODE_SELF, NULL);
	uint32_t posted = 0, done = 0;

	c->rc = -1;
	if (!v) {
		fprintf(stderr, "connect: %s\n", strerror(errno));
		return NULL;
	}
	while (done < c->n) {
		struct kr_wc wc[INFLIGHT];
		int got;

		while (posted < c->n && posted - done < INFLIGHT) {
			uint32_t w = posted % WORDS;

			c->dst[posted % INFLIGHT] = 0;
			if (kr_post_read(v, &c->dst[posted % INFLIGHT], 8, (uintptr_t)&c->src[w],
					 c->rkey, posted, 0))
				return NULL;
			posted++;
		}
		got = vq_wait(v, wc, 1);
		if (got != 1) {
			fprintf(stderr, "READ %u of %u: no completion (%d)\n", done, c->n, got);
			return NULL;
		}
		if (wc[0].status != KR_WC_SUCCESS || wc[0].wr_id != done) {
			fprintf(stderr, "READ %u: status %u wr_id %llu\n", done, wc[0].status,
				(unsigned long long)wc[0].wr_id);
			return NULL;
		}
		if (c->dst[done % INFLIGHT] != word_val(done % WORDS)) {
			fprintf(stderr, "READ %u: wrong bytes\n", done);
			return NULL;
		}
		done++;
		c->reads++;
	}
	if (c->leave_inflight) {
		/* requests outstanding at the disconnect: their CQEs arrive into nothing */
		for (uint32_t i = 0; i < INFLIGHT; i++)
			if (kr_post_read(v, &c->dst[i], 8, (uintptr_t)&c->src[i], c->rkey, 1000 + i,
					 0))
				return NULL;
	}
	if (kr_disconnect(v))
		return NULL;
	c->rc = 0;
	return NULL;
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "2",  "--jobs", "1",
					   "--heap-mb", "4", "--hugepages", "64", NULL};
	struct kr_ctx_attr ca;
	struct kp_keeper k;
	struct kr_ctx *ctx;
	struct kr_mr *mr;
	struct kr_mr_key key;
	uint64_t *src, *dst, reads = 0;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	src = kr_malloc(ctx, WORDS * 8);
	dst = kr_malloc(ctx, 2 * INFLIGHT * 8);
	CHECK(src && dst);
	for (uint32_t i = 0; i < WORDS; i++)
		src[i] = word_val(i);
	mr = kr_reg_mr(ctx, src, WORDS * 8, KR_MR_REMOTE_READ);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));

	for (uint32_t i = 0; i < 2 * CYCLES; i++) {
		bool keeper_path = i < CYCLES;
		struct cycle c = {.ctx = ctx,
				  .src = src,
				  .dst = dst + (i & 1) * INFLIGHT,
				  .rkey = key.rkey,
				  .n = counts[i % (sizeof(counts) / sizeof(counts[0]))],
				  .leave_inflight = i % 3 == 2};

		kr_vq_spare_max(keeper_path ? 0 : 8);
		if (i & 1) {
			pthread_t t;

			CHECK_OK(pthread_create(&t, NULL, run_cycle, &c));
			CHECK_OK(pthread_join(t, NULL));
		} else {
			run_cycle(&c);
		}
		if (c.rc)
			KR_FAIL("cycle %u (%u READs%s, %s thread) failed", i, c.n,
				c.leave_inflight ? ", left in flight" : "",
				i & 1 ? "second" : "main");
		reads += c.reads;
		CHECK_OK(kr_ctx_query(ctx, &ca));
		if (keeper_path)
			CHECK_EQ(ca.dci_leases, 0);
		else
			CHECK(ca.dci_leases <= 1); /* the one DCI, handed from thread to thread */
	}
	printf("%u lease cycles given back to the keeper and %u handed between threads, %llu "
	       "READs verified\n",
	       CYCLES, CYCLES, (unsigned long long)reads);
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("dci_reuse_soak");
}
