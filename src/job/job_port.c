/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Job side of receive endpoints (keeper_port.c): the bind and unbind calls,
 * and reads of the endpoint descriptors the keeper publishes in the zone
 * head (seqlock: copy, then check seq did not move and is even).
 */
#include <errno.h>
#include <string.h>

#include "job/job.h"

#define EP_READ_TRIES 64

int kr_job_port_call(struct kr_ctx *ctx, uint16_t type, struct kr_msg_bind *req,
		      struct kr_msg_reply *rep)
{
	int rc;

	kr_msg_init(&req->hdr, type, sizeof(*req), 0);
	memset(rep, 0, sizeof(*rep));
	pthread_mutex_lock(&ctx->lock);
	rc = kr_job_call(ctx, req, sizeof(*req), rep);
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

int kr_job_ep_read(const struct kr_ctx *ctx, uint32_t index, struct kr_zone_ep *out)
{
	const struct kr_zone_ep *d;

	if (!ctx->zone || index >= ctx->zone->nep)
		return -EINVAL;
	d = kr_zone_ep_at(ctx->zone, index);
	for (int i = 0; i < EP_READ_TRIES; i++) {
		uint32_t s0 = __atomic_load_n(&d->seq, __ATOMIC_ACQUIRE);

		memcpy(out, (const void *)d, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!(s0 & 1) && __atomic_load_n(&d->seq, __ATOMIC_RELAXED) == s0)
			return 0;
	}
	return -EAGAIN;
}

int kr_job_port_find(const struct kr_ctx *ctx, uint32_t port, struct kr_zone_ep *out,
		      uint32_t *index)
{
	for (uint32_t i = 0; ctx->zone && i < ctx->zone->nep; i++)
		if (!kr_job_ep_read(ctx, i, out) && out->port == port) {
			*index = i;
			return 0;
		}
	return -ECONNREFUSED;
}
