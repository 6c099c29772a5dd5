/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The krcore side of the soft-RoCE interop: a sim host bound on the tap's
 * host address in the test's network namespace, and one devx RC QP of it
 * (the QP type the keeper pairs for DC->RC promotion) connected to an RC QP
 * of the guest's rxe0 (rxe_peer serve). The kernel's RoCE v2 answers every
 * packet the sim sends and sends every packet the sim must take.
 *
 *   rxe_sim_side DEV GUEST_IP [rnr]
 *     DEV: the sim host, e.g. sim:h@10.77.0.1:4791 (options such as
 *     ,drop=0.05,reorder=0.05 inject faults on the sim's side); rnr: only
 *     a SEND into no receive each way (RNR NAKs until one is posted).
 *
 * For each size (1 byte, one MTU, one MTU + 1, three packets, 4 KiB + 5,
 * 64 KiB + 3), both directions: WRITE, READ, SEND, SEND with immediate,
 * WRITE with immediate, every byte checked where it landed (in the guest's
 * memory through a READ of the host, in the host's directly); then CAS
 * (matching and not) and FAA each way. Prints the sim host's counters and
 * exits 0, or 1 naming what failed; 77 when the sim host cannot be opened
 * (no such address here).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "rxe_wire.h"
#include "sim/sim.h"

#define HOST_PSN 0xabcdeu
#define WAIT_MS	 20000
#define AREA	 (128u * 1024) /* each check's region of either memory */

/* Regions of the host's memory (h.mem) and of the guest's (RX_MEM_LEN each). */
enum { H_SRC = 0, H_BACK = 1, H_DST = 2, H_RECV = 3, H_WORD = 7 };
enum { G_DATA = 0, G_READ = 1, G_RECV = 2, G_WIMM = 3, G_WORD = 7 };

struct side {
	struct kr_fx_host h;
	struct kr_devx_qp qp;
	struct rx_info guest;
	int fd;
	uint64_t wr_id;
};

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131u + seed * 7u + (i >> 8)) ^ seed);
}

static uint8_t *hmem(struct side *s, unsigned int area)
{
	return (uint8_t *)s->h.mem + (size_t)area * AREA;
}

static uint64_t gaddr(const struct side *s, unsigned int area)
{
	return s->guest.addr + (uint64_t)area * AREA;
}

static void io_all(int fd, void *p, size_t len, int out)
{
	if (rx_io(fd, p, len, out))
		KR_FAIL("side channel to the guest: closed or failed");
}

/* One command to the guest; its answer. */
static struct rx_ans guest_do(struct side *s, struct rx_cmd c)
{
	struct rx_ans a;

	rx_cmd_order(&c, 1);
	io_all(s->fd, &c, sizeof(c), 1);
	io_all(s->fd, &a, sizeof(a), 0);
	rx_ans_order(&a, 0);
	return a;
}

/* A guest command that must complete successfully. */
static struct rx_ans guest_ok(struct side *s, struct rx_cmd c, const char *what)
{
	struct rx_ans a = guest_do(s, c);

	if (a.status)
		KR_FAIL("guest %s (%u bytes): status %d", what, c.len, a.status);
	return a;
}

/* A host work request on the QP, waited for; its completion must be a success. */
static void host_ok(struct side *s, struct kr_devx_wr wr, const char *what)
{
	int rc;

	wr.wr_id = ++s->wr_id;
	rc = kr_fx_post_wait(&s->h, &s->qp, &wr, WAIT_MS);
	if (rc)
		KR_FAIL("host %s: %d (%s)", what, rc, rc < 0 ? strerror(-rc) : kr_strerror(rc));
}

static void host_rdma(struct side *s, enum kr_devx_wr_opcode op, unsigned int harea, uint64_t raddr,
		      uint32_t len, uint32_t imm, const char *what)
{
	struct kr_devx_sge sge = kr_fx_sge(&s->h, (size_t)harea * AREA, len);
	struct kr_devx_wr wr = {.opcode = op,
				.imm = imm,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = raddr,
				.rkey = s->guest.rkey};

	host_ok(s, wr, what);
}

/* The guest's region garea, read into the host's H_BACK and compared with want. */
static void guest_holds(struct side *s, unsigned int garea, const uint8_t *want, uint32_t len,
			const char *what)
{
	memset(hmem(s, H_BACK), 0, len);
	host_rdma(s, KR_WR_RDMA_READ, H_BACK, gaddr(s, garea), len, 0, "READ back");
	if (memcmp(hmem(s, H_BACK), want, len))
		KR_FAIL("%s of %u bytes: the guest's memory differs", what, len);
}

