/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RC QPs and DC initiators, control path: buffer layout, CREATE_QP, the
 * RST->INIT->RTR->RTS transitions, 2ERR, 2RST, QUERY_QP and destroy. Posting
 * WQEs is in devx_wqe.c.
 *
 * Buffer (one umem, 4096-byte aligned): [RQ][SQ][64-byte dbrec area].
 * The device places the SQ right after the RQ (RQ WQEs << stride bytes), so the
 * RQ is sized to at least one 64-byte WQEBB, as rdma-core does; dbrec[0] is the
 * receive counter, dbrec[1] the send counter (MLX5_RCV_DBR, MLX5_SND_DBR).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_math.h"
#include "common/kr_log.h"

#define KR_WQEBB_BYTES	      64u
#define KR_DBREC_BYTES	      64u
#define KR_RQ_MIN_STRIDE      16u /* one data segment */
#define KR_QPC_LOG_SIZE_MAX   15u /* qpc.log_sq_size / log_rq_size are 4 bits */
#define KR_QPC_LOG_STRIDE_MAX 7u  /* qpc.log_rq_stride is 3 bits */
#define KR_PSN_MASK	      0xffffffu

struct kr_qp_layout {
	uint32_t rq_cnt;	/* receive WQEs; 0 = no RQ */
	uint32_t rq_log_stride; /* log2(bytes per receive WQE) */
	size_t sq_off;
	size_t dbr_off;
	size_t size;
};

static uint32_t kr_roundup_pow2(uint32_t v)
{
	return v <= 1 ? 1 : 1u << (32 - __builtin_clz(v - 1));
}

static void kr_qp_layout(const struct kr_devx_qp_attr *attr, struct kr_qp_layout *l)
{
	size_t rq_bytes = 0;

	memset(l, 0, sizeof(*l));
	if (attr->rq_wqe) {
		uint32_t stride = kr_roundup_pow2(attr->max_recv_sge * 16u);

		if (stride < KR_RQ_MIN_STRIDE)
			stride = KR_RQ_MIN_STRIDE;
		l->rq_log_stride = kr_log2(stride);
		l->rq_cnt = attr->rq_wqe;
		if ((size_t)l->rq_cnt * stride < KR_WQEBB_BYTES)
			l->rq_cnt = KR_WQEBB_BYTES / stride;
		rq_bytes = (size_t)l->rq_cnt << l->rq_log_stride;
	}
	l->sq_off = kr_align_up(rq_bytes, KR_WQEBB_BYTES);
	l->dbr_off = l->sq_off + (size_t)attr->sq_wqebb * KR_WQEBB_BYTES;
	l->size = kr_align_up(l->dbr_off + KR_DBREC_BYTES, KR_DEVX_QBUF_ALIGN);
}

/* kr_devx_qp_buf_size() - bytes of the QP buffer for attr (0 if attr is NULL). */
size_t kr_devx_qp_buf_size(const struct kr_devx_qp_attr *attr)
{
	struct kr_qp_layout l;

	if (!attr)
		return 0;
	kr_qp_layout(attr, &l);
	return l.size;
}

static int kr_qp_check(struct kr_devx_ctx *ctx, const struct kr_devx_qp_attr *attr)
{
	const struct kr_devx_caps *caps = &ctx->caps;
	uint32_t log_max =
	    caps->log_max_qp_sz < KR_QPC_LOG_SIZE_MAX ? caps->log_max_qp_sz : KR_QPC_LOG_SIZE_MAX;
	struct kr_qp_layout l;

	if (attr->type != KR_DEVX_QP_RC && attr->type != KR_DEVX_QP_DCI)
		return -EINVAL;
	if (attr->type == KR_DEVX_QP_DCI && !caps->dct)
		return -EOPNOTSUPP;
	if (!attr->send_cq || !attr->send_cq->obj || !attr->uar)
		return -EINVAL;
	if (!kr_is_pow2(attr->sq_wqebb) || kr_log2(attr->sq_wqebb) > log_max)
		return -EINVAL;
	if (attr->type == KR_DEVX_QP_DCI && (attr->rq_wqe || attr->srq))
		return -EINVAL;
	if (attr->srq && (attr->rq_wqe || !attr->srq->obj))
		return -EINVAL;
	if ((attr->srq || attr->rq_wqe) && (!attr->recv_cq || !attr->recv_cq->obj))
		return -EINVAL;
	if (attr->rq_wqe) {
		if (!kr_is_pow2(attr->rq_wqe) || attr->max_recv_sge == 0 ||
		    attr->max_recv_sge > (KR_RQ_MIN_STRIDE << KR_QPC_LOG_STRIDE_MAX) / 16u)
			return -EINVAL;
		kr_qp_layout(attr, &l);
		if ((1u << l.rq_log_stride) > caps->max_wqe_sz_rq || kr_log2(l.rq_cnt) > log_max)
			return -EINVAL;
	}
	if (attr->buf) {
		if (((uintptr_t)attr->buf & (KR_DEVX_QBUF_ALIGN - 1)) ||
		    attr->buf_len < kr_devx_qp_buf_size(attr))
			return -EINVAL;
	}
	return 0;
}

