/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every line of src/devx/devx_prm_fields.h against the installed kernel's
 * include/linux/mlx5/mlx5_ifc.h (bit offset = offsetof of its u8 arrays, bit
 * width = sizeof):
 *   KR_PRM         offset and width of mlx5_ifc_<s>_bits.<f>
 *   KR_PRM_AS      offset and width of the named kernel struct's field
 *   KR_PRM_SIZE    sizeof(mlx5_ifc_<s>_bits)
 *   KR_PRM_DOC     against the independent table below (same offset, width and
 *                  source), inside the kernel struct, overlapping none of our
 *                  kernel-checked fields and lying in the kernel's reserved_at_*
 *                  ranges of that struct (parsed from the header text)
 * plus every opcode, status and enum value of devx_prm.h against the kernel's
 * (statuses and capability modes are parsed from device.h, which does not
 * compile in user space; the QP rq_type values are in no 6.1 header and are
 * checked against the documented table below).
 *
 * KR_MLX5_IFC_H is the header's path, found by tests/devx/meson.build.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx_prm.h"
#include "kr_test.h"

#ifndef KR_MLX5_IFC_H

int main(void)
{
	KR_SKIP("no /usr/src/linux-headers-*-common/include/linux/mlx5/mlx5_ifc.h: "
		"install linux-headers-amd64");
}

#else

#include "kr_mlx5_ifc.h"

/*
 * The generic command header (mbox_in/mbox_out) is not a kernel struct; its
 * size is that of the smallest command, ALLOC_PD.
 */
#define mlx5_ifc_mbox_in_bits  mlx5_ifc_alloc_pd_in_bits
#define mlx5_ifc_mbox_out_bits mlx5_ifc_alloc_pd_out_bits

enum prm_kind { PRM_FIELD, PRM_AS, PRM_DOC, PRM_SIZE };

struct prm_line {
	enum prm_kind kind;
	const char *s;	     /* our struct name */
	const char *f;	     /* field (NULL for SIZE) */
	const char *k;	     /* kernel struct checked against */
	const char *src;     /* DOC: documentation source */
	unsigned long off;   /* ours: bit offset, or bits for SIZE */
	unsigned long w;     /* ours: bit width */
	unsigned long k_off; /* kernel: FIELD/AS */
	unsigned long k_w;
	unsigned long k_size; /* kernel: sizeof(struct mlx5_ifc_<k>_bits) */
};

#define K_SIZE(s)   sizeof(struct mlx5_ifc_##s##_bits)
#define K_OFF(s, f) offsetof(struct mlx5_ifc_##s##_bits, f)
#define K_W(s, f)   sizeof(((struct mlx5_ifc_##s##_bits *)0)->f)

