/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The attach protocol, both sides: SOCK_SEQPACKET messages on the keeper's
 * UNIX socket, descriptors by SCM_RIGHTS. One message per sendmsg/recvmsg, so
 * a truncated or oversized message is detected (MSG_TRUNC/MSG_CTRUNC) and
 * refused, never half-parsed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "abi/abi.h"
#include "common/kr_clock.h"

const char *kr_msg_socket_default(void)
{
	const char *env = getenv("KR_KEEPER_SOCKET");

	return env && *env ? env : KR_POOL_DEFAULT_SOCKET;
}

void kr_msg_init(struct kr_msg_hdr *h, uint16_t type, uint32_t len, uint32_t seq)
{
	h->magic = KR_PROTO_MAGIC;
	h->version = KR_PROTO_VERSION;
	h->type = type;
	h->len = len;
	h->seq = seq;
}

int kr_msg_send(int sock, const void *msg, size_t len, const int *fds, unsigned int nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * (KR_ATTACH_MAX_REGIONS + 1))];
	} ctl;
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (nfds > KR_ATTACH_MAX_REGIONS + 1 || (nfds && !fds))
		return -EINVAL;
	if (nfds) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static void close_fds(int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		close(fds[i]);
}

ssize_t kr_msg_recv(int sock, void *buf, size_t cap, int *fds, unsigned int maxfds,
		    unsigned int *nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * (KR_ATTACH_MAX_REGIONS + 1))];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	int got[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int ngot = 0;
	struct cmsghdr *cm;
	ssize_t n;

	if (nfds)
		*nfds = 0;
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == ECONNRESET ? -ENOTCONN : -errno;

	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (ngot < KR_ATTACH_MAX_REGIONS + 1)
				got[ngot++] = fd;
			else
				close(fd);
		}
	}
	if (n == 0) {
		close_fds(got, ngot);
		return -ENOTCONN;
	}
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || ngot > maxfds) {
		close_fds(got, ngot);
		return -EMSGSIZE;
	}
	if ((size_t)n < sizeof(struct kr_msg_hdr)) {
		close_fds(got, ngot);
		return -EPROTO;
	}
	{
		const struct kr_msg_hdr *h = buf;

		if (h->magic != KR_PROTO_MAGIC || h->version != KR_PROTO_VERSION ||
		    h->len != (size_t)n) {
			close_fds(got, ngot);
			return -EPROTO;
		}
	}
	if (ngot && fds)
		memcpy(fds, got, ngot * sizeof(int));
	else if (ngot)
		close_fds(got, ngot);
	if (nfds)
		*nfds = fds ? ngot : 0;
	return n;
}

int kr_msg_region_add(struct kr_msg_attach_reply *rep, uint64_t va, uint64_t off, uint32_t fd_index,
		      uint32_t prot, uint8_t role)
{
	struct kr_msg_region *r;

	if (rep->nregions >= KR_ATTACH_MAX_REGIONS)
		return -E2BIG;
	r = &rep->region[rep->nregions];
	r->va = va;
	r->len = KR_POOL_PAGE;
	r->off = off;
	r->fd_index = fd_index;
	r->prot = prot;
	rep->region_role[rep->nregions] = role;
	rep->nregions++;
	return 0;
}

int kr_msg_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* A reply, an error or a hang-up is there: the recv would not wait. */
static bool msg_reply_ready(int sock)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};

	return poll(&p, 1, 0) != 0;
}

/*
 * The keeper answers from its event loop within tens of microseconds; a
 * caller that slept on the socket would pay a wake-up on top (about 100 us
 * on a virtual machine's idle core). So the caller looks for the reply,
 * yielding its core between looks, for KR_MSG_SPIN_NS before it sleeps.
 */
#define KR_MSG_SPIN_NS 300000u

static void msg_wait_reply(int sock)
{
	uint64_t t0 = kr_now_ns();

	do {
		if (msg_reply_ready(sock))
			return; /* the recv takes it */
		sched_yield();
	} while (kr_now_ns() - t0 < KR_MSG_SPIN_NS);
}

/* Send req with nsend descriptors, wait for its reply (with up to maxfds of them). */
static int msg_call(int sock, void *req, size_t reqlen, const int *send_fds, unsigned int nsend,
		    void *rep, size_t repcap, int *fds, unsigned int maxfds, unsigned int *nfds)
{
	const struct kr_msg_hdr *rq = req, *rh = rep;
	ssize_t n;
	int rc;

	rc = kr_msg_send(sock, req, reqlen, send_fds, nsend);
	if (rc && rc != -EPIPE)
		return rc == -ECONNRESET || rc == -ECONNREFUSED ? -ENOTCONN : rc;
	/* EPIPE: the keeper closed on us, maybe refusing us first: the reason is queued */
	if (!rc)
		msg_wait_reply(sock);
	n = kr_msg_recv(sock, rep, repcap, fds, maxfds, nfds);
	if (n < 0)
		return rc ? rc : (int)n;
	if (rc && rh->seq != 0) {
		if (nfds && fds)
			close_fds(fds, *nfds);
		return rc;
	}
	/* seq 0: the keeper refused the connection before reading (its status says why) */
	if (rh->type != (KR_MSG_REPLY | rq->type) || (rh->seq != rq->seq && rh->seq != 0)) {
		if (nfds && fds)
			close_fds(fds, *nfds);
		return -EPROTO;
	}
	return 0;
}

int kr_msg_call(int sock, void *req, size_t reqlen, void *rep, size_t repcap, int *fds,
		unsigned int maxfds, unsigned int *nfds)
{
	return msg_call(sock, req, reqlen, NULL, 0, rep, repcap, fds, maxfds, nfds);
}

int kr_msg_call_fd(int sock, void *req, size_t reqlen, int fd, void *rep, size_t repcap)
{
	return msg_call(sock, req, reqlen, &fd, 1, rep, repcap, NULL, 0, NULL);
}
