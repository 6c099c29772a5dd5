/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod-min, ownership and mapping: keeper registration, argument checks,
 * grant/claim tokens (one-time, tenant-bound), mmap by the owner only and
 * only within the slot, post-sized writes seen by the keeper, revocation
 * by the keeper and release by the job, fork, the keeper role limited to
 * keeper_uid/keeper_gid even for holders of CAP_IPC_LOCK.
 * Runs inside the qemu guest (tests/kmod/run_qemu_tests.sh).
 */
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "krmin_test.h"

#define RING_LEN (2 * KT_PAGE)
#define DBR_LEN	 KT_PAGE
#define SLOT_LEN (RING_LEN + DBR_LEN)
#define NR_SLOTS 4

struct keeper {
	int fd;
	uint8_t *rings; /* NR_SLOTS rings, back to back */
	uint8_t *dbrs;	/* NR_SLOTS doorbell pages, elsewhere */
	uint32_t slot[NR_SLOTS];
};

static uint8_t *ring_of(struct keeper *k, int i)
{
	return k->rings + (size_t)i * RING_LEN;
}

static uint8_t *dbr_of(struct keeper *k, int i)
{
	return k->dbrs + (size_t)i * DBR_LEN;
}

static void test_keeper_reg(struct keeper *k)
{
	struct krmin_keeper_reg r = {.size = sizeof(r), .version = KRMIN_UAPI_VERSION};
	int k2;

	k->fd = kt_open();
	r.size = sizeof(r) - 1;
	CHECK_ERR(kt_ioctl(k->fd, KRMIN_IOC_KEEPER_REG, &r), -EINVAL);
	r.size = sizeof(r);
	r.version = KRMIN_UAPI_VERSION + 1;
	CHECK_ERR(kt_ioctl(k->fd, KRMIN_IOC_KEEPER_REG, &r), -EPROTO);
	CHECK_ERR(kt_ioctl(k->fd, KRMIN_IOC_KEEPER_REG, NULL), -EFAULT);
	r.version = KRMIN_UAPI_VERSION;
	CHECK_OK(kt_ioctl(k->fd, KRMIN_IOC_KEEPER_REG, &r));
	CHECK_EQ(r.max_slots, KRMIN_MAX_SLOTS);
	CHECK_EQ(r.page_size, KT_PAGE);
	CHECK_ERR(kt_keeper_reg(k->fd), -EBUSY);

	k2 = kt_open();
	CHECK_ERR(kt_keeper_reg(k2), -EBUSY);
	close(k2);
}

