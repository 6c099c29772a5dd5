/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The part of the sim a job links: doorbell stores into a UAR page, and a
 * job's view of a host, which is its one page (sim_bell.c makes the pages,
 * in the keeper). The view may ring, and commands, UARs, umems and EQs
 * return -EPERM, as the kernel's DEVX gate refuses a process without the
 * device's command fd. Nothing here needs the engine: a ring bumps a futex
 * word it sleeps on, the page's seq word in a view, the host's in its opener.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim/sim.h"

/*
 * A job's view of a host (sim_attach_fd): the one UAR page its keeper sent,
 * through which its doorbells wake the engine. A few words, not a host's
 * struct sim_dev (17 KB, a table per UAR page it may create): a fresh
 * process's attach populated and cleared all of it.
 */
struct sim_view {
	struct kr_devx_ctx ctx;
	struct sim_bell *wake; /* the page, mapped here */
	uint32_t page_id;      /* as its header said at attach (the page is shared) */
	int fd;		       /* its memfd, owned */
};

static const struct kr_devx_ops sim_job_ops; /* below: the view's ops */

/* sim_uar_fill() - see sim.h. */
void sim_uar_fill(struct kr_devx_uar *uar, struct kr_devx_ctx *ctx, uint32_t page_id,
		  struct sim_bell *b)
{
	uar->ctx = ctx;
	uar->page_id = page_id;
	uar->base_addr = b;
	uar->reg_addr = b->reg[0];
	uar->priv = b;
	uar->shared_fd = -1; /* the sim hands out the page's own memfd */
}

/*
 * Dekker with the engine's sleep (sim_engine.c): bump the futex word seq,
 * then look whether the engine said it sleeps on it. The first to see the
 * flag takes it and wakes the engine; the rings behind it until the engine
 * runs make no system call (the engine's pass sees them all). Not
 * FUTEX_PRIVATE: the word is in memory shared with the process that runs
 * the engine.
 */
