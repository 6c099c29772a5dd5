/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An idle sim costs nothing: after traffic stops, every engine parks on its
 * futex (sh->engine_sleeping) within a second, and over the next 500 ms of
 * idleness the whole process (whose CPU time includes the engine threads)
 * uses less than 20 ms of CPU. A doorbell then still gets served. And a kick
 * takes the sleeping flag it finds: the kicks behind it, before the engine
 * runs, find none and make no system call (on a word of its own).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define MEM_LEN (64u << 10)
#define TMO_MS	5000

static struct kr_fx_host A, B;

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static uint64_t cpu_us(void)
{
	struct rusage ru;

	CHECK_OK(getrusage(RUSAGE_SELF, &ru));
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static bool sleeping(struct kr_fx_host *h)
{
	return atomic_load(&sim_dev_of(h->ctx)->sh->engine_sleeping) != 0;
}

static void write_once(struct kr_devx_qp *qa, uint64_t wr_id, size_t off, uint32_t len)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, off, len);
	struct kr_devx_wr wr = {.wr_id = wr_id,
				.opcode = KR_WR_RDMA_WRITE,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = (uintptr_t)B.mem + off,
				.rkey = B.mr.rkey};
	struct kr_devx_wc wc;
	size_t i;

	for (i = 0; i < len; i++)
		((uint8_t *)A.mem)[off + i] = (uint8_t)(wr_id + i);
	CHECK_OK(kr_devx_qp_post_send(qa, &wr));
	kr_devx_qp_ring(qa);
	CHECK_OK(kr_fx_poll_one(&A.scq, &wc, TMO_MS));
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, wr_id);
	CHECK(memcmp((uint8_t *)B.mem + off, (uint8_t *)A.mem + off, len) == 0);
}

static void kick_takes_flag(void)
{
	struct sim_shared *sh = calloc(1, sizeof(*sh));

	CHECK(sh != NULL);
	atomic_store(&sh->engine_sleeping, 1);
	sim_engine_kick(sh);
	CHECK_EQ(atomic_load(&sh->db_seq), 1);
	CHECK_EQ(atomic_load(&sh->engine_sleeping), 0);
	sim_engine_kick(sh);
	CHECK_EQ(atomic_load(&sh->db_seq), 2);
	free(sh);
}

int main(void)
{
	struct kr_devx_qp qa, qb;
	uint64_t t0;
	int i;

	CHECK_OK(kr_fx_host_open(&A, "sim:idle_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:idle_b", MEM_LEN));
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, NULL));
	for (i = 0; i < 100; i++)
		write_once(&qa, 0x100 + i, (size_t)(i % 8) * 1024, 1000);

	for (i = 0; i < 100 && !(sleeping(&A) && sleeping(&B)); i++)
		sleep_ms(10);
	CHECK(sleeping(&A));
	CHECK(sleeping(&B));

	t0 = cpu_us();
	sleep_ms(500);
	t0 = cpu_us() - t0;
	if (t0 >= 20000)
		KR_FAIL("idle engines used %llu us of CPU in 500 ms", (unsigned long long)t0);

	printf("idle: %llu us of CPU in 500 ms\n", (unsigned long long)t0);
	write_once(&qa, 0x999, 0x3000, 4000);
	kick_takes_flag();

	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_engine_idle");
}
