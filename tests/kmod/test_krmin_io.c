/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod-min, device pages (KRMIN_IOC_SLOT_ADD_IO): a slot carries a page of
 * device memory, as a DCI's slot would carry its UAR page on a ConnectX.
 * The stand-in for the UAR is a page of an ivshmem PCI device's BAR 2
 * (run_qemu_tests.sh adds one), mapped by the keeper through sysfs
 * (resource2: VM_IO | VM_PFNMAP, uncached), never a RAM page.
 *
 * Checks: what ADD_IO refuses (anonymous memory, bad alignment and lengths,
 * a range past the device mapping, a slot that is not free or already has
 * device pages, a non-keeper, reserved fields); a job that claims the slot
 * maps its RAM and device pages in one mapping, and what it writes to the
 * device page is what the keeper reads through its own BAR mapping (and the
 * other way round); nothing beyond the device pages maps; after a revoke and
 * after the keeper's file is released the job's touch of the device page
 * raises SIGBUS, and so it does when the keeper's own mapping of the device
 * page goes while the keeper stays (a device reset or unbind zaps it:
 * uverbs' disassociate; here munmap). Runs inside the qemu guest (tests/kmod/run_qemu_tests.sh).
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "krmin_test.h"

#define RING_LEN (2 * KT_PAGE)
#define RAM_LEN	 (RING_LEN + KT_PAGE)

static int add_io(int fd, uint32_t slot, const void *addr, uint64_t len, uint32_t reserved)
{
	struct krmin_slot_io io = {.size = sizeof(io),
				   .version = KRMIN_UAPI_VERSION,
				   .slot = slot,
				   .reserved = reserved,
				   .io_addr = (uintptr_t)addr,
				   .io_len = len};

	return kt_ioctl(fd, KRMIN_IOC_SLOT_ADD_IO, &io);
}

/*
 * The job: claim token, map the whole slot (RAM then device page) in one
 * mapping, write its marks, read the keeper's; a mapping past the device
 * page must fail. Exit 0 on success.
 */
static int job_use(uint64_t token, uint32_t want)
{
	struct krmin_slot_claim c;
	volatile uint8_t *io;
	uint8_t *map;
	int fd = kt_open(), err;

	if (kt_claim(fd, token, &c))
		return 10;
	if (c.ring_len + c.dbr_len != RAM_LEN)
		return 11;
	map = kt_map_rw(fd, c.slot, 0, RAM_LEN + KT_PAGE, &err);
	if (!map)
		return 12;
	if (kt_map_rw(fd, c.slot, RAM_LEN, 2 * KT_PAGE, &err) || err != -EINVAL)
		return 13; /* one device page, not two */
	io = map + RAM_LEN;
	if (*(volatile uint32_t *)(io + 128) != want)
		return 14;
	for (int i = 0; i < 64; i++)
		io[i] = (uint8_t)(0xa0 + i);
	memset(map, 0x5c, 64); /* and the ring, as before */
	return 0;
}

/* The job for revocation: map, report, wait, then touch. Exits with the signal seen. */
static int job_touch_after(uint64_t token, int ready_fd, int go_fd)
{
	struct krmin_slot_claim c;
	uint8_t *map;
	int fd = kt_open(), err;
	char go;

	if (kt_claim(fd, token, &c))
		return 100;
	map = kt_map_rw(fd, c.slot, RAM_LEN, KT_PAGE, &err);
	if (!map || kt_touch(map, true, 1, NULL))
		return 101;
	kt_write_all(ready_fd, "r", 1);
	kt_read_all(go_fd, &go, 1);
	return kt_touch(map, true, 2, NULL); /* SIGBUS expected */
}

/* The keeper's file: a job must not hold a copy (its release is under test). */
static int keeper = -1;

static pid_t spawn_touch(uint64_t token, int *go_w)
{
	int ready[2], go[2];
	pid_t pid;
	char c;

	CHECK_OK(pipe(ready));
	CHECK_OK(pipe(go));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(keeper);
		close(ready[0]);
		close(go[1]);
		_exit(job_touch_after(token, ready[1], go[0]));
	}
	close(ready[1]);
	close(go[0]);
	kt_read_all(ready[0], &c, 1);
	close(ready[0]);
	*go_w = go[1];
	return pid;
}

