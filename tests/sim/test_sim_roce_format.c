/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim_roce.c, the RoCEv2 bytes of the sim's packets:
 *  - three packets serialise to exactly the bytes of an independent
 *    implementation (Python's zlib.crc32 over the masked pseudo-header, see
 *    the generator in the comment below): RC WRITE with pad, DC SEND with
 *    immediate, atomic ACK;
 *  - every opcode round-trips (RC and DC), every field intact;
 *  - every single-bit flip of a serialised packet is refused (ICRC or
 *    malformed; but resv8a, which the ICRC masks), and so are truncated
 *    packets, unknown opcodes and transports, a header version other than 0,
 *    the same bytes from another address, and sim_roce_corrupt()'s flip.
 *
 * Vector generator (Python 3):
 *   def icrc(src, dst, sport, dport, ib):
 *       udplen = 8 + len(ib) + 4
 *       ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0xff, 20 + udplen, 0, 0x4000,
 *                        0xff, 17, 0xffff, bytes(src), bytes(dst))
 *       udp = struct.pack('!HHHH', sport, dport, udplen, 0xffff)
 *       b = bytearray(ib); b[4] = 0xff
 *       return struct.pack('<I', zlib.crc32(b'\xff' * 8 + ip + udp + bytes(b)))
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "kr_test.h"
#include "sim/sim_engine.h"

/* RC RDMA WRITE Only, QP 0x101, PSN 0x123456, AckReq, "hello" + 3 pad bytes,
 * 127.0.0.1:4791 -> 127.0.0.2:4791 */
static const uint8_t vec_rc_write[] = {
    0x0a, 0x30, 0xff, 0xff, 0x00, 0x00, 0x01, 0x01, 0x80, 0x12, 0x34, 0x56, 0x00, 0x00,
    0x7f, 0x00, 0x12, 0x34, 0x56, 0x78, 0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x05,
    0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00, 0xfb, 0x78, 0x9a, 0x5f,
};

/* DC SEND Only with immediate to DCT 0x8001, PSN 0xabcdef, SE, key
 * 0x1122334455667788, connection 0xabcd, DCI 0x102, 127.0.0.1 -> 127.0.0.2 */
static const uint8_t vec_dc_send_imm[] = {
    0x45, 0x80, 0xff, 0xff, 0x00, 0x00, 0x80, 0x01, 0x80, 0xab, 0xcd, 0xef, 0x11, 0x22,
    0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x00, 0x00, 0xab, 0xcd, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x02, 0xde, 0xad, 0xbe, 0xef, 0x6b, 0x72, 0x63, 0x6f, 0x72, 0x65,
    0x2d, 0x64, 0x63, 0x2d, 0x73, 0x65, 0x6e, 0x64, 0x30, 0x31, 0xd8, 0x3b, 0x73, 0x73,
};

/* RC Atomic ACK to QP 0x100, PSN 7, ACK (syndrome 0x1f), MSN 5, original 42,
 * 127.0.0.2:50000 -> 127.0.0.1:4791 */
static const uint8_t vec_atomic_ack[] = {
    0x12, 0x00, 0xff, 0xff, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x07, 0x1f, 0x00,
    0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x06, 0x06, 0x9c, 0xde,
};

static struct sim_roce_addr addr_of(const char *src, const char *dst, uint16_t sport,
				    uint16_t dport)
{
	struct sim_roce_addr a = {.sport = sport, .dport = dport};

	CHECK(inet_pton(AF_INET, src, &a.saddr) == 1);
	CHECK(inet_pton(AF_INET, dst, &a.daddr) == 1);
	return a;
}

static struct sim_pkt *pkt_new(uint8_t opcode, const void *payload, uint32_t len)
{
	struct sim_pkt *p = sim_pkt_alloc(len);

	CHECK(p);
	p->opcode = opcode;
	if (len)
		memcpy(p->payload, payload, len);
	return p;
}

