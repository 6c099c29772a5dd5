/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 bytes: struct sim_pkt <-> the payload of a UDP datagram (port 4791
 * by default), BTH first, ICRC last. Facts from the IBTA specification vol. 1
 * (chapter 9 transport headers, annex A16/A17 RoCE and RoCEv2) as the Linux
 * rxe driver implements them (rxe_hdr.h, rxe_opcode.c, rxe_icrc.c).
 *
 *   BTH     opcode; SE, MigReq, PadCnt (2), TVer (4); P_Key; resv8a; DestQP (24);
 *           AckReq, reserved (7); PSN (24)
 *   RETH    VA (64), R_Key (32), DMA length (32)
 *   AtomicETH  VA (64), R_Key (32), swap/add (64), compare (64)
 *   AETH    syndrome (8), MSN (24)
 *   AtomicAckETH  original remote data (64)
 *   ImmDt   32 bits, carried as sent
 *   payload, then PadCnt zero bytes to a 4-byte boundary, then the ICRC.
 * Every multi-byte field is big-endian; the ICRC goes out little-endian
 * (the byte order of the Ethernet FCS), as rxe writes it.
 *
 * ICRC (annex A17.8.2, rxe_icrc.c): CRC-32 (the Ethernet polynomial) over
 * 8 bytes of 0xff standing for the masked LRH, then the IPv4 header with TOS,
 * TTL and header checksum set to all ones, the UDP header with its checksum
 * set to all ones, the BTH with resv8a set to all ones, the rest of the
 * headers, the payload and the pad; the result inverted. The receiver of a
 * UDP socket does not see the IP header, so it rebuilds it: version 4, IHL 5,
 * total length from the datagram, identification 0 and Don't Fragment (the
 * sender's socket guarantees both: IP_PMTUDISC_DO on an unconnected socket
 * makes Linux send ID 0, see sim_udp.c), protocol 17, the addresses. A
 * sim host sends from the port it listens on; a packet from another source
 * port (rxe's, a ConnectX's: the port is flow entropy) that fails with
 * identification 0 is tried with the one that would explain its ICRC
 * (sim_icrc_id.c: rxe fills it).
 *
 * DC. The IBTA specification has no DC transport; ConnectX carries DC in the
 * RD opcode space. Wireshark's InfiniBand dissector (epan/dissectors/
 * packet-infiniband.c, the DCT support Mellanox contributed: "Mellanox DCT
 * has the same opcodes as RD", DctOpCodeMap) decodes a packet whose opcode
 * has transport bits 010 as "DC <operation>", takes its BTH as 20 bytes
 * (the 12 of the BTH and 8 more it does not dissect) and then the RD header
 * sequence: RDETH, DETH, then RETH / AtomicETH / ImmDt / payload. The sim
 * sends DC requests in exactly that form and puts its fields where their RD
 * meaning is closest:
 *   the 8 bytes after the BTH: the DC access key (64 bits, the DCT checks it);
 *   RDETH EE context (24 bits): the DCI's connection number (the sim's
 *     dc_conn, new for each connection the DCI opens; 24 bits on the wire);
 *   DETH Q_Key: the PSN the connection opened at (DC has no Q_Key; ConnectX
 *     tells the DCT in its DC connect packet, which the sim does not send),
 *     so a DCT that sees a later packet of a new connection first still
 *     knows where the connection starts; DETH source QP: the DCI's QPN,
 *     where the DCT sends its answers.
 * That decodes in tshark 4.0 (Debian 12) without expert warnings: the check
 * is tests/sim/test_sim_tshark.sh. Answers to a DCI (ACK/NAK, READ responses,
 * atomic ACKs) travel as RC responses to the DCI's QPN: the DCI matches them
 * by PSN as an RC requester does, and they need neither key nor connection.
 * Wireshark skips ConnectX's DC connect/disconnect packets (RD RESYNC opcode
 * with a 16-byte DCCETH); the sim does not send them: a new connection
 * number in RDETH opens a new responder context (sim_resp.c).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"

/* ---- CRC-32, reflected, polynomial 0x04c11db7 (slice-by-8) ---- */

static uint32_t sim_crc_tab[8][256];
static pthread_once_t sim_crc_once = PTHREAD_ONCE_INIT;

