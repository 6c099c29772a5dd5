/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DC targets: CREATE_DCT (active at once, receives into an SRQ, completions on
 * one CQ, dispatched by user_index), DRAIN_DCT, QUERY_DCT and destroy. A DCT
 * is named to initiators by its number and 64-bit access key.
 */
#include <errno.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_log.h"

#define KR_DCT_RNR_MAX 31u

static int devx_dct_check(struct kr_devx_ctx *ctx, const struct kr_devx_dct_attr *attr)
{
	if (!ctx->caps.dct)
		return -EOPNOTSUPP;
	if (!attr->cq || !attr->cq->obj || !attr->srq || !attr->srq->obj)
		return -EINVAL;
	if (attr->port == 0 || (ctx->caps.num_ports && attr->port > ctx->caps.num_ports))
		return -EINVAL;
	if (attr->mtu < KR_MTU_256 || attr->mtu > KR_MTU_4K || attr->min_rnr_nak > KR_DCT_RNR_MAX)
		return -EINVAL;
	if (attr->access & ~(uint32_t)(KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE |
				       KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC))
		return -EINVAL;
	return 0;
}

static void devx_dct_build(uint8_t *in, const struct kr_devx_ctx *ctx,
			 const struct kr_devx_dct_attr *attr, uint32_t user_index)
{
	void *dctc = KR_PRM_ADDR(create_dct_in, in, dct_context_entry);

	KR_PRM_SET(create_dct_in, in, opcode, KR_CMD_OP_CREATE_DCT);
	KR_PRM_SET(dctc, dctc, pd, attr->pdn);
	KR_PRM_SET(dctc, dctc, cqn, attr->cq->cqn);
	KR_PRM_SET(dctc, dctc, srqn_xrqn, attr->srq->srqn);
	KR_PRM_SET(dctc, dctc, user_index, user_index);
	KR_PRM_SET64(dctc, dctc, dc_access_key, attr->dc_key);
	KR_PRM_SET(dctc, dctc, rre, !!(attr->access & KR_ACCESS_REMOTE_READ));
	KR_PRM_SET(dctc, dctc, rwe, !!(attr->access & KR_ACCESS_REMOTE_WRITE));
	if (attr->access & KR_ACCESS_REMOTE_ATOMIC) {
		KR_PRM_SET(dctc, dctc, rae, 1);
		KR_PRM_SET(dctc, dctc, atomic_mode, KR_QPC_ATOMIC_MODE_IB_SPEC);
	}
	KR_PRM_SET(dctc, dctc, mtu, attr->mtu);
	KR_PRM_SET(dctc, dctc, port, attr->port);
	KR_PRM_SET(dctc, dctc, min_rnr_nak, attr->min_rnr_nak);
	KR_PRM_SET(dctc, dctc, my_addr_index, attr->gid_index);
	KR_PRM_SET(dctc, dctc, hop_limit, attr->hop_limit);
	/* its responses' quality of service: UCX sets tclass always and the
	 * DSCP on RoCE v2; the Ethernet priority as the kernel's DCT path */
	KR_PRM_SET(dctc, dctc, tclass, attr->tclass);
	if (ctx->caps.port_type != KR_PORT_TYPE_IB) {
		KR_PRM_SET(dctc, dctc, eth_prio, attr->sl & 0x7);
		if (ctx->port.gid_type != KR_GID_TYPE_ROCE_V1)
			KR_PRM_SET(dctc, dctc, dscp, attr->tclass >> 2);
	}
}

/*
 * kr_devx_dct_create() - create a DCT. Returns 0, -EINVAL (NULL arguments,
 * missing CQ or SRQ, bad port, MTU, RNR timer or access bits), -EOPNOTSUPP (no
 * DC support), -ENOMEM, -EREMOTEIO (ctx->last_err set) or a backend errno.
 */
int kr_devx_dct_create(struct kr_devx_ctx *ctx, const struct kr_devx_dct_attr *attr,
		       struct kr_devx_dct *dct)
{
	uint8_t in[KR_PRM_BYTES(create_dct_in)] = {0};
	uint8_t out[KR_PRM_BYTES(create_dct_out)] = {0};
	int rc;

	if (!ctx || !attr || !dct)
		return -EINVAL;
	rc = devx_dct_check(ctx, attr);
	if (rc)
		return rc;
	memset(dct, 0, sizeof(*dct));
	rc = kr_devx_rsc_alloc(ctx, KR_DEVX_RSC_DCT, dct);
	if (rc < 0)
		return rc;
	dct->user_index = (uint32_t)rc;