static inline void sim_futex_bump(_Atomic uint32_t *seq, _Atomic uint32_t *sleeping)
{
	atomic_fetch_add(seq, 1);
	if (atomic_load(sleeping) && atomic_exchange(sleeping, 0))
		syscall(SYS_futex, (uint32_t *)seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * Where a ConnectX takes doorbells: a buffer of one of the page's BlueFlame
 * registers (libmlx5's bf->reg, alternating by bf_size). A write elsewhere
 * in the page rings nothing.
 */
static bool sim_reg_ok(const struct sim_bell *b, const uint8_t *at, uint32_t len)
{
	uintptr_t off = (uintptr_t)at - (uintptr_t)b;

	return off >= SIM_UAR_DB_OFFSET && !((off - SIM_UAR_DB_OFFSET) % (SIM_BF_REG_SIZE / 2)) &&
	       off + len <= SIM_UAR_DB_OFFSET + SIM_BF_REGS_PER_PAGE * SIM_BF_REG_SIZE &&
	       len <= SIM_BF_REG_SIZE / 2;
}

/* A ring's count, for the engine: new WQEs for the page's QPs. */
static void sim_bell_rung(struct kr_devx_uar *uar, struct sim_bell *b)
{
	uar->bf_off ^= uar->bf_size;
	/* release: the doorbell record written before it, for the engine (sim_req.c) */
	atomic_fetch_add_explicit(&b->rung, 1, memory_order_release);
}

/*
 * Store the doorbell in the register's next buffer and count the ring for
 * the engine; false (nothing rung) for a write outside a register's buffers.
 * Static, as all of the ring path: the doorbell costs what it cost when it
 * was one function.
 */
static bool sim_bell_store(struct kr_devx_uar *uar, uint64_t val)
{
	struct sim_bell *b = uar->priv;
	uint8_t *at = (uint8_t *)uar->reg_addr + uar->bf_off;

	if (!sim_reg_ok(b, at, sizeof(val)))
		return false;
	/* One 8-byte store, as the UAR write on hardware. The engine does not
	 * trust the value: it reads the doorbell record the WQEs came with. */
	__atomic_store_n((uint64_t *)(void *)at, val, __ATOMIC_RELEASE);
	sim_bell_rung(uar, b);
	return true;
}

/* The same with the whole WQE copied into the register's next buffer; the
 * engine takes it from the ring, where the same bytes are. */
static bool sim_bell_copy(struct kr_devx_uar *uar, const void *wqe, uint32_t len)
{
	struct sim_bell *b = uar->priv;
	uint8_t *at = (uint8_t *)uar->reg_addr + uar->bf_off;

	if (!uar->bf_size || len > uar->bf_size || len % 64 || !sim_reg_ok(b, at, len))
		return false;
	memcpy(at, wqe, len);
	sim_bell_rung(uar, b);
	return true;
}

/* sim_engine_kick() - see sim.h. */
void sim_engine_kick(struct sim_shared *sh)
{
	sim_futex_bump(&sh->db_seq, &sh->engine_sleeping);
}

/* A ring wakes the engine: through the page in a job's view, the host's word in its opener. */
static void sim_bell_kick(struct kr_devx_uar *uar)
{
	if (uar->ctx->ops == &sim_job_ops) { /* a job's view: the page the keeper sent it */
		struct sim_bell *w = ((struct sim_view *)uar->ctx->priv)->wake;

		sim_futex_bump(&w->seq, &w->sleeping);
	} else {
		sim_engine_kick(sim_dev_of(uar->ctx)->sh);
	}
}

/* ops->doorbell, of a host and of a view alike (the UAR says whose page it is). */
void sim_doorbell(struct kr_devx_uar *uar, uint64_t val)
{
	if (sim_bell_store(uar, val))
		sim_bell_kick(uar);
}

/* ops->bf_copy, likewise. */
void sim_bf_copy(struct kr_devx_uar *uar, const void *wqe, uint32_t len)
{
	if (sim_bell_copy(uar, wqe, len))
		sim_bell_kick(uar);
}

static void sim_job_close(struct kr_devx_ctx *ctx)
{
	struct sim_view *v;

	if (!ctx)
		return;
	v = ctx->priv;
	munmap(v->wake, SIM_UAR_SIZE);
	close(v->fd);
	free(v);
}

/* sim_uar_new() - see sim.h. */
int sim_uar_new(struct kr_devx_ctx *ctx, uint32_t page_id, struct sim_bell *b,
		struct kr_devx_uar **uarp)
{
	struct kr_devx_uar *uar = calloc(1, sizeof(*uar));

	if (!uar)
		return -ENOMEM;
	sim_uar_fill(uar, ctx, page_id, b);
	*uarp = uar;
	return 0;
}

/* ops->uar_import of a view: its one page. */
static int sim_job_uar_import(struct kr_devx_ctx *ctx, uint32_t page_id, struct kr_devx_uar **uarp)
{
	struct sim_view *v = ctx->priv;

	if (!uarp || page_id != v->page_id)
		return -EINVAL;
	return sim_uar_new(ctx, page_id, v->wake, uarp);
}

static const struct kr_devx_ops sim_job_ops =
    KR_DEVX_VIEW_OPS(sim_doorbell, sim_bf_copy, sim_job_close, kr_devx_view_no_export,
		     sim_job_uar_import, sim_uar_wrap);

/*
 * sim_attach_fd() - map the UAR page in fd (taken over on success) as a
 * doorbell-only view named name. Returns 0, -EINVAL (not one UAR page of
 * this sim), -ENOMEM, or fstat's or mmap's errno. Not added to the
 * registry: no packets are delivered to a view.
 */
int sim_attach_fd(int fd, const char *name, struct kr_devx_ctx **ctxp)
{
	struct sim_view *v;
	struct sim_bell *b;
	struct stat st;
	uint32_t page_id;

	if (fd < 0 || !ctxp)
		return -EINVAL;
	if (fstat(fd, &st))
		return -errno;
	if (st.st_size != SIM_UAR_SIZE)
		return -EINVAL;
	/* populated: its header is read at once */
	b = mmap(NULL, SIM_UAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (b == MAP_FAILED)
		return -errno;
	page_id = __atomic_load_n(&b->page_id, __ATOMIC_RELAXED); /* shared: read once */
	if (b->magic != SIM_BELL_MAGIC || !page_id || page_id > SIM_MAX_UAR) {
		munmap(b, SIM_UAR_SIZE);
		return -EINVAL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		munmap(b, SIM_UAR_SIZE);
		return -ENOMEM;
	}
	v->wake = b;
	v->page_id = page_id;
	v->fd = fd;
	v->ctx.ops = &sim_job_ops;
	v->ctx.backend = &kr_sim_view_backend;
	v->ctx.priv = v;
	kr_devx_name_set(&v->ctx, name, "sim:?");
	*ctxp = &v->ctx;
	return 0;
}

/*
 * sim_uar_wrap() - UAR page_id as mapped at page by someone else (kmod-min,
 * for a fenced DCI), rung from this view at register offset reg_off, with
 * BlueFlame buffers of bf_size bytes (0: doorbells only). Returns 0,
 * -EINVAL (not that page of this sim: its header says otherwise; not a
 * register's place or size), -ENOMEM.
 */
int sim_uar_wrap(struct kr_devx_ctx *ctx, uint32_t page_id, void *page, uint32_t reg_off,
		 uint32_t bf_size, struct kr_devx_uar **uarp)
{
	struct sim_bell *b = page;
	int rc;

	if (!page_id || page_id > SIM_MAX_UAR || !page || !uarp ||
	    (bf_size && bf_size != SIM_BF_REG_SIZE / 2) || reg_off < SIM_UAR_DB_OFFSET ||
	    (reg_off - SIM_UAR_DB_OFFSET) % SIM_BF_REG_SIZE ||
	    reg_off >= SIM_UAR_DB_OFFSET + SIM_BF_REGS_PER_PAGE * SIM_BF_REG_SIZE ||
	    __atomic_load_n(&b->magic, __ATOMIC_RELAXED) != SIM_BELL_MAGIC ||
	    __atomic_load_n(&b->page_id, __ATOMIC_RELAXED) != page_id)
		return -EINVAL;
	rc = sim_uar_new(ctx, page_id, b, uarp);
	if (!rc) {
		(*uarp)->reg_addr = (uint8_t *)page + reg_off;
		(*uarp)->bf_size = bf_size;
	}
	return rc;
}

/* sim_view_import() - see sim.h. */
int sim_view_import(const char *name, int fd, const struct kr_devx_uar_ref *ref,
		    struct kr_devx_ctx **ctx)
{
	(void)ref; /* the page says which it is */
	return sim_attach_fd(fd, name, ctx);
}

/* A job's sim: it cannot open a host, only ring the page its keeper sent. */
const struct kr_devx_backend kr_sim_view_backend = {
    .name = "sim",
    .prefix = SIM_PREFIX,
    .caps = SIM_BACKEND_CAPS,
    .import = sim_view_import,
};
