/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_readonly: what a job may only read cannot be made writable. The pool
 * segment's pages reach a job as file descriptions opened read-only: a
 * mapping of them with PROT_WRITE fails, mprotect(PROT_WRITE) of the
 * job's read-only mapping fails, and uid 65534 cannot reopen them for
 * writing through /proc. Checked for a root job (kr_attach) and, by hand,
 * for a job of uid 65534 that inspects every descriptor it is sent; the
 * keeper keeps serving afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kr_test.h"
#include "sec_fixture.h"

static struct kp_keeper K;

/* As uid 65534: attach by hand and try to write through the segment's fds. */
static int nobody_job(void *arg)
{
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 0, nseg = 0;
	int fd;

	(void)arg;
	SEC_EXPECT(rep != NULL);
	fd = sec_attach_raw(K.sock, rep, fds, &nfds, 0);
	SEC_EXPECT(fd >= 0);
	for (uint32_t i = 0; i < rep->nregions; i++) {
		const struct kr_msg_region *r = &rep->region[i];
		int rfd = fds[r->fd_index];
		char path[40];
		void *p;

		if (rep->region_role[i] != KR_REGION_SEG)
			continue;
		nseg++;
		SEC_EXPECT(r->prot == PROT_READ);
		SEC_EXPECT((fcntl(rfd, F_GETFL) & O_ACCMODE) == O_RDONLY);
		p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, (off_t)r->off);
		SEC_EXPECT(p == MAP_FAILED && errno == EACCES);
		p = mmap(NULL, r->len, PROT_READ, MAP_SHARED, rfd, (off_t)r->off);
		SEC_EXPECT(p != MAP_FAILED);
		SEC_EXPECT(mprotect(p, r->len, PROT_READ | PROT_WRITE) == -1 && errno == EACCES);
		munmap(p, r->len);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", rfd);
		SEC_EXPECT(open(path, O_RDWR) < 0);
	}
	SEC_EXPECT(nseg > 0);
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	close(fd); /* the keeper reclaims the job */
	free(rep);
	return 0;
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "2",		"--dcis", "2",	     "--jobs", "2", "--heap-mb",
	    "2",	 "--hugepages", "32",	  "--group", "65534",  NULL};
	struct kr_ctx_attr a;
	struct kr_ctx *ctx;

	sec_require_root();
	kp_require_hugepages(16);
	kp_keeper_init(&K);
	CHECK_OK(chmod(K.dir, 0755));
	CHECK_OK(kp_keeper_start(&K, args));

	/* a root job: its read-only mapping stays read-only */
	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	CHECK(mprotect((void *)ctx->seg, KR_POOL_PAGE, PROT_READ | PROT_WRITE) == -1);
	CHECK_EQ(errno, EACCES);
	CHECK_OK(kr_detach(ctx));

	CHECK_EQ(sec_as_nobody(nobody_job, NULL), 0);

	/* the keeper still serves */
	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	CHECK_OK(kr_ctx_query(ctx, &a));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_readonly");
}
