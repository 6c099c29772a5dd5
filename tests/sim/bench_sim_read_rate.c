/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 8-byte RDMA READs per second through the sim, on an RC pair:
 *   inproc  both hosts in this process, the in-process wire
 *   udp     both hosts in this process, RoCEv2 over UDP on the loopback
 *   udp2p   the responder in a child process, RoCEv2 over UDP on the loopback
 * Two measures each: sync (post one READ, wait for its completion, repeat)
 * and pipelined (keep `window` READs in flight, one doorbell per batch).
 * Every READ's data is checked. For one core: taskset -c 0.
 *
 *   bench_sim_read_rate [inproc|udp|udp2p|all] [reads] [window]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim_mp.h"

#define MEM_LEN (1u << 20)
#define TMO_MS	10000

struct shm {
	struct mp_barrier bar;
	uint32_t qpn[2];
	uint8_t gid[2][16];
	uint64_t mem;
	uint32_t rkey;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* n 8-byte READs of remote words [0, 4096): sync, then `window` in flight. */
static void measure(const char *mode, struct kr_fx_host *a, struct kr_devx_qp *qp, uint64_t rmem,
		    uint32_t rkey, unsigned long n, unsigned window)
{
	struct kr_devx_wc wc[64];
	unsigned long i, posted = 0, done = 0;
	double t0, t1;

	t0 = now_s();
	for (i = 0; i < n; i++) {
		struct kr_devx_sge sge = kr_fx_sge(a, 0, 8);
		struct kr_devx_wr wr = {.wr_id = i,
					.opcode = KR_WR_RDMA_READ,
					.flags = KR_WR_SIGNALED,
					.sge = &sge,
					.num_sge = 1,
					.remote_addr = rmem + (i % 4096) * 8,
					.rkey = rkey};
		uint64_t v;
		int got;

		CHECK_OK(kr_devx_qp_post_send(qp, &wr));
		kr_devx_qp_ring(qp);
		while ((got = kr_devx_cq_poll(&a->scq, wc, 1)) == 0)
			sched_yield();
		CHECK_EQ(got, 1);
		if (wc[0].status != KR_WC_SUCCESS || wc[0].wr_id != i)
			KR_FAIL("READ %lu: %s", i, kr_strerror(wc[0].status));
		memcpy(&v, a->mem, 8);
		CHECK_EQ(v, (i % 4096) * 3 + 1);
	}
	t1 = now_s();
	printf("%-6s sync       %8lu READs in %6.3f s: %9.0f READs/s, %6.2f us each\n", mode, n,
	       t1 - t0, (double)n / (t1 - t0), (t1 - t0) * 1e6 / (double)n);

	t0 = now_s();
	while (done < n) {
		unsigned batch = 0;
		int got;

		while (posted < n && posted - done < window) {
			struct kr_devx_sge sge = kr_fx_sge(a, 64 + (posted % window) * 8, 8);
			struct kr_devx_wr wr = {.wr_id = posted,
						.opcode = KR_WR_RDMA_READ,
						.flags = KR_WR_SIGNALED,
						.sge = &sge,
						.num_sge = 1,
						.remote_addr = rmem + (posted % 4096) * 8,
						.rkey = rkey};

			if (kr_devx_qp_post_send(qp, &wr))
				break;
			posted++;
			batch++;
		}
		if (batch)
			kr_devx_qp_ring(qp);
		got = kr_devx_cq_poll(&a->scq, wc, 64);
		CHECK(got >= 0);
		for (int k = 0; k < got; k++) {
			if (wc[k].status != KR_WC_SUCCESS || wc[k].wr_id != done)
				KR_FAIL("READ %lu: %s (wr_id %llu)", done,
					kr_strerror(wc[k].status), (unsigned long long)wc[k].wr_id);
			done++;
		}
		if (!got)
			sched_yield();
	}
	t1 = now_s();
	printf("%-6s window %3u %8lu READs in %6.3f s: %9.0f READs/s\n", mode, window, n, t1 - t0,
	       (double)n / (t1 - t0));
}

static void fill(uint8_t *mem)
{
	for (uint64_t i = 0; i < 4096; i++) {
		uint64_t v = i * 3 + 1;

		memcpy(mem + i * 8, &v, 8);
	}
}

static void run_local(const char *mode, const char *da, const char *db, unsigned long n,
		      unsigned window)
{
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_conn c;

	kr_fx_conn_default(&c);
	c.log_sra_max = 4; /* 16 READs outstanding, the sim's maximum */
	CHECK_OK(kr_fx_host_open(&a, da, MEM_LEN));
	CHECK_OK(kr_fx_host_open(&b, db, MEM_LEN));
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, &c));
	fill(b.mem);
	measure(mode, &a, &qa, (uint64_t)(uintptr_t)b.mem, b.mr.rkey, n, window);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
}