#define KR_PRM(s, f, o, w) {PRM_FIELD, #s, #f, #s, NULL, o, w, K_OFF(s, f), K_W(s, f), K_SIZE(s)},
#define KR_PRM_AS(s, f, o, w, k)                                                                   \
	{PRM_AS, #s, #f, #k, NULL, o, w, K_OFF(k, f), K_W(k, f), K_SIZE(k)},
#define KR_PRM_DOC(s, f, o, w, src) {PRM_DOC, #s, #f, #s, src, o, w, 0, 0, K_SIZE(s)},
#define KR_PRM_SIZE(s, bits)	    {PRM_SIZE, #s, NULL, #s, NULL, bits, 0, 0, 0, K_SIZE(s)},
static const struct prm_line prm_lines[] = {
#include "devx/devx_prm_fields.h"
};
#undef KR_PRM
#undef KR_PRM_AS
#undef KR_PRM_DOC
#undef KR_PRM_SIZE
#define N_LINES (sizeof(prm_lines) / sizeof(prm_lines[0]))

/*
 * DEVX fields the 6.1 header lacks, written down from their sources (checked
 * by compiling rdma-core's providers/mlx5/mlx5_ifc.h and reading the others).
 */
static const struct doc_field {
	const char *s, *f;
	unsigned long off, w;
	const char *src;
} doc_fields[] = {
    {"create_qp_in", "wq_umem_offset", 0x800, 0x40,
     "rdma-core tests/mlx5_prm_structs.py CreateQpIn"},
    {"create_qp_in", "wq_umem_id", 0x840, 0x20, "rdma-core providers/mlx5/mlx5_ifc.h create_qp_in"},
    {"qpc", "dbr_umem_id", 0x720, 0x20, "rdma-core providers/mlx5/mlx5_ifc.h qpc"},
    {"create_cq_in", "cq_umem_offset", 0x280, 0x40,
     "rdma-core tests/mlx5_prm_structs.py CreateCqIn"},
    {"create_cq_in", "cq_umem_id", 0x2c0, 0x20, "rdma-core tests/mlx5_prm_structs.py CreateCqIn"},
    {"cqc", "dbr_umem_id", 0x20, 0x20, "rdma-core tests/mlx5_prm_structs.py SwCqc"},
    {"create_mkey_in", "mkey_umem_id", 0x320, 0x20,
     "rdma-core tests/mlx5_prm_structs.py CreateMkeyIn"},
    {"create_mkey_in", "mkey_umem_offset", 0x340, 0x40,
     "rdma-core tests/mlx5_prm_structs.py CreateMkeyIn"},
    {"wq", "dbr_umem_id", 0x140, 0x20, "UCX src/uct/ib/mlx5/dv/ib_mlx5_ifc.h uct_ib_mlx5_wq_bits"},
    {"wq", "wq_umem_id", 0x160, 0x20, "UCX src/uct/ib/mlx5/dv/ib_mlx5_ifc.h uct_ib_mlx5_wq_bits"},
};
#define N_DOC	(sizeof(doc_fields) / sizeof(doc_fields[0]))

static int failures;

#define LAYOUT_FAIL(...)                                                                           \
	do {                                                                                       \
		fprintf(stderr, "FAIL: ");                                                         \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fprintf(stderr, "\n");                                                             \
		failures++;                                                                        \
	} while (0)

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len + 1);
	if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[len] = '\0';
	fclose(f);
	return buf;
}

static const struct prm_line *find_size_line(const char *s)
{
	for (size_t i = 0; i < N_LINES; i++)
		if (prm_lines[i].kind == PRM_SIZE && strcmp(prm_lines[i].s, s) == 0)
			return &prm_lines[i];
	return NULL;
}

static bool overlaps(unsigned long a_off, unsigned long a_w, unsigned long b_off, unsigned long b_w)
{
	return a_off < b_off + b_w && b_off < a_off + a_w;
}

/*
 * Mark the bits of struct mlx5_ifc_<s>_bits that the kernel header declares as
 * reserved_at_<offset>[width]. Returns false if the struct is not found.
 */
static bool mark_reserved(const char *hdr, const char *s, unsigned char *bits, unsigned long nbits)
{
	char head[160];
	const char *p, *end;

	snprintf(head, sizeof(head), "struct mlx5_ifc_%s_bits {", s);
	p = strstr(hdr, head);
	if (!p)
		return false;
	end = strstr(p, "\n};");
	if (!end)
		return false;
	while ((p = strstr(p, "reserved_at_")) && p < end) {
		unsigned long off, w;
		char *q;

		off = strtoul(p + strlen("reserved_at_"), &q, 16);
		if (*q == '[') {
			w = strtoul(q + 1, NULL, 0);
			for (unsigned long b = off; b < off + w && b < nbits; b++)
				bits[b] = 1;
		}
		p = q;
	}
	return true;
}

/* The width of "u8 name[w];" at line (leading blanks skipped), or 0 for anything else. */
static unsigned long u8_width(const char *line)
{
	const char *b;

	while (*line == ' ' || *line == '\t')
		line++;
	if (strncmp(line, "u8", 2) || !(b = strchr(line, '[')) || b > strchr(line, '\n'))
		return 0;
	return strtoul(b + 1, NULL, 0);
}

/*
 * Where the header text of struct mlx5_ifc_<s>_bits puts the field named
 * f ("u8 f[w];"): counted from the nearest reserved_at_<off> before it,
 * which names its own offset, through the plain u8 arrays in between, or
 * else back from the nearest one after it. false if the struct or the
 * field is not there, or a nested struct or union lies in between.
 */
