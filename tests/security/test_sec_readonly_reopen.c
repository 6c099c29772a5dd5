/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sec_readonly_reopen: what a job may only read stays read-only however it
 * is opened again (issue: another user on the node...; item 1). A job gets
 * read-only file descriptions of its launch's zone head (a memfd: node
 * cache, DCI descriptors) and of the pool segment's pages (DPDK hugetlbfs
 * files). A memfd's inode is mode 0777, so /proc/self/fd/N reopens it
 * O_RDWR: the keeper seals the zone head F_SEAL_FUTURE_WRITE once it mapped
 * it, so the reopened file can be neither mapped shared and writable, nor
 * written, nor punched, nor resized. The hugetlbfs files cannot be sealed:
 * they stay root-owned 0600, so uid 65534 cannot reopen them at all.
 *
 * As uid 65534 (a job of its own launch, attached by hand). Positive
 * controls: the read-only mappings read the keeper's bytes; a root job leases
 * a DCI afterwards (the keeper writes its descriptor in the sealed zone head
 * through its own mapping, and the job checks it), and posts on it.
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

/* A reopened memfd the job only reads: no way to write through it. */
static int memfd_reopened(int rfd, uint64_t len, const void *ro_view)
{
	char path[40], byte = 0x6b;
	int wfd, seals;
	void *p;

	seals = fcntl(rfd, F_GET_SEALS);
	SEC_EXPECT(seals >= 0 && (seals & F_SEAL_FUTURE_WRITE) && (seals & F_SEAL_SEAL));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rfd);
	wfd = open(path, O_RDWR);
	if (wfd < 0) /* a kernel that refuses the reopen itself: as good */
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, wfd, 0);
	SEC_EXPECT(p == MAP_FAILED && errno == EPERM);
	SEC_EXPECT(pwrite(wfd, &byte, 1, 0) == -1 && errno == EPERM);
	SEC_EXPECT(fallocate(wfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) == -1);
	SEC_EXPECT(ftruncate(wfd, 0) == -1 && errno == EPERM);
	SEC_EXPECT(fcntl(wfd, F_ADD_SEALS, 0) == -1 || fcntl(wfd, F_GET_SEALS) == seals);
	/* a private writable mapping is a copy: allowed, and the shared bytes stay */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, wfd, 0);
	SEC_EXPECT(p != MAP_FAILED);
	((volatile char *)p)[0] = (char)~((const volatile char *)ro_view)[0];
	SEC_EXPECT(((const volatile char *)ro_view)[0] != ((volatile char *)p)[0]);
	munmap(p, len);
	close(wfd);
	return 0;
}

/* A hugetlbfs page file of the pool segment: root's, 0600, not reopened. */
static int hugetlbfs_file(int rfd)
{
	char path[40];
	struct stat st;

	SEC_EXPECT(fstat(rfd, &st) == 0);
	SEC_EXPECT(st.st_uid == 0 && (st.st_mode & 077) == 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", rfd);
	SEC_EXPECT(open(path, O_RDWR) < 0 && errno == EACCES);
	return 0;
}

/* As uid 65534: every read-only region of the attach, reopened every way. */
static int nobody_job(void *arg)
{
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 0, nzone = 0, nseg = 0;
	int fd;

	(void)arg;
	SEC_EXPECT(rep != NULL);
	fd = sec_attach_raw(K.sock, rep, fds, &nfds, 5000);
	SEC_EXPECT(fd >= 0);
	for (uint32_t i = 0; i < rep->nregions; i++) {
		const struct kr_msg_region *r = &rep->region[i];
		int rfd = fds[r->fd_index];
		void *ro;

		if (r->prot != PROT_READ)
			continue;
		SEC_EXPECT((fcntl(rfd, F_GETFL) & O_ACCMODE) == O_RDONLY);
		ro = mmap(NULL, r->len, PROT_READ, MAP_SHARED, rfd, (off_t)r->off);
		SEC_EXPECT(ro != MAP_FAILED); /* positive control: it reads */
		if (rep->region_role[i] == KR_REGION_ZONE && r->off == 0) {
			nzone++;
			SEC_EXPECT(memfd_reopened(rfd, r->len, ro) == 0);
		} else if (rep->region_role[i] == KR_REGION_SEG) {
			nseg++;
			SEC_EXPECT(hugetlbfs_file(rfd) == 0);
		}
		munmap(ro, r->len);
	}
	SEC_EXPECT(nzone > 0 && nseg > 0);
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	close(fd);
	free(rep);
	return 0;
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "2",		"--dcis", "2",	     "--jobs", "2", "--heap-mb",
	    "2",	 "--hugepages", "32",	  "--group", "65534",  NULL};
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	uint64_t *buf;
	struct kr_mr_key key;
	struct kr_mr *mr;
	struct kr_wc wc;

	sec_keeper_start(&K, args);
	CHECK_EQ(sec_as_nobody(nobody_job, NULL), 0);

	/* the keeper still writes the sealed zone head: a root job's lease and a READ */
	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	buf = kr_malloc(ctx, 64);
	CHECK(buf != NULL);
	buf[0] = 0x5eed;
	mr = kr_reg_mr(ctx, buf, 64, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	v = kp_connect_wait(ctx, KR_NODE_SELF);
	CHECK(v != NULL);
	CHECK_OK(kr_post_read(v, &buf[1], 8, key.addr, key.rkey, 1, 0));
	for (double t0 = kp_now_ms(); kr_poll(v, &wc, 1) == 0;)
		CHECK(kp_now_ms() - t0 < 10000);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(buf[1], 0x5eed);
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("sec_readonly_reopen");
}
