/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The provider's RMA, atomics, registrations and counters between two jobs
 * on two sim nodes, through the libfabric API (test_ofi_two_nodes.sh starts the
 * keepers): A, this process, on node 1; B, a child, on node 2; one launch.
 * B registers two malloc'ed regions (RW: key 7, addresses from 0x10000;
 * RO: a 64-bit key, remote read only, filled with a pattern), binds a counter for
 * remote reads and writes, and keeps its endpoint progressing while A works
 * on its memory; on command it checks bytes of its regions or reports.
 *   write/read   sizes 0, 1, 100, 4096, 4097, 300,000 at odd offsets (every
 *                form: fi_write, writev, writemsg, inject_write); B checks
 *                its memory, A reads each back; 1 MiB read of RO
 *   writedata    fi_writedata's 4 bytes complete on B's CQ (FI_RMA |
 *                FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA), bytes in place
 *   atomics      fetch SUM, CSWAP hit and miss, MIN, BXOR, MSWAP, READ,
 *                WRITE of a double, an unaligned one, a plain SUM; 500
 *                fetch-adds in flight at once: the old values are 0..499
 *                once each, the sum 500
 *   counters     A's FI_READ/FI_WRITE counter and B's remote ones equal
 *                the operations made, errors counted apart
 *   bad input    a wrong key, a write to RO, a range past the end, an
 *                address below the region's offset, the low 32 bits of a
 *                64-bit key: each completes FI_EACCES with B's memory
 *                untouched; a refused inject reports nothing (counted as
 *                an error); a duplicate key, an unsupported atomic, too many values,
 *                bad flags; the domain refuses to close with an MR open
 *   peer killed  a 16 MiB read from B, B SIGKILLed meanwhile: the read
 *                completes in error, not a hang
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "kr_test.h"
#include "ofi_test.h"
#include "ofi/ofi.h"

#define RW_LEN	(1u << 20)
#define RW_BASE 0x10000ull /* the RW region's offset: its first byte's address */
#define RO_LEN	(16u << 20)
#define KEY_RW	7
#define KEY_RO	0x7f1234567890abcdull /* 64 bits, as Open MPI's btl/ofi uses pointers */
#define TMO_S	30

/* This test's node: a counter bound for cntr_flags; the caps and keys it relies on checked. */
static void node_open(struct ofi_node *n, const char *sock, uint64_t cntr_flags)
{
	const struct ofi_how how = {.caps = FI_MSG | FI_RMA | FI_ATOMIC,
				    .cq = FI_CQ_FORMAT_DATA,
				    .av = FI_AV_MAP,
				    .cntr_flags = cntr_flags};

	ofi_node_open(n, sock, &how);
	CHECK(n->info->caps & FI_RMA && n->info->caps & FI_ATOMIC);
	CHECK_EQ(n->info->domain_attr->mr_mode, 0);
	CHECK_EQ(n->info->domain_attr->mr_key_size, 8);
}
static const char *g_step = "setup";

enum cmd { C_CHECK = 1, C_DATA, C_COUNT, C_QUIT };
struct order { /* no padding: all of it goes down the pipe */
	int32_t cmd;
	uint32_t seed;
	uint64_t off, len;
};

/* One completion within TMO_S: 0, or -err (the entry in *x). */
static int wait_one(struct ofi_node *n, struct fi_cq_data_entry *e, struct fi_cq_err_entry *x)
{
	return cq_wait(n->cq, e, NULL, x, TMO_S, g_step);
}

/* ---- B ---- */

