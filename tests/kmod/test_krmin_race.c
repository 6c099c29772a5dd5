/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod-min, concurrency: worker jobs loop claim -> mmap -> write -> munmap
 * -> release while the keeper grants, revokes at random, reads events and
 * SIGKILLs and respawns workers. Any outcome a race allows is accepted
 * (EACCES after a revocation, SIGBUS on a zapped page); afterwards every
 * slot must be back to free and grantable, and the kernel must stay quiet.
 * Bounded by a grant count, seeded. Runs inside the qemu guest.
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "krmin_test.h"

#define NR_SLOTS   6
#define NR_WORKERS 3
#define RING_LEN   (2 * KT_PAGE)
#define SLOT_LEN   (RING_LEN + KT_PAGE)
#define GRANTS	   3000

/* Per-worker counters, in shared memory so they survive SIGKILL. */
struct worker_stats {
	unsigned long claimed, claim_denied, mapped, map_denied, sigbus, released, release_denied;
};

struct worker {
	pid_t pid;
	int req_fd; /* keeper reads a byte: "give me a token" */
	int tok_fd; /* keeper writes a token */
	bool waiting;
};

static void worker_run(int req_fd, int tok_fd, struct worker_stats *st, unsigned int seed)
{
	struct krmin_slot_claim c;
	int fd = kt_open(), err, r;
	uint64_t token;
	uint8_t *map;
	size_t off;

	srand(seed);
	for (;;) {
		kt_write_all(req_fd, "?", 1);
		kt_read_all(tok_fd, &token, sizeof(token));
		r = kt_claim(fd, token, &c);
		if (r == -EACCES) {
			st->claim_denied++;
			continue;
		}
		if (r)
			_exit(10);
		st->claimed++;
		map = kt_map_rw(fd, c.slot, 0, SLOT_LEN, &err);
		if (!map) {
			if (err != -EACCES)
				_exit(11);
			st->map_denied++;
		} else {
			st->mapped++;
			for (off = 0; off < SLOT_LEN; off += 64) {
				if (kt_touch(map + off, true, (uint8_t)off, NULL)) {
					st->sigbus++;
					break;
				}
			}
			munmap(map, SLOT_LEN);
		}
		/* Sometimes keep the slot: the keeper revokes or kills. */
		if (rand() % 4 == 0)
			continue;
		r = kt_slot_op(fd, KRMIN_IOC_SLOT_RELEASE, c.slot);
		if (r == -EACCES)
			st->release_denied++;
		else if (r)
			_exit(12);
		else
			st->released++;
	}
}

static void worker_spawn(struct worker *w, struct worker_stats *st, unsigned int seed)
{
	int req[2], tok[2];

	CHECK(pipe(req) == 0 && pipe(tok) == 0);
	w->pid = fork();
	CHECK(w->pid >= 0);
	if (w->pid == 0) {
		close(req[0]);
		close(tok[1]);
		worker_run(req[1], tok[0], st, seed);
	}
	close(req[1]);
	close(tok[0]);
	w->req_fd = req[0];
	w->tok_fd = tok[1];
	w->waiting = false;
}

static void worker_kill(struct worker *w)
{
	int status;

	kill(w->pid, SIGKILL);
	CHECK_EQ(waitpid(w->pid, &status, 0), w->pid);
	/* Killed, or died of EPIPE on a token we wrote: nothing else. */
	CHECK(WIFSIGNALED(status));
	close(w->req_fd);
	close(w->tok_fd);
}

