/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod-min, revocation: a job that dies (SIGKILL, crash, exit) loses every
 * slot it held and the keeper is told exactly which, through poll + read;
 * the latency from kill() to the keeper's read is measured and printed (not
 * judged). A keeper that dies takes every job mapping with it: a job that
 * touches its mapping afterwards gets SIGBUS.
 * Runs inside the qemu guest (tests/kmod/run_qemu_tests.sh).
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "krmin_test.h"

#define RING_LEN  (4 * KT_PAGE)
#define SLOT_LEN  (RING_LEN + KT_PAGE)
#define NR_SLOTS  6
#define JOB_SLOTS 3 /* slots 0..2 go to the job that dies */
#define ROUNDS	  20

enum job_death { DIE_SIGKILL, DIE_CRASH, DIE_EXIT };

struct keeper {
	int fd;
	uint8_t *mem; /* NR_SLOTS x (ring, dbr), back to back */
	uint32_t slot[NR_SLOTS];
};

static uint8_t *ring_of(struct keeper *k, int i)
{
	return k->mem + (size_t)i * SLOT_LEN;
}

/*
 * The job: claims the tokens it reads from tok_fd, maps each slot, writes
 * its index into every ring page and the doorbell record, reports on
 * ready_fd, then dies as told (crash and exit wait for a byte on tok_fd).
 */
