/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event queues. An RDM endpoint makes no connections, so nothing raises
 * events; programs open one all the same (fabtests' fi_pingpong does for
 * every endpoint type), so it opens, reads empty, waits its timeout and
 * closes. Events an application writes itself (fi_eq_write) are not kept.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ofi/ofi.h"

struct kr_ofi_eq {
	struct fid_eq eq;
};

static int eq_close(struct fid *fid)
{
	free(container_of(fid, struct kr_ofi_eq, eq.fid));
	return 0;
}

static ssize_t eq_read(struct fid_eq *eq, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
	(void)eq;
	(void)event;
	(void)buf;
	(void)len;
	(void)flags;
	return -FI_EAGAIN;
}

static ssize_t eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf, uint64_t flags)
{
	(void)eq;
	(void)buf;
	(void)flags;
	return -FI_EAGAIN;
}

static ssize_t eq_write(struct fid_eq *eq, uint32_t event, const void *buf, size_t len,
			uint64_t flags)
{
	(void)eq;
	(void)event;
	(void)buf;
	(void)len;
	(void)flags;
	return -FI_ENOSYS;
}

/* Nothing will come: wait out the timeout (ms; negative: for ever, as asked). */
static ssize_t eq_sread(struct fid_eq *eq, uint32_t *event, void *buf, size_t len, int timeout,
			uint64_t flags)
{
	struct timespec ts = {.tv_sec = timeout / 1000, .tv_nsec = (timeout % 1000) * 1000000L};

	if (timeout < 0)
		for (;;)
			pause();
	nanosleep(&ts, NULL);
	return eq_read(eq, event, buf, len, flags);
}

static const char *eq_strerror(struct fid_eq *eq, int prov_errno, const void *err_data, char *buf,
			       size_t len)
{
	(void)eq;
	(void)err_data;
	(void)buf;
	(void)len;
	return fi_strerror(prov_errno);
}

static struct fi_ops eq_fi_ops = KR_OFI_FI_OPS(eq_close);

static struct fi_ops_eq eq_ops = {
    .size = sizeof(struct fi_ops_eq),
    .read = eq_read,
    .readerr = eq_readerr,
    .write = eq_write,
    .sread = eq_sread,
    .strerror = eq_strerror,
};

/* kr_ofi_eq_open() - see ofi.h. */
int kr_ofi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eq,
		   void *context)
{
	struct kr_ofi_eq *q;

	(void)fabric;
	if (!attr || !eq)
		return -FI_EINVAL;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS; /* no file descriptor or wait set to signal */
	q = calloc(1, sizeof(*q));
	if (!q)
		return -FI_ENOMEM;
	q->eq.fid.fclass = FI_CLASS_EQ;
	q->eq.fid.context = context;
	q->eq.fid.ops = &eq_fi_ops;
	q->eq.ops = &eq_ops;
	*eq = &q->eq;
	return 0;
}
