/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * footprint: a keeper of 4 tenants x 64 DCIs holds at most 32 MiB of
 * hugepages with no job attached, and grows only as jobs attach and
 * allocate. What the keeper reports (krctl pool --json hugepages_mib) is
 * checked against the kernel's count (HugePages_Total - Free + Rsvd) at 0,
 * 1 and 8 jobs and after they leave; the test runs alone (not parallel), so
 * the kernel's count moves only with this keeper.
 *
 * Then a job's heap grows: 10,000 small kr_mallocs make no keeper call, a
 * 3 MB one makes one (the heap doubles to 4 MB), and RDMA WRITE/READ work
 * on the new pages with the new key and on the old pages with the old key;
 * a kr_malloc past the heap's size fails with ENOMEM and changes nothing;
 * kr_reg_mr covers grown memory, not past it. Raw KR_MSG_HEAP_GROW
 * requests: len 0 or reserved bits EINVAL, past the heap ENOMEM, already
 * backed a reply with no descriptor, from an observer's connection EPERM.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

#define JOBS 8

static struct kp_keeper K;

/* Pages the kernel counts as taken: in use or reserved for a mapping. */
static long kernel_pages(void)
{
	long total = -1, freep = -1, rsvd = -1;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "re");

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "HugePages_Total: %ld", &total);
		sscanf(line, "HugePages_Free: %ld", &freep);
		sscanf(line, "HugePages_Rsvd: %ld", &rsvd);
	}
	fclose(f);
	CHECK(total >= 0 && freep >= 0 && rsvd >= 0);
	return total - freep + rsvd;
}

/* The keeper's own figure, in 2 MB pages (it refreshes it every 100 ms). */
static long keeper_pages(void)
{
	struct kr_pool_seg s;

	kp_seg_header(&K, &s);
	CHECK_EQ(s.hugepage_bytes % KR_POOL_PAGE, 0);
	return (long)(s.hugepage_bytes / KR_POOL_PAGE);
}

/* Wait (10 s at most) until the keeper reports what the kernel counts above base. */
static long settle(long base)
{
	double t0 = kp_now_ms();
	long kp, kk;

	do {
		usleep(20000);
		kp = keeper_pages();
		kk = kernel_pages() - base;
	} while (kp != kk && kp_now_ms() - t0 < 10000);
	CHECK_EQ(kp, kk);
	return kp;
}

static void footprint(void)
{
	struct kp_holder h[JOBS];
	long base, idle, one, all, after;

	base = kernel_pages();
	CHECK_OK(
	    kp_keeper_start(&K, (const char *const[]){"--tenants", "4", "--dcis", "64", "--jobs",
						      "8", "--heap-mb", "16", NULL}));
	idle = settle(base);
	CHECK(idle * 2 <= 32);
	CHECK_EQ(kp_krctl_json(&K, "pool", "hugepages_mib", 0), idle * 2);

	h[0] = kp_hold(&K);
	one = settle(base);
	CHECK_EQ(one, idle + 4); /* its heap's first page, and 4 warm for its launch's next ranks */
	for (int i = 1; i < JOBS; i++)
		h[i] = kp_hold(&K);
	all = settle(base);
	CHECK_EQ(all, idle - 1 + JOBS); /* eight heaps in use, none left to warm */
	for (int i = 0; i < JOBS; i++)
		kp_hold_release(&h[i]);
	/* the heaps are emptied, the slot renewed once the launch left */
	after = settle(base);
	for (double t0 = kp_now_ms(); after != idle && kp_now_ms() - t0 < 10000;)
		after = settle(base);
	CHECK_EQ(after, idle);
	printf("{\"tenants\": 4, \"dcis\": 64, \"hugepages_mib\": {\"jobs_0\": %ld, "
	       "\"jobs_1\": %ld, \"jobs_8\": %ld, \"after\": %ld}}\n",
	       idle * 2, one * 2, all * 2, after * 2);
	fflush(stdout);
}

/* A raw KR_MSG_HEAP_GROW on sock: the reply's status; *nfds descriptors came (closed). */
static int raw_grow(int sock, uint32_t seq, uint64_t len, uint64_t rsvd,
		    struct kr_msg_heap_reply *rep, unsigned int *nfds)
{
	struct kr_msg_heap req = {.len = len, .rsvd = rsvd};
	int fd = -1, rc;

	kr_msg_init(&req.hdr, KR_MSG_HEAP_GROW, sizeof(req), seq);
	*nfds = 0;
	rc = kr_msg_call(sock, &req, sizeof(req), rep, sizeof(*rep), &fd, 1, nfds);
	if (fd >= 0)
		close(fd);
	return rc ? rc : rep->status;
}

