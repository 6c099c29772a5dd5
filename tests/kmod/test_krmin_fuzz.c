/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod-min, fuzz: a bounded, seeded loop of random ioctls (krmin's own
 * numbers with random contents, and random numbers), mmaps, reads and polls
 * on a keeper file and two job files, with random sizes, versions, slot
 * ids, addresses, lengths, tokens and argument pointers (NULL, kernel,
 * unmapped, read-only, straddling a guard page). Files are sometimes closed
 * and reopened, so keeper teardown with live slots is fuzzed too. The test
 * passes if the kernel stays quiet (checked by run_qemu_tests.sh) and every
 * return is 0 or an errno the uapi lists.
 * Usage: test_krmin_fuzz [seed [iterations]]. Runs inside the qemu guest.
 */
#include <stdlib.h>

#include "krmin_test.h"

#ifndef KT_FUZZ_SEED
#define KT_FUZZ_SEED 1
#endif
#ifndef KT_FUZZ_ITERS
#define KT_FUZZ_ITERS 100000
#endif

#define MEM_PAGES 64
#define NR_FDS	  3
#define NR_TOKENS 8

static uint64_t rng_state;

/* xorshift64*: the same sequence for the same seed, on any libc. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

struct fuzz {
	int fd[NR_FDS]; /* fd[0] tries to be the keeper */
	uint8_t *mem;	/* MEM_PAGES of ordinary memory: slot pages */
	uint8_t *arg;	/* read-write page for ioctl arguments */
	uint8_t *ro;	/* read-only page */
	uint8_t *guard; /* arg page followed by an unmapped page */
	uint64_t tokens[NR_TOKENS];
	uint32_t claimed[NR_TOKENS]; /* slots some job file claimed */
	unsigned long ops, ok, errs[160];
	unsigned long maps, touches, sigbus;
	unsigned long calls[9], calls_ok[9]; /* by ioctl number */
};

static uint64_t rnd_addr(struct fuzz *f)
{
	switch (rnd_below(16)) {
	case 0:
		return 0;
	case 1:
		return 0xffffffff81000000ull + rnd_below(1 << 20) * KT_PAGE;
	case 2:
		return (uintptr_t)f->mem + rnd_below(MEM_PAGES * KT_PAGE);
	case 3:
		return rnd() & ~(KT_PAGE - 1);
	case 4:
		return (uintptr_t)f->guard;
	default:
		return (uintptr_t)f->mem + rnd_below(MEM_PAGES) * KT_PAGE;
	}
}

static uint64_t rnd_len(void)
{
	switch (rnd_below(12)) {
	case 0:
		return 0;
	case 1:
		return rnd();
	case 2:
		return rnd_below(3 * KT_PAGE);
	case 3:
		return KRMIN_SLOT_MAX_BYTES + KT_PAGE * rnd_below(2);
	default:
		return KT_PAGE * (1 + rnd_below(4));
	}
}

static uint32_t rnd_slot(void)
{
	switch (rnd_below(8)) {
	case 0:
		return (uint32_t)rnd();
	case 1:
		return KRMIN_MAX_SLOTS - 1 + (uint32_t)rnd_below(3);
	default:
		return (uint32_t)rnd_below(16);
	}
}

/* Where the ioctl argument lives; returns the pointer to pass. */
static void *rnd_argp(struct fuzz *f, size_t size)
{
	switch (rnd_below(16)) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)0xffffffff81000000ull;
	case 2:
		return f->ro;
	case 3: /* straddles into the unmapped page */
		return f->guard + KT_PAGE - size / 2;
	case 4:
		return (void *)(uintptr_t)(rnd() | 1);
	default:
		return f->arg;
	}
}

static void fill_arg(struct fuzz *f, unsigned long cmd)
{
	size_t size = _IOC_SIZE(cmd);
	uint32_t *hdr = (uint32_t *)f->arg;
	uint64_t *w = (uint64_t *)f->arg;
	size_t i;

	for (i = 0; i < 8; i++)
		w[i] = rnd_below(8) ? 0 : rnd();
	/* Mostly a well-formed header, so the handlers get past it. */
	hdr[0] = rnd_below(16) ? (uint32_t)size : (uint32_t)rnd_below(128);
	hdr[1] = rnd_below(16) ? KRMIN_UAPI_VERSION : (uint32_t)rnd_below(4);
	switch (cmd) {
	case KRMIN_IOC_SLOT_REG: {
		struct krmin_slot_reg *r = (void *)f->arg;

		r->ring_addr = rnd_addr(f);
		r->ring_len = rnd_len();
		r->dbr_addr = rnd_addr(f);
		r->dbr_len = rnd_len();
		r->tenant = (uint32_t)rnd_below(3);
		break;
	}
	case KRMIN_IOC_SLOT_GRANT: {
		struct krmin_slot_grant *g = (void *)f->arg;

		g->slot = rnd_slot();
		break;
	}
	case KRMIN_IOC_SLOT_CLAIM: {
		struct krmin_slot_claim *c = (void *)f->arg;

		c->token = rnd_below(4) ? f->tokens[rnd_below(NR_TOKENS)] : rnd();
		break;
	}
	case KRMIN_IOC_SLOT_ADD_IO: { /* on RAM or nothing: refused, but parsed */
		struct krmin_slot_io *io = (void *)f->arg;

		io->slot = rnd_slot();
		io->io_addr = rnd_addr(f);
		io->io_len = rnd_len();
		break;
	}
	case KRMIN_IOC_SLOT_UNREG:
	case KRMIN_IOC_SLOT_REVOKE:
	case KRMIN_IOC_SLOT_RELEASE: {
		struct krmin_slot_id *s = (void *)f->arg;

		s->slot = rnd_slot();
		break;
	}
	default:
		break;
	}
}

