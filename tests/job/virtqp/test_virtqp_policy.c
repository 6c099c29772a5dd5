/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kr_connect()'s DCI policy (virtqp_policy.c). One keeper; "peers" 1..8 are
 * named through the connect seam with this node's own DC address vector, so
 * they are 8 distinct targets to the policy while every byte lands here.
 *
 *   - dcis_per_thread 4: 8 peers over 4 DCIs, 2 each; a second vQP to a
 *     peer joins its peer's DCI; kr_ctx_query reports 4 and 4 leases;
 *     interleaved WRITE+READ on all 9 vQPs: bytes and per-vQP order exact;
 *   - another thread gets DCIs of its own, even to the same peers;
 *   - a thread that exits with vQPs connected: the main thread disconnects
 *     them later (its set is gone; nothing dangles: ASan);
 *   - a new attachment in the process uses nothing the last one kept (it
 *     once posted on a spare DCI of the detached one: another job slot of
 *     the same gen looked like the same attachment);
 *   - the tenant with 5 of 12 DCIs free: a limit of 4 takes one, a second
 *     while more than a quarter stay free, then shares, no error; another
 *     thread's first connect still finds one; a vQP none of its DCIs has
 *     the credits for takes one from the reserve; at the limit with no DCI
 *     holding the credits asked: ENOSPC;
 *   - options: dcis_per_thread 17, $KR_DCIS_PER_THREAD "0", "x", "17": EINVAL;
 *     "2" taken when the option is 0; the option wins over it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_fixture.h"

#define PEERS 8
#define LEN   4096

static const char *const args[] = {"--tenants", "1", "--dcis",	    "12", "--jobs", "2",
				   "--heap-mb", "4", "--hugepages", "64", NULL};

static struct kr_ctx *attach(const struct kp_keeper *k, uint32_t per_thread)
{
	struct kr_attach_opts o = {.socket_path = k->sock, .dcis_per_thread = per_thread};

	return kr_attach(&o);
}

static struct kr_vqp *connect_peer(struct kr_ctx *ctx, uint32_t peer, uint32_t credits)
{
	struct kr_connect_opts o = {.credits = credits};
	struct kr_devx_dc_av av;

	if (kr_job_tenant_av(ctx, &av))
		return NULL;
	return kr_vq_connect_av(ctx, peer, &av, &o);
}

static uint32_t distinct_dcis(struct kr_vqp *const *v, int n)
{
	uint32_t d = 0;

	for (int i = 0; i < n; i++) {
		int j = 0;

		while (j < i && v[j]->dci != v[i]->dci)
			j++;
		d += j == i;
	}
	return d;
}

/* Each vQP WRITEs its own pattern then READs it back, all interleaved; order per vQP checked. */
static int traffic(struct kr_vqp *const *v, int n, uint8_t *src, uint8_t *dst, uint8_t *back,
		   uint32_t rkey)
{
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < n; i++) {
			uint8_t *s = src + i * 64;

			memset(s, 0x10 * round + i, 64);
			CHECK_OK(kr_post_write(v[i], s, 64, (uintptr_t)(dst + i * 64), rkey,
					       (uint64_t)round << 8 | (uint64_t)i, 0));
			CHECK_OK(kr_post_read(v[i], back + i * 64, 64, (uintptr_t)(dst + i * 64),
					      rkey, 1u << 16 | (uint64_t)round << 8 | (uint64_t)i,
					      0));
		}
		for (int i = 0; i < n; i++) {
			struct kr_wc wc[2];

			CHECK_EQ(vq_wait(v[i], wc, 2), 2);
			CHECK_EQ(wc[0].status, KR_WC_SUCCESS);
			CHECK_EQ(wc[1].status, KR_WC_SUCCESS);
			CHECK_EQ(wc[0].wr_id, (uint64_t)round << 8 | (uint64_t)i);
			CHECK_EQ(wc[1].wr_id, 1u << 16 | (uint64_t)round << 8 | (uint64_t)i);
			for (int b = 0; b < 64; b++)
				CHECK_EQ(back[i * 64 + b], (uint8_t)(0x10 * round + i));
		}
	}
	return 0;
}

