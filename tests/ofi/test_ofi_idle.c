/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A receiver whose buffers are all promised to senders gone quiet still
 * hears from a new one (test_ofi_two_nodes.sh starts the keepers). R, this
 * process on node 1, has only itself in its AV, so its endpoint posts one
 * batch of receive buffers (KR_OFI_RX_BUFS), each sender may hold up to
 * KR_OFI_WINDOW of them, and KR_OFI_RX_BUFS / KR_OFI_WINDOW senders that
 * each sent one message hold them all. They then go quiet (still reading
 * their CQs, as a rank busy elsewhere does). A further sender's message
 * must arrive anyway: a sender lets go of its slot after a keepalive look
 * (KR_OFI_LOOK_NS, ofi_peer.c) with nothing posted, and the port grants
 * what it held.
 */
#include <poll.h>
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

#define HOLDERS ((int)(KR_OFI_RX_BUFS / KR_OFI_WINDOW)) /* senders that take every buffer */
#define TMO_S	20

static const struct ofi_how g_how = {.caps = FI_TAGGED, .cq = FI_CQ_FORMAT_TAGGED, .av = FI_AV_MAP};
static void wait_one(struct ofi_node *n, struct fi_cq_tagged_entry *e, const char *what)
{
	CHECK_OK(cq_wait(n->cq, e, NULL, NULL, TMO_S, what));
}

/* Sender i: R's address from in, one message tagged i, then quiet until in closes. */
static void sender_main(const char *sock, int i, int in, int out)
{
	struct pollfd pf = {.fd = in, .events = POLLIN};
	struct kr_ofi_addr r;
	struct fi_cq_tagged_entry e;
	struct fi_context2 ctx;
	struct ofi_node n = {0};
	fi_addr_t to;
	uint64_t msg = 1000 + (uint64_t)i;
	char c = 0;

	ofi_node_open(&n, sock, &g_how);
	CHECK(read(in, &r, sizeof(r)) == sizeof(r));
	CHECK_EQ(fi_av_insert(n.av, &r, 1, &to, 0, NULL), 1);
	CHECK_OK(fi_tsend(n.ep, &msg, sizeof(msg), NULL, to, (uint64_t)i, &ctx));
	wait_one(&n, &e, "a sender's send");
	CHECK(write(out, &c, 1) == 1);
	while (poll(&pf, 1, 0) == 0)
		fi_cq_read(n.cq, NULL, 0); /* quiet towards R, but progressing */
	CHECK_OK(fi_close(&n.ep->fid));
	_exit(0);
}

int main(int argc, char **argv)
{
	int to[HOLDERS + 1], from[HOLDERS + 1];
	pid_t pid[HOLDERS + 1];
	struct fi_cq_tagged_entry e;
	struct fi_context2 ctx;
	struct kr_ofi_addr me;
	size_t len = sizeof(me);
	struct ofi_node n = {0};
	fi_addr_t self;
	uint64_t msg;
	double t0;
	char c;

	if (argc != 3) {
		fprintf(stderr, "usage: test_ofi_idle NODE1_SOCKET NODE2_SOCKET\n");
		return 2;
	}
	for (int i = 0; i <= HOLDERS; i++) { /* before R attaches: nothing inherited */
		int ab[2], ba[2];

		CHECK_OK(pipe(ab));
		CHECK_OK(pipe(ba));
		pid[i] = fork();
		CHECK(pid[i] >= 0);
		if (!pid[i]) {
			for (int j = 0; j < i; j++) { /* the others' ends: their EOF is theirs */
				close(to[j]);
				close(from[j]);
			}
			close(ab[1]);
			close(ba[0]);
			sender_main(argv[2], i, ab[0], ba[1]);
		}
		close(ab[0]);
		close(ba[1]);
		to[i] = ab[1];
		from[i] = ba[0];
	}
	ofi_node_open(&n, argv[1], &g_how);
	CHECK_OK(fi_getname(&n.ep->fid, &me, &len));
	CHECK_EQ(fi_av_insert(n.av, &me, 1, &self, 0, NULL), 1); /* only itself */
	/* the holders, one after another: each takes a window of R's buffers */
	for (int i = 0; i < HOLDERS; i++) {
		CHECK_OK(
		    fi_trecv(n.ep, &msg, sizeof(msg), NULL, FI_ADDR_UNSPEC, (uint64_t)i, 0, &ctx));
		CHECK(write(to[i], &me, sizeof(me)) == sizeof(me));
		wait_one(&n, &e, "a holder's message");
		CHECK_EQ(msg, 1000 + (uint64_t)i);
		CHECK(read(from[i], &c, 1) == 1);
	}
	/* every buffer is promised to a quiet holder: the last sender must get through anyway */
	CHECK_OK(fi_trecv(n.ep, &msg, sizeof(msg), NULL, FI_ADDR_UNSPEC, HOLDERS, 0, &ctx));
	t0 = now_s();
	CHECK(write(to[HOLDERS], &me, sizeof(me)) == sizeof(me));
	wait_one(&n, &e, "the last sender's message");
	CHECK_EQ(msg, 1000 + (uint64_t)HOLDERS);
	printf("the last sender's message came after %.0f ms\n", (now_s() - t0) * 1e3);
	for (int i = 0; i <= HOLDERS; i++) {
		close(to[i]);
		CHECK_EQ(waitpid(pid[i], NULL, 0), pid[i]);
	}
	ofi_node_close(&n);
	KR_PASS("ofi_idle");
}