static bool named_field(const char *hdr, const char *s, const char *f, unsigned long *off,
			unsigned long *w)
{
	char head[160], decl[96];
	const char *p, *end, *at, *line, *r = NULL;
	unsigned long o, lw;

	snprintf(head, sizeof(head), "struct mlx5_ifc_%s_bits {", s);
	snprintf(decl, sizeof(decl), " %s[", f);
	p = strstr(hdr, head);
	end = p ? strstr(p, "\n};") : NULL;
	at = p ? strstr(p, decl) : NULL;
	if (!end || !at || at > end)
		return false;
	*w = strtoul(at + strlen(decl), NULL, 0);
	for (line = at; line > p && line[-1] != '\n'; line--)
		;
	/* forward: reserved_at_<o> after f, minus f and the u8 arrays between */
	o = 0;
	for (const char *q = line; q < end; q = strchr(q, '\n') + 1) {
		const char *ra = strstr(q, "reserved_at_");

		if (ra && ra < strchr(q, '\n')) {
			*off = strtoul(ra + strlen("reserved_at_"), NULL, 16) - o;
			return true;
		}
		if (q[strspn(q, " \t")] == '\n')
			continue; /* a blank line */
		lw = u8_width(q);
		if (!lw)
			break; /* a nested struct or union: try the other way */
		o += lw;
	}
	/* backward: reserved_at_<o>[w] before f, plus w and the u8 arrays between */
	for (const char *q = p; (q = strstr(q, "reserved_at_")) && q < line; q++)
		r = q;
	if (!r)
		return false;
	o = strtoul(r + strlen("reserved_at_"), NULL, 16) + strtoul(strchr(r, '[') + 1, NULL, 0);
	for (const char *q = strchr(r, '\n') + 1; q < line; q = strchr(q, '\n') + 1) {
		if (q[strspn(q, " \t")] == '\n')
			continue;
		lw = u8_width(q);
		if (!lw)
			return false;
		o += lw;
	}
	*off = o;
	return true;
}

static void check_doc_line(const struct prm_line *l, const char *hdr)
{
	const struct doc_field *d = NULL;
	unsigned char *reserved;

	for (size_t i = 0; i < N_DOC; i++)
		if (!strcmp(doc_fields[i].s, l->s) && !strcmp(doc_fields[i].f, l->f))
			d = &doc_fields[i];
	if (!d) {
		LAYOUT_FAIL("KR_PRM_DOC %s.%s is not in the test's documented table", l->s, l->f);
		return;
	}
	if (d->off != l->off || d->w != l->w || strcmp(d->src, l->src))
		LAYOUT_FAIL("KR_PRM_DOC %s.%s: 0x%lx/0x%lx \"%s\", documented 0x%lx/0x%lx \"%s\"",
			    l->s, l->f, l->off, l->w, l->src, d->off, d->w, d->src);
	if (l->off + l->w > l->k_size)
		LAYOUT_FAIL("KR_PRM_DOC %s.%s ends at 0x%lx, beyond the kernel struct (0x%lx)",
			    l->s, l->f, l->off + l->w, l->k_size);
	for (size_t i = 0; i < N_LINES; i++) {
		const struct prm_line *o = &prm_lines[i];

		if ((o->kind == PRM_FIELD || o->kind == PRM_AS) && !strcmp(o->s, l->s) &&
		    overlaps(l->off, l->w, o->off, o->w))
			LAYOUT_FAIL("KR_PRM_DOC %s.%s overlaps kernel field %s.%s", l->s, l->f,
				    o->s, o->f);
	}
	reserved = calloc(1, l->k_size);
	if (!reserved) {
		LAYOUT_FAIL("out of memory");
		return;
	}
	if (!mark_reserved(hdr, l->s, reserved, l->k_size)) {
		LAYOUT_FAIL("struct mlx5_ifc_%s_bits not found in the header text", l->s);
	} else {
		unsigned long noff, nw;

		for (unsigned long b = l->off; b < l->off + l->w && b < l->k_size; b++) {
			if (reserved[b])
				continue;
			/* a later kernel names it (6.12: the umem fields): the same
			 * name, offset and width, or it is a conflict */
			if (named_field(hdr, l->s, l->f, &noff, &nw) && noff == l->off &&
			    nw == l->w)
				break;
			LAYOUT_FAIL("KR_PRM_DOC %s.%s bit 0x%lx is a named kernel field", l->s,
				    l->f, b);
			break;
		}
	}
	free(reserved);
}

