/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hw backend: a ConnectX device through rdma-core's libmlx5 DEVX
 * (mlx5dv_devx_*). This is the only file that calls rdma-core. rdma-core
 * returns positive errnos or NULL with errno set; both become negative errnos
 * here. A command the firmware failed comes back from the kernel as EREMOTEIO
 * with the out mailbox copied out; any bad out status is reported as
 * -EREMOTEIO so devx_cmd.c can log status and syndrome.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "devx/devx.h"
#include "common/kr_log.h"

struct kr_hw_dev {
	struct kr_devx_ctx ctx; /* first: ctx->priv points back here */
	struct ibv_context *ibctx;
};

/* Every create command returns the new object's number at the same place. */
_Static_assert(KR_PRM_OFF(create_qp_out, qpn) == KR_PRM_OFF(alloc_pd_out, pd) &&
		   KR_PRM_OFF(create_qp_out, qpn) == KR_PRM_OFF(create_cq_out, cqn) &&
		   KR_PRM_OFF(create_qp_out, qpn) == KR_PRM_OFF(create_rmp_out, rmpn) &&
		   KR_PRM_OFF(create_qp_out, qpn) == KR_PRM_OFF(create_dct_out, dctn) &&
		   KR_PRM_OFF(create_qp_out, qpn) == KR_PRM_OFF(create_mkey_out, mkey_index),
	       "create outputs disagree on the object number field");

static struct ibv_context *kr_hw_ibctx(struct kr_devx_ctx *ctx)
{
	return ((struct kr_hw_dev *)ctx->priv)->ibctx;
}

static int kr_hw_errno(int fallback)
{
	return errno > 0 ? -errno : -fallback;
}

/* rc: rdma-core's positive errno (0 = ok). */
static int kr_hw_cmd_rc(int rc, const void *out, size_t outlen)
{
	if (outlen >= KR_PRM_BYTES(mbox_out) && KR_PRM_GET(mbox_out, out, status) != 0)
		return -EREMOTEIO;
	return rc > 0 ? -rc : (rc < 0 ? rc : 0);
}

static uint32_t kr_hw_ibv_access(uint32_t access)
{
	uint32_t ibv = 0;

	if (access & KR_ACCESS_LOCAL_WRITE)
		ibv |= IBV_ACCESS_LOCAL_WRITE;
	if (access & KR_ACCESS_REMOTE_WRITE)
		ibv |= IBV_ACCESS_REMOTE_WRITE;
	if (access & KR_ACCESS_REMOTE_READ)
		ibv |= IBV_ACCESS_REMOTE_READ;
	if (access & KR_ACCESS_REMOTE_ATOMIC)
		ibv |= IBV_ACCESS_REMOTE_ATOMIC;
	return ibv;
}

/* rdma-core >= 45 names it; an older libmlx5 refuses the bit with EOPNOTSUPP */
#define KR_HW_UAR_NC_DEDICATED (1u << 31)

/* The libmlx5 type for flags (devx.h), or -EOPNOTSUPP without BlueFlame. */
static int kr_hw_uar_type(const struct kr_devx_ctx *ctx, uint32_t flags, uint32_t *type)
{
	if (flags & KR_DEVX_UAR_BLUEFLAME) {
		if (!ctx->caps.bf_reg_size || (flags & KR_DEVX_UAR_NC_DEDICATED))
			return -EOPNOTSUPP;
		*type = MLX5DV_UAR_ALLOC_TYPE_BF;
	} else {
		*type = flags & KR_DEVX_UAR_NC_DEDICATED ? KR_HW_UAR_NC_DEDICATED
							 : MLX5DV_UAR_ALLOC_TYPE_NC;
	}
	return 0;
}

/*
 * A UAR of the keeper's context, as libmlx5 hands it out (devx.h): with
 * KR_DEVX_UAR_BLUEFLAME one register of a write-combining page, its two
 * buffers of bf_reg_size / 2 bytes each; no fallback to another type, as
 * the caller's isolation depends on which it gets.
 */
static int kr_hw_alloc_uar(struct kr_devx_ctx *ctx, uint32_t flags, struct kr_devx_uar **uar)
{
	struct mlx5dv_devx_uar *dv;
	struct kr_devx_uar *u;
	uint32_t type;
	int rc;

	rc = kr_hw_uar_type(ctx, flags, &type);
	if (rc)
		return rc;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	dv = mlx5dv_devx_alloc_uar(kr_hw_ibctx(ctx), type);
	if (!dv) {
		rc = kr_hw_errno(ENOMEM);
		free(u);
		return rc;
	}
	u->ctx = ctx;
	u->page_id = dv->page_id;
	u->reg_addr = dv->reg_addr;
	u->base_addr = dv->base_addr;
	u->priv = dv;
	u->shared_fd = -1;
	if (type == MLX5DV_UAR_ALLOC_TYPE_BF)
		u->bf_size = ctx->caps.bf_reg_size / 2u;
	*uar = u;
	return 0;
}

