/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues: a growing ring of completions (never full, so nothing
 * is lost) and a list of errors. Progress is manual: reading a CQ first
 * moves every endpoint bound to it on (its port and vQPs polled, queued
 * SENDs posted). While an error waits, fi_cq_read answers -FI_EAVAIL and
 * fi_cq_readerr takes it. Formats CONTEXT, MSG, DATA and TAGGED; no wait
 * objects (fi_cq_sread polls, yielding the core, for its timeout). A CQ
 * read dry for KR_WAIT_SPIN_NS yields the core on each further empty read,
 * as krcore's own waits do: the application spins on fi_cq_read, and on a
 * host with more spinners than cores the device's engine needs one. On a
 * device that runs on this host's cores (the sim, KR_CTX_F_HOST_CPU) every
 * empty read yields: its engine and receive threads are among those
 * spinners always (fi_pingpong's mean one-way time 5-15 % lower in 16
 * alternating runs of each here).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <krcore/krcore.h>

#include "common/kr_clock.h"
#include "ofi/ofi.h"

static size_t entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	default:
		return sizeof(struct fi_cq_tagged_entry);
	}
}

static int cq_grow(struct kr_ofi_cq *q)
{
	size_t cap = q->cap ? 2 * q->cap : 64;
	struct fi_cq_tagged_entry *ent = malloc(cap * sizeof(*ent));
	fi_addr_t *src = malloc(cap * sizeof(*src));

	if (!ent || !src) {
		free(ent);
		free(src);
		return -FI_ENOMEM;
	}
	for (size_t i = 0; i < q->count; i++) { /* unwrap the ring */
		ent[i] = q->ent[(q->head + i) % q->cap];
		src[i] = q->src[(q->head + i) % q->cap];
	}
	free(q->ent);
	free(q->src);
	q->ent = ent;
	q->src = src;
	q->head = 0;
	q->cap = cap;
	return 0;
}

/* kr_ofi_cq_done() - see ofi.h. */
int kr_ofi_cq_done(struct kr_ofi_cq *q, const struct fi_cq_tagged_entry *e, fi_addr_t src)
{
	size_t at;

	if (q->count == q->cap && cq_grow(q))
		return -FI_ENOMEM;
	at = (q->head + q->count) % q->cap;
	q->ent[at] = *e;
	q->src[at] = src;
	q->count++;
	return 0;
}

/* kr_ofi_cq_fail() - see ofi.h. */
int kr_ofi_cq_fail(struct kr_ofi_cq *q, const struct fi_cq_tagged_entry *e, int err, int prov_errno,
		   size_t olen)
{
	struct fi_cq_err_entry *x;

	if (q->nerr == q->errcap) {
		size_t cap = q->errcap ? 2 * q->errcap : 8;

		x = realloc(q->errs, cap * sizeof(*x));
		if (!x)
			return -FI_ENOMEM;
		q->errs = x;
		q->errcap = cap;
	}
	x = &q->errs[q->nerr++];
	memset(x, 0, sizeof(*x));
	x->op_context = e->op_context;
	x->flags = e->flags;
	x->len = e->len;
	x->buf = e->buf;
	x->data = e->data;
	x->tag = e->tag;
	x->olen = olen;
	x->err = err;
	x->prov_errno = prov_errno;
	return 0;
}

static ssize_t cq_readfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src_addr)
{
	struct kr_ofi_cq *q = container_of(cq, struct kr_ofi_cq, cq);
	size_t sz = entry_size(q->format), n = 0;

	if (!buf && count)
		return -FI_EINVAL;
	pthread_mutex_lock(&q->dom->lock);
	if (!q->count)
		kr_ofi_ep_set_progress(&q->eps);
	if (q->nerr) {
		pthread_mutex_unlock(&q->dom->lock);
		return -FI_EAVAIL;
	}
	for (; n < count && q->count; n++) {
		memcpy((uint8_t *)buf + n * sz, &q->ent[q->head], sz); /* each format a prefix */
		if (src_addr)
			src_addr[n] = q->src[q->head];
		q->head = (q->head + 1) % q->cap;
		q->count--;
	}
	if (n)
		q->empty_since = 0;
	else if (q->dom->host_cpu)
		sched_yield(); /* the device's threads want this core now */
	else if (!q->empty_since)
		q->empty_since = kr_now_ns();
	else /* polled dry a while: on a busy host the device (the sim's engine) needs the core */
		kr_wait_relax(q->empty_since);
	pthread_mutex_unlock(&q->dom->lock);
	return n ? (ssize_t)n : -FI_EAGAIN;
}