static void kr_qp_build_create(uint8_t *in, const struct kr_devx_caps *caps,
			       const struct kr_devx_qp_attr *attr, const struct kr_qp_layout *l,
			       uint32_t umem_id, uint32_t user_index)
{
	void *qpc = KR_PRM_ADDR(create_qp_in, in, qpc);
	uint32_t rq_type;

	if (attr->srq)
		rq_type = KR_QPC_RQ_TYPE_SRQ_RMP_XRC;
	else if (l->rq_cnt)
		rq_type = KR_QPC_RQ_TYPE_REGULAR;
	else
		rq_type = KR_QPC_RQ_TYPE_ZERO_SIZE_RQ;

	KR_PRM_SET(create_qp_in, in, opcode, KR_CMD_OP_CREATE_QP);
	KR_PRM_SET(create_qp_in, in, wq_umem_id, umem_id);
	KR_PRM_SET64(create_qp_in, in, wq_umem_offset, 0);
	KR_PRM_SET(create_qp_in, in, wq_umem_valid, 1);

	KR_PRM_SET(qpc, qpc, st, attr->type == KR_DEVX_QP_DCI ? KR_QPC_ST_DCI : KR_QPC_ST_RC);
	KR_PRM_SET(qpc, qpc, pm_state, KR_QPC_PM_STATE_MIGRATED);
	KR_PRM_SET(qpc, qpc, pd, attr->pdn);
	KR_PRM_SET(qpc, qpc, uar_page, attr->uar->page_id);
	KR_PRM_SET(qpc, qpc, user_index, user_index);
	KR_PRM_SET(qpc, qpc, log_page_size, 0); /* 4 KiB pages: log2(4096) - 12 */
	KR_PRM_SET(qpc, qpc, log_sq_size, kr_log2(attr->sq_wqebb));
	KR_PRM_SET(qpc, qpc, ts_format, kr_devx_ts_format(caps));
	KR_PRM_SET(qpc, qpc, rq_type, rq_type);
	if (l->rq_cnt) {
		KR_PRM_SET(qpc, qpc, log_rq_size, kr_log2(l->rq_cnt));
		KR_PRM_SET(qpc, qpc, log_rq_stride, l->rq_log_stride - 4);
	}
	if (attr->srq)
		KR_PRM_SET(qpc, qpc, srqn_rmpn_xrqn, attr->srq->srqn);
	KR_PRM_SET(qpc, qpc, cqn_snd, attr->send_cq->cqn);
	KR_PRM_SET(qpc, qpc, cqn_rcv, attr->recv_cq ? attr->recv_cq->cqn : attr->send_cq->cqn);
	KR_PRM_SET(qpc, qpc, dbr_umem_valid, 1);
	KR_PRM_SET(qpc, qpc, dbr_umem_id, umem_id);
	KR_PRM_SET64(qpc, qpc, dbr_addr, l->dbr_off);
}

/*
 * kr_devx_qp_create() - create an RC QP or a DCI in RST. Returns 0, -EINVAL
 * (NULL arguments, bad type, sizes not powers of two or above the device
 * limits, missing CQ/UAR, an RQ or SRQ on a DCI, both an RQ and an SRQ,
 * misaligned or short buffer), -EOPNOTSUPP (DCI without DC support), -ENOMEM,
 * -EREMOTEIO (ctx->last_err set) or a backend errno.
 */
int kr_devx_qp_create(struct kr_devx_ctx *ctx, const struct kr_devx_qp_attr *attr,
		      struct kr_devx_qp *qp)
{
	uint8_t in[KR_PRM_BYTES(create_qp_in)] = {0};
	uint8_t out[KR_PRM_BYTES(create_qp_out)] = {0};
	struct kr_qp_layout l;
	uint8_t *buf;
	void *qbuf;
	int rc;