/* A process without CAP_IPC_LOCK cannot become the keeper. */
static void test_keeper_needs_cap(void)
{
	pid_t pid = fork();
	int status;

	CHECK(pid >= 0);
	if (pid == 0) {
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		fd = open(KT_DEV, O_RDWR);
		if (fd < 0) {
			fprintf(stderr, "map: open as uid 65534: %s\n", strerror(errno));
			_exit(3);
		}
		_exit(kt_keeper_reg(fd) == -EPERM ? 0 : 4);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

/*
 * CAP_IPC_LOCK alone is not enough: uid 65534 holding it gets EPERM (the
 * module takes keepers only from keeper_uid or keeper_gid, root by
 * default), where root gets EBUSY (a keeper is registered).
 */
static void test_keeper_role_uid(void)
{
	pid_t pid = fork();
	int status;

	CHECK(pid >= 0);
	if (pid == 0) {
		struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
		struct __user_cap_data_struct d[2];
		int fd;

		if (prctl(PR_SET_KEEPCAPS, 1) || setgroups(0, NULL) || setgid(65534) ||
		    setuid(65534))
			_exit(2);
		if (syscall(SYS_capget, &h, d))
			_exit(3);
		d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective |= CAP_TO_MASK(CAP_IPC_LOCK);
		if (syscall(SYS_capset, &h, d)) {
			fprintf(stderr, "map: capset CAP_IPC_LOCK as uid 65534: %s\n",
				strerror(errno));
			_exit(4);
		}
		fd = open(KT_DEV, O_RDWR);
		if (fd < 0)
			_exit(5);
		_exit(kt_keeper_reg(fd) == -EPERM ? 0 : 6);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

static void test_slot_reg(struct keeper *k)
{
	uint8_t *hole;
	int i;

	k->rings = kt_mem(NR_SLOTS * RING_LEN);
	k->dbrs = kt_mem(NR_SLOTS * DBR_LEN);
	hole = kt_mem(KT_PAGE);
	munmap(hole, KT_PAGE);

	CHECK_ERR(kt_slot_reg(k->fd, k->rings + 8, RING_LEN, k->dbrs, DBR_LEN, 7, NULL), -EINVAL);
	CHECK_ERR(kt_slot_reg(k->fd, k->rings, RING_LEN - 8, k->dbrs, DBR_LEN, 7, NULL), -EINVAL);
	CHECK_ERR(kt_slot_reg(k->fd, k->rings, 0, k->dbrs, DBR_LEN, 7, NULL), -EINVAL);
	CHECK_ERR(kt_slot_reg(k->fd, k->rings, RING_LEN, k->dbrs, 0, 7, NULL), -EINVAL);
	CHECK_ERR(
	    kt_slot_reg(k->fd, k->rings, KRMIN_SLOT_MAX_BYTES + KT_PAGE, k->dbrs, DBR_LEN, 7, NULL),
	    -EINVAL);
	CHECK_ERR(kt_slot_reg(k->fd, (void *)(uintptr_t)0xffffffff81000000ull, KT_PAGE, k->dbrs,
			      DBR_LEN, 7, NULL),
		  -EINVAL);
	CHECK_ERR(
	    kt_slot_reg(k->fd, (void *)(uintptr_t)-KT_PAGE, 2 * KT_PAGE, k->dbrs, DBR_LEN, 7, NULL),
	    -EINVAL);
	CHECK_ERR(kt_slot_reg(k->fd, hole, KT_PAGE, k->dbrs, DBR_LEN, 7, NULL), -EFAULT);
	CHECK_ERR(kt_slot_reg(k->fd, k->rings, RING_LEN, hole, KT_PAGE, 7, NULL), -EFAULT);

	/* Slots 0, 1 and 3 belong to tenant 7, slot 2 to tenant 8. */
	for (i = 0; i < NR_SLOTS; i++) {
		CHECK_OK(kt_slot_reg(k->fd, ring_of(k, i), RING_LEN, dbr_of(k, i), DBR_LEN,
				     i == 2 ? 8 : 7, &k->slot[i]));
		CHECK(k->slot[i] < KRMIN_MAX_SLOTS);
	}
}

/* The owner's writes land in the keeper's pinned memory and back. */
static void test_owner_writes(struct keeper *k, uint8_t *map, uint32_t i)
{
	uint8_t wqe[64];
	size_t off;
	int n;

	for (n = 0; n < 32; n++) {
		off = (size_t)n * 64 % RING_LEN;
		memset(wqe, n + 1, sizeof(wqe));
		memcpy(map + off, wqe, sizeof(wqe));
		CHECK(memcmp(ring_of(k, i) + off, wqe, sizeof(wqe)) == 0);
	}
	/* Last WQE slot of the second ring page, then the doorbell record. */
	memset(map + RING_LEN - 64, 0xa5, 64);
	CHECK_EQ(ring_of(k, i)[RING_LEN - 1], 0xa5);
	*(volatile uint32_t *)(map + RING_LEN) = 0x12345678;
	CHECK_EQ(*(volatile uint32_t *)dbr_of(k, i), 0x12345678);
	ring_of(k, i)[100] = 0x5a;
	CHECK_EQ(map[100], 0x5a);
}

static void test_map_denied(struct keeper *k, int job, int other)
{
	int err;

	/* Not the owner, not a job, not owned, not registered, out of range. */
	CHECK(!kt_map_rw(other, k->slot[0], 0, SLOT_LEN, &err));
	CHECK_EQ(err, -EACCES);
	CHECK(!kt_map_rw(k->fd, k->slot[0], 0, SLOT_LEN, &err));
	CHECK_EQ(err, -EACCES);
	CHECK(!kt_map_rw(job, k->slot[1], 0, KT_PAGE, &err));
	CHECK_EQ(err, -EACCES);
	CHECK(!kt_map_rw(job, KRMIN_MAX_SLOTS - 1, 0, KT_PAGE, &err));
	CHECK_EQ(err, -EACCES);
	CHECK(!kt_map_rw(job, KRMIN_MAX_SLOTS, 0, KT_PAGE, &err));
	CHECK_EQ(err, -EINVAL);

	/* Beyond the slot's pages. */
	CHECK(!kt_map_rw(job, k->slot[0], 0, SLOT_LEN + KT_PAGE, &err));
	CHECK_EQ(err, -EINVAL);
	CHECK(!kt_map_rw(job, k->slot[0], SLOT_LEN, KT_PAGE, &err));
	CHECK_EQ(err, -EINVAL);
	CHECK(!kt_map_rw(job, k->slot[0], 2 * KT_PAGE, 2 * KT_PAGE, &err));
	CHECK_EQ(err, -EINVAL);
	CHECK(!kt_map_rw(job, k->slot[0], 1ull << 31, KT_PAGE, &err));
	CHECK_EQ(err, -EINVAL);

	/* Private or executable. */
	CHECK(!kt_map(job, k->slot[0], 0, KT_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, &err));
	CHECK_EQ(err, -EINVAL);
	CHECK(!kt_map(job, k->slot[0], 0, KT_PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, &err));
	CHECK_EQ(err, -EINVAL);
}

/* A forked child has neither the mapping nor the use of the inherited fd. */
static void test_fork(int job, uint32_t slot, uint8_t *map)
{
	pid_t pid = fork();
	int status;

	CHECK(pid >= 0);
	if (pid == 0) {
		int err;

		if (kt_touch(map, false, 0, NULL) != SIGSEGV)
			_exit(2);
		if (kt_slot_op(job, KRMIN_IOC_SLOT_RELEASE, slot) != -EACCES)
			_exit(3);
		if (kt_map_rw(job, slot, 0, KT_PAGE, &err) || err != -EACCES)
			_exit(4);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK_EQ(map[100], 0x5a);
}

static void test_events(struct keeper *k, int job)
{
	struct krmin_revoke_event ev[4];
	struct pollfd pfd = {.fd = k->fd, .events = POLLIN};
	uint64_t token;
	char small[4];

	CHECK_EQ(poll(&pfd, 1, 0), 0);
	CHECK_OK(kt_grant(k->fd, k->slot[3], &token));
	CHECK_OK(kt_claim(job, token, NULL));
	CHECK_OK(kt_slot_op(job, KRMIN_IOC_SLOT_RELEASE, k->slot[3]));
	CHECK_ERR(kt_slot_op(job, KRMIN_IOC_SLOT_RELEASE, k->slot[3]), -EACCES);
	/* Queued: not grantable until the keeper has read it. */
	CHECK_ERR(kt_grant(k->fd, k->slot[3], &token), -EBUSY);
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	CHECK(pfd.revents & POLLIN);
	CHECK_EQ(read(k->fd, small, sizeof(small)), -1);
	CHECK_EQ(errno, EINVAL);
	CHECK_EQ(read(job, ev, sizeof(ev)), -1);
	CHECK_EQ(errno, EPERM);
	pfd.fd = job;
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	CHECK_EQ(read(k->fd, ev, sizeof(ev)), (ssize_t)sizeof(ev[0]));
	CHECK_EQ(ev[0].slot, k->slot[3]);
	CHECK_EQ(ev[0].reason, KRMIN_REVOKE_RELEASE);
	CHECK_EQ(kt_read_events(k->fd, ev, 4), 0);
	CHECK_OK(kt_grant(k->fd, k->slot[3], &token));
	CHECK_OK(kt_slot_op(k->fd, KRMIN_IOC_SLOT_REVOKE, k->slot[3]));
	CHECK_ERR(kt_claim(job, token, NULL), -EACCES);
}

/* A grant naming a process: only that process claims it, and the token survives the others. */
static void test_grant_pid(struct keeper *k)
{
	struct krmin_slot_grant g = {.size = sizeof(g), .version = KRMIN_UAPI_VERSION};
	uint8_t *page = kt_mem(2 * KT_PAGE);
	int go[2], fd = kt_open(), st;
	uint64_t token;
	uint32_t slot;
	pid_t pid;

	CHECK_OK(kt_slot_reg(k->fd, page, KT_PAGE, page + KT_PAGE, KT_PAGE, 9, &slot));
	CHECK_OK(pipe(go));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) { /* claims what the parent reads it */
		int mine = open(KT_DEV, O_RDWR | O_CLOEXEC);

		close(go[1]);
		kt_read_all(go[0], &token, sizeof(token));
		_exit(mine >= 0 && kt_claim(mine, token, NULL) == 0 ? 0 : 1);
	}
	close(go[0]);
	g.slot = slot;
	g.pid = 0x7ffffff0u; /* no such process */
	CHECK_ERR(kt_ioctl(k->fd, KRMIN_IOC_SLOT_GRANT, &g), -EINVAL);
	g.pid = 0x80000000u;
	CHECK_ERR(kt_ioctl(k->fd, KRMIN_IOC_SLOT_GRANT, &g), -EINVAL);
	g.pid = (uint32_t)pid;
	CHECK_OK(kt_ioctl(k->fd, KRMIN_IOC_SLOT_GRANT, &g));
	token = g.token;
	CHECK_ERR(kt_claim(fd, token, NULL), -EACCES); /* not ours */
	kt_write_all(go[1], &token, sizeof(token));
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(go[1]);
	close(fd);
	/* the child's exit queued the slot; unregistering drops the event too */
	CHECK_OK(kt_slot_op(k->fd, KRMIN_IOC_SLOT_UNREG, slot));
	munmap(page, 2 * KT_PAGE);
	printf("map: a grant naming a process is claimed by that process only\n");
}

static void test_misc_args(struct keeper *k, int job)
{
	struct krmin_slot_id s = {.size = sizeof(s), .version = KRMIN_UAPI_VERSION};
	uint64_t token;

	s.reserved = 1;
	CHECK_ERR(kt_ioctl(k->fd, KRMIN_IOC_SLOT_REVOKE, &s), -EINVAL);
	s.reserved = 0;
	s.slot = KRMIN_MAX_SLOTS;
	CHECK_ERR(kt_ioctl(k->fd, KRMIN_IOC_SLOT_REVOKE, &s), -EINVAL);
	CHECK_ERR(kt_ioctl(k->fd, _IO(KRMIN_IOC_MAGIC, 99), NULL), -ENOTTY);
	CHECK_ERR(kt_ioctl(k->fd, _IOWR(KRMIN_IOC_MAGIC, 2, struct krmin_slot_id), &s), -ENOTTY);
	/* Keeper-only calls from a job. */
	CHECK_ERR(kt_grant(job, k->slot[1], &token), -EPERM);
	CHECK_ERR(kt_slot_op(job, KRMIN_IOC_SLOT_REVOKE, k->slot[1]), -EPERM);
	CHECK_ERR(kt_slot_op(job, KRMIN_IOC_SLOT_UNREG, k->slot[1]), -EPERM);
	CHECK_ERR(kt_slot_reg(job, ring_of(k, 1), RING_LEN, dbr_of(k, 1), DBR_LEN, 7, NULL),
		  -EPERM);
	CHECK_ERR(kt_keeper_reg(job), -EPERM);
	/* Unregister; the id is then unknown. */
	CHECK_OK(kt_slot_op(k->fd, KRMIN_IOC_SLOT_UNREG, k->slot[1]));
	CHECK_ERR(kt_slot_op(k->fd, KRMIN_IOC_SLOT_UNREG, k->slot[1]), -ENOENT);
	CHECK_ERR(kt_grant(k->fd, k->slot[1], &token), -ENOENT);
	CHECK_OK(
	    kt_slot_reg(k->fd, ring_of(k, 1), RING_LEN, dbr_of(k, 1), DBR_LEN, 7, &k->slot[1]));
}

/* The slot table fills up with ENOSPC and empties again. */
static void test_table_full(struct keeper *k)
{
	static uint32_t ids[KRMIN_MAX_SLOTS];
	uint8_t *page = kt_mem(2 * KT_PAGE);
	int n = 0, ret, i;

	while ((ret = kt_slot_reg(k->fd, page, KT_PAGE, page + KT_PAGE, KT_PAGE, 9, &ids[n])) == 0)
		CHECK(++n <= KRMIN_MAX_SLOTS);
	CHECK_EQ(ret, -ENOSPC);
	CHECK_EQ(n, KRMIN_MAX_SLOTS - NR_SLOTS);
	for (i = 0; i < n; i++)
		CHECK_OK(kt_slot_op(k->fd, KRMIN_IOC_SLOT_UNREG, ids[i]));
	printf("map: slot table full after %d more slots (ENOSPC), emptied again\n", n);
	munmap(page, 2 * KT_PAGE);
}

int main(void)
{
	struct krmin_revoke_event ev[4];
	struct krmin_slot_claim c;
	struct keeper k;
	uint8_t *map, *map1;
	uint64_t t0, t2;
	int job, other, third, err;

	if (access(KT_DEV, F_OK))
		KR_SKIP("%s missing: krmin.ko not loaded", KT_DEV);
	test_keeper_reg(&k);
	test_keeper_needs_cap();
	test_keeper_role_uid();
	test_slot_reg(&k);
	job = kt_open();
	other = kt_open();

	/* Tokens: keeper-minted, one-time, nobody else's. */
	CHECK_OK(kt_grant(k.fd, k.slot[0], &t0));
	CHECK(t0 != 0);
	CHECK_ERR(kt_grant(k.fd, k.slot[0], &t2), -EBUSY);
	CHECK_ERR(kt_claim(k.fd, t0, NULL), -EPERM);
	CHECK_ERR(kt_claim(job, t0 + 1, NULL), -EACCES);
	CHECK_ERR(kt_claim(job, 0, NULL), -EACCES);
	CHECK_OK(kt_claim(job, t0, &c));
	CHECK_EQ(c.slot, k.slot[0]);
	CHECK_EQ(c.tenant, 7);
	CHECK_EQ(c.ring_len, RING_LEN);
	CHECK_EQ(c.dbr_len, DBR_LEN);
	CHECK_EQ(c.mmap_offset, krmin_mmap_offset(k.slot[0]));
	CHECK_ERR(kt_claim(job, t0, NULL), -EACCES);
	CHECK_ERR(kt_claim(other, t0, NULL), -EACCES);
	CHECK_ERR(kt_grant(k.fd, k.slot[0], &t2), -EBUSY);

	/* Owner maps the whole slot, and one page of it. */
	map = kt_map_rw(job, k.slot[0], 0, SLOT_LEN, &err);
	CHECK_OK(err);
	test_owner_writes(&k, map, 0);
	map1 = kt_map_rw(job, k.slot[0], KT_PAGE, KT_PAGE, &err);
	CHECK_OK(err);
	CHECK_EQ(map1[KT_PAGE - 1], 0xa5);
	CHECK(mprotect(map, KT_PAGE, PROT_READ | PROT_EXEC) != 0);
	test_map_denied(&k, job, other);

	/* Tenants: a job stays in the tenant of its first claim. */
	CHECK_OK(kt_grant(k.fd, k.slot[2], &t2));
	CHECK_ERR(kt_claim(job, t2, NULL), -EACCES);
	CHECK_OK(kt_claim(other, t2, &c));
	CHECK_EQ(c.tenant, 8);

	test_fork(job, k.slot[0], map);

	/* Keeper takes slot 0 back: the job's mappings fault with SIGBUS. */
	CHECK_OK(kt_slot_op(k.fd, KRMIN_IOC_SLOT_REVOKE, k.slot[0]));
	CHECK_EQ(kt_touch(map, false, 0, NULL), SIGBUS);
	CHECK_EQ(kt_touch(map1, true, 1, NULL), SIGBUS);
	CHECK_ERR(kt_slot_op(job, KRMIN_IOC_SLOT_RELEASE, k.slot[0]), -EACCES);
	/* Granted again to the same file, its old mapping works again. */
	CHECK_OK(kt_grant(k.fd, k.slot[0], &t0));
	CHECK_OK(kt_claim(job, t0, NULL));
	CHECK_EQ(kt_touch(map + 100, false, 0, NULL), 0);
	CHECK_EQ(map[100], 0x5a);
	/* ... but not once another job owns it. */
	CHECK_OK(kt_slot_op(k.fd, KRMIN_IOC_SLOT_REVOKE, k.slot[0]));
	third = kt_open();
	CHECK_OK(kt_grant(k.fd, k.slot[0], &t0));
	CHECK_OK(kt_claim(third, t0, NULL));
	CHECK_EQ(kt_touch(map + 100, false, 0, NULL), SIGBUS);
	close(third);
	CHECK_EQ(kt_read_events(k.fd, ev, 4), 1);
	CHECK_EQ(ev[0].slot, k.slot[0]);
	CHECK_EQ(ev[0].reason, KRMIN_REVOKE_EXIT);

	test_events(&k, job);
	test_grant_pid(&k);
	test_misc_args(&k, job);
	test_table_full(&k);

	munmap(map, SLOT_LEN);
	munmap(map1, KT_PAGE);
	close(other);
	close(job);
	close(k.fd);
	KR_PASS("test_krmin_map");
}