static void kr_hw_close(struct kr_devx_ctx *ctx)
{
	struct kr_hw_dev *hw = ctx->priv;

	if (ibv_close_device(hw->ibctx))
		KR_WARN("devx", "%s: ibv_close_device failed: errno %d", ctx->name, errno);
	free(hw);
}

int kr_devx_hw_cmd_fd(struct kr_devx_ctx *ctx)
{
	return kr_hw_ibctx(ctx)->cmd_fd;
}

void *kr_devx_hw_verbs(struct kr_devx_ctx *ctx)
{
	return kr_hw_ibctx(ctx);
}

static void kr_hw_free_uar(struct kr_devx_uar *uar)
{
	if (uar->shared_fd >= 0)
		close(uar->shared_fd);
	mlx5dv_devx_free_uar(uar->priv);
	free(uar);
}

static int kr_hw_general_cmd(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			     size_t outlen)
{
	int rc = mlx5dv_devx_general_cmd(kr_hw_ibctx(ctx), in, inlen, out, outlen);

	return kr_hw_cmd_rc(rc, out, outlen);
}

static int kr_hw_obj_create(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			    size_t outlen, struct kr_devx_obj **obj)
{
	struct mlx5dv_devx_obj *dv;
	struct kr_devx_obj *o;
	int rc;

	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	dv = mlx5dv_devx_obj_create(kr_hw_ibctx(ctx), in, inlen, out, outlen);
	if (!dv) {
		rc = kr_hw_cmd_rc(errno > 0 ? errno : EIO, out, outlen);
		free(o);
		return rc;
	}
	o->ctx = ctx;
	o->create_op = (uint16_t)KR_PRM_GET(mbox_in, in, opcode);
	o->id = KR_PRM_GET(create_qp_out, out, qpn);
	o->priv = dv;
	*obj = o;
	return 0;
}

static int kr_hw_obj_destroy(struct kr_devx_obj *obj)
{
	int rc = mlx5dv_devx_obj_destroy(obj->priv);

	if (rc)
		return rc > 0 ? -rc : kr_hw_errno(EIO);
	free(obj);
	return 0;
}

static int kr_hw_obj_modify(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
			    size_t outlen)
{
	int rc = mlx5dv_devx_obj_modify(obj->priv, in, inlen, out, outlen);

	return kr_hw_cmd_rc(rc, out, outlen);
}

static int kr_hw_obj_query(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
			   size_t outlen)
{
	int rc = mlx5dv_devx_obj_query(obj->priv, in, inlen, out, outlen);

	return kr_hw_cmd_rc(rc, out, outlen);
}

static int kr_hw_query_eqn(struct kr_devx_ctx *ctx, uint32_t vector, uint32_t *eqn)
{
	int rc = mlx5dv_devx_query_eqn(kr_hw_ibctx(ctx), vector, eqn);

	return rc > 0 ? -rc : (rc < 0 ? kr_hw_errno(EIO) : 0);
}

/* The kernel's GID table in sysfs: type and net device come with each entry. */
static int kr_hw_query_gid_entry(struct kr_devx_ctx *ctx, uint8_t port, uint16_t index,
				 struct kr_devx_gid_entry *entry)
{
	return kr_devx_sysfs_gid_entry("/sys", ibv_get_device_name(kr_hw_ibctx(ctx)->device),
				       port, index, entry);
}

static int kr_hw_query_lid(struct kr_devx_ctx *ctx, uint8_t port, uint16_t *lid)
{
	struct ibv_port_attr attr;
	int rc = ibv_query_port(kr_hw_ibctx(ctx), port, &attr);

	if (rc)
		return -rc;
	*lid = attr.lid;
	return 0;
}

static int kr_hw_umem_dereg(struct kr_devx_umem *umem)
{
	int rc = mlx5dv_devx_umem_dereg(umem->priv);

	if (rc)
		return rc > 0 ? -rc : kr_hw_errno(EIO);
	free(umem);
	return 0;
}

static int kr_hw_umem_reg(struct kr_devx_ctx *ctx, void *addr, size_t size, uint32_t access,
			  struct kr_devx_umem **umem)
{
	struct mlx5dv_devx_umem *dv;
	struct kr_devx_umem *u;

	if (access & ~(uint32_t)KR_ACCESS_UMEM) /* the kernel would refuse it: say so here */
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	dv = mlx5dv_devx_umem_reg(kr_hw_ibctx(ctx), addr, size, kr_hw_ibv_access(access));
	if (!dv) {
		int rc = kr_hw_errno(EINVAL);

		free(u);
		return rc;
	}
	u->ctx = ctx;
	u->id = dv->umem_id;
	u->addr = addr;
	u->size = size;
	u->priv = dv;
	*umem = u;
	return 0;
}

