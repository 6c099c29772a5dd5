/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The conformance tests' device: no NIC and no sim, only an ops table that
 * records what the library hands the device (command mailboxes, doorbells),
 * so a test can compare those bytes with rdma-core's and the kernel's
 * definitions. Commands succeed with an all-zero out mailbox.
 */
#ifndef KR_CONF_FIXTURE_H
#define KR_CONF_FIXTURE_H

#include <stdint.h>

#include "devx/devx.h"

#define CONF_MBOX_MAX  4096u
#define CONF_UAR_PAGES 8u
#define CONF_BF_REG    512u /* bf_reg_size of a ConnectX-5 */

struct conf_dev {
	struct kr_devx_ctx ctx;
	struct kr_devx_obj obj; /* what obj_create hands out */
	struct kr_devx_uar uar;
	uint8_t last_in[CONF_MBOX_MAX]; /* the last command's in mailbox */
	size_t last_inlen;
	uint32_t dbrec_at_doorbell; /* send doorbell record when the UAR was written */
	uint64_t doorbell_val;
	int doorbells;
	volatile uint32_t *watch_dbrec; /* the record to sample at a doorbell */
	/* optional: fills the out mailbox of a general command (e.g. a capability page) */
	void (*answer)(struct conf_dev *d, const void *in, void *out, size_t outlen);
	void *arg;
	/* UARs as rdma-core's mlx5dv_devx_alloc_uar hands them out (release
	 * libmlx5, 44 unless set): pages of uar_mem, page_id = index + 1; the
	 * NC type one page (nc_page, 0 none yet); BlueFlame registers two to a
	 * page from a FIFO (page index * 2 + register); the dedicated type
	 * from 45. Allocated UARs are calloc'd, free_uar frees them. */
	uint32_t libmlx5;
	uint32_t npages, nc_page, bf_head, bf_len;
	uint16_t bf_fifo[2 * CONF_UAR_PAGES];
	uint8_t page_used[CONF_UAR_PAGES];
	uint8_t page_bf[CONF_UAR_PAGES]; /* split into BlueFlame registers */
	uint8_t uar_mem[CONF_UAR_PAGES][4096];
};

/* A RoCE (roce true) or InfiniBand device with ConnectX-5-like caps
 * (BlueFlame registers of CONF_BF_REG bytes). */
void conf_dev_init(struct conf_dev *d, bool roce);
/* A QP of type on d whose send ring is wqebbs 64-byte slots (malloc'd). */
void conf_qp_init(struct conf_dev *d, struct kr_devx_qp *qp, enum kr_devx_qp_type type,
		  uint32_t wqebbs);
void conf_qp_fini(struct kr_devx_qp *qp);

/* Two ports: a RoCE v2 one (IPv4-mapped GID, MAC) and an InfiniBand one (GID, LID). */
void conf_port_roce(struct kr_devx_port *p, uint8_t last_octet);
void conf_port_ib(struct kr_devx_port *p, uint16_t lid);

/*
 * A sysfs tree under root (conf_sysfs.c): mlx5_0 a RoCE port with entries
 * 0/1 RoCE v1/v2 fe80::, 2/3 v1/v2 ::ffff:192.168.7.1, 4/5 v1/v2
 * 2001:db8::1, 6 empty, 7 v2 ::ffff:10.0.100.1 on a VLAN device; mlx5_1 an
 * InfiniBand port with entry 0. conf_sysfs_put writes one file (text),
 * making its directories; conf_sysfs_rm removes the tree.
 */
#define CONF_SYSFS_PORT "class/infiniband/mlx5_0/ports/1/"
#define CONF_SYSFS_IBP	"class/infiniband/mlx5_1/ports/1/"
void conf_gid_fixture(const char *root);
void conf_sysfs_put(const char *root, const char *rel, const char *text);
void conf_sysfs_rm(const char *root);

static inline uint32_t conf_be32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static inline uint16_t conf_be16(const void *p)
{
	const uint8_t *b = p;

	return (uint16_t)(b[0] << 8 | b[1]);
}

#endif
