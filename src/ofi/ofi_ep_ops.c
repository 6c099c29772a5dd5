/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data calls of an endpoint (fi_send, fi_recv, fi_tsend, fi_trecv and
 * their v/msg/inject/data forms), decoded into one send or receive for
 * ofi_tx.c or ofi_rx.c under the domain's lock. One iovec at most
 * (iov_limit 1). Whether an operation completes: always, or with
 * FI_SELECTIVE_COMPLETION only when its flags (the endpoint's op_flags for
 * the short forms) carry FI_COMPLETION; an inject never does. Each call
 * also moves the endpoint on, as manual progress allows.
 */
#include <stdlib.h>

#include "ofi/ofi.h"

#define EP(fid_ep) container_of(fid_ep, struct kr_ofi_ep, ep)

/* The flags a *msg call may carry. */
#define TX_MSG_FLAGS                                                                               \
	(FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | FI_TRANSMIT_COMPLETE |                    \
	 FI_DELIVERY_COMPLETE | FI_INJECT_COMPLETE | FI_MORE)
#define RX_MSG_FLAGS (FI_COMPLETION | FI_MORE)

static ssize_t tx(struct kr_ofi_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag,
		  uint64_t data, uint64_t flags, void *context)
{
	int rc;

	if ((flags & FI_INJECT) && len > KR_OFI_INLINE)
		return -FI_EMSGSIZE;
	pthread_mutex_lock(&ep->dom->lock);
	rc = kr_ofi_tx_start(ep, dest, buf, len, tag, data, flags, context);
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static ssize_t rx(struct kr_ofi_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		  uint64_t ignore, uint64_t flags, void *context)
{
	int rc;

	pthread_mutex_lock(&ep->dom->lock);
	rc = kr_ofi_rx_post(ep, buf, len, src, tag, ignore, flags, context);
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

/* ---- untagged ---- */

static ssize_t msg_recv(struct fid_ep *e, void *buf, size_t len, void *desc, fi_addr_t src,
			void *context)
{
	(void)desc;
	return rx(EP(e), buf, len, src, 0, 0, FI_MSG | kr_ofi_rx_compl(EP(e), EP(e)->rx_flags),
		  context);
}

static ssize_t msg_recvv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, void *context)
{
	void *buf;
	size_t len;

	if (kr_ofi_one_iov(iov, count, &buf, &len))
		return -FI_EINVAL;
	return msg_recv(e, buf, len, desc, src, context);
}

static ssize_t msg_recvmsg(struct fid_ep *e, const struct fi_msg *m, uint64_t flags)
{
	void *buf;
	size_t len;

	if (!m || kr_ofi_one_iov(m->msg_iov, m->iov_count, &buf, &len))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)RX_MSG_FLAGS)
		return -FI_EBADFLAGS;
	return rx(EP(e), buf, len, m->addr, 0, 0, FI_MSG | kr_ofi_rx_compl(EP(e), flags),
		  m->context);
}

static ssize_t msg_send(struct fid_ep *e, const void *buf, size_t len, void *desc, fi_addr_t dest,
			void *context)
{
	(void)desc;
	return tx(EP(e), buf, len, dest, 0, 0, FI_MSG | kr_ofi_tx_compl(EP(e), EP(e)->tx_flags),
		  context);
}

static ssize_t msg_sendv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t dest, void *context)
{
	void *buf;
	size_t len;

	if (kr_ofi_one_iov(iov, count, &buf, &len))
		return -FI_EINVAL;
	return msg_send(e, buf, len, desc, dest, context);
}

static ssize_t msg_sendmsg(struct fid_ep *e, const struct fi_msg *m, uint64_t flags)
{
	void *buf;
	size_t len;

	if (!m || kr_ofi_one_iov(m->msg_iov, m->iov_count, &buf, &len))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)TX_MSG_FLAGS)
		return -FI_EBADFLAGS;
	return tx(EP(e), buf, len, m->addr, 0, m->data,
		  FI_MSG | kr_ofi_tx_compl(EP(e), flags) |
		      (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)),
		  m->context);
}

static ssize_t msg_inject(struct fid_ep *e, const void *buf, size_t len, fi_addr_t dest)
{
	return tx(EP(e), buf, len, dest, 0, 0, FI_MSG | FI_INJECT, NULL);
}

static ssize_t msg_senddata(struct fid_ep *e, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest, void *context)
{
	(void)desc;
	return tx(EP(e), buf, len, dest, 0, data,
		  FI_MSG | FI_REMOTE_CQ_DATA | kr_ofi_tx_compl(EP(e), EP(e)->tx_flags), context);
}

static ssize_t msg_injectdata(struct fid_ep *e, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest)
{
	return tx(EP(e), buf, len, dest, 0, data, FI_MSG | FI_INJECT | FI_REMOTE_CQ_DATA, NULL);
}