static const struct kr_devx_ops kr_hw_ops = {
    .alloc_uar = kr_hw_alloc_uar,
    .close = kr_hw_close,
    .doorbell = kr_devx_hw_doorbell,
    .bf_copy = kr_devx_hw_bf_copy,
    .free_uar = kr_hw_free_uar,
    .general_cmd = kr_hw_general_cmd,
    .obj_create = kr_hw_obj_create,
    .obj_destroy = kr_hw_obj_destroy,
    .obj_modify = kr_hw_obj_modify,
    .obj_query = kr_hw_obj_query,
    .query_eqn = kr_hw_query_eqn,
    .query_gid_entry = kr_hw_query_gid_entry,
    .query_lid = kr_hw_query_lid,
    .uar_export = kr_devx_hw_uar_export,
    .uar_import = kr_devx_hw_uar_import,
    .uar_wrap = kr_devx_hw_uar_wrap,
    .umem_dereg = kr_hw_umem_dereg,
    .umem_reg = kr_hw_umem_reg,
    .event_ch_open = kr_devx_hw_event_ch_open,
    .event_ch_close = kr_devx_hw_event_ch_close,
    .event_subscribe_fd = kr_devx_hw_event_subscribe_fd,
    .cq_doorbell = kr_devx_hw_cq_doorbell,
};

static struct ibv_device *kr_hw_find(struct ibv_device **list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			return list[i];
	return NULL;
}

/*
 * kr_devx_hw_open() - open mlx5 device name with DEVX. Returns 0, -ENODEV (no
 * verbs device of that name), -EOPNOTSUPP (not an mlx5dv device, or DEVX not
 * available to this process), -ENOMEM or rdma-core's errno.
 */
int kr_devx_hw_open(const char *name, struct kr_devx_ctx **ctx)
{
	struct mlx5dv_context_attr attr = {.flags = MLX5DV_CONTEXT_FLAGS_DEVX};
	struct mlx5dv_context dv = {0};
	struct ibv_device **list;
	struct ibv_device *dev;
	struct kr_hw_dev *hw;
	int n = 0, rc;

	if (!name || !ctx)
		return -EINVAL;
	list = ibv_get_device_list(&n);
	if (!list)
		return -ENODEV;
	dev = kr_hw_find(list, n, name);
	if (!dev) {
		rc = -ENODEV;
		goto err_free_list;
	}
	if (!mlx5dv_is_supported(dev)) {
		KR_ERR("devx", "%s is not an mlx5 device", name);
		rc = -EOPNOTSUPP;
		goto err_free_list;
	}
	hw = calloc(1, sizeof(*hw));
	if (!hw) {
		rc = -ENOMEM;
		goto err_free_list;
	}
	hw->ibctx = mlx5dv_open_device(dev, &attr);
	if (!hw->ibctx) {
		rc = kr_hw_errno(EOPNOTSUPP);
		if (rc == -EPROTONOSUPPORT)
			rc = -EOPNOTSUPP;
		KR_ERR("devx", "%s: mlx5dv_open_device with DEVX failed: errno %d", name, -rc);
		goto err_free_hw;
	}
	ibv_free_device_list(list);
	/* the context's CQE format is fixed at open: the poller needs user_index (v1) */
	if (mlx5dv_query_device(hw->ibctx, &dv) || !(dv.flags & MLX5DV_CONTEXT_FLAGS_CQE_V1)) {
		KR_ERR("devx", "%s: the context does not use CQE version 1", name);
		ibv_close_device(hw->ibctx);
		free(hw);
		return -EOPNOTSUPP;
	}

	hw->ctx.ops = &kr_hw_ops;
	snprintf(hw->ctx.name, sizeof(hw->ctx.name), "%s", name);
	hw->ctx.backend = &kr_devx_hw_backend;
	hw->ctx.priv = hw;
	*ctx = &hw->ctx;
	return 0;

err_free_hw:
	free(hw);
err_free_list:
	ibv_free_device_list(list);
	return rc;
}

/* kr_devx_hw_list() - names of the mlx5dv-capable verbs devices, up to max. */
int kr_devx_hw_list(struct kr_devx_dev_info *info, int max)
{
	struct ibv_device **list;
	int n = 0, count = 0;

	if (max <= 0 || !info)
		return 0;
	list = ibv_get_device_list(&n);
	if (!list)
		return 0;
	for (int i = 0; i < n && count < max; i++) {
		if (!mlx5dv_is_supported(list[i]))
			continue;
		memset(&info[count], 0, sizeof(info[count]));
		snprintf(info[count].name, sizeof(info[count].name), "%s",
			 ibv_get_device_name(list[i]));
		info[count].backend = &kr_devx_hw_backend;
		count++;
	}
	ibv_free_device_list(list);
	return count;
}

/*
 * A ConnectX: UAR pages are device MMIO, mapped from the command fd (which
 * a job gets only from a --trusted keeper), and the device never sleeps.
 */
const struct kr_devx_backend kr_devx_hw_backend = {
    .name = "hw",
    .caps = KR_DEVX_BE_UAR_MMIO,
    .open = kr_devx_hw_open,
    .list = kr_devx_hw_list,
    .import = kr_devx_hw_import,
};