static void peer_main(const char *sock, int out, int in)
{
	uint8_t *rw = calloc(1, RW_LEN), *ro = malloc(RO_LEN);
	struct fid_mr *mr_rw, *mr_ro;
	struct pollfd pf = {.fd = in, .events = POLLIN};
	struct ofi_node n = {0};
	struct order o;

	CHECK(rw && ro);
	fill(ro, RO_LEN, 99);
	node_open(&n, sock, FI_REMOTE_READ | FI_REMOTE_WRITE);
	CHECK_OK(fi_mr_reg(n.dom, rw, RW_LEN, FI_REMOTE_READ | FI_REMOTE_WRITE, RW_BASE, KEY_RW, 0,
			   &mr_rw, NULL));
	CHECK_OK(fi_mr_reg(n.dom, ro, RO_LEN, FI_REMOTE_READ, 0, KEY_RO, 0, &mr_ro, NULL));
	CHECK_EQ(fi_mr_key(mr_rw), KEY_RW);
	n.peer = ofi_meet(n.ep, n.av, out, in);
	for (;;) {
		uint64_t r[3];

		while (poll(&pf, 1, 0) == 0)
			fi_cntr_read(n.cntr); /* progress: A's requests are served here */
		if (read(in, &o, sizeof(o)) != sizeof(o) || o.cmd == C_QUIT)
			break;
		memset(r, 0, sizeof(r));
		switch (o.cmd) {
		case C_CHECK: /* len bytes at off of RW: pattern seed (0: zeros) */
			r[0] = 1;
			for (uint64_t i = 0; i < o.len; i++)
				if (rw[o.off + i] != (o.seed ? pat(o.seed, i) : 0))
					r[0] = 0;
			if (o.off) /* the byte before it untouched */
				r[0] &= rw[o.off - 1] == 0;
			break;
		case C_DATA: { /* the remote CQ data completion */
			struct fi_cq_data_entry e;

			CHECK_OK(wait_one(&n, &e, NULL));
			r[0] = e.flags;
			r[1] = e.data;
			r[2] = e.len;
			break;
		}
		case C_COUNT:
			r[0] = fi_cntr_read(n.cntr);
			r[1] = fi_cntr_readerr(n.cntr);
			break;
		}
		CHECK(write(out, r, sizeof(r)) == sizeof(r));
	}
	CHECK_OK(fi_close(&n.ep->fid));
	CHECK_OK(fi_close(&mr_rw->fid));
	CHECK_OK(fi_close(&mr_ro->fid));
	_exit(0);
}

/* ---- A ---- */

/* Ask B for o; its three-word answer. A keeps its endpoint going meanwhile. */
static void ask(struct ofi_node *n, int to, int from, struct order o, uint64_t r[3])
{
	struct pollfd pf = {.fd = from, .events = POLLIN};

	CHECK(write(to, &o, sizeof(o)) == sizeof(o));
	while (poll(&pf, 1, 0) == 0)
		fi_cq_read(n->cq, NULL, 0);
	CHECK(read(from, r, 3 * sizeof(*r)) == (ssize_t)(3 * sizeof(*r)));
}

static bool b_has(struct ofi_node *n, int to, int from, uint64_t off, uint64_t len, uint32_t seed)
{
	uint64_t r[3];

	ask(n, to, from, (struct order){.cmd = C_CHECK, .off = off, .len = len, .seed = seed}, r);
	return r[0] == 1;
}

static void read_wait(struct ofi_node *n, void *buf, size_t len, uint64_t addr, uint64_t key)
{
	struct fi_cq_data_entry e;
	struct fi_context2 c;

	CHECK_OK(fi_read(n->ep, buf, len, NULL, n->peer, addr, key, &c));
	CHECK_OK(wait_one(n, &e, NULL));
	CHECK(e.op_context == &c);
	CHECK_EQ(e.flags, FI_RMA | FI_READ);
}

static uint64_t g_reads, g_writes; /* A's operations that succeeded */

