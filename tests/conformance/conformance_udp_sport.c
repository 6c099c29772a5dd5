/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: RoCE v2 UDP source ports. The kernel spreads an RC QP's
 * flows by a flow label hashed from the two QP numbers (rdma_calc_flow_label:
 * the 64-bit product folded by >> 20 and >> 40 to 20 bits) and folds that
 * label into a port (rdma_flow_label_to_udp_sport: the top 6 bits XORed
 * into the low 14, above 0xc000, the range rdma-core's mlx5_create_ah
 * draws from). The vectors were computed from that description outside
 * krcore; the properties are what ECMP needs: in range, stable per pair,
 * spread over pairs.
 */
#include <stdint.h>

#include "devx/devx.h"
#include "kr_test.h"

int main(void)
{
	static const struct {
		uint32_t l, r;
		uint16_t sport;
	} v[] = {
	    {0x11, 0x22, 0xc242},	  {0x123456, 0x654321, 0xf787}, {1, 1, 0xc001},
	    {0xffffff, 0xffffff, 0xff21}, {0x1000, 0x8abcde, 0xea89},	{0, 5, 0xc000},
	};
	static uint8_t seen[0x4000];
	uint32_t distinct = 0, x = 12345;

	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		CHECK_EQ(kr_devx_udp_sport(v[i].l, v[i].r), v[i].sport);
		CHECK_EQ(kr_devx_udp_sport(v[i].r, v[i].l), v[i].sport);
	}
	for (int i = 0; i < 4096; i++) {
		uint16_t s;

		x = x * 1103515245u + 12345u;
		s = kr_devx_udp_sport(x & 0xffffff, (x >> 8) & 0xffffff);
		CHECK(s >= 0xc000);
		distinct += !seen[s - 0xc000]++;
	}
	/* 4096 random pairs over 16384 ports: about 3,600 distinct if spread */
	CHECK(distinct > 3000);
	KR_PASS("conformance_udp_sport");
}
