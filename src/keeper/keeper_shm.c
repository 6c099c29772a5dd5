/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Job-writable memory: the tenant zone and the job heaps. A job gets a
 * writable descriptor of these pages, and a file it can write it can also
 * truncate: the keeper's next touch of a truncated page is a SIGBUS. DPDK's
 * hugetlbfs page files cannot be sealed, so job-writable memory never comes
 * from a memzone; each piece is a hugetlb memfd sealed at its size
 * (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL). What jobs only read but the
 * keeper writes while they run (the zone head: descriptors, node cache) is
 * the same kind of piece, plain shmem (never registered with the device),
 * sent as a read-only file description: mmap(PROT_WRITE) and mprotect fail.
 * A read-only description is not enough: a memfd's inode is mode 0777, so
 * /proc/self/fd/N reopens it for writing. Once the keeper has mapped such a
 * piece it adds F_SEAL_FUTURE_WRITE (then F_SEAL_SEAL): the keeper's own
 * mapping stays writable, and no one can write() it or map it shared and
 * writable again, however the file is opened.
 *
 * The pieces are mapped at fixed addresses in a window of their own,
 * cfg.base_va + KR_SHM_VA_OFFSET, above the EAL's reservation and outside
 * ASan's, so every job can map them at the keeper's address too.
 *
 * Two things a job can still do to its own pages, and why they stay its own
 * problem:
 *   - keep the descriptor after it leaves: a heap is renewed (a new memfd
 *     at the same address) when it is scrubbed, so a kept descriptor reaches
 *     the dead job's old pages, never the next job's;
 *   - punch a hole (fallocate; only F_SEAL_WRITE forbids it, and jobs must
 *     write): the keeper's next touch needs a fresh hugepage, and with none
 *     free the kernel sends SIGBUS. A SIGBUS inside the window is answered
 *     by mapping private zero pages over the faulting page, so the keeper
 *     goes on; only that job's tenant loses the shared view of the page.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "keeper/keeper.h"

#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21u << 26) /* log2(2 MB) << MFD_HUGE_SHIFT */
#endif

/* The window's bounds for the SIGBUS guard; written before it is armed. */
static uintptr_t shm_lo, shm_hi;
static _Atomic uint64_t shm_holes; /* pages the guard replaced */
static _Atomic uint64_t shm_huge;  /* bytes of hugetlb memfds mapped now */

/* In the handler: say where the keeper dies (write(2) only: async-signal-safe). */
static void shm_sigbus_say(const void *addr)
{
	static const char pre[] = "krcore pool error: SIGBUS at 0x",
			  post[] = " outside the job-writable window: the keeper dies\n";
	uintptr_t a = (uintptr_t)addr;
	char hex[2 * sizeof(a)];

	for (size_t i = 0; i < sizeof(hex); i++)
		hex[i] = "0123456789abcdef"[(a >> (4 * (sizeof(hex) - 1 - i))) & 0xf];
	(void)!write(2, pre, sizeof(pre) - 1);
	(void)!write(2, hex, sizeof(hex));
	(void)!write(2, post, sizeof(post) - 1);
}

static void shm_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr & ~(uintptr_t)(KR_POOL_PAGE - 1);

	(void)uc;
	if (a >= shm_lo && a < shm_hi &&
	    mmap((void *)a, KR_POOL_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
		atomic_fetch_add(&shm_holes, 1);
		return; /* the faulting access runs again, on the private page */
	}
	shm_sigbus_say(si->si_addr);
	signal(sig, SIG_DFL); /* not ours: die as we would have */
	raise(sig);
}