	if (!ctx || !attr || !qp)
		return -EINVAL;
	rc = kr_qp_check(ctx, attr);
	if (rc)
		return rc;
	kr_qp_layout(attr, &l);
	memset(qp, 0, sizeof(*qp));

	qp->sq_wrid = calloc(attr->sq_wqebb, sizeof(*qp->sq_wrid));
	qp->sq_wqe_next = calloc(attr->sq_wqebb, sizeof(*qp->sq_wqe_next));
	if (l.rq_cnt)
		qp->rq_wrid = calloc(l.rq_cnt, sizeof(*qp->rq_wrid));
	if (!qp->sq_wrid || !qp->sq_wqe_next || (l.rq_cnt && !qp->rq_wrid)) {
		rc = -ENOMEM;
		goto err_free_arrays;
	}
	rc = kr_devx_qmem_alloc(ctx, attr->buf, l.size, "QP", &qbuf, &qp->own_buf, &qp->umem);
	if (rc)
		goto err_free_arrays;
	buf = qbuf;
	rc = kr_devx_rsc_alloc(ctx, KR_DEVX_RSC_QP, qp);
	if (rc < 0)
		goto err_free_qmem;
	qp->user_index = (uint32_t)rc;

	kr_qp_build_create(in, &ctx->caps, attr, &l, qp->umem->id, qp->user_index);
	rc = kr_devx_cmd_create(ctx, in, sizeof(in), out, sizeof(out), &qp->obj);
	if (rc)
		goto err_free_rsc;

	qp->ctx = ctx;
	qp->type = attr->type;
	qp->qpn = KR_PRM_GET(create_qp_out, out, qpn);
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->uar = attr->uar;
	qp->buf = buf;
	qp->dbrec = (volatile uint32_t *)(buf + l.dbr_off);
	qp->sq_buf = buf + l.sq_off;
	qp->sq_wqebb_cnt = attr->sq_wqebb;
	if (l.rq_cnt) {
		qp->rq_buf = buf;
		qp->rq_wqe_cnt = l.rq_cnt;
		qp->rq_log_stride = l.rq_log_stride;
	}
	return 0;

err_free_rsc:
	kr_devx_rsc_free(ctx, qp->user_index);
err_free_qmem:
	kr_devx_qmem_free(ctx, &qp->umem, buf, qp->own_buf, "QP");
err_free_arrays:
	free(qp->rq_wrid);
	free(qp->sq_wqe_next);
	free(qp->sq_wrid);
	memset(qp, 0, sizeof(*qp));
	return rc;
}

/*
 * kr_devx_qp_destroy() - destroy the QP, then release its user_index, umem,
 * buffer and arrays. Returns 0, -EINVAL, or the errno of the step that failed
 * (the QP failing to be destroyed leaves qp valid).
 */
int kr_devx_qp_destroy(struct kr_devx_qp *qp)
{
	int rc;

	if (!qp || !qp->ctx)
		return -EINVAL;
	if (qp->obj) {
		rc = kr_devx_cmd_destroy(qp->obj);
		if (rc)
			return rc;
		qp->obj = NULL;
		kr_devx_rsc_free(qp->ctx, qp->user_index);
		qp->user_index = 0;
	}
	rc = kr_devx_qmem_free(qp->ctx, &qp->umem, qp->buf, qp->own_buf, "QP");
	if (rc)
		return rc;
	free(qp->rq_wrid);
	free(qp->sq_wqe_next);
	free(qp->sq_wrid);
	memset(qp, 0, sizeof(*qp));
	return 0;
}

static void kr_qp_set_rgid_path(void *ads, const struct kr_devx_ctx *ctx,
				const struct kr_devx_qp_conn *conn)
{
	memcpy(KR_PRM_ADDR(ads, ads, rgid_rip), conn->rgid, 16);
	memcpy(KR_PRM_ADS_RMAC(ads), conn->rmac, sizeof(conn->rmac));
	KR_PRM_SET(ads, ads, src_addr_index, conn->sgid_index);
	KR_PRM_SET(ads, ads, hop_limit, conn->hop_limit);
	/* RoCE: MAC and UDP source port, ads.grh 0 (every RoCE packet has a GRH; kernel
	 * mlx5_set_path); InfiniBand: the peer's LID, GRH on (krcore routes globally) */
	if (ctx->caps.port_type == KR_PORT_TYPE_IB) {
		KR_PRM_SET(ads, ads, rlid, conn->rlid);
		KR_PRM_SET(ads, ads, grh, 1);
	} else {
		KR_PRM_SET(ads, ads, udp_sport, conn->udp_sport);
	}
}

