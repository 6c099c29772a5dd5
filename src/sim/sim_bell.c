/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UAR pages of a simulated host: libmlx5 44's allocation, export to jobs.
 *
 * Each UAR is one page (struct sim_bell) in its own memfd,
 * "krsim:<host>:uar<N>", so that the keeper can hand a tenant's jobs their
 * UAR page and nothing else of the device; hardware does the same with the
 * tenant's UAR page mapped through kmod-min. A page, once created, lives as
 * long as the host (the engine may be waiting on it); a slot freed and
 * allocated again gets the same page, as a UAR index names a fixed page on
 * hardware. Ringing a page bumps its ring count; the engine takes new WQEs
 * only for the QPs created on that page (sim_req.c): a ring through another
 * page, another tenant's, moves no QP of this one.
 *
 * Waking a sleeping engine is the sim's own business (a NIC sees the store):
 * a ring in the process that opened the host bumps the host's word; a ring
 * in another process bumps the seq word of the one page that process was
 * sent (sim_uar_export), which the engine sleeps on. A fenced keeper gives
 * each DCI a page of its own, mapped into its holder through kmod-min, not
 * exported: its holder rings it and wakes the engine through its tenant's
 * exported page. So one futex_waitv covers the host however many pages it
 * has (at most SIM_MAX_WAKE exported).
 *
 * The doorbell stores themselves and a job's view of the host are
 * sim_view.c, the part of the sim a job links.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"

/* sh->lock held: page i of dev, created on first use. */
static struct sim_bell *sim_bell_get(struct sim_dev *dev, uint32_t i)
{
	char name[96];
	struct sim_bell *b;
	int fd;