static unsigned long check_lines(const char *hdr)
{
	unsigned long checked = 0;

	for (size_t i = 0; i < N_LINES; i++) {
		const struct prm_line *l = &prm_lines[i];
		const struct prm_line *size = find_size_line(l->s);

		switch (l->kind) {
		case PRM_SIZE:
			/* a later kernel may append (6.12's query_qp_out): ours a prefix */
			if (l->off > l->k_size)
				LAYOUT_FAIL("KR_PRM_SIZE %s: 0x%lx bits, kernel 0x%lx", l->s,
					    l->off, l->k_size);
			break;
		case PRM_FIELD:
		case PRM_AS:
			/* a later kernel may widen a field into reserved bits above it
			 * (6.12's mkc.log_page_size): the same low bits */
			if (l->off + l->w != l->k_off + l->k_w || l->w > l->k_w)
				LAYOUT_FAIL("%s %s.%s: offset 0x%lx width 0x%lx, kernel %s.%s "
					    "0x%lx 0x%lx",
					    l->kind == PRM_AS ? "KR_PRM_AS" : "KR_PRM", l->s, l->f,
					    l->off, l->w, l->k, l->f, l->k_off, l->k_w);
			break;
		case PRM_DOC:
			check_doc_line(l, hdr);
			break;
		}
		if (l->kind != PRM_SIZE) {
			if (!size)
				LAYOUT_FAIL("%s.%s: no KR_PRM_SIZE line for %s", l->s, l->f, l->s);
			else if (l->off + l->w > size->off)
				LAYOUT_FAIL("%s.%s ends beyond KR_PRM_SIZE(%s)", l->s, l->f, l->s);
			/* Our own fields of one struct never overlap each other. */
			for (size_t j = 0; j < i; j++) {
				const struct prm_line *o = &prm_lines[j];

				if (o->kind != PRM_SIZE && !strcmp(o->s, l->s) &&
				    overlaps(l->off, l->w, o->off, o->w))
					LAYOUT_FAIL("%s.%s overlaps %s.%s", l->s, l->f, o->s, o->f);
			}
		}
		checked++;
	}
	/* Every documented field is used, so the table cannot go stale. */
	for (size_t d = 0; d < N_DOC; d++) {
		bool used = false;

		for (size_t i = 0; i < N_LINES; i++)
			used |= prm_lines[i].kind == PRM_DOC &&
				!strcmp(prm_lines[i].s, doc_fields[d].s) &&
				!strcmp(prm_lines[i].f, doc_fields[d].f);
		if (!used)
			LAYOUT_FAIL("documented %s.%s has no KR_PRM_DOC line", doc_fields[d].s,
				    doc_fields[d].f);
	}
	return checked;
}

/* ---- enum values ---- */

struct enum_pair {
	const char *name;
	long ours;
	long kernel;
};

#define PAIR(ours, kernel)                                                                         \
	{                                                                                          \
#ours, (long)(ours), (long)(kernel)                                                \
	}

