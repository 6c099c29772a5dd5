/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Simulated hosts in separate processes, talking RoCEv2 over UDP on the
 * loopback: two hosts, then eight. Host i is its own process and opens
 * "sim:h<i>@127.0.0.<i+1>:<port>" (a random free high port per run). Every
 * host connects an RC QP to every other host, creates a DCT and a DCI; QP
 * numbers, GIDs, keys and buffer addresses go through shared memory set up
 * before fork. Then each host, towards each peer:
 *   RC WRITE of a pattern, RC READ of the peer's pattern, RC SEND and SEND
 *   with immediate, FETCH_ADD +1 on the peer's counter, COMPARE_SWAP 0 -> i+1
 *   on the peer's slot for i, DC SEND and DC WRITE through its DCI;
 * and checks every completion, every byte read, every byte received (by
 * source QP), the atomics' returned values and, after a barrier, its own
 * memory: the peers' WRITEs, the counter (== hosts - 1), the CAS slots.
 * Then a host with corrupt=1: the ICRC check drops all it sends. Last, two
 * QPs of one UDP host: a WRITE and a READ between them loop back inside the
 * host (as a NIC's loopback: every packet counted in its loopback statistic,
 * none on the socket), bytes checked; with corrupt=1 the looped packets meet
 * the ICRC check too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim/sim.h"
#include "sim_mp.h"

#define MAXH	8
#define MEM_LEN (256u << 10)
#define TMO_MS	15000

/* Layout of each host's registered buffer. */
#define OFF_RECV    0x00000u /* RC SEND from j: 2 buffers of 256 at + j * 512 */
#define OFF_DCRECV  0x04000u /* DC SEND: SRQ buffers of 256 */
#define OFF_WTARGET 0x08000u /* WRITE from j lands at + j * 256 */
#define OFF_DCW	    0x0a000u /* DC WRITE from j lands at + j * 256 */
#define OFF_RSRC    0x0c000u /* what peers READ: 256 bytes of pattern(i) */
#define OFF_COUNTER 0x0d000u /* FETCH_ADD target */
#define OFF_CAS	    0x0d040u /* CAS slot of j at + j * 8 */
#define OFF_SRC	    0x10000u /* local sources, per peer j at + j * 1024 */
#define OFF_DST	    0x20000u /* local READ/atomic results, per peer j at + j * 1024 */

#define WLEN   200u
#define RLEN   256u
#define SLEN   100u
#define DCSLEN 64u
#define DCWLEN 48u

struct host_info {
	uint32_t qpn[MAXH]; /* RC QP of this host that talks to host j */
	uint32_t dci_qpn;
	uint32_t dctn;
	uint64_t dc_key;
	uint8_t gid[16];
	uint64_t mem;
	uint32_t rkey;
};

struct shm {
	struct mp_barrier bar;
	int nh;
	uint16_t port;
	struct host_info h[MAXH];
};

static uint8_t pat(uint32_t a, uint32_t b, uint32_t k)
{
	return (uint8_t)(a * 37u + b * 101u + k * 11u + 5u);
}

#define BAR(s)                                                                                     \
	do {                                                                                       \
		if (mp_barrier_wait(&(s)->bar, TMO_MS))                                            \
			KR_FAIL("host %d: barrier timed out", me);                                 \
	} while (0)

