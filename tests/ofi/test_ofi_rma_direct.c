/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RMA by the NIC (src/ofi/ofi_rma_direct.c) between two jobs on two sim
 * nodes (test_ofi_two_nodes.sh starts the keepers): A, this process, on node
 * 1; B, a child, on node 2; one launch. Both take heap memory from the
 * provider (fi_krcore.h's heap_alloc). B registers a heap region
 * (key 7, addresses from 0x10000) and a malloc'ed one (key 9), and either
 * progresses its endpoint or, on command, stops: it blocks on the command
 * pipe and calls nothing of libfabric's until the next command.
 *   learn       A's first write to key 7 goes through B's provider (B
 *               progressing) and brings the region's krcore key back
 *   B stopped   writes of 1, 256 (inline), 4097 and 200,000 bytes (four
 *               pieces) from malloc memory (heap copies) and from A's heap
 *               (none), each read back into malloc and heap buffers: every
 *               one completes with B calling nothing; then B checks its
 *               memory. Key 9 (malloc memory: B's provider serves it) does
 *               not complete while B is stopped, and does once it goes on
 *   threads     four threads on A's one endpoint and CQ, each 100 writes and
 *               reads on its own part of key 7 and of key 9, every byte
 *               checked, B's memory checked after
 *   memfd       B registers four memfd areas (file offset 256 KiB of a
 *               shared mapping): key 11 sealed, its descriptor open, and key
 *               17 the same of 2 MB hugepages: learnt as key 7 was, then
 *               written and read with B stopped, B's memory checked; key 13
 *               unsealed and key 15 sealed but its
 *               descriptor closed after mmap: B's provider serves them, so
 *               nothing completes while B stops, and does once it goes on
 *   re-keyed    B closes key 7 and registers key 7 again over another heap
 *               area: A's next read (the old krcore key, which the NIC now
 *               refuses) goes again through B's provider and gets the new
 *               area's bytes; a write lands there, the old area untouched;
 *               with B stopped again, the new key is used directly
 *   closed      B closes key 7: A's write completes FI_EACCES, B's memory
 *               untouched; a read past a known region's end, FI_EACCES
 *   extension   fi_open_ops of another name or with flags, heap_alloc of 0
 *               bytes, of more than the heap, on no domain: refused
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <krcore/fi_krcore.h>

#include "kr_test.h"
#include "ofi_test.h"
#include "ofi/ofi.h"

#define REG_LEN		 (256u << 10)
#define REG_BASE	 0x10000ull /* key 7's offset: its first byte's address */
#define KEY_HEAP	 7
#define KEY_MALL	 9
#define KEY_MFD		 11 /* a sealed memfd, its descriptor open: by the NIC */
#define KEY_MFD_UNSEALED 13
#define KEY_MFD_CLOSED	 15
#define KEY_MFD_HUGE	 17 /* a sealed hugetlb memfd: by the NIC */
#define AREAS		 7  /* heap, heap, malloc, and the four memfds */
#define HUGE_LEN	 (2u << 20)
#define TMO_S		 30

static const struct ofi_how g_how = {
    .caps = FI_MSG | FI_RMA, .cq = FI_CQ_FORMAT_DATA, .av = FI_AV_MAP, .ext = true};
static const char *g_step = "setup";

enum cmd { C_CHECK = 1, C_STOP, C_REKEY, C_CLOSE, C_QUIT };
struct order { /* no padding: all of it goes down the pipe */
	int32_t cmd;
	uint32_t seed;
	uint64_t off, len;
	int32_t area; /* C_CHECK: 0 the first heap area, 1 the second, 2 malloc, 3-6 key 11-17's */
	int32_t pad;
};

/* ---- B ---- */

static void reg(struct ofi_node *n, void *buf, uint64_t key, uint64_t base, struct fid_mr **mr)
{
	CHECK_OK(fi_mr_reg(n->dom, buf, REG_LEN, FI_REMOTE_READ | FI_REMOTE_WRITE, base, key, 0, mr,
			   NULL));
}

/*
 * What follows the first REG_LEN bytes of a memfd mapped shared (file
 * offset REG_LEN, zeroed): of 2 MB hugepages or not, sealed against
 * shrinking and growing or not, its descriptor kept open or not.
 */
static size_t memfd_len(bool huge)
{
	return huge ? HUGE_LEN : 2 * REG_LEN;
}

static uint8_t *memfd_area(bool huge, bool sealed, bool keep_fd)
{
	int fd;
	uint8_t *p = ofi_memfd_map(memfd_len(huge), huge, sealed, &fd);

	if (!keep_fd)
		close(fd);
	return p + REG_LEN;
}

static void peer_main(const char *sock, int out, int in)
{
	struct pollfd pf = {.fd = in, .events = POLLIN};
	struct fid_mr *mr_heap, *mr_mall, *mr_mfd[4];
	uint8_t *area[AREAS];
	struct ofi_node n = {0};
	struct order o;

	ofi_node_open(&n, sock, &g_how);
	area[0] = n.ops->heap_alloc(n.dom, REG_LEN);
	area[1] = n.ops->heap_alloc(n.dom, REG_LEN);
	area[2] = calloc(1, REG_LEN);
	CHECK(area[0] && area[1] && area[2]);
	memset(area[0], 0, REG_LEN);
	fill(area[1], REG_LEN, 5);
	reg(&n, area[0], KEY_HEAP, REG_BASE, &mr_heap);
	reg(&n, area[2], KEY_MALL, 0, &mr_mall);
	area[3] = memfd_area(false, true, true);
	area[4] = memfd_area(false, false, true);
	area[5] = memfd_area(false, true, false);
	area[6] = memfd_area(true, true, true);
	reg(&n, area[3], KEY_MFD, 0, &mr_mfd[0]);
	reg(&n, area[4], KEY_MFD_UNSEALED, 0, &mr_mfd[1]);
	reg(&n, area[5], KEY_MFD_CLOSED, 0, &mr_mfd[2]);
	reg(&n, area[6], KEY_MFD_HUGE, 0, &mr_mfd[3]);
	n.peer = ofi_meet(n.ep, n.av, out, in);
	for (bool run = true; run;) {
		uint64_t r = 1;

		while (poll(&pf, 1, 0) == 0)
			fi_cq_read(n.cq, NULL, 0); /* progress: A's provider-served requests */
		CHECK(read(in, &o, sizeof(o)) == sizeof(o));
		switch (o.cmd) {
		case C_CHECK: /* len bytes at off of an area: pattern seed (0: zeros) */
			for (uint64_t i = 0; i < o.len; i++)
				if (area[o.area][o.off + i] != (o.seed ? pat(o.seed, i) : 0))
					r = 0;
			break;
		case C_STOP: /* answer, then call nothing until the next command */
			CHECK(write(out, &r, sizeof(r)) == sizeof(r));
			CHECK(read(in, &o, sizeof(o)) == sizeof(o));
			break;
		case C_REKEY: /* key 7 again, over the second area */
			CHECK_OK(fi_close(&mr_heap->fid));
			reg(&n, area[1], KEY_HEAP, REG_BASE, &mr_heap);
			break;
		case C_CLOSE:
			CHECK_OK(fi_close(&mr_heap->fid));
			mr_heap = NULL;
			break;
		default:
			run = false;
		}
		CHECK(write(out, &r, sizeof(r)) == sizeof(r));
	}
	if (mr_heap)
		CHECK_OK(fi_close(&mr_heap->fid));
	CHECK_OK(fi_close(&mr_mall->fid));
	for (int i = 0; i < 4; i++) {
		CHECK_OK(fi_close(&mr_mfd[i]->fid));
		munmap(area[3 + i] - REG_LEN, memfd_len(i == 3));
	}
	n.ops->heap_free(n.dom, area[0]);
	n.ops->heap_free(n.dom, area[1]);
	free(area[2]);
	ofi_node_close(&n);
	_exit(0);
}

/* ---- A ---- */

static int g_to, g_from;
static uint64_t g_last_off; /* where test_stopped wrote its 200,000 bytes (seed 13) */

/* Ask B for o; its answer. A keeps its endpoint going meanwhile. */
static uint64_t ask(struct ofi_node *n, struct order o)
{
	struct pollfd pf = {.fd = g_from, .events = POLLIN};
	uint64_t r;

	CHECK(write(g_to, &o, sizeof(o)) == sizeof(o));
	while (poll(&pf, 1, 0) == 0)
		fi_cq_read(n->cq, NULL, 0);
	CHECK(read(g_from, &r, sizeof(r)) == sizeof(r));
	return r;
}

static bool b_has(struct ofi_node *n, int area, uint64_t off, uint64_t len, uint32_t seed)
{
	return ask(n, (struct order){
			  .cmd = C_CHECK, .area = area, .off = off, .len = len, .seed = seed}) == 1;
}

/* B stops calling libfabric once this returns; the next order wakes it. */
static void b_stop(struct ofi_node *n)
{
	CHECK_EQ(ask(n, (struct order){.cmd = C_STOP}), 1);
}

static void b_go(struct ofi_node *n)
{
	CHECK_EQ(ask(n, (struct order){.cmd = C_CHECK}), 1); /* an empty check: B runs again */
}

static int rma(struct ofi_node *n, bool rd, void *buf, size_t len, uint64_t addr, uint64_t key)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry x;
	struct fi_context2 c;
	int rc;

	if (rd)
		CHECK_OK(fi_read(n->ep, buf, len, NULL, n->peer, addr, key, &c));
	else
		CHECK_OK(fi_write(n->ep, buf, len, NULL, n->peer, addr, key, &c));
	rc = cq_wait(n->cq, &e, NULL, &x, TMO_S, g_step);
	CHECK(rc ? x.op_context == &c : e.op_context == &c);
	if (!rc)
		CHECK_EQ(e.flags, FI_RMA | (rd ? FI_READ : FI_WRITE));
	return rc;
}

