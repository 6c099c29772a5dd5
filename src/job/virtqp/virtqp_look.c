/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MetaServer lookup's READ on the calling thread's DCI, the reader
 * kr_connect lends job_resolve.c (ctx->look_read): a vQP to the MetaServer's
 * DC target, one READ, poll, disconnect. The DCI is one the thread holds, or
 * the one its connect takes anyway (a spare of the process, the attach's
 * grant): its connect that follows finds it again, so an uncached first
 * connect leases nothing for the lookup and makes one round trip to the
 * MetaServer, no call to the keeper.
 */
#include <errno.h>

#include <krcore/krcore.h>

#include "common/kr_clock.h"
#include "job/job.h"
#include "job/virtqp/virtqp.h"

#define KR_VQ_LOOK_NS (200ull * 1000 * 1000) /* a MetaServer that has not answered is down */

/* kr_vq_look_read() - see kr_job_look_read_fn in job.h. */
int kr_vq_look_read(struct kr_ctx *ctx, const struct kr_devx_dc_av *av, uint64_t raddr,
		    uint32_t rkey, void *buf, uint32_t len)
{
	/* the vQP's credits: the READ's WQEBBs, nothing shared with the user's vQPs */
	struct kr_connect_opts o = {.credits = 2};
	struct kr_vqp *v = kr_vq_connect_av(ctx, KR_VQ_LOOK_NODE, av, &o);
	struct kr_wc wc;
	uint64_t t0;
	int rc, n = 0;

	if (!v)
		return errno == ENOSPC || errno == EMFILE ? -EAGAIN : -errno;
	rc = kr_post_read(v, buf, len, raddr, rkey, 0, 0);
	t0 = kr_now_ns();
	while (!rc && (n = kr_poll(v, &wc, 1)) == 0 && kr_wait_relax(t0) - t0 < KR_VQ_LOOK_NS)
		;
	if (!rc && n < 0)
		rc = n;
	else if (!rc && n == 0)
		rc = -EHOSTUNREACH; /* still out: the disconnect below waits for it */
	else if (!rc && wc.status != KR_WC_SUCCESS)
		rc = kr_job_look_local_err(wc.status) ? -EAGAIN : -EHOSTUNREACH;
	if (kr_disconnect(v) == -ETIMEDOUT)
		rc = -ESTALE; /* its READ may still land in buf */
	return rc;
}