struct thr {
	struct kr_ctx *ctx;
	struct kr_vqp *const *main_v;
	struct kr_vqp *v[2];
	int rc;
};

/* Two peers the main thread also talks to: never on the main thread's DCIs. */
static void *other_thread(void *p)
{
	struct thr *t = p;

	t->rc = -1;
	for (int i = 0; i < 2; i++) {
		t->v[i] = connect_peer(t->ctx, 1 + (uint32_t)i, 0);
		if (!t->v[i])
			return NULL;
		for (int j = 0; j <= PEERS; j++)
			if (t->v[i]->dci == t->main_v[j]->dci)
				return NULL;
	}
	if (t->v[0]->dci == t->v[1]->dci)
		return NULL;
	t->rc = 0; /* exits with both connected */
	return NULL;
}

/* A first connect of a new thread, to a peer the main thread also talks to. */
static void *first_connect(void *p)
{
	struct thr *t = p;
	struct kr_vqp *v = connect_peer(t->ctx, 1, 0);

	t->rc = v && v->dci != t->main_v[0]->dci && !kr_disconnect(v) ? 0 : -1;
	return NULL;
}

static int spread(struct kr_ctx *ctx, uint8_t *src, uint8_t *dst, uint8_t *back, uint32_t rkey)
{
	struct kr_vqp *v[PEERS + 1];
	struct kr_ctx_attr ca;
	struct thr t = {.ctx = ctx, .main_v = v};
	pthread_t th;

	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.dcis_per_thread, 4);
	for (uint32_t i = 0; i < PEERS; i++) {
		v[i] = connect_peer(ctx, i + 1, 0);
		CHECK(v[i] != NULL);
	}
	CHECK_EQ(distinct_dcis(v, PEERS), 4);
	/* the first four took a DCI each; the next four shared them, two per DCI */
	for (int i = 0; i < PEERS; i++) {
		CHECK_EQ(v[i]->dci->ntgt, 2);
		CHECK_EQ(v[i]->dci->nvqp, 2);
	}
	/* the same peer again: its peer's DCI (no switch added), a third vQP there */
	v[PEERS] = connect_peer(ctx, 3, 0);
	CHECK(v[PEERS] != NULL);
	CHECK(v[PEERS]->dci == v[2]->dci);
	CHECK_EQ(v[2]->dci->ntgt, 2);
	CHECK_EQ(v[2]->dci->nvqp, 3);
	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.dci_leases, 4);
	CHECK_OK(traffic(v, PEERS + 1, src, dst, back, rkey));

	CHECK_OK(pthread_create(&th, NULL, other_thread, &t));
	CHECK_OK(pthread_join(th, NULL));
	CHECK_OK(t.rc);
	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.dci_leases, 6);
	/* the exited thread's vQPs still work, and go from here */
	CHECK_OK(kr_post_read(t.v[0], back, 8, (uintptr_t)dst, rkey, 77, 0));
	CHECK_OK(vq_wait_ok(t.v[0], 77));
	CHECK_OK(kr_disconnect(t.v[0]));
	CHECK_OK(kr_disconnect(t.v[1]));

	/* a peer's last vQP gone: its DCI serves one target fewer */
	CHECK_OK(kr_disconnect(v[PEERS]));
	CHECK_EQ(v[2]->dci->nvqp, 2);
	CHECK_OK(kr_disconnect(v[2]));
	CHECK_EQ(v[6]->dci->ntgt, 1);
	/* peer 3 again: below no limit now, but onto the DCI with the fewest targets */
	v[2] = connect_peer(ctx, 3, 0);
	CHECK(v[2] != NULL);
	CHECK(v[2]->dci == v[6]->dci);
	for (int i = 0; i < PEERS; i++)
		CHECK_OK(kr_disconnect(v[i]));
	return 0;
}

