/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A host with a UAR page per QP, as a fenced keeper builds it (one per DCI),
 * far more pages than one futex_waitv can watch (SIM_MAX_WAKE): dedicated
 * pages, the host modelling rdma-core 45 (libmlx5=45), as a page freed
 * goes back to the device there. A DCI on
 * the last page is rung from a job's view of the host: the view was sent one
 * page (the tenant's, exported) and rings the DCI's page as kmod-min would
 * map it (sim_uar_wrap). The ring moves the DCI's page's ring count and
 * wakes the sleeping engine through the exported page's seq word (counted
 * here, one per ring), and the WRITE lands. Exports stop at SIM_MAX_WAKE
 * pages with -ENOSPC until a page exported before is freed; the same page
 * exported twice takes no second place; a tenant's private BlueFlame page
 * (both registers of one page, kr_devx_uar_alloc_private) gives its place
 * once both are freed, though the page stays the context's; a wrap of a
 * page that is not the
 * one it names is refused, and so is a register offset or BlueFlame size
 * the page does not have.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define MEM_LEN (64u << 10)
#define KEY	0x6b726d616e79626cull
#define WORD	0x3000u
#define NPAGES	200u
#define REG	0x800u /* the doorbell register of a non-cached page */

static struct kr_devx_uar *page[NPAGES];

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* The engine parks after 2 ms idle: wait for it (deadline 5 s). */
static void wait_engine_asleep(struct kr_fx_host *h)
{
	struct sim_shared *sh = sim_dev_of(h->ctx)->sh;

	for (int i = 0; i < 5000 && !atomic_load(&sh->engine_sleeping); i++)
		sleep_ms(1);
	CHECK(atomic_load(&sh->engine_sleeping));
}

