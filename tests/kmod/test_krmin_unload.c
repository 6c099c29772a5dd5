/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod-min, unload: while /dev/krmin is open, or only a job's mapping of it
 * is left (the mapping holds the file), the module refuses to unload
 * (EWOULDBLOCK: the fops .owner holds a module reference); once the last
 * user is gone it unloads, and it loads again from /krmin.ko and works.
 * Runs last inside the qemu guest (tests/kmod/run_qemu_tests.sh).
 */
#include <sys/syscall.h>

#include "krmin_test.h"

#define KO_PATH "/krmin.ko"

static int unload(void)
{
	return syscall(SYS_delete_module, "krmin", O_NONBLOCK) ? -errno : 0;
}

static int load(const char *params)
{
	int fd = open(KO_PATH, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static void check_refused(const char *while_what)
{
	int ret = unload();

	if (ret != -EWOULDBLOCK && ret != -EBUSY)
		KR_FAIL("unload while %s: %d (%s), want EWOULDBLOCK or EBUSY", while_what, ret,
			strerror(-ret));
	CHECK_EQ(access(KT_DEV, F_OK), 0);
	printf("unload: refused while %s (%s)\n", while_what, strerror(-ret));
}

int main(void)
{
	uint8_t *mem, *map, *big;
	uint32_t slot;
	uint64_t token;
	int keeper, job, err, i;

	if (access(KT_DEV, F_OK))
		KR_SKIP("%s missing: krmin.ko not loaded", KT_DEV);

	keeper = kt_open();
	check_refused("a file is open");
	CHECK_OK(kt_keeper_reg(keeper));
	mem = kt_mem(2 * KT_PAGE);
	CHECK_OK(kt_slot_reg(keeper, mem, KT_PAGE, mem + KT_PAGE, KT_PAGE, 0, &slot));
	CHECK_OK(kt_grant(keeper, slot, &token));
	job = kt_open();
	CHECK_OK(kt_claim(job, token, NULL));
	map = kt_map_rw(job, slot, 0, 2 * KT_PAGE, &err);
	CHECK_OK(err);
	map[0] = 1;
	CHECK_EQ(mem[0], 1);
	close(job);
	close(keeper);
	/* Keeper gone: the mapping is zapped but still holds the job's file. */
	CHECK_EQ(kt_touch(map, false, 0, NULL), SIGBUS);
	check_refused("a zapped mapping is left");
	CHECK(munmap(map, 2 * KT_PAGE) == 0);

	/* The last fput may finish just after munmap returns: retry briefly. */
	for (i = 0; i < 100 && (err = unload()) == -EWOULDBLOCK; i++)
		usleep(10000);
	CHECK_OK(err);
	CHECK(access(KT_DEV, F_OK) != 0);
	printf("unload: unloaded once unused\n");

	/* Reloaded with a 1 MiB pin limit: 16 slots of 16 pages fit, no more. */
	CHECK_OK(load("max_pinned_mb=1"));
	keeper = kt_open();
	CHECK_OK(kt_keeper_reg(keeper));
	big = kt_mem(16 * KT_PAGE);
	for (i = 0; i < 16; i++)
		CHECK_OK(
		    kt_slot_reg(keeper, big, 15 * KT_PAGE, big + 15 * KT_PAGE, KT_PAGE, 0, &slot));
	CHECK_ERR(kt_slot_reg(keeper, mem, KT_PAGE, mem + KT_PAGE, KT_PAGE, 0, &slot), -ENOSPC);
	CHECK_OK(kt_slot_op(keeper, KRMIN_IOC_SLOT_UNREG, slot));
	CHECK_OK(kt_slot_reg(keeper, mem, KT_PAGE, mem + KT_PAGE, KT_PAGE, 0, &slot));
	close(keeper);
	printf("unload: reloaded with max_pinned_mb=1: pin limit enforced (ENOSPC)\n");
	KR_PASS("test_krmin_unload");
}
