/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers for the kmod-min tests. These programs run inside the qemu guest
 * (statically linked, started by guest_init.sh), never on the host. Every
 * wrapper returns 0 or a negative errno, like the rest of krcore.
 */
#ifndef KRMIN_TEST_H
#define KRMIN_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krmin_uapi.h>

#include "kr_test.h"

#define KT_DEV	"/dev/" KRMIN_DEV_NAME
#define KT_PAGE 4096UL

/* Reads a sysfs file's first line into buf. */
static inline int kt_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	return ok ? 0 : -1;
}

/*
 * The ivshmem device (1af4:1110) qemu gives the guest (run_qemu_tests.sh):
 * its BAR 2 mapped through sysfs file res ("resource2": uncached;
 * "resource2_wc": write-combining, as a BlueFlame page), first two pages,
 * the stand-in for a ConnectX UAR page (VM_IO | VM_PFNMAP). Skips the test
 * without it.
 */
/* A counter of the module's stats file (/sys/class/misc/krmin/stats), -1 when absent. */
static inline long kt_stat(const char *name)
{
	char line[128];
	long v = -1;
	FILE *f = fopen("/sys/class/misc/" KRMIN_DEV_NAME "/stats", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char k[32];
		long x;

		if (sscanf(line, "%31s %ld", k, &x) == 2 && !strcmp(k, name))
			v = x;
	}
	fclose(f);
	return v;
}

static inline volatile uint8_t *kt_ivshmem_bar(const char *res)
{
	char path[300], v[32], d[32];
	struct dirent *e;
	DIR *dir = opendir("/sys/bus/pci/devices");
	void *p = NULL;

	if (!dir)
		KR_FAIL("no /sys/bus/pci/devices");
	while ((e = readdir(dir)) && !p) {
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", e->d_name);
		if (kt_read_line(path, v, sizeof(v)))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", e->d_name);
		if (kt_read_line(path, d, sizeof(d)) || strncmp(v, "0x1af4", 6) ||
		    strncmp(d, "0x1110", 6))
			continue;
		/* memory decoding on: no driver has enabled the device */
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/enable", e->d_name);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, "1", 1) != 1)
			KR_FAIL("enable %s: %s", e->d_name, strerror(errno));
		close(fd);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", e->d_name, res);
		fd = open(path, O_RDWR | O_SYNC);
		if (fd < 0)
			KR_FAIL("open %s: %s", path, strerror(errno));
		p = mmap(NULL, 2 * KT_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			KR_FAIL("mmap %s: %s", path, strerror(errno));
		close(fd); /* the mapping holds the file */
	}
	closedir(dir);
	if (!p)
		KR_SKIP("no ivshmem device (qemu -device ivshmem-plain)");
	return p;
}

static inline int kt_open(void)
{
	int fd = open(KT_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		KR_FAIL("open %s: %s", KT_DEV, strerror(errno));
	return fd;
}

static inline int kt_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int kt_keeper_reg(int fd)
{
	struct krmin_keeper_reg r = {.size = sizeof(r), .version = KRMIN_UAPI_VERSION};

	return kt_ioctl(fd, KRMIN_IOC_KEEPER_REG, &r);
}

static inline int kt_slot_reg(int fd, const void *ring, size_t ring_len, const void *dbr,
			      size_t dbr_len, uint32_t tenant, uint32_t *slot)
{
	struct krmin_slot_reg r = {
	    .size = sizeof(r),
	    .version = KRMIN_UAPI_VERSION,
	    .ring_addr = (uintptr_t)ring,
	    .ring_len = ring_len,
	    .dbr_addr = (uintptr_t)dbr,
	    .dbr_len = dbr_len,
	    .tenant = tenant,
	};
	int ret = kt_ioctl(fd, KRMIN_IOC_SLOT_REG, &r);

	if (!ret && slot)
		*slot = r.slot;
	return ret;
}

static inline int kt_grant(int fd, uint32_t slot, uint64_t *token)
{
	struct krmin_slot_grant g = {
	    .size = sizeof(g), .version = KRMIN_UAPI_VERSION, .slot = slot};
	int ret = kt_ioctl(fd, KRMIN_IOC_SLOT_GRANT, &g);

	if (!ret)
		*token = g.token;
	return ret;
}

static inline int kt_claim(int fd, uint64_t token, struct krmin_slot_claim *out)
{
	struct krmin_slot_claim c = {
	    .size = sizeof(c), .version = KRMIN_UAPI_VERSION, .token = token};
	int ret = kt_ioctl(fd, KRMIN_IOC_SLOT_CLAIM, &c);

	if (!ret && out)
		*out = c;
	return ret;
}

/* KRMIN_IOC_SLOT_UNREG, _REVOKE or _RELEASE. */
static inline int kt_slot_op(int fd, unsigned long cmd, uint32_t slot)
{
	struct krmin_slot_id s = {.size = sizeof(s), .version = KRMIN_UAPI_VERSION, .slot = slot};

	return kt_ioctl(fd, cmd, &s);
}

/* Maps len bytes of slot at byte offset off; NULL and *err on failure. */
static inline void *kt_map(int fd, uint32_t slot, size_t off, size_t len, int prot, int flags,
			   int *err)
{
	void *p = mmap(NULL, len, prot, flags, fd, (off_t)(krmin_mmap_offset(slot) + off));

	if (p == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	*err = 0;
	return p;
}

static inline void *kt_map_rw(int fd, uint32_t slot, size_t off, size_t len, int *err)
{
	return kt_map(fd, slot, off, len, PROT_READ | PROT_WRITE, MAP_SHARED, err);
}

/* Reads up to max events without blocking; returns the count or -errno. */
static inline int kt_read_events(int fd, struct krmin_revoke_event *ev, int max)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	ssize_t n;

	if (poll(&pfd, 1, 0) < 0)
		return -errno;
	if (!(pfd.revents & POLLIN))
		return 0;
	n = read(fd, ev, (size_t)max * sizeof(*ev));
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	return (int)(n / (ssize_t)sizeof(*ev));
}

static inline uint64_t kt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Anonymous, populated, page-aligned memory; fails the test if none. */
static inline void *kt_mem(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		KR_FAIL("mmap %zu: %s", len, strerror(errno));
	return p;
}

/*
 * Touches one byte; returns 0, or the signal (SIGBUS, SIGSEGV) the access
 * raised. The handlers are installed only around the access.
 */
static sigjmp_buf kt_touch_jmp;
static volatile sig_atomic_t kt_touch_sig;

static inline void kt_touch_handler(int sig)
{
	kt_touch_sig = sig;
	siglongjmp(kt_touch_jmp, 1);
}

static inline int kt_touch(volatile uint8_t *p, bool write, uint8_t val, uint8_t *out)
{
	struct sigaction sa = {.sa_handler = kt_touch_handler}, old_bus, old_segv;
	int sig = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	kt_touch_sig = 0;
	if (sigsetjmp(kt_touch_jmp, 1)) {
		sig = kt_touch_sig;
	} else if (write) {
		*p = val;
	} else {
		uint8_t v = *p;

		if (out)
			*out = v;
	}
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return sig;
}

static inline void kt_write_all(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len)
		KR_FAIL("pipe write: %s", strerror(errno));
}

static inline void kt_read_all(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n <= 0)
			KR_FAIL("pipe read: %s", n ? strerror(errno) : "EOF");
		done += (size_t)n;
	}
}

#endif /* KRMIN_TEST_H */