static void sim_crc_init(void)
{
	uint32_t i, k, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
		sim_crc_tab[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (k = 1; k < 8; k++)
			sim_crc_tab[k][i] = (sim_crc_tab[k - 1][i] >> 8) ^
					    sim_crc_tab[0][sim_crc_tab[k - 1][i] & 0xff];
}

/* sim_crc32_update() - see sim_engine.h. */
uint32_t sim_crc32_update(uint32_t crc, const uint8_t *p, size_t len)
{
	pthread_once(&sim_crc_once, sim_crc_init);
	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ sim_crc_tab[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo = le32toh(lo) ^ crc;
		hi = le32toh(hi);
		crc = sim_crc_tab[7][lo & 0xff] ^ sim_crc_tab[6][(lo >> 8) & 0xff] ^
		      sim_crc_tab[5][(lo >> 16) & 0xff] ^ sim_crc_tab[4][lo >> 24] ^
		      sim_crc_tab[3][hi & 0xff] ^ sim_crc_tab[2][(hi >> 8) & 0xff] ^
		      sim_crc_tab[1][(hi >> 16) & 0xff] ^ sim_crc_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ sim_crc_tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

/* The register after 0xffffffff and the 8 bytes of 0xff of the masked LRH (rxe_icrc.c). */
#define SIM_ICRC_SEED 0xdebb20e3u

uint32_t sim_roce_icrc(const struct sim_roce_addr *a, const uint8_t *buf, size_t len)
{
	uint8_t ph[20 + 8 + SIM_ROCE_BTH_LEN];
	uint16_t udp_len = (uint16_t)(8 + len + SIM_ROCE_ICRC_LEN);
	uint16_t v16;
	uint32_t crc;

	/* IPv4 header as the sender's kernel builds it, masked fields all ones */
	ph[0] = 0x45;
	ph[1] = 0xff; /* TOS */
	v16 = htobe16((uint16_t)(20 + udp_len));
	memcpy(&ph[2], &v16, 2);
	ph[4] = (uint8_t)(a->ip_id >> 8); /* identification */
	ph[5] = (uint8_t)a->ip_id;
	ph[6] = 0x40; /* Don't Fragment, offset 0 */
	ph[7] = 0;
	ph[8] = 0xff;  /* TTL */
	ph[9] = 17;    /* UDP */
	ph[10] = 0xff; /* header checksum */
	ph[11] = 0xff;
	memcpy(&ph[12], &a->saddr, 4);
	memcpy(&ph[16], &a->daddr, 4);
	/* UDP header, checksum all ones */
	v16 = htobe16(a->sport);
	memcpy(&ph[20], &v16, 2);
	v16 = htobe16(a->dport);
	memcpy(&ph[22], &v16, 2);
	v16 = htobe16(udp_len);
	memcpy(&ph[24], &v16, 2);
	ph[26] = 0xff;
	ph[27] = 0xff;
	/* BTH, resv8a all ones */
	memcpy(&ph[28], buf, SIM_ROCE_BTH_LEN);
	ph[28 + 4] = 0xff;

	crc = sim_crc32_update(SIM_ICRC_SEED, ph, sizeof(ph));
	crc = sim_crc32_update(crc, buf + SIM_ROCE_BTH_LEN, len - SIM_ROCE_BTH_LEN);
	return ~crc;
}

/* ---- GIDs ---- */

bool sim_gid_to_ipv4(const uint8_t gid[16], uint32_t *addr)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (memcmp(gid, prefix, sizeof(prefix)))
		return false;
	memcpy(addr, gid + 12, 4);
	return true;
}

void sim_gid_from_ipv4(uint32_t addr, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, &addr, 4);
}

/* ---- layout ---- */

static bool sim_roce_is_dc(const struct sim_pkt *pkt, uint32_t mask)
{
	return pkt->dc && (mask & SIM_OPM_REQ);
}

/* Header bytes after the BTH for an opcode (mask) and transport. */
static size_t sim_roce_ext_len(uint32_t mask, bool dc)
{
	size_t n = 0;

	if (dc)
		n += SIM_ROCE_DCEXT_LEN + SIM_ROCE_RDETH_LEN + SIM_ROCE_DETH_LEN;
	if (mask & SIM_OPM_RETH)
		n += SIM_ROCE_RETH_LEN;
	if (mask & SIM_OPM_ATMETH)
		n += SIM_ROCE_ATMETH_LEN;
	if (mask & SIM_OPM_AETH)
		n += SIM_ROCE_AETH_LEN;
	if (mask & SIM_OPM_ATMACK)
		n += SIM_ROCE_ATMACK_LEN;
	if (mask & SIM_OPM_IMM)
		n += SIM_ROCE_IMM_LEN;
	return n;
}

static uint32_t sim_roce_pad(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

size_t sim_roce_len(const struct sim_pkt *pkt)
{
	uint32_t mask = sim_op_mask(pkt->opcode);
	size_t n;

	if (!mask)
		return 0;
	n = SIM_ROCE_BTH_LEN + sim_roce_ext_len(mask, sim_roce_is_dc(pkt, mask));
	if (mask & SIM_OPM_PAYLOAD)
		n += pkt->len + sim_roce_pad(pkt->len);
	return n + SIM_ROCE_ICRC_LEN;
}

static uint8_t *sim_put16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, 2);
	return p + 2;
}