static int host_main(int me, void *arg)
{
	struct shm *s = arg;
	int nh = s->nh, j, nsend = 0;
	struct kr_devx_qp qp[MAXH], dci;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_fx_host h;
	struct kr_devx_qp_conn conn;
	struct kr_devx_wc wc;
	uint8_t *mem;
	char dev[64];
	int got_rc[MAXH] = {0}, got_dc[MAXH] = {0}, got_imm[MAXH] = {0};

	/*
	 * Nothing is lost here, so a retransmission only means a host was not
	 * running: eight processes on two cores can miss the default's 134 ms
	 * (ack timeout 12 = 16.8 ms, 7 retries); 268 ms a try gives them 2 s.
	 * Retry exhaustion itself is the corrupt host's case, below.
	 */
	kr_fx_conn_default(&conn);
	conn.ack_timeout = 16;
	snprintf(dev, sizeof(dev), "sim:h%d@127.0.0.%d:%u", me, me + 1, s->port);
	CHECK_OK(kr_fx_host_open(&h, dev, MEM_LEN));
	mem = h.mem;
	/* the GID is the IPv4-mapped address */
	mp_gid(&h, s->h[me].gid);
	CHECK_EQ(s->h[me].gid[10], 0xff);
	CHECK_EQ(s->h[me].gid[12], 127);
	CHECK_EQ(s->h[me].gid[15], me + 1);

	for (j = 0; j < nh; j++) {
		if (j == me)
			continue;
		CHECK_OK(mp_rc_create(&h, &qp[j]));
		s->h[me].qpn[j] = qp[j].qpn;
	}
	CHECK_OK(kr_fx_dct_create(&h, &srq, &dct, 0xd0c0000000000000ull | (uint64_t)me));
	CHECK_OK(kr_fx_dci_create(&h, &dci, &conn));
	s->h[me].dci_qpn = dci.qpn;
	s->h[me].dctn = dct.dctn;
	s->h[me].dc_key = dct.dc_key;
	s->h[me].mem = (uint64_t)(uintptr_t)mem;
	s->h[me].rkey = h.mr.rkey;
	for (uint32_t k = 0; k < RLEN; k++)
		mem[OFF_RSRC + k] = pat(me, 0xff, k);
	BAR(s);

	/* connect, post receives, prepare sources */
	for (j = 0; j < nh; j++) {
		struct kr_devx_sge sge;

		if (j == me)
			continue;
		CHECK_OK(mp_rc_connect(&qp[j], s->h[j].qpn[me], s->h[j].gid, &conn));
		for (int r = 0; r < 2; r++) {
			sge = kr_fx_sge(&h, OFF_RECV + (size_t)j * 512 + (size_t)r * 256, 256);
			CHECK_OK(kr_devx_qp_post_recv(&qp[j], &sge, 1, 1000 + j * 2 + r));
		}
		sge = kr_fx_sge(&h, OFF_DCRECV + (size_t)j * 256, 256);
		CHECK_OK(kr_devx_srq_post_recv(&srq, &sge, 1, 2000 + j));
		for (uint32_t k = 0; k < 1024; k++)
			mem[OFF_SRC + (size_t)j * 1024 + k] = pat(me, j, k);
	}
	BAR(s);

	/* every operation towards every peer */
	for (j = 0; j < nh; j++) {
		const struct host_info *p = &s->h[j];
		uint8_t *src = mem + OFF_SRC + (size_t)j * 1024;
		struct kr_devx_sge sw = kr_fx_sge(&h, OFF_SRC + (size_t)j * 1024, WLEN);
		struct kr_devx_sge sr = kr_fx_sge(&h, OFF_DST + (size_t)j * 1024, RLEN);
		struct kr_devx_sge ss = kr_fx_sge(&h, OFF_SRC + (size_t)j * 1024 + 256, SLEN);
		struct kr_devx_sge sfa = kr_fx_sge(&h, OFF_DST + (size_t)j * 1024 + 512, 8);
		struct kr_devx_sge scs = kr_fx_sge(&h, OFF_DST + (size_t)j * 1024 + 520, 8);
		struct kr_devx_sge sdc = kr_fx_sge(&h, OFF_SRC + (size_t)j * 1024 + 512, DCSLEN);
		struct kr_devx_sge sdw = kr_fx_sge(&h, OFF_SRC + (size_t)j * 1024 + 768, DCWLEN);
		struct kr_devx_dc_av av = {.dctn = p->dctn, .dc_key = p->dc_key};
		struct kr_devx_wr wr[8] = {
		    {.wr_id = 1,
		     .opcode = KR_WR_RDMA_WRITE,
		     .sge = &sw,
		     .num_sge = 1,
		     .remote_addr = p->mem + OFF_WTARGET + (uint64_t)me * 256,
		     .rkey = p->rkey},
		    {.wr_id = 2,
		     .opcode = KR_WR_RDMA_READ,
		     .sge = &sr,
		     .num_sge = 1,
		     .remote_addr = p->mem + OFF_RSRC,
		     .rkey = p->rkey},
		    {.wr_id = 3, .opcode = KR_WR_SEND, .sge = &ss, .num_sge = 1},
		    {.wr_id = 4,
		     .opcode = KR_WR_SEND_IMM,
		     .sge = &ss,
		     .num_sge = 1,
		     .imm = 0xabc00000u | (uint32_t)(me << 8) | (uint32_t)j},
		    {.wr_id = 5,
		     .opcode = KR_WR_ATOMIC_FA,
		     .sge = &sfa,
		     .num_sge = 1,
		     .remote_addr = p->mem + OFF_COUNTER,
		     .rkey = p->rkey,
		     .compare_add = 1},
		    {.wr_id = 6,
		     .opcode = KR_WR_ATOMIC_CS,
		     .sge = &scs,
		     .num_sge = 1,
		     .remote_addr = p->mem + OFF_CAS + (uint64_t)me * 8,
		     .rkey = p->rkey,
		     .compare_add = 0,
		     .swap = (uint64_t)me + 1},
		};
		struct kr_devx_wr dwr[2] = {
		    {.wr_id = 7, .opcode = KR_WR_SEND, .sge = &sdc, .num_sge = 1, .av = &av},
		    {.wr_id = 8,
		     .opcode = KR_WR_RDMA_WRITE,
		     .sge = &sdw,
		     .num_sge = 1,
		     .av = &av,
		     .remote_addr = p->mem + OFF_DCW + (uint64_t)me * 256,
		     .rkey = p->rkey},
		};

		if (j == me)
			continue;
		mp_dc_av_to(&av, &h, p->gid);
		(void)src;
		for (int k = 0; k < 6; k++) {
			wr[k].flags = KR_WR_SIGNALED;
			CHECK_OK(kr_devx_qp_post_send(&qp[j], &wr[k]));
		}
		kr_devx_qp_ring(&qp[j]);
		for (int k = 0; k < 2; k++) {
			dwr[k].flags = KR_WR_SIGNALED;
			CHECK_OK(kr_devx_qp_post_send(&dci, &dwr[k]));
		}
		kr_devx_qp_ring(&dci);
		/* in order on each QP: RC 1..6, DC 7, 8 (the two QPs interleave) */
		for (int k = 0, next_rc = 1, next_dc = 7; k < 8; k++) {
			if (kr_fx_poll_one(&h.scq, &wc, TMO_MS))
				KR_FAIL("host %d -> %d: completion %d missing", me, j, k + 1);
			if (wc.status != KR_WC_SUCCESS)
				KR_FAIL("host %d -> %d: wr %llu: %s", me, j,
					(unsigned long long)wc.wr_id, kr_strerror(wc.status));
			if (wc.qpn == dci.qpn)
				CHECK_EQ(wc.wr_id, (uint64_t)next_dc++);
			else
				CHECK_EQ(wc.wr_id, (uint64_t)next_rc++);
		}
		for (uint32_t k = 0; k < RLEN; k++)
			if (mem[OFF_DST + (size_t)j * 1024 + k] != pat(j, 0xff, k))
				KR_FAIL("host %d: READ from %d: byte %u wrong", me, j, k);
		{
			uint64_t fa, cs;

			memcpy(&fa, mem + OFF_DST + (size_t)j * 1024 + 512, 8);
			memcpy(&cs, mem + OFF_DST + (size_t)j * 1024 + 520, 8);
			if (fa > (uint64_t)nh - 2)
				KR_FAIL("host %d: FETCH_ADD on %d returned %llu", me, j,
					(unsigned long long)fa);
			CHECK_EQ(cs, 0); /* nobody else touches our slot */
		}
		nsend++;
	}

	/* what the peers sent us: 2 RC SENDs and 1 DC SEND each */
	for (int n = 0; n < 3 * (nh - 1); n++) {
		const uint8_t *got;
		uint32_t want_len;
		int from = -1;

		if (kr_fx_poll_one(&h.rcq, &wc, TMO_MS))
			KR_FAIL("host %d: receive %d of %d missing", me, n + 1, 3 * (nh - 1));
		if (wc.status != KR_WC_SUCCESS)
			KR_FAIL("host %d: receive: %s", me, kr_strerror(wc.status));
		if (wc.qpn == dct.dctn) {
			/* The SRQ hands out its buffers in order, whoever sends, and
			 * every process numbers its DCI alike: the payload names the
			 * sender (the DCT's CQE has no source GID). */
			CHECK(wc.wr_id >= 2000 && wc.wr_id < 2000u + (uint64_t)nh);
			got = mem + OFF_DCRECV + (size_t)(wc.wr_id - 2000) * 256;
			want_len = DCSLEN;
			for (j = 0; j < nh && from < 0; j++) {
				uint32_t k = 0;

				while (j != me && k < want_len && got[k] == pat(j, me, 512 + k))
					k++;
				if (j != me && k == want_len && wc.src_qpn == s->h[j].dci_qpn)
					from = j;
			}
			if (from < 0)
				KR_FAIL("host %d: DC SEND from DCI 0x%x: payload of no peer", me,
					wc.src_qpn);
			got_dc[from]++;
		} else {
			for (j = 0; j < nh; j++)
				if (j != me && wc.qpn == qp[j].qpn && wc.src_qpn == s->h[j].qpn[me])
					from = j;
			if (from < 0)
				KR_FAIL("host %d: receive on 0x%x from qpn 0x%x: unknown sender",
					me, wc.qpn, wc.src_qpn);
			got = mem + OFF_RECV + (size_t)(wc.wr_id - 1000) * 256;
			want_len = SLEN;
			for (uint32_t k = 0; k < want_len; k++)
				if (got[k] != pat(from, me, 256 + k))
					KR_FAIL("host %d: SEND from %d: byte %u wrong", me, from,
						k);
			if (wc.has_imm) {
				CHECK_EQ(wc.imm,
					 0xabc00000u | (uint32_t)(from << 8) | (uint32_t)me);
				got_imm[from]++;
			}
			got_rc[from]++;
		}
		CHECK_EQ(wc.byte_len, want_len);
	}
	for (j = 0; j < nh; j++) {
		if (j == me)
			continue;
		CHECK_EQ(got_rc[j], 2);
		CHECK_EQ(got_imm[j], 1);
		CHECK_EQ(got_dc[j], 1);
	}
	CHECK_EQ(kr_fx_poll_none(&h.rcq, 20), 0);
	BAR(s);

	/* our memory, as the peers left it */
	for (j = 0; j < nh; j++) {
		uint64_t v;

		if (j == me)
			continue;
		for (uint32_t k = 0; k < WLEN; k++)
			if (mem[OFF_WTARGET + (size_t)j * 256 + k] != pat(j, me, k))
				KR_FAIL("host %d: WRITE from %d: byte %u wrong", me, j, k);
		for (uint32_t k = 0; k < DCWLEN; k++)
			if (mem[OFF_DCW + (size_t)j * 256 + k] != pat(j, me, 768 + k))
				KR_FAIL("host %d: DC WRITE from %d: byte %u wrong", me, j, k);
		memcpy(&v, mem + OFF_CAS + (size_t)j * 8, 8);
		CHECK_EQ(v, (uint64_t)j + 1);
	}
	{
		uint64_t c;

		memcpy(&c, mem + OFF_COUNTER, 8);
		CHECK_EQ(c, (uint64_t)nh - 1);
	}
	CHECK_EQ(nsend, nh - 1);
	BAR(s);

	for (j = 0; j < nh; j++)
		if (j != me)
			kr_fx_qp_destroy(&qp[j]);
	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
	kr_fx_host_close(&h);
	return 0;
}

