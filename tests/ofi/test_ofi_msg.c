/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The provider's messages between two jobs on two sim nodes, through the
 * libfabric API (test_ofi_two_nodes.sh starts the keepers): A, this process, on
 * node 1; B, a child, on node 2; one launch. B sends what each step asks
 * (commands over a pipe), A checks what arrives:
 *   unexpected   three tagged messages before any receive: a receive for
 *                the third takes it, a wildcard (ignore all) the first
 *   directed     a receive naming A itself as source leaves B's message to
 *                one naming B (FI_DIRECTED_RECV)
 *   data/inject  fi_tsenddata's 4 bytes (FI_REMOTE_CQ_DATA), fi_tinject
 *   truncation   1000 bytes into 100 and 300,000 into 1000: FI_ETRUNC,
 *                olen the rest, the part that fits in place
 *   cancel       a posted receive cancelled completes FI_ECANCELED;
 *                an unknown context is -FI_ENOENT
 *   probes       FI_PEEK of nothing (FI_ENOMSG), of an eager and a large
 *                message (length, tag, data), FI_PEEK|FI_CLAIM then the
 *                FI_CLAIM receive, FI_PEEK|FI_DISCARD (then gone)
 *   bad input    an fi_addr not in the AV, an inject above inject_size, a
 *                message above max_msg_size, FI_CLAIM of nothing, FI_DISCARD
 *                alone, unknown flags
 *   peer died    B takes a 100 KB message's RTS and chunk and dies idle, and
 *                another's from a registered sealed memfd (read in place):
 *                A's sends fail (the keepalive NOP to a silent awaited
 *                peer), and the region, busy while its send was under way,
 *                closes after
 *   peer killed  a new B starts a 64 MiB send (A peeks until its RTS is in,
 *                then receives) and is SIGKILLed 50 ms into it: A's
 *                receive completes with an error, not a hang (its next READ
 *                or ACK fails, or the keepalive NOP of a silent peer), and
 *                a send to B fails too
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "kr_test.h"
#include "ofi_test.h"
#include "ofi/ofi.h"

#define BIG   300000u
#define HUGE  KR_OFI_MSG_MAX /* long enough on the sim's wire to be cut */
#define TMO_S 30

static const struct ofi_how g_how = {.caps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV,
				     .mode = FI_CONTEXT | FI_CONTEXT2,
				     .cq = FI_CQ_FORMAT_TAGGED,
				     .av = FI_AV_TABLE};
static const char *g_step = "setup"; /* named when a completion never comes */

enum cmd { C_UNEXP = 1, C_DIRECTED, C_DATA, C_TRUNC, C_PROBE, C_HUGE, C_QUIT };

/* Swap addresses with the other job; insert its (and, once, our own). */
static void node_meet(struct ofi_node *n, int out, int in)
{
	struct kr_ofi_addr me;
	size_t len = sizeof(me);

	n->peer = ofi_meet(n->ep, n->av, out, in);
	CHECK_OK(fi_getname(&n->ep->fid, &me, &len));
	if (!n->self)
		CHECK_EQ(fi_av_insert(n->av, &me, 1, &n->self, 0, NULL), 1);
}

/* One completion (or error: returns -err, the entry in *err_out) within TMO_S. */
static int wait_one(struct ofi_node *n, struct fi_cq_tagged_entry *e, fi_addr_t *src,
		    struct fi_cq_err_entry *err_out)
{
	return cq_wait(n->cq, e, src, err_out, TMO_S, g_step);
}

/* Send and wait for the send's completion (B's side). */
static void send_wait(struct ofi_node *n, const void *buf, size_t len, uint64_t tag)
{
	struct fi_cq_tagged_entry e;
	struct fi_context2 ctx;

	while (fi_tsend(n->ep, buf, len, NULL, n->peer, tag, &ctx) == -FI_EAGAIN)
		fi_cq_read(n->cq, &e, 0);
	CHECK_OK(wait_one(n, &e, NULL, NULL));
	CHECK(e.op_context == &ctx);
	CHECK_EQ(e.flags, FI_SEND | FI_TAGGED);
}

