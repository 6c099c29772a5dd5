/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Command execution: every PRM mailbox goes through these wrappers over the
 * backend's ops table. A command that completes with a bad mailbox status
 * becomes -EREMOTEIO with ctx->last_err filled in and one error logged (opcode,
 * status, syndrome, errno), as rdma-core's mlx5 provider reports them.
 */
#include <errno.h>
#include <stddef.h>

#include "devx/devx.h"
#include "common/kr_log.h"

/* Smallest mailbox: the 16-byte generic header every command starts with. */
#define KR_CMD_HDR_BYTES KR_PRM_BYTES(mbox_in)

static const char *kr_devx_cmd_op_str(uint16_t op)
{
	switch (op) {
	case KR_CMD_OP_QUERY_HCA_CAP:
		return "QUERY_HCA_CAP";
	case KR_CMD_OP_CREATE_MKEY:
		return "CREATE_MKEY";
	case KR_CMD_OP_QUERY_MKEY:
		return "QUERY_MKEY";
	case KR_CMD_OP_DESTROY_MKEY:
		return "DESTROY_MKEY";
	case KR_CMD_OP_CREATE_CQ:
		return "CREATE_CQ";
	case KR_CMD_OP_DESTROY_CQ:
		return "DESTROY_CQ";
	case KR_CMD_OP_QUERY_CQ:
		return "QUERY_CQ";
	case KR_CMD_OP_CREATE_QP:
		return "CREATE_QP";
	case KR_CMD_OP_DESTROY_QP:
		return "DESTROY_QP";
	case KR_CMD_OP_RST2INIT_QP:
		return "RST2INIT_QP";
	case KR_CMD_OP_INIT2RTR_QP:
		return "INIT2RTR_QP";
	case KR_CMD_OP_RTR2RTS_QP:
		return "RTR2RTS_QP";
	case KR_CMD_OP_RTS2RTS_QP:
		return "RTS2RTS_QP";
	case KR_CMD_OP_2ERR_QP:
		return "2ERR_QP";
	case KR_CMD_OP_2RST_QP:
		return "2RST_QP";
	case KR_CMD_OP_QUERY_QP:
		return "QUERY_QP";
	case KR_CMD_OP_CREATE_DCT:
		return "CREATE_DCT";
	case KR_CMD_OP_DESTROY_DCT:
		return "DESTROY_DCT";
	case KR_CMD_OP_DRAIN_DCT:
		return "DRAIN_DCT";
	case KR_CMD_OP_QUERY_DCT:
		return "QUERY_DCT";
	case KR_CMD_OP_ALLOC_PD:
		return "ALLOC_PD";
	case KR_CMD_OP_DEALLOC_PD:
		return "DEALLOC_PD";
	case KR_CMD_OP_ALLOC_UAR:
		return "ALLOC_UAR";
	case KR_CMD_OP_DEALLOC_UAR:
		return "DEALLOC_UAR";
	case KR_CMD_OP_CREATE_RMP:
		return "CREATE_RMP";
	case KR_CMD_OP_DESTROY_RMP:
		return "DESTROY_RMP";
	case KR_CMD_OP_QUERY_RMP:
		return "QUERY_RMP";
	default:
		return "UNKNOWN_CMD";
	}
}

/* The command that destroys what create_op created (for logs and last_err). */
static uint16_t kr_devx_cmd_destroy_op(uint16_t create_op)
{
	switch (create_op) {
	case KR_CMD_OP_CREATE_MKEY:
		return KR_CMD_OP_DESTROY_MKEY;
	case KR_CMD_OP_CREATE_CQ:
		return KR_CMD_OP_DESTROY_CQ;
	case KR_CMD_OP_CREATE_QP:
		return KR_CMD_OP_DESTROY_QP;
	case KR_CMD_OP_CREATE_DCT:
		return KR_CMD_OP_DESTROY_DCT;
	case KR_CMD_OP_ALLOC_PD:
		return KR_CMD_OP_DEALLOC_PD;
	case KR_CMD_OP_CREATE_RMP:
		return KR_CMD_OP_DESTROY_RMP;
	default:
		return create_op;
	}
}

