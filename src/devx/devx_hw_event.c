/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hw backend's completion events (devx_event.c says what they are for):
 * an rdma-core DEVX event channel without event data, CQ completion events
 * (number 0) subscribed to the caller's eventfd, and the CQ doorbell.
 *
 * What the kernel refuses (mlx5_ib devx.c): a subscription without a DEVX
 * context, a cookie together with an eventfd, more than 16 events at once,
 * an event number the device does not report for that object, an fd that
 * is not an eventfd.
 */
#include <errno.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "devx/devx.h"
#include "common/kr_barrier.h"

#define KR_CQ_DOORBELL_OFF 0x20u /* MLX5_CQ_DOORBELL: in every UAR page */

int kr_devx_hw_event_ch_open(struct kr_devx_ctx *ctx, void **priv)
{
	struct mlx5dv_devx_event_channel *ch = mlx5dv_devx_create_event_channel(
	    kr_devx_hw_verbs(ctx), MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA);

	if (!ch)
		return errno > 0 ? -errno : -ENOMEM;
	*priv = ch;
	return 0;
}

void kr_devx_hw_event_ch_close(struct kr_devx_ctx *ctx, void *priv)
{
	(void)ctx;
	mlx5dv_devx_destroy_event_channel(priv);
}

int kr_devx_hw_event_subscribe_fd(struct kr_devx_ctx *ctx, void *priv, struct kr_devx_obj *obj,
				  uint16_t event_num, int fd)
{
	int rc;

	(void)ctx;
	rc = mlx5dv_devx_subscribe_devx_event_fd(priv, fd, obj->priv, event_num);
	return rc > 0 ? -rc : (rc < 0 ? (errno > 0 ? -errno : -EINVAL) : 0);
}

void kr_devx_hw_cq_doorbell(struct kr_devx_uar *uar, uint64_t val)
{
	/* the arm word in the doorbell record before the register write */
	kr_wc_start();
	*(volatile uint64_t *)((uint8_t *)uar->base_addr + KR_CQ_DOORBELL_OFF) = val;
	kr_flush_after_doorbell();
}
