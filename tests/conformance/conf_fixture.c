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

static const struct kr_devx_ops conf_ops = {
    .doorbell = conf_doorbell,
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
