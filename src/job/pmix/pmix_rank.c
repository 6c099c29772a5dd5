/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rank endpoints through PMIx, the launcher's key-value store (Open MPI's
 * mpirun, Slurm's srun): each rank puts the DC target record of its node
 * (node id, DCT number, port address, launch tag: what a MetaServer slot
 * holds, nothing secret: the DC key comes from the launch key) under
 * KR_PMIX_KEY, one fence collects them, and kr_connect_rank() builds the
 * address vector from the store: no MetaServer READ for the job's own
 * peers (UCX exchanges its addresses the same way, through the PMIx modex).
 *
 * The process joins PMIx at its first kr_pmix_exchange() (PMIx_Init counts
 * references: an MPI library that joined already is not disturbed) and
 * leaves at exit.
 */
#include <errno.h>
#include <pmix.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "common/kr_log.h"
#include "job/job.h"
#include "job/virtqp/virtqp.h"

#define KR_PMIX_KEY   "krcore.ep"
#define KR_PMIX_EP_V1 0x6b720001u

/* What a rank publishes: its node's DC target for its launch. */
struct kr_pmix_ep {
	uint32_t version;
	uint32_t node_id;
	uint32_t dctn;
	uint32_t tenant;
	uint64_t tag;
	struct kr_devx_addr addr;
};

static struct {
	pthread_mutex_t lock;
	bool joined;
	pmix_proc_t me;
	uint64_t attach_id; /* the attachment that published, 0 = none */
} g_pmix = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void pmix_leave(void)
{
	PMIx_Finalize(NULL, 0);
}

/* g_pmix.lock held. 0, or -ENXIO (not started by a PMIx launcher). */
static int pmix_join(void)
{
	pmix_status_t st;

	if (g_pmix.joined)
		return 0;
	st = PMIx_Init(&g_pmix.me, NULL, 0);
	if (st != PMIX_SUCCESS) {
		KR_ERR("pmix", "PMIx_Init: %s (not started by a PMIx launcher?)",
		       PMIx_Error_string(st));
		return -ENXIO;
	}
	g_pmix.joined = true;
	atexit(pmix_leave);
	return 0;
}

int kr_pmix_exchange(struct kr_ctx *ctx)
{
	struct kr_pmix_ep ep;
	pmix_value_t val;
	pmix_info_t info;
	pmix_proc_t all;
	bool collect = true;
	pmix_status_t st;
	int rc;

	if (!ctx || ctx->observer || !ctx->zone)
		return -EINVAL;
	ep = (struct kr_pmix_ep){.version = KR_PMIX_EP_V1,
				 .node_id = kr_dct_self_node(ctx),
				 .dctn = ctx->zone->dctn,
				 .tenant = ctx->tenant,
				 .tag = ctx->launch.tag,
				 .addr = ctx->zone->port.addr};
	if (!ep.node_id) {
		KR_ERR("pmix", "the keeper has no node id (krpoold --node-id): nothing to publish");
		return -ENODEV;
	}
	pthread_mutex_lock(&g_pmix.lock);
	rc = pmix_join();
	if (rc)
		goto out;
	memset(&val, 0, sizeof(val));
	val.type = PMIX_BYTE_OBJECT;
	val.data.bo.bytes = (char *)&ep;
	val.data.bo.size = sizeof(ep);
	st = PMIx_Put(PMIX_GLOBAL, KR_PMIX_KEY, &val);
	if (st == PMIX_SUCCESS)
		st = PMIx_Commit();
	if (st == PMIX_SUCCESS) {
		/* every rank's record, collected to every rank */
		PMIX_PROC_LOAD(&all, g_pmix.me.nspace, PMIX_RANK_WILDCARD);
		PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
		st = PMIx_Fence(&all, 1, &info, 1);
		PMIX_INFO_DESTRUCT(&info);
	}
	if (st != PMIX_SUCCESS) {
		KR_ERR("pmix", "publishing this rank's endpoint: %s", PMIx_Error_string(st));
		rc = -EIO;
		goto out;
	}
	g_pmix.attach_id = ctx->attach_id;
out:
	pthread_mutex_unlock(&g_pmix.lock);
	return rc;
}

/* rank's record from the store, checked. 0, -ENOENT (none), -EPROTO (not ours). */
static int pmix_lookup(const struct kr_ctx *ctx, uint32_t rank, struct kr_pmix_ep *ep)
{
	pmix_value_t *val = NULL;
	pmix_proc_t peer;
	pmix_status_t st;
	int rc = 0;

	pthread_mutex_lock(&g_pmix.lock);
	if (!g_pmix.joined || g_pmix.attach_id != ctx->attach_id) {
		pthread_mutex_unlock(&g_pmix.lock);
		return -ENXIO; /* kr_pmix_exchange() first, for this attachment */
	}
	PMIX_PROC_LOAD(&peer, g_pmix.me.nspace, rank);
	pthread_mutex_unlock(&g_pmix.lock);
	st = PMIx_Get(&peer, KR_PMIX_KEY, NULL, 0, &val);
	if (st != PMIX_SUCCESS || !val)
		return -ENOENT;
	if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != sizeof(*ep))
		rc = -EPROTO;
	else
		memcpy(ep, val->data.bo.bytes, sizeof(*ep));
	PMIX_VALUE_RELEASE(val);
	if (!rc && (ep->version != KR_PMIX_EP_V1 || ep->tag != ctx->launch.tag ||
		    ep->dctn > 0xffffff || !ep->node_id))
		rc = -EPROTO; /* another launch's, another version, or garbage */
	return rc;
}

struct kr_vqp *kr_connect_rank(struct kr_ctx *ctx, uint32_t rank,
			       const struct kr_connect_opts *opts)
{
	struct kr_devx_dc_av av;
	struct kr_pmix_ep ep;
	struct kr_dct_rec rec;
	int rc;

	if (!ctx || ctx->observer || !ctx->zone || (opts && opts->port)) {
		errno = EINVAL;
		return NULL;
	}
	rc = pmix_lookup(ctx, rank, &ep);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	if (ep.node_id == kr_dct_self_node(ctx)) /* a rank of this node: our keeper's DCT */
		return kr_connect(ctx, KR_NODE_SELF, opts);
	rec = (struct kr_dct_rec){.node_id = ep.node_id,
				  .tenant = ep.tenant,
				  .dctn = ep.dctn,
				  .tag = ep.tag,
				  .addr = ep.addr};
	kr_vq_rec_av(ctx, &rec, &av);
	return kr_vq_connect_av(ctx, ep.node_id, &av, opts);
}