/* A READ of 8 bytes on v: 0 or -EIO. */
static int read_ok(struct kr_vqp *v, uint8_t *back, uint8_t *dst, uint32_t rkey, uint64_t id)
{
	if (kr_post_read(v, back, 8, (uintptr_t)dst, rkey, id, 0))
		return -EIO;
	return vq_wait_ok(v, id);
}

/*
 * DCIs a connect of this job can take: the tenant's free ring, and the
 * offers on the job's ready ring it has not looked at (keeper_ready.c: a
 * DCI given back may be offered to the job again as soon as its reset is
 * done, moving it from the one to the other at the keeper's pace).
 */
static uint32_t dcis_available(struct kr_ctx *ctx, const struct kr_pool_tenant *pt)
{
	uint32_t prod =
	    __atomic_load_n(&kr_seg_job(ctx->seg, ctx->job)->ready_prod, __ATOMIC_ACQUIRE);

	return kr_keeper_seg_ring_count(ctx->seg, pt->dci_ring_off) + (prod - ctx->ready_taken);
}

/*
 * The tenant has 5 of its 12 DCIs free: a thread with a limit of 4 takes
 * one, a second while more than a quarter (3) stay free, then shares; the
 * DCI left is for another thread's first connect. A fresh attachment: no
 * DCI kept by the one before is used (each vQP READs).
 */
static int pool_short(struct kr_ctx *ctx, uint8_t *back, uint8_t *dst, uint32_t rkey)
{
	const struct kr_pool_tenant *pt = kr_seg_tenant(ctx->seg, ctx->tenant);
	struct kr_lease hold[16];
	struct kr_vqp *v[4], *w, *w2;
	uint32_t nhold = 0, left = 5;
	double t0 = kp_now_ms();
	struct thr t = {.ctx = ctx};
	pthread_t th;
	int rc;

	/* every DCI of the pool, those still resetting too (at the worker's pace: 10 s) */
	while (nhold < 12 && kp_now_ms() - t0 < 10000) {
		rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &hold[nhold]);
		if (!rc)
			nhold++;
		else if (rc == -ENOSPC)
			usleep(10000);
		else
			CHECK_OK(rc);
	}
	CHECK_EQ(nhold, 12);
	/* and not one more */
	for (t0 = kp_now_ms(); kp_now_ms() - t0 < 300; usleep(10000))
		CHECK_EQ(kr_lease_alloc(ctx, KR_LEASE_DCI, &hold[nhold]), -ENOSPC);
	for (uint32_t i = 0; i < left; i++)
		CHECK_OK(kr_lease_free(ctx, &hold[--nhold]));
	/* the worker resets them before they are leasable */
	for (t0 = kp_now_ms(); dcis_available(ctx, pt) < left && kp_now_ms() - t0 < 5000;)
		usleep(1000);
	CHECK_EQ(dcis_available(ctx, pt), left);
	for (uint32_t i = 0; i < 4; i++) {
		v[i] = connect_peer(ctx, i + 1, 0);
		CHECK(v[i] != NULL);
		CHECK_OK(read_ok(v[i], back, dst, rkey, 50 + i));
	}
	CHECK_EQ(distinct_dcis(v, 4), 2);
	CHECK_EQ(dcis_available(ctx, pt), 3);
	/* another thread's first connect finds one */
	t.main_v = v;
	CHECK_OK(pthread_create(&th, NULL, first_connect, &t));
	CHECK_OK(pthread_join(th, NULL));
	CHECK_OK(t.rc);
	/*
	 * That thread let its DCI go, kept by the process: a spare may be
	 * taken with the pool short. Then none of ours has a whole DCI's
	 * credits left: one from the reserve rather than fail. At the limit
	 * (4), none with the credits: ENOSPC.
	 */
	w = connect_peer(ctx, 5, v[0]->dci->cnt);
	CHECK(w != NULL);
	CHECK(w->dci != v[0]->dci && w->dci != v[1]->dci && w->dci != v[2]->dci);
	CHECK_OK(read_ok(w, back, dst, rkey, 60));
	CHECK_EQ(dcis_available(ctx, pt), 2); /* the spare's lease stayed */
	w2 = connect_peer(ctx, 6, v[0]->dci->cnt);
	CHECK(w2 != NULL);
	CHECK(w2->dci != w->dci && w2->dci != v[0]->dci && w2->dci != v[1]->dci);
	CHECK_OK(read_ok(w2, back, dst, rkey, 61));
	CHECK_EQ(dcis_available(ctx, pt), 1);
	errno = 0;
	CHECK(connect_peer(ctx, 7, v[0]->dci->cnt) == NULL);
	CHECK_EQ(errno, ENOSPC);
	CHECK_OK(kr_disconnect(w2));
	CHECK_OK(kr_disconnect(w));
	errno = 0;
	w = connect_peer(ctx, 5, v[0]->dci->cnt + 1);
	CHECK(w == NULL);
	CHECK_EQ(errno, EINVAL);
	for (int i = 0; i < 4; i++)
		CHECK_OK(kr_disconnect(v[i]));
	while (nhold)
		CHECK_OK(kr_lease_free(ctx, &hold[--nhold]));
	return 0;
}