/*
 * Firmware syndromes have no public table for ConnectX (the kernel logs them
 * as numbers too); a backend whose syndromes have names says them.
 */
const char *kr_devx_syndrome_name(const struct kr_devx_ctx *ctx, uint32_t syndrome)
{
	return ctx && ctx->ops->syndrome_str ? ctx->ops->syndrome_str(syndrome) : NULL;
}

const char *kr_devx_cmd_status_str(uint8_t status)
{
	switch (status) {
	case KR_CMD_STAT_OK:
		return "OK";
	case KR_CMD_STAT_INT_ERR:
		return "internal error";
	case KR_CMD_STAT_BAD_OP_ERR:
		return "bad operation";
	case KR_CMD_STAT_BAD_PARAM_ERR:
		return "bad parameter";
	case KR_CMD_STAT_BAD_SYS_STATE_ERR:
		return "bad system state";
	case KR_CMD_STAT_BAD_RES_ERR:
		return "bad resource";
	case KR_CMD_STAT_RES_BUSY:
		return "resource busy";
	case KR_CMD_STAT_LIM_ERR:
		return "limits exceeded";
	case KR_CMD_STAT_BAD_RES_STATE_ERR:
		return "bad resource state";
	case KR_CMD_STAT_IX_ERR:
		return "bad index";
	case KR_CMD_STAT_NO_RES_ERR:
		return "no resources";
	case KR_CMD_STAT_BAD_INP_LEN_ERR:
		return "bad input length";
	case KR_CMD_STAT_BAD_OUTP_LEN_ERR:
		return "bad output length";
	default:
		return "unknown status";
	}
}

/*
 * The one log line of a failed firmware command (as DPDK's DEVX_DRV_LOG):
 * opcode, status and syndrome (0 when the out mailbox has none, with what
 * they mean where known), errno.
 */
static void kr_devx_cmd_log(const struct kr_devx_ctx *ctx, uint16_t op, uint8_t status,
			    uint32_t syndrome, int err)
{
	const char *name = kr_devx_syndrome_name(ctx, syndrome);

	if (!status && !syndrome) /* refused before firmware answered (the kernel, the backend) */
		KR_ERR("devx", "%s failed: no status (not answered by firmware) errno %d",
		       kr_devx_cmd_op_str(op), err);
	else
		KR_ERR("devx", "%s failed: status 0x%x (%s) syndrome 0x%08x (%s) errno %d",
		       kr_devx_cmd_op_str(op), status, kr_devx_cmd_status_str(status), syndrome,
		       name ? name : "no public name: quote it to the NIC vendor", err);
}

/*
 * Turn a backend return code and the out mailbox into the caller's result.
 * A bad status (whatever the backend returned) is -EREMOTEIO with last_err set.
 */
static int kr_devx_cmd_check(struct kr_devx_ctx *ctx, const void *in, const void *out,
			     size_t outlen, int rc)
{
	uint16_t op = (uint16_t)KR_PRM_GET(mbox_in, in, opcode);
	uint8_t status = 0;
	uint32_t syndrome = 0;

	if (outlen >= KR_CMD_HDR_BYTES) {
		status = (uint8_t)KR_PRM_GET(mbox_out, out, status);
		syndrome = KR_PRM_GET(mbox_out, out, syndrome);
	}
	if (rc == -EREMOTEIO || status != KR_CMD_STAT_OK) {
		ctx->last_err.opcode = op;
		ctx->last_err.status = status;
		ctx->last_err.syndrome = syndrome;
		kr_devx_cmd_log(ctx, op, status, syndrome, EREMOTEIO);
		return -EREMOTEIO;
	}
	if (rc < 0) {
		kr_devx_cmd_log(ctx, op, 0, 0, -rc);
		return rc;
	}
	return 0;
}