static void host_recv_post(struct side *s, unsigned int harea, uint32_t len)
{
	struct kr_devx_sge sge = kr_fx_sge(&s->h, (size_t)harea * AREA, len);

	/* no SGE for none: the device takes no zero-length one (libmlx5 skips them) */
	CHECK_OK(kr_devx_qp_post_recv(&s->qp, &sge, len ? 1 : 0, ++s->wr_id));
}

static struct kr_devx_wc host_recv_wait(struct side *s, const char *what)
{
	struct kr_devx_wc wc;

	memset(&wc, 0, sizeof(wc));
	if (kr_fx_poll_one(&s->h.rcq, &wc, WAIT_MS))
		KR_FAIL("%s: no receive completion on the host", what);
	if (wc.status != KR_WC_SUCCESS)
		KR_FAIL("%s: host receive status %d (%s)", what, wc.status, kr_strerror(wc.status));
	return wc;
}

/* Host -> guest: WRITE, READ back; SEND and SEND with immediate; WRITE with immediate. */
static void host_to_guest(struct side *s, uint32_t len, uint32_t seed)
{
	uint8_t *src = hmem(s, H_SRC);
	struct rx_ans a;

	fill(src, len, seed);
	host_rdma(s, KR_WR_RDMA_WRITE, H_SRC, gaddr(s, G_DATA), len, 0, "WRITE");
	guest_holds(s, G_DATA, src, len, "host WRITE");

	for (int imm = 0; imm < 2; imm++) {
		struct kr_devx_sge sge = kr_fx_sge(&s->h, (size_t)H_SRC * AREA, len);
		struct kr_devx_wr wr = {.opcode = imm ? KR_WR_SEND_IMM : KR_WR_SEND,
					.imm = 0x1d000000u + len,
					.sge = &sge,
					.num_sge = 1};

		fill(src, len, seed + 1 + (uint32_t)imm);
		guest_ok(s, (struct rx_cmd){.op = RX_POST_RECV, .off = G_RECV * AREA, .len = len},
			 "post recv");
		host_ok(s, wr, imm ? "SEND with immediate" : "SEND");
		a = guest_ok(s, (struct rx_cmd){.op = RX_WAIT_RECV}, "recv");
		if (a.byte_len != len || a.has_imm != (uint32_t)imm ||
		    (imm && a.imm != 0x1d000000u + len))
			KR_FAIL("host SEND%s of %u: guest got %u bytes, imm %u (%#x)",
				imm ? " with immediate" : "", len, a.byte_len, a.has_imm, a.imm);
		guest_holds(s, G_RECV, src, len, "host SEND");
	}

	fill(src, len, seed + 3);
	guest_ok(s, (struct rx_cmd){.op = RX_POST_RECV, .off = G_RECV * AREA, .len = 0},
		 "post recv");
	host_rdma(s, KR_WR_RDMA_WRITE_IMM, H_SRC, gaddr(s, G_WIMM), len, 0xface0000u + len,
		  "WRITE with immediate");
	a = guest_ok(s, (struct rx_cmd){.op = RX_WAIT_RECV}, "recv");
	if (!a.has_imm || a.imm != 0xface0000u + len || a.byte_len != len)
		KR_FAIL("host WRITE with immediate of %u: guest got imm %u (%#x), %u bytes", len,
			a.has_imm, a.imm, a.byte_len);
	guest_holds(s, G_WIMM, src, len, "host WRITE with immediate");
}

