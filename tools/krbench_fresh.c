/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench-fresh: the fresh process of krbench elastic. Started with
 *   krbench-fresh SOCKET NODE ADDR RKEY VAL T0_NS
 * it attaches to the keeper at SOCKET, connects to NODE, READs 8 bytes at
 * ADDR under RKEY, checks they are VAL, disconnects and detaches, and writes
 * one line to fd 3:
 *   ok EXEC ATTACH CONNECT READ DETACH META_READS LEASE_CALLS
 * (microseconds; EXEC from T0_NS, the parent's CLOCK_MONOTONIC before it
 * spawned this process, to main; ATTACH kr_attach alone, not the parsing of
 * the arguments before it, whose first strtoul calls fault their code in:
 * 29-63 us on a VM that traps page faults; META_READS the MetaServer READs
 * the connect made; LEASE_CALLS the lease requests the keeper served
 * meanwhile, which a first connect needs none of), or "err STEP ERRNO".
 * Nothing of krcore runs before the attach: what it measures is what a new
 * function or rank pays.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "common/kr_clock.h"
#include "job/job.h"

#define FRESH_POLL_NS (2ull * 1000 * 1000 * 1000) /* a READ not back in 2 s failed */

static int report_err(const char *step, int err)
{
	dprintf(3, "err %s %d\n", step, err);
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t t_main = kr_now_ns(), t_pre, t_att, t_conn, t_read, t_end, t0, addr, val, calls;
	struct kr_dct_look_stats st0, st1;
	struct kr_attach_opts ao = {0};
	struct kr_ctx *ctx;
	struct kr_vqp *v;
	struct kr_wc wc;
	uint64_t *local;
	uint32_t node, rkey;
	int n = 0, rc;

	if (argc != 7)
		return report_err("usage", EINVAL);
	ao.socket_path = argv[1];
	node = (uint32_t)strtoul(argv[2], NULL, 0);
	addr = strtoull(argv[3], NULL, 0);
	rkey = (uint32_t)strtoul(argv[4], NULL, 0);
	val = strtoull(argv[5], NULL, 0);
	t0 = strtoull(argv[6], NULL, 0);

	t_pre = kr_now_ns();
	ctx = kr_attach(&ao);
	t_att = kr_now_ns();
	if (!ctx)
		return report_err("attach", errno);
	kr_dct_look_stats_get(&st0);
	calls = __atomic_load_n(&ctx->seg->lease_calls, __ATOMIC_RELAXED);
	v = kr_connect(ctx, node, NULL);
	t_conn = kr_now_ns();
	calls = __atomic_load_n(&ctx->seg->lease_calls, __ATOMIC_RELAXED) - calls;
	if (!v) {
		rc = errno;
		kr_detach(ctx);
		return report_err("connect", rc);
	}
	kr_dct_look_stats_get(&st1);
	local = kr_malloc(ctx, sizeof(*local));
	if (!local) {
		rc = errno;
		kr_disconnect(v);
		kr_detach(ctx);
		return report_err("malloc", rc);
	}
	*local = 0;
	rc = kr_post_read(v, local, sizeof(*local), addr, rkey, 1, 0);
	while (!rc && !(n = kr_poll(v, &wc, 1)) && kr_now_ns() - t_conn < FRESH_POLL_NS)
		;
	t_read = kr_now_ns();
	if (rc || n != 1 || wc.status != KR_WC_SUCCESS || *local != val) {
		int err = rc ? -rc : n < 0 ? -n : n == 0 ? ETIMEDOUT : wc.status ? EIO : EBADMSG;

		kr_disconnect(v);
		kr_detach(ctx);
		return report_err("read", err);
	}
	kr_free(ctx, local);
	kr_disconnect(v);
	kr_detach(ctx);
	t_end = kr_now_ns();
	dprintf(3, "ok %.3f %.3f %.3f %.3f %.3f %" PRIu64 " %" PRIu64 "\n",
		(double)(t_main - t0) / 1e3, (double)(t_att - t_pre) / 1e3,
		(double)(t_conn - t_att) / 1e3, (double)(t_read - t_conn) / 1e3,
		(double)(t_end - t_read) / 1e3, st1.reads - st0.reads, calls);
	return 0;
}
