/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the sim receiving RoCEv2 datagrams from the network,
 * the path a packet from another host takes: UDP socket, receive thread,
 * sim_roce_parse (BTH, DC extension, RETH, AtomicETH, AETH, ImmDt, ICRC),
 * then the engine's responder and completer.
 *
 * Host B is a sim host with an address ("sim:...@127.0.0.3:<port>"): an RC
 * QP connected to a peer at 127.0.0.2 (QPN PEER_QPN) and a DCT (key DC_KEY),
 * both receiving from one SRQ, kept full. The harness sends from 127.0.0.2 at
 * the same port, as a peer host would. Each input is up to 8 datagrams,
 * each
 *   [0]      bit 0: the ICRC is made right (else as given)
 *            bit 1: BTH destination := B's RC QP
 *            bit 2: a DC request: destination := B's DCT, DC key := DC_KEY
 *            bit 3: RETH/AtomicETH names B's memory (va inside its MR at va
 *                   mod MEM_LEN, B's rkey)
 *   [1..2]   the datagram's length (little-endian, mod SIM_ROCE_PKT_MAX + 2)
 *   [3..]    the datagram
 * B's RC QP starts each input reset and connected again (inputs are
 * independent). What must hold: every datagram is taken off the wire within
 * a deadline (received, or dropped as malformed or for its ICRC: the
 * statistics count it); after the input B still answers a well-formed DC
 * READ from another host (127.0.0.4, a new DC connection) with the bytes in
 * its memory; no crash, no sanitizer report.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "sim/sim_engine.h"
#include "sim/sim.h"
#include "sim_mp.h"
#include "fuzz_record.h"
#include "fuzz_require.h"
#include "kr_test.h"

#define MEM_LEN	    (64u << 10)
#define PROBE_OFF   0x8000u /* what the probe READs: a pattern nothing else names */
#define PROBE_LEN   64u
#define PEER_QPN    0x4242u
#define PROBE_SQPN  0x5151u
#define DC_KEY	    0xfeedf00dcafe0001ull
#define DGRAMS_MAX  8u
#define DEADLINE_MS 5000
#define DEADLINE_NS (DEADLINE_MS * 1000000ull)

static struct kr_fx_host B;
static struct kr_devx_qp qb;
static struct kr_devx_srq srq;
static struct kr_devx_dct dct;
static int peer_fd = -1, probe_fd = -1;
static uint16_t port;
static uint32_t addr_peer, addr_b, addr_probe;
static uint32_t probe_conn;
static unsigned long sent, dropped, probes;

void fuzz_summary(void);
void fuzz_summary(void)
{
	printf("sim_roce: %lu datagrams, %lu of them dropped (malformed or ICRC), %lu probes "
	       "answered\n",
	       sent, dropped, probes);
}