/* Guest -> host: READ, WRITE, SEND, SEND with immediate, WRITE with immediate. */
static void guest_to_host(struct side *s, uint32_t len, uint32_t seed)
{
	uint8_t *src = hmem(s, H_SRC), *dst = hmem(s, H_DST), *recv = hmem(s, H_RECV);
	struct kr_devx_wc wc;

	/* the guest READs the host's H_SRC, its G_DATA gets it; then WRITEs it back */
	fill(src, len, seed + 10);
	guest_ok(s,
		 (struct rx_cmd){
		     .op = RX_READ, .off = G_READ * AREA, .len = len, .raddr = (uintptr_t)src},
		 "READ");
	guest_holds(s, G_READ, src, len, "guest READ");
	memset(dst, 0, len);
	guest_ok(s,
		 (struct rx_cmd){
		     .op = RX_WRITE, .off = G_READ * AREA, .len = len, .raddr = (uintptr_t)dst},
		 "WRITE");
	if (memcmp(dst, src, len))
		KR_FAIL("guest WRITE of %u bytes: the host's memory differs", len);

	for (int imm = 0; imm < 2; imm++) {
		memset(recv, 0, len);
		host_recv_post(s, H_RECV, len);
		guest_ok(s,
			 (struct rx_cmd){.op = RX_SEND,
					 .off = G_READ * AREA,
					 .len = len,
					 .flags = imm ? RX_F_IMM : 0,
					 .imm = 0x5e000000u + len},
			 "SEND");
		wc = host_recv_wait(s, "guest SEND");
		if (wc.byte_len != len || wc.has_imm != (bool)imm ||
		    (imm && wc.imm != 0x5e000000u + len) || memcmp(recv, src, len))
			KR_FAIL("guest SEND%s of %u: host got %u bytes, imm %d (%#x), bytes %s",
				imm ? " with immediate" : "", len, wc.byte_len, wc.has_imm, wc.imm,
				memcmp(recv, src, len) ? "differ" : "same");
	}

	memset(dst, 0, len);
	host_recv_post(s, H_RECV, 0);
	guest_ok(s,
		 (struct rx_cmd){.op = RX_WRITE,
				 .off = G_READ * AREA,
				 .len = len,
				 .raddr = (uintptr_t)dst,
				 .flags = RX_F_IMM,
				 .imm = 0xbeef0000u + len},
		 "WRITE with immediate");
	wc = host_recv_wait(s, "guest WRITE with immediate");
	if (!wc.has_imm || wc.imm != 0xbeef0000u + len || memcmp(dst, src, len))
		KR_FAIL("guest WRITE with immediate of %u: imm %d (%#x), bytes %s", len, wc.has_imm,
			wc.imm, memcmp(dst, src, len) ? "differ" : "same");
}

static void host_atomic(struct side *s, enum kr_devx_wr_opcode op, uint64_t cmp_add, uint64_t swap,
			uint64_t want_old, uint64_t want_word, const char *what)
{
	struct kr_devx_sge sge = kr_fx_sge(&s->h, (size_t)H_WORD * AREA, 8);
	struct kr_devx_wr wr = {.opcode = op,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = gaddr(s, G_WORD),
				.rkey = s->guest.rkey,
				.compare_add = cmp_add,
				.swap = swap};
	uint64_t old, word;

	host_ok(s, wr, what);
	memcpy(&old, hmem(s, H_WORD), 8);
	host_rdma(s, KR_WR_RDMA_READ, H_BACK, gaddr(s, G_WORD), 8, 0, "READ back");
	memcpy(&word, hmem(s, H_BACK), 8);
	if (old != want_old || word != want_word)
		KR_FAIL("host %s: old %llu (want %llu), word %llu (want %llu)", what,
			(unsigned long long)old, (unsigned long long)want_old,
			(unsigned long long)word, (unsigned long long)want_word);
}

static void guest_atomic(struct side *s, enum rx_op op, uint64_t a, uint64_t b, uint64_t want_old,
			 uint64_t want_word, const char *what)
{
	uint64_t *word = (uint64_t *)(void *)hmem(s, H_WORD);
	struct rx_ans r = guest_ok(
	    s,
	    (struct rx_cmd){
		.op = op, .off = G_WORD * AREA, .len = 8, .raddr = (uintptr_t)word, .a = a, .b = b},
	    what);

	if (r.val != want_old || *word != want_word)
		KR_FAIL("guest %s: old %llu (want %llu), word %llu (want %llu)", what,
			(unsigned long long)r.val, (unsigned long long)want_old,
			(unsigned long long)*word, (unsigned long long)want_word);
}

