/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: what an error CQE means. Every completion syndrome of
 * rdma-core's mlx5dv.h maps to the krcore status that stands for the
 * libibverbs status rdma-core's mlx5 provider reports for it
 * (mlx5_handle_error_cqe); an unknown syndrome is a general error, never
 * success. The krcore <-> libibverbs pairs are listed once below.
 */
#include <string.h>

#include <infiniband/verbs.h>
#include <krcore/krcore.h>

#include "devx/devx.h"
#include "kr_test.h"

/* krcore's status for each libibverbs status it has (enum kr_wc_status skips the EE ones) */
static int kr_of(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS:
		return KR_WC_SUCCESS;
	case IBV_WC_LOC_LEN_ERR:
		return KR_WC_LOC_LEN_ERR;
	case IBV_WC_LOC_QP_OP_ERR:
		return KR_WC_LOC_QP_OP_ERR;
	case IBV_WC_LOC_PROT_ERR:
		return KR_WC_LOC_PROT_ERR;
	case IBV_WC_WR_FLUSH_ERR:
		return KR_WC_WR_FLUSH_ERR;
	case IBV_WC_MW_BIND_ERR:
		return KR_WC_MW_BIND_ERR;
	case IBV_WC_BAD_RESP_ERR:
		return KR_WC_BAD_RESP_ERR;
	case IBV_WC_LOC_ACCESS_ERR:
		return KR_WC_LOC_ACCESS_ERR;
	case IBV_WC_REM_INV_REQ_ERR:
		return KR_WC_REM_INV_REQ_ERR;
	case IBV_WC_REM_ACCESS_ERR:
		return KR_WC_REM_ACCESS_ERR;
	case IBV_WC_REM_OP_ERR:
		return KR_WC_REM_OP_ERR;
	case IBV_WC_RETRY_EXC_ERR:
		return KR_WC_RETRY_EXC_ERR;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return KR_WC_RNR_RETRY_EXC_ERR;
	case IBV_WC_REM_ABORT_ERR:
		return KR_WC_REM_ABORT_ERR;
	case IBV_WC_GENERAL_ERR:
		return KR_WC_GENERAL_ERR;
	default:
		return -1;
	}
}

int main(void)
{
	static const struct {
		uint8_t syndrome;
		enum ibv_wc_status want;
	} map[] = {
	    {MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, IBV_WC_LOC_LEN_ERR},
	    {MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR},
	    {MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, IBV_WC_LOC_PROT_ERR},
	    {MLX5_CQE_SYNDROME_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR},
	    {MLX5_CQE_SYNDROME_MW_BIND_ERR, IBV_WC_MW_BIND_ERR},
	    {MLX5_CQE_SYNDROME_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR},
	    {MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR},
	    {MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, IBV_WC_REM_INV_REQ_ERR},
	    {MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR},
	    {MLX5_CQE_SYNDROME_REMOTE_OP_ERR, IBV_WC_REM_OP_ERR},
	    {MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, IBV_WC_RETRY_EXC_ERR},
	    {MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR},
	    {MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR, IBV_WC_REM_ABORT_ERR},
	    {0x00, IBV_WC_GENERAL_ERR},
	    {0x7f, IBV_WC_GENERAL_ERR},
	};

	for (unsigned i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		int st = kr_devx_syndrome_to_status(map[i].syndrome);

		if (st != kr_of(map[i].want))
			KR_FAIL("syndrome 0x%02x: krcore says '%s', rdma-core '%s'",
				map[i].syndrome, kr_strerror(st), ibv_wc_status_str(map[i].want));
		CHECK(st != KR_WC_SUCCESS);
	}
	KR_PASS("conformance_cqe_syndromes");
}
