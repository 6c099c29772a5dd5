/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two keepers on two simulated hosts in separate processes, talking RoCEv2
 * over UDP loopback (sim:nodeA@127.0.0.2 node 1, sim:nodeB@127.0.0.3 node 2).
 * B starts first; a job on B registers memory and hands its rkey (and, for
 * the test's peers file, B's DCT record) over a pipe; A starts with B in its
 * static peer directory (--peers). The job on A calls kr_connect(ctx, 2):
 * the record comes from the node cache (no firmware command, no handshake),
 * and it checks WRITE, READ, CAS and FAA against B's memory, then a bad rkey
 * on B. B checks the bytes and the counter in its own memory. An unknown
 * node gives ENOENT. With KR_DCIS_PER_THREAD=1 a second vQP of the same
 * thread, to its own node, shares the DCI: interleaved writes to both targets (the DCI switches
 * target between them) all land, in order per vQP.
 */
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/virtqp/virtqp.h"
#include "vq_two_hosts.h"

#define LEN 4096

static int side_b(const struct kp_keeper *kb, int wfd, int rfd)
{
	struct kr_ctx *ctx = kp_attach(kb, 5000);
	struct kr_mr *mr;
	uint8_t *buf, go;
	uint64_t *atom;

	CHECK(ctx != NULL);
	buf = kr_malloc(ctx, LEN + 64);
	CHECK(buf != NULL);
	memset(buf, 0, LEN + 64);
	atom = (uint64_t *)(buf + LEN);
	*atom = 40;
	mr = vq_lend(ctx, buf, LEN + 64, wfd);
	CHECK_EQ(read(rfd, &go, 1), 1); /* A is done */
	for (int i = 0; i < LEN; i++)
		CHECK_EQ(buf[i], (uint8_t)(i * 13 + 1));
	CHECK_EQ(*atom, 100 + 5); /* CAS 40 -> 100, then FAA +5 */
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	return 0;
}

static int side_a(const struct kp_keeper *ka, const struct vq_lent *b)
{
	struct kr_vqp_attr a;
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	uint8_t *src, *chk;
	uint64_t *old;
	struct kr_wc wc;

	/* one DCI per thread, so that the two targets below share it */
	CHECK_OK(setenv("KR_DCIS_PER_THREAD", "1", 1));
	ctx = kp_attach(ka, 5000);
	CHECK(ctx != NULL);
	{
		struct kr_ctx_attr ca;

		CHECK_OK(kr_ctx_query(ctx, &ca));
		CHECK_EQ(ca.node, 1); /* what its peers connect to */
		CHECK_EQ(ca.dcis_per_thread, 1);
	}
	src = kr_malloc(ctx, LEN);
	chk = kr_malloc(ctx, LEN);
	old = kr_malloc(ctx, 8);
	CHECK(src && chk && old);
	errno = 0;
	CHECK(kr_connect(ctx, 3, NULL) == NULL); /* not in the directory */
	CHECK_EQ(errno, ENOENT);
	v = kr_connect(ctx, 2, NULL);
	CHECK(v != NULL);
	CHECK_OK(kr_vqp_query(v, &a));
	CHECK_EQ(a.dctn, b->av.dctn);
	CHECK_EQ(a.peer, 2);
	for (int i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 13 + 1);
	CHECK_OK(kr_post_write(v, src, LEN, b->addr, b->rkey, 1, 0));
	CHECK_OK(vq_wait_ok(v, 1));
	memset(chk, 0, LEN);
	CHECK_OK(kr_post_read(v, chk, LEN, b->addr, b->rkey, 2, 0));
	CHECK_OK(vq_wait_ok(v, 2));
	CHECK(memcmp(src, chk, LEN) == 0);
	CHECK_OK(kr_post_cas(v, old, b->addr + LEN, b->rkey, 40, 100, 3, 0));
	CHECK_OK(vq_wait_ok(v, 3));
	CHECK_EQ(*old, 40);
	CHECK_OK(kr_post_faa(v, old, b->addr + LEN, b->rkey, 5, 4, 0));
	CHECK_OK(vq_wait_ok(v, 4));
	CHECK_EQ(*old, 100);
	/*
	 * One thread, two targets: a vQP to B and one to this node share the
	 * thread's DCI, which switches targets between them; interleaved
	 * writes all land, each vQP's completions in its order.
	 */
	{
		struct kr_mr *lmr =
		    kr_reg_mr(ctx, chk, LEN, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_WRITE);
		struct kr_vqp *w = kr_connect(ctx, KR_NODE_SELF, NULL);
		struct kr_mr_key lk;
		struct kr_wc wv[8], ww[8];

		CHECK(lmr && w);
		CHECK(w->dci == v->dci);
		CHECK_OK(kr_mr_key(lmr, &lk));
		memset(chk, 0, LEN);
		for (int i = 0; i < 8; i++) {
			CHECK_OK(kr_post_write(v, src + i * 256, 256, b->addr + (uint64_t)i * 256,
					       b->rkey, 100 + (uint64_t)i, 0));
			CHECK_OK(kr_post_write(w, src + i * 256, 256, lk.addr + (uint64_t)i * 256,
					       lk.rkey, 200 + (uint64_t)i, 0));
		}
		CHECK_EQ(vq_wait(v, wv, 8), 8);
		CHECK_EQ(vq_wait(w, ww, 8), 8);
		for (int i = 0; i < 8; i++) {
			CHECK_EQ(wv[i].wr_id, 100 + (uint64_t)i);
			CHECK_EQ(wv[i].status, KR_WC_SUCCESS);
			CHECK_EQ(ww[i].wr_id, 200 + (uint64_t)i);
			CHECK_EQ(ww[i].status, KR_WC_SUCCESS);
		}
		CHECK(memcmp(chk, src, 8 * 256) == 0);
		CHECK_OK(kr_disconnect(w));
		CHECK_OK(kr_dereg_mr(lmr));
	}
	/* a bad rkey on the remote node: the vQP (and only it) errs */
	CHECK_OK(kr_post_read(v, chk, 8, b->addr, b->rkey ^ 0x5500u, 5, 0));
	CHECK_EQ(vq_wait(v, &wc, 1), 1);
	CHECK_EQ(wc.status, KR_WC_REM_ACCESS_ERR);
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_detach(ctx));
	return 0;
}

int main(void)
{
	struct vq_two_hosts h;

	vq_two_hosts_start(&h, "", NULL, side_b);
	CHECK_OK(side_a(&h.a, &h.lent));
	vq_two_hosts_join(&h);
	vq_two_hosts_stop(&h);
	KR_PASS("virtqp_two_nodes");
}