static void atomics(struct side *s)
{
	uint64_t v = 41, *word = (uint64_t *)(void *)hmem(s, H_WORD);

	memcpy(hmem(s, H_SRC), &v, 8);
	host_rdma(s, KR_WR_RDMA_WRITE, H_SRC, gaddr(s, G_WORD), 8, 0, "WRITE");
	host_atomic(s, KR_WR_ATOMIC_CS, 41, 100, 41, 100, "CAS");
	host_atomic(s, KR_WR_ATOMIC_CS, 7, 5, 100, 100, "CAS that does not match");
	host_atomic(s, KR_WR_ATOMIC_FA, 5, 0, 100, 105, "FAA");

	*word = 41;
	guest_atomic(s, RX_CAS, 41, 100, 41, 100, "CAS");
	guest_atomic(s, RX_CAS, 7, 5, 100, 100, "CAS that does not match");
	guest_atomic(s, RX_FAA, 5, 0, 100, 105, "FAA");
}

/*
 * A SEND to a QP with no receive posted: the responder answers RNR NAK and
 * the requester sends again after the NAK's timer until a receive is there.
 * Each way: rxe's RNR NAK to the sim's requester, the sim's to rxe's.
 */
static void rnr(struct side *s)
{
	uint32_t len = 3000;
	uint8_t *src = hmem(s, H_SRC), *recv = hmem(s, H_RECV);
	struct kr_devx_sge sge = kr_fx_sge(&s->h, (size_t)H_SRC * AREA, len);
	struct kr_devx_wr wr = {.wr_id = ++s->wr_id,
				.opcode = KR_WR_SEND,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1};
	struct kr_devx_wc wc;
	struct rx_ans a;
	struct rx_cmd c = {.op = RX_SEND, .off = G_READ * AREA, .len = len};

	/* host -> guest, one packet (the rest of a longer message would come
	 * out of sequence after the NAK), the guest's receive posted 100 ms late */
	len = 1000;
	sge.length = len;
	fill(src, len, 991);
	CHECK_OK(kr_devx_qp_post_send(&s->qp, &wr));
	kr_devx_qp_ring(&s->qp);
	usleep(100 * 1000);
	CHECK_EQ(kr_devx_cq_poll(&s->h.scq, &wc, 1), 0); /* not done: nowhere to land */
	guest_ok(s, (struct rx_cmd){.op = RX_POST_RECV, .off = G_RECV * AREA, .len = len},
		 "post recv");
	CHECK_OK(kr_fx_poll_one(&s->h.scq, &wc, WAIT_MS));
	if (wc.status != KR_WC_SUCCESS || wc.wr_id != wr.wr_id)
		KR_FAIL("SEND after RNR NAKs: status %d (%s)", wc.status, kr_strerror(wc.status));
	a = guest_ok(s, (struct rx_cmd){.op = RX_WAIT_RECV}, "recv");
	CHECK_EQ(a.byte_len, len);
	guest_holds(s, G_RECV, src, len, "SEND after RNR NAKs");

	/* guest -> host, three packets (the bytes written to the guest's
	 * G_READ first), the host's receive posted 100 ms late */
	len = 3000;
	fill(src, len, 992);
	host_rdma(s, KR_WR_RDMA_WRITE, H_SRC, gaddr(s, G_READ), len, 0, "WRITE");
	memset(recv, 0, len);
	rx_cmd_order(&c, 1);
	io_all(s->fd, &c, sizeof(c), 1);
	usleep(100 * 1000);
	CHECK_EQ(kr_devx_cq_poll(&s->h.rcq, &wc, 1), 0);
	host_recv_post(s, H_RECV, len);
	io_all(s->fd, &a, sizeof(a), 0);
	rx_ans_order(&a, 0);
	if (a.status)
		KR_FAIL("guest SEND after the sim's RNR NAKs: status %d", a.status);
	wc = host_recv_wait(s, "guest SEND after RNR NAKs");
	if (wc.byte_len != len || memcmp(recv, src, len))
		KR_FAIL("guest SEND after the sim's RNR NAKs: %u bytes, %s", wc.byte_len,
			memcmp(recv, src, len) ? "differ" : "same");
}

static int connect_guest(const char *ip)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(RX_PORT)};

	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		KR_FAIL("not an IPv4 address: %s", ip);
	for (int i = 0; i < 300; i++) { /* the guest may still be starting */
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		CHECK(fd >= 0);
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		close(fd);
		usleep(100 * 1000);
	}
	KR_FAIL("the guest's rxe_peer does not answer on %s:%d", ip, RX_PORT);
}

