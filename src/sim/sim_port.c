/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim port's addresses and what its wire lets through at layer 2.
 *
 * A sim host has one IPv4 address (its GID ::ffff:a.b.c.d) and a MAC made
 * from it, 02:6b:a:b:c:d (locally administered): the sim's ARP is this
 * function, so a sender knows the MAC every peer answers to. The GID table
 * is laid out as a ConnectX port with one IPv4 address shows it:
 *   0  RoCE v1  fe80::<EUI-64 of the MAC>
 *   1  RoCE v2  fe80::<EUI-64 of the MAC>
 *   2  RoCE v1  ::ffff:a.b.c.d
 *   3  RoCE v2  ::ffff:a.b.c.d
 *   4..7 empty (the capability says 8 entries)
 * The wire is IPv4/UDP: a frame leaves only from entry 3 (a RoCE v1 frame
 * is not IP; an IPv6 link-local source has no IPv4 route) and arrives only
 * when its destination MAC is the peer's. Anything else never arrives and
 * the requester's retries run out, as on a real fabric.
 */
#include <errno.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/sim_engine.h"

void sim_mac_of_gid(const uint8_t gid[16], uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0x6b;
	memcpy(mac + 2, gid + 12, 4);
}

static void sim_gid_link_local(const uint8_t mac[6], uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	gid[8] = mac[0] ^ 0x02; /* EUI-64: universal/local bit flipped, ff:fe in the middle */
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
}

int sim_gid_entry(const struct sim_shared *sh, uint16_t index, struct kr_devx_gid_entry *e)
{
	memset(e, 0, sizeof(*e));
	if (index >= SIM_GID_TABLE_LEN)
		return -EINVAL;
	if (index > SIM_GID_V2_IPV4)
		return -ENODATA;
	sim_mac_of_gid(sh->gid, e->mac);
	if (index < 2)
		sim_gid_link_local(e->mac, e->gid);
	else
		memcpy(e->gid, sh->gid, 16);
	e->type = (index & 1) ? KR_GID_TYPE_ROCE_V2 : KR_GID_TYPE_ROCE_V1;
	return 0;
}

bool sim_l2_delivers(const struct sim_pkt *pkt)
{
	uint8_t mac[6];

	if (pkt->sgid_index != SIM_GID_V2_IPV4)
		return false;
	sim_mac_of_gid(pkt->dgid, mac);
	return !memcmp(mac, pkt->dmac, sizeof(mac));
}