/* Writes and reads of every size from malloc and heap buffers, B stopped. */
static void test_stopped(struct ofi_node *n, uint8_t *mall, uint8_t *heap)
{
	static const size_t sizes[] = {1, 256, 4097, 200000};
	uint64_t off[4], o = 5;

	b_stop(n);
	for (int k = 0; k < 4; o += sizes[k] + 3, k++) {
		size_t len = sizes[k];

		off[k] = o;
		fill(k % 2 ? heap : mall, len, 10 + k);
		CHECK_OK(rma(n, false, k % 2 ? heap : mall, len, REG_BASE + o, KEY_HEAP));
		for (int h = 0; h < 2; h++) { /* read back into both kinds */
			uint8_t *back = h ? heap : mall;

			memset(back, 0xee, len + 1);
			CHECK_OK(rma(n, true, back, len, REG_BASE + o, KEY_HEAP));
			CHECK(same(back, len, 10 + k) && back[len] == 0xee);
		}
	}
	b_go(n);
	for (int k = 0; k < 4; k++)
		CHECK(b_has(n, 0, off[k], sizes[k], 10 + k));
	g_last_off = off[3];
}

/* Key 9 is malloc memory: only B's provider serves it, so nothing completes while B stops. */
static void test_served(struct ofi_node *n, uint8_t *buf)
{
	struct fi_cq_data_entry e;
	struct fi_context2 c;
	double t0;

	fill(buf, 1000, 30);
	CHECK_OK(rma(n, false, buf, 1000, 100, KEY_MALL)); /* B runs */
	b_stop(n);
	memset(buf, 0, 1000);
	CHECK_OK(fi_read(n->ep, buf, 1000, NULL, n->peer, 100, KEY_MALL, &c));
	for (t0 = now_s(); now_s() - t0 < 0.3;)
		CHECK_EQ(fi_cq_read(n->cq, &e, 1), -FI_EAGAIN);
	b_go(n);
	CHECK_OK(cq_wait(n->cq, &e, NULL, NULL, TMO_S, g_step));
	CHECK(e.op_context == &c && same(buf, 1000, 30));
}

