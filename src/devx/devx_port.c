/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which GID a port sends from, and the path fields every QP and AV derive
 * from it. Facts:
 *  - A RoCE port's GID table holds each IP address twice, as RoCE v1 and as
 *    RoCE v2, plus the link-local fe80:: entries; index 0 is RoCE v1
 *    link-local on most ports, which no router forwards. rdma-core exposes
 *    the type (ibv_query_gid_ex, sysfs gid_attrs/types); UCX picks a RoCE v2
 *    entry (UCX_IB_GID_INDEX overrides); krcore does the same.
 *  - RoCE v2 carries the GRH in the IP header: the AV's GRH bit stays clear
 *    and its rlid field holds the UDP source port (rdma-core mlx5_create_ah,
 *    which takes it from 0xc000..0xffff). InfiniBand AVs carry the target's
 *    LID; krcore always sets the GRH there so that subnets can be crossed.
 *  - The kernel spreads RC source ports by a flow label hashed from the two
 *    QP numbers (rdma_calc_flow_label, rdma_flow_label_to_udp_sport):
 *    product of the numbers folded to 20 bits, then the top 6 bits folded
 *    into the low 14 and the result put above 0xc000.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_log.h"

#define KR_ROCE_SPORT_MIN  0xc000u
#define KR_FLOW_LABEL_MASK 0xfffffu
#define KR_HOP_LIMIT	   64 /* IP TTL of RoCE v2, hop limit of an IB GRH */

static bool gid_is_v4mapped(const uint8_t gid[16])
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(gid, pfx, sizeof(pfx));
}

static bool gid_is_link_local(const uint8_t gid[16])
{
	return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80;
}

/* Rank of an entry for the automatic choice; 0 = never chosen by itself. */
static int gid_rank(const struct kr_devx_gid_entry *e, bool roce)
{
	if (!roce)
		return e->type == KR_GID_TYPE_IB ? 1 : 0;
	if (e->type != KR_GID_TYPE_ROCE_V2)
		return 0;
	if (gid_is_v4mapped(e->gid))
		return 3;
	return gid_is_link_local(e->gid) ? 1 : 2;
}

int kr_devx_gid_pick(const struct kr_devx_gid_entry *tab, uint32_t n, bool roce, int want)
{
	int best = -ENOENT, best_rank = 0;
	uint32_t i;

	if (want >= 0) {
		if ((uint32_t)want >= n || tab[want].type == 0)
			return -EINVAL;
		return want;
	}
	for (i = 0; i < n; i++) {
		int r = gid_rank(&tab[i], roce);

		if (r > best_rank) { /* strictly better: the lowest index of a rank wins */
			best_rank = r;
			best = (int)i;
		}
	}
	return best;
}

int kr_devx_port_select(struct kr_devx_ctx *ctx, uint8_t port, int want, struct kr_devx_port *out)
{
	uint32_t n = ctx->caps.gid_table_len, i;
	bool roce = ctx->caps.port_type != KR_PORT_TYPE_IB;
	struct kr_devx_gid_entry *tab;
	uint16_t lid = 0;
	int rc, idx;

	if (n == 0) /* an encoding the caps did not know: try entry 0 */
		n = 1;
	tab = calloc(n, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		rc = ctx->ops->query_gid_entry(ctx, port, (uint16_t)i, &tab[i]);
		if (rc == -ENODATA || rc == -EINVAL) { /* empty, or past what the port has */
			memset(&tab[i], 0, sizeof(tab[i]));
			continue;
		}
		if (rc)
			goto out;
	}
	idx = kr_devx_gid_pick(tab, n, roce, want);
	if (idx < 0) {
		rc = idx;
		if (want >= 0)
			KR_ERR("devx", "%s port %u: GID index %d is empty or beyond the table (%u)",
			       ctx->name, port, want, n);
		else
			KR_ERR("devx",
			       "%s port %u: no %s GID (give the port's net device an IP "
			       "address, or choose an index)",
			       ctx->name, port, roce ? "RoCE v2" : "InfiniBand");
		goto out;
	}
	if (!roce) {
		rc = ctx->ops->query_lid(ctx, port, &lid);
		if (rc)
			goto out;
	}
	if (roce && tab[idx].type == KR_GID_TYPE_ROCE_V1)
		KR_WARN("devx", "%s port %u: GID index %d is RoCE v1: not routable over IP",
			ctx->name, port, idx);
	memset(out, 0, sizeof(*out));
	memcpy(out->addr.gid, tab[idx].gid, sizeof(out->addr.gid));
	if (roce)
		memcpy(out->addr.mac, tab[idx].mac, sizeof(out->addr.mac));
	out->addr.lid = lid;
	out->gid_index = (uint16_t)idx;
	out->num = port;
	out->roce = roce;
	out->gid_type = tab[idx].type;
	rc = 0;
out:
	free(tab);
	return rc;
}

const char *kr_devx_gid_type_str(uint8_t type)
{
	switch (type) {
	case KR_GID_TYPE_IB:
		return "InfiniBand";
	case KR_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case KR_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	default:
		return "?";
	}
}

uint16_t kr_devx_udp_sport(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;
	uint32_t fl, lo, hi;

	v ^= v >> 20;
	v ^= v >> 40;
	fl = (uint32_t)v & KR_FLOW_LABEL_MASK;
	lo = fl & 0x3fff;
	hi = fl & 0xfc000;
	lo ^= hi >> 14;
	return (uint16_t)(lo | KR_ROCE_SPORT_MIN);
}

void kr_devx_dc_av_path(struct kr_devx_dc_av *av, const struct kr_devx_port *local,
			const struct kr_devx_addr *peer, uint32_t local_id, uint32_t dctn)
{
	memcpy(av->rgid, peer->gid, sizeof(av->rgid));
	av->sgid_index = (uint8_t)local->gid_index;
	av->hop_limit = KR_HOP_LIMIT;
	av->tclass = local->tclass;
	if (local->roce) {
		memcpy(av->rmac, peer->mac, sizeof(av->rmac));
		av->rlid = kr_devx_udp_sport(local_id, dctn);
		av->grh = false;
		av->stat_rate_sl = (uint8_t)((local->sl & 0x7) << 1);
	} else {
		memset(av->rmac, 0, sizeof(av->rmac));
		av->rlid = peer->lid;
		av->grh = true;
		av->stat_rate_sl = local->sl & 0xf;
	}
}

void kr_devx_qp_conn_path(struct kr_devx_qp_conn *conn, const struct kr_devx_port *local,
			  const struct kr_devx_addr *peer, uint32_t lqpn, uint32_t rqpn)
{
	memcpy(conn->rgid, peer->gid, sizeof(conn->rgid));
	conn->sgid_index = (uint8_t)local->gid_index;
	conn->hop_limit = KR_HOP_LIMIT;
	conn->tclass = local->tclass;
	conn->sl = local->sl;
	if (local->roce) {
		memcpy(conn->rmac, peer->mac, sizeof(conn->rmac));
		conn->rlid = 0;
		conn->udp_sport = kr_devx_udp_sport(lqpn, rqpn);
	} else {
		memset(conn->rmac, 0, sizeof(conn->rmac));
		conn->rlid = peer->lid;
		conn->udp_sport = 0;
	}
}
