/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hugepage memory of the keeper: the DPDK EAL (primary, no PCI, no shared
 * config: jobs never run rte_eal_init, they map pages from fds), memzones,
 * and the per-page fds a job is sent to map a range at the keeper's address.
 *
 * EAL arguments and why:
 *   --file-prefix krp<hash of the socket path>  keepers on other sockets coexist
 *   --no-shconf --huge-unlink   no files left behind by a killed keeper; the
 *                               page fds stay valid for passing (not --in-memory:
 *                               it would still work, but keeps no hugetlbfs files
 *                               we can name in errors)
 *   one file per page (no --single-file-segments): a job receives the fds of
 *                               exactly the pages it may map, not the whole heap
 *   --base-virtaddr             an address range free in ASan and non-ASan
 *                               processes alike, so any job can map there
 *   --socket-limit              the --hugepages budget
 *   -l 0 --no-telemetry         one lcore, no extra sockets; the keeper's threads
 *                               get their CPU affinity back after init
 *
 * Memzone pages go to jobs read-only, never writable (job-writable memory is
 * sealed memfds, keeper_shm.c: a writable hugetlbfs file could be truncated
 * under the keeper). Pages a job may only read (the pool segment) go out as a second file
 * description opened O_RDONLY through /proc/self/fd: mmap(PROT_WRITE,
 * MAP_SHARED) and mprotect(PROT_WRITE) of it fail in the job (EACCES), so a
 * read-only mapping cannot be turned writable. One per page, opened at the
 * first attach and kept for the keeper's life.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_memory.h>
#include <rte_memzone.h>

#include "common/kr_log.h"
#include "keeper/keeper.h"

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

/*
 * kr_keeper_eal_start() - rte_eal_init() as a primary with the arguments
 * above. Returns 0, -ENOMEM (no hugepages: the message says how to get
 * some), -EALREADY (EAL already up in this process), or -EIO.
 */
int kr_keeper_eal_start(struct kr_keeper *k)
{
	char base[32], limit[32], loglvl[40];
	char *argv[16];
	cpu_set_t cpus;
	bool have_cpus;
	int argc = 0, rc;

	snprintf(k->eal_prefix, sizeof(k->eal_prefix), "krp%08x", fnv1a(k->cfg.socket));
	snprintf(base, sizeof(base), "--base-virtaddr=0x%llx", (unsigned long long)k->cfg.base_va);
	snprintf(limit, sizeof(limit), "--socket-limit=%u", k->cfg.hugepages_mb);
	snprintf(loglvl, sizeof(loglvl), "--log-level=%s", k->cfg.verbose ? "*:info" : "*:error");
	argv[argc++] = "krpoold";
	argv[argc++] = "-l";
	argv[argc++] = "0";
	argv[argc++] = "--no-pci";
	argv[argc++] = "--no-shconf";
	argv[argc++] = "--huge-unlink";
	argv[argc++] = "--no-telemetry";
	argv[argc++] = "--file-prefix";
	argv[argc++] = k->eal_prefix;
	argv[argc++] = base;
	argv[argc++] = limit;
	argv[argc++] = loglvl;
	argv[argc] = NULL;

	have_cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;
	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		int e = rte_errno;

		if (e == EALREADY)
			return -EALREADY;
		KR_ERR("pool", "rte_eal_init failed: %s", rte_strerror(e));
		return -EIO;
	}
	k->eal_up = true;
	if (have_cpus)
		sched_setaffinity(0, sizeof(cpus), &cpus);
	return 0;
}

void kr_keeper_eal_stop(struct kr_keeper *k)
{
	char dir[128];

	if (!k->eal_up)
		return;
	rte_eal_cleanup();
	k->eal_up = false;
	/* --no-shconf still creates an empty runtime directory */
	snprintf(dir, sizeof(dir), "/var/run/dpdk/%s", k->eal_prefix);
	rmdir(dir);
}

/*
 * kr_keeper_zone_reserve() - a memzone of whole 2 MB pages, 2 MB aligned,
 * zeroed. NULL with errno ENOMEM (no hugepages left in the budget), EEXIST
 * (name taken), EINVAL.
 */