static int responder(int idx, void *arg)
{
	struct shm *s = arg;
	struct kr_fx_host b;
	struct kr_devx_qp qb;
	char dev[64];

	(void)idx;
	snprintf(dev, sizeof(dev), "sim:rb@127.0.0.2:%u", (unsigned)s->rkey);
	CHECK_OK(kr_fx_host_open(&b, dev, MEM_LEN));
	CHECK_OK(mp_rc_create(&b, &qb));
	fill(b.mem);
	s->qpn[1] = qb.qpn;
	mp_gid(&b, s->gid[1]);
	s->mem = (uint64_t)(uintptr_t)b.mem;
	s->rkey = b.mr.rkey;
	if (mp_barrier_wait(&s->bar, TMO_MS))
		KR_FAIL("responder: barrier");
	CHECK_OK(mp_rc_connect(&qb, s->qpn[0], s->gid[0], NULL));
	if (mp_barrier_wait(&s->bar, TMO_MS))
		KR_FAIL("responder: barrier");
	for (;;)
		pause(); /* the engine answers; killed when done */
	return 0;
}

static void run_2p(unsigned long n, unsigned window)
{
	const char *addrs[] = {"127.0.0.1", "127.0.0.2"};
	struct shm *s = kr_fx_alloc_shared(sizeof(*s));
	struct kr_devx_qp_conn c;
	struct kr_fx_host a;
	struct kr_devx_qp qa;
	uint16_t port = mp_pick_port(addrs, 2);
	char dev[64];
	pid_t pid;

	CHECK(s && port);
	memset(s, 0, sizeof(*s));
	mp_barrier_init(&s->bar, 2);
	s->rkey = port; /* the port, until the child overwrites it with its rkey */
	snprintf(dev, sizeof(dev), "sim:ra@127.0.0.1:%u", port);
	CHECK_OK(kr_fx_host_open(&a, dev, MEM_LEN));
	CHECK_OK(mp_rc_create(&a, &qa));
	s->qpn[0] = qa.qpn;
	mp_gid(&a, s->gid[0]);
	pid = mp_spawn(responder, 1, s);
	CHECK(pid > 0);
	CHECK_OK(mp_barrier_wait(&s->bar, TMO_MS));
	kr_fx_conn_default(&c);
	c.log_sra_max = 4;
	CHECK_OK(mp_rc_connect(&qa, s->qpn[1], s->gid[1], &c));
	CHECK_OK(mp_barrier_wait(&s->bar, TMO_MS));
	measure("udp2p", &a, &qa, s->mem, s->rkey, n, window);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	kr_fx_qp_destroy(&qa);
	kr_fx_host_close(&a);
	kr_fx_free_shared(s, sizeof(*s));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 20000;
	unsigned window = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 16;
	bool all = !strcmp(mode, "all");
	const char *addrs[] = {"127.0.0.1", "127.0.0.2"};

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!n || !window || window > 256)
		KR_FAIL("usage: %s [inproc|udp|udp2p|all] [reads > 0] [window 1..256]", argv[0]);
	if (all || !strcmp(mode, "inproc"))
		run_local("inproc", "sim:rd_a", "sim:rd_b", n, window);
	if (all || !strcmp(mode, "udp")) {
		uint16_t port = mp_pick_port(addrs, 2);
		char da[64], db[64];

		CHECK(port);
		snprintf(da, sizeof(da), "sim:ua@127.0.0.1:%u", port);
		snprintf(db, sizeof(db), "sim:ub@127.0.0.2:%u", port);
		run_local("udp", da, db, n, window);
	}
	if (all || !strcmp(mode, "udp2p"))
		run_2p(n, window);
	return 0;
}
