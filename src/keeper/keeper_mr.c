/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory regions a job asks for, keeper side: a range of its heap
 * (KR_MSG_REG_MR), or a file it shares (KR_MSG_REG_MR_FD), each registered
 * in the job's tenant PD only, released at KR_MSG_DEREG_MR or job death.
 *
 * A shared file must be a memfd sealed against shrinking (F_SEAL_SHRINK;
 * tmpfs or hugetlb pages): the keeper maps it itself, and a file that could
 * be truncated under that mapping would SIGBUS the keeper (the sim device
 * reads and writes through it; a ConnectX pins the pages). The mapping sits
 * in the keeper's job-writable window, whose SIGBUS guard answers a page the
 * job punches out (keeper_shm.c). The key names the job's own address of the
 * bytes (its IOVA), so requests carry plain pointers in both processes.
 * Anything else (a regular file, a socket, a device, a dma-buf: no device
 * here imports one) is refused with a message saying what to use instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "common/kr_log.h"
#include "keeper/keeper.h"

#ifndef DMA_BUF_MAGIC
#define DMA_BUF_MAGIC 0x444d4142
#endif

static int free_mr_slot(const struct kr_keeper_conn *c)
{
	for (uint32_t i = 0; i < KR_POOL_MAX_JOB_MRS; i++)
		if (!c->mrs[i].used)
			return (int)i;
	return -ENOSPC;
}

static void mr_granted(struct kr_keeper *k, struct kr_keeper_conn *c, uint32_t i,
		       struct kr_msg_reply *rep)
{
	c->mrs[i].used = true;
	kr_seg_job(k->seg, c->job_plus1 - 1)->mrs++;
	rep->index = i + 1;
	rep->lkey = c->mrs[i].mr.lkey;
	rep->rkey = c->mrs[i].mr.rkey;
}

/* kr_keeper_reg_mr() - KR_MSG_REG_MR: a range of the job's backed heap. 0 or -errno. */
int kr_keeper_reg_mr(struct kr_keeper *k, struct kr_keeper_conn *c, const struct kr_msg_mr *req,
		     struct kr_msg_reply *rep)
{
	struct kr_keeper_heap *h;
	int i, rc;

	if (!c->job_plus1)
		return -EPERM;
	h = kr_keeper_job_heap(k, c->job_plus1 - 1);
	if (!req->len || req->addr < (uintptr_t)h->addr || req->len > h->len ||
	    req->addr - (uintptr_t)h->addr > h->len - req->len || (req->access & ~0xfu) || req->id)
		return -EINVAL;
	i = free_mr_slot(c);
	if (i < 0)
		return i;
	pthread_mutex_lock(&k->cmd_lock); /* serialised with the worker's commands */
	rc = kr_devx_mr_reg(k->ctx, &k->tenant[kr_seg_job(k->seg, c->job_plus1 - 1)->tenant].pd,
			    (void *)(uintptr_t)req->addr, req->len, req->access, &c->mrs[i].mr);
	pthread_mutex_unlock(&k->cmd_lock);
	if (rc)
		return rc;
	c->mrs[i].map = NULL;
	mr_granted(k, c, (uint32_t)i, rep);
	return 0;
}

/*
 * What kind of file fd is: 0 for a memfd sealed against shrinking (its page
 * size in *page), or -EINVAL / -EOPNOTSUPP with the reason logged.
 */