static void test_write_read(struct ofi_node *n, int to, int from, uint8_t *buf, uint8_t *back)
{
	static const size_t sizes[] = {0, 1, 100, 4096, 4097, 300000};
	struct fi_cq_data_entry e;
	struct fi_context2 c;
	uint64_t off = 3;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t len = sizes[k];
		uint32_t seed = (uint32_t)k + 1;
		struct iovec iov = {.iov_base = buf, .iov_len = len};
		struct fi_rma_iov riov = {.addr = RW_BASE + off, .len = len, .key = KEY_RW};
		struct fi_msg_rma m = {.msg_iov = &iov,
				       .iov_count = 1,
				       .addr = n->peer,
				       .rma_iov = &riov,
				       .rma_iov_count = 1,
				       .context = &c};

		fill(buf, len, seed);
		switch (k % 3) { /* every form */
		case 0:
			CHECK_OK(
			    fi_write(n->ep, buf, len, NULL, n->peer, RW_BASE + off, KEY_RW, &c));
			break;
		case 1:
			CHECK_OK(
			    fi_writev(n->ep, &iov, NULL, 1, n->peer, RW_BASE + off, KEY_RW, &c));
			break;
		default:
			CHECK_OK(fi_writemsg(n->ep, &m, FI_COMPLETION));
		}
		CHECK_OK(wait_one(n, &e, NULL));
		memset(buf, 0, len); /* complete means delivered: the source is ours again */
		CHECK(e.op_context == &c);
		CHECK_EQ(e.flags, FI_RMA | FI_WRITE);
		g_writes++;
		CHECK(b_has(n, to, from, off, len, seed));
		memset(back, 0xee, len + 1);
		read_wait(n, back, len, RW_BASE + off, KEY_RW);
		g_reads++;
		CHECK(same(back, len, seed) && back[len] == 0xee);
		off += len + 1 + k; /* odd offsets, a gap of zeros between */
	}
	/* an inject: the buffer is free at once, the bytes land anyway */
	fill(buf, 150, 20);
	CHECK_OK(fi_inject_write(n->ep, buf, 150, n->peer, RW_BASE + off, KEY_RW));
	memset(buf, 0, 150);
	read_wait(n, back, 150, RW_BASE + off, KEY_RW); /* after the write: same vQP, in order */
	g_reads++;
	g_writes++;
	CHECK(same(back, 150, 20));
	CHECK_EQ(fi_inject_write(n->ep, buf, KR_OFI_INLINE + 1, n->peer, RW_BASE, KEY_RW),
		 -FI_EMSGSIZE);
	/* 1 MiB of the read-only region, at an odd offset */
	read_wait(n, back, RW_LEN, 12345, KEY_RO);
	g_reads++;
	for (size_t i = 0; i < RW_LEN; i++)
		if (back[i] != pat(99, 12345 + i)) {
			fprintf(stderr, "RO byte %zu wrong\n", i);
			exit(1);
		}
}

static void test_writedata(struct ofi_node *n, int to, int from, uint8_t *buf)
{
	struct fi_cq_data_entry e;
	struct fi_context2 c;
	uint64_t r[3];

	fill(buf, 64, 30);
	CHECK_OK(fi_writedata(n->ep, buf, 64, NULL, 0xfeed, n->peer, RW_BASE + 500000, KEY_RW, &c));
	CHECK_OK(wait_one(n, &e, NULL));
	g_writes++;
	ask(n, to, from, (struct order){.cmd = C_DATA}, r);
	CHECK_EQ(r[0], FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA);
	CHECK_EQ(r[1], 0xfeed);
	CHECK_EQ(r[2], 64);
	CHECK(b_has(n, to, from, 500000, 64, 30));
}

#define AT_ADDR (RW_BASE + 600000)

static void atomic_wait(struct ofi_node *n, struct fi_context2 *c)
{
	struct fi_cq_data_entry e;

	CHECK_OK(wait_one(n, &e, NULL));
	CHECK(e.op_context == c);
}