static void check_build(const struct sim_pkt *p, const struct sim_roce_addr *a, const uint8_t *want,
			size_t want_len)
{
	uint8_t buf[SIM_ROCE_PKT_MAX];
	int n = sim_roce_build(p, a, buf, sizeof(buf));

	CHECK_EQ(n, (int)want_len);
	CHECK_EQ(sim_roce_len(p), want_len);
	for (size_t i = 0; i < want_len; i++)
		if (buf[i] != want[i])
			KR_FAIL("opcode 0x%x: byte %zu is 0x%02x, expected 0x%02x", p->opcode, i,
				buf[i], want[i]);
	/* too small a buffer is refused, not overrun */
	CHECK_ERR(sim_roce_build(p, a, buf, want_len - 1), -EMSGSIZE);
}

static void check_vectors(void)
{
	struct sim_roce_addr a = addr_of("127.0.0.1", "127.0.0.2", 4791, 4791);
	struct sim_roce_addr b = addr_of("127.0.0.2", "127.0.0.1", 50000, 4791);
	uint8_t imm[4] = {0xde, 0xad, 0xbe, 0xef};
	struct sim_pkt *p, *q;

	p = pkt_new(SIM_OP_WRITE_ONLY, "hello", 5);
	p->dqpn = 0x101;
	p->psn = 0x123456;
	p->ackreq = 1;
	p->va = 0x00007f0012345678ull;
	p->rkey = 0x1234;
	p->dma_len = 5;
	check_build(p, &a, vec_rc_write, sizeof(vec_rc_write));
	sim_pkt_free(p);

	p = pkt_new(SIM_OP_SEND_ONLY_IMM, "krcore-dc-send01", 16);
	p->dqpn = 0x8001;
	p->psn = 0xabcdef;
	p->ackreq = 1;
	p->se = 1;
	p->dc = 1;
	p->dc_key = 0x1122334455667788ull;
	p->dc_conn = 0xabcd;
	p->sqpn = 0x102;
	memcpy(&p->imm, imm, 4);
	check_build(p, &a, vec_dc_send_imm, sizeof(vec_dc_send_imm));
	sim_pkt_free(p);

	p = pkt_new(SIM_OP_ATOMIC_ACKNOWLEDGE, NULL, 0);
	p->dqpn = 0x100;
	p->psn = 7;
	p->syndrome = SIM_AETH_ACK_NO_CREDIT;
	p->msn = 5;
	p->orig = 42;
	check_build(p, &b, vec_atomic_ack, sizeof(vec_atomic_ack));
	sim_pkt_free(p);

	/* and they parse back: the DC one into a DC request with its fields */
	CHECK_OK(sim_roce_parse(vec_dc_send_imm, sizeof(vec_dc_send_imm), &a, &q));
	CHECK_EQ(q->opcode, SIM_OP_SEND_ONLY_IMM);
	CHECK(q->dc && q->se && q->ackreq);
	CHECK_EQ(q->dc_key, 0x1122334455667788ull);
	CHECK_EQ(q->dc_conn, 0xabcd);
	CHECK_EQ(q->sqpn, 0x102);
	CHECK_EQ(q->dqpn, 0x8001);
	CHECK_EQ(q->psn, 0xabcdef);
	CHECK(!memcmp(&q->imm, imm, 4));
	CHECK_EQ(q->len, 16);
	CHECK(!memcmp(q->payload, "krcore-dc-send01", 16));
	CHECK_EQ(q->sgid[10], 0xff);
	CHECK(!memcmp(q->sgid + 12, &a.saddr, 4) && !memcmp(q->dgid + 12, &a.daddr, 4));
	sim_pkt_free(q);
}

/* A packet of opcode op (dc: as a DCI sends it) with every field its headers carry set. */
static struct sim_pkt *pkt_full(uint8_t op, bool dc, uint32_t len, uint32_t seed)
{
	uint32_t mask = sim_op_mask(op);
	struct sim_pkt *p;