static ssize_t cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	return cq_readfrom(cq, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct kr_ofi_cq *q = container_of(cq, struct kr_ofi_cq, cq);
	struct fi_cq_err_entry e;

	if (!buf || flags)
		return -FI_EINVAL;
	pthread_mutex_lock(&q->dom->lock);
	if (!q->nerr) {
		pthread_mutex_unlock(&q->dom->lock);
		return -FI_EAGAIN;
	}
	e = q->errs[0];
	memmove(q->errs, q->errs + 1, --q->nerr * sizeof(e));
	pthread_mutex_unlock(&q->dom->lock);
	/* from API 1.5 the caller says how much error data it takes; there is none */
	e.err_data = NULL;
	e.err_data_size = 0;
	memcpy(buf, &e, sizeof(e));
	return 1;
}

static ssize_t cq_sreadfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src_addr,
			    const void *cond, int timeout)
{
	uint64_t t0 = kr_now_ns();
	ssize_t n;

	(void)cond;
	for (;;) {
		n = cq_readfrom(cq, buf, count, src_addr);
		if (n != -FI_EAGAIN)
			return n;
		if (timeout >= 0 && kr_now_ns() - t0 >= (uint64_t)timeout * 1000000)
			return -FI_EAGAIN;
		sched_yield();
	}
}

static ssize_t cq_sread(struct fid_cq *cq, void *buf, size_t count, const void *cond, int timeout)
{
	return cq_sreadfrom(cq, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *cq)
{
	(void)cq;
	return 0; /* sread polls: nothing sleeps */
}

static const char *cq_strerror(struct fid_cq *cq, int prov_errno, const void *err_data, char *buf,
			       size_t len)
{
	const char *s = kr_strerror(prov_errno);

	(void)cq;
	(void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = 0;
		return buf;
	}
	return s;
}

static int cq_close(struct fid *fid)
{
	struct kr_ofi_cq *q = container_of(fid, struct kr_ofi_cq, cq.fid);

	pthread_mutex_lock(&q->dom->lock);
	if (q->eps.n) {
		pthread_mutex_unlock(&q->dom->lock);
		return -FI_EBUSY; /* an endpoint still reports to it */
	}
	q->dom->refs--;
	pthread_mutex_unlock(&q->dom->lock);
	free(q->ent);
	free(q->src);
	free(q->errs);
	free(q);
	return 0;
}

static struct fi_ops cq_fi_ops = KR_OFI_FI_OPS(cq_close);

static struct fi_ops_cq cq_ops = {
    .size = sizeof(struct fi_ops_cq),
    .read = cq_read,
    .readfrom = cq_readfrom,
    .readerr = cq_readerr,
    .sread = cq_sread,
    .sreadfrom = cq_sreadfrom,
    .signal = cq_signal,
    .strerror = cq_strerror,
};

/* kr_ofi_cq_open() - see ofi.h. */
int kr_ofi_cq_open(struct fid_domain *dom, struct fi_cq_attr *attr, struct fid_cq **cq,
		   void *context)
{
	struct kr_ofi_domain *d = container_of(dom, struct kr_ofi_domain, dom);
	struct kr_ofi_cq *q;

	if (!attr || !cq)
		return -FI_EINVAL;
	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
	case FI_CQ_FORMAT_MSG:
	case FI_CQ_FORMAT_DATA:
	case FI_CQ_FORMAT_TAGGED:
		break;
	default:
		return -FI_ENOSYS;
	}
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS; /* no fd or wait set: sread polls */
	if (attr->flags & ~(uint64_t)FI_AFFINITY)
		return -FI_EBADFLAGS;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -FI_ENOMEM;
	q->dom = d;
	q->format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	q->cq.fid.fclass = FI_CLASS_CQ;
	q->cq.fid.context = context;
	q->cq.fid.ops = &cq_fi_ops;
	q->cq.ops = &cq_ops;
	pthread_mutex_lock(&d->lock);
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*cq = &q->cq;
	return 0;
}