static int run(int nh)
{
	const char *addrs[MAXH] = {"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4",
				   "127.0.0.5", "127.0.0.6", "127.0.0.7", "127.0.0.8"};
	struct shm *s = kr_fx_alloc_shared(sizeof(*s));
	pid_t pids[MAXH];
	uint64_t t0 = mp_now_ms();
	int rc;

	CHECK(s);
	memset(s, 0, sizeof(*s));
	s->nh = nh;
	s->port = mp_pick_port(addrs, nh);
	if (!s->port)
		KR_SKIP("no free UDP port on 127.0.0.1..%d", nh);
	mp_barrier_init(&s->bar, (uint32_t)nh);
	for (int i = 0; i < nh; i++) {
		pids[i] = mp_spawn(host_main, i, s);
		CHECK(pids[i] > 0);
	}
	rc = mp_wait(pids, nh, 45000);
	printf("%d hosts on port %u: %s in %llu ms\n", nh, s->port, rc ? "FAILED" : "ok",
	       (unsigned long long)(mp_now_ms() - t0));
	kr_fx_free_shared(s, sizeof(*s));
	return rc;
}

/*
 * corrupt=1 on a UDP host: every datagram it sends has a bit flipped after
 * its ICRC. The peer drops each one (icrc_drops counts them), its memory is
 * untouched, and the requester ends with TRANSPORT_RETRY_EXC after the first
 * send and retry_count retransmissions.
 */