static int udp_bind(uint32_t addr, uint16_t p)
{
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_port = htons(p), .sin_addr.s_addr = addr};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	require(fd >= 0);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Every receive of the SRQ (B's RC QP and DCT share it) posted again. */
static void srq_fill(void)
{
	struct kr_devx_wc wc;

	while (kr_devx_cq_poll(&B.rcq, &wc, 1) > 0)
		;
	for (uint32_t i = 0;; i++) {
		struct kr_devx_sge sge = kr_fx_sge(&B, 0x4000u + (i % 16u) * 256u, 256);

		if (kr_devx_srq_post_recv(&srq, &sge, 1, 2000 + i) == -EAGAIN)
			break; /* full */
	}
}

/* B's RC QP from reset to RTS: every input starts alike. */
static void rc_fresh(void)
{
	uint8_t gid[16];
	struct kr_devx_wc wc;

	require(kr_devx_qp_modify(&qb, KR_QP_2RST, NULL) == 0);
	while (kr_devx_cq_poll(&B.scq, &wc, 1) > 0)
		;
	sim_gid_from_ipv4(addr_peer, gid);
	require(mp_rc_connect(&qb, PEER_QPN, gid, NULL) == 0);
	srq_fill();
}

static void rc_create(void)
{
	struct kr_devx_qp_attr a = {
	    .type = KR_DEVX_QP_RC,
	    .pdn = B.pd.pdn,
	    .send_cq = &B.scq,
	    .recv_cq = &B.rcq,
	    .uar = B.uar,
	    .sq_wqebb = 64,
	    .srq = &srq,
	};

	a.buf_len = kr_devx_qp_buf_size(&a);
	a.buf = kr_fx_alloc_shared(a.buf_len);
	require(a.buf && kr_devx_qp_create(B.ctx, &a, &qb) == 0);
}

static void setup(void)
{
	char dev[64];

	setenv("KR_LOG", "error", 0);
	addr_peer = htonl(0x7f000002);
	addr_b = htonl(0x7f000003);
	addr_probe = htonl(0x7f000004);
	/* a port free on both harness addresses; B binds 127.0.0.3 at it */
	for (uint32_t i = 0; i < 200 && probe_fd < 0; i++) {
		port = (uint16_t)(20000 + (getpid() * 7 + i * 131) % 40000);
		if (peer_fd >= 0)
			close(peer_fd);
		peer_fd = udp_bind(addr_peer, port);
		if (peer_fd >= 0)
			probe_fd = udp_bind(addr_probe, port);
	}
	require(probe_fd >= 0);
	snprintf(dev, sizeof(dev), "sim:fzr%d@127.0.0.3:%u", (int)getpid(), port);
	require(kr_fx_host_open(&B, dev, MEM_LEN) == 0);
	require(kr_fx_dct_create(&B, &srq, &dct, DC_KEY) == 0);
	rc_create();
	for (uint32_t i = 0; i < PROBE_LEN; i++)
		((uint8_t *)B.mem)[PROBE_OFF + i] = (uint8_t)(i * 7 + 3);
	rc_fresh();
	printf("sim_roce: B's RC QP 0x%x, DCT 0x%x, rkey 0x%x, memory at %p\n", qb.qpn, dct.dctn,
	       B.mr.rkey, B.mem);
}

/* Datagrams B took off the wire, and of those the ones it dropped (malformed, ICRC). */
static uint64_t taken(uint64_t *drops)
{
	struct sim_stats st;

	require(sim_stats_query(B.ctx, &st) == 0);
	*drops = st.icrc_drops + st.rx_malformed;
	return st.pkts_rx + *drops;
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}

/* The fields bits 1-3 of flags name, where this opcode has them. */
static void aim(uint8_t *d, size_t len, uint8_t flags)
{
	uint32_t mask = sim_op_mask(d[0] & ~SIM_BTH_TRANSPORT_MASK);
	bool dc = (d[0] & SIM_BTH_TRANSPORT_MASK) == SIM_BTH_TRANSPORT_RD;
	size_t ext = SIM_ROCE_BTH_LEN;

	if (len < SIM_ROCE_BTH_LEN)
		return;
	if (flags & 2)
		put32(d + 4, qb.qpn & 0xffffff);
	if (flags & 4) {
		d[0] = (uint8_t)((d[0] & ~SIM_BTH_TRANSPORT_MASK) | SIM_BTH_TRANSPORT_RD);
		dc = true;
		put32(d + 4, dct.dctn & 0xffffff);
		if (len >= SIM_ROCE_BTH_LEN + 8)
			put64(d + SIM_ROCE_BTH_LEN, DC_KEY);
	}
	if (dc)
		ext += SIM_ROCE_DCEXT_LEN + SIM_ROCE_RDETH_LEN + SIM_ROCE_DETH_LEN;
	if ((flags & 8) && (mask & (SIM_OPM_RETH | SIM_OPM_ATMETH)) && len >= ext + 12) {
		uint64_t va;

		memcpy(&va, d + ext, 8);
		put64(d + ext, (uint64_t)(uintptr_t)B.mem + be64toh(va) % MEM_LEN);
		put32(d + ext + 8, B.mr.rkey);
	}
}

static void send_to_b(int fd, const uint8_t *d, size_t len)
{
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = addr_b};

	require(sendto(fd, d, len, 0, (struct sockaddr *)&sa, sizeof(sa)) == (ssize_t)len);
}