static void job_run(int tok_fd, int ready_fd, enum job_death death)
{
	uint64_t tokens[JOB_SLOTS];
	struct krmin_slot_claim c;
	int fd = kt_open(), i, err;
	volatile uintptr_t bad_addr = 8;
	char go;
	uint8_t *map;
	size_t off;

	kt_read_all(tok_fd, tokens, sizeof(tokens));
	for (i = 0; i < JOB_SLOTS; i++) {
		if (kt_claim(fd, tokens[i], &c))
			_exit(10 + i);
		map = kt_map_rw(fd, c.slot, 0, SLOT_LEN, &err);
		if (!map)
			_exit(20 + i);
		for (off = 0; off < SLOT_LEN; off += KT_PAGE)
			memset(map + off, 0xc0 + i, 64);
	}
	kt_write_all(ready_fd, "r", 1);
	if (death != DIE_SIGKILL)
		kt_read_all(tok_fd, &go, 1);
	switch (death) {
	case DIE_SIGKILL:
		for (;;)
			pause();
	case DIE_CRASH:
		*(volatile int *)bad_addr = 1;
		_exit(30);
	case DIE_EXIT:
		exit(0);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Reads events until n arrived or 2 s passed; returns how many. */
static int read_exact(struct keeper *k, struct krmin_revoke_event *ev, int n)
{
	struct pollfd pfd = {.fd = k->fd, .events = POLLIN};
	int got = 0, r;

	while (got < n) {
		if (poll(&pfd, 1, 2000) != 1)
			break;
		r = kt_read_events(k->fd, ev + got, n + 1 - got);
		CHECK(r >= 0);
		got += r;
	}
	return got;
}

/*
 * One round: a job claims slots 0..2, slot 3 is granted but never claimed,
 * slot 4 is owned by another job (job2, alive). The job dies; the keeper
 * must learn of exactly slots 0..2. Returns kill->read latency in ns.
 */
static uint64_t round_run(struct keeper *k, uint8_t *job2_map, enum job_death death)
{
	struct krmin_revoke_event ev[NR_SLOTS + 1];
	uint32_t got[JOB_SLOTS], want[JOB_SLOTS];
	uint64_t tokens[JOB_SLOTS], t_kill, t_read, unused;
	int tok[2], ready[2], i, status;
	char c;
	pid_t pid;

	CHECK(pipe(tok) == 0 && pipe(ready) == 0);
	for (i = 0; i < JOB_SLOTS; i++) {
		CHECK_OK(kt_grant(k->fd, k->slot[i], &tokens[i]));
		want[i] = k->slot[i];
	}
	CHECK_OK(kt_grant(k->fd, k->slot[3], &unused));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(tok[1]);
		close(ready[0]);
		job_run(tok[0], ready[1], death);
	}
	close(tok[0]);
	close(ready[1]);
	kt_write_all(tok[1], tokens, sizeof(tokens));
	kt_read_all(ready[0], &c, 1);
	for (i = 0; i < JOB_SLOTS; i++) {
		CHECK_EQ(ring_of(k, i)[0], 0xc0 + i);
		CHECK_EQ(ring_of(k, i)[RING_LEN], 0xc0 + i); /* the doorbell page */
	}
	CHECK_EQ(kt_read_events(k->fd, ev, NR_SLOTS), 0);

	t_kill = kt_now_ns();
	if (death == DIE_SIGKILL)
		CHECK(kill(pid, SIGKILL) == 0);
	else
		kt_write_all(tok[1], "g", 1);
	CHECK_EQ(read_exact(k, ev, JOB_SLOTS), JOB_SLOTS);
	t_read = kt_now_ns();
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (death == DIE_SIGKILL)
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	else if (death == DIE_CRASH)
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	else
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* Exactly slots 0..2, once each, reason EXIT; nothing else. */
	for (i = 0; i < JOB_SLOTS; i++) {
		CHECK_EQ(ev[i].reason, KRMIN_REVOKE_EXIT);
		got[i] = ev[i].slot;
	}
	qsort(got, JOB_SLOTS, sizeof(got[0]), cmp_u32);
	qsort(want, JOB_SLOTS, sizeof(want[0]), cmp_u32);
	CHECK(memcmp(got, want, sizeof(got)) == 0);
	usleep(1000);
	CHECK_EQ(kt_read_events(k->fd, ev, NR_SLOTS), 0);

	/* The unclaimed grant and the other job are untouched. */
	CHECK_ERR(kt_grant(k->fd, k->slot[3], &unused), -EBUSY);
	CHECK_OK(kt_slot_op(k->fd, KRMIN_IOC_SLOT_REVOKE, k->slot[3]));
	CHECK_EQ(kt_touch(job2_map, true, 0x77, NULL), 0);
	CHECK_EQ(ring_of(k, 4)[0], 0x77);
	close(tok[1]);
	close(ready[0]);
	return t_read - t_kill;
}

static void sort_u64(uint64_t *v, int n)
{
	uint64_t t;
	int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

/* For scale: kill() to waitpid() of a child that has nothing to revoke. */
static void baseline_kill_wait(void)
{
	uint64_t lat[ROUNDS], t0;
	int i, ready[2], status;
	pid_t pid;
	char c;

	for (i = 0; i < ROUNDS; i++) {
		CHECK(pipe(ready) == 0);
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			kt_write_all(ready[1], "r", 1);
			for (;;)
				pause();
		}
		kt_read_all(ready[0], &c, 1);
		t0 = kt_now_ns();
		CHECK(kill(pid, SIGKILL) == 0);
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		lat[i] = kt_now_ns() - t0;
		close(ready[0]);
		close(ready[1]);
	}
	sort_u64(lat, ROUNDS);
	printf("revoke: for scale, SIGKILL -> waitpid of a plain child: "
	       "min %.1f us, median %.1f us, max %.1f us\n",
	       lat[0] / 1e3, lat[ROUNDS / 2] / 1e3, lat[ROUNDS - 1] / 1e3);
}

static void test_job_death(void)
{
	uint64_t lat[ROUNDS], tok;
	struct krmin_revoke_event ev[2];
	struct krmin_slot_claim c;
	int fast = 0;
	struct keeper k;
	uint8_t *job2_map;
	int i, job2, err;

	k.fd = kt_open();
	CHECK_OK(kt_keeper_reg(k.fd));
	k.mem = kt_mem(NR_SLOTS * SLOT_LEN);
	for (i = 0; i < NR_SLOTS; i++)
		CHECK_OK(kt_slot_reg(k.fd, ring_of(&k, i), RING_LEN, ring_of(&k, i) + RING_LEN,
				     KT_PAGE, 1, &k.slot[i]));
	job2 = kt_open();
	CHECK_OK(kt_grant(k.fd, k.slot[4], &tok));
	CHECK_OK(kt_claim(job2, tok, &c));
	job2_map = kt_map_rw(job2, k.slot[4], 0, SLOT_LEN, &err);
	CHECK_OK(err);

	CHECK(round_run(&k, job2_map, DIE_CRASH) > 0);
	printf("revoke: crashed job (SIGSEGV): exact slot list OK\n");
	CHECK(round_run(&k, job2_map, DIE_EXIT) > 0);
	printf("revoke: exited job: exact slot list OK\n");
	for (i = 0; i < ROUNDS; i++) {
		lat[i] = round_run(&k, job2_map, DIE_SIGKILL);
		fast += lat[i] < 1000000;
	}
	sort_u64(lat, ROUNDS);
	printf("revoke: SIGKILL -> keeper poll+read latency over %d rounds: "
	       "min %.1f us, median %.1f us, max %.1f us (%d of %d under 1 ms)\n",
	       ROUNDS, lat[0] / 1e3, lat[ROUNDS / 2] / 1e3, lat[ROUNDS - 1] / 1e3, fast, ROUNDS);
	/* The mapping holds the file: the slot goes only with both. */
	close(job2);
	CHECK_EQ(read_exact(&k, ev, 1), 0);
	CHECK(munmap(job2_map, SLOT_LEN) == 0);
	CHECK_EQ(read_exact(&k, ev, 1), 1);
	CHECK_EQ(ev[0].slot, k.slot[4]);
	CHECK_EQ(ev[0].reason, KRMIN_REVOKE_EXIT);
	close(k.fd);
	munmap(k.mem, NR_SLOTS * SLOT_LEN);
}

/*
 * The keeper (a child) dies with SIGKILL while this process, a job, has two
 * of its slots mapped: both mappings must fault with SIGBUS afterwards, and
 * a new keeper can register.
 */
static void test_keeper_death(void)
{
	struct krmin_slot_claim c[2];
	uint8_t *map[2], byte;
	uint64_t tokens[2];
	int tok[2], done[2], job, i, err, status;
	pid_t pid;
	char ok;

	CHECK(pipe(tok) == 0 && pipe(done) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		uint8_t *mem = kt_mem(2 * SLOT_LEN);
		uint32_t slot[2];
		int fd = kt_open();

		close(tok[0]);
		close(done[1]);
		CHECK_OK(kt_keeper_reg(fd));
		for (i = 0; i < 2; i++) {
			CHECK_OK(kt_slot_reg(fd, mem + i * SLOT_LEN, RING_LEN,
					     mem + i * SLOT_LEN + RING_LEN, KT_PAGE, 2, &slot[i]));
			CHECK_OK(kt_grant(fd, slot[i], &tokens[i]));
		}
		kt_write_all(tok[1], tokens, sizeof(tokens));
		kt_read_all(done[0], &ok, 1);
		/* The job wrote 0x3c at the start of each ring and doorbell page. */
		ok = mem[0] == 0x3c && mem[RING_LEN] == 0x3c && mem[SLOT_LEN] == 0x3c;
		kt_write_all(tok[1], &ok, 1);
		for (;;)
			pause();
	}
	close(tok[1]);
	close(done[0]);
	job = kt_open();
	kt_read_all(tok[0], tokens, sizeof(tokens));
	for (i = 0; i < 2; i++) {
		CHECK_OK(kt_claim(job, tokens[i], &c[i]));
		map[i] = kt_map_rw(job, c[i].slot, 0, SLOT_LEN, &err);
		CHECK_OK(err);
		map[i][0] = 0x3c;
		map[i][RING_LEN] = 0x3c;
	}
	kt_write_all(done[1], "w", 1);
	kt_read_all(tok[0], &ok, 1);
	CHECK_EQ(ok, 1);

	CHECK(kill(pid, SIGKILL) == 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	for (i = 0; i < 2; i++) {
		CHECK_EQ(kt_touch(map[i], false, 0, &byte), SIGBUS);
		CHECK_EQ(kt_touch(map[i] + RING_LEN, true, 1, NULL), SIGBUS);
		CHECK_ERR(kt_slot_op(job, KRMIN_IOC_SLOT_RELEASE, c[i].slot), -EACCES);
		CHECK(!kt_map_rw(job, c[i].slot, 0, KT_PAGE, &err));
		CHECK_EQ(err, -EACCES);
		CHECK(munmap(map[i], SLOT_LEN) == 0);
	}
	printf("revoke: keeper killed: job mappings fault with SIGBUS\n");

	/* The keeper role is free again. */
	i = kt_open();
	CHECK_OK(kt_keeper_reg(i));
	close(i);
	close(job);
	close(tok[0]);
	close(done[1]);
}

int main(void)
{
	if (access(KT_DEV, F_OK))
		KR_SKIP("%s missing: krmin.ko not loaded", KT_DEV);
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_job_death();
	baseline_kill_wait();
	test_keeper_death();
	KR_PASS("test_krmin_revoke");
}
