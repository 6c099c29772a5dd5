/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Registered memory that is a shared file mapping: which memfd of this
 * process backs [buf, buf + len), so that the region gets a krcore key over
 * the file (kr_reg_mr_fd) and peers reach it with the NIC, as they reach heap
 * memory. fi_mr_reg passes an address only (libfabric 1.17's fi_mr_attr
 * names no file), so the file is found the way the kernel shows it: the
 * range's mapping in /proc/self/maps (one MAP_SHARED mapping holding all of
 * it: its device, inode and file offset), then a descriptor of this process
 * open on that inode (/proc/self/fd). No descriptor left open (the
 * application closed it after mmap), another kind of file, a memfd the
 * device cannot take (unsealed, too short): no key, and the provider serves
 * the region as any other memory. kr_reg_mr_fd checks the file itself (a
 * sealed memfd of off + len bytes); the keeper maps it, so the descriptor is
 * looked at again after the call: one closed and reused meanwhile for
 * another file gives its key back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ofi/ofi.h"

/* The file behind a range: its device and inode, and the range's first byte in it. */
struct mr_file {
	dev_t dev;
	ino_t ino;
	uint64_t off;
};

/* The one shared file mapping holding all of [a, a + len): 0, or -ENOENT. */
static int mr_file_mapping(uintptr_t a, size_t len, struct mr_file *f)
{
	char line[512], perms[5];
	unsigned int maj, min;
	uint64_t lo, hi, pgoff, ino;
	FILE *m = fopen("/proc/self/maps", "re");
	int rc = -ENOENT;

	if (!m)
		return -ENOENT;
	while (fgets(line, sizeof(line), m)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64, &lo, &hi,
			   perms, &pgoff, &maj, &min, &ino) != 7 ||
		    a < lo || a >= hi)
			continue;
		if (perms[3] == 's' && ino && len <= hi - a) {
			f->dev = makedev(maj, min);
			f->ino = (ino_t)ino;
			f->off = pgoff + (a - lo);
			rc = 0;
		}
		break;
	}
	fclose(m);
	return rc;
}

static bool mr_file_is(int fd, const struct mr_file *f)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_dev == f->dev && st.st_ino == f->ino;
}

/* A descriptor of this process open on f's file, or -1. */
static int mr_file_fd(const struct mr_file *f)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;

	if (!d)
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		char *end;
		long n = strtol(e->d_name, &end, 10);

		if (*end || end == e->d_name || n == dirfd(d))
			continue;
		if (mr_file_is((int)n, f))
			fd = (int)n;
	}
	closedir(d);
	return fd;
}

/* kr_ofi_mr_file_key() - see ofi.h. */
struct kr_mr *kr_ofi_mr_file_key(struct kr_ctx *ctx, const void *buf, size_t len, uint32_t access)
{
	struct mr_file f;
	struct kr_mr *k;
	int fd;

	if (mr_file_mapping((uintptr_t)buf, len, &f))
		return NULL; /* not a shared file mapping: private, anonymous, or several */
	fd = mr_file_fd(&f);
	if (fd < 0) {
		FI_INFO(&kr_ofi_prov, FI_LOG_MR,
			"%zu bytes at %p: their file is not open in this process: served by the "
			"provider\n",
			len, buf);
		return NULL;
	}
	k = kr_reg_mr_fd(ctx, fd, f.off, len, (void *)(uintptr_t)buf, access);
	if (!k) {
		FI_INFO(&kr_ofi_prov, FI_LOG_MR,
			"no krcore key for %zu bytes of fd %d (%s; a sealed memfd is needed): "
			"served by the provider\n",
			len, fd, strerror(errno));
		return NULL;
	}
	if (!mr_file_is(fd, &f)) { /* closed and reused meanwhile: the key may name another file */
		kr_dereg_mr(k);
		return NULL;
	}
	return k;
}