/*
 * Memfd regions: key 11 goes by the NIC once learnt (B stopped), its bytes
 * where B's mapping shows them; keys 13 and 15 only through B's provider.
 */
static void test_memfd_nic(struct ofi_node *n, uint8_t *mall, uint8_t *heap, uint64_t key, int area,
			   uint32_t seed)
{
	fill(mall, 64, seed);
	CHECK_OK(rma(n, false, mall, 64, 0, key)); /* learn: B serves, its key comes back */
	b_stop(n);
	fill(heap, 4097, seed + 1);
	CHECK_OK(rma(n, false, heap, 4097, 100, key));
	fill(mall, 1, seed + 2);
	CHECK_OK(rma(n, false, mall, 1, REG_LEN - 1, key));
	memset(mall, 0, 4097);
	CHECK_OK(rma(n, true, mall, 4097, 100, key));
	CHECK(same(mall, 4097, seed + 1));
	b_go(n);
	CHECK(b_has(n, area, 0, 64, seed) && b_has(n, area, 100, 4097, seed + 1) &&
	      b_has(n, area, REG_LEN - 1, 1, seed + 2));
}

static void test_memfd(struct ofi_node *n, uint8_t *mall, uint8_t *heap)
{
	static const uint64_t keys[2] = {KEY_MFD_UNSEALED, KEY_MFD_CLOSED};
	struct fi_cq_data_entry e;
	struct fi_context2 c;

	test_memfd_nic(n, mall, heap, KEY_MFD, 3, 60);
	test_memfd_nic(n, mall, heap, KEY_MFD_HUGE, 6, 70);
	for (int k = 0; k < 2; k++) {
		fill(mall, 500, 63 + k);
		CHECK_OK(rma(n, false, mall, 500, 8, keys[k])); /* B runs */
		CHECK(b_has(n, 4 + k, 8, 500, 63 + k));
		b_stop(n);
		memset(mall, 0, 500);
		CHECK_OK(fi_read(n->ep, mall, 500, NULL, n->peer, 8, keys[k], &c));
		for (double t0 = now_s(); now_s() - t0 < 0.3;)
			CHECK_EQ(fi_cq_read(n->cq, &e, 1), -FI_EAGAIN);
		b_go(n);
		CHECK_OK(cq_wait(n->cq, &e, NULL, NULL, TMO_S, g_step));
		CHECK(e.op_context == &c && same(mall, 500, 63 + k));
	}
}

