/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Large messages in place (src/ofi/ofi_tx.c, ofi_rx.c) between two jobs on
 * two sim nodes (test_ofi_two_nodes.sh starts the keepers): A, this
 * process, on node 1 sends; B, a child, on node 2 receives. Each message is
 * LEN bytes (three chunks), its bytes checked, and both sides' copy_stats()
 * (fi_krcore.h) say which way it went:
 *   case  A's buffer                      B's buffer               A       B
 *   0     heap, registered FI_SEND        heap                     place   place
 *   1     sealed memfd, registered FI_SEND malloc                  place   copied
 *   2     malloc, registered FI_SEND      memfd, registered FI_RECV staged place
 *   3     heap, not registered            heap, 200,000 bytes      staged  place,
 *                                         (truncated: FI_ETRUNC)           the rest copied
 *   4, 5  heap registered (4), malloc registered (5): A overwrites its buffer
 *         right after fi_tsend returns, before B posts its receive. In place,
 *         B gets the new bytes; staged, the first chunk is the old ones (the
 *         provider copied it at the send). (Changing a buffer before its send
 *         completes is not allowed to applications: here it shows where B
 *         READs from.)
 *   6     memfd sealed but not registered: staged (no key without fi_mr_reg)
 * A's registration refuses to close (-FI_EBUSY) while a send from it goes in
 * place, and closes once it completed.
 *   threads  four threads of A on its one endpoint each send three messages
 *            from their own registered memfd at once (all in place); B takes
 *            the twelve with a wildcard into one heap buffer (in place), each
 *            checked by its tag's pattern
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <krcore/fi_krcore.h>

#include "kr_test.h"
#include "ofi_test.h"
#include "ofi/ofi.h"

#define LEN	  300000u /* 2 x 128 KiB + 37,856: three chunks */
#define TRUNC_LEN 200000u
#define MFD_LEN	  (1u << 20)
#define CASES	  7
#define THREADS	  4
#define PER_T	  3 /* messages each */
#define TMO_S	  30

static const struct ofi_how g_how = {
    .caps = FI_TAGGED, .cq = FI_CQ_FORMAT_TAGGED, .av = FI_AV_MAP, .ext = true};

enum kind { HEAP, MALLOC, MEMFD };
struct side {
	enum kind kind;
	uint64_t access; /* registered with these rights, 0: not registered */
};
struct expect {
	struct side a, b;
	bool a_place, b_place; /* b_place: every chunk inside b's buffer */
	uint32_t blen;
	bool overwrite;
};
static const struct expect g_case[CASES] = {
    {{HEAP, FI_SEND}, {HEAP, 0}, true, true, LEN, false},
    {{MEMFD, FI_SEND}, {MALLOC, 0}, true, false, LEN, false},
    {{MALLOC, FI_SEND}, {MEMFD, FI_RECV}, false, true, LEN, false},
    {{HEAP, 0}, {HEAP, 0}, false, true, TRUNC_LEN, false},
    {{HEAP, FI_SEND}, {HEAP, 0}, true, true, LEN, true},
    {{MALLOC, FI_SEND}, {HEAP, 0}, false, true, LEN, true},
    {{MEMFD, 0}, {HEAP, 0}, false, true, LEN, false},
};

static int g_mfd = -1; /* the memfd buffer's descriptor, open while it is mapped */

/* A sealed memfd of MFD_LEN mapped shared. */
static uint8_t *memfd_buf(void)
{
	CHECK(g_mfd < 0);
	return ofi_memfd_map(MFD_LEN, false, true, &g_mfd);
}

/* A buffer of kind, registered as s says (*mr NULL if not). */
static uint8_t *side_buf(struct ofi_node *n, const struct side *s, uint64_t key, struct fid_mr **mr)
{
	uint8_t *b = s->kind == HEAP	 ? n->ops->heap_alloc(n->dom, LEN)
		     : s->kind == MALLOC ? malloc(LEN)
					 : memfd_buf();

	CHECK(b != NULL);
	memset(b, 0, LEN);
	*mr = NULL;
	if (s->access)
		CHECK_OK(fi_mr_reg(n->dom, b, LEN, s->access, 0, key, 0, mr, NULL));
	return b;
}

static void side_free(struct ofi_node *n, const struct side *s, uint8_t *b, struct fid_mr *mr)
{
	if (mr)
		CHECK_OK(fi_close(&mr->fid));
	if (s->kind == HEAP)
		n->ops->heap_free(n->dom, b);
	else if (s->kind == MALLOC)
		free(b);
	else {
		munmap(b, MFD_LEN);
		close(g_mfd);
		g_mfd = -1;
	}
}

/* Whether b[off, off + n) holds pattern seed's bytes at those offsets. */
static bool same_at(const uint8_t *b, size_t off, size_t n, uint32_t seed)
{
	for (size_t i = off; i < off + n; i++)
		if (b[i] != pat(seed, i))
			return false;
	return true;
}