	devx_dct_build(in, ctx, attr, dct->user_index);
	rc = kr_devx_cmd_create(ctx, in, sizeof(in), out, sizeof(out), &dct->obj);
	if (rc)
		goto err_free_rsc;
	dct->ctx = ctx;
	dct->dctn = KR_PRM_GET(create_dct_out, out, dctn);
	dct->dc_key = attr->dc_key;
	dct->srq = attr->srq;
	dct->cq = attr->cq;
	return 0;

err_free_rsc:
	kr_devx_rsc_free(ctx, dct->user_index);
	memset(dct, 0, sizeof(*dct));
	return rc;
}

/*
 * kr_devx_dct_drain() - start draining: the DCT stops accepting new requests
 * and reaches DRAINED once outstanding ones finish (see kr_devx_dct_query).
 * Returns 0, -EINVAL, -EREMOTEIO (ctx->last_err set) or a backend errno.
 */
int kr_devx_dct_drain(struct kr_devx_dct *dct)
{
	uint8_t in[KR_PRM_BYTES(drain_dct_in)] = {0};
	uint8_t out[KR_PRM_BYTES(drain_dct_out)] = {0};

	if (!dct || !dct->obj)
		return -EINVAL;
	KR_PRM_SET(drain_dct_in, in, opcode, KR_CMD_OP_DRAIN_DCT);
	KR_PRM_SET(drain_dct_in, in, dctn, dct->dctn);
	/* DEVX treats DRAIN_DCT as a modify of the DCT object (kernel devx.c). */
	return kr_devx_cmd_modify(dct->obj, in, sizeof(in), out, sizeof(out));
}

/* QUERY_DCT into out (query_dct_out). 0, -EREMOTEIO (ctx->last_err set) or a backend errno. */
static int dct_query(struct kr_devx_dct *dct, uint8_t *out, size_t outlen)
{
	uint8_t in[KR_PRM_BYTES(query_dct_in)] = {0};

	KR_PRM_SET(query_dct_in, in, opcode, KR_CMD_OP_QUERY_DCT);
	KR_PRM_SET(query_dct_in, in, dctn, dct->dctn);
	return kr_devx_cmd_query(dct->obj, in, sizeof(in), out, outlen);
}

/*
 * kr_devx_dct_query() - *state = KR_DCTC_STATE_*. Returns 0, -EINVAL,
 * -EREMOTEIO (ctx->last_err set) or a backend errno.
 */
int kr_devx_dct_query(struct kr_devx_dct *dct, uint8_t *state)
{
	uint8_t out[KR_PRM_BYTES(query_dct_out)] = {0};
	int rc;

	if (!dct || !dct->obj || !state)
		return -EINVAL;
	rc = dct_query(dct, out, sizeof(out));
	if (!rc)
		*state =
		    KR_PRM_GET(dctc, KR_PRM_ADDR(query_dct_out, out, dct_context_entry), state);
	return rc;
}

/*
 * kr_devx_dct_key_violations() - *count = requests the DCT dropped for a
 * wrong DC access key since it was created (dctc.dc_access_key_violation_count).
 * Returns 0, -EINVAL, -EREMOTEIO (ctx->last_err set) or a backend errno.
 */
int kr_devx_dct_key_violations(struct kr_devx_dct *dct, uint32_t *count)
{
	uint8_t out[KR_PRM_BYTES(query_dct_out)] = {0};
	int rc;

	if (!dct || !dct->obj || !count)
		return -EINVAL;
	rc = dct_query(dct, out, sizeof(out));
	if (!rc)
		*count = KR_PRM_GET(dctc, KR_PRM_ADDR(query_dct_out, out, dct_context_entry),
				    dc_access_key_violation_count);
	return rc;
}

/*
 * kr_devx_dct_destroy() - destroy the DCT and release its user_index. Returns
 * 0, -EINVAL, or the errno of the destroy (dct stays valid then).
 */
int kr_devx_dct_destroy(struct kr_devx_dct *dct)
{
	int rc;

	if (!dct || !dct->obj)
		return -EINVAL;
	rc = kr_devx_cmd_destroy(dct->obj);
	if (rc)
		return rc;
	kr_devx_rsc_free(dct->ctx, dct->user_index);
	memset(dct, 0, sizeof(*dct));
	return 0;
}