const struct rte_memzone *kr_keeper_zone_reserve(const char *name, uint64_t len)
{
	const struct rte_memzone *mz;

	len = kr_keeper_pages_len(len);
	mz = rte_memzone_reserve_aligned(name, len, SOCKET_ID_ANY, RTE_MEMZONE_2MB, KR_POOL_PAGE);
	if (!mz) {
		errno = rte_errno == ENOSPC ? ENOMEM : rte_errno;
		KR_ERR("pool",
		       "memzone %s (%llu MB of 2 MB hugepages): %s; free hugepages: "
		       "echo N > /proc/sys/vm/nr_hugepages",
		       name, (unsigned long long)(len >> 20), rte_strerror(rte_errno));
		return NULL;
	}
	memset(mz->addr, 0, mz->len);
	return mz;
}

/*
 * kr_keeper_kmem_reserve() - keeper-only memory (never sent to a job): len
 * bytes, 4 KB aligned, zeroed, packed into pages the EAL already holds
 * where they fit (a 2 MB-aligned memzone costs a page of its own, and one
 * more for the heap element header in front of it). NULL with errno.
 */
const struct rte_memzone *kr_keeper_kmem_reserve(const char *name, uint64_t len)
{
	const struct rte_memzone *mz;

	len = (len + 4095) & ~(uint64_t)4095;
	mz = rte_memzone_reserve_aligned(name, len, SOCKET_ID_ANY, RTE_MEMZONE_2MB, 4096);
	if (!mz) {
		errno = rte_errno == ENOSPC ? ENOMEM : rte_errno;
		KR_ERR("pool", "memzone %s (%llu KB of 2 MB hugepages): %s", name,
		       (unsigned long long)(len >> 10), rte_strerror(rte_errno));
		return NULL;
	}
	memset(mz->addr, 0, mz->len);
	return mz;
}

static int eal_seg_bytes(const struct rte_memseg_list *msl, const struct rte_memseg *ms, void *arg)
{
	(void)msl;
	*(uint64_t *)arg += ms->len;
	return 0;
}

uint64_t kr_keeper_eal_bytes(void)
{
	uint64_t n = 0;

	rte_memseg_walk(eal_seg_bytes, &n);
	return n;
}

#define KR_RO_FDS 64u

/* The keeper's read-only twins of page fds (main thread only: attach). */
static struct {
	int fd, ro;
} kr_ro_fds[KR_RO_FDS];
static uint32_t kr_nro_fds;

int kr_fd_reopen_ro(int fd)
{
	char path[40];
	int ro;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	return ro < 0 ? -errno : ro;
}

/* The cached read-only twin of page fd fd; -errno. */
static int keeper_ro_fd(int fd)
{
	int ro;

	for (uint32_t i = 0; i < kr_nro_fds; i++)
		if (kr_ro_fds[i].fd == fd)
			return kr_ro_fds[i].ro;
	if (kr_nro_fds == KR_RO_FDS)
		return -E2BIG;
	ro = kr_fd_reopen_ro(fd);
	if (ro < 0)
		return ro;
	kr_ro_fds[kr_nro_fds].fd = fd;
	kr_ro_fds[kr_nro_fds].ro = ro;
	kr_nro_fds++;
	return ro;
}

int kr_keeper_ro_regions(const void *addr, uint64_t len, uint8_t role,
			 struct kr_msg_attach_reply *rep, int *fds, unsigned int *nfds)
{
	const uint8_t *p = addr;

	if (((uintptr_t)addr | len) & (KR_POOL_PAGE - 1))
		return -EINVAL;
	for (uint64_t off = 0; off < len; off += KR_POOL_PAGE) {
		struct rte_memseg *ms = rte_mem_virt2memseg(p + off, NULL);
		size_t fd_off = 0;
		int fd, rc;

		if (!ms)
			return -ENOENT;
		fd = rte_memseg_get_fd_thread_unsafe(ms);
		if (fd < 0 || rte_memseg_get_fd_offset_thread_unsafe(ms, &fd_off))
			return -ENOENT;
		fd = keeper_ro_fd(fd);
		if (fd < 0)
			return fd;
		if (*nfds >= KR_ATTACH_MAX_REGIONS + 1)
			return -E2BIG;
		/* the page may start inside its memseg when memsegs are bigger */
		rc = kr_msg_region_add(rep, (uintptr_t)(p + off),
				       fd_off +
					   (uint64_t)((uintptr_t)(p + off) - (uintptr_t)ms->addr),
				       *nfds, PROT_READ, role);
		if (rc)
			return rc;
		fds[(*nfds)++] = fd;
	}
	return 0;
}