/*
 * Four threads on A's one endpoint (FI_THREAD_SAFE) and its one CQ, each on
 * its own part of key 7 (by the NIC) and of key 9 (served by B), 100 writes
 * of varied lengths read back and checked, from heap and malloc buffers in
 * turn: a thread reading the CQ completes whichever operation it finds.
 */
#define THREADS	   4
#define T_HEAP_OFF 212992u /* past test_stopped's bytes; 4 x 12 KiB to the end */
#define T_HEAP_LEN 12288u
#define T_MALL_OFF 4096u
#define T_MALL_LEN 4096u
#define T_ITERS	   100

struct t_op {
	int done, err; /* set by whichever thread reads its completion */
};

struct t_arg {
	struct ofi_node *n;
	int t;
	uint8_t *heap[2], *mall[2]; /* a source and a read-back buffer of each kind */
	uint32_t last_len[2];	    /* the last write's length to key 7 and key 9 */
};

/* Wait for op, completing the others' operations met on the way. */
static int t_wait(struct ofi_node *n, struct t_op *op)
{
	double t0 = now_s();

	while (!__atomic_load_n(&op->done, __ATOMIC_ACQUIRE)) {
		struct fi_cq_data_entry e;
		struct fi_cq_err_entry x = {0};
		ssize_t r = fi_cq_read(n->cq, &e, 1);
		struct t_op *o = NULL;

		if (r == 1) {
			o = e.op_context;
		} else if (r == -FI_EAVAIL && fi_cq_readerr(n->cq, &x, 0) == 1) {
			o = x.op_context;
			o->err = x.err;
		} else {
			CHECK_EQ(r, -FI_EAGAIN);
		}
		if (o)
			__atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);
		CHECK(now_s() - t0 < TMO_S);
	}
	return op->err;
}

