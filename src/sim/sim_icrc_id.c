/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The IPv4 identification a received RoCE v2 datagram's ICRC was made with.
 *
 * The ICRC covers the IPv4 header's identification (annex A17.8.2 masks
 * only TOS, TTL and the checksum; rxe_icrc.c copies the rest). A UDP socket
 * does not show the receiver that header, so sim_roce.c rebuilds it with
 * identification 0, which is what a sim host sends (sim_udp.c). Another
 * sender does not: Linux's rdma_rxe fills it with __ip_select_ident (a
 * counter per destination), and every one of its packets failed the check
 * (found by the soft-RoCE interop test, tests/interop/test_rxe_sim_rc.sh).
 *
 * The CRC is linear over GF(2): the ICRC under identification id differs
 * from the one under 0 by CRC_0([id_hi, id_lo]) advanced over the M bytes
 * that follow the identification, i.e. multiplied by x^(8M) modulo the
 * polynomial (reflected bit order, bit 31 = x^0). That difference is a
 * linear map of id's 16 bits into 32: one elimination finds the id that
 * explains the received ICRC, if there is one, and the caller checks it by
 * computing the ICRC again. What is lost, said plainly: for such a packet
 * the check keeps 16 of its 32 bits (a corrupted packet passes with
 * probability 2^-16 instead of 2^-32); a packet of a sim host keeps the
 * whole check (sim_roce.c tries none for a source port equal to its
 * destination port, the port a sim host listens and sends on).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/sim_engine.h"

#define CRC_POLY_REFLECTED 0xedb88320u
#define X0		   0x80000000u /* the polynomial 1 */

static uint32_t x2n[32];     /* x^(2^k) mod P */
static uint32_t id_unit[16]; /* CRC_0 of the two identification bytes with only bit i set */
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

/* a * b mod P, both reflected. */
static uint32_t mul_mod_p(uint32_t a, uint32_t b)
{
	uint32_t m = X0, p = 0;

	if (!a)
		return 0; /* the loop below ends at a's last set bit */
	for (;;) {
		if (a & m) {
			p ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = b & 1 ? (b >> 1) ^ CRC_POLY_REFLECTED : b >> 1;
	}
	return p;
}

/* x^n mod P. */
static uint32_t x_pow(uint64_t n)
{
	uint32_t p = X0;

	for (unsigned int k = 0; n && k < 32; k++, n >>= 1)
		if (n & 1)
			p = mul_mod_p(x2n[k], p);
	return p;
}

static void tables_init(void)
{
	x2n[0] = X0 >> 1; /* x */
	for (unsigned int k = 1; k < 32; k++)
		x2n[k] = mul_mod_p(x2n[k - 1], x2n[k - 1]);
	for (unsigned int i = 0; i < 16; i++) {
		uint8_t be[2] = {(uint8_t)((1u << i) >> 8), (uint8_t)(1u << i)};

		id_unit[i] = sim_crc32_update(0, be, 2);
	}
}

/* sim_icrc_find_ip_id() - see sim_engine.h. */
bool sim_icrc_find_ip_id(uint32_t icrc_id0, uint32_t icrc_got, uint64_t after_id, uint16_t *id)
{
	uint32_t basis[32] = {0}, shift, diff = icrc_id0 ^ icrc_got;
	uint16_t tag[32] = {0}, t = 0;

	pthread_once(&tables_once, tables_init);
	shift = x_pow(8 * after_id);
	for (unsigned int i = 0; i < 16; i++) {
		uint32_t v = mul_mod_p(shift, id_unit[i]);
		uint16_t vt = (uint16_t)(1u << i);

		for (int b = 31; b >= 0 && v; b--) {
			if (!(v >> b & 1))
				continue;
			if (!basis[b]) {
				basis[b] = v;
				tag[b] = vt;
				break;
			}
			v ^= basis[b];
			vt ^= tag[b];
		}
		if (!v)
			return false; /* two identifications alike: none is sure */
	}
	for (int b = 31; b >= 0 && diff; b--) {
		if (!(diff >> b & 1))
			continue;
		if (!basis[b])
			return false;
		diff ^= basis[b];
		t ^= tag[b];
	}
	*id = t;
	return diff == 0;
}