/*
 * The path's quality of service, as the kernel's mlx5_set_path and UCX's
 * DEVX QPs set it: InfiniBand the SL; Ethernet the priority (PCP) and, on
 * RoCE v2, the DSCP of the traffic class; the GRH traffic class on both.
 */
static void kr_qp_set_qos(void *ads, const struct kr_devx_ctx *ctx,
			  const struct kr_devx_qp_conn *conn)
{
	KR_PRM_SET(ads, ads, tclass, conn->tclass);
	if (ctx->caps.port_type == KR_PORT_TYPE_IB) {
		KR_PRM_SET(ads, ads, sl, conn->sl & 0xf);
		return;
	}
	KR_PRM_SET(ads, ads, eth_prio, conn->sl & 0x7);
	if (ctx->port.gid_type != KR_GID_TYPE_ROCE_V1)
		KR_PRM_SET(ads, ads, dscp, conn->tclass >> 2);
}

static int kr_qp_check_conn(const struct kr_devx_qp *qp, enum kr_devx_qp_transition tr,
			    const struct kr_devx_qp_conn *conn)
{
	const struct kr_devx_caps *caps = &qp->ctx->caps;
	bool dci = qp->type == KR_DEVX_QP_DCI;
	uint32_t ra_max;

	if (tr == KR_QP_2ERR || tr == KR_QP_2RST)
		return 0;
	if (!conn || conn->port == 0 || (caps->num_ports && conn->port > caps->num_ports))
		return -EINVAL;
	switch (tr) {
	case KR_QP_RST2INIT:
		return 0;
	case KR_QP_INIT2RTR:
		if (conn->mtu < KR_MTU_256 || conn->mtu > KR_MTU_4K)
			return -EINVAL;
		if (dci)
			return 0;
		if (conn->remote_qpn > KR_PSN_MASK || conn->rq_psn > KR_PSN_MASK ||
		    conn->min_rnr_nak > 31 || conn->log_rra_max > 7 ||
		    conn->log_rra_max > caps->log_max_ra_res_qp)
			return -EINVAL;
		return 0;
	case KR_QP_RTR2RTS:
		ra_max = dci ? caps->log_max_ra_req_dc : caps->log_max_ra_req_qp;
		if (conn->retry_count > 7 || conn->rnr_retry > 7 || conn->ack_timeout > 31 ||
		    conn->sq_psn > KR_PSN_MASK || conn->log_sra_max > 7 ||
		    conn->log_sra_max > ra_max)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

static void kr_qp_build_rst2init(uint8_t *in, const struct kr_devx_qp *qp,
				 const struct kr_devx_qp_conn *conn)
{
	void *qpc = KR_PRM_ADDR(rst2init_qp_in, in, qpc);
	void *ads = KR_PRM_ADDR(qpc, qpc, primary_address_path);

	KR_PRM_SET(rst2init_qp_in, in, opcode, KR_CMD_OP_RST2INIT_QP);
	KR_PRM_SET(rst2init_qp_in, in, qpn, qp->qpn);
	KR_PRM_SET(qpc, qpc, pm_state, KR_QPC_PM_STATE_MIGRATED);
	KR_PRM_SET(ads, ads, vhca_port_num, conn->port);
	if (qp->type == KR_DEVX_QP_RC) {
		KR_PRM_SET(qpc, qpc, rre, !!(conn->access & KR_ACCESS_REMOTE_READ));
		KR_PRM_SET(qpc, qpc, rwe, !!(conn->access & KR_ACCESS_REMOTE_WRITE));
		if (conn->access & KR_ACCESS_REMOTE_ATOMIC) {
			KR_PRM_SET(qpc, qpc, rae, 1);
			KR_PRM_SET(qpc, qpc, atomic_mode, KR_QPC_ATOMIC_MODE_IB_SPEC);
		}
	}
}

static void kr_qp_build_init2rtr(uint8_t *in, const struct kr_devx_qp *qp,
				 const struct kr_devx_qp_conn *conn)
{
	void *qpc = KR_PRM_ADDR(init2rtr_qp_in, in, qpc);
	void *ads = KR_PRM_ADDR(qpc, qpc, primary_address_path);

	KR_PRM_SET(init2rtr_qp_in, in, opcode, KR_CMD_OP_INIT2RTR_QP);
	KR_PRM_SET(init2rtr_qp_in, in, qpn, qp->qpn);
	KR_PRM_SET(qpc, qpc, mtu, conn->mtu);
	KR_PRM_SET(qpc, qpc, log_msg_max, qp->ctx->caps.log_max_msg);
	KR_PRM_SET(ads, ads, vhca_port_num, conn->port);
	kr_qp_set_qos(ads, qp->ctx, conn);
	if (qp->type == KR_DEVX_QP_DCI) {
		/* A DCI's requester atomics are enabled here, as UCX's DEVX DCIs do. */
		if (conn->access & KR_ACCESS_REMOTE_ATOMIC) {
			KR_PRM_SET(init2rtr_qp_in, in, opt_param_mask, KR_QP_OPTPAR_RAE);
			KR_PRM_SET(qpc, qpc, rae, 1);
			KR_PRM_SET(qpc, qpc, atomic_mode, KR_QPC_ATOMIC_MODE_IB_SPEC);
		}
		return;
	}
	KR_PRM_SET(qpc, qpc, remote_qpn, conn->remote_qpn);
	KR_PRM_SET(qpc, qpc, next_rcv_psn, conn->rq_psn);
	KR_PRM_SET(qpc, qpc, min_rnr_nak, conn->min_rnr_nak);
	KR_PRM_SET(qpc, qpc, log_rra_max, conn->log_rra_max);
	kr_qp_set_rgid_path(ads, qp->ctx, conn);
}

static void kr_qp_build_rtr2rts(uint8_t *in, const struct kr_devx_qp *qp,
				const struct kr_devx_qp_conn *conn)
{
	void *qpc = KR_PRM_ADDR(rtr2rts_qp_in, in, qpc);
	void *ads = KR_PRM_ADDR(qpc, qpc, primary_address_path);

	KR_PRM_SET(rtr2rts_qp_in, in, opcode, KR_CMD_OP_RTR2RTS_QP);
	KR_PRM_SET(rtr2rts_qp_in, in, qpn, qp->qpn);
	KR_PRM_SET(qpc, qpc, retry_count, conn->retry_count);
	KR_PRM_SET(qpc, qpc, rnr_retry, conn->rnr_retry);
	KR_PRM_SET(qpc, qpc, next_send_psn, conn->sq_psn);
	KR_PRM_SET(qpc, qpc, log_sra_max, conn->log_sra_max);
	KR_PRM_SET(qpc, qpc, log_ack_req_freq, 0);
	KR_PRM_SET(ads, ads, ack_timeout, conn->ack_timeout);
	KR_PRM_SET(ads, ads, vhca_port_num, conn->port);
}

/* Back to the state of a fresh QP: nothing posted, nothing published. */
static void kr_qp_reset_rings(struct kr_devx_qp *qp)
{
	qp->sq_pi = 0;
	qp->sq_ci = 0;
	qp->sq_db_pi = 0;
	qp->sq_last_ctrl = NULL;
	qp->rq_pi = 0;
	qp->rq_ci = 0;
	qp->dbrec[MLX5_RCV_DBR] = 0;
	qp->dbrec[MLX5_SND_DBR] = 0;
}

/*
 * kr_devx_qp_modify() - one state transition. conn is required except for
 * 2ERR and 2RST. Returns 0, -EINVAL (NULL qp, bad transition, missing conn or
 * a value out of its field's range or above the device limit), -EREMOTEIO
 * (illegal in the current state, among others; ctx->last_err set) or a
 * backend errno.
 */
int kr_devx_qp_modify(struct kr_devx_qp *qp, enum kr_devx_qp_transition tr,
		      const struct kr_devx_qp_conn *conn)
{
	/* All transition mailboxes share one size; the small ones fit inside. */
	uint8_t in[KR_PRM_BYTES(rst2init_qp_in)] = {0};
	uint8_t out[KR_PRM_BYTES(rst2init_qp_out)] = {0};
	size_t inlen;
	int rc;

	_Static_assert(KR_PRM_BYTES(init2rtr_qp_in) == sizeof(in) &&
			   KR_PRM_BYTES(rtr2rts_qp_in) == sizeof(in),
		       "transition mailboxes differ in size");
	if (!qp || !qp->obj)
		return -EINVAL;
	rc = kr_qp_check_conn(qp, tr, conn);
	if (rc)
		return rc;

	switch (tr) {
	case KR_QP_RST2INIT:
		kr_qp_build_rst2init(in, qp, conn);
		inlen = KR_PRM_BYTES(rst2init_qp_in);
		break;
	case KR_QP_INIT2RTR:
		kr_qp_build_init2rtr(in, qp, conn);
		inlen = KR_PRM_BYTES(init2rtr_qp_in);
		break;
	case KR_QP_RTR2RTS:
		kr_qp_build_rtr2rts(in, qp, conn);
		inlen = KR_PRM_BYTES(rtr2rts_qp_in);
		break;
	case KR_QP_2ERR:
		KR_PRM_SET(qp_2err_in, in, opcode, KR_CMD_OP_2ERR_QP);
		KR_PRM_SET(qp_2err_in, in, qpn, qp->qpn);
		inlen = KR_PRM_BYTES(qp_2err_in);
		break;
	case KR_QP_2RST:
		KR_PRM_SET(qp_2rst_in, in, opcode, KR_CMD_OP_2RST_QP);
		KR_PRM_SET(qp_2rst_in, in, qpn, qp->qpn);
		inlen = KR_PRM_BYTES(qp_2rst_in);
		break;
	default:
		return -EINVAL;
	}
	rc = kr_devx_cmd_modify(qp->obj, in, inlen, out, sizeof(out));
	if (rc)
		return rc;
	if (tr == KR_QP_2RST)
		kr_qp_reset_rings(qp);
	return 0;
}

/* kr_devx_qp_connect() - RST->INIT->RTR->RTS. Errors as kr_devx_qp_modify(). */
int kr_devx_qp_connect(struct kr_devx_qp *qp, const struct kr_devx_qp_conn *conn)
{
	int rc;

	rc = kr_devx_qp_modify(qp, KR_QP_RST2INIT, conn);
	if (rc)
		return rc;
	rc = kr_devx_qp_modify(qp, KR_QP_INIT2RTR, conn);
	if (rc)
		return rc;
	return kr_devx_qp_modify(qp, KR_QP_RTR2RTS, conn);
}

/*
 * kr_devx_qp_query() - state, PSNs and the device's SQ counter. Returns 0,
 * -EINVAL, -EREMOTEIO (ctx->last_err set) or a backend errno.
 */
int kr_devx_qp_query(struct kr_devx_qp *qp, struct kr_devx_qp_info *info)
{
	uint8_t in[KR_PRM_BYTES(query_qp_in)] = {0};
	uint8_t out[KR_PRM_BYTES(query_qp_out)] = {0};
	void *qpc;
	int rc;

	if (!qp || !qp->obj || !info)
		return -EINVAL;
	KR_PRM_SET(query_qp_in, in, opcode, KR_CMD_OP_QUERY_QP);
	KR_PRM_SET(query_qp_in, in, qpn, qp->qpn);
	rc = kr_devx_cmd_query(qp->obj, in, sizeof(in), out, sizeof(out));
	if (rc)
		return rc;
	qpc = KR_PRM_ADDR(query_qp_out, out, qpc);
	memset(info, 0, sizeof(*info));
	info->state = KR_PRM_GET(qpc, qpc, state);
	info->next_send_psn = KR_PRM_GET(qpc, qpc, next_send_psn);
	info->next_rcv_psn = KR_PRM_GET(qpc, qpc, next_rcv_psn);
	info->hw_sq_wqebb_counter = KR_PRM_GET(qpc, qpc, hw_sq_wqebb_counter);
	return 0;
}

/*
 * kr_devx_qp_renew_psn() - the send PSN qp's next life starts at: where the
 * device stands now plus KR_PSN_RENEW_GAP. Call it before 2RST (the reset
 * forgets the PSN). info, when not NULL, gets the rest of what the query
 * read (the state: did a request fail?). Returns 0, or kr_devx_qp_query()'s
 * errors.
 */
int kr_devx_qp_renew_psn(struct kr_devx_qp *qp, uint32_t *sq_psn, struct kr_devx_qp_info *info)
{
	struct kr_devx_qp_info mine;
	int rc;

	if (!sq_psn)
		return -EINVAL;
	if (!info)
		info = &mine;
	rc = kr_devx_qp_query(qp, info);
	if (rc)
		return rc;
	*sq_psn = (info->next_send_psn + KR_PSN_RENEW_GAP) & KR_PSN_MASK;
	return 0;
}