static const struct enum_pair ifc_pairs[] = {
    PAIR(KR_CMD_OP_QUERY_HCA_CAP, MLX5_CMD_OP_QUERY_HCA_CAP),
    PAIR(KR_HCA_CAP_ROCE, MLX5_SET_HCA_CAP_OP_MOD_ROCE),
    PAIR(KR_CMD_OP_CREATE_MKEY, MLX5_CMD_OP_CREATE_MKEY),
    PAIR(KR_CMD_OP_QUERY_MKEY, MLX5_CMD_OP_QUERY_MKEY),
    PAIR(KR_CMD_OP_DESTROY_MKEY, MLX5_CMD_OP_DESTROY_MKEY),
    PAIR(KR_CMD_OP_CREATE_CQ, MLX5_CMD_OP_CREATE_CQ),
    PAIR(KR_CMD_OP_DESTROY_CQ, MLX5_CMD_OP_DESTROY_CQ),
    PAIR(KR_CMD_OP_QUERY_CQ, MLX5_CMD_OP_QUERY_CQ),
    PAIR(KR_CMD_OP_CREATE_QP, MLX5_CMD_OP_CREATE_QP),
    PAIR(KR_CMD_OP_DESTROY_QP, MLX5_CMD_OP_DESTROY_QP),
    PAIR(KR_CMD_OP_RST2INIT_QP, MLX5_CMD_OP_RST2INIT_QP),
    PAIR(KR_CMD_OP_INIT2RTR_QP, MLX5_CMD_OP_INIT2RTR_QP),
    PAIR(KR_CMD_OP_RTR2RTS_QP, MLX5_CMD_OP_RTR2RTS_QP),
    PAIR(KR_CMD_OP_RTS2RTS_QP, MLX5_CMD_OP_RTS2RTS_QP),
    PAIR(KR_CMD_OP_2ERR_QP, MLX5_CMD_OP_2ERR_QP),
    PAIR(KR_CMD_OP_2RST_QP, MLX5_CMD_OP_2RST_QP),
    PAIR(KR_CMD_OP_QUERY_QP, MLX5_CMD_OP_QUERY_QP),
    PAIR(KR_CMD_OP_CREATE_DCT, MLX5_CMD_OP_CREATE_DCT),
    PAIR(KR_CMD_OP_DESTROY_DCT, MLX5_CMD_OP_DESTROY_DCT),
    PAIR(KR_CMD_OP_DRAIN_DCT, MLX5_CMD_OP_DRAIN_DCT),
    PAIR(KR_CMD_OP_QUERY_DCT, MLX5_CMD_OP_QUERY_DCT),
    PAIR(KR_CMD_OP_ALLOC_PD, MLX5_CMD_OP_ALLOC_PD),
    PAIR(KR_CMD_OP_DEALLOC_PD, MLX5_CMD_OP_DEALLOC_PD),
    PAIR(KR_CMD_OP_ALLOC_UAR, MLX5_CMD_OP_ALLOC_UAR),
    PAIR(KR_CMD_OP_DEALLOC_UAR, MLX5_CMD_OP_DEALLOC_UAR),
    PAIR(KR_CMD_OP_CREATE_RMP, MLX5_CMD_OP_CREATE_RMP),
    PAIR(KR_CMD_OP_DESTROY_RMP, MLX5_CMD_OP_DESTROY_RMP),
    PAIR(KR_CMD_OP_QUERY_RMP, MLX5_CMD_OP_QUERY_RMP),
    PAIR(KR_QPC_STATE_RST, MLX5_QPC_STATE_RST),
    PAIR(KR_QPC_STATE_INIT, MLX5_QPC_STATE_INIT),
    PAIR(KR_QPC_STATE_RTR, MLX5_QPC_STATE_RTR),
    PAIR(KR_QPC_STATE_RTS, MLX5_QPC_STATE_RTS),
    PAIR(KR_QPC_STATE_SQER, MLX5_QPC_STATE_SQER),
    PAIR(KR_QPC_STATE_ERR, MLX5_QPC_STATE_ERR),
    PAIR(KR_QPC_ST_RC, MLX5_QPC_ST_RC),
    PAIR(KR_QPC_ST_DCI, MLX5_QPC_ST_DCI),
    PAIR(KR_QPC_PM_STATE_MIGRATED, MLX5_QPC_PM_STATE_MIGRATED),
    PAIR(KR_QPC_ATOMIC_MODE_IB_SPEC, MLX5_QPC_ATOMIC_MODE_IB_SPEC),
    PAIR(KR_QPC_ATOMIC_MODE_UP_TO_8B, MLX5_QPC_ATOMIC_MODE_UP_TO_8B),
    PAIR(KR_MTU_256, MLX5_QPC_MTU_256_BYTES),
    PAIR(KR_MTU_512, MLX5_QPC_MTU_512_BYTES),
    PAIR(KR_MTU_1K, MLX5_QPC_MTU_1K_BYTES),
    PAIR(KR_MTU_2K, MLX5_QPC_MTU_2K_BYTES),
    PAIR(KR_MTU_4K, MLX5_QPC_MTU_4K_BYTES),
    PAIR(KR_DCTC_STATE_ACTIVE, MLX5_DCTC_STATE_ACTIVE),
    PAIR(KR_DCTC_STATE_DRAINING, MLX5_DCTC_STATE_DRAINING),
    PAIR(KR_DCTC_STATE_DRAINED, MLX5_DCTC_STATE_DRAINED),
    PAIR(KR_RMPC_STATE_RDY, MLX5_RMPC_STATE_RDY),
    PAIR(KR_RMPC_STATE_ERR, MLX5_RMPC_STATE_ERR),
    PAIR(KR_WQ_TYPE_LINKED_LIST, MLX5_WQ_TYPE_LINKED_LIST),
    PAIR(KR_WQ_TYPE_CYCLIC, MLX5_WQ_TYPE_CYCLIC),
    PAIR(KR_MKC_ACCESS_MODE_MTT, MLX5_MKC_ACCESS_MODE_MTT),
    PAIR(KR_CQE_SIZE_64, MLX5_CQC_CQE_SZ_64_BYTES),
    PAIR(KR_PORT_TYPE_IB, MLX5_CAP_PORT_TYPE_IB),
    PAIR(KR_PORT_TYPE_ETH, MLX5_CAP_PORT_TYPE_ETH),
};

