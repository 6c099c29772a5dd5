/* SPDX-License-Identifier: BSD-3-Clause */
/* The conformance tests' recording device: see conf_fixture.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_fixture.h"
#include "kr_test.h"

static struct conf_dev *conf_of(struct kr_devx_ctx *ctx)
{
	return (struct conf_dev *)ctx;
}

static void conf_record(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			size_t outlen)
{
	struct conf_dev *d = conf_of(ctx);

	CHECK(inlen <= CONF_MBOX_MAX);
	memcpy(d->last_in, in, inlen);
	d->last_inlen = inlen;
	memset(out, 0, outlen); /* status OK, syndrome 0 */
}

static int conf_general_cmd(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			    size_t outlen)
{
	struct conf_dev *d = conf_of(ctx);

	conf_record(ctx, in, inlen, out, outlen);
	if (d->answer)
		d->answer(d, in, out, outlen);
	return 0;
}

static int conf_obj_create(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			   size_t outlen, struct kr_devx_obj **obj)
{
	conf_record(ctx, in, inlen, out, outlen);
	*obj = &conf_of(ctx)->obj;
	return 0;
}

static int conf_obj_modify(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
			   size_t outlen)
{
	conf_record(obj->ctx, in, inlen, out, outlen);
	return 0;
}

static int conf_obj_destroy(struct kr_devx_obj *obj)
{
	(void)obj;
	return 0;
}

static int conf_umem_reg(struct kr_devx_ctx *ctx, void *addr, size_t size, uint32_t access,
			 struct kr_devx_umem **umem)
{
	struct kr_devx_umem *u;

	if (access & ~(uint32_t)KR_ACCESS_UMEM) /* the kernel's devx_umem_get refuses the rest */
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->ctx = ctx;
	u->id = 7;
	u->addr = addr;
	u->size = size;
	*umem = u;
	return 0;
}

static int conf_umem_dereg(struct kr_devx_umem *umem)
{
	free(umem);
	return 0;
}

static void conf_doorbell(struct kr_devx_uar *uar, uint64_t val)
{
	struct conf_dev *d = conf_of(uar->ctx);

	d->doorbells++;
	d->doorbell_val = val;
	if (d->watch_dbrec)
		d->dbrec_at_doorbell = *d->watch_dbrec;
}

/* A page nobody holds; -ENOMEM past CONF_UAR_PAGES. */
static int conf_page_new(struct conf_dev *d, uint32_t *ip)
{
	for (uint32_t i = 0; i < CONF_UAR_PAGES; i++)
		if (!d->page_used[i]) {
			d->page_used[i] = 1;
			d->page_bf[i] = 0;
			*ip = i;
			return 0;
		}
	return -ENOMEM;
}

static void conf_bf_push(struct conf_dev *d, uint32_t v)
{
	d->bf_fifo[(d->bf_head + d->bf_len++) % (2 * CONF_UAR_PAGES)] = (uint16_t)v;
}

/* rdma-core 44's _mlx5dv_devx_alloc_uar, from its source, not from devx.h */
static int conf_alloc_uar(struct kr_devx_ctx *ctx, uint32_t flags, struct kr_devx_uar **uarp)
{
	struct conf_dev *d = conf_of(ctx);
	uint32_t release = d->libmlx5 ? d->libmlx5 : 44, i, reg = 0;
	struct kr_devx_uar *u;
	int rc = 0;

	if (flags == KR_DEVX_UAR_BLUEFLAME) {
		if (!ctx->caps.bf_reg_size)
			return -EOPNOTSUPP; /* no bfregs to split a page into */
		if (!d->bf_len) {
			rc = conf_page_new(d, &i);
			if (rc)
				return rc;
			d->page_bf[i] = 1;
			conf_bf_push(d, 2 * i);
			conf_bf_push(d, 2 * i + 1);
		}
		i = d->bf_fifo[d->bf_head] / 2;
		reg = d->bf_fifo[d->bf_head] % 2;
		d->bf_head = (d->bf_head + 1) % (2 * CONF_UAR_PAGES);
		d->bf_len--;
	} else if (flags == KR_DEVX_UAR_NC_DEDICATED && release >= 45) {
		rc = conf_page_new(d, &i);
	} else if (!flags) {
		if (!d->nc_page) {
			rc = conf_page_new(d, &i);
			if (rc)
				return rc;
			d->nc_page = i + 1;
		}
		i = d->nc_page - 1;
	} else {
		return -EOPNOTSUPP;
	}
	if (rc)
		return rc;
	u = calloc(1, sizeof(*u));
	CHECK(u != NULL);
	u->ctx = ctx;
	u->page_id = i + 1;
	u->base_addr = d->uar_mem[i];
	u->reg_addr = d->uar_mem[i] + 0x800 + reg * ctx->caps.bf_reg_size;
	u->bf_size = flags == KR_DEVX_UAR_BLUEFLAME ? ctx->caps.bf_reg_size / 2u : 0;
	u->shared_fd = -1;
	*uarp = u;
	return 0;
}