/* Arm the guard for [lo, hi) (idempotent; the window only grows). */
static void shm_guard(uintptr_t lo, uintptr_t hi)
{
	struct sigaction sa = {.sa_sigaction = shm_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER};

	shm_lo = lo;
	shm_hi = hi;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/* Pages of the window a job punched out and the keeper then touched. */
uint64_t kr_keeper_shm_holes(void)
{
	return atomic_load(&shm_holes);
}

/*
 * A sealed memfd (hugetlb if huge) of len bytes mapped at exactly at: a
 * free address, or over our own reservation (over). 0 or -errno.
 */
static int shm_create_at(const char *name, void *at, uint64_t len, bool huge, bool over,
			 struct kr_shm *shm)
{
	unsigned int flags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
	void *p;
	int fd, rc;

	if (huge)
		flags |= MFD_HUGETLB | MFD_HUGE_2MB;
	fd = memfd_create(name, flags);
	if (fd < 0) {
		rc = -errno;
		KR_ERR("pool", "%s: memfd_create: %s", name, strerror(-rc));
		return rc;
	}
	/* a piece jobs only read keeps its seals open for F_SEAL_FUTURE_WRITE below */
	if (ftruncate(fd, (off_t)len) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | (huge ? F_SEAL_SEAL : 0))) {
		rc = -errno;
		KR_ERR("pool", "%s: sizing and sealing %llu MB: %s", name,
		       (unsigned long long)(len >> 20), strerror(-rc));
		close(fd);
		return rc;
	}
	/* MAP_SHARED hugetlb reserves its pages here: no SIGBUS later */
	p = mmap(at, len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | (over ? MAP_FIXED : MAP_FIXED_NOREPLACE), fd, 0);
	if (p == MAP_FAILED || p != at) {
		rc = p == MAP_FAILED ? -errno : -EEXIST;
		if (p != MAP_FAILED)
			munmap(p, len);
		KR_ERR("pool", "%s: %llu MB of 2 MB hugepages at %p: %s%s", name,
		       (unsigned long long)(len >> 20), at, strerror(-rc),
		       rc == -ENOMEM ? "; free hugepages: echo N > /proc/sys/vm/nr_hugepages" : "");
		close(fd);
		return rc;
	}
	/* plain shmem is what jobs only read: our mapping is the last writable one */
	if (!huge && fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)) {
		rc = -errno;
		KR_ERR("pool", "%s: sealing against writes: %s", name, strerror(-rc));
		munmap(p, len);
		close(fd);
		return rc;
	}
	shm->addr = p;
	shm->len = len;
	shm->fd = fd;
	shm->ro_fd = -1;
	shm->huge = huge;
	if (huge)
		atomic_fetch_add(&shm_huge, len);
	return 0;
}

/* The descriptors of a mapped shm closed and its pages uncounted. */
static void shm_drop(struct kr_shm *shm)
{
	if (shm->huge)
		atomic_fetch_sub(&shm_huge, shm->len);
	close(shm->fd);
	if (shm->ro_fd >= 0)
		close(shm->ro_fd);
	shm->fd = shm->ro_fd = -1;
	shm->addr = NULL;
}

/*
 * kr_keeper_shm_map() - len bytes (whole hugepages) of sealed, zeroed
 * hugetlb memory at the next address of the window. Returns 0, -ENOMEM (no
 * free hugepages: the message says how to get some), -EEXIST (the window's
 * address is taken), or another -errno.
 */
int kr_keeper_shm_map(struct kr_keeper *k, const char *name, uint64_t len, bool huge,
		      struct kr_shm *shm)
{
	uintptr_t lo = (uintptr_t)(k->cfg.base_va + KR_SHM_VA_OFFSET);
	int rc;

	shm->fd = -1;
	shm->addr = NULL;
	len = kr_keeper_pages_len(len);
	rc = shm_create_at(name, (void *)(lo + k->shm_used), len, huge, false, shm);
	if (rc)
		return rc;
	k->shm_used += len;
	shm_guard(lo, lo + k->shm_used);
	return 0;
}