/* B: do what A asks, then report. */
static void peer_main(const char *sock, int out, int in)
{
	uint8_t *buf = malloc(HUGE);
	struct ofi_node n = {0};
	struct fi_context2 ctx;
	int c = 0;

	ofi_node_open(&n, sock, &g_how);
	node_meet(&n, out, in);
	while (read(in, &c, sizeof(c)) == sizeof(c) && c != C_QUIT) {
		switch (c) {
		case C_UNEXP:
			for (uint32_t t = 1; t <= 3; t++) {
				fill(buf, 100 * t, t);
				send_wait(&n, buf, 100 * t, t);
			}
			break;
		case C_DIRECTED:
			fill(buf, 64, 40);
			send_wait(&n, buf, 64, 40);
			break;
		case C_DATA:
			fill(buf, 32, 50);
			CHECK_OK(fi_tsenddata(n.ep, buf, 32, NULL, 0xabc, n.peer, 50, &ctx));
			CHECK_OK(wait_one(&n, &(struct fi_cq_tagged_entry){0}, NULL, NULL));
			fill(buf, 100, 51);
			CHECK_OK(fi_tinject(n.ep, buf, 100, n.peer, 51));
			memset(buf, 0, 100); /* the inject copied: this must not show */
			break;
		case C_TRUNC:
			fill(buf, 1000, 60);
			send_wait(&n, buf, 1000, 60);
			fill(buf, BIG, 61);
			send_wait(&n, buf, BIG, 61);
			break;
		case C_PROBE:
			fill(buf, 700, 7);
			CHECK_OK(fi_tsenddata(n.ep, buf, 700, NULL, 7, n.peer, 7, &ctx));
			CHECK_OK(wait_one(&n, &(struct fi_cq_tagged_entry){0}, NULL, NULL));
			fill(buf, BIG, 8);
			send_wait(&n, buf, BIG, 8); /* completes once A claimed and received it */
			fill(buf, BIG, 9);
			send_wait(&n, buf, BIG, 9); /* A discards it: still completes */
			break;
		case C_HUGE:
			fill(buf, HUGE, 70);
			CHECK(write(out, &c, sizeof(c)) == sizeof(c)); /* sending now */
			send_wait(&n, buf, HUGE, 70);		       /* killed before it ends */
			break;
		}
		CHECK(write(out, &c, sizeof(c)) == sizeof(c));
	}
	ofi_node_close(&n);
	free(buf);
	_exit(0);
}

static void ask(int fd, int c)
{
	CHECK(write(fd, &c, sizeof(c)) == sizeof(c));
}

/* B's report of step want; A keeps its endpoint going meanwhile (credits, ACKs). */
static void done(struct ofi_node *n, int fd, int want)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	int c = 0;

	while (poll(&pf, 1, 0) == 0)
		fi_cq_read(n->cq, NULL, 0); /* progress only: takes no completion */
	CHECK(read(fd, &c, sizeof(c)) == sizeof(c));
	CHECK_EQ(c, want);
}

/* A receive of len at buf for tag (ignore), from src; its completion checked by the caller. */
static void trecv(struct ofi_node *n, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		  uint64_t ignore, void *ctx)
{
	CHECK_OK(fi_trecv(n->ep, buf, len, NULL, src, tag, ignore, ctx));
}

static void test_unexpected(struct ofi_node *n, int to, int from, uint8_t *buf)
{
	struct fi_cq_tagged_entry e;
	struct fi_context2 c1, c2, c3;
	fi_addr_t src;

	ask(to, C_UNEXP);
	done(n, from, C_UNEXP); /* all three sent (and delivered) before any receive */
	trecv(n, buf, 1000, FI_ADDR_UNSPEC, 3, 0, &c3);
	CHECK_OK(wait_one(n, &e, &src, NULL));
	CHECK(e.op_context == &c3 && e.tag == 3 && e.len == 300 && src == n->peer);
	CHECK_EQ(e.flags, FI_RECV | FI_TAGGED);
	CHECK(same(buf, 300, 3));
	trecv(n, buf, 1000, FI_ADDR_UNSPEC, 0, ~0ull, &c1); /* any tag: the oldest */
	CHECK_OK(wait_one(n, &e, NULL, NULL));
	CHECK(e.op_context == &c1 && e.tag == 1 && e.len == 100 && same(buf, 100, 1));
	trecv(n, buf, 1000, n->peer, 2, 0, &c2);
	CHECK_OK(wait_one(n, &e, NULL, NULL));
	CHECK(e.op_context == &c2 && e.tag == 2 && e.len == 200 && same(buf, 200, 2));
}