	if (!(mask & SIM_OPM_PAYLOAD))
		len = 0;
	p = sim_pkt_alloc(len);
	CHECK(p);
	for (uint32_t i = 0; i < len; i++)
		p->payload[i] = (uint8_t)(seed + i * 7);
	p->opcode = op;
	p->se = (mask & SIM_OPM_LAST) && (seed & 1);
	p->ackreq = !!(seed & 2);
	p->pkey = 0xffff;
	p->dqpn = (seed * 0x9e37u) & 0xffffff;
	p->psn = (seed * 0x79b9u + 1) & 0xffffff;
	if (dc && (mask & SIM_OPM_REQ)) {
		p->dc = 1;
		p->dc_key = 0x0123456789abcdefull ^ seed;
		p->dc_conn = (seed * 31u) & 0xffffff;
		p->sqpn = (seed + 0x100) & 0xffffff;
	}
	if (mask & (SIM_OPM_RETH | SIM_OPM_ATMETH)) {
		p->va = 0x7f0000001000ull + seed * 64;
		p->rkey = 0x5500 + seed;
		p->dma_len = (mask & SIM_OPM_ATMETH) ? 8 : 4096 + seed;
	}
	if (mask & SIM_OPM_ATMETH) {
		p->swap_add = 0xfeedfacecafebeefull + seed;
		p->compare = op == SIM_OP_COMPARE_SWAP ? 0x1111222233334444ull : 0;
	}
	if (mask & SIM_OPM_AETH) {
		p->syndrome = (uint8_t)(seed & 0xff);
		p->msn = (seed * 3u) & 0xffffff;
	}
	if (mask & SIM_OPM_ATMACK)
		p->orig = 0xa5a5a5a5a5a5a5a5ull ^ seed;
	if (mask & SIM_OPM_IMM)
		p->imm = htonl(0xc0de0000u + seed);
	return p;
}

static void check_same(const struct sim_pkt *p, const struct sim_pkt *q)
{
	CHECK_EQ(q->opcode, p->opcode);
	CHECK_EQ(q->se, p->se);
	CHECK_EQ(q->ackreq, p->ackreq);
	CHECK_EQ(q->pkey, p->pkey);
	CHECK_EQ(q->dqpn, p->dqpn);
	CHECK_EQ(q->psn, p->psn);
	CHECK_EQ(q->dc, p->dc);
	CHECK_EQ(q->dc_key, p->dc_key);
	CHECK_EQ(q->dc_conn, p->dc_conn);
	if (p->dc)
		CHECK_EQ(q->sqpn, p->sqpn);
	CHECK_EQ(q->va, p->va);
	CHECK_EQ(q->rkey, p->rkey);
	CHECK_EQ(q->dma_len, p->dma_len);
	CHECK_EQ(q->swap_add, p->swap_add);
	CHECK_EQ(q->compare, p->compare);
	CHECK_EQ(q->syndrome, p->syndrome);
	CHECK_EQ(q->msn, p->msn);
	CHECK_EQ(q->orig, p->orig);
	CHECK_EQ(q->imm, p->imm);
	CHECK_EQ(q->len, p->len);
	CHECK(!memcmp(q->payload, p->payload, p->len));
}

