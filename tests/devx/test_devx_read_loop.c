/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Synchronous 8-byte RDMA READs on an RC pair over the sim: post, ring, spin
 * on kr_devx_cq_poll until the completion arrives; N times (argv[1], default
 * 10000). Prints reads/s. Meant for callgrind: the instruction count of one
 * kr_devx_qp_post_send + kr_devx_qp_ring and of one kr_devx_cq_poll is the
 * data-path cost krcore adds on top of the device.
 *
 *   valgrind --tool=callgrind ./test_devx_read_loop 1000
 *   callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep kr_devx_
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN	   (64u << 10)
#define POLL_LIMIT 200000000ull /* spins before giving up on one READ */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 10000;
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	struct kr_devx_sge sge;
	struct kr_devx_wr wr;
	struct kr_devx_wc wc;
	unsigned long i;
	uint64_t v;
	double t0, t1;

	if (n == 0)
		KR_FAIL("N must be > 0");
	CHECK_OK(kr_fx_host_open(&a, "sim:rl_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&b, "sim:rl_b", MEM_LEN));
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, NULL));

	sge = kr_fx_sge(&a, 0, 8);
	wr = (struct kr_devx_wr){.opcode = KR_WR_RDMA_READ,
				 .flags = KR_WR_SIGNALED,
				 .sge = &sge,
				 .num_sge = 1,
				 .remote_addr = (uint64_t)(uintptr_t)b.mem + 64,
				 .rkey = b.mr.rkey};
	t0 = now_s();
	for (i = 0; i < n; i++) {
		unsigned long long spins = 0;
		int got;

		/* the remote word changes every time: each READ must fetch it */
		memcpy((uint8_t *)b.mem + 64, &i, sizeof(i));
		wr.wr_id = i;
		CHECK_OK(kr_devx_qp_post_send(&qa, &wr));
		kr_devx_qp_ring(&qa);
		while ((got = kr_devx_cq_poll(&a.scq, &wc, 1)) == 0) {
			if (++spins > POLL_LIMIT)
				KR_FAIL("READ %lu: no completion", i);
			/* let the engine threads run on a busy or serialising (valgrind) CPU */
			if ((spins & 63) == 0)
				sched_yield();
		}
		CHECK_EQ(got, 1);
		if (wc.status != KR_WC_SUCCESS || wc.wr_id != i)
			KR_FAIL("READ %lu: status %s, wr_id %llu", i, kr_strerror(wc.status),
				(unsigned long long)wc.wr_id);
		memcpy(&v, a.mem, sizeof(v));
		CHECK_EQ(v, i);
	}
	t1 = now_s();
	printf("%lu sync 8-byte READs in %.3f s: %.0f reads/s, %.2f us each\n", n, t1 - t0,
	       (double)n / (t1 - t0), (t1 - t0) * 1e6 / (double)n);

	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
	return 0;
}