/* Values from device.h, compared by name after parsing "NAME = value". */
struct text_pair {
	const char *ours_name;
	long ours;
	const char *kernel_name;
};

#define TPAIR(ours, kernel)                                                                        \
	{                                                                                          \
#ours, (long)(ours), kernel                                                        \
	}

static const struct text_pair device_h_pairs[] = {
    TPAIR(KR_CMD_STAT_OK, "MLX5_CMD_STAT_OK"),
    TPAIR(KR_CMD_STAT_INT_ERR, "MLX5_CMD_STAT_INT_ERR"),
    TPAIR(KR_CMD_STAT_BAD_OP_ERR, "MLX5_CMD_STAT_BAD_OP_ERR"),
    TPAIR(KR_CMD_STAT_BAD_PARAM_ERR, "MLX5_CMD_STAT_BAD_PARAM_ERR"),
    TPAIR(KR_CMD_STAT_BAD_SYS_STATE_ERR, "MLX5_CMD_STAT_BAD_SYS_STATE_ERR"),
    TPAIR(KR_CMD_STAT_BAD_RES_ERR, "MLX5_CMD_STAT_BAD_RES_ERR"),
    TPAIR(KR_CMD_STAT_RES_BUSY, "MLX5_CMD_STAT_RES_BUSY"),
    TPAIR(KR_CMD_STAT_LIM_ERR, "MLX5_CMD_STAT_LIM_ERR"),
    TPAIR(KR_CMD_STAT_BAD_RES_STATE_ERR, "MLX5_CMD_STAT_BAD_RES_STATE_ERR"),
    TPAIR(KR_CMD_STAT_IX_ERR, "MLX5_CMD_STAT_IX_ERR"),
    TPAIR(KR_CMD_STAT_NO_RES_ERR, "MLX5_CMD_STAT_NO_RES_ERR"),
    TPAIR(KR_CMD_STAT_BAD_INP_LEN_ERR, "MLX5_CMD_STAT_BAD_INP_LEN_ERR"),
    TPAIR(KR_CMD_STAT_BAD_OUTP_LEN_ERR, "MLX5_CMD_STAT_BAD_OUTP_LEN_ERR"),
    TPAIR(KR_HCA_CAP_GENERAL, "MLX5_CAP_GENERAL"),
    TPAIR(KR_HCA_CAP_OPMOD_GET_MAX, "HCA_CAP_OPMOD_GET_MAX"),
    TPAIR(KR_HCA_CAP_OPMOD_GET_CUR, "HCA_CAP_OPMOD_GET_CUR"),
};

