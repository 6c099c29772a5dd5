/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod-min, job side. A fenced keeper (pool_krmin.c) sends the zone head
 * only; the DCI rings' part of the zone is reserved here with no access, and
 * each leased DCI is claimed with its one-time token and mapped through
 * /dev/krmin at the address the keeper uses, so the descriptors' offsets and
 * the post and poll paths are the same as in trusted mode. Giving the DCI
 * back puts no-access pages over it again.
 *
 * When the module takes a mapping away (the keeper died, or revoked a slot
 * this job still touched) the next access raises SIGBUS. The handler below
 * answers a SIGBUS inside the window by putting private zero pages over the
 * whole window and marking the context dead: the faulting post or poll then
 * finishes on the zero pages and every later one returns -ENOTCONN. A SIGBUS
 * anywhere else goes to the handler that was there before, or kills the
 * process as it would have.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kr_log.h"
#include "pool.h"

#define KRMIN_MAP_NOPROT (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)

/* The one attached context's window (one attach per process), for the handler. */
static struct kr_ctx *volatile sigbus_ctx;
static struct sigaction sigbus_prev;

static void krmin_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct kr_ctx *ctx = sigbus_ctx;
	uintptr_t a = (uintptr_t)si->si_addr;

	if (ctx && a >= ctx->rings_lo && a < ctx->rings_hi &&
	    mmap((void *)ctx->rings_lo, ctx->rings_hi - ctx->rings_lo, PROT_READ | PROT_WRITE,
		 KRMIN_MAP_NOPROT | MAP_FIXED, -1, 0) != MAP_FAILED) {
		__atomic_store_n(&ctx->dead, true, __ATOMIC_RELAXED);
		return; /* the access runs again, on zero pages */
	}
	if (sigbus_prev.sa_flags & SA_SIGINFO && sigbus_prev.sa_sigaction) {
		sigbus_prev.sa_sigaction(sig, si, uc);
		return;
	}
	if (sigbus_prev.sa_handler != SIG_DFL && sigbus_prev.sa_handler != SIG_IGN) {
		sigbus_prev.sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL); /* not ours: die as we would have */
	raise(sig);
}

/*
 * kr_job_krmin_open() - fenced attach: reserve the rings' part of the zone
 * ([zone + head_len, zone + zone_len), no access) and open /dev/krmin. 0, or
 * -EADDRINUSE, -ENODEV (the keeper is fenced but this process cannot open
 * the device), -errno.
 */
int kr_job_krmin_open(struct kr_ctx *ctx, uint64_t head_len)
{
	struct sigaction sa = {.sa_sigaction = krmin_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER};
	uintptr_t lo = (uintptr_t)ctx->zone + head_len;
	uint64_t len = ctx->zone_len - head_len;
	void *p;
	int rc;

	if (head_len >= ctx->zone_len || (lo | len) & (KR_KRMIN_PAGE - 1))
		return -EPROTO;
	p = mmap((void *)lo, len, PROT_NONE, KRMIN_MAP_NOPROT | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || p != (void *)lo) {
		rc = p == MAP_FAILED ? -errno : -EADDRINUSE;
		if (p != MAP_FAILED)
			munmap(p, len);
		return rc == -EEXIST ? -EADDRINUSE : rc;
	}
	ctx->krmin_fd = open(KR_KRMIN_PATH, O_RDWR | O_CLOEXEC);
	if (ctx->krmin_fd < 0) {
		rc = -errno;
		KR_ERR("pool",
		       "the keeper maps DCIs through %s, which this process cannot open: %s",
		       KR_KRMIN_PATH, strerror(-rc));
		munmap(p, len);
		return rc == -ENOENT ? -ENODEV : rc;
	}
	ctx->rings_lo = lo;
	ctx->rings_hi = lo + len;
	sigemptyset(&sa.sa_mask);
	sigbus_ctx = ctx;
	sigaction(SIGBUS, &sa, &sigbus_prev);
	return 0;
}

