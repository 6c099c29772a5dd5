/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters (fi_cntr_open, fi_cntr(3)): a count of completed operations and
 * one of failed ones, for the kinds an endpoint bound it to (FI_SEND,
 * FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ, FI_REMOTE_WRITE). Every
 * operation of a bound kind counts, whether or not it reports to a CQ
 * (FI_SELECTIVE_COMPLETION, injects). Progress is manual: reading a counter
 * moves its endpoints on, as reading a CQ does; fi_cntr_wait polls for its
 * timeout, yielding the core (no wait objects).
 */
#include <sched.h>
#include <stdlib.h>

#include "common/kr_clock.h"
#include "ofi/ofi.h"

#define CNTR(fid_cntr) container_of(fid_cntr, struct kr_ofi_cntr, cntr)

static uint64_t cntr_read(struct fid_cntr *cntr)
{
	struct kr_ofi_cntr *c = CNTR(cntr);
	uint64_t v;

	pthread_mutex_lock(&c->dom->lock);
	kr_ofi_ep_set_progress(&c->eps);
	v = c->value;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static uint64_t cntr_readerr(struct fid_cntr *cntr)
{
	struct kr_ofi_cntr *c = CNTR(cntr);
	uint64_t v;

	pthread_mutex_lock(&c->dom->lock);
	kr_ofi_ep_set_progress(&c->eps);
	v = c->err;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static int cntr_change(struct fid_cntr *cntr, uint64_t *field, uint64_t v, bool add)
{
	struct kr_ofi_cntr *c = CNTR(cntr);

	pthread_mutex_lock(&c->dom->lock);
	*field = add ? *field + v : v;
	pthread_mutex_unlock(&c->dom->lock);
	return 0;
}

static int cntr_add(struct fid_cntr *cntr, uint64_t v)
{
	return cntr_change(cntr, &CNTR(cntr)->value, v, true);
}

static int cntr_set(struct fid_cntr *cntr, uint64_t v)
{
	return cntr_change(cntr, &CNTR(cntr)->value, v, false);
}

static int cntr_adderr(struct fid_cntr *cntr, uint64_t v)
{
	return cntr_change(cntr, &CNTR(cntr)->err, v, true);
}

static int cntr_seterr(struct fid_cntr *cntr, uint64_t v)
{
	return cntr_change(cntr, &CNTR(cntr)->err, v, false);
}

/* Until the count reaches threshold: 0, -FI_EAVAIL (an error was counted meanwhile), -FI_ETIMEDOUT.
 */
static int cntr_wait(struct fid_cntr *cntr, uint64_t threshold, int timeout)
{
	struct kr_ofi_cntr *c = CNTR(cntr);
	uint64_t t0 = kr_now_ns(), err0;
	int rc = 1;

	pthread_mutex_lock(&c->dom->lock);
	err0 = c->err;
	pthread_mutex_unlock(&c->dom->lock);
	while (rc > 0) {
		pthread_mutex_lock(&c->dom->lock);
		kr_ofi_ep_set_progress(&c->eps);
		if (c->value >= threshold)
			rc = 0;
		else if (c->err != err0)
			rc = -FI_EAVAIL;
		pthread_mutex_unlock(&c->dom->lock);
		if (rc <= 0)
			break;
		if (timeout >= 0 && kr_now_ns() - t0 >= (uint64_t)timeout * 1000000)
			return -FI_ETIMEDOUT;
		sched_yield();
	}
	return rc;
}

static int cntr_close(struct fid *fid)
{
	struct kr_ofi_cntr *c = container_of(fid, struct kr_ofi_cntr, cntr.fid);

	pthread_mutex_lock(&c->dom->lock);
	if (c->eps.n) {
		pthread_mutex_unlock(&c->dom->lock);
		return -FI_EBUSY; /* an endpoint still counts on it */
	}
	c->dom->refs--;
	pthread_mutex_unlock(&c->dom->lock);
	free(c);
	return 0;
}

static struct fi_ops cntr_fi_ops = KR_OFI_FI_OPS(cntr_close);

static struct fi_ops_cntr cntr_ops = {
    .size = sizeof(struct fi_ops_cntr),
    .read = cntr_read,
    .readerr = cntr_readerr,
    .add = cntr_add,
    .set = cntr_set,
    .wait = cntr_wait,
    .adderr = cntr_adderr,
    .seterr = cntr_seterr,
};

/* kr_ofi_cntr_open() - see ofi.h. */
int kr_ofi_cntr_open(struct fid_domain *dom, struct fi_cntr_attr *attr, struct fid_cntr **cntr,
		     void *context)
{
	struct kr_ofi_domain *d = container_of(dom, struct kr_ofi_domain, dom);
	struct kr_ofi_cntr *c;

	if (!cntr)
		return -FI_EINVAL;
	if (attr && attr->events != FI_CNTR_EVENTS_COMP)
		return -FI_ENOSYS;
	if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS; /* no fd or wait set: fi_cntr_wait polls */
	if (attr && attr->flags)
		return -FI_EBADFLAGS;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	c->dom = d;
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &cntr_fi_ops;
	c->cntr.ops = &cntr_ops;
	pthread_mutex_lock(&d->lock);
	d->refs++;
	pthread_mutex_unlock(&d->lock);
	*cntr = &c->cntr;
	return 0;
}

static const uint64_t kind_flag[KR_OFI_CNTR_KINDS] = {
    [KR_OFI_CNTR_SEND] = FI_SEND,
    [KR_OFI_CNTR_RECV] = FI_RECV,
    [KR_OFI_CNTR_READ] = FI_READ,
    [KR_OFI_CNTR_WRITE] = FI_WRITE,
    [KR_OFI_CNTR_REMOTE_READ] = FI_REMOTE_READ,
    [KR_OFI_CNTR_REMOTE_WRITE] = FI_REMOTE_WRITE,
};

/* kr_ofi_cntr_bind() - see ofi.h. */
int kr_ofi_cntr_bind(struct kr_ofi_ep *ep, struct kr_ofi_cntr *c, uint64_t flags)
{
	uint64_t all = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	int rc;

	if (flags & ~all)
		return -FI_EBADFLAGS;
	if (!flags || c->dom != ep->dom)
		return -FI_EINVAL;
	for (int k = 0; k < KR_OFI_CNTR_KINDS; k++)
		if ((flags & kind_flag[k]) && ep->cntr[k] && ep->cntr[k] != c)
			return -FI_EINVAL; /* one counter per kind */
	rc = kr_ofi_ep_set_add(&c->eps, ep);
	if (rc)
		return rc;
	for (int k = 0; k < KR_OFI_CNTR_KINDS; k++)
		if (flags & kind_flag[k])
			ep->cntr[k] = c;
	return 0;
}

/* kr_ofi_cntr_unbind() - see ofi.h. */
void kr_ofi_cntr_unbind(struct kr_ofi_ep *ep)
{
	for (int k = 0; k < KR_OFI_CNTR_KINDS; k++) {
		struct kr_ofi_cntr *c = ep->cntr[k];

		if (!c)
			continue;
		for (int j = k; j < KR_OFI_CNTR_KINDS; j++)
			if (ep->cntr[j] == c)
				ep->cntr[j] = NULL;
		kr_ofi_ep_set_del(&c->eps, ep);
	}
}
