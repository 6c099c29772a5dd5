/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keeper: what one uid may hold at once, so that no user of the node locks
 * the others out. Tenant slots are the scarce thing: every launch binds one
 * (keeper_bind.c), and a uid that attached one job per launch could take them
 * all. So a uid binds at most uid_launches unpinned slots (--uid-launches;
 * default half the unpinned slots, at least 1) and holds at most uid_ports
 * bound ports on them (--uid-ports; default as many as those slots have).
 * Slots pinned to a uid (tenant.<n>.uid) are its own and outside the quota.
 * Root is not limited: it runs the keeper. A refusal is EDQUOT, logged
 * (rate-limited) with the uid and the limit; the pool segment shows the
 * limits and each tenant's ports, so krctl shows every uid's use.
 */
#include <errno.h>

#include "common/kr_log.h"
#include "keeper/keeper.h"

/* kr_keeper_quota_limits() - see keeper.h. */
void kr_keeper_quota_limits(const struct kr_keeper_cfg *cfg, uint32_t *launches, uint32_t *ports)
{
	uint32_t unpinned = 0;

	for (uint32_t t = 0; t < cfg->tenants; t++)
		unpinned += !cfg->tenant_uid[t];
	*launches = cfg->uid_launches ? cfg->uid_launches : unpinned / 2 ? unpinned / 2 : 1;
	*ports = cfg->uid_ports ? cfg->uid_ports : *launches * cfg->ports;
}

/* Unpinned slots bound to uid, and the ports bound on them. */
static void quota_use(const struct kr_keeper *k, uid_t uid, uint32_t *launches, uint32_t *ports)
{
	*launches = *ports = 0;
	for (uint32_t t = 0; t < k->cfg.tenants; t++) {
		const struct kr_keeper_tenant *kt = &k->tenant[t];

		if (k->cfg.tenant_uid[t] || !kt->bound || kt->uid != uid)
			continue;
		(*launches)++;
		*ports += kr_seg_tenant(k->seg, t)->ports_bound;
	}
}

/* kr_keeper_quota_launch() - see keeper.h. */
int kr_keeper_quota_launch(const struct kr_keeper *k, uid_t uid)
{
	uint32_t used, ports;

	if (uid == 0)
		return 0;
	quota_use(k, uid, &used, &ports);
	if (used < k->seg->uid_launches)
		return 0;
	KR_WARN_RATELIMITED("pool",
			    "uid %u holds %u launches (--uid-launches %u): a new one is refused",
			    (unsigned int)uid, used, k->seg->uid_launches);
	return -EDQUOT;
}

/* kr_keeper_quota_port() - see keeper.h. */
int kr_keeper_quota_port(const struct kr_keeper *k, uint32_t tenant, uid_t uid)
{
	uint32_t launches, used;

	if (uid == 0 || k->cfg.tenant_uid[tenant])
		return 0;
	quota_use(k, uid, &launches, &used);
	if (used < k->seg->uid_ports)
		return 0;
	KR_WARN_RATELIMITED("pool", "uid %u holds %u ports (--uid-ports %u): a new one is refused",
			    (unsigned int)uid, used, k->seg->uid_ports);
	return -EDQUOT;
}
