/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job's heap past its first pages. At attach the rest of its place
 * (heap_max bytes from heap) is held PROT_NONE, so nothing else of the
 * process lands there. When the arena runs past what is backed, one
 * KR_MSG_HEAP_GROW brings the new pages (one descriptor, mapped over the
 * held place) and the keys of the MR over the whole heap. The keeper at
 * least doubles the heap per call: a job makes a handful of calls in its
 * life, none per kr_malloc.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "job/job.h"

/* kr_job_heap_hold() - see job.h: sets ctx->heap_max. 0, -EADDRINUSE, or mmap's -errno. */
int kr_job_heap_hold(struct kr_ctx *ctx, uint64_t max)
{
	uint8_t *at = (uint8_t *)ctx->heap + ctx->heap_len;
	uint64_t len = max - ctx->heap_len;
	void *p;

	if (!len) {
		ctx->heap_max = max;
		return 0;
	}
	p = mmap(at, len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		int e = errno;

		KR_ERR("pool", "cannot hold the heap's place at %p (%llu MB): %s", (void *)at,
		       (unsigned long long)(len >> 20), strerror(e));
		return e == EEXIST ? -EADDRINUSE : -e;
	}
	if (p != at) {
		munmap(p, len);
		return -EADDRINUSE;
	}
	ctx->heap_max = max;
	return 0;
}

/* What a keeper may answer: the heap from our end on, inside the place, in whole pages. */
static bool grow_reply_ok(const struct kr_ctx *ctx, const struct kr_msg_heap_reply *r,
			  unsigned int nfds, uint64_t need)
{
	uint64_t old = ctx->heap_len;

	if (r->hdr.len != sizeof(*r) || r->nfds != nfds || r->heap_len < need ||
	    r->heap_len > ctx->heap_max)
		return false;
	if (!nfds)
		return r->heap_len == old;
	return r->chunk_off == old && r->chunk_len == r->heap_len - old &&
	       !(r->chunk_len & (KR_POOL_PAGE - 1));
}

/*
 * kr_job_heap_grow() - the arena's grow: back the heap up to need. Returns
 * the backed length, or -ENOMEM (past the heap's size, or the node has no
 * hugepage left), -ENOTCONN or -EPIPE (the keeper is gone), -EPROTO.
 */
int64_t kr_job_heap_grow(void *arg, uint64_t need)
{
	struct kr_ctx *ctx = arg;
	struct kr_msg_heap req = {.len = need};
	struct kr_msg_heap_reply rep = {0};
	unsigned int nfds = 0;
	int fd = -1, rc;

	if (need > ctx->heap_max)
		return -ENOMEM;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->dead || ctx->observer) {
		rc = -ENOTCONN;
		goto out;
	}
	kr_msg_init(&req.hdr, KR_MSG_HEAP_GROW, sizeof(req), ++ctx->seq);
	rc = kr_job_lost(
	    ctx, kr_msg_call(ctx->sock, &req, sizeof(req), &rep, sizeof(rep), &fd, 1, &nfds));
	if (rc)
		goto out;
	if (rep.hdr.len == sizeof(rep) && rep.status) {
		rc = rep.status < 0 && rep.status > -4096 ? rep.status : -EPROTO;
		goto out;
	}
	if (!grow_reply_ok(ctx, &rep, nfds, need)) {
		rc = -EPROTO;
		goto out;
	}
	if (nfds) {
		void *at = (uint8_t *)ctx->heap + rep.chunk_off;
		void *p =
		    mmap(at, rep.chunk_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);

		if (p == MAP_FAILED) {
			rc = -errno;
			KR_ERR("pool", "cannot map %llu MB more heap at %p: %s",
			       (unsigned long long)(rep.chunk_len >> 20), at, strerror(-rc));
			goto out;
		}
		ctx->heap_grows++;
	}
	__atomic_store_n(&ctx->heap_lkey, rep.lkey, __ATOMIC_RELAXED);
	__atomic_store_n(&ctx->heap_rkey, rep.rkey, __ATOMIC_RELAXED);
	__atomic_store_n(&ctx->heap_len, rep.heap_len, __ATOMIC_RELEASE);
out:
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&ctx->lock);
	return rc ? rc : (int64_t)rep.heap_len;
}