static void test_atomics(struct ofi_node *n)
{
	uint64_t v[4] = {1, 2, 3, 4}, old[4], cmp, back[4];
	int32_t i32, o32;
	uint8_t u8, o8;
	double d = 2.5, od;
	struct fi_context2 c;
	size_t cnt;

	/* fetch SUM of 4 values (B's memory starts at zero) */
	CHECK_OK(fi_fetch_atomic(n->ep, v, 4, NULL, old, NULL, n->peer, AT_ADDR, KEY_RW, FI_UINT64,
				 FI_SUM, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK(!old[0] && !old[1] && !old[2] && !old[3]);
	CHECK_OK(fi_fetch_atomic(n->ep, v, 4, NULL, old, NULL, n->peer, AT_ADDR, KEY_RW, FI_UINT64,
				 FI_SUM, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK(old[0] == 1 && old[1] == 2 && old[2] == 3 && old[3] == 4); /* now 2, 4, 6, 8 */
	/* CSWAP: a hit, then a miss */
	cmp = 2;
	v[0] = 77;
	CHECK_OK(fi_compare_atomic(n->ep, v, 1, NULL, &cmp, NULL, old, NULL, n->peer, AT_ADDR,
				   KEY_RW, FI_UINT64, FI_CSWAP, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK_EQ(old[0], 2);
	v[0] = 88;
	CHECK_OK(fi_compare_atomic(n->ep, v, 1, NULL, &cmp, NULL, old, NULL, n->peer, AT_ADDR,
				   KEY_RW, FI_UINT64, FI_CSWAP, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK_EQ(old[0], 77); /* no swap: still 77 */
	/* MSWAP: the mask's bits from the operand */
	v[0] = 0xff00;
	cmp = 0x0ff0;
	CHECK_OK(fi_compare_atomic(n->ep, v, 1, NULL, &cmp, NULL, old, NULL, n->peer, AT_ADDR + 8,
				   KEY_RW, FI_UINT64, FI_MSWAP, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK_EQ(old[0], 4); /* 4 -> (0xff00 & 0x0ff0) | (4 & ~0x0ff0) = 0x0f04 */
	/* READ all four */
	CHECK_OK(fi_fetch_atomic(n->ep, NULL, 4, NULL, back, NULL, n->peer, AT_ADDR, KEY_RW,
				 FI_UINT64, FI_ATOMIC_READ, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK(back[0] == 77 && back[1] == 0x0f04 && back[2] == 6 && back[3] == 8);
	/* MIN on an int32 at an unaligned address, BXOR on a byte */
	i32 = -5;
	CHECK_OK(fi_fetch_atomic(n->ep, &i32, 1, NULL, &o32, NULL, n->peer, AT_ADDR + 33, KEY_RW,
				 FI_INT32, FI_MIN, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK_EQ(o32, 0);
	CHECK_OK(fi_fetch_atomic(n->ep, NULL, 1, NULL, &o32, NULL, n->peer, AT_ADDR + 33, KEY_RW,
				 FI_INT32, FI_ATOMIC_READ, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK_EQ(o32, -5);
	u8 = 0x5a;
	CHECK_OK(
	    fi_atomic(n->ep, &u8, 1, NULL, n->peer, AT_ADDR + 40, KEY_RW, FI_UINT8, FI_BXOR, &c));
	atomic_wait(n, &c);
	g_writes++;
	CHECK_OK(fi_fetch_atomic(n->ep, &u8, 1, NULL, &o8, NULL, n->peer, AT_ADDR + 40, KEY_RW,
				 FI_UINT8, FI_BXOR, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK_EQ(o8, 0x5a); /* and back to 0 */
	/* WRITE of a double, then SUM onto it */
	CHECK_OK(fi_atomic(n->ep, &d, 1, NULL, n->peer, AT_ADDR + 48, KEY_RW, FI_DOUBLE,
			   FI_ATOMIC_WRITE, &c));
	atomic_wait(n, &c);
	g_writes++;
	CHECK_OK(fi_fetch_atomic(n->ep, &d, 1, NULL, &od, NULL, n->peer, AT_ADDR + 48, KEY_RW,
				 FI_DOUBLE, FI_SUM, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK(od == 2.5);
	CHECK_OK(fi_fetch_atomic(n->ep, NULL, 1, NULL, &od, NULL, n->peer, AT_ADDR + 48, KEY_RW,
				 FI_DOUBLE, FI_ATOMIC_READ, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK(od == 5.0);
	/* what the provider says it does */
	CHECK_OK(fi_atomicvalid(n->ep, FI_UINT64, FI_SUM, &cnt));
	CHECK_EQ(cnt, KR_OFI_RMA_PIECE / 8);
	CHECK_OK(fi_compare_atomicvalid(n->ep, FI_UINT32, FI_CSWAP, &cnt));
	CHECK_EQ(cnt, KR_OFI_RMA_PIECE / 4 / 2);
	CHECK_EQ(fi_atomicvalid(n->ep, FI_DOUBLE, FI_BOR, &cnt), -FI_EOPNOTSUPP);
	CHECK_EQ(fi_fetch_atomicvalid(n->ep, FI_LONG_DOUBLE, FI_SUM, &cnt), -FI_EOPNOTSUPP);
	CHECK_EQ(fi_atomicvalid(n->ep, FI_UINT64, FI_CSWAP, &cnt), -FI_EOPNOTSUPP);
	{
		struct fi_atomic_attr aa;

		CHECK_OK(fi_query_atomic(n->dom, FI_INT16, FI_MAX, &aa, FI_FETCH_ATOMIC));
		CHECK(aa.size == 2 && aa.count == KR_OFI_RMA_PIECE / 2);
		CHECK_EQ(fi_query_atomic(n->dom, FI_FLOAT, FI_MSWAP, &aa, FI_COMPARE_ATOMIC),
			 -FI_EOPNOTSUPP);
	}
}

/* 500 fetch-adds in flight at once on one word: each old value once, the sum 500. */
static void test_atomic_storm(struct ofi_node *n)
{
	enum { N = 500 };
	static uint64_t old[N];
	static struct fi_context2 ctx[N];
	static bool seen[N];
	uint64_t one = 1, sum;
	struct fi_context2 c;

	for (int i = 0; i < N; i++) {
		int rc;

		while ((rc = fi_fetch_atomic(n->ep, &one, 1, NULL, &old[i], NULL, n->peer,
					     AT_ADDR + 64, KEY_RW, FI_UINT64, FI_SUM, &ctx[i])) ==
		       -FI_EAGAIN)
			fi_cq_read(n->cq, NULL, 0);
		CHECK_OK(rc);
	}
	for (int i = 0; i < N; i++) {
		struct fi_cq_data_entry e;

		CHECK_OK(wait_one(n, &e, NULL));
		g_reads++;
	}
	for (int i = 0; i < N; i++) {
		CHECK(old[i] < N && !seen[old[i]]);
		seen[old[i]] = true;
	}
	CHECK_OK(fi_fetch_atomic(n->ep, NULL, 1, NULL, &sum, NULL, n->peer, AT_ADDR + 64, KEY_RW,
				 FI_UINT64, FI_ATOMIC_READ, &c));
	atomic_wait(n, &c);
	g_reads++;
	CHECK_EQ(sum, N);
}

static uint64_t g_errs; /* A's operations that failed */

/* op, which must complete FI_EACCES */
static void refused(struct ofi_node *n, int rc)
{
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry x;

	CHECK_OK(rc);
	CHECK_EQ(wait_one(n, &e, &x), -FI_EACCES);
	g_errs++;
}

static void test_bad_input(struct ofi_node *n, int to, int from, uint8_t *buf)
{
	struct fi_context2 c;
	struct fid_mr *mr, *mr2;
	uint64_t v = 1, o;
	size_t cnt;

	fill(buf, 64, 40);
	refused(n, fi_write(n->ep, buf, 64, NULL, n->peer, RW_BASE + 700000, 9, &c)); /* no key 9 */
	refused(n, fi_write(n->ep, buf, 64, NULL, n->peer, 0, KEY_RO, &c)); /* read only */
	refused(n, fi_write(n->ep, buf, 64, NULL, n->peer, RW_BASE + RW_LEN - 10, KEY_RW, &c));
	refused(n, fi_write(n->ep, buf, 64, NULL, n->peer, RW_BASE - 1, KEY_RW, &c));
	refused(n, fi_read(n->ep, buf, 64, NULL, n->peer, RO_LEN, KEY_RO, &c)); /* past the end */
	refused(n,
		fi_read(n->ep, buf, 64, NULL, n->peer, 0, (uint32_t)KEY_RO, &c)); /* its low half */
	refused(n, fi_atomic(n->ep, &v, 1, NULL, n->peer, 0, KEY_RO, FI_UINT64, FI_SUM, &c));
	refused(n, fi_fetch_atomic(n->ep, &v, 1, NULL, &o, NULL, n->peer, ~0ull - 3, KEY_RW,
				   FI_UINT64, FI_SUM, &c));
	/* a refused inject reports nothing (its counter counts it): the read after it is next */
	CHECK_OK(fi_inject_write(n->ep, buf, 8, n->peer, RW_BASE, 9));
	g_errs++;
	read_wait(n, buf + 64, 8, RW_BASE, KEY_RW);
	g_reads++;
	/* a refused write wrote nothing: the bytes before RW's end untouched */
	CHECK(b_has(n, to, from, RW_LEN - 10, 10, 0));
	CHECK_EQ(fi_write(n->ep, buf, 8, NULL, n->peer + 100, RW_BASE, KEY_RW, &c), -FI_EINVAL);
	CHECK_EQ(fi_write(n->ep, buf, KR_OFI_MSG_MAX + 1, NULL, n->peer, RW_BASE, KEY_RW, &c),
		 -FI_EMSGSIZE);
	CHECK_EQ(fi_atomic(n->ep, &v, 1, NULL, n->peer, RW_BASE, KEY_RW, FI_DOUBLE, FI_BOR, &c),
		 -FI_EOPNOTSUPP);
	CHECK_OK(fi_atomicvalid(n->ep, FI_UINT64, FI_SUM, &cnt));
	CHECK_EQ(
	    fi_atomic(n->ep, buf, cnt + 1, NULL, n->peer, RW_BASE, KEY_RW, FI_UINT64, FI_SUM, &c),
	    -FI_EMSGSIZE);
	CHECK_EQ(fi_compare_atomic(n->ep, &v, 1, NULL, NULL, NULL, &o, NULL, n->peer, RW_BASE,
				   KEY_RW, FI_UINT64, FI_CSWAP, &c),
		 -FI_EINVAL); /* no compare value */
	{
		struct iovec iov = {.iov_base = buf, .iov_len = 8};
		struct fi_rma_iov riov = {.addr = RW_BASE, .len = 8, .key = KEY_RW};
		struct fi_msg_rma m = {.msg_iov = &iov,
				       .iov_count = 1,
				       .addr = n->peer,
				       .rma_iov = &riov,
				       .rma_iov_count = 1,
				       .context = &c};

		CHECK_EQ(fi_readmsg(n->ep, &m, FI_REMOTE_CQ_DATA), -FI_EBADFLAGS);
		CHECK_EQ(fi_writemsg(n->ep, &m, FI_FENCE), -FI_EBADFLAGS);
		riov.len = 9; /* the two sides must agree */
		CHECK_EQ(fi_writemsg(n->ep, &m, 0), -FI_EINVAL);
	}
	/* registrations: keys of 32 bits, each once per domain */
	CHECK_OK(fi_mr_reg(n->dom, buf, 64, FI_REMOTE_READ, 0, 5, 0, &mr, NULL));
	CHECK_EQ(fi_mr_reg(n->dom, buf + 64, 64, FI_REMOTE_READ, 0, 5, 0, &mr2, NULL), -FI_ENOKEY);
	CHECK_EQ(fi_mr_reg(n->dom, buf, 64, FI_REMOTE_READ, 0, 6, FI_RMA_EVENT, &mr2, NULL),
		 -FI_EBADFLAGS);
	CHECK_EQ(fi_close(&n->dom->fid), -FI_EBUSY); /* objects open, an MR among them */
	CHECK_OK(fi_close(&mr->fid));
	CHECK_OK(fi_mr_reg(n->dom, buf, 64, FI_REMOTE_READ, 0, 5, 0, &mr, NULL)); /* free again */
	CHECK_OK(fi_close(&mr->fid));
}

static void test_counters(struct ofi_node *n, int to, int from)
{
	uint64_t r[3];

	CHECK_EQ(fi_cntr_read(n->cntr), g_reads + g_writes);
	CHECK_EQ(fi_cntr_readerr(n->cntr), g_errs);
	/* B counted what A did to it: remote reads and writes, and the refused ones apart */
	ask(n, to, from, (struct order){.cmd = C_COUNT}, r);
	CHECK_EQ(r[0], g_reads + g_writes);
	CHECK_EQ(r[1], g_errs);
	CHECK_OK(fi_cntr_set(n->cntr, 5));
	CHECK_OK(fi_cntr_add(n->cntr, 2));
	CHECK_EQ(fi_cntr_read(n->cntr), 7);
	CHECK_OK(fi_cntr_seterr(n->cntr, 0));
	CHECK_EQ(fi_cntr_wait(n->cntr, 8, 10), -FI_ETIMEDOUT); /* nothing more comes */
	CHECK_EQ(fi_close(&n->cntr->fid), -FI_EBUSY);	       /* bound to the endpoint */
}

static void test_peer_killed(struct ofi_node *n, pid_t b, uint8_t *back)
{
	struct fi_cq_data_entry e;
	struct fi_context2 c;
	double t0;
	int rc;

	CHECK_OK(fi_read(n->ep, back, RO_LEN, NULL, n->peer, 0, KEY_RO, &c));
	t0 = now_s();
	while (now_s() - t0 < 0.05)
		CHECK_EQ(fi_cq_read(n->cq, &e, 1), -FI_EAGAIN);
	kill(b, SIGKILL);
	CHECK_EQ(waitpid(b, NULL, 0), b);
	rc = wait_one(n, &e, NULL);
	CHECK(rc < 0);
}

int main(int argc, char **argv)
{
	uint8_t *buf, *back;
	struct ofi_node n = {0};
	int to, from;
	pid_t b;

	if (argc != 3) {
		fprintf(stderr, "usage: test_ofi_rma NODE1_SOCKET NODE2_SOCKET\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	buf = malloc(RO_LEN);
	back = malloc(RO_LEN + 1);
	CHECK(buf && back);
	b = ofi_spawn(peer_main, argv[2], &to, &from);
	node_open(&n, argv[1], FI_READ | FI_WRITE);
	n.peer = ofi_meet(n.ep, n.av, to, from);
	g_step = "write/read";
	test_write_read(&n, to, from, buf, back);
	g_step = "writedata";
	test_writedata(&n, to, from, buf);
	g_step = "atomics";
	test_atomics(&n);
	g_step = "atomic storm";
	test_atomic_storm(&n);
	g_step = "bad input";
	test_bad_input(&n, to, from, buf);
	g_step = "counters";
	test_counters(&n, to, from);
	g_step = "peer killed";
	test_peer_killed(&n, b, back);
	ofi_node_close(&n);
	free(buf);
	free(back);
	KR_PASS("ofi_rma");
}
