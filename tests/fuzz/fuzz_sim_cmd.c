/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the sim's firmware, reading command mailboxes (as a
 * ConnectX reads what its driver writes). One simulated host with a PD, a
 * UAR, two CQs and an MR stands ready; each input is one command:
 *   [0]      how it is issued: general_cmd, obj_create (then destroyed when
 *            it made something), or obj_query on the host's send CQ
 *   [1]      the opcode, one of every command the sim knows (mod their count)
 *   [2]      the output buffer: 16 << ([2] % 10) bytes
 *   [3..]    the input mailbox (its opcode field overwritten by [1])
 * What must hold: no crash, no sanitizer report; a command answers 0 with
 * status OK in its output, or an error with a status that is not OK (a
 * mailbox too short for a header is refused before any status); an object
 * created is destroyed again.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devx_fixture.h"
#include "devx/devx_prm.h"
#include "fuzz_require.h"

#define IN_MAX	8192u
#define OUT_MAX 8192u

static const uint16_t ops[] = {
    KR_CMD_OP_QUERY_HCA_CAP, KR_CMD_OP_CREATE_MKEY, KR_CMD_OP_QUERY_MKEY,  KR_CMD_OP_DESTROY_MKEY,
    KR_CMD_OP_CREATE_CQ,     KR_CMD_OP_DESTROY_CQ,  KR_CMD_OP_QUERY_CQ,	   KR_CMD_OP_CREATE_QP,
    KR_CMD_OP_DESTROY_QP,    KR_CMD_OP_RST2INIT_QP, KR_CMD_OP_INIT2RTR_QP, KR_CMD_OP_RTR2RTS_QP,
    KR_CMD_OP_RTS2RTS_QP,    KR_CMD_OP_2ERR_QP,	    KR_CMD_OP_2RST_QP,	   KR_CMD_OP_QUERY_QP,
    KR_CMD_OP_CREATE_DCT,    KR_CMD_OP_DESTROY_DCT, KR_CMD_OP_DRAIN_DCT,   KR_CMD_OP_QUERY_DCT,
    KR_CMD_OP_ALLOC_PD,	     KR_CMD_OP_DEALLOC_PD,  KR_CMD_OP_ALLOC_UAR,   KR_CMD_OP_DEALLOC_UAR,
    KR_CMD_OP_CREATE_RMP,    KR_CMD_OP_DESTROY_RMP, KR_CMD_OP_QUERY_RMP,
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

static struct kr_fx_host H;
static bool up;
static unsigned long ok, refused, created;

void fuzz_summary(void);
void fuzz_summary(void)
{
	printf("sim_cmd: %lu answered OK (%lu objects made and destroyed), %lu refused\n", ok,
	       created, refused);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t in[IN_MAX], out[OUT_MAX];
	const struct kr_devx_ops *o;
	struct kr_devx_obj *obj = NULL;
	size_t inlen, outlen;
	int rc;

	if (!up) {
		setenv("KR_LOG", "error", 0); /* a refused command warns: millions of them */
		if (kr_fx_host_open(&H, "sim:fuzz_cmd", 64 << 10))
			abort();
		up = true;
	}
	if (size < 3)
		return 0;
	o = H.ctx->ops;
	inlen = size - 3 < IN_MAX ? size - 3 : IN_MAX;
	outlen = (size_t)16 << (data[2] % 10);
	memset(in, 0, sizeof(in));
	memcpy(in, data + 3, inlen);
	if (inlen < 16)
		inlen = 16;
	*(uint16_t *)in = htobe16(ops[data[1] % NOPS]);
	memset(out, 0xa5, sizeof(out));
	switch (data[0] % 3) {
	case 0:
		rc = o->general_cmd(H.ctx, in, inlen, out, outlen);
		break;
	case 1:
		rc = o->obj_create(H.ctx, in, inlen, out, outlen, &obj);
		break;
	default:
		rc = o->obj_query(H.scq.obj, in, inlen, out, outlen);
	}
	if (!rc) {
		ok++;
		require(out[0] == KR_CMD_STAT_OK);
	} else {
		refused++;
		require(rc < 0);
	}
	if (obj) {
		require(!rc);
		created++;
		require(o->obj_destroy(obj) == 0);
	}
	return 0;
}
