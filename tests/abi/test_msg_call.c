/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit: kr_msg_call() takes the reply to its own request. A reply already
 * queued when the request has gone (a keeper that ran on the caller's core
 * and answered at once) is taken and the request went out; a queued reply
 * with another seq is -EPROTO; a peer that answers only later (past the
 * call's spin, while it sleeps on the socket) is waited for.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "abi/abi.h"
#include "kr_test.h"

#define LATE_US 20000 /* longer than the call's spin before it sleeps (abi_msg.c) */

static void reply_make(struct kr_msg_reply *rep, uint32_t seq, int status)
{
	memset(rep, 0, sizeof(*rep));
	kr_msg_init(&rep->hdr, KR_MSG_REPLY | KR_MSG_STATUS, sizeof(*rep), seq);
	rep->status = status;
}

/* The peer: read the request, let the caller wait, answer. */
static void *late_peer(void *arg)
{
	int fd = *(int *)arg;
	struct kr_msg_hdr req;
	struct kr_msg_reply rep;

	if (read(fd, &req, sizeof(req)) != (ssize_t)sizeof(req))
		return NULL;
	usleep(LATE_US);
	reply_make(&rep, req.seq, -EAGAIN);
	if (write(fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		return NULL;
	return NULL;
}

static void call(int sock, uint32_t seq, int want_rc, int want_status)
{
	struct kr_msg_hdr req;
	struct kr_msg_reply rep;

	kr_msg_init(&req, KR_MSG_STATUS, sizeof(req), seq);
	memset(&rep, 0, sizeof(rep));
	CHECK_EQ(kr_msg_call(sock, &req, sizeof(req), &rep, sizeof(rep), NULL, 0, NULL), want_rc);
	if (!want_rc)
		CHECK_EQ(rep.status, want_status);
}

int main(void)
{
	struct kr_msg_reply rep;
	struct kr_msg_hdr req;
	pthread_t th;
	int sv[2];

	CHECK_OK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv));

	/* answered at once: the reply is queued before the call looks */
	reply_make(&rep, 7, -ENOSPC);
	CHECK_EQ(write(sv[1], &rep, sizeof(rep)), (ssize_t)sizeof(rep));
	call(sv[0], 7, 0, -ENOSPC);
	CHECK_EQ(read(sv[1], &req, sizeof(req)), (ssize_t)sizeof(req)); /* the request went */
	CHECK_EQ(req.seq, 7u);

	/* a queued reply to another request is no answer: -EPROTO */
	reply_make(&rep, 99, 0);
	CHECK_EQ(write(sv[1], &rep, sizeof(rep)), (ssize_t)sizeof(rep));
	call(sv[0], 8, -EPROTO, 0);
	CHECK_EQ(read(sv[1], &req, sizeof(req)), (ssize_t)sizeof(req));

	/* a late answer: the call waits for it */
	CHECK_OK(pthread_create(&th, NULL, late_peer, &sv[1]));
	call(sv[0], 9, 0, -EAGAIN);
	CHECK_OK(pthread_join(th, NULL));

	close(sv[0]);
	close(sv[1]);
	KR_PASS("msg_call");
}