static uint8_t *sim_put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
	return p + 4;
}

static uint8_t *sim_put64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
	return p + 8;
}

static uint32_t sim_get24(const uint8_t *p)
{
	return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}

static uint32_t sim_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static uint64_t sim_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

/* ---- build ---- */

int sim_roce_build(const struct sim_pkt *pkt, const struct sim_roce_addr *a, uint8_t *buf,
		   size_t cap)
{
	uint32_t mask = sim_op_mask(pkt->opcode), pad = 0, icrc;
	bool dc = sim_roce_is_dc(pkt, mask);
	size_t len = sim_roce_len(pkt);
	uint8_t *p = buf;

	if (!mask || ((mask & SIM_OPM_PAYLOAD) && pkt->len > SIM_ROCE_PAYLOAD_MAX) ||
	    (!(mask & SIM_OPM_PAYLOAD) && pkt->len))
		return -EINVAL;
	if (len > cap)
		return -EMSGSIZE;
	if (mask & SIM_OPM_PAYLOAD)
		pad = sim_roce_pad(pkt->len);

	/* BTH */
	*p++ = (uint8_t)((dc ? SIM_BTH_TRANSPORT_RD : SIM_BTH_TRANSPORT_RC) | pkt->opcode);
	*p++ = (uint8_t)((pkt->se ? 0x80 : 0) | (pad << 4)); /* MigReq 0, TVer 0 */
	p = sim_put16(p, pkt->pkey);
	p = sim_put32(p, pkt->dqpn & 0xffffff); /* resv8a 0 */
	p = sim_put32(p, (pkt->ackreq ? 0x80000000u : 0) | (pkt->psn & SIM_PSN_MASK));
	if (dc) {
		p = sim_put64(p, pkt->dc_key);
		p = sim_put32(p, pkt->dc_conn & 0xffffff);	   /* RDETH: EE context */
		p = sim_put32(p, pkt->dc_conn_psn & SIM_PSN_MASK); /* DETH: Q_Key */
		p = sim_put32(p, pkt->sqpn & 0xffffff);		   /* DETH: source QP */
	}
	if (mask & SIM_OPM_RETH) {
		p = sim_put64(p, pkt->va);
		p = sim_put32(p, pkt->rkey);
		p = sim_put32(p, pkt->dma_len);
	}
	if (mask & SIM_OPM_ATMETH) {
		p = sim_put64(p, pkt->va);
		p = sim_put32(p, pkt->rkey);
		p = sim_put64(p, pkt->swap_add);
		p = sim_put64(p, pkt->compare);
	}
	if (mask & SIM_OPM_AETH)
		p = sim_put32(p, ((uint32_t)pkt->syndrome << 24) | (pkt->msn & 0xffffff));
	if (mask & SIM_OPM_ATMACK)
		p = sim_put64(p, pkt->orig);
	if (mask & SIM_OPM_IMM) {
		memcpy(p, &pkt->imm, 4); /* raw, as the WQE carried it */
		p += 4;
	}
	if (mask & SIM_OPM_PAYLOAD) {
		memcpy(p, pkt->payload, pkt->len);
		p += pkt->len;
		memset(p, 0, pad);
		p += pad;
	}
	icrc = htole32(sim_roce_icrc(a, buf, (size_t)(p - buf)));
	memcpy(p, &icrc, 4);
	return (int)len;
}

void sim_roce_corrupt(uint8_t *buf, size_t len)
{
	size_t pad = (buf[1] >> 4) & 3;

	if (len >= SIM_ROCE_BTH_LEN + SIM_ROCE_ICRC_LEN + pad)
		buf[len - SIM_ROCE_ICRC_LEN - pad - 1] ^= 1;
}

/* ---- parse ---- */

/*
 * The ICRC did not match with identification 0 (a sim host's): the nonzero
 * identification it matches with (checked by computing it again), or 0.
 */
static uint16_t roce_other_ip_id(const struct sim_roce_addr *a, const uint8_t *buf, size_t len,
				 uint32_t icrc_id0, uint32_t icrc)
{
	struct sim_roce_addr with = *a;
	uint16_t id;

	/* a sim host sends from the port it listens on, with identification 0 */
	if (a->ip_id || a->sport == a->dport)
		return 0;
	/* the identification is bytes 4-5 of the 40 rebuilt before the BTH's end */
	if (!sim_icrc_find_ip_id(icrc_id0, icrc, 40 - 6 + (len - SIM_ROCE_BTH_LEN), &id) || !id)
		return 0;
	with.ip_id = id;
	return sim_roce_icrc(&with, buf, len) == icrc ? id : 0;
}