static const unsigned long cmds[] = {
    KRMIN_IOC_KEEPER_REG,  KRMIN_IOC_SLOT_REG,	 KRMIN_IOC_SLOT_UNREG,	 KRMIN_IOC_SLOT_GRANT,
    KRMIN_IOC_SLOT_REVOKE, KRMIN_IOC_SLOT_CLAIM, KRMIN_IOC_SLOT_RELEASE, KRMIN_IOC_SLOT_ADD_IO,
};

static bool errno_listed(int e)
{
	switch (e) {
	case EINVAL:
	case EPROTO:
	case ENOTTY:
	case EPERM:
	case EACCES:
	case EBUSY:
	case ENOSPC:
	case ENOMEM:
	case EFAULT:
	case ENOENT:
	case EAGAIN:
		return true;
	default:
		return false;
	}
}

static void account(struct fuzz *f, int ret, const char *what)
{
	f->ops++;
	if (ret == 0) {
		f->ok++;
		return;
	}
	if (!errno_listed(-ret))
		KR_FAIL("%s: unexpected %d (%s)", what, ret, strerror(-ret));
	f->errs[-ret < 160 ? -ret : 0]++;
}

/* Mostly the right kind of file for the call, sometimes any. */
static int pick_fd(struct fuzz *f, bool job_call)
{
	if (rnd_below(8) == 0)
		return f->fd[rnd_below(NR_FDS)];
	return job_call ? f->fd[1 + rnd_below(NR_FDS - 1)] : f->fd[0];
}

static void op_ioctl(struct fuzz *f)
{
	unsigned long cmd = cmds[rnd_below(sizeof(cmds) / sizeof(cmds[0]))];
	unsigned int nr = _IOC_NR(cmd);
	bool job_call = cmd == KRMIN_IOC_SLOT_CLAIM || cmd == KRMIN_IOC_SLOT_RELEASE;
	int fd = pick_fd(f, job_call);
	void *argp;
	int ret;

	fill_arg(f, cmd);
	argp = rnd_argp(f, _IOC_SIZE(cmd));
	if (argp == f->guard + KT_PAGE - _IOC_SIZE(cmd) / 2)
		memcpy(argp, f->arg, _IOC_SIZE(cmd) / 2);
	ret = kt_ioctl(fd, cmd, argp);
	if (!ret && argp == f->arg && cmd == KRMIN_IOC_SLOT_GRANT)
		f->tokens[rnd_below(NR_TOKENS)] = ((struct krmin_slot_grant *)f->arg)->token;
	if (!ret && argp == f->arg && cmd == KRMIN_IOC_SLOT_CLAIM)
		f->claimed[rnd_below(NR_TOKENS)] = ((struct krmin_slot_claim *)f->arg)->slot;
	account(f, ret, "ioctl");
	f->calls[nr]++;
	f->calls_ok[nr] += !ret;
}

static void op_bad_ioctl(struct fuzz *f, int fd)
{
	unsigned long cmd;
	int ret;

	if (rnd_below(2))
		cmd = (uint32_t)rnd();
	else /* our magic, random number, size and direction */
		cmd = _IOC(rnd_below(4), KRMIN_IOC_MAGIC, rnd_below(12), rnd_below(128));
	fill_arg(f, cmd);
	ret = kt_ioctl(fd, cmd, rnd_argp(f, 64));
	account(f, ret, "random ioctl");
}

static void op_mmap(struct fuzz *f)
{
	int fd = pick_fd(f, true);
	static const int prots[] = {PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE | PROT_EXEC,
				    PROT_NONE};
	size_t len = KT_PAGE * (1 + rnd_below(6));
	uint32_t slot = rnd_below(4) ? f->claimed[rnd_below(NR_TOKENS)] : rnd_slot();
	uint64_t off = krmin_mmap_offset(slot) + KT_PAGE * rnd_below(6);
	int flags = rnd_below(8) ? MAP_SHARED : MAP_PRIVATE;
	int prot = prots[rnd_below(4)];
	uint8_t *p;
	size_t i;

	if (rnd_below(16) == 0)
		off = rnd() & ~(KT_PAGE - 1) & 0x7fffffffffffffffull;
	p = mmap(NULL, len, prot, flags, fd, (off_t)off);
	if (p == MAP_FAILED) {
		account(f, errno == EOVERFLOW ? -EINVAL : -errno, "mmap");
		return;
	}
	account(f, 0, "mmap");
	f->maps++;
	/* Writes stay within the fuzzer's own slot memory. */
	for (i = 0; i < len && (prot & PROT_WRITE); i += KT_PAGE * (1 + rnd_below(3))) {
		f->touches++;
		if (kt_touch(p + i + rnd_below(KT_PAGE), true, (uint8_t)rnd(), NULL))
			f->sigbus++;
		if (rnd_below(64) == 0) /* revoke under a live mapping */
			op_ioctl(f);
	}
	munmap(p, len);
}

