/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Job-writable memory (keeper_shm.c) in one process, without a keeper:
 *   - a piece is sealed at its size: ftruncate fails with EPERM;
 *   - renew gives new zeroed pages at the same address; a mapping of the old
 *     descriptor keeps the old pages and reaches nothing new;
 *   - a hole punched in a page while no hugepage is free: the next touch
 *     would be a SIGBUS; the guard puts a private page there and counts it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

#define HOG_MAX 4096

int main(void)
{
	struct kr_keeper k;
	struct kr_shm a;
	int hog[HOG_MAX], nhog = 0, kept;
	uint8_t *old;

	kp_require_hugepages(4);
	memset(&k, 0, sizeof(k));
	k.cfg.base_va = KR_POOL_BASE_VA + 0x10000000000ull; /* away from a keeper's window */
	CHECK_OK(kr_keeper_shm_map(&k, "test_shm", 2 * KR_POOL_PAGE, true, &a));
	CHECK_EQ((uintptr_t)a.addr, k.cfg.base_va + KR_SHM_VA_OFFSET);
	CHECK(ftruncate(a.fd, 0) == -1 && errno == EPERM);
	CHECK(ftruncate(a.fd, 8 * KR_POOL_PAGE) == -1 && errno == EPERM);

	/* renew: the kept descriptor has the old pages only */
	memset(a.addr, 0x5a, 4096);
	kept = dup(a.fd);
	CHECK(kept >= 0);
	old = mmap(NULL, KR_POOL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, kept, 0);
	CHECK(old != MAP_FAILED);
	CHECK_OK(kr_keeper_shm_renew("test_shm", &a));
	CHECK_EQ((uintptr_t)a.addr, k.cfg.base_va + KR_SHM_VA_OFFSET);
	CHECK_EQ(a.addr[0], 0);
	CHECK_EQ(old[0], 0x5a);
	memset(old, 0x66, 4096);
	CHECK_EQ(a.addr[0], 0);
	munmap(old, KR_POOL_PAGE);
	close(kept);

	/* a punched page with no hugepage free */
	a.addr[KR_POOL_PAGE] = 1;
	CHECK_OK(fallocate(a.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, KR_POOL_PAGE,
			   KR_POOL_PAGE));
	nhog = kp_hog_hugepages(hog, HOG_MAX);
	CHECK_EQ(kr_keeper_shm_holes(), 0);
	((volatile uint8_t *)a.addr)[KR_POOL_PAGE + 64] = 7; /* SIGBUS without the guard */
	CHECK_EQ(a.addr[KR_POOL_PAGE + 64], 7);
	CHECK_EQ(kr_keeper_shm_holes(), 1);
	printf("punched page touched with %d hugepages taken: replaced, keeper alive\n", nhog);
	while (nhog)
		close(hog[--nhog]);
	kr_keeper_shm_unmap(&a);
	KR_PASS("pool_shm");
}