static int run_corrupt(void)
{
	const char *addrs[] = {"127.0.0.1", "127.0.0.2"};
	uint16_t port = mp_pick_port(addrs, 2);
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_conn c;
	struct sim_stats st;
	char da[80], db[64];

	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.1 and 127.0.0.2");
	snprintf(da, sizeof(da), "sim:ca@127.0.0.1:%u,corrupt=1", port);
	snprintf(db, sizeof(db), "sim:cb@127.0.0.2:%u", port);
	CHECK_OK(kr_fx_host_open(&a, da, MEM_LEN));
	CHECK_OK(kr_fx_host_open(&b, db, MEM_LEN));
	kr_fx_conn_default(&c);
	c.ack_timeout = 8; /* 1 ms */
	c.retry_count = 2;
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, &c));
	memset(a.mem, 0x5a, 64);
	{
		struct kr_devx_sge sge = kr_fx_sge(&a, 0, 64);
		struct kr_devx_wr wr = {.wr_id = 1,
					.opcode = KR_WR_RDMA_WRITE,
					.sge = &sge,
					.num_sge = 1,
					.remote_addr = (uint64_t)(uintptr_t)b.mem,
					.rkey = b.mr.rkey};

		CHECK_EQ(kr_fx_post_wait(&a, &qa, &wr, TMO_MS), KR_WC_RETRY_EXC_ERR);
	}
	CHECK_OK(sim_stats_query(b.ctx, &st));
	CHECK_EQ(st.icrc_drops, c.retry_count + 1);
	CHECK_EQ(st.pkts_rx, 0);
	CHECK_OK(sim_stats_query(a.ctx, &st));
	CHECK_EQ(st.fault_corrupts, c.retry_count + 1);
	for (int k = 0; k < 64; k++)
		CHECK_EQ(((uint8_t *)b.mem)[k], 0);
	printf("corrupt=1 over UDP: %u datagrams dropped by the ICRC check, RETRY_EXC\n",
	       c.retry_count + 1);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
	return 0;
}