static void test_directed(struct ofi_node *n, int to, int from, uint8_t *buf)
{
	struct fi_cq_tagged_entry e;
	struct fi_context2 mine, bs;

	trecv(n, buf + 4096, 64, n->self, 40, 0, &mine); /* from A itself: never matches B */
	trecv(n, buf, 64, n->peer, 40, 0, &bs);
	ask(to, C_DIRECTED);
	done(n, from, C_DIRECTED);
	CHECK_OK(wait_one(n, &e, NULL, NULL));
	CHECK(e.op_context == &bs && same(buf, 64, 40));
	CHECK_OK(fi_cancel(&n->ep->fid, &mine));
	CHECK_EQ(wait_one(n, &e, NULL, NULL), -FI_ECANCELED);
	CHECK_EQ(fi_cancel(&n->ep->fid, &mine), -FI_ENOENT); /* gone already */
}

static void test_data_inject(struct ofi_node *n, int to, int from, uint8_t *buf)
{
	struct fi_cq_tagged_entry e;
	struct fi_context2 c1, c2;

	trecv(n, buf, 64, FI_ADDR_UNSPEC, 50, 0, &c1);
	trecv(n, buf + 4096, 200, FI_ADDR_UNSPEC, 51, 0, &c2);
	ask(to, C_DATA);
	done(n, from, C_DATA);
	CHECK_OK(wait_one(n, &e, NULL, NULL));
	CHECK(e.op_context == &c1 && e.len == 32 && same(buf, 32, 50));
	CHECK_EQ(e.flags, FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA);
	CHECK_EQ(e.data, 0xabc);
	CHECK_OK(wait_one(n, &e, NULL, NULL));
	CHECK(e.op_context == &c2 && e.len == 100 && same(buf + 4096, 100, 51));
	CHECK_EQ(e.flags, FI_RECV | FI_TAGGED);
}

static void test_truncation(struct ofi_node *n, int to, int from, uint8_t *buf)
{
	struct fi_cq_err_entry x;
	struct fi_context2 c1, c2;

	memset(buf, 0, 2000);
	trecv(n, buf, 100, FI_ADDR_UNSPEC, 60, 0, &c1);
	trecv(n, buf + 4096, 1000, FI_ADDR_UNSPEC, 61, 0, &c2);
	ask(to, C_TRUNC);
	CHECK_EQ(wait_one(n, &(struct fi_cq_tagged_entry){0}, NULL, &x), -FI_ETRUNC);
	CHECK(x.op_context == &c1 && x.olen == 900 && x.len == 100);
	CHECK(same(buf, 100, 60) && buf[100] == 0);
	CHECK_EQ(wait_one(n, &(struct fi_cq_tagged_entry){0}, NULL, &x), -FI_ETRUNC);
	CHECK(x.op_context == &c2 && x.olen == BIG - 1000 && x.len == 1000);
	CHECK(same(buf + 4096, 1000, 61));
	done(n, from, C_TRUNC); /* the large one's sender completed too */
}