static void check_round_trip_and_flips(void)
{
	struct sim_roce_addr a = addr_of("192.0.2.1", "192.0.2.2", 4791, 4791);
	struct sim_roce_addr other = addr_of("192.0.2.3", "192.0.2.2", 4791, 4791);
	static uint8_t buf[SIM_ROCE_PKT_MAX];
	const uint32_t lens[] = {0, 1, 2, 3, 4, 5, 8, 255, 1024, 4096};
	uint32_t op, seed = 1, nflips = 0;

	for (op = 0; op < 256; op++) {
		uint32_t mask = sim_op_mask((uint8_t)op);

		if (!mask)
			continue;
		for (int dc = 0; dc < 2; dc++) {
			for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++, seed++) {
				struct sim_pkt *p = pkt_full((uint8_t)op, dc, lens[l], seed), *q;
				int n = sim_roce_build(p, &a, buf, sizeof(buf));

				CHECK(n > 0);
				CHECK_EQ(n % 4, 0);
				if (dc && (mask & SIM_OPM_REQ))
					CHECK_EQ(buf[0], SIM_BTH_TRANSPORT_RD | op);
				else
					CHECK_EQ(buf[0], op);
				CHECK_OK(sim_roce_parse(buf, (size_t)n, &a, &q));
				check_same(p, q);
				sim_pkt_free(q);
				/* from somewhere else, the same bytes fail the ICRC */
				CHECK_ERR(sim_roce_parse(buf, (size_t)n, &other, &q), -EILSEQ);
				/* corrupted by fault injection: only the ICRC can tell */
				sim_roce_corrupt(buf, (size_t)n);
				CHECK_ERR(sim_roce_parse(buf, (size_t)n, &a, &q), -EILSEQ);
				sim_roce_corrupt(buf, (size_t)n);
				/* every single-bit error is caught (short packets: all bits)
				 * but in resv8a, BTH byte 4, which the ICRC masks out */
				if (n <= 128) {
					for (int bit = 0; bit < n * 8; bit++) {
						int rc;

						if (bit / 8 == 4)
							continue;

						buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
						rc = sim_roce_parse(buf, (size_t)n, &a, &q);
						buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
						if (rc != -EILSEQ && rc != -EBADMSG)
							KR_FAIL(
							    "op 0x%x len %d: bit %d flipped, parse "
							    "returned %d",
							    op, n, bit, rc);
						nflips++;
					}
				}
				/* every truncation is refused */
				for (int cut = 0; cut < n; cut += (n > 64 ? 61 : 1)) {
					int rc = sim_roce_parse(buf, (size_t)cut, &a, &q);

					if (rc != -EBADMSG && rc != -EILSEQ)
						KR_FAIL("op 0x%x: %d of %d bytes parsed (%d)", op,
							cut, n, rc);
				}
				sim_pkt_free(p);
			}
		}
	}
	CHECK(nflips > 10000);
}

static void check_refused(void)
{
	struct sim_roce_addr a = addr_of("127.0.0.1", "127.0.0.2", 4791, 4791);
	uint8_t buf[sizeof(vec_rc_write)];
	struct sim_pkt *q;
	uint32_t icrc;

	/* unknown opcode (RC 0x15: NOP not on the wire), UC and UD transports,
	 * DC responses: rebuilt with a valid ICRC, still refused as malformed */
	const uint8_t ops[] = {0x15, 0x16, 0x2a, 0x64, 0x51, 0x52, 0x80, 0xa0, 0xc4};
	for (size_t i = 0; i < sizeof(ops); i++) {
		memcpy(buf, vec_rc_write, sizeof(buf));
		buf[0] = ops[i];
		icrc = htole32(sim_roce_icrc(&a, buf, sizeof(buf) - 4));
		memcpy(buf + sizeof(buf) - 4, &icrc, 4);
		CHECK_ERR(sim_roce_parse(buf, sizeof(buf), &a, &q), -EBADMSG);
	}
	/* transport header version 1 */
	memcpy(buf, vec_rc_write, sizeof(buf));
	buf[1] |= 1;
	icrc = htole32(sim_roce_icrc(&a, buf, sizeof(buf) - 4));
	memcpy(buf + sizeof(buf) - 4, &icrc, 4);
	CHECK_ERR(sim_roce_parse(buf, sizeof(buf), &a, &q), -EBADMSG);
	/* payload and pad that do not end on a 4-byte boundary (one pad byte gone) */
	memcpy(buf, vec_rc_write, sizeof(buf));
	icrc = htole32(sim_roce_icrc(&a, buf, sizeof(buf) - 5));
	memcpy(buf + sizeof(buf) - 5, &icrc, 4);
	CHECK_ERR(sim_roce_parse(buf, sizeof(buf) - 1, &a, &q), -EBADMSG);
	/* resv8a is masked out of the ICRC: a packet with it set still checks */
	memcpy(buf, vec_rc_write, sizeof(buf));
	buf[4] = 0x5a;
	CHECK_OK(sim_roce_parse(buf, sizeof(buf), &a, &q));
	sim_pkt_free(q);
}

