/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device open, close and listing. "sim:<name>" opens a software ConnectX host
 * (sim/), any other name an mlx5 device through rdma-core DEVX (devx_hw.c).
 * Both are then driven through the same ops table: open queries the general
 * capabilities and the completion EQ every CQ reports to.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_log.h"
#include "sim/sim.h"

#define KR_SIM_PREFIX "sim:"

static bool kr_devx_name_is_sim(const char *name)
{
	return strncmp(name, KR_SIM_PREFIX, strlen(KR_SIM_PREFIX)) == 0;
}

/*
 * kr_devx_open() - see devx.h. Returns 0, -EINVAL (NULL or empty name, hw
 * name longer than 63 bytes, bad sim name or options), -ENODEV, -EOPNOTSUPP,
 * -ENOMEM, -EREMOTEIO (capability query failed) or the backend's errno.
 */
int kr_devx_open(const char *name, struct kr_devx_ctx **ctx)
{
	struct kr_devx_ctx *c = NULL;
	size_t len;
	int rc;

	if (!ctx)
		return -EINVAL;
	*ctx = NULL;
	if (!name)
		return -EINVAL;
	len = strlen(name);
	if (len == 0)
		return -EINVAL;

	if (kr_devx_name_is_sim(name)) {
		/* options may follow the host name: the sim checks the name's length */
		if (len == strlen(KR_SIM_PREFIX))
			return -EINVAL;
		rc = sim_open(name + strlen(KR_SIM_PREFIX), &c);
	} else {
		if (len >= sizeof(c->name))
			return -EINVAL;
		rc = kr_devx_hw_open(name, &c);
	}
	if (rc) {
		KR_DBG("devx", "open %s: errno %d", name, -rc);
		return rc;
	}
	if (c->name[0] == '\0')
		snprintf(c->name, sizeof(c->name), "%s", name);

	rc = kr_devx_caps_query(c, &c->caps);
	if (rc) {
		KR_ERR("devx", "%s: capability query failed: errno %d", name, -rc);
		goto err_close;
	}
	rc = kr_devx_caps_check(name, &c->caps);
	if (rc)
		goto err_close;
	rc = c->ops->query_eqn(c, 0, &c->eqn);
	if (rc) {
		KR_ERR("devx", "%s: completion EQ query failed: errno %d", name, -rc);
		goto err_close;
	}
	/* a port without a usable GID still opens (krdevinfo shows it); users check gid_index */
	if (kr_devx_port_select(c, 1, -1, &c->port)) {
		memset(&c->port, 0, sizeof(c->port));
		c->port.gid_index = KR_DEVX_GID_NONE;
	}
	KR_INFO("devx", "opened %s (%s)", c->name, c->is_sim ? "sim" : "hw");
	*ctx = c;
	return 0;

err_close:
	kr_devx_close(c);
	return rc;
}

/*
 * kr_devx_close() - close a device opened by kr_devx_open. Every object created
 * on it must have been destroyed first.
 */
void kr_devx_close(struct kr_devx_ctx *ctx)
{
	if (!ctx)
		return;
	free(ctx->rsc);
	ctx->rsc = NULL;
	ctx->rsc_cap = 0;
	free(ctx->mkey_last);
	ctx->mkey_last = NULL;
	ctx->ops->close(ctx);
}

/*
 * kr_devx_list() - hw mlx5 devices with mlx5dv support, then the sim hosts open
 * in this process. Returns how many entries were written (0..max), or -EINVAL.
 */
int kr_devx_list(struct kr_devx_dev_info *info, int max)
{
	int n, n_sim;

	if (max < 0 || (max > 0 && !info))
		return -EINVAL;
	n = kr_devx_hw_list(info, max);
	if (n < 0)
		n = 0;
	if (n < max) {
		n_sim = sim_list(info + n, max - n);
		if (n_sim > 0)
			n += n_sim;
	}
	return n;
}