static void test_probes(struct ofi_node *n, int to, int from, uint8_t *buf)
{
	struct fi_cq_tagged_entry e;
	struct fi_context2 p, claim, c;
	struct iovec iov = {.iov_base = buf, .iov_len = BIG};
	struct fi_msg_tagged m = {
	    .msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = &p};
	fi_addr_t src;

	m.tag = 77; /* nothing with that tag */
	CHECK_OK(fi_trecvmsg(n->ep, &m, FI_PEEK));
	CHECK_EQ(wait_one(n, &e, NULL, NULL), -FI_ENOMSG);
	ask(to, C_PROBE);
	/* the eager one: peek until it is there, then peek and discard */
	m.tag = 7;
	for (double t0 = now_s(); now_s() - t0 < TMO_S;) {
		CHECK_OK(fi_trecvmsg(n->ep, &m, FI_PEEK));
		if (!wait_one(n, &e, &src, NULL))
			break;
	}
	CHECK(e.op_context == &p && e.len == 700 && e.tag == 7 && e.data == 7 && src == n->peer);
	CHECK_EQ(e.flags, FI_RECV | FI_TAGGED | FI_REMOTE_CQ_DATA);
	CHECK_OK(fi_trecvmsg(n->ep, &m, FI_PEEK | FI_DISCARD));
	CHECK_OK(wait_one(n, &e, NULL, NULL));
	CHECK_OK(fi_trecvmsg(n->ep, &m, FI_PEEK));
	CHECK_EQ(wait_one(n, &e, NULL, NULL), -FI_ENOMSG); /* discarded: gone */
	/* the large one: claim it, then receive what was claimed */
	m.tag = 8;
	m.context = &claim;
	for (double t0 = now_s(); now_s() - t0 < TMO_S;) {
		CHECK_OK(fi_trecvmsg(n->ep, &m, FI_PEEK | FI_CLAIM));
		if (!wait_one(n, &e, NULL, NULL))
			break;
	}
	CHECK(e.op_context == &claim && e.len == BIG && e.tag == 8);
	CHECK_OK(fi_trecvmsg(n->ep, &m, FI_PEEK)); /* claimed: no longer there for others */
	CHECK_EQ(wait_one(n, &e, NULL, NULL), -FI_ENOMSG);
	memset(buf, 0, BIG);
	CHECK_OK(fi_trecvmsg(n->ep, &m, FI_CLAIM));
	CHECK_OK(wait_one(n, &e, NULL, NULL));
	CHECK(e.op_context == &claim && e.len == BIG && same(buf, BIG, 8));
	/* a large one discarded: its sender still completes */
	m.tag = 9;
	m.context = &c;
	for (double t0 = now_s(); now_s() - t0 < TMO_S;) {
		CHECK_OK(fi_trecvmsg(n->ep, &m, FI_PEEK | FI_DISCARD));
		if (!wait_one(n, &e, NULL, NULL))
			break;
	}
	CHECK(e.len == BIG && e.tag == 9);
	done(n, from, C_PROBE); /* its chunks acknowledged unread: B's send completed */
}

static void test_bad_input(struct ofi_node *n, uint8_t *buf)
{
	struct fi_context2 c;
	struct iovec iov = {.iov_base = buf, .iov_len = 10};
	struct fi_msg_tagged m = {.msg_iov = &iov, .iov_count = 1, .context = &c};

	CHECK_EQ(fi_tsend(n->ep, buf, 10, NULL, 12345, 1, &c), -FI_EINVAL); /* not in the AV */
	CHECK_EQ(fi_tinject(n->ep, buf, n->info->tx_attr->inject_size + 1, n->peer, 1),
		 -FI_EMSGSIZE);
	CHECK_EQ(fi_tsend(n->ep, buf, KR_OFI_MSG_MAX + 1, NULL, n->peer, 1, &c), -FI_EMSGSIZE);
	memset(&c, 0, sizeof(c));
	CHECK_EQ(fi_trecvmsg(n->ep, &m, FI_CLAIM), -FI_EINVAL); /* nothing claimed */
	CHECK_EQ(fi_trecvmsg(n->ep, &m, FI_DISCARD), -FI_EINVAL);
	CHECK_EQ(fi_trecvmsg(n->ep, &m, 1ull << 62), -FI_EBADFLAGS);
	CHECK_EQ(fi_tsendmsg(n->ep, &m, 1ull << 62), -FI_EBADFLAGS);
}

/*
 * B takes a 100 KB message's RTS and its one chunk into its port (the NIC
 * completes both SENDs) and never receives it; B dies idle. A has nothing
 * queued or in flight to B, only a send waiting for an ACK: the keepalive
 * NOP to the silent peer fails and the send with it.
 */
