/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reg_mr: memory a job shares as a file (kr_reg_mr_fd). A sealed memfd of
 * 4 KiB pages and a hugetlb one are registered at the job's own addresses:
 * a READ through a DCI with the file's rkey returns what the job wrote in
 * its mapping, a vQP WRITE takes its local buffer from the file and lands
 * in the heap, a WRITE into the file shows in the job's mapping. Registering
 * the same file twice gives two keys, each valid alone; a read-only
 * descriptor registers for remote reads only. Bad input, each refused with
 * nothing left behind: a pipe, a tmpfs file that is not a sealed memfd, an
 * unsealed memfd, a closed descriptor, a range past the file, an address
 * that does not match the offset, write rights on a read-only descriptor,
 * a request with no descriptor attached (the keeper closes that
 * connection), another job deregistering this job's MRs by id. A job that
 * dies takes its file MRs with it: their rkey then fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

#define FLEN (1u << 20)
#define RW   (KR_MR_LOCAL_WRITE | KR_MR_REMOTE_WRITE | KR_MR_REMOTE_READ)

static struct kp_keeper K;

/* A memfd of len bytes (hugetlb if huge), sealed against shrinking unless !seal, mapped. */
static int sealed_memfd(size_t len, bool huge, bool seal, uint8_t **map)
{
	int fd = memfd_create("kr_test_file",
			      MFD_CLOEXEC | MFD_ALLOW_SEALING | (huge ? MFD_HUGETLB : 0));

	CHECK(fd >= 0);
	CHECK_OK(ftruncate(fd, (off_t)len));
	if (seal)
		CHECK_OK(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK));
	*map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(*map != MAP_FAILED);
	return fd;
}

/* One READ of len bytes at (addr, rkey) into dst through l: the completion status. */
static int read_at(struct kr_ctx *ctx, const struct kr_lease *l, void *dst, uint32_t len,
		   const void *addr, uint32_t rkey)
{
	struct kr_devx_dc_av av;

	CHECK_OK(kr_job_tenant_av(ctx, &av));
	return kp_dci_read(ctx, l, &av, dst, len, (uintptr_t)addr, rkey);
}

static void wait_ok(struct kr_vqp *v, uint64_t wr_id)
{
	struct kr_wc wc;
	int n = 0;

	for (double t0 = kp_now_ms(); n == 0 && kp_now_ms() - t0 < 10000;) {
		n = kr_poll(v, &wc, 1);
		CHECK(n >= 0);
	}
	CHECK_EQ(n, 1);
	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
}

static void expect_refused(struct kr_ctx *ctx, int fd, uint64_t off, size_t len, void *addr,
			   uint32_t access, int err)
{
	errno = 0;
	CHECK(kr_reg_mr_fd(ctx, fd, off, len, addr, access) == NULL);
	CHECK_EQ(errno, err);
}

/* A job of the same launch: registers a file, reports its key, waits to be killed. */
static void victim(int out, int in, void *arg)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	struct kr_mr_key key = {0};
	struct kr_mr *mr = NULL;
	uint8_t *map;
	int fd;

	(void)arg;
	if (read(in, &(char){0}, 1) != 1)
		_exit(3);
	if (ctx) {
		fd = sealed_memfd(FLEN, false, true, &map);
		memcpy(map, "victim's", 8);
		mr = kr_reg_mr_fd(ctx, fd, 0, FLEN, map, KR_MR_REMOTE_READ);
		close(fd);
	}
	if (mr)
		kr_mr_key(mr, &key);
	if (write(out, &key, sizeof(key)) != sizeof(key))
		_exit(2);
	pause(); /* SIGKILLed */
	_exit(0);
}