int main(void)
{
	struct krmin_revoke_event ev[NR_SLOTS];
	struct pollfd pfd[NR_WORKERS];
	struct worker w[NR_WORKERS];
	struct worker_stats *st, sum = {0};
	unsigned long grants = 0, revokes = 0, kills = 0, events = 0, busy = 0;
	uint32_t slot[NR_SLOTS], next = 0;
	uint64_t token, t0;
	uint8_t *mem;
	bool waiting;
	int k, i, j, n;
	char c;

	if (access(KT_DEV, F_OK))
		KR_SKIP("%s missing: krmin.ko not loaded", KT_DEV);
	signal(SIGPIPE, SIG_IGN);
	srand(7);
	st = mmap(NULL, sizeof(*st) * NR_WORKERS, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(st != MAP_FAILED);
	k = kt_open();
	CHECK_OK(kt_keeper_reg(k));
	mem = kt_mem(NR_SLOTS * SLOT_LEN);
	for (i = 0; i < NR_SLOTS; i++)
		CHECK_OK(kt_slot_reg(k, mem + i * SLOT_LEN, RING_LEN, mem + i * SLOT_LEN + RING_LEN,
				     KT_PAGE, 3, &slot[i]));
	for (i = 0; i < NR_WORKERS; i++)
		worker_spawn(&w[i], &st[i], 100 + i);

	t0 = kt_now_ns();
	while (grants < GRANTS) {
		n = kt_read_events(k, ev, NR_SLOTS);
		CHECK(n >= 0);
		events += n;
		waiting = false;
		for (i = 0; i < NR_WORKERS; i++) {
			pfd[i] = (struct pollfd){.fd = w[i].req_fd, .events = POLLIN};
			waiting |= w[i].waiting;
		}
		CHECK(poll(pfd, NR_WORKERS, waiting ? 0 : 100) >= 0);
		for (i = 0; i < NR_WORKERS; i++) {
			if ((pfd[i].revents & POLLIN) && read(w[i].req_fd, &c, 1) == 1)
				w[i].waiting = true;
			if (!w[i].waiting)
				continue;
			/* The kernel knows which slots are free: try them in turn. */
			for (j = 0; j < NR_SLOTS; j++) {
				uint32_t s = slot[next];
				int r = kt_grant(k, s, &token);

				next = (next + 1) % NR_SLOTS;
				if (r == -EBUSY) {
					busy++;
					continue;
				}
				CHECK_OK(r);
				grants++;
				w[i].waiting = false;
				if (write(w[i].tok_fd, &token, sizeof(token)) != sizeof(token))
					CHECK_OK(kt_slot_op(k, KRMIN_IOC_SLOT_REVOKE, s));
				break;
			}
		}
		if (rand() % 4 == 0) {
			CHECK_OK(kt_slot_op(k, KRMIN_IOC_SLOT_REVOKE, slot[rand() % NR_SLOTS]));
			revokes++;
		}
		if (rand() % 64 == 0) {
			i = rand() % NR_WORKERS;
			worker_kill(&w[i]);
			kills++;
			worker_spawn(&w[i], &st[i], 1000 + (unsigned int)kills);
		}
	}
	for (i = 0; i < NR_WORKERS; i++)
		worker_kill(&w[i]);

	/*
	 * Tokens sent to a worker that died before claiming stay granted
	 * until the keeper cancels them; slots owned by dead workers come
	 * back as events. Then every slot must be free.
	 */
	for (i = 0; i < NR_SLOTS; i++)
		CHECK_OK(kt_slot_op(k, KRMIN_IOC_SLOT_REVOKE, slot[i]));
	while ((n = kt_read_events(k, ev, NR_SLOTS)) > 0)
		events += n;
	CHECK_EQ(n, 0);
	for (i = 0; i < NR_SLOTS; i++) {
		CHECK_OK(kt_grant(k, slot[i], &token));
		CHECK_OK(kt_slot_op(k, KRMIN_IOC_SLOT_REVOKE, slot[i]));
	}
	for (i = 0; i < NR_WORKERS; i++) {
		sum.claimed += st[i].claimed;
		sum.claim_denied += st[i].claim_denied;
		sum.mapped += st[i].mapped;
		sum.map_denied += st[i].map_denied;
		sum.sigbus += st[i].sigbus;
		sum.released += st[i].released;
		sum.release_denied += st[i].release_denied;
	}
	printf("race: %lu grants (%lu EBUSY tries), %lu keeper revokes, %lu worker kills, "
	       "%lu events in %.2f s\n",
	       grants, busy, revokes, kills, events, (kt_now_ns() - t0) / 1e9);
	printf("race: workers: %lu claims (%lu denied), %lu maps (%lu denied), %lu SIGBUS, "
	       "%lu releases (%lu denied)\n",
	       sum.claimed, sum.claim_denied, sum.mapped, sum.map_denied, sum.sigbus, sum.released,
	       sum.release_denied);
	CHECK(sum.claimed > 0 && sum.mapped > 0 && sum.released > 0);
	close(k);
	KR_PASS("test_krmin_race");
}