/* qpc.rq_type values: in no 6.1 header (older kernels' include/linux/mlx5/qp.h). */
static const struct enum_pair doc_pairs[] = {
    {"KR_QPC_RQ_TYPE_REGULAR", KR_QPC_RQ_TYPE_REGULAR, 0x0},	       /* MLX5_NON_ZERO_RQ */
    {"KR_QPC_RQ_TYPE_SRQ_RMP_XRC", KR_QPC_RQ_TYPE_SRQ_RMP_XRC, 0x1},   /* MLX5_SRQ_RQ */
    {"KR_QPC_RQ_TYPE_ZERO_SIZE_RQ", KR_QPC_RQ_TYPE_ZERO_SIZE_RQ, 0x3}, /* MLX5_ZERO_LEN_RQ */
};

/* Find "name<spaces>=<spaces>value" as a whole word in text. */
static bool parse_enum(const char *text, const char *name, long *value)
{
	size_t n = strlen(name);
	const char *p = text;

	while ((p = strstr(p, name))) {
		const char *q = p + n;
		bool word_start = p == text || !(p[-1] == '_' || (p[-1] >= 'A' && p[-1] <= 'Z') ||
						 (p[-1] >= '0' && p[-1] <= '9'));

		p = q;
		if (!word_start)
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != '=')
			continue;
		*value = strtol(q + 1, NULL, 0);
		return true;
	}
	return false;
}

static unsigned long check_enums(const char *device_h)
{
	unsigned long checked = 0;

	for (size_t i = 0; i < sizeof(ifc_pairs) / sizeof(ifc_pairs[0]); i++, checked++)
		if (ifc_pairs[i].ours != ifc_pairs[i].kernel)
			LAYOUT_FAIL("%s = 0x%lx, kernel 0x%lx", ifc_pairs[i].name,
				    ifc_pairs[i].ours, ifc_pairs[i].kernel);
	for (size_t i = 0; i < sizeof(doc_pairs) / sizeof(doc_pairs[0]); i++, checked++)
		if (doc_pairs[i].ours != doc_pairs[i].kernel)
			LAYOUT_FAIL("%s = 0x%lx, documented 0x%lx", doc_pairs[i].name,
				    doc_pairs[i].ours, doc_pairs[i].kernel);
	for (size_t i = 0; i < sizeof(device_h_pairs) / sizeof(device_h_pairs[0]); i++) {
		const struct text_pair *t = &device_h_pairs[i];
		long v;

		if (!parse_enum(device_h, t->kernel_name, &v)) {
			LAYOUT_FAIL("%s not found in device.h", t->kernel_name);
			continue;
		}
		if (v != t->ours)
			LAYOUT_FAIL("%s = 0x%lx, kernel %s = 0x%lx", t->ours_name, t->ours,
				    t->kernel_name, v);
		checked++;
	}
	return checked;
}

int main(void)
{
	char device_path[512];
	char *hdr, *device_h, *slash;
	unsigned long fields, enums;

	hdr = read_text(KR_MLX5_IFC_H);
	if (!hdr)
		KR_SKIP("cannot read %s: install linux-headers-amd64", KR_MLX5_IFC_H);
	snprintf(device_path, sizeof(device_path), "%s", KR_MLX5_IFC_H);
	slash = strrchr(device_path, '/');
	CHECK(slash != NULL);
	snprintf(slash + 1, sizeof(device_path) - (size_t)(slash + 1 - device_path), "device.h");
	device_h = read_text(device_path);
	if (!device_h)
		KR_FAIL("cannot read %s", device_path);

	fields = check_lines(hdr);
	enums = check_enums(device_h);
	printf("header: %s\n", KR_MLX5_IFC_H);
	printf("checked %lu PRM fields (%zu lines, %zu documented DEVX fields), %lu enum values\n",
	       fields, N_LINES, N_DOC, enums);
	free(device_h);
	free(hdr);
	if (failures)
		KR_FAIL("%d layout mismatches", failures);
	KR_PASS("devx_prm_layout");
}

#endif /* KR_MLX5_IFC_H */