	if (dev->bell[i])
		return dev->bell[i];
	snprintf(name, sizeof(name), "krsim:%s:uar%u", dev->sh->name, i + 1);
	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return NULL;
	/* sealed at one page: a job holding the fd cannot shrink it under the
	 * engine (a SIGBUS in the keeper) or grow it */
	if (ftruncate(fd, SIM_UAR_SIZE) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		close(fd);
		return NULL;
	}
	b = mmap(NULL, SIM_UAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (b == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	b->magic = SIM_BELL_MAGIC;
	b->page_id = i + 1;
	dev->bell_fd[i] = fd;
	dev->bell[i] = b;
	return b;
}

/*
 * sh->lock held: a page no UAR, CQ or QP holds and no free list keeps, now
 * allocated (in_use 1); -ENOMEM.
 */
static int sim_page_new(struct sim_dev *dev, uint32_t *ip)
{
	struct sim_shared *sh = dev->sh;
	uint32_t i;

	/* a freed UAR still counted by a CQ or QP stays reserved until they go;
	 * a BlueFlame page stays the context's, its registers on the free list */
	for (i = 0; i < SIM_MAX_UAR && (sh->uar[i].in_use || sh->uar[i].refcnt || sh->uar[i].bf);
	     i++)
		;
	if (i == SIM_MAX_UAR || !sim_bell_get(dev, i))
		return -ENOMEM;
	sh->uar[i].in_use = 1;
	sh->uar[i].bf = 0;
	*ip = i;
	return 0;
}

/* sh->lock held: the context's one NC page (libmlx5's singleton). */
static int sim_nc_page(struct sim_dev *dev, uint32_t *ip)
{
	int rc;

	if (!dev->nc_page) {
		rc = sim_page_new(dev, ip);
		if (rc)
			return rc;
		dev->nc_page = *ip + 1;
	}
	*ip = dev->nc_page - 1;
	return 0;
}

static void sim_bf_push(struct sim_dev *dev, uint32_t v)
{
	uint32_t n = SIM_MAX_UAR * SIM_BF_REGS_PER_PAGE;

	dev->bf_free[(dev->bf_head + dev->bf_len++) % n] = (uint16_t)v;
}

/*
 * sh->lock held: a BlueFlame register as libmlx5 44 hands it out: the free
 * list's head; an empty list first gets a fresh page's registers, in order,
 * at its tail. A page stays allocated while its context lives.
 */
static int sim_bf_pop(struct sim_dev *dev, uint32_t *ip, uint32_t *regp)
{
	uint32_t n = SIM_MAX_UAR * SIM_BF_REGS_PER_PAGE, v, i;
	int rc;

	if (!dev->bf_len) {
		rc = sim_page_new(dev, &i);
		if (rc)
			return rc;
		dev->sh->uar[i].in_use = 0; /* held register by register, below */
		dev->sh->uar[i].bf = 1;
		for (uint32_t r = 0; r < SIM_BF_REGS_PER_PAGE; r++)
			sim_bf_push(dev, i * SIM_BF_REGS_PER_PAGE + r);
	}
	v = dev->bf_free[dev->bf_head];
	dev->bf_head = (dev->bf_head + 1) % n;
	dev->bf_len--;
	*ip = v / SIM_BF_REGS_PER_PAGE;
	*regp = v % SIM_BF_REGS_PER_PAGE;
	dev->sh->uar[*ip].in_use++;
	return 0;
}

/*
 * ops->alloc_uar as mlx5dv_devx_alloc_uar of the modelled libmlx5 (devx.h,
 * cfg.libmlx5): 0 the shared NC page, KR_DEVX_UAR_BLUEFLAME a register of
 * the free list (-EOPNOTSUPP with blueflame=0, as the kernel refuses a BF
 * UAR without write-combining), KR_DEVX_UAR_NC_DEDICATED a page of its own (from 45;
 * -EOPNOTSUPP before, as libmlx5 44 refuses the unknown type).
 */
int sim_alloc_uar(struct kr_devx_ctx *ctx, uint32_t flags, struct kr_devx_uar **uarp)
{
	struct sim_dev *dev = sim_dev_of(ctx);
	uint32_t release = dev->cfg.libmlx5 ? dev->cfg.libmlx5 : 44;
	uint32_t i = 0, reg = 0;
	struct kr_devx_uar *uar;
	int rc;

	if ((flags & ~(uint32_t)(KR_DEVX_UAR_BLUEFLAME | KR_DEVX_UAR_NC_DEDICATED)) ||
	    flags == (KR_DEVX_UAR_BLUEFLAME | KR_DEVX_UAR_NC_DEDICATED) ||
	    ((flags & KR_DEVX_UAR_NC_DEDICATED) && release < 45) ||
	    ((flags & KR_DEVX_UAR_BLUEFLAME) && dev->cfg.no_blueflame))
		return -EOPNOTSUPP;
	uar = calloc(1, sizeof(*uar));
	if (!uar)
		return -ENOMEM;
	sim_lock(dev);
	if (flags & KR_DEVX_UAR_BLUEFLAME)
		rc = sim_bf_pop(dev, &i, &reg);
	else if (flags & KR_DEVX_UAR_NC_DEDICATED)
		rc = sim_page_new(dev, &i);
	else
		rc = sim_nc_page(dev, &i);
	sim_unlock(dev);
	if (rc) {
		free(uar);
		return rc;
	}
	sim_uar_fill(uar, ctx, i + 1, dev->bell[i]);
	if (flags & KR_DEVX_UAR_BLUEFLAME) {
		uar->reg_addr = dev->bell[i]->reg[reg];
		uar->bf_size = SIM_BF_REG_SIZE / 2;
	}
	*uarp = uar;
	return 0;
}

/*
 * A BlueFlame register goes back to the list's tail (its page, once no
 * register of it is held, may give its wake place away: sim_wake_place),
 * the NC page stays (a singleton), a dedicated page is freed.
 */
void sim_free_uar(struct kr_devx_uar *uar)
{
	struct sim_bell *b;
	struct sim_dev *dev;
	struct sim_uar *u;

	if (!uar)
		return;
	dev = sim_dev_of(uar->ctx);
	b = uar->priv;
	sim_lock(dev);
	u = &dev->sh->uar[uar->page_id - 1];
	if (u->bf) /* its register, whatever the holder made of bf_size */
		sim_bf_push(
		    dev, (uar->page_id - 1) * SIM_BF_REGS_PER_PAGE +
			     (uint32_t)(((uint8_t *)uar->reg_addr - b->reg[0]) / SIM_BF_REG_SIZE));
	if (u->bf || uar->page_id != dev->nc_page) {
		if (u->in_use == 1 && u->refcnt)
			KR_WARN("sim", "%s: UAR %u freed while %u CQs/QPs still use it",
				dev->ctx.name, uar->page_id, u->refcnt);
		u->in_use--;
	}
	sim_unlock(dev);
	free(uar);
}

/* sh->lock held: where page i + 1 goes in the wake list (nwake: a new place),
 * or SIM_MAX_WAKE when it is full of pages still allocated. */
static uint32_t sim_wake_place(struct sim_dev *dev, uint32_t i, uint32_t n)
{
	uint32_t w;

	for (w = 0; w < n; w++)
		if (dev->wake_page[w] == i + 1)
			return w;
	if (n < SIM_MAX_WAKE)
		return n;
	/* a page freed since it was exported (its tenant went) gives its place */
	for (w = 0; w < n; w++) {
		const struct sim_uar *u = &dev->sh->uar[dev->wake_page[w] - 1];

		if (!u->in_use && !u->refcnt)
			break;
	}
	return w;
}

/*
 * sim_uar_export() - the memfd of uar's page, for another process; the
 * engine sleeps on the page's seq word from now on. Returns the fd (owned
 * by the host), -EINVAL, or -ENOSPC (SIM_MAX_WAKE allocated pages exported
 * already).
 */
int sim_uar_export(struct kr_devx_uar *uar)
{
	struct sim_dev *dev = sim_dev_of(uar->ctx);
	uint32_t i = uar->page_id - 1, n, w;
	int rc;

	if (!dev->eng || i >= SIM_MAX_UAR || !dev->bell[i])
		return -EINVAL;
	sim_lock(dev);
	n = atomic_load(&dev->nwake);
	w = sim_wake_place(dev, i, n);
	rc = w < SIM_MAX_WAKE ? dev->bell_fd[i] : -ENOSPC;
	if (w < SIM_MAX_WAKE && dev->wake_page[w] != i + 1) {
		/* the engine reads the list without the lock: entry, then count */
		__atomic_store_n(&dev->wake_page[w], i + 1, __ATOMIC_RELEASE);
		if (w == n)
			atomic_store(&dev->nwake, n + 1);
		sim_engine_kick(dev->sh); /* a sleeping engine re-arms with the page */
	}
	sim_unlock(dev);
	return rc;
}

/*
 * sim_uar_export_fd() - ops->uar_export of an opened host: the page's own
 * memfd (owned by the host), and where the page is in it.
 */
int sim_uar_export_fd(struct kr_devx_uar *uar, int *fd, struct kr_devx_uar_ref *ref)
{
	int rc = sim_uar_export(uar);

	if (rc < 0)
		return rc;
	*fd = rc;
	*ref = (struct kr_devx_uar_ref){.page_id = uar->page_id};
	return 0;
}

/* sim_bell_release() - see sim.h. */
void sim_bell_release(struct sim_dev *dev)
{
	for (uint32_t i = 0; i < SIM_MAX_UAR; i++) {
		if (!dev->bell[i])
			continue;
		munmap(dev->bell[i], SIM_UAR_SIZE);
		close(dev->bell_fd[i]);
		dev->bell[i] = NULL;
	}
}

/* sim_uar_import() - UAR page_id mapped in this process, for doorbells. */
int sim_uar_import(struct kr_devx_ctx *ctx, uint32_t page_id, struct kr_devx_uar **uarp)
{
	struct sim_dev *dev = sim_dev_of(ctx);

	if (!page_id || page_id > SIM_MAX_UAR || !uarp || !dev->bell[page_id - 1])
		return -EINVAL;
	return sim_uar_new(ctx, page_id, dev->bell[page_id - 1], uarp);
}
