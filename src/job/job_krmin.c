/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod-min, job side. A fenced keeper (keeper_krmin.c) sends the zone head
 * only; the DCI rings' part of the zone is reserved here with no access, and
 * so is a window of one page per DCI for their UAR pages. Each leased DCI is
 * claimed with its one-time token and mapped through /dev/krmin: its rings
 * at the address the keeper uses, so the descriptors' offsets and the post
 * and poll paths are the same as in trusted mode, and its own UAR page (the
 * slot's page after the rings) at its place in the UAR window, which it
 * rings. Giving the DCI back puts no-access pages over both again. A bound
 * receive endpoint is claimed and mapped the same way (its CQ and SRQ pages,
 * at their zone address; no UAR page).
 *
 * When the module takes a mapping away (the keeper died, or revoked a slot
 * this job still touched) the next access raises SIGBUS. The handler below
 * answers a SIGBUS inside either window by putting private zero pages over
 * both and marking the context dead: the faulting post or poll then
 * finishes on the zero pages (a doorbell rings nothing) and every later one
 * returns -ENOTCONN. A SIGBUS anywhere else goes to the handler that was
 * there before, or kills the process as it would have.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "job/job.h"

#define KRMIN_MAP_NOPROT (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)

/* The one attached context's window (one attach per process), for the handler. */
static struct kr_ctx *volatile sigbus_ctx;
static struct sigaction sigbus_prev;

static bool krmin_zero(uintptr_t lo, uintptr_t hi)
{
	return mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE, KRMIN_MAP_NOPROT | MAP_FIXED, -1,
		    0) != MAP_FAILED;
}