/* Another job: raw KR_MSG_DEREG_MR for every id (none is its own), then a REG_MR_FD with no fd. */
static void intruder(int out, int in, void *arg)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	int refused = 0, closed = 0;

	(void)arg;
	if (read(in, &(char){0}, 1) != 1)
		_exit(3);
	if (ctx) {
		struct kr_msg_reply rep;
		struct kr_msg_mr_fd req = {.addr = 4096, .off = 4096, .len = 4096};

		for (uint32_t id = 1; id <= KR_POOL_MAX_JOB_MRS; id++) {
			struct kr_msg_mr d = {.id = id};

			kr_msg_init(&d.hdr, KR_MSG_DEREG_MR, sizeof(d), 0);
			pthread_mutex_lock(&ctx->lock);
			refused += kr_job_call(ctx, &d, sizeof(d), &rep) == -EINVAL;
			pthread_mutex_unlock(&ctx->lock);
		}
		kr_msg_init(&req.hdr, KR_MSG_REG_MR_FD, sizeof(req), 0);
		pthread_mutex_lock(&ctx->lock);
		closed = kr_job_call(ctx, &req, sizeof(req), &rep) == -EMSGSIZE;
		pthread_mutex_unlock(&ctx->lock);
	}
	int rep[2] = {refused, closed};
	if (write(out, rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(0);
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "3",
					   "--heap-mb", "4", "--hugepages", "32", NULL};
	struct kp_child vic, intr;
	struct kr_mr_key key, vkey;
	struct kr_mr *mr, *mr2, *hmr, *ro;
	struct kr_lease l;
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	uint8_t *file, *hfile, *buf, *scratch;
	int fd, hfd, rofd, rep[2], status;

	kp_require_hugepages(40);
	kp_keeper_init(&K);
	CHECK_OK(kp_keeper_start(&K, args));
	vic = kp_spawn(victim, NULL);
	intr = kp_spawn(intruder, NULL);
	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	buf = kr_malloc(ctx, 2 * FLEN);
	CHECK(buf != NULL);
	CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l));

	/* a 4 KiB-page memfd at the job's address, the descriptor closed at once */
	fd = sealed_memfd(FLEN, false, true, &file);
	mr = kr_reg_mr_fd(ctx, fd, 0, FLEN, file, RW);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	CHECK_EQ(key.addr, (uintptr_t)file);
	CHECK_EQ(key.len, FLEN);
	for (uint32_t i = 0; i < FLEN; i++)
		file[i] = (uint8_t)(i * 7 + 1);
	CHECK_EQ(read_at(ctx, &l, buf, 4096, file + FLEN - 4096, key.rkey), KR_WC_SUCCESS);
	CHECK(!memcmp(buf, file + FLEN - 4096, 4096));
	/* a vQP WRITE from the file into the heap, and from the heap into the file */
	v = kr_connect(ctx, KR_NODE_SELF, NULL);
	CHECK(v != NULL);
	CHECK_OK(kr_post_write(v, file + 8192, 4096, (uintptr_t)buf + FLEN, ctx->heap_rkey, 1, 0));
	wait_ok(v, 1);
	CHECK(!memcmp(buf + FLEN, file + 8192, 4096));
	memset(buf, 0xab, 4096);
	CHECK_OK(kr_post_write(v, buf, 4096, (uintptr_t)file + 12288, key.rkey, 2, 0));
	wait_ok(v, 2);
	CHECK_EQ(file[12288], 0xab);
	CHECK_EQ(file[12288 + 4095], 0xab);
	/* a buffer straddling the file's end is neither the heap's nor the file's */
	CHECK_ERR(kr_post_write(v, file + FLEN - 8, 16, (uintptr_t)buf, ctx->heap_rkey, 3, 0),
		  -EINVAL);
	close(fd);

	/* the same file twice: two keys, each valid alone */
	fd = sealed_memfd(FLEN, false, true, &scratch);
	mr2 = kr_reg_mr_fd(ctx, fd, 0, FLEN, scratch, KR_MR_REMOTE_READ);
	CHECK(mr2 != NULL);
	{
		struct kr_mr *again =
		    kr_reg_mr_fd(ctx, fd, 4096, 4096, scratch + 4096, KR_MR_REMOTE_READ);
		struct kr_mr_key k2, k3;

		CHECK(again != NULL);
		CHECK_OK(kr_mr_key(mr2, &k2));
		CHECK_OK(kr_mr_key(again, &k3));
		CHECK(k2.rkey != k3.rkey);
		memcpy(scratch + 4096, "twice!!!", 8);
		CHECK_OK(kr_dereg_mr(mr2));
		CHECK_EQ(read_at(ctx, &l, buf, 8, scratch + 4096, k3.rkey), KR_WC_SUCCESS);
		CHECK(!memcmp(buf, "twice!!!", 8));
		CHECK_OK(kr_dereg_mr(again));
	}
	/* read-only descriptor: remote read yes, write rights no */
	{
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		rofd = open(path, O_RDONLY | O_CLOEXEC);
		CHECK(rofd >= 0);
		expect_refused(ctx, rofd, 0, 4096, scratch, RW, EINVAL);
		ro = kr_reg_mr_fd(ctx, rofd, 0, 4096, scratch, KR_MR_REMOTE_READ);
		CHECK(ro != NULL);
		CHECK_OK(kr_dereg_mr(ro));
		close(rofd);
	}

	/* a 2 MB hugetlb memfd, a range inside its page */
	hfd = sealed_memfd(2u << 20, true, true, &hfile);
	memcpy(hfile + 4096 + 100, "hugepage", 8);
	hmr = kr_reg_mr_fd(ctx, hfd, 4096, 8192, hfile + 4096, KR_MR_REMOTE_READ);
	CHECK(hmr != NULL);
	CHECK_OK(kr_mr_key(hmr, &key));
	CHECK_EQ(read_at(ctx, &l, buf, 8, hfile + 4096 + 100, key.rkey), KR_WC_SUCCESS);
	CHECK(!memcmp(buf, "hugepage", 8));
	CHECK_OK(kr_dereg_mr(hmr));
	close(hfd);

	/* bad input */
	{
		int p[2], shm, unsealed;
		uint8_t *um;

		CHECK_OK(pipe(p));
		expect_refused(ctx, p[0], 0, 4096, scratch, KR_MR_REMOTE_READ, EINVAL);
		close(p[0]);
		close(p[1]);
		shm = open("/dev/shm", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (shm >= 0) { /* tmpfs, but no seals: could be truncated under the keeper */
			CHECK_OK(ftruncate(shm, 4096));
			expect_refused(ctx, shm, 0, 4096, scratch, KR_MR_REMOTE_READ, EINVAL);
			close(shm);
		}
		unsealed = sealed_memfd(4096, false, false, &um);
		expect_refused(ctx, unsealed, 0, 4096, um, KR_MR_REMOTE_READ, EINVAL);
		close(unsealed);
		expect_refused(ctx, unsealed, 0, 4096, um, KR_MR_REMOTE_READ, EBADF);
		expect_refused(ctx, fd, FLEN - 4096, 8192, scratch + FLEN - 4096, KR_MR_REMOTE_READ,
			       EINVAL); /* past the file */
		expect_refused(ctx, fd, 4096, 4096, scratch + 4095, KR_MR_REMOTE_READ, EINVAL);
		expect_refused(ctx, fd, 0, 0, scratch, KR_MR_REMOTE_READ, EINVAL);
		expect_refused(ctx, fd, 0, 4096, scratch, 0x10, EINVAL);
		expect_refused(ctx, fd, ~0ull - 10, 4096, scratch, KR_MR_REMOTE_READ, EINVAL);
		close(fd);
	}

	/* another job cannot deregister ours; a request without its descriptor closes it */
	CHECK_OK(kp_child_run(&intr, "g", 1, rep, sizeof(rep)));
	CHECK_EQ(rep[0], KR_POOL_MAX_JOB_MRS);
	CHECK_EQ(rep[1], 1);
	CHECK_OK(kr_mr_key(mr, &key));
	CHECK_EQ(read_at(ctx, &l, buf, 16, file + 64, key.rkey), KR_WC_SUCCESS);
	CHECK(!memcmp(buf, file + 64, 16));

	/* a dead job's file MR dies with it */
	CHECK_EQ(write(vic.to, "g", 1), 1);
	CHECK_EQ(read(vic.from, &vkey, sizeof(vkey)), (ssize_t)sizeof(vkey));
	CHECK(vkey.rkey != 0);
	CHECK_OK(kill(vic.pid, SIGKILL));
	CHECK_EQ(waitpid(vic.pid, &status, 0), vic.pid);
	{
		int st = KR_WC_SUCCESS;

		/* the keeper notices the death, then deregisters: bounded wait */
		for (double t0 = kp_now_ms(); st == KR_WC_SUCCESS && kp_now_ms() - t0 < 10000;) {
			st = read_at(ctx, &l, buf, 8, (void *)(uintptr_t)vkey.addr, vkey.rkey);
			if (st != KR_WC_SUCCESS)
				break;
			usleep(10000);
		}
		CHECK(st != KR_WC_SUCCESS);
		printf("a dead job's file rkey: completion status %d\n", st);
	}

	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("pool_reg_mr");
}
