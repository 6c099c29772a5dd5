/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory regions, job side: a key over a range of the heap (kr_reg_mr), or
 * over memory the job shares as a file (kr_reg_mr_fd: a sealed memfd it maps
 * MAP_SHARED; the keeper maps the same file and registers it in the job's
 * PD). A registered file's range is remembered here so that posts may take
 * their local buffer from it too (kr_job_file_lkey: only when the buffer is
 * not in the heap, so the heap's fast path does not pay for it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"

/* The MR the keeper's reply describes, or NULL with errno (rc) and mr freed. */
static struct kr_mr *mr_made(struct kr_ctx *ctx, struct kr_mr *mr, int rc, uintptr_t addr,
			     size_t len, const struct kr_msg_reply *rep)
{
	if (rc) {
		free(mr);
		errno = -rc;
		return NULL;
	}
	mr->ctx = ctx;
	mr->id = rep->index;
	mr->key =
	    (struct kr_mr_key){.addr = addr, .len = len, .lkey = rep->lkey, .rkey = rep->rkey};
	return mr;
}

struct kr_mr *kr_reg_mr(struct kr_ctx *ctx, void *addr, size_t len, uint32_t access)
{
	struct kr_msg_mr req;
	struct kr_msg_reply rep;
	uintptr_t a = (uintptr_t)addr;
	struct kr_mr *mr;
	int rc;

	if (!ctx || !addr || !len || (access & ~0xfu)) {
		errno = EINVAL;
		return NULL;
	}
	if (!kr_job_in_heap(ctx, addr, len)) {
		errno = EINVAL; /* the keeper can reach only this job's heap */
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	req = (struct kr_msg_mr){.addr = a, .len = len, .access = access};
	kr_msg_init(&req.hdr, KR_MSG_REG_MR, sizeof(req), 0);
	pthread_mutex_lock(&ctx->lock);
	rc = kr_job_call(ctx, &req, sizeof(req), &rep);
	pthread_mutex_unlock(&ctx->lock);
	return mr_made(ctx, mr, rc, a, len, &rep);
}

int kr_dereg_mr(struct kr_mr *mr)
{
	struct kr_msg_mr req;
	struct kr_msg_reply rep;
	int rc;

	if (!mr)
		return -EINVAL;
	req = (struct kr_msg_mr){.id = mr->id};
	kr_msg_init(&req.hdr, KR_MSG_DEREG_MR, sizeof(req), 0);
	pthread_mutex_lock(&mr->ctx->lock);
	if (mr->id && mr->id <= KR_POOL_MAX_JOB_MRS) /* posts from it stop here first */
		__atomic_store_n(&mr->ctx->fmr[mr->id - 1].len, 0, __ATOMIC_RELEASE);
	rc = kr_job_call(mr->ctx, &req, sizeof(req), &rep);
	pthread_mutex_unlock(&mr->ctx->lock);
	free(mr);
	return rc;
}

int kr_mr_key(const struct kr_mr *mr, struct kr_mr_key *key)
{
	if (!mr || !key)
		return -EINVAL;
	*key = mr->key;
	return 0;
}

struct kr_mr *kr_reg_mr_fd(struct kr_ctx *ctx, int fd, uint64_t off, size_t len, void *addr,
			   uint32_t access)
{
	struct kr_msg_mr_fd req = {
	    .addr = (uintptr_t)addr, .off = off, .len = len, .access = access};
	struct kr_msg_reply rep;
	struct kr_mr *mr;
	int rc;

	if (!ctx || ctx->observer || fd < 0 || !addr || !len || len > KR_POST_MAX_LEN ||
	    off + len < off || (uintptr_t)addr + len < (uintptr_t)addr || (access & ~0xfu) ||
	    (((uintptr_t)addr ^ off) & 4095)) {
		errno = EINVAL;
		return NULL;
	}
	if (fcntl(fd, F_GETFD) < 0) {
		errno = EBADF;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	kr_msg_init(&req.hdr, KR_MSG_REG_MR_FD, sizeof(req), 0);
	pthread_mutex_lock(&ctx->lock);
	rc = kr_job_call_fd(ctx, &req, sizeof(req), fd, &rep);
	if (rc == -EPIPE)
		rc = -ENOTCONN; /* as documented for kr_reg_mr_fd */
	if (!rc && (!rep.index || rep.index > KR_POOL_MAX_JOB_MRS))
		rc = -EPROTO;
	if (!rc) {
		struct kr_job_fmr *f = &ctx->fmr[rep.index - 1];

		f->addr = (uintptr_t)addr;
		f->lkey = rep.lkey;
		__atomic_store_n(&f->len, len, __ATOMIC_RELEASE);
		if (rep.index > ctx->nfmr)
			__atomic_store_n(&ctx->nfmr, rep.index, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&ctx->lock);
	return mr_made(ctx, mr, rc, (uintptr_t)addr, len, &rep);
}

/* kr_job_file_lkey() - see job.h. */
int64_t kr_job_file_lkey(const struct kr_ctx *ctx, const void *p, uint64_t len)
{
	uint32_t n = __atomic_load_n(&ctx->nfmr, __ATOMIC_ACQUIRE);
	uintptr_t a = (uintptr_t)p;

	for (uint32_t i = 0; i < n; i++) {
		const struct kr_job_fmr *f = &ctx->fmr[i];
		uint64_t flen = __atomic_load_n(&f->len, __ATOMIC_ACQUIRE);

		if (flen && a >= f->addr && len <= flen && a - f->addr <= flen - len)
			return f->lkey;
	}
	return -1;
}
