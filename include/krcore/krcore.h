/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krcore public API.
 *
 * krcore gives processes on an mlx5 (ConnectX) RDMA cluster an RDMA connection
 * to any peer in microseconds: a keeper (krpoold) keeps DC and RC queue pairs
 * warm in hugepage shared memory and jobs post straight into them.
 *
 * Conventions: int functions return 0 or a negative errno; functions returning
 * a pointer return NULL and set errno. Completion statuses are their own enum
 * (enum kr_wc_status) with a string for each.
 *
 * This header grows with the project; today it carries the completion status
 * vocabulary shared by every layer. The attach/connect/post API of
 * ../shared/API.md lands with the keeper and virtual QP work.
 */
#ifndef KRCORE_H
#define KRCORE_H

#ifdef __cplusplus
extern "C" {
#endif

#define KRCORE_VERSION_MAJOR 0
#define KRCORE_VERSION_MINOR 1

/*
 * Completion status of a work request. KR_WC_SUCCESS is 0; every other value
 * names the PRM completion syndrome it comes from (see kr_strerror()).
 */
enum kr_wc_status {
	KR_WC_SUCCESS = 0,
	KR_WC_LOC_LEN_ERR,      /* local length error (syndrome 0x01) */
	KR_WC_LOC_QP_OP_ERR,    /* local QP operation error (0x02) */
	KR_WC_LOC_PROT_ERR,     /* local protection error: bad lkey or range (0x04) */
	KR_WC_WR_FLUSH_ERR,     /* flushed: the QP was in error (0x05) */
	KR_WC_MW_BIND_ERR,      /* memory window bind error (0x06) */
	KR_WC_BAD_RESP_ERR,     /* bad response from the responder (0x10) */
	KR_WC_LOC_ACCESS_ERR,   /* local access error (0x11) */
	KR_WC_REM_INV_REQ_ERR,  /* remote invalid request (0x12) */
	KR_WC_REM_ACCESS_ERR,   /* remote access error: bad rkey, rights or range (0x13) */
	KR_WC_REM_OP_ERR,       /* remote operation error (0x14) */
	KR_WC_RETRY_EXC_ERR,    /* transport retry counter exceeded (0x15) */
	KR_WC_RNR_RETRY_EXC_ERR, /* receiver-not-ready retry counter exceeded (0x16) */
	KR_WC_REM_ABORT_ERR,    /* remote aborted (0x22) */
	KR_WC_GENERAL_ERR,      /* any other syndrome */
	KR_WC_STATUS_MAX
};

/*
 * kr_strerror() - readable text for a completion status.
 * @status: an enum kr_wc_status value.
 *
 * Returns a static string; an out-of-range value gives "unknown completion
 * status". Never NULL.
 */
const char *kr_strerror(int status);

/*
 * kr_wc_status_errno() - the errno that best describes a completion status.
 * @status: an enum kr_wc_status value.
 *
 * Returns 0 for KR_WC_SUCCESS, a positive errno otherwise (EINVAL for an
 * out-of-range value): EACCES for access errors, ETIMEDOUT for retry
 * exhaustion, ECANCELED for flushes, EREMOTEIO for other remote errors.
 */
int kr_wc_status_errno(int status);

#ifdef __cplusplus
}
#endif

#endif /* KRCORE_H */