static void test_peer_died_idle(struct ofi_node *n, pid_t b, uint8_t *buf)
{
	struct fi_cq_tagged_entry e;
	struct fi_context2 s, sp;
	struct fid_mr *mr;
	int fd;
	uint8_t *place = ofi_memfd_map(100000, false, true, &fd);
	double t0 = now_s();

	fill(buf, 100000, 80);
	fill(place, 100000, 81);
	CHECK_OK(fi_mr_reg(n->dom, place, 100000, FI_SEND, 0, 81, 0, &mr, NULL));
	CHECK_OK(fi_tsend(n->ep, buf, 100000, NULL, n->peer, 80, &s));
	CHECK_OK(fi_tsend(n->ep, place, 100000, NULL, n->peer, 81, &sp));
	while (now_s() - t0 < 0.2) /* the SENDs out, nothing else to do */
		CHECK_EQ(fi_cq_read(n->cq, &e, 1), -FI_EAGAIN);
	CHECK_EQ(fi_close(&mr->fid), -FI_EBUSY); /* B may still READ it */
	kill(b, SIGKILL);
	CHECK_EQ(waitpid(b, NULL, 0), b);
	CHECK(wait_one(n, &e, NULL, NULL) < 0);
	CHECK(wait_one(n, &e, NULL, NULL) < 0);
	CHECK_OK(fi_close(&mr->fid)); /* its send ended: no peer reads it now */
	munmap(place, 100000);
	close(fd);
}

static void test_peer_killed(struct ofi_node *n, int to, int from, pid_t b, uint8_t *buf)
{
	struct fi_cq_tagged_entry e;
	struct fi_context2 c, s;
	double t0;
	int rc;

	struct iovec iov = {.iov_base = buf, .iov_len = HUGE};
	struct fi_msg_tagged m = {
	    .msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .tag = 70, .context = &c};

	ask(to, C_HUGE);
	done(n, from, C_HUGE); /* B starts sending */
	/* its RTS is here (however slow B is, under valgrind say): then the receive */
	for (t0 = now_s(); now_s() - t0 < TMO_S;) {
		CHECK_OK(fi_trecvmsg(n->ep, &m, FI_PEEK));
		if (!wait_one(n, &e, NULL, NULL))
			break;
	}
	CHECK(e.op_context == &c && e.len == HUGE && e.tag == 70);
	trecv(n, buf, HUGE, FI_ADDR_UNSPEC, 70, 0, &c);
	/* let some of it arrive, then B dies mid-stream */
	t0 = now_s();
	while (now_s() - t0 < 0.05)
		CHECK_EQ(fi_cq_read(n->cq, &e, 1), -FI_EAGAIN);
	kill(b, SIGKILL);
	CHECK_EQ(waitpid(b, NULL, 0), b);
	rc = wait_one(n, &e, NULL, NULL);
	CHECK_EQ(rc, -FI_EIO);
	/* a send to the dead peer fails too, and does not hang */
	rc = fi_tsend(n->ep, buf, 100, NULL, n->peer, 71, &s);
	if (!rc)
		rc = wait_one(n, &e, NULL, NULL);
	CHECK(rc < 0);
}

int main(int argc, char **argv)
{
	int to, from, to2, from2;
	uint8_t *buf;
	struct ofi_node n = {0};
	pid_t b, b2;

	if (argc != 3) {
		fprintf(stderr, "usage: test_ofi_msg NODE1_SOCKET NODE2_SOCKET\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	buf = malloc(HUGE);
	CHECK(buf != NULL);
	/* both Bs before A attaches: a child must not inherit an attachment */
	b = ofi_spawn(peer_main, argv[2], &to, &from);
	b2 = ofi_spawn(peer_main, argv[2], &to2, &from2);
	ofi_node_open(&n, argv[1], &g_how);
	node_meet(&n, to, from);
	g_step = "unexpected";
	test_unexpected(&n, to, from, buf);
	g_step = "directed";
	test_directed(&n, to, from, buf);
	g_step = "data inject";
	test_data_inject(&n, to, from, buf);
	g_step = "truncation";
	test_truncation(&n, to, from, buf);
	g_step = "probes";
	test_probes(&n, to, from, buf);
	g_step = "bad input";
	test_bad_input(&n, buf);
	g_step = "peer died idle";
	test_peer_died_idle(&n, b, buf);
	close(to);
	close(from);
	node_meet(&n, to2, from2); /* the second B: a new endpoint, a new address */
	g_step = "peer killed";
	test_peer_killed(&n, to2, from2, b2, buf);
	ofi_node_close(&n);
	free(buf);
	KR_PASS("ofi_msg");
}