static int options(const struct kp_keeper *k)
{
	static const char *const bad_env[] = {"0", "x", "17", "2x", "-1"};
	struct kr_ctx_attr ca;
	struct kr_ctx *ctx;

	errno = 0;
	CHECK(attach(k, KR_DCIS_PER_THREAD_MAX + 1) == NULL);
	CHECK_EQ(errno, EINVAL);
	for (size_t i = 0; i < sizeof(bad_env) / sizeof(bad_env[0]); i++) {
		CHECK_OK(setenv("KR_DCIS_PER_THREAD", bad_env[i], 1));
		errno = 0;
		CHECK(attach(k, 0) == NULL);
		CHECK_EQ(errno, EINVAL);
	}
	CHECK_OK(setenv("KR_DCIS_PER_THREAD", "2", 1));
	ctx = attach(k, 0);
	CHECK(ctx != NULL);
	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.dcis_per_thread, 2);
	CHECK_OK(kr_detach(ctx));
	ctx = attach(k, 5); /* the option wins */
	CHECK(ctx != NULL);
	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.dcis_per_thread, 5);
	CHECK_OK(kr_detach(ctx));
	CHECK_OK(unsetenv("KR_DCIS_PER_THREAD"));
	ctx = attach(k, 0);
	CHECK(ctx != NULL);
	CHECK_OK(kr_ctx_query(ctx, &ca));
	CHECK_EQ(ca.dcis_per_thread, KR_DCIS_PER_THREAD_DEFAULT);
	CHECK_OK(kr_detach(ctx));
	return 0;
}

int main(void)
{
	struct kp_keeper k;
	struct kr_ctx *ctx;
	struct kr_mr *mr;
	struct kr_mr_key key;
	uint8_t *src, *dst, *back;
	uint64_t id;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));
	CHECK_OK(unsetenv("KR_DCIS_PER_THREAD"));
	ctx = attach(&k, 4);
	CHECK(ctx != NULL);
	src = kr_malloc(ctx, LEN);
	dst = kr_malloc(ctx, LEN);
	back = kr_malloc(ctx, LEN);
	CHECK(src && dst && back);
	mr = kr_reg_mr(ctx, dst, LEN, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	CHECK_OK(spread(ctx, src, dst, back, key.rkey));
	CHECK_OK(kr_dereg_mr(mr));
	id = ctx->attach_id;
	CHECK_OK(kr_detach(ctx));
	/* a new attachment (maybe another job slot of the same gen): nothing of the last */
	ctx = attach(&k, 4);
	CHECK(ctx != NULL);
	CHECK(ctx->attach_id > id);
	dst = kr_malloc(ctx, LEN);
	back = kr_malloc(ctx, LEN);
	CHECK(dst && back);
	mr = kr_reg_mr(ctx, dst, LEN, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	CHECK_OK(pool_short(ctx, back, dst, key.rkey));
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	CHECK_OK(options(&k));
	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	return 0;
}