static void *t_main(void *arg)
{
	struct t_arg *a = arg;

	for (int i = 0; i < T_ITERS; i++) {
		for (int k = 0; k < 2; k++) { /* key 7, then key 9 */
			uint32_t len = k ? 1 + (uint32_t)(i * 331) % T_MALL_LEN
					 : 1 + (uint32_t)(i * 997) % T_HEAP_LEN;
			uint64_t addr = k ? T_MALL_OFF + (uint64_t)a->t * T_MALL_LEN
					  : REG_BASE + T_HEAP_OFF + (uint64_t)a->t * T_HEAP_LEN;
			uint8_t *src = i % 2 ? a->heap[0] : a->mall[0];
			uint8_t *back = i % 2 ? a->mall[1] : a->heap[1];
			uint32_t seed = (uint32_t)(a->t * 1000 + i);
			struct t_op w = {0}, r = {0};

			fill(src, len, seed);
			CHECK_OK(fi_write(a->n->ep, src, len, NULL, a->n->peer, addr,
					  k ? KEY_MALL : KEY_HEAP, &w));
			CHECK_OK(t_wait(a->n, &w));
			memset(back, 0, len);
			CHECK_OK(fi_read(a->n->ep, back, len, NULL, a->n->peer, addr,
					 k ? KEY_MALL : KEY_HEAP, &r));
			CHECK_OK(t_wait(a->n, &r));
			CHECK(same(back, len, seed));
			a->last_len[k] = len;
		}
	}
	return NULL;
}

static void test_threads(struct ofi_node *n)
{
	struct t_arg a[THREADS];
	pthread_t th[THREADS];

	for (int t = 0; t < THREADS; t++) {
		a[t] = (struct t_arg){.n = n, .t = t};
		for (int b = 0; b < 2; b++) {
			a[t].heap[b] = n->ops->heap_alloc(n->dom, T_HEAP_LEN);
			a[t].mall[b] = malloc(T_HEAP_LEN);
			CHECK(a[t].heap[b] && a[t].mall[b]);
		}
	}
	for (int t = 0; t < THREADS; t++)
		CHECK_OK(pthread_create(&th[t], NULL, t_main, &a[t]));
	for (int t = 0; t < THREADS; t++)
		CHECK_OK(pthread_join(th[t], NULL));
	for (int t = 0; t < THREADS; t++) { /* each thread's last writes, as B sees them */
		uint32_t seed = (uint32_t)(t * 1000 + T_ITERS - 1);

		CHECK(b_has(n, 0, T_HEAP_OFF + (uint64_t)t * T_HEAP_LEN, a[t].last_len[0], seed));
		CHECK(b_has(n, 2, T_MALL_OFF + (uint64_t)t * T_MALL_LEN, a[t].last_len[1], seed));
		for (int b = 0; b < 2; b++) {
			n->ops->heap_free(n->dom, a[t].heap[b]);
			free(a[t].mall[b]);
		}
	}
}