struct fi_ops_msg kr_ofi_msg_ops = {
    .size = sizeof(struct fi_ops_msg),
    .recv = msg_recv,
    .recvv = msg_recvv,
    .recvmsg = msg_recvmsg,
    .send = msg_send,
    .sendv = msg_sendv,
    .sendmsg = msg_sendmsg,
    .inject = msg_inject,
    .senddata = msg_senddata,
    .injectdata = msg_injectdata,
};

/* ---- tagged ---- */

static ssize_t tag_recv(struct fid_ep *e, void *buf, size_t len, void *desc, fi_addr_t src,
			uint64_t tag, uint64_t ignore, void *context)
{
	(void)desc;
	return rx(EP(e), buf, len, src, tag, ignore,
		  FI_TAGGED | kr_ofi_rx_compl(EP(e), EP(e)->rx_flags), context);
}

static ssize_t tag_recvv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, uint64_t tag, uint64_t ignore, void *context)
{
	void *buf;
	size_t len;

	if (kr_ofi_one_iov(iov, count, &buf, &len))
		return -FI_EINVAL;
	return tag_recv(e, buf, len, desc, src, tag, ignore, context);
}

static ssize_t tag_recvmsg(struct fid_ep *e, const struct fi_msg_tagged *m, uint64_t flags)
{
	void *buf;
	size_t len;

	struct kr_ofi_ep *ep = EP(e);
	int rc;

	if (!m || kr_ofi_one_iov(m->msg_iov, m->iov_count, &buf, &len))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(RX_MSG_FLAGS | FI_PEEK | FI_CLAIM | FI_DISCARD))
		return -FI_EBADFLAGS;
	if ((flags & FI_DISCARD) && !(flags & (FI_PEEK | FI_CLAIM)))
		return -FI_EINVAL;
	if (!(flags & (FI_PEEK | FI_CLAIM)))
		return rx(ep, buf, len, m->addr, m->tag, m->ignore,
			  FI_TAGGED | kr_ofi_rx_compl(ep, flags), m->context);
	pthread_mutex_lock(&ep->dom->lock);
	if (flags & FI_PEEK) /* a probe: completes with what it found, or FI_ENOMSG */
		rc = kr_ofi_rx_peek(ep, m->addr, m->tag, m->ignore, flags, m->context);
	else /* the message a FI_PEEK | FI_CLAIM took */
		rc = kr_ofi_rx_claim(ep, buf, len, FI_COMPLETION | flags, m->context);
	pthread_mutex_unlock(&ep->dom->lock);
	return rc;
}

static ssize_t tag_send(struct fid_ep *e, const void *buf, size_t len, void *desc, fi_addr_t dest,
			uint64_t tag, void *context)
{
	(void)desc;
	return tx(EP(e), buf, len, dest, tag, 0,
		  FI_TAGGED | kr_ofi_tx_compl(EP(e), EP(e)->tx_flags), context);
}

static ssize_t tag_sendv(struct fid_ep *e, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t dest, uint64_t tag, void *context)
{
	void *buf;
	size_t len;

	if (kr_ofi_one_iov(iov, count, &buf, &len))
		return -FI_EINVAL;
	return tag_send(e, buf, len, desc, dest, tag, context);
}

static ssize_t tag_sendmsg(struct fid_ep *e, const struct fi_msg_tagged *m, uint64_t flags)
{
	void *buf;
	size_t len;

	if (!m || kr_ofi_one_iov(m->msg_iov, m->iov_count, &buf, &len))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)TX_MSG_FLAGS)
		return -FI_EBADFLAGS;
	return tx(EP(e), buf, len, m->addr, m->tag, m->data,
		  FI_TAGGED | kr_ofi_tx_compl(EP(e), flags) |
		      (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)),
		  m->context);
}

static ssize_t tag_inject(struct fid_ep *e, const void *buf, size_t len, fi_addr_t dest,
			  uint64_t tag)
{
	return tx(EP(e), buf, len, dest, tag, 0, FI_TAGGED | FI_INJECT, NULL);
}

static ssize_t tag_senddata(struct fid_ep *e, const void *buf, size_t len, void *desc,
			    uint64_t data, fi_addr_t dest, uint64_t tag, void *context)
{
	(void)desc;
	return tx(EP(e), buf, len, dest, tag, data,
		  FI_TAGGED | FI_REMOTE_CQ_DATA | kr_ofi_tx_compl(EP(e), EP(e)->tx_flags), context);
}

static ssize_t tag_injectdata(struct fid_ep *e, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest, uint64_t tag)
{
	return tx(EP(e), buf, len, dest, tag, data, FI_TAGGED | FI_INJECT | FI_REMOTE_CQ_DATA,
		  NULL);
}

struct fi_ops_tagged kr_ofi_tagged_ops = {
    .size = sizeof(struct fi_ops_tagged),
    .recv = tag_recv,
    .recvv = tag_recvv,
    .recvmsg = tag_recvmsg,
    .send = tag_send,
    .sendv = tag_sendv,
    .sendmsg = tag_sendmsg,
    .inject = tag_inject,
    .senddata = tag_senddata,
    .injectdata = tag_injectdata,
};