/*
 * Another sender's IPv4 identification (rxe fills it; a sim host sends 0):
 * found from the ICRC for a packet from another source port, never for a
 * sim host's (source port = destination port), and a corrupted packet of
 * another sender is still refused.
 */
static void check_ip_id(void)
{
	struct sim_roce_addr sim = addr_of("10.77.0.1", "10.77.0.2", 4791, 4791);
	struct sim_roce_addr rxe = addr_of("10.77.0.2", "10.77.0.1", 54016, 4791);
	static uint8_t buf[SIM_ROCE_PKT_MAX];
	const uint32_t lens[] = {0, 1, 7, 1024, 4096};
	uint32_t seed = 77, flips = 0;

	for (uint32_t i = 0; i < 400; i++, seed++) {
		struct sim_pkt *p = pkt_full(0x0a, 0, lens[i % 5], seed), *q; /* RC WRITE Only */
		struct sim_roce_addr from = rxe, sim_id = sim;
		uint16_t id = (uint16_t)((seed * 40503u) >> 3 | 1);
		int n;

		from.ip_id = id;
		n = sim_roce_build(p, &from, buf, sizeof(buf));
		CHECK(n > 0);
		CHECK_OK(sim_roce_parse(buf, (size_t)n, &rxe, &q));
		CHECK_EQ(q->ip_id, id);
		check_same(p, q);
		sim_pkt_free(q);
		/* every bit flip outside resv8a refused (the first 64 bytes and the ICRC) */
		for (int bit = 0; bit < n * 8; bit++) {
			int byte = bit / 8, rc;

			if (byte == 4 || (byte >= 64 && byte < n - 4))
				continue;
			buf[byte] ^= (uint8_t)(1u << (bit % 8));
			rc = sim_roce_parse(buf, (size_t)n, &rxe, &q);
			buf[byte] ^= (uint8_t)(1u << (bit % 8));
			if (rc != -EILSEQ && rc != -EBADMSG)
				KR_FAIL("id %#x, %d bytes: bit %d flipped, parsed (%d)", id, n, bit, rc);
			flips++;
		}
		/* with identification 0, the whole check and ip_id 0 */
		n = sim_roce_build(p, &rxe, buf, sizeof(buf));
		CHECK_OK(sim_roce_parse(buf, (size_t)n, &rxe, &q));
		CHECK_EQ(q->ip_id, 0);
		sim_pkt_free(q);
		/* a sim host's packet must carry identification 0 */
		sim_id.ip_id = id;
		n = sim_roce_build(p, &sim_id, buf, sizeof(buf));
		CHECK_ERR(sim_roce_parse(buf, (size_t)n, &sim, &q), -EILSEQ);
		sim_pkt_free(p);
	}
	CHECK(flips > 100000);
}

static void check_gids(void)
{
	uint8_t gid[16];
	uint32_t addr, back;

	CHECK(inet_pton(AF_INET, "192.0.2.7", &addr) == 1);
	sim_gid_from_ipv4(addr, gid);
	CHECK(sim_gid_to_ipv4(gid, &back));
	CHECK_EQ(back, addr);
	gid[0] = 0xfe; /* link-local, not IPv4-mapped */
	CHECK(!sim_gid_to_ipv4(gid, &back));
}

int main(void)
{
	check_vectors();
	check_round_trip_and_flips();
	check_refused();
	check_ip_id();
	check_gids();
	KR_PASS("sim_roce_format");
}
