/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_krmin_rc (in the qemu guest, after insmod krmin.ko): RC slots paired
 * by a keeper that fences its jobs (DC->RC promotion's QPs, keeper_pair.c).
 * krpoold on the sim with --require-kmod; a job asks for an RC slot paired
 * with one of its own node's (the keeper pairs with itself over DC: the same
 * messages as between two keepers). Its rings and its own UAR page come as a
 * kmod-min slot, claimed with the pair's token; over the RC QP it WRITEs 4 KiB
 * into its own memory and READs them back, every byte checked. While it
 * holds the slot the module's owned slots are one more; another job of the
 * launch that writes where the RC QP's send queue is in its own address
 * space faults (SIGSEGV). Given back, the owned count is back and every RC
 * slot of the tenant is free again (both ends of the pair). A job SIGKILLed
 * while holding a paired slot gives it back too (the module's exit event,
 * the keeper's reclaim and the unpairing).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <krcore/krmin_uapi.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "kt_jobs.h"
#include "job/virtqp/virtqp.h"

#define LEN 4096

static struct kp_keeper K;

/* One signaled request on the RC QP and its completion (bounded). 0 or -errno. */
static int rc_op(struct kr_devx_qp *qp, struct kr_devx_cq *cq, enum kr_devx_wr_opcode op,
		 void *local, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct kr_devx_sge sge = {.addr = (uintptr_t)local, .length = LEN, .lkey = lkey};
	struct kr_devx_wr wr = {.opcode = op,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = raddr,
				.rkey = rkey};
	struct kr_devx_wc wc;
	int n = 0, rc = kr_devx_qp_post_send(qp, &wr);

	if (rc)
		return rc;
	kr_devx_qp_ring(qp);
	for (double t0 = kp_now_ms(); !n && kp_now_ms() - t0 < 10000;)
		n = kr_devx_cq_poll(cq, &wc, 1);
	if (n != 1)
		return n < 0 ? n : -ETIMEDOUT;
	return wc.status == KR_WC_SUCCESS ? 0 : -EIO;
}

/*
 * The pairing job: report "attached", wait for "g", pair, check a WRITE and a
 * READ over the RC QP, report its SQ's address, then on "f" give it back
 * (reporting 0) or on "k" wait to be killed.
 */
static int job_pair(struct kr_ctx *ctx, int in, int out)
{
	uint8_t *src = kr_malloc(ctx, LEN), *dst = kr_malloc(ctx, LEN), *chk = kr_malloc(ctx, LEN);
	struct kr_devx_dc_av av;
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
	struct kr_mr_key key;
	struct kr_lease l;
	struct kr_mr *mr;
	uint64_t sq;
	int link = KR_LINK_PAIRING, rc;
	char c;

	if (!src || !dst || !chk || kt_put(out, "a", 1) || kt_get(in, &c, 1))
		return 10;
	mr = kr_reg_mr(ctx, dst, LEN, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE);
	if (!mr || kr_mr_key(mr, &key) || kr_job_tenant_av(ctx, &av))
		return 11;
	rc = kr_job_rc_pair(ctx, kr_dct_self_node(ctx), &av, &l);
	if (rc) {
		fprintf(stderr, "pair: kr_job_rc_pair: %s\n", strerror(-rc));
		return 12;
	}
	for (double t0 = kp_now_ms(); link == KR_LINK_PAIRING && kp_now_ms() - t0 < 20000;
	     usleep(1000))
		link = kr_job_rc_link(ctx, &l);
	if (link != KR_LINK_UP) {
		fprintf(stderr, "pair: link %d\n", link);
		return 13;
	}
	if (kr_job_dci_qp(ctx, &l, &qp, &cq) || qp->type != KR_DEVX_QP_RC)
		return 14;
	for (int i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	rc = rc_op(qp, cq, KR_WR_RDMA_WRITE, src, kr_job_heap_lkey(ctx), key.addr, key.rkey);
	if (!rc)
		rc =
		    rc_op(qp, cq, KR_WR_RDMA_READ, chk, kr_job_heap_lkey(ctx), key.addr, key.rkey);
	if (rc || memcmp(src, dst, LEN) || memcmp(src, chk, LEN)) {
		fprintf(stderr, "pair: WRITE/READ over the RC QP: %s\n",
			rc ? strerror(-rc) : "other bytes");
		return 15;
	}
	sq = (uintptr_t)qp->sq_buf;
	if (kt_put(out, &sq, sizeof(sq)) || kt_get(in, &c, 1))
		return 16;
	if (c == 'k')
		pause();
	rc = kr_lease_free(ctx, &l);
	if (kt_put(out, &rc, sizeof(rc)))
		return 17;
	kr_dereg_mr(mr);
	return 0;
}

/* Another job of the launch: writes where the pair's SQ is (it must fault). */
static int job_peek(struct kr_ctx *ctx, int in, int out)
{
	uint64_t sq;

	(void)ctx;
	(void)out;
	if (kt_get(in, &sq, sizeof(sq)))
		return 20;
	kt_poke(sq);
	return 21; /* it did not fault */
}

/* Every RC slot of the tenant free and unpaired again (bounded): 0, or 30. */
static int job_check(struct kr_ctx *ctx, int in, int out)
{
	bool all_free = false;

	(void)in;
	(void)out;
	for (double t0 = kp_now_ms(); !all_free && kp_now_ms() - t0 < 10000; usleep(10000)) {
		all_free = true;
		for (uint32_t i = 0; i < ctx->seg->rc_spares; i++) {
			const struct kr_pool_slot *s = kr_seg_rc(ctx->seg, ctx->tenant, i);

			if (s->state != KR_SLOT_EMPTY &&
			    (s->state != KR_SLOT_FREE || s->link != KR_LINK_NONE))
				all_free = false;
		}
	}
	return all_free ? 0 : 30;
}

static const struct kt_job_fn jobs[] = {
    {"pair", job_pair}, {"peek", job_peek}, {"check", job_check}};

/* A pairing job up to its checked WRITE and READ: *owned is the count before it paired. */
static struct kt_job pair_up(long *owned, uint64_t *sq)
{
	struct kt_job p = kt_spawn("test_krmin_rc", "pair", K.sock);
	char c;

	CHECK_OK(kt_get(p.from, &c, 1)); /* attached: its DCIs are owned already */
	*owned = kt_stat("owned");
	CHECK_OK(kt_put(p.to, "g", 1));
	CHECK_OK(kt_get(p.from, sq, sizeof(*sq)));
	CHECK_EQ(kt_stat("owned"), *owned + 1); /* its RC slot, not the keeper's far end */
	return p;
}

int main(int argc, char **argv)
{
	const char *const args[] = {"-v",	   "--require-kmod",
				    "--node-id",   "1",
				    "--tenants",   "1",
				    "--dcis",	   "4",
				    "--rc-spares", "2",
				    "--jobs",	   "4",
				    "--heap-mb",   "2",
				    "--hugepages", "64",
				    NULL};
	struct kt_job p, pk, ck;
	long owned0, owned;
	uint64_t sq;
	int rc;

	if (argc == 6 && !strcmp(argv[1], "job"))
		return kt_job_main(argv, jobs, sizeof(jobs) / sizeof(jobs[0]));
	kt_keeper_up(&K, args);
	owned0 = kt_stat("owned");

	/* paired, mapped from its slot, bytes checked; another job faults on its pages */
	p = pair_up(&owned, &sq);
	pk = kt_spawn("test_krmin_rc", "peek", K.sock);
	CHECK_OK(kt_put(pk.to, &sq, sizeof(sq)));
	CHECK_EQ(kt_wait_status(pk.pid), 128 + SIGSEGV);
	CHECK_OK(kt_put(p.to, "f", 1));
	CHECK_OK(kt_get(p.from, &rc, sizeof(rc)));
	CHECK_OK(rc);
	CHECK_EQ(kt_wait_status(p.pid), 0);
	CHECK_EQ(kt_owned_settles(owned0), owned0);
	ck = kt_spawn("test_krmin_rc", "check", K.sock);
	CHECK_EQ(kt_wait_status(ck.pid), 0); /* both ends of the pair are spares again */
	printf("rc, fenced: an RC slot paired through the keepers' messages, mapped from its "
	       "kmod-min slot, WRITE and READ checked; another job faults on its pages; both ends "
	       "come back\n");

	/* killed while holding it: the module's exit event gives it back, unpaired */
	p = pair_up(&owned, &sq);
	CHECK_OK(kt_put(p.to, "k", 1));
	usleep(20000);
	CHECK_OK(kill(p.pid, SIGKILL));
	CHECK_EQ(kt_wait_status(p.pid), 128 + SIGKILL);
	CHECK_EQ(kt_owned_settles(owned0), owned0);
	ck = kt_spawn("test_krmin_rc", "check", K.sock);
	CHECK_EQ(kt_wait_status(ck.pid), 0);
	printf("rc, fenced: a job SIGKILLed holding a paired RC slot gives both ends back\n");

	CHECK_EQ(kp_keeper_stop(&K, SIGTERM), 0);
	kp_keeper_fini(&K);
	KR_PASS("test_krmin_rc");
}