static int wait_code(pid_t pid)
{
	int st;

	CHECK_EQ(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	volatile uint8_t *bar = kt_ivshmem_bar("resource2");
	uint8_t *ram = kt_mem(2 * RAM_LEN), *anon = kt_mem(KT_PAGE);
	int other = kt_open(), go;
	uint32_t s, s2;
	uint64_t token;
	pid_t pid;

	keeper = kt_open();
	CHECK_OK(kt_keeper_reg(keeper));
	CHECK_OK(kt_slot_reg(keeper, ram, RING_LEN, ram + RING_LEN, KT_PAGE, 1, &s));
	CHECK_OK(kt_slot_reg(keeper, ram + RAM_LEN, RING_LEN, ram + RAM_LEN + RING_LEN, KT_PAGE, 1,
			     &s2));

	/* what it refuses */
	CHECK_ERR(add_io(keeper, s, anon, KT_PAGE, 0), -EINVAL);		    /* RAM */
	CHECK_ERR(add_io(keeper, s, (const void *)(bar + 8), KT_PAGE, 0), -EINVAL); /* unaligned */
	CHECK_ERR(add_io(keeper, s, (const void *)bar, 0, 0), -EINVAL);
	CHECK_ERR(add_io(keeper, s, (const void *)bar, 100, 0), -EINVAL);
	CHECK_ERR(add_io(keeper, s, (const void *)bar, 3 * KT_PAGE, 0), -EINVAL); /* past it */
	CHECK_ERR(add_io(keeper, s, (const void *)bar, KRMIN_SLOT_IO_MAX_BYTES + KT_PAGE, 0),
		  -EINVAL);
	CHECK_ERR(add_io(keeper, s, (const void *)bar, KT_PAGE, 1), -EINVAL);
	CHECK_ERR(add_io(keeper, KRMIN_MAX_SLOTS, (const void *)bar, KT_PAGE, 0), -EINVAL);
	CHECK_ERR(add_io(keeper, s2 + 7, (const void *)bar, KT_PAGE, 0), -ENOENT);
	CHECK_ERR(add_io(other, s, (const void *)bar, KT_PAGE, 0), -EPERM);
	CHECK_OK(kt_grant(keeper, s2, &token)); /* not free: a job may hold the token */
	CHECK_ERR(add_io(keeper, s2, (const void *)(bar + KT_PAGE), KT_PAGE, 0), -EBUSY);
	CHECK_OK(kt_slot_op(keeper, KRMIN_IOC_SLOT_REVOKE, s2));
	CHECK_OK(add_io(keeper, s, (const void *)bar, KT_PAGE, 0));
	CHECK_ERR(add_io(keeper, s, (const void *)bar, KT_PAGE, 0), -EBUSY); /* once */
	CHECK_OK(add_io(keeper, s2, (const void *)(bar + KT_PAGE), KT_PAGE, 0));
	printf("io: ADD_IO refuses RAM, bad ranges, busy slots and non-keepers\n");

	/* a job writes the device page; the keeper reads it through the BAR */
	memset((void *)bar, 0, 256);
	*(volatile uint32_t *)(bar + 128) = 0x6b72696f;
	CHECK_OK(kt_grant(keeper, s, &token));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(keeper);
		_exit(job_use(token, 0x6b72696f));
	}
	CHECK_EQ(wait_code(pid), 0);
	for (int i = 0; i < 64; i++)
		CHECK_EQ(bar[i], 0xa0 + i);
	CHECK_EQ(ram[0], 0x5c);
	printf("io: a job's writes to its slot's device page reach the device, and back\n");

	/* revoked: the device page goes with the RAM pages */
	CHECK_OK(kt_slot_op(keeper, KRMIN_IOC_SLOT_REVOKE, s)); /* the exited job's slot */
	{
		struct krmin_revoke_event ev[4];

		kt_read_events(keeper, ev, 4); /* its exit queued one: read it */
	}
	CHECK_OK(kt_grant(keeper, s, &token));
	pid = spawn_touch(token, &go);
	CHECK_OK(kt_slot_op(keeper, KRMIN_IOC_SLOT_REVOKE, s));
	kt_write_all(go, "g", 1);
	CHECK_EQ(wait_code(pid), SIGBUS);
	close(go);
	printf("io: revoked: the job's device page raises SIGBUS\n");

	/* the keeper's device mapping goes without the keeper (a device reset or
	 * unbind zaps it; here munmap): the frames are no job's any more */
	kt_read_events(keeper, (struct krmin_revoke_event[4]){0}, 4);
	CHECK_OK(kt_grant(keeper, s, &token));
	pid = spawn_touch(token, &go);
	CHECK_OK(munmap((void *)bar, KT_PAGE));
	kt_write_all(go, "g", 1);
	CHECK_EQ(wait_code(pid), SIGBUS);
	close(go);
	printf("io: the keeper's device mapping gone (as a device reset zaps it): the job's device "
	       "page raises SIGBUS\n");

	/* the keeper goes: every slot, device pages included */
	CHECK_OK(kt_grant(keeper, s2, &token));
	pid = spawn_touch(token, &go);
	close(keeper);
	kt_write_all(go, "g", 1);
	CHECK_EQ(wait_code(pid), SIGBUS);
	close(go);
	close(other);
	printf("io: keeper gone: the job's device page raises SIGBUS\n");
	KR_PASS("test_krmin_io");
}