int sim_roce_parse(const uint8_t *buf, size_t len, const struct sim_roce_addr *a,
		   struct sim_pkt **pktp)
{
	const uint8_t *p = buf;
	uint32_t mask, pad, plen, icrc, want;
	struct sim_pkt *pkt;
	uint16_t ip_id = 0;
	uint8_t op, transport;
	size_t hdr;
	bool dc;

	if (len < SIM_ROCE_BTH_LEN + SIM_ROCE_ICRC_LEN)
		return -EBADMSG;
	op = buf[0];
	transport = op & SIM_BTH_TRANSPORT_MASK;
	mask = sim_op_mask(op & ~SIM_BTH_TRANSPORT_MASK);
	if (transport == SIM_BTH_TRANSPORT_RC)
		dc = false;
	else if (transport == SIM_BTH_TRANSPORT_RD && (mask & SIM_OPM_REQ))
		dc = true;
	else
		return -EBADMSG;
	if (!mask || (buf[1] & 0x0f)) /* TVer 0 */
		return -EBADMSG;
	pad = (buf[1] >> 4) & 3;
	hdr = SIM_ROCE_BTH_LEN + sim_roce_ext_len(mask, dc);
	if (len < hdr + pad + SIM_ROCE_ICRC_LEN)
		return -EBADMSG;
	plen = (uint32_t)(len - hdr - pad - SIM_ROCE_ICRC_LEN);
	if (!(mask & SIM_OPM_PAYLOAD) ? (plen || pad)
				      : (plen > SIM_ROCE_PAYLOAD_MAX || pad != sim_roce_pad(plen)))
		return -EBADMSG;
	memcpy(&icrc, buf + len - SIM_ROCE_ICRC_LEN, 4);
	icrc = le32toh(icrc);
	want = sim_roce_icrc(a, buf, len - SIM_ROCE_ICRC_LEN);
	if (icrc != want && !(ip_id = roce_other_ip_id(a, buf, len - SIM_ROCE_ICRC_LEN, want, icrc)))
		return -EILSEQ;

	pkt = sim_pkt_alloc(plen);
	if (!pkt)
		return -ENOMEM;
	sim_gid_from_ipv4(a->saddr, pkt->sgid);
	sim_gid_from_ipv4(a->daddr, pkt->dgid);
	pkt->udp_sport = a->sport;
	pkt->ip_id = ip_id;
	pkt->opcode = op & ~SIM_BTH_TRANSPORT_MASK;
	pkt->se = !!(p[1] & 0x80);
	pkt->pkey = (uint16_t)((p[2] << 8) | p[3]);
	pkt->dqpn = sim_get24(p + 5);
	pkt->ackreq = !!(p[8] & 0x80);
	pkt->psn = sim_get24(p + 9);
	p += SIM_ROCE_BTH_LEN;
	if (dc) {
		pkt->dc = 1;
		pkt->dc_key = sim_get64(p);
		pkt->dc_conn = sim_get24(p + 9);
		pkt->dc_conn_psn = sim_get32(p + 12) & SIM_PSN_MASK;
		pkt->sqpn = sim_get24(p + 17);
		p += SIM_ROCE_DCEXT_LEN + SIM_ROCE_RDETH_LEN + SIM_ROCE_DETH_LEN;
	}
	if (mask & SIM_OPM_RETH) {
		pkt->va = sim_get64(p);
		pkt->rkey = sim_get32(p + 8);
		pkt->dma_len = sim_get32(p + 12);
		p += SIM_ROCE_RETH_LEN;
	}
	if (mask & SIM_OPM_ATMETH) {
		pkt->va = sim_get64(p);
		pkt->rkey = sim_get32(p + 8);
		pkt->swap_add = sim_get64(p + 12);
		pkt->compare = sim_get64(p + 20);
		pkt->dma_len = 8;
		p += SIM_ROCE_ATMETH_LEN;
	}
	if (mask & SIM_OPM_AETH) {
		pkt->syndrome = p[0];
		pkt->msn = sim_get24(p + 1);
		p += SIM_ROCE_AETH_LEN;
	}
	if (mask & SIM_OPM_ATMACK) {
		pkt->orig = sim_get64(p);
		p += SIM_ROCE_ATMACK_LEN;
	}
	if (mask & SIM_OPM_IMM) {
		memcpy(&pkt->imm, p, 4);
		p += SIM_ROCE_IMM_LEN;
	}
	if (plen)
		memcpy(pkt->payload, p, plen);
	*pktp = pkt;
	return 0;
}
