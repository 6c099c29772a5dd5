/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion statuses: PRM CQE syndromes -> enum kr_wc_status, and the public
 * text and errno of each status.
 */
#include <errno.h>

#include "devx/devx.h"
#include "krcore/krcore.h"

/*
 * kr_devx_syndrome_to_status() - the status an error CQE's syndrome means.
 * Returns an enum kr_wc_status value; KR_WC_GENERAL_ERR for a syndrome the
 * PRM does not list (0 included: an error CQE never means success).
 */
int kr_devx_syndrome_to_status(uint8_t syndrome)
{
	switch (syndrome) {
	case MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR:
		return KR_WC_LOC_LEN_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR:
		return KR_WC_LOC_QP_OP_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_PROT_ERR:
		return KR_WC_LOC_PROT_ERR;
	case MLX5_CQE_SYNDROME_WR_FLUSH_ERR:
		return KR_WC_WR_FLUSH_ERR;
	case MLX5_CQE_SYNDROME_MW_BIND_ERR:
		return KR_WC_MW_BIND_ERR;
	case MLX5_CQE_SYNDROME_BAD_RESP_ERR:
		return KR_WC_BAD_RESP_ERR;
	case MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR:
		return KR_WC_LOC_ACCESS_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:
		return KR_WC_REM_INV_REQ_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR:
		return KR_WC_REM_ACCESS_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_OP_ERR:
		return KR_WC_REM_OP_ERR;
	case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:
		return KR_WC_RETRY_EXC_ERR;
	case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR:
		return KR_WC_RNR_RETRY_EXC_ERR;
	case MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR:
		return KR_WC_REM_ABORT_ERR;
	default:
		return KR_WC_GENERAL_ERR;
	}
}

static const char *const kr_wc_status_str[KR_WC_STATUS_MAX] = {
    [KR_WC_SUCCESS] = "success",
    [KR_WC_LOC_LEN_ERR] = "local length error",
    [KR_WC_LOC_QP_OP_ERR] = "local QP operation error",
    [KR_WC_LOC_PROT_ERR] = "local protection error",
    [KR_WC_WR_FLUSH_ERR] = "work request flushed",
    [KR_WC_MW_BIND_ERR] = "memory window bind error",
    [KR_WC_BAD_RESP_ERR] = "bad response error",
    [KR_WC_LOC_ACCESS_ERR] = "local access error",
    [KR_WC_REM_INV_REQ_ERR] = "remote invalid request error",
    [KR_WC_REM_ACCESS_ERR] = "remote access error",
    [KR_WC_REM_OP_ERR] = "remote operation error",
    [KR_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
    [KR_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
    [KR_WC_REM_ABORT_ERR] = "remote aborted error",
    [KR_WC_GENERAL_ERR] = "general error",
};

static const int kr_wc_status_errnos[KR_WC_STATUS_MAX] = {
    [KR_WC_SUCCESS] = 0,
    [KR_WC_LOC_LEN_ERR] = EMSGSIZE,
    [KR_WC_LOC_QP_OP_ERR] = EIO,
    [KR_WC_LOC_PROT_ERR] = EACCES,
    [KR_WC_WR_FLUSH_ERR] = ECANCELED,
    [KR_WC_MW_BIND_ERR] = EACCES,
    [KR_WC_BAD_RESP_ERR] = EPROTO,
    [KR_WC_LOC_ACCESS_ERR] = EACCES,
    [KR_WC_REM_INV_REQ_ERR] = EREMOTEIO,
    [KR_WC_REM_ACCESS_ERR] = EACCES,
    [KR_WC_REM_OP_ERR] = EREMOTEIO,
    [KR_WC_RETRY_EXC_ERR] = ETIMEDOUT,
    [KR_WC_RNR_RETRY_EXC_ERR] = ETIMEDOUT,
    [KR_WC_REM_ABORT_ERR] = EREMOTEIO,
    [KR_WC_GENERAL_ERR] = EIO,
};

/*
 * kr_strerror() - readable text for a completion status (krcore.h).
 * Returns a static string, "unknown completion status" when out of range.
 */
const char *kr_strerror(int status)
{
	if (status < 0 || status >= KR_WC_STATUS_MAX)
		return "unknown completion status";
	return kr_wc_status_str[status];
}

/*
 * kr_wc_status_errno() - errno for a completion status (krcore.h).
 * Returns 0 for success, a positive errno otherwise, EINVAL when out of range.
 */
int kr_wc_status_errno(int status)
{
	if (status < 0 || status >= KR_WC_STATUS_MAX)
		return EINVAL;
	return kr_wc_status_errnos[status];
}