static bool kr_devx_cmd_args_ok(const void *in, size_t inlen, const void *out, size_t outlen)
{
	return in && out && inlen >= KR_CMD_HDR_BYTES && outlen >= KR_CMD_HDR_BYTES;
}

/*
 * kr_devx_cmd() - run a general command (no object). Returns 0, -EINVAL (bad
 * arguments), -EREMOTEIO (bad status; ctx->last_err set) or the backend's errno.
 */
int kr_devx_cmd(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out, size_t outlen)
{
	int rc;

	if (!ctx || !kr_devx_cmd_args_ok(in, inlen, out, outlen))
		return -EINVAL;
	rc = ctx->ops->general_cmd(ctx, in, inlen, out, outlen);
	return kr_devx_cmd_check(ctx, in, out, outlen, rc);
}

/*
 * kr_devx_cmd_create() - run a create command; *obj is the new object on
 * success, NULL otherwise. Errors as kr_devx_cmd().
 */
int kr_devx_cmd_create(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
		       size_t outlen, struct kr_devx_obj **obj)
{
	int backend_rc, rc;

	if (!obj)
		return -EINVAL;
	*obj = NULL;
	if (!ctx || !kr_devx_cmd_args_ok(in, inlen, out, outlen))
		return -EINVAL;
	backend_rc = ctx->ops->obj_create(ctx, in, inlen, out, outlen, obj);
	rc = kr_devx_cmd_check(ctx, in, out, outlen, backend_rc);
	if (rc) {
		/* The backend reported success with a bad status: the object exists. */
		if (backend_rc == 0 && *obj)
			ctx->ops->obj_destroy(*obj);
		*obj = NULL;
		return rc;
	}
	if (!*obj)
		return -EIO;
	if (!(*obj)->create_op)
		(*obj)->create_op = (uint16_t)KR_PRM_GET(mbox_in, in, opcode);
	return 0;
}

/* kr_devx_cmd_modify() - run a modify command on obj. Errors as kr_devx_cmd(). */
int kr_devx_cmd_modify(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
		       size_t outlen)
{
	int rc;

	if (!obj || !kr_devx_cmd_args_ok(in, inlen, out, outlen))
		return -EINVAL;
	rc = obj->ctx->ops->obj_modify(obj, in, inlen, out, outlen);
	return kr_devx_cmd_check(obj->ctx, in, out, outlen, rc);
}

/* kr_devx_cmd_query() - run a query command on obj. Errors as kr_devx_cmd(). */
int kr_devx_cmd_query(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
		      size_t outlen)
{
	int rc;

	if (!obj || !kr_devx_cmd_args_ok(in, inlen, out, outlen))
		return -EINVAL;
	rc = obj->ctx->ops->obj_query(obj, in, inlen, out, outlen);
	return kr_devx_cmd_check(obj->ctx, in, out, outlen, rc);
}

/*
 * kr_devx_cmd_destroy() - destroy obj (the backend builds the destroy command).
 * On success obj is freed. On failure obj stays valid: -EINVAL, -EREMOTEIO
 * (ctx->last_err has the destroy opcode; the status is not available), -EBUSY
 * or another backend errno.
 */
int kr_devx_cmd_destroy(struct kr_devx_obj *obj)
{
	struct kr_devx_ctx *ctx;
	uint16_t op;
	int rc;

	if (!obj)
		return -EINVAL;
	ctx = obj->ctx;
	op = kr_devx_cmd_destroy_op(obj->create_op);
	rc = ctx->ops->obj_destroy(obj);
	if (rc) {
		if (rc == -EREMOTEIO) {
			ctx->last_err.opcode = op;
			ctx->last_err.status = 0;
			ctx->last_err.syndrome = 0;
		}
		kr_devx_cmd_log(ctx, op, 0, 0, -rc);
	}
	return rc;
}
