/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim refuses what the kernel refuses (issue: a real ConnectX would
 * refuse krcore; item 1): Linux's devx_umem_get() takes only local write,
 * remote write and remote read (uverbs_get_flags32: any other bit is
 * EINVAL), so a umem registered with "remote atomic", as krcore's MRs used
 * to ask for, failed on hardware while the sim took it.
 *   - umem_reg with KR_ACCESS_REMOTE_ATOMIC, or an unknown bit: -EINVAL,
 *     nothing registered; with each allowed bit and all three: taken;
 *   - an MR with every right (kr_devx_mr_reg, as the keeper's heaps and
 *     atomic MRs are) still registers: its umem gets the three bits, the
 *     mkey the atomic right, and a CAS through it swaps the word (an RC
 *     pair between two sim hosts), while an MR without the atomic right is
 *     refused the CAS (remote access error).
 */
#include <stdint.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN (64u << 10)

static struct kr_fx_host A, B;

/* One CAS from A's buffer at 0 to rkey/raddr over qp; its completion status. */
static int cas(struct kr_devx_qp *qp, uint32_t rkey, uint64_t raddr, uint64_t cmp, uint64_t swp)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, 0, 8);
	struct kr_devx_wr wr = {.wr_id = 9,
				.opcode = KR_WR_ATOMIC_CS,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = raddr,
				.rkey = rkey,
				.compare_add = cmp,
				.swap = swp};

	return kr_fx_post_wait(&A, qp, &wr, 5000);
}

int main(void)
{
	static const uint32_t ok[] = {
	    KR_ACCESS_LOCAL_WRITE, KR_ACCESS_REMOTE_WRITE, KR_ACCESS_REMOTE_READ,
	    KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ};
	uint8_t *buf = kr_fx_alloc_shared(MEM_LEN);
	struct kr_devx_qp qa, qb;
	struct kr_devx_umem *u;
	struct kr_devx_mr all, noatomic;
	uint64_t *word;

	CHECK(buf != NULL);
	CHECK_OK(kr_fx_host_open(&A, "sim:umacc_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:umacc_b", MEM_LEN));

	/* the kernel's rule at the DEVX boundary */
	u = NULL;
	CHECK_ERR(A.ctx->ops->umem_reg(A.ctx, buf, 4096, KR_ACCESS_REMOTE_ATOMIC, &u), -EINVAL);
	CHECK(u == NULL);
	CHECK_ERR(A.ctx->ops->umem_reg(A.ctx, buf, 4096,
				       KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_ATOMIC, &u),
		  -EINVAL);
	CHECK_ERR(A.ctx->ops->umem_reg(A.ctx, buf, 4096, 1u << 7, &u), -EINVAL);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK_OK(A.ctx->ops->umem_reg(A.ctx, buf, 4096, ok[i], &u));
		CHECK_OK(A.ctx->ops->umem_dereg(u));
	}

	/* an MR with the atomic right: the mkey carries it, the umem does not */
	word = (uint64_t *)((uint8_t *)buf + 0x100);
	*word = 41;
	CHECK_OK(kr_devx_mr_reg(B.ctx, &B.pd, buf, MEM_LEN,
				KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE |
				    KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC,
				&all));
	CHECK_OK(kr_devx_mr_reg(
	    B.ctx, &B.pd, buf, MEM_LEN,
	    KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ, &noatomic));
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, NULL));
	CHECK_EQ(cas(&qa, all.rkey, (uintptr_t)word, 41, 42), KR_WC_SUCCESS);
	CHECK_EQ(*word, 42);
	CHECK_EQ(*(uint64_t *)A.mem, 41);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, NULL));
	CHECK_EQ(cas(&qa, noatomic.rkey, (uintptr_t)word, 42, 43), KR_WC_REM_ACCESS_ERR);
	CHECK_EQ(*word, 42);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);

	CHECK_OK(kr_devx_mr_dereg(&noatomic));
	CHECK_OK(kr_devx_mr_dereg(&all));
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	kr_fx_free_shared(buf, MEM_LEN);
	KR_PASS("sim_rejects_umem_access");
}