static void test_rekeyed(struct ofi_node *n, uint8_t *buf)
{
	CHECK_EQ(ask(n, (struct order){.cmd = C_REKEY}), 1);
	memset(buf, 0, 4096);
	CHECK_OK(rma(n, true, buf, 4096, REG_BASE, KEY_HEAP)); /* the old key fails: B serves */
	CHECK(same(buf, 4096, 5));
	fill(buf, 3000, 40);
	CHECK_OK(rma(n, false, buf, 3000, REG_BASE + 8192, KEY_HEAP));
	CHECK(b_has(n, 1, 8192, 3000, 40));
	CHECK(b_has(n, 0, g_last_off, 200000, 13)); /* the old area as test_stopped left it */
	b_stop(n);				    /* the new key, learnt again, goes direct */
	memset(buf, 0, 3000);
	CHECK_OK(rma(n, true, buf, 3000, REG_BASE + 8192, KEY_HEAP));
	CHECK(same(buf, 3000, 40));
	b_go(n);
}

static void test_closed(struct ofi_node *n, uint8_t *buf)
{
	/* past the end of the known region: not direct, and B refuses it */
	CHECK_EQ(rma(n, true, buf, 100, REG_BASE + REG_LEN - 50, KEY_HEAP), -FI_EACCES);
	CHECK_EQ(ask(n, (struct order){.cmd = C_CLOSE}), 1);
	fill(buf, 500, 50);
	CHECK_EQ(rma(n, false, buf, 500, REG_BASE, KEY_HEAP), -FI_EACCES);
	CHECK(b_has(n, 1, 0, 4096, 5)); /* still the second area's own pattern */
}

/* The extension's bad input: each refused, nothing changed. */
static void test_ext_bad_input(struct ofi_node *n)
{
	void *ops;

	CHECK_EQ(fi_open_ops(&n->dom->fid, "krcore_nope", 0, &ops, NULL), -FI_ENOSYS);
	CHECK_EQ(fi_open_ops(&n->dom->fid, FI_KRCORE_DOMAIN_OPS, 1, &ops, NULL), -FI_EBADFLAGS);
	errno = 0;
	CHECK(!n->ops->heap_alloc(n->dom, 0) && errno == EINVAL);
	errno = 0;
	CHECK(!n->ops->heap_alloc(NULL, 8) && errno == EINVAL);
	errno = 0;
	CHECK(!n->ops->heap_alloc(n->dom, 1ull << 40) && errno == ENOMEM); /* past the heap */
	n->ops->heap_free(n->dom, NULL);
	n->ops->heap_free(NULL, NULL);
}

int main(int argc, char **argv)
{
	uint8_t *mall, *heap;
	struct ofi_node n = {0};
	int st;
	pid_t b;

	if (argc != 3) {
		fprintf(stderr, "usage: test_ofi_rma_direct NODE1_SOCKET NODE2_SOCKET\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	b = ofi_spawn(peer_main, argv[2], &g_to, &g_from);
	ofi_node_open(&n, argv[1], &g_how);
	g_step = "extension";
	test_ext_bad_input(&n);
	mall = malloc(REG_LEN);
	heap = n.ops->heap_alloc(n.dom, REG_LEN);
	CHECK(mall && heap);
	n.peer = ofi_meet(n.ep, n.av, g_to, g_from);
	g_step = "learn";
	fill(mall, 100, 1);
	CHECK_OK(rma(&n, false, mall, 100, REG_BASE + 1, KEY_HEAP));
	CHECK(b_has(&n, 0, 1, 100, 1));
	g_step = "B stopped";
	test_stopped(&n, mall, heap);
	g_step = "served by B";
	test_served(&n, mall);
	g_step = "memfd";
	test_memfd(&n, mall, heap);
	g_step = "threads";
	test_threads(&n);
	g_step = "re-keyed";
	test_rekeyed(&n, heap);
	g_step = "closed";
	test_closed(&n, mall);
	ask(&n, (struct order){.cmd = C_QUIT});
	CHECK(waitpid(b, &st, 0) == b && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	n.ops->heap_free(n.dom, heap);
	free(mall);
	ofi_node_close(&n);
	printf("test_ofi_rma_direct: ok\n");
	return 0;
}