/* An inaccessible reservation of [at, at + len): nothing else gets mapped there. */
static int shm_hold(void *at, uint64_t len, bool over)
{
	void *p = mmap(at, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			   (over ? MAP_FIXED : MAP_FIXED_NOREPLACE),
		       -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	if (p != at) {
		munmap(p, len);
		return -EEXIST;
	}
	return 0;
}

/*
 * kr_keeper_shm_reserve() - len bytes (whole hugepages) of the window's
 * address space, nothing behind them: a place that kr_keeper_shm_map_at()
 * fills piece by piece. NULL with errno.
 */
uint8_t *kr_keeper_shm_reserve(struct kr_keeper *k, uint64_t len)
{
	uintptr_t lo = (uintptr_t)(k->cfg.base_va + KR_SHM_VA_OFFSET);
	uint8_t *at = (uint8_t *)(lo + k->shm_used);
	int rc;

	len = kr_keeper_pages_len(len);
	rc = shm_hold(at, len, false);
	if (rc) {
		KR_ERR("pool", "reserving %llu MB at %p: %s", (unsigned long long)(len >> 20),
		       (void *)at, strerror(-rc));
		errno = -rc;
		return NULL;
	}
	k->shm_used += len;
	shm_guard(lo, lo + k->shm_used);
	return at;
}

/*
 * kr_keeper_shm_place() - a held place of len bytes (whole hugepages) in the
 * window for a mapping that comes and goes (a file a job registered), so a
 * page the job punches out of it is answered by the SIGBUS guard: a hole
 * an earlier one left if one fits, else new space. NULL with errno.
 */
uint8_t *kr_keeper_shm_place(struct kr_keeper *k, uint64_t len)
{
	len = kr_keeper_pages_len(len);
	for (uint32_t i = 0; i < k->nshm_free; i++) {
		uint8_t *at = k->shm_free[i].at;

		if (k->shm_free[i].len < len)
			continue;
		k->shm_free[i].at += len;
		k->shm_free[i].len -= len;
		if (!k->shm_free[i].len)
			k->shm_free[i] = k->shm_free[--k->nshm_free];
		return at;
	}
	return kr_keeper_shm_reserve(k, len);
}

/*
 * kr_keeper_shm_unplace() - give back a place from kr_keeper_shm_place(): what
 * is mapped there is replaced by a hold (no pages), and the place is reused.
 */
void kr_keeper_shm_unplace(struct kr_keeper *k, uint8_t *at, uint64_t len)
{
	len = kr_keeper_pages_len(len);
	if (shm_hold(at, len, true)) {
		munmap(at, len); /* no hold: something else may land there, never reuse it */
		return;
	}
	for (uint32_t i = 0; i < k->nshm_free; i++) {
		if (k->shm_free[i].at + k->shm_free[i].len == at) {
			k->shm_free[i].len += len;
			return;
		}
		if (at + len == k->shm_free[i].at) {
			k->shm_free[i].at = at;
			k->shm_free[i].len += len;
			return;
		}
	}
	if (k->nshm_free == KR_SHM_FREE_MAX) {
		KR_WARN_RATELIMITED("pool", "window: %llu MB not reused (free list full)",
				    (unsigned long long)(len >> 20));
		return; /* still held: only address space is lost */
	}
	k->shm_free[k->nshm_free].at = at;
	k->shm_free[k->nshm_free++].len = len;
}

/* kr_keeper_shm_map_at() - kr_keeper_shm_map inside a reservation of ours, at at. */
int kr_keeper_shm_map_at(const char *name, void *at, uint64_t len, struct kr_shm *shm)
{
	shm->fd = -1;
	shm->addr = NULL;
	return shm_create_at(name, at, kr_keeper_pages_len(len), true, true, shm);
}

/* kr_keeper_shm_unmap_held() - unmap shm, its place held again (reserved, no pages). */
void kr_keeper_shm_unmap_held(struct kr_shm *shm)
{
	void *at = shm->addr;
	uint64_t len = shm->len;

	if (!at || shm->fd < 0)
		return;
	/* one step: the place is never free for another mapping to land in */
	if (shm_hold(at, len, true))
		munmap(at, len);
	shm_drop(shm);
}

/* Bytes of hugetlb memfds the keeper maps (zones, heap chunks): reserved pages. */
uint64_t kr_keeper_shm_huge_bytes(void)
{
	return atomic_load(&shm_huge);
}

/*
 * kr_keeper_shm_renew() - replace shm's pages with new, zeroed ones at the
 * same address: whoever kept the old descriptor keeps only the old pages.
 * Nothing may be registered on shm meanwhile. 0, or -errno with shm
 * unmapped (fd -1) but its address kept for a later attempt.
 */
int kr_keeper_shm_renew(const char *name, struct kr_shm *shm)
{
	void *at = shm->addr;
	uint64_t len = shm->len;
	bool huge = shm->huge;
	int rc;

	if (shm->fd >= 0)
		kr_keeper_shm_unmap(shm);
	rc = shm_create_at(name, at, len, huge, false, shm);
	if (rc) { /* keep the place for the next attempt */
		shm->addr = at;
		shm->len = len;
	}
	return rc;
}

void kr_keeper_shm_unmap(struct kr_shm *shm)
{
	if (!shm->addr || shm->fd < 0)
		return;
	munmap(shm->addr, shm->len);
	shm_drop(shm);
}

/*
 * kr_keeper_shm_regions() - shm as one region per hugepage (what the
 * attach reply carries), read-write or read-only through a read-only file
 * description, appended to rep and fds. 0, -E2BIG, or open's -errno.
 */
int kr_keeper_shm_regions(struct kr_shm *shm, uint8_t role, bool writable,
			  struct kr_msg_attach_reply *rep, int *fds, unsigned int *nfds)
{
	unsigned int fd_index = *nfds;

	if (*nfds >= KR_ATTACH_MAX_REGIONS + 1)
		return -E2BIG;
	if (!writable && shm->ro_fd < 0) {
		int ro = kr_fd_reopen_ro(shm->fd);

		if (ro < 0)
			return ro;
		shm->ro_fd = ro;
	}
	fds[(*nfds)++] = writable ? shm->fd : shm->ro_fd;
	for (uint64_t off = 0; off < shm->len; off += KR_POOL_PAGE) {
		int rc = kr_msg_region_add(rep, (uintptr_t)(shm->addr + off), off, fd_index,
					   writable ? PROT_READ | PROT_WRITE : PROT_READ, role);

		if (rc)
			return rc;
	}
	return 0;
}
