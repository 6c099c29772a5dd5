/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit: kr_msg_call_then() runs meanwhile() only while there is a wait to
 * fill. A reply already queued when the request has gone (a keeper that ran
 * on the caller's core and answered at once): meanwhile() does not run, the
 * reply is taken. No reply yet: meanwhile() runs, and the peer answers only
 * after it ran (so the call could not have skipped it). Either way the reply
 * is checked as every call's is: a wrong seq is -EPROTO.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "abi/abi.h"
#include "kr_test.h"

static atomic_int ran;

static void meanwhile(void)
{
	atomic_fetch_add(&ran, 1);
}

static void reply_make(struct kr_msg_reply *rep, uint32_t seq, int status)
{
	memset(rep, 0, sizeof(*rep));
	kr_msg_init(&rep->hdr, KR_MSG_REPLY | KR_MSG_STATUS, sizeof(*rep), seq);
	rep->status = status;
}

/* The peer: read the request, wait until meanwhile() ran, answer. */
static void *late_peer(void *arg)
{
	int fd = *(int *)arg;
	struct kr_msg_hdr req;
	struct kr_msg_reply rep;

	if (read(fd, &req, sizeof(req)) != (ssize_t)sizeof(req))
		return NULL;
	while (!atomic_load(&ran))
		usleep(100);
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
	CHECK_EQ(kr_msg_call_then(sock, &req, sizeof(req), &rep, sizeof(rep), NULL, 0, NULL,
				  meanwhile),
		 want_rc);
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
	CHECK_EQ(atomic_load(&ran), 0);
	CHECK_EQ(read(sv[1], &req, sizeof(req)), (ssize_t)sizeof(req)); /* the request went */
	CHECK_EQ(req.seq, 7u);

	/* a queued reply to another request is no answer: -EPROTO, still no meanwhile */
	reply_make(&rep, 99, 0);
	CHECK_EQ(write(sv[1], &rep, sizeof(rep)), (ssize_t)sizeof(rep));
	call(sv[0], 8, -EPROTO, 0);
	CHECK_EQ(atomic_load(&ran), 0);
	CHECK_EQ(read(sv[1], &req, sizeof(req)), (ssize_t)sizeof(req));

	/* a wait: meanwhile runs, once, and the peer answers after it */
	CHECK_OK(pthread_create(&th, NULL, late_peer, &sv[1]));
	call(sv[0], 9, 0, -EAGAIN);
	CHECK_EQ(atomic_load(&ran), 1);
	CHECK_OK(pthread_join(th, NULL));

	close(sv[0]);
	close(sv[1]);
	return 0;
}