static void krmin_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct kr_ctx *ctx = sigbus_ctx;
	uintptr_t a = (uintptr_t)si->si_addr;

	if (ctx && ((a >= ctx->rings_lo && a < ctx->rings_hi) ||
		    (a >= ctx->uars_lo && a < ctx->uars_hi))) {
		bool ok = krmin_zero(ctx->rings_lo, ctx->rings_hi);

		if (krmin_zero(ctx->uars_lo, ctx->uars_hi) && ok) {
			__atomic_store_n(&ctx->dead, true, __ATOMIC_RELAXED);
			return; /* the access runs again, on zero pages */
		}
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

/* one page per DCI, then one per RC slot (KR_POOL_MAX_DCIS + its index) */
#define KRMIN_UARS_LEN ((uint64_t)(KR_POOL_MAX_DCIS + KR_POOL_MAX_RC) * KR_KRMIN_PAGE)

/*
 * kr_job_krmin_open() - fenced attach: reserve the rings' part of the zone
 * ([zone + head_len, zone + zone_len), no access) and the UAR window, and
 * open /dev/krmin. 0, or -EADDRINUSE, -ENODEV (the keeper is fenced but this
 * process cannot open the device), -errno.
 */
int kr_job_krmin_open(struct kr_ctx *ctx, uint64_t head_len)
{
	struct sigaction sa = {.sa_sigaction = krmin_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER};
	uintptr_t lo = (uintptr_t)ctx->zone + head_len;
	uint64_t len = ctx->zone_len - head_len;
	void *p, *u;
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
	u = mmap(NULL, KRMIN_UARS_LEN, PROT_NONE, KRMIN_MAP_NOPROT, -1, 0);
	ctx->krmin_fd = u == MAP_FAILED ? -1 : open(KR_KRMIN_PATH, O_RDWR | O_CLOEXEC);
	if (ctx->krmin_fd < 0) {
		rc = -errno;
		if (u != MAP_FAILED) {
			KR_ERR(
			    "pool",
			    "the keeper maps DCIs through %s, which this process cannot open: %s",
			    KR_KRMIN_PATH, strerror(-rc));
			munmap(u, KRMIN_UARS_LEN);
		}
		munmap(p, len);
		return rc == -ENOENT ? -ENODEV : rc;
	}
	ctx->rings_lo = lo;
	ctx->rings_hi = lo + len;
	ctx->uars_lo = (uintptr_t)u;
	ctx->uars_hi = (uintptr_t)u + KRMIN_UARS_LEN;
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
	munmap((void *)ctx->uars_lo, ctx->uars_hi - ctx->uars_lo);
	close(ctx->krmin_fd);
	ctx->krmin_fd = -1;
	ctx->rings_lo = ctx->rings_hi = ctx->uars_lo = ctx->uars_hi = 0;
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
	kr_krmin_slot_call(ctx->krmin_fd, KRMIN_IOC_SLOT_RELEASE, slot);
}

static void krmin_noaccess(void *base, uint64_t len)
{
	mmap(base, len, PROT_NONE, KRMIN_MAP_NOPROT | MAP_FIXED, -1, 0);
}

/* The first n bytes of claimed slot c at b, over the reserved window; else the slot is given up. */
static int krmin_map_at(struct kr_ctx *ctx, const struct krmin_slot_claim *c, uintptr_t b,
			uint64_t n, void **p)
{
	int rc;

	*p = mmap((void *)b, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ctx->krmin_fd,
		  (off_t)c->mmap_offset);
	if (*p != MAP_FAILED)
		return 0;
	rc = -errno;
	krmin_give_up(ctx, c->slot);
	return rc;
}

/*
 * kr_job_krmin_map() - claim token and map its slot, DCI index's (an RC
 * slot's when rc): its block of the zone (ctx->dci_block, or ctx->rc_block,
 * bytes from its SQ's page, where the keeper has
 * it), which must hold d's SQ, CQ and both doorbell records, inside the
 * rings window; then the slot's next page, the
 * DCI's own UAR page, at page index of the UAR window, wrapped for ringing
 * into jd->uar. jd->krmin_map/len: the rings' mapping. 0, -EACCES (the token
 * is not ours or was revoked), -EPROTO (a slot that does not fit, or no UAR
 * page), -errno.
 */
int kr_job_krmin_map(struct kr_ctx *ctx, uint64_t token, uint32_t index, bool rc_slot,
		     const struct kr_zone_dci *d, struct kr_job_dci *jd)
{
	struct krmin_slot_claim c = {
	    .size = sizeof(c), .version = KRMIN_UAPI_VERSION, .token = token};
	uint64_t sq_len = (uint64_t)d->sq_wqebb_cnt * 64u;
	uint64_t cq_len = (uint64_t)d->ncqe * sizeof(struct mlx5_cqe64);
	uintptr_t b = ((uintptr_t)ctx->zone + d->sq_off) & ~(uintptr_t)(KR_KRMIN_PAGE - 1);
	uint64_t n = rc_slot ? ctx->rc_block : ctx->dci_block;
	uint32_t page = rc_slot ? KR_POOL_MAX_DCIS + index : index; /* in the UAR window */
	void *p, *u;
	int rc;

	if (index >= (rc_slot ? KR_POOL_MAX_RC : KR_POOL_MAX_DCIS) || !n)
		return -EPROTO;
	if (ioctl(ctx->krmin_fd, KRMIN_IOC_SLOT_CLAIM, &c))
		return -errno;
	if (c.tenant != ctx->tenant || d->sq_off > ctx->zone_len || b < ctx->rings_lo ||
	    n > ctx->rings_hi - b || c.ring_len + c.dbr_len < n ||
	    !krmin_inside(ctx, b, n, d->sq_off, sq_len) ||
	    !krmin_inside(ctx, b, n, d->dbrec_off, 8) ||
	    !krmin_inside(ctx, b, n, d->cqe_off, cq_len) ||
	    !krmin_inside(ctx, b, n, d->cq_dbrec_off, 8)) {
		krmin_give_up(ctx, c.slot);
		return -EPROTO;
	}
	rc = krmin_map_at(ctx, &c, b, n, &p);
	if (rc)
		return rc;
	u = mmap((void *)(ctx->uars_lo + (uintptr_t)page * KR_KRMIN_PAGE), KR_KRMIN_PAGE,
		 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ctx->krmin_fd,
		 (off_t)(c.mmap_offset + n));
	rc = u == MAP_FAILED ? -EPROTO /* a slot without the page */
			     : kr_devx_uar_wrap(ctx->dev, d->uar_page, u, ctx->uar_reg_off,
						ctx->uar_bf_size, &jd->uar);
	if (rc) {
		if (u != MAP_FAILED)
			krmin_noaccess(u, KR_KRMIN_PAGE);
		krmin_noaccess(p, n);
		krmin_give_up(ctx, c.slot);
		return rc;
	}
	jd->krmin_map = p;
	jd->krmin_len = n;
	jd->krmin_slot = c.slot;
	return 0;
}

/* The DCI goes back: no-access pages where its slot was mapped. */
void kr_job_krmin_unmap(struct kr_ctx *ctx, struct kr_job_dci *jd)
{
	if (ctx->krmin_fd < 0)
		return;
	if (jd->uar) {
		krmin_noaccess(jd->uar->base_addr, KR_KRMIN_PAGE);
		kr_devx_uar_unimport(jd->uar);
		jd->uar = NULL;
	}
	if (jd->krmin_map)
		krmin_noaccess(jd->krmin_map, jd->krmin_len);
	jd->krmin_map = NULL;
}

/*
 * kr_job_krmin_map_ep() - claim token and map its slot, a receive
 * endpoint's: its CQ pages then its SRQ pages, at the zone address the
 * keeper has them (d->cqe_off), inside the rings window, holding d's CQEs,
 * SRQ WQEs and both doorbell records. *map and *len: the mapping. 0,
 * -EACCES (the token is not ours or was revoked), -EPROTO (a slot that does
 * not fit), -errno.
 */
int kr_job_krmin_map_ep(struct kr_ctx *ctx, uint64_t token, const struct kr_zone_ep *d, void **map,
			uint64_t *len)
{
	struct krmin_slot_claim c = {
	    .size = sizeof(c), .version = KRMIN_UAPI_VERSION, .token = token};
	uintptr_t b = (uintptr_t)ctx->zone + d->cqe_off;
	uint64_t n;
	void *p;
	int rc;

	if (ioctl(ctx->krmin_fd, KRMIN_IOC_SLOT_CLAIM, &c))
		return -errno;
	n = c.ring_len + c.dbr_len;
	if (c.tenant != ctx->tenant || d->cqe_off > ctx->zone_len || (b & (KR_KRMIN_PAGE - 1)) ||
	    b < ctx->rings_lo || n > ctx->rings_hi - b ||
	    !krmin_inside(ctx, b, n, d->cqe_off, (uint64_t)d->ncqe * sizeof(struct mlx5_cqe64)) ||
	    !krmin_inside(ctx, b, n, d->cq_dbrec_off, 8) ||
	    !krmin_inside(ctx, b, n, d->srq_off, (uint64_t)d->srq_nwqe << d->srq_log_stride) ||
	    !krmin_inside(ctx, b, n, d->srq_dbrec_off, 4)) {
		krmin_give_up(ctx, c.slot);
		return -EPROTO;
	}
	rc = krmin_map_at(ctx, &c, b, n, &p);
	if (rc)
		return rc;
	*map = p;
	*len = n;
	return 0;
}

/* An endpoint unbound: no-access pages where its slot was mapped. */
void kr_job_krmin_unmap_ep(struct kr_ctx *ctx, void *map, uint64_t len)
{
	if (ctx->krmin_fd >= 0 && map)
		krmin_noaccess(map, len);
}