/* The same on the job's own connection (its lock, its sequence). */
static int job_grow(struct kr_ctx *ctx, uint64_t len, uint64_t rsvd, struct kr_msg_heap_reply *rep,
		    unsigned int *nfds)
{
	int rc;

	pthread_mutex_lock(&ctx->lock);
	rc = raw_grow(ctx->sock, ++ctx->seq, len, rsvd, rep, nfds);
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/* An observer's connection (krctl's kind) asking for heap: EPERM, no descriptor. */
static void observer_grow(void)
{
	struct kr_msg_attach req = {.flags = KR_ATTACH_F_OBSERVE};
	struct kr_msg_attach_reply *arep = calloc(1, sizeof(*arep));
	struct kr_msg_heap_reply rep;
	unsigned int nfds;
	int fd = kr_msg_connect(K.sock);

	CHECK(fd >= 0 && arep != NULL);
	kr_msg_init(&req.hdr, KR_MSG_ATTACH, sizeof(req), 1);
	CHECK_OK(kr_msg_call(fd, &req, sizeof(req), arep, sizeof(*arep), NULL, 0, NULL));
	CHECK_OK(arep->status);
	CHECK_ERR(raw_grow(fd, 2, 4096, 0, &rep, &nfds), -EPERM);
	CHECK_EQ(nfds, 0);
	close(fd);
	free(arep);
}

static void growth(void)
{
	struct kr_msg_heap_reply rep;
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	struct kr_ctx_attr attr;
	struct kr_lease l;
	struct kr_mr *mr;
	uint32_t lkey0;
	unsigned int nfds;
	uint8_t *big, *small[3], *p;

	CHECK(ctx != NULL);
	CHECK_OK(kr_ctx_query(ctx, &attr));
	CHECK_EQ(attr.heap_len, 16u << 20); /* what kr_malloc may reach */
	CHECK_EQ(ctx->heap_len, 2u << 20);  /* backed at attach */
	lkey0 = kr_job_heap_lkey(ctx);
	for (int i = 0; i < 10000; i++)
		CHECK(kr_malloc(ctx, 64) != NULL);
	CHECK_EQ(ctx->heap_grows, 0);
	for (int i = 0; i < 3; i++) {
		small[i] = kr_malloc(ctx, 4096);
		CHECK(small[i] != NULL);
	}

	big = kr_malloc(ctx, 3u << 20);
	CHECK(big != NULL);
	CHECK_EQ(ctx->heap_grows, 1);
	CHECK_EQ(ctx->heap_len, 4u << 20);
	CHECK(kr_job_heap_lkey(ctx) != lkey0);
	memset(big, 0x5a, 3u << 20); /* every new page is ours */
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l));
	/* the new pages, with the new key: the last bytes of the grown heap */
	CHECK_OK(
	    kp_dci_write_read(ctx, &l, big, big + (1u << 20), big + (2u << 20), 4096, 20, 1 << 8));
	/* a request posted with the key from before the growth still works */
	{
		uint32_t now = ctx->heap_lkey;

		ctx->heap_lkey = lkey0;
		CHECK_OK(
		    kp_dci_write_read(ctx, &l, small[0], small[1], small[2], 4096, 20, 2 << 8));
		ctx->heap_lkey = now;
	}

	/* past the heap: ENOMEM, nothing changed */
	errno = 0;
	CHECK(kr_malloc(ctx, 15u << 20) == NULL);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(ctx->heap_grows, 1);
	CHECK_EQ(ctx->heap_len, 4u << 20);
	p = kr_malloc(ctx, 8u << 20); /* fits: one more call, at least doubling */
	CHECK(p != NULL);
	CHECK_EQ(ctx->heap_grows, 2);
	CHECK(ctx->heap_len >= (uint64_t)(p + (8u << 20) - (uint8_t *)ctx->heap));
	CHECK_OK(
	    kp_dci_write_read(ctx, &l, p, p + (4u << 20), p + (8u << 20) - 4096, 4096, 10, 3 << 8));

	/* registration: grown memory yes, past what is backed no */
	mr = kr_reg_mr(ctx, p, 8u << 20, KR_MR_REMOTE_READ);
	CHECK(mr != NULL);
	CHECK_OK(kr_dereg_mr(mr));
	errno = 0;
	CHECK(kr_reg_mr(ctx, (uint8_t *)ctx->heap + ctx->heap_len, 4096, KR_MR_REMOTE_READ) ==
	      NULL);
	CHECK_EQ(errno, EINVAL);

	/* raw requests */
	CHECK_ERR(job_grow(ctx, 0, 0, &rep, &nfds), -EINVAL);
	CHECK_ERR(job_grow(ctx, 4096, 1, &rep, &nfds), -EINVAL);
	CHECK_ERR(job_grow(ctx, (16u << 20) + 4096, 0, &rep, &nfds), -ENOMEM);
	CHECK_ERR(job_grow(ctx, ~0ull, 0, &rep, &nfds), -ENOMEM);
	CHECK_OK(job_grow(ctx, 4096, 0, &rep, &nfds));
	CHECK_EQ(nfds, 0);
	CHECK_EQ(rep.nfds, 0);
	CHECK_EQ(rep.heap_len, ctx->heap_len);
	CHECK_EQ(rep.lkey, kr_job_heap_lkey(ctx));
	observer_grow();
	/* the job still works after all that */
	CHECK_OK(kp_dci_write_read(ctx, &l, big, big + 4096, big + 8192, 4096, 5, 4 << 8));
	CHECK_OK(kr_lease_free(ctx, &l));
	CHECK_OK(kr_detach(ctx));
}

int main(void)
{
	kp_require_hugepages(64);
	kp_keeper_init(&K);
	footprint();
	growth();
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("pool_footprint");
}