static void conf_free_uar(struct kr_devx_uar *u)
{
	struct conf_dev *d = conf_of(u->ctx);
	uint32_t i = u->page_id - 1;

	if (d->page_bf[i])
		conf_bf_push(d, 2 * i + ((uint8_t *)u->reg_addr - d->uar_mem[i] - 0x800) /
					    u->ctx->caps.bf_reg_size);
	else if (u->page_id != d->nc_page)
		d->page_used[i] = 0;
	free(u);
}

static const struct kr_devx_ops conf_ops = {
    .alloc_uar = conf_alloc_uar,
    .doorbell = conf_doorbell,
    .free_uar = conf_free_uar,
    .general_cmd = conf_general_cmd,
    .obj_create = conf_obj_create,
    .obj_destroy = conf_obj_destroy,
    .obj_modify = conf_obj_modify,
    .umem_dereg = conf_umem_dereg,
    .umem_reg = conf_umem_reg,
};

void conf_dev_init(struct conf_dev *d, bool roce)
{
	memset(d, 0, sizeof(*d));
	d->ctx.ops = &conf_ops;
	snprintf(d->ctx.name, sizeof(d->ctx.name), "conf:%s", roce ? "roce" : "ib");
	d->ctx.caps.port_type = roce ? KR_PORT_TYPE_ETH : KR_PORT_TYPE_IB;
	d->ctx.caps.roce = roce;
	d->ctx.caps.num_ports = 1;
	d->ctx.caps.max_wqe_sz_sq = 1024;
	d->ctx.caps.max_wqe_sz_sq_dc = 1024;
	d->ctx.caps.log_max_msg = 30;
	d->ctx.caps.log_max_qp_sz = 15;
	d->ctx.caps.max_wqe_sz_rq = 512;
	d->ctx.caps.log_max_ra_req_qp = 4;
	d->ctx.caps.log_max_ra_res_qp = 4;
	d->ctx.caps.log_max_ra_req_dc = 4;
	d->ctx.caps.log_max_ra_res_dc = 4;
	d->ctx.caps.cqe_version = 1;
	d->ctx.caps.dct = true;
	d->ctx.caps.basic_cyclic_rcv_wqe = true;
	d->ctx.caps.log_max_srq_sz = 15;
	d->ctx.caps.atomic = true;
	d->ctx.caps.bf_reg_size = CONF_BF_REG;
	d->obj.ctx = &d->ctx;
	d->obj.id = 0x4242;
	d->uar.ctx = &d->ctx;
}

void conf_qp_init(struct conf_dev *d, struct kr_devx_qp *qp, enum kr_devx_qp_type type,
		  uint32_t wqebbs)
{
	static uint32_t dbrec[4];

	memset(qp, 0, sizeof(*qp));
	qp->ctx = &d->ctx;
	qp->obj = &d->obj;
	qp->type = type;
	qp->qpn = 0x123456;
	qp->uar = &d->uar;
	qp->dbrec = dbrec;
	qp->sq_wqebb_cnt = wqebbs;
	qp->sq_buf = aligned_alloc(64, (size_t)wqebbs * 64);
	qp->sq_wrid = calloc(wqebbs, sizeof(uint64_t));
	qp->sq_wqe_next = calloc(wqebbs, sizeof(uint32_t));
	CHECK(qp->sq_buf && qp->sq_wrid && qp->sq_wqe_next);
	memset(qp->sq_buf, 0xa5, (size_t)wqebbs * 64);
	d->watch_dbrec = &qp->dbrec[MLX5_SND_DBR];
}

void conf_qp_fini(struct kr_devx_qp *qp)
{
	free(qp->sq_buf);
	free(qp->sq_wrid);
	free(qp->sq_wqe_next);
}

void conf_port_roce(struct kr_devx_port *p, uint8_t last_octet)
{
	static const uint8_t gid[16] = {[10] = 0xff, [11] = 0xff, 192, 168, 7, 0};

	memset(p, 0, sizeof(*p));
	memcpy(p->addr.gid, gid, 16);
	p->addr.gid[15] = last_octet;
	p->addr.mac[0] = 0x0c;
	p->addr.mac[1] = 0x42;
	p->addr.mac[2] = 0xa1;
	p->addr.mac[5] = last_octet;
	p->gid_index = 3;
	p->num = 1;
	p->roce = 1;
	p->gid_type = KR_GID_TYPE_ROCE_V2;
}

void conf_port_ib(struct kr_devx_port *p, uint16_t lid)
{
	static const uint8_t gid[16] = {0xfe, 0x80, [8] = 0x98, 0x03, 0x9b, 0x03, 0, 0x12, 0x34};

	memset(p, 0, sizeof(*p));
	memcpy(p->addr.gid, gid, 16);
	p->addr.gid[15] = (uint8_t)lid;
	p->addr.lid = lid;
	p->gid_index = 0;
	p->num = 1;
	p->roce = 0;
	p->gid_type = KR_GID_TYPE_IB;
}