/* RC QP of the sim host toward the guest's: addresses over the side channel. */
static void side_connect(struct side *s, const char *ip)
{
	struct rx_info me = {.psn = HOST_PSN, .len = (uint32_t)s->h.mem_len};
	struct kr_devx_addr peer;
	struct kr_devx_qp_conn c;

	CHECK_OK(kr_fx_rc_create(&s->h, &s->qp));
	me.qpn = s->qp.qpn;
	me.rkey = s->h.mr.rkey;
	me.addr = (uintptr_t)s->h.mem;
	memcpy(me.gid, s->h.ctx->port.addr.gid, 16);
	s->fd = connect_guest(ip);
	rx_info_order(&me, 1);
	io_all(s->fd, &me, sizeof(me), 1);
	io_all(s->fd, &s->guest, sizeof(s->guest), 0);
	rx_info_order(&s->guest, 0);
	if (s->guest.len < RX_MEM_LEN)
		KR_FAIL("the guest lends %u bytes, not %u", s->guest.len, RX_MEM_LEN);

	memset(&peer, 0, sizeof(peer));
	memcpy(peer.gid, s->guest.gid, 16);
	sim_mac_of_gid(peer.gid, peer.mac); /* the sim's ARP: what its L2 delivers to */
	kr_fx_conn_default(&c);
	c.sq_psn = HOST_PSN;
	c.rq_psn = s->guest.psn;
	c.remote_qpn = s->guest.qpn;
	kr_devx_qp_conn_path(&c, &s->h.ctx->port, &peer, s->qp.qpn, s->guest.qpn);
	CHECK_OK(kr_devx_qp_connect(&s->qp, &c));
}

static struct kr_devx_ctx *stats_ctx;

/* The sim host's counters, at every exit: a failed check shows what the sim saw. */
static void print_stats(void)
{
	struct sim_stats st;

	if (!stats_ctx || sim_stats_query(stats_ctx, &st))
		return;
	printf("SIM-STATS pkts_tx %llu pkts_rx %llu retransmits %llu timeouts %llu seq_naks %llu "
	       "dup_requests %llu icrc_drops %llu rx_malformed %llu l2_drops %llu fault_drops "
	       "%llu fault_dups %llu fault_reorders %llu icrc_ip_id %llu rnr_naks %llu\n",
	       (unsigned long long)st.pkts_tx, (unsigned long long)st.pkts_rx,
	       (unsigned long long)st.retransmits, (unsigned long long)st.timeouts,
	       (unsigned long long)st.seq_naks, (unsigned long long)st.dup_requests,
	       (unsigned long long)st.icrc_drops, (unsigned long long)st.rx_malformed,
	       (unsigned long long)st.l2_drops, (unsigned long long)st.fault_drops,
	       (unsigned long long)st.fault_dups, (unsigned long long)st.fault_reorders,
	       (unsigned long long)st.icrc_ip_id, (unsigned long long)st.rnr_naks);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = {1, 1024, 1025, 3000, 4096 + 5, 65536 + 3};
	struct rx_cmd quit = {.op = RX_QUIT};
	struct side s;
	int rc;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "rnr"))) {
		fprintf(stderr, "usage: rxe_sim_side SIM_DEVICE GUEST_IP [rnr]\n");
		return 2;
	}
	memset(&s, 0, sizeof(s));
	rc = kr_fx_host_open(&s.h, argv[1], 8 * AREA);
	if (rc)
		KR_SKIP("cannot open %s: %s", argv[1], strerror(-rc));
	stats_ctx = s.h.ctx;
	atexit(print_stats);
	side_connect(&s, argv[2]);
	for (size_t i = 0; argc == 3 && i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		host_to_guest(&s, sizes[i], (uint32_t)i * 16 + 1);
		guest_to_host(&s, sizes[i], (uint32_t)i * 16 + 1);
		printf("rxe_sim_side: %u bytes: WRITE, READ, SEND, SEND/WRITE with immediate both "
		       "ways ok\n",
		       sizes[i]);
	}
	if (argc == 3) {
		atomics(&s);
		printf("rxe_sim_side: CAS, FAA both ways ok\n");
	} else {
		rnr(&s);
		printf("rxe_sim_side: SEND into no receive (RNR NAKs, then delivered) both ways "
		       "ok\n");
	}
	rx_cmd_order(&quit, 1);
	io_all(s.fd, &quit, sizeof(quit), 1);
	close(s.fd);

	print_stats();
	stats_ctx = NULL;
	kr_fx_qp_destroy(&s.qp);
	kr_fx_host_close(&s.h);
	return 0;
}
