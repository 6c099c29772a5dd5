/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device open and listing: a name that begins with an added backend's prefix
 * is that backend's (devx_backend.c), any other an mlx5 device through
 * rdma-core DEVX (devx_hw.c). All are then driven through the same ops
 * table: open queries the general capabilities and the completion EQ every
 * CQ reports to. Only programs that open devices link this file, and with
 * it rdma-core: a job's view comes from kr_devx_import alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_log.h"

/*
 * kr_devx_open() - see devx.h. Returns 0, -EINVAL (NULL or empty name, hw
 * name longer than 63 bytes, a backend's bad name or options), -ENODEV, -EOPNOTSUPP,
 * -ENOMEM, -EREMOTEIO (capability query failed) or the backend's errno.
 */
int kr_devx_open(const char *name, struct kr_devx_ctx **ctx)
{
	const struct kr_devx_backend *be;
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

	be = kr_devx_backend_added(name);
	if (!be)
		be = &kr_devx_hw_backend;
	if (be->prefix && len == strlen(be->prefix))
		return -EINVAL;
	/* the driver's own names fit ctx->name; an added backend's may carry
	 * options after the device's name, and checks its length itself */
	if (!be->prefix && len >= sizeof(c->name))
		return -EINVAL;
	if (!be->open) {
		KR_ERR("devx", "%s: this program cannot open %s devices (it links only their "
			       "doorbells)", name, be->name);
		return -ENODEV;
	}
	rc = be->open(name, &c);
	if (rc) {
		KR_DBG("devx", "open %s: errno %d", name, -rc);
		return rc;
	}
	c->backend = be;
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
	KR_INFO("devx", "opened %s (%s)", c->name, be->name);
	*ctx = c;
	return 0;

err_close:
	kr_devx_close(c);
	return rc;
}

/*
 * kr_devx_list() - hw mlx5 devices with mlx5dv support, then what each added
 * backend lists. Returns how many entries were written (0..max), or -EINVAL.
 */
int kr_devx_list(struct kr_devx_dev_info *info, int max)
{
	int n, more;

	if (max < 0 || (max > 0 && !info))
		return -EINVAL;
	n = kr_devx_hw_backend.list(info, max);
	if (n < 0)
		n = 0;
	for (uint32_t i = 0; n < max; i++) {
		const struct kr_devx_backend *be = kr_devx_backend_at(i);

		if (!be)
			break;
		more = be->list ? be->list(info + n, max - n) : 0;
		if (more > 0)
			n += more;
	}
	return n;
}