static int file_check(struct kr_keeper_conn *c, int fd, uint64_t end, uint64_t *page)
{
	struct statfs fs;
	struct stat st;
	int seals;

	if (fstat(fd, &st) || fstatfs(fd, &fs))
		return -EINVAL;
	if ((unsigned long)fs.f_type == DMA_BUF_MAGIC) {
		KR_WARN_RATELIMITED("pool",
				    "pid %d: kr_reg_mr_fd of a dma-buf: not supported by "
				    "this device; use a memfd",
				    (int)c->pid);
		return -EOPNOTSUPP;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (!S_ISREG(st.st_mode) ||
	    ((unsigned long)fs.f_type != TMPFS_MAGIC &&
	     (unsigned long)fs.f_type != HUGETLBFS_MAGIC) ||
	    seals < 0 || !(seals & F_SEAL_SHRINK)) {
		KR_WARN_RATELIMITED("pool",
				    "pid %d: kr_reg_mr_fd: not a memfd sealed against shrinking; "
				    "use memfd_create(MFD_ALLOW_SEALING [| MFD_HUGETLB]) and "
				    "fcntl(F_ADD_SEALS, F_SEAL_SHRINK), or kr_malloc()",
				    (int)c->pid);
		return -EINVAL;
	}
	if (end > (uint64_t)st.st_size)
		return -EINVAL;
	*page = (unsigned long)fs.f_type == HUGETLBFS_MAGIC ? (uint64_t)fs.f_bsize : 4096;
	return *page && !(*page & (*page - 1)) ? 0 : -EINVAL;
}

/*
 * kr_keeper_reg_mr_fd() - KR_MSG_REG_MR_FD: len bytes at req->off of fd,
 * which the job maps at req->addr. fd is the caller's to close. 0 or -errno.
 */
int kr_keeper_reg_mr_fd(struct kr_keeper *k, struct kr_keeper_conn *c,
			const struct kr_msg_mr_fd *req, int fd, struct kr_msg_reply *rep)
{
	bool writes = req->access &
		      (KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_ATOMIC);
	uint64_t page, lo, map_len, end = req->off + req->len;
	struct kr_keeper_mr *m;
	uint8_t *at;
	void *p;
	int i, rc, mode;

	if (!c->job_plus1)
		return -EPERM;
	if (fd < 0 || !req->len || req->len > KR_POST_MAX_LEN || end < req->off ||
	    req->addr + req->len < req->addr || (req->access & ~0xfu) || req->rsvd ||
	    ((req->addr ^ req->off) & 4095))
		return -EINVAL;
	mode = fcntl(fd, F_GETFL);
	if (mode < 0 ||
	    ((mode & O_ACCMODE) != O_RDWR && (writes || (mode & O_ACCMODE) != O_RDONLY)))
		return -EINVAL; /* writable rights need a writable descriptor */
	rc = file_check(c, fd, end, &page);
	if (rc)
		return rc;
	i = free_mr_slot(c);
	if (i < 0)
		return i;
	m = &c->mrs[i];
	lo = req->off & ~(page - 1);
	map_len = ((end + page - 1) & ~(page - 1)) - lo;
	at = kr_keeper_shm_place(k, map_len);
	if (!at)
		return -ENOMEM;
	p = mmap(at, map_len, PROT_READ | (writes ? PROT_WRITE : 0), MAP_SHARED | MAP_FIXED, fd,
		 (off_t)lo);
	if (p == MAP_FAILED) {
		rc = -errno;
		kr_keeper_shm_unplace(k, at, map_len);
		return rc == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	pthread_mutex_lock(&k->cmd_lock);
	rc =
	    kr_devx_mr_reg_iova(k->ctx, &k->tenant[kr_seg_job(k->seg, c->job_plus1 - 1)->tenant].pd,
				at + (req->off - lo), req->len, req->addr, req->access, &m->mr);
	pthread_mutex_unlock(&k->cmd_lock);
	if (rc) {
		kr_keeper_shm_unplace(k, at, map_len);
		return rc;
	}
	m->map = at;
	m->map_len = map_len;
	mr_granted(k, c, (uint32_t)i, rep);
	return 0;
}

/* kr_keeper_mr_release() - deregister m and drop its file mapping. 0 or the devx error. */
int kr_keeper_mr_release(struct kr_keeper *k, struct kr_keeper_mr *m)
{
	int rc;

	pthread_mutex_lock(&k->cmd_lock); /* a firmware command: may wait for the worker's */
	rc = kr_devx_mr_dereg(&m->mr);
	pthread_mutex_unlock(&k->cmd_lock);
	if (rc)
		return rc;
	if (m->map) {
		kr_keeper_shm_unplace(k, m->map, m->map_len);
		m->map = NULL;
	}
	m->used = false;
	return 0;
}

/* kr_keeper_dereg_mr() - KR_MSG_DEREG_MR. 0 or -errno. */
int kr_keeper_dereg_mr(struct kr_keeper *k, struct kr_keeper_conn *c, const struct kr_msg_mr *req)
{
	int rc;

	if (!c->job_plus1)
		return -EPERM;
	if (!req->id || req->id > KR_POOL_MAX_JOB_MRS || !c->mrs[req->id - 1].used)
		return -EINVAL;
	rc = kr_keeper_mr_release(k, &c->mrs[req->id - 1]);
	if (!rc)
		kr_seg_job(k->seg, c->job_plus1 - 1)->mrs--;
	return rc;
}