/* Detach: the window and every slot mapped in it go; the handler steps aside. */
void kr_job_krmin_close(struct kr_ctx *ctx)
{
	if (ctx->krmin_fd < 0)
		return;
	sigaction(SIGBUS, &sigbus_prev, NULL);
	sigbus_ctx = NULL;
	munmap((void *)ctx->rings_lo, ctx->rings_hi - ctx->rings_lo);
	close(ctx->krmin_fd);
	ctx->krmin_fd = -1;
	ctx->rings_lo = ctx->rings_hi = 0;
}

/* Is [off, off + len) of the zone inside [base, base + maplen)? */
static bool krmin_inside(const struct kr_ctx *ctx, uintptr_t base, uint64_t maplen, uint64_t off,
			 uint64_t len)
{
	uintptr_t a = (uintptr_t)ctx->zone + off;

	return off <= ctx->zone_len && a >= base && len <= maplen && a - base <= maplen - len;
}

static void krmin_give_up(struct kr_ctx *ctx, uint32_t slot)
{
	struct krmin_slot_id id = {.size = sizeof(id), .version = KRMIN_UAPI_VERSION, .slot = slot};

	ioctl(ctx->krmin_fd, KRMIN_IOC_SLOT_RELEASE, &id);
}

/*
 * kr_job_krmin_map() - claim token and map its slot where d's rings are: from
 * the page of the SQ buffer, as long as the module says the slot is, which
 * must hold the SQ, both doorbell records and the CQ and stay inside the
 * window. base and len: the mapping (for kr_job_krmin_unmap). 0, -EACCES (the
 * token is not ours or was revoked), -EPROTO (a slot that does not fit),
 * -errno.
 */
int kr_job_krmin_map(struct kr_ctx *ctx, uint64_t token, const struct kr_zone_dci *d, void **base,
		     uint64_t *len)
{
	struct krmin_slot_claim c = {
	    .size = sizeof(c), .version = KRMIN_UAPI_VERSION, .token = token};
	uint64_t sq_len = (uint64_t)d->sq_wqebb_cnt * 64u;
	uint64_t cq_len = (uint64_t)d->ncqe * sizeof(struct mlx5_cqe64);
	uintptr_t b = ((uintptr_t)ctx->zone + d->sq_off) & ~(uintptr_t)(KR_KRMIN_PAGE - 1);
	uint64_t n;
	void *p;

	if (ioctl(ctx->krmin_fd, KRMIN_IOC_SLOT_CLAIM, &c))
		return -errno;
	n = c.ring_len + c.dbr_len;
	if (c.tenant != ctx->tenant || d->sq_off > ctx->zone_len || b < ctx->rings_lo ||
	    n > ctx->rings_hi - b || !krmin_inside(ctx, b, n, d->sq_off, sq_len) ||
	    !krmin_inside(ctx, b, n, d->dbrec_off, 8) ||
	    !krmin_inside(ctx, b, n, d->cqe_off, cq_len) ||
	    !krmin_inside(ctx, b, n, d->cq_dbrec_off, 8)) {
		krmin_give_up(ctx, c.slot);
		return -EPROTO;
	}
	p = mmap((void *)b, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ctx->krmin_fd,
		 (off_t)c.mmap_offset);
	if (p == MAP_FAILED) {
		int rc = -errno;

		krmin_give_up(ctx, c.slot);
		return rc;
	}
	*base = p;
	*len = n;
	return 0;
}

/* The DCI goes back: no-access pages where its slot was mapped. */
void kr_job_krmin_unmap(struct kr_ctx *ctx, void *base, uint64_t len)
{
	if (ctx->krmin_fd < 0 || !base)
		return;
	mmap(base, len, PROT_NONE, KRMIN_MAP_NOPROT | MAP_FIXED, -1, 0);
}