static void op_read(struct fuzz *f)
{
	int fd = pick_fd(f, false);
	size_t count = rnd_below(4) ? 8 * (1 + rnd_below(40)) : rnd_below(12);
	void *buf = rnd_argp(f, count);
	ssize_t n;

	if (buf == f->guard + KT_PAGE - count / 2 || buf == f->arg)
		count = count > KT_PAGE ? KT_PAGE : count;
	n = read(fd, buf, count);
	account(f, n < 0 ? -errno : 0, "read");
}

static void op_reopen(struct fuzz *f)
{
	int i = (int)rnd_below(NR_FDS);

	close(f->fd[i]);
	f->fd[i] = kt_open();
	/* Nonblocking: read() on the keeper must never wait here. */
	fcntl(f->fd[i], F_SETFL, O_NONBLOCK);
}

int main(int argc, char **argv)
{
	unsigned long seed = argc > 1 ? strtoul(argv[1], NULL, 0) : KT_FUZZ_SEED;
	unsigned long iters = argc > 2 ? strtoul(argv[2], NULL, 0) : KT_FUZZ_ITERS;
	struct pollfd pfd;
	struct fuzz f;
	unsigned long it;
	uint64_t t0;
	int i, fd;

	if (access(KT_DEV, F_OK))
		KR_SKIP("%s missing: krmin.ko not loaded", KT_DEV);
	memset(&f, 0, sizeof(f));
	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	/* Fenced by PROT_NONE pages: nothing else can be pinned and written. */
	f.mem = kt_mem((MEM_PAGES + 2) * KT_PAGE);
	CHECK(mprotect(f.mem, KT_PAGE, PROT_NONE) == 0);
	f.mem += KT_PAGE;
	CHECK(mprotect(f.mem + MEM_PAGES * KT_PAGE, KT_PAGE, PROT_NONE) == 0);
	f.arg = kt_mem(KT_PAGE);
	f.ro = kt_mem(KT_PAGE);
	CHECK(mprotect(f.ro, KT_PAGE, PROT_READ) == 0);
	f.guard = kt_mem(2 * KT_PAGE);
	CHECK(munmap(f.guard + KT_PAGE, KT_PAGE) == 0);
	for (i = 0; i < NR_FDS; i++) {
		f.fd[i] = kt_open();
		fcntl(f.fd[i], F_SETFL, O_NONBLOCK);
	}

	t0 = kt_now_ns();
	for (it = 0; it < iters; it++) {
		fd = f.fd[rnd_below(NR_FDS)];
		switch (rnd_below(32)) {
		case 0 ... 13:
			op_ioctl(&f);
			break;
		case 14 ... 15:
			account(&f, kt_keeper_reg(f.fd[0]), "keeper_reg");
			break;
		case 16 ... 21:
			op_bad_ioctl(&f, fd);
			break;
		case 22 ... 26:
			op_mmap(&f);
			break;
		case 27 ... 28:
			op_read(&f);
			break;
		case 29 ... 30:
			pfd = (struct pollfd){.fd = fd, .events = POLLIN};
			account(&f, poll(&pfd, 1, 0) < 0 ? -errno : 0, "poll");
			break;
		default:
			if (rnd_below(8) == 0)
				op_reopen(&f);
			break;
		}
	}
	printf("fuzz: seed %lu, %lu iterations, %lu calls in %.2f s: %lu ok, EINVAL %lu, "
	       "EPROTO %lu, ENOTTY %lu, EPERM %lu, EACCES %lu, EBUSY %lu, EFAULT %lu, "
	       "ENOENT %lu, ENOSPC %lu, EAGAIN %lu; %lu maps, %lu touches (%lu SIGBUS)\n",
	       seed, iters, f.ops, (kt_now_ns() - t0) / 1e9, f.ok, f.errs[EINVAL], f.errs[EPROTO],
	       f.errs[ENOTTY], f.errs[EPERM], f.errs[EACCES], f.errs[EBUSY], f.errs[EFAULT],
	       f.errs[ENOENT], f.errs[ENOSPC], f.errs[EAGAIN], f.maps, f.touches, f.sigbus);
	printf("fuzz: ok/calls by ioctl:");
	for (i = 1; i <= 8; i++)
		printf(" %d:%lu/%lu", i, f.calls_ok[i], f.calls[i]);
	printf("\n");
	for (i = 0; i < NR_FDS; i++)
		close(f.fd[i]);
	KR_PASS("test_krmin_fuzz");
}