static struct fi_krcore_copy_stats stats(struct ofi_node *n)
{
	struct fi_krcore_copy_stats st;

	CHECK_OK(n->ops->copy_stats(n->dom, &st));
	return st;
}

/* A message of the threads step: its pattern, named by its tag. */
static uint32_t t_seed(uint64_t tag)
{
	return 3000 + (uint32_t)tag;
}

/* ---- B ---- */

/* The threads step: THREADS x PER_T messages in any order, each in place into the heap. */
static void peer_threads(struct ofi_node *n, int in, int out)
{
	struct fi_krcore_copy_stats s0 = stats(n), s1;
	uint8_t *buf = n->ops->heap_alloc(n->dom, LEN), ok = 1;
	bool seen[THREADS * PER_T] = {0};
	char go;

	CHECK(buf != NULL && read(in, &go, 1) == 1);
	for (int i = 0; i < THREADS * PER_T; i++) {
		struct fi_cq_tagged_entry e;

		CHECK_OK(fi_trecv(n->ep, buf, LEN, NULL, n->peer, 0, ~0ull, &n));
		CHECK_OK(cq_wait(n->cq, &e, NULL, NULL, TMO_S, "B's threads step"));
		CHECK(e.len == LEN && e.tag < THREADS * PER_T && !seen[e.tag]);
		seen[e.tag] = true;
		if (!same(buf, LEN, t_seed(e.tag))) {
			fprintf(stderr, "threads: message %llu's bytes are wrong\n",
				(unsigned long long)e.tag);
			ok = 0;
		}
	}
	s1 = stats(n);
	CHECK_EQ(s1.rx_in_place - s0.rx_in_place, THREADS * PER_T * LEN);
	CHECK_EQ(s1.rx_copied - s0.rx_copied, 0);
	n->ops->heap_free(n->dom, buf);
	CHECK(write(out, &ok, 1) == 1);
}

static void peer_main(const char *sock, int out, int in)
{
	struct ofi_node n = {0};
	char go;

	ofi_node_open(&n, sock, &g_how);
	n.peer = ofi_meet(n.ep, n.av, out, in);
	for (int k = 0; k < CASES; k++) {
		const struct expect *c = &g_case[k];
		struct fi_krcore_copy_stats s0, s1;
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry x;
		struct fid_mr *mr;
		uint8_t *buf = side_buf(&n, &c->b, 100 + (uint64_t)k, &mr);
		uint32_t seed = c->overwrite ? 2000 + (uint32_t)k : 1000 + (uint32_t)k;
		uint8_t ok = 1;
		int rc;

		CHECK(read(in, &go, 1) == 1);
		s0 = stats(&n);
		CHECK_OK(fi_trecv(n.ep, buf, c->blen, NULL, n.peer, (uint64_t)k, 0, &n));
		rc = cq_wait(n.cq, &e, NULL, &x, TMO_S, "B's receive");
		s1 = stats(&n);
		if (c->blen < LEN) { /* truncated: the bytes that fit, the rest untouched */
			CHECK_EQ(rc, -FI_ETRUNC);
			CHECK_EQ(x.len, c->blen);
			ok = same(buf, c->blen, seed) && buf[c->blen] == 0;
		} else {
			CHECK_OK(rc);
			CHECK_EQ(e.len, LEN);
			if (k ==
			    5) /* staged: the first chunk as it was at the send, the last new */
				ok = same_at(buf, 0, KR_OFI_CHUNK, 1000 + (uint32_t)k) &&
				     same_at(buf, 2 * KR_OFI_CHUNK, LEN - 2 * KR_OFI_CHUNK,
					     2000 + (uint32_t)k);
			else
				ok = same(buf, LEN, seed);
		}
		if (!ok)
			fprintf(stderr, "case %d: B's bytes are wrong\n", k);
		if (c->b_place) {
			CHECK_EQ(s1.rx_in_place - s0.rx_in_place,
				 c->blen < LEN ? KR_OFI_CHUNK : LEN);
			CHECK_EQ(s1.rx_copied - s0.rx_copied, c->blen < LEN ? KR_OFI_CHUNK : 0);
		} else {
			CHECK_EQ(s1.rx_in_place - s0.rx_in_place, 0);
			CHECK_EQ(s1.rx_copied - s0.rx_copied, LEN);
		}
		side_free(&n, &c->b, buf, mr);
		CHECK(write(out, &ok, 1) == 1);
	}
	peer_threads(&n, in, out);
	ofi_node_close(&n);
	_exit(0);
}

/* ---- A ---- */

struct t_arg {
	struct ofi_node *n;
	int t;
	uint8_t *buf; /* PER_T messages of LEN, one registration */
	struct fi_context2 ctx[PER_T];
};