/* What B sent us: nobody reads it (B's answers to the fuzzed requests). */
static void drain(int fd)
{
	uint8_t buf[SIM_ROCE_PKT_MAX];

	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
}

/*
 * A DC READ of PROBE_LEN bytes at PROBE_OFF from another host, on a new DC
 * connection: B answers with its bytes.
 */
static void probe(void)
{
	struct sim_roce_addr to_b = {
	    .saddr = addr_probe, .daddr = addr_b, .sport = port, .dport = port};
	struct sim_roce_addr from_b = {
	    .saddr = addr_b, .daddr = addr_probe, .sport = port, .dport = port};
	struct sim_pkt req = {
	    .opcode = SIM_OP_READ_REQUEST,
	    .pkey = 0xffff,
	    .dqpn = dct.dctn,
	    .ackreq = 1,
	    .sqpn = PROBE_SQPN,
	    .dc = 1,
	    .dc_key = DC_KEY,
	    .va = (uint64_t)(uintptr_t)B.mem + PROBE_OFF,
	    .rkey = B.mr.rkey,
	    .dma_len = PROBE_LEN,
	};
	uint8_t buf[SIM_ROCE_PKT_MAX];
	int n;

	/* newer in both connection number and PSN: never stale */
	probe_conn++;
	req.dc_conn = probe_conn & 0xffffff;
	req.psn = req.dc_conn_psn = (probe_conn * 16) & SIM_PSN_MASK;
	n = sim_roce_build(&req, &to_b, buf, sizeof(buf));
	require(n > 0);
	send_to_b(probe_fd, buf, (size_t)n);
	for (uint64_t t0 = kr_test_now_ns();;) {
		struct pollfd p = {.fd = probe_fd, .events = POLLIN};
		struct sim_pkt *rsp = NULL;
		ssize_t got;

		require(kr_test_now_ns() - t0 < DEADLINE_NS); /* B answers */
		if (poll(&p, 1, 100) <= 0)
			continue;
		got = recv(probe_fd, buf, sizeof(buf), 0);
		if (got <= 0 || sim_roce_parse(buf, (size_t)got, &from_b, &rsp))
			continue;
		if (rsp->opcode == SIM_OP_READ_RESPONSE_ONLY && rsp->dqpn == PROBE_SQPN &&
		    rsp->psn == req.psn) {
			require(rsp->len == PROBE_LEN);
			require(!memcmp(rsp->payload, (uint8_t *)B.mem + PROBE_OFF, PROBE_LEN));
			sim_pkt_free(rsp);
			probes++;
			return;
		}
		sim_pkt_free(rsp);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	static uint8_t d[SIM_ROCE_PKT_MAX + 2];
	uint8_t flags;
	size_t len;

	if (!ready) {
		setup();
		ready = 1;
	}
	rc_fresh();
	for (uint32_t m = 0;
	     m < DGRAMS_MAX && fuzz_record(&data, &size, SIM_ROCE_PKT_MAX + 2, d, &flags, &len);
	     m++) {
		struct sim_roce_addr a = {
		    .saddr = addr_peer, .daddr = addr_b, .sport = port, .dport = port};
		uint64_t drops, now_drops, before = taken(&drops);

		aim(d, len, flags);
		if ((flags & 1) && len >= SIM_ROCE_BTH_LEN + SIM_ROCE_ICRC_LEN) {
			uint32_t icrc = htole32(sim_roce_icrc(&a, d, len - SIM_ROCE_ICRC_LEN));

			memcpy(d + len - SIM_ROCE_ICRC_LEN, &icrc, 4);
		}
		send_to_b(peer_fd, d, len);
		sent++;
		/* taken off the wire: received, or dropped and counted */
		for (uint64_t t0 = kr_test_now_ns(); taken(&now_drops) == before;) {
			require(kr_test_now_ns() - t0 < DEADLINE_NS);
			usleep(20);
		}
		dropped += now_drops - drops;
	}
	drain(peer_fd);
	probe();
	return 0;
}