/* Two RC QPs of one host: a WRITE then a READ between them, looped back inside. */
static int run_loopback(bool corrupt)
{
	const char *addrs[] = {"127.0.0.1"};
	uint16_t port = mp_pick_port(addrs, 1);
	struct kr_fx_host a;
	struct kr_devx_qp q1, q2;
	struct kr_devx_qp_conn c;
	struct sim_stats st;
	uint8_t *m;
	char da[80];

	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.1");
	snprintf(da, sizeof(da), "sim:lo@127.0.0.1:%u%s", port, corrupt ? ",corrupt=1" : "");
	CHECK_OK(kr_fx_host_open(&a, da, MEM_LEN));
	m = a.mem;
	kr_fx_conn_default(&c);
	c.ack_timeout = 8; /* 1 ms */
	c.retry_count = 2;
	CHECK_OK(kr_fx_rc_pair(&a, &q1, &a, &q2, &c));
	for (int k = 0; k < 300; k++)
		m[k] = (uint8_t)(k * 7 + 1);
	{
		struct kr_devx_sge sge = kr_fx_sge(&a, 0, 300);
		struct kr_devx_wr wr = {.wr_id = 1,
					.opcode = KR_WR_RDMA_WRITE,
					.sge = &sge,
					.num_sge = 1,
					.remote_addr = (uint64_t)(uintptr_t)(m + 0x1000),
					.rkey = a.mr.rkey};

		CHECK_EQ(kr_fx_post_wait(&a, &q1, &wr, TMO_MS),
			 corrupt ? KR_WC_RETRY_EXC_ERR : KR_WC_SUCCESS);
	}
	CHECK_OK(sim_stats_query(a.ctx, &st));
	if (corrupt) {
		CHECK_EQ(st.loopback, c.retry_count + 1);
		CHECK_EQ(st.icrc_drops, c.retry_count + 1);
		CHECK_EQ(st.pkts_rx, 0);
		goto out;
	}
	{
		struct kr_devx_sge sge = kr_fx_sge(&a, 0x2000, 300);
		struct kr_devx_wr wr = {.wr_id = 2,
					.opcode = KR_WR_RDMA_READ,
					.sge = &sge,
					.num_sge = 1,
					.remote_addr = (uint64_t)(uintptr_t)(m + 0x1000),
					.rkey = a.mr.rkey};

		CHECK_EQ(kr_fx_post_wait(&a, &q2, &wr, TMO_MS), KR_WC_SUCCESS);
	}
	CHECK(!memcmp(m + 0x1000, m, 300));
	CHECK(!memcmp(m + 0x2000, m, 300));
	CHECK_OK(sim_stats_query(a.ctx, &st));
	/* WRITE + its ACK, READ request + response: all looped, all taken */
	CHECK(st.loopback >= 4);
	CHECK_EQ(st.loopback, st.pkts_tx);
	CHECK_EQ(st.pkts_rx, st.pkts_tx);
	CHECK_EQ(st.rx_malformed, 0);
out:
	printf("loopback%s: %lu packets looped inside one UDP host\n", corrupt ? " corrupt=1" : "",
	       (unsigned long)st.loopback);
	kr_fx_qp_destroy(&q1);
	kr_fx_qp_destroy(&q2);
	kr_fx_host_close(&a);
	return 0;
}

int main(void)
{
	int rc;

	setvbuf(stdout, NULL, _IONBF, 0);
	rc = run(2);
	if (rc)
		return rc;
	rc = run(8);
	if (rc)
		return rc;
	rc = run_corrupt();
	if (!rc)
		rc = run_loopback(false);
	if (!rc)
		rc = run_loopback(true);
	if (rc)
		return rc;
	KR_PASS("sim_udp_hosts");
}