static void *t_send(void *arg)
{
	struct t_arg *a = arg;

	for (int i = 0; i < PER_T; i++) {
		uint64_t tag = (uint64_t)(a->t * PER_T + i);
		int rc;

		while ((rc = fi_tsend(a->n->ep, a->buf + (size_t)i * LEN, LEN, NULL, a->n->peer,
				      tag, &a->ctx[i])) == -FI_EAGAIN)
			fi_cq_read(a->n->cq, NULL, 0); /* progress, taking nothing */
		CHECK_OK(rc);
	}
	return NULL;
}

/* Four threads send three messages each from their own registered memfd, all in place. */
static void test_threads(struct ofi_node *n, int to, int from)
{
	struct fi_krcore_copy_stats s0 = stats(n), s1;
	struct t_arg a[THREADS];
	pthread_t th[THREADS];
	struct fid_mr *mr[THREADS];
	int fd[THREADS];
	uint8_t ok = 0;

	for (int t = 0; t < THREADS; t++) {
		a[t] = (struct t_arg){.n = n, .t = t};
		a[t].buf = ofi_memfd_map(PER_T * LEN, false, true, &fd[t]);
		for (int i = 0; i < PER_T; i++)
			fill(a[t].buf + (size_t)i * LEN, LEN, t_seed((uint64_t)(t * PER_T + i)));
		CHECK_OK(fi_mr_reg(n->dom, a[t].buf, PER_T * LEN, FI_SEND, 0, 200 + (uint64_t)t, 0,
				   &mr[t], NULL));
	}
	CHECK(write(to, "g", 1) == 1);
	for (int t = 0; t < THREADS; t++)
		CHECK_OK(pthread_create(&th[t], NULL, t_send, &a[t]));
	for (int t = 0; t < THREADS; t++)
		CHECK_OK(pthread_join(th[t], NULL));
	for (int i = 0; i < THREADS * PER_T; i++) {
		struct fi_cq_tagged_entry e;

		CHECK_OK(cq_wait(n->cq, &e, NULL, NULL, TMO_S, "A's threads step"));
		CHECK(e.flags & FI_SEND);
	}
	s1 = stats(n);
	CHECK_EQ(s1.tx_in_place - s0.tx_in_place, THREADS * PER_T * LEN);
	CHECK_EQ(s1.tx_staged - s0.tx_staged, 0);
	CHECK(read(from, &ok, 1) == 1 && ok);
	for (int t = 0; t < THREADS; t++) {
		CHECK_OK(fi_close(&mr[t]->fid));
		munmap(a[t].buf, PER_T * LEN);
		close(fd[t]);
	}
}

int main(int argc, char **argv)
{
	struct ofi_node n = {0};
	int to, from, st;
	pid_t b;

	if (argc != 3) {
		fprintf(stderr, "usage: test_ofi_zcopy NODE1_SOCKET NODE2_SOCKET\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	b = ofi_spawn(peer_main, argv[2], &to, &from);
	ofi_node_open(&n, argv[1], &g_how);
	n.peer = ofi_meet(n.ep, n.av, to, from);
	for (int k = 0; k < CASES; k++) {
		const struct expect *c = &g_case[k];
		struct fi_krcore_copy_stats s0, s1;
		struct fi_cq_tagged_entry e;
		struct fid_mr *mr;
		uint8_t *buf = side_buf(&n, &c->a, 1 + (uint64_t)k, &mr), ok = 0;

		fill(buf, LEN, 1000 + (uint32_t)k);
		s0 = stats(&n);
		CHECK_OK(fi_tsend(n.ep, buf, LEN, NULL, n.peer, (uint64_t)k, &n));
		if (c->a_place) /* peers READ it until the send completes */
			CHECK_EQ(fi_close(&mr->fid), -FI_EBUSY);
		if (c->overwrite)
			fill(buf, LEN, 2000 + (uint32_t)k);
		CHECK(write(to, "g", 1) == 1);
		CHECK_OK(cq_wait(n.cq, &e, NULL, NULL, TMO_S, "A's send"));
		CHECK(e.op_context == &n && (e.flags & FI_SEND));
		s1 = stats(&n);
		CHECK_EQ(s1.tx_in_place - s0.tx_in_place, c->a_place ? LEN : 0);
		CHECK_EQ(s1.tx_staged - s0.tx_staged, c->a_place ? 0 : LEN);
		CHECK(read(from, &ok, 1) == 1);
		if (!ok)
			fprintf(stderr, "case %d: B says its bytes are wrong\n", k);
		CHECK(ok);
		side_free(&n, &c->a, buf, mr);
	}
	test_threads(&n, to, from);
	/* the extension's bad input */
	CHECK_EQ(n.ops->copy_stats(NULL, &(struct fi_krcore_copy_stats){0}), -FI_EINVAL);
	CHECK_EQ(n.ops->copy_stats(n.dom, NULL), -FI_EINVAL);
	CHECK(waitpid(b, &st, 0) == b && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ofi_node_close(&n);
	printf("test_ofi_zcopy: ok\n");
	return 0;
}