int main(void)
{
	struct kr_fx_host A, B;
	struct kr_devx_uar *tenant, *fenced, *host_uar, *bad, *bf_tenant;
	struct kr_devx_uar_ref ref;
	struct kr_devx_ctx *view;
	struct kr_devx_qp_conn conn;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_dc_av av;
	struct kr_devx_qp dci;
	struct kr_devx_wc wc;
	struct kr_devx_sge sge;
	struct kr_devx_wr wr;
	struct sim_bell *tb, *db;
	volatile uint64_t *word;
	uint32_t seq0, exported = 0;
	uint64_t rung0;
	int fd, fd2;

	CHECK_OK(kr_fx_host_open(&A, "sim:many_a,libmlx5=45", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:many_b", MEM_LEN));
	for (uint32_t i = 0; i < NPAGES; i++)
		CHECK_OK(A.ctx->ops->alloc_uar(A.ctx, KR_DEVX_UAR_NC_DEDICATED, &page[i]));
	tenant = page[0];
	fenced = page[NPAGES - 1];
	CHECK(fenced->page_id > SIM_MAX_WAKE);

	/* the tenant's page goes to the job; exporting it again takes no place */
	CHECK_OK(kr_devx_uar_export(tenant, &fd, &ref));
	CHECK_OK(kr_devx_uar_export(tenant, &fd2, &ref));
	CHECK_EQ(fd, fd2);
	/* another tenant's page: both BlueFlame registers of one page */
	CHECK_OK(kr_devx_uar_alloc_private(A.ctx, &bf_tenant));
	CHECK_OK(kr_devx_uar_export(bf_tenant, &fd2, &ref));
	exported = atomic_load(&sim_dev_of(A.ctx)->nwake);
	CHECK(exported >= 2);
	CHECK_OK(kr_devx_import("sim:many_a", dup(fd), &ref, &view));
	/* the view is its one page: named as asked, that page and no other */
	CHECK(!strcmp(view->name, "sim:many_a"));
	CHECK_ERR(kr_devx_uar_import(view, tenant->page_id + 1, &bad), -EINVAL);
	CHECK_ERR(kr_devx_uar_import(view, 0, &bad), -EINVAL);
	CHECK_OK(kr_devx_uar_import(view, tenant->page_id, &bad));
	CHECK_EQ(((struct sim_bell *)bad->base_addr)->page_id, tenant->page_id);
	kr_devx_uar_unimport(bad);

	/* the DCI on a page of its own, past what one futex_waitv watches */
	host_uar = A.uar;
	A.uar = fenced;
	kr_fx_conn_default(&conn);
	CHECK_OK(kr_fx_dci_create(&A, &dci, &conn));
	A.uar = host_uar;
	CHECK_OK(kr_fx_dct_create(&B, &srq, &dct, KEY));

	/* the job rings the DCI's page as kmod-min maps it; a wrong name is refused */
	CHECK_ERR(kr_devx_uar_wrap(view, fenced->page_id + 1, fenced->base_addr, REG, 0, &bad),
		  -EINVAL);
	CHECK_ERR(kr_devx_uar_wrap(view, fenced->page_id, tenant->base_addr, REG, 0, &bad),
		  -EINVAL);
	CHECK_ERR(kr_devx_uar_wrap(view, 0, fenced->base_addr, REG, 0, &bad), -EINVAL);
	CHECK_ERR(kr_devx_uar_wrap(view, fenced->page_id, fenced->base_addr, 0, 0, &bad), -EINVAL);
	CHECK_ERR(kr_devx_uar_wrap(view, fenced->page_id, fenced->base_addr, REG + 8, 0, &bad),
		  -EINVAL);
	CHECK_ERR(kr_devx_uar_wrap(view, fenced->page_id, fenced->base_addr, REG, 100, &bad),
		  -EINVAL);
	CHECK_OK(kr_devx_uar_wrap(view, fenced->page_id, fenced->base_addr, REG, 0, &dci.uar));

	word = (volatile uint64_t *)((uint8_t *)B.mem + WORD);
	*word = 7;
	*(uint64_t *)A.mem = 0x5a5a5a5a5a5a5a5aull;
	sge = kr_fx_sge(&A, 0, 8);
	kr_fx_dc_av(&A, &B, &dct, &av);
	wr = kr_fx_dc_write(&B, &sge, &av, (uintptr_t)word, 11);

	tb = tenant->base_addr;
	db = fenced->base_addr;
	for (int round = 0; round < 3; round++) {
		wait_engine_asleep(&A);
		seq0 = atomic_load(&tb->seq);
		rung0 = atomic_load(&db->rung);
		*word = 7;
		CHECK_OK(kr_devx_qp_post_send(&dci, &wr));
		kr_devx_qp_ring(&dci);
		/* the DCI's own page was rung, the engine woken through the tenant's */
		CHECK_EQ(atomic_load(&db->rung), rung0 + 1);
		CHECK_EQ(atomic_load(&tb->seq), seq0 + 1);
		CHECK_OK(kr_fx_poll_one(&A.scq, &wc, 10000));
		CHECK_EQ(wc.status, KR_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, 11);
		CHECK_EQ(*word, 0x5a5a5a5a5a5a5a5aull);
	}

	/* exports stop where futex_waitv does */
	for (uint32_t i = 1; i < NPAGES; i++) {
		int rc = kr_devx_uar_export(page[i], &fd2, &ref);

		if (exported < SIM_MAX_WAKE) {
			CHECK_OK(rc);
			exported++;
		} else {
			CHECK_ERR(rc, -ENOSPC);
		}
	}
	CHECK_EQ(atomic_load(&sim_dev_of(A.ctx)->nwake), SIM_MAX_WAKE);
	/* a freed page (its tenant gone) gives its place to the next export */
	A.ctx->ops->free_uar(page[1]);
	page[1] = NULL;
	CHECK_OK(kr_devx_uar_export(page[NPAGES - 2], &fd2, &ref));
	CHECK_EQ(atomic_load(&sim_dev_of(A.ctx)->nwake), SIM_MAX_WAKE);
	CHECK_ERR(kr_devx_uar_export(page[NPAGES - 3], &fd2, &ref), -ENOSPC);
	/* so does the BlueFlame tenant's page once neither register is held */
	kr_devx_uar_free_private(bf_tenant);
	CHECK_OK(kr_devx_uar_export(page[NPAGES - 3], &fd2, &ref));
	CHECK_EQ(atomic_load(&sim_dev_of(A.ctx)->nwake), SIM_MAX_WAKE);
	CHECK_ERR(kr_devx_uar_export(page[NPAGES - 4], &fd2, &ref), -ENOSPC);

	kr_devx_uar_unimport(dci.uar);
	dci.uar = fenced;
	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
	kr_devx_close(view);
	for (uint32_t i = 0; i < NPAGES; i++)
		if (page[i])
			A.ctx->ops->free_uar(page[i]);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_many_bells");
}
