/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the checks every request a job posts goes through
 * (virtqp_post.c), against a real keeper (started on the sim at the first
 * input), a real heap and a real MR. Each input is one request on a vQP to
 * this node:
 *   [0]      READ, WRITE, WRITE_IMM, CAS or FAA (mod 5)
 *   [1]      flags, as given (unknown bits too)
 *   [2]      local buffer: in the heap at [3..4] mod 4 KiB, NULL, on the
 *            stack, or (a WRITE not inline) at the heap's end minus [3..4]
 *            mod 4 KiB, running past what is backed
 *   [5..8]   length (mod 8 KiB when [9] is even)
 *   [10..17] remote address: inside the MR at that offset mod 8 KiB when
 *            [18] is even, else as given
 *   [19..22] rkey: the MR's when [23] is even, else as given
 *   [24..]   compare and swap / add values
 * What must hold: the post returns -EINVAL exactly when the documented
 * checks say the request is malformed (NULL, unknown flags, length 0 or too
 * long, a remote range that wraps, inline on a READ or an atomic or too
 * long, a local range outside the heap, an unaligned atomic), else 0; a
 * request posted completes with its wr_id (success inside the MR, an error
 * otherwise: the vQP is connected again); no byte outside the MR changes.
 */
#include <endian.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_fixture.h"
#include "job/virtqp/virtqp.h"
#include "fuzz_require.h"

#define MR_LEN	  4096u
#define GUARD	  4096u /* heap bytes after the MR: no request may change them */
#define REMOTE_W  8192u
#define LOCAL_LEN (16u << 10)

static struct kp_keeper K;
static struct kr_ctx *ctx;
static struct kr_vqp *v;
static struct kr_mr *mr;
static uint8_t *remote, *local;
static struct kr_mr_key key;
static unsigned long einval, posted, failed;
static uint64_t next_id = 1;

void fuzz_summary(void);
void fuzz_summary(void)
{
	printf("vqp_post: %lu refused as malformed, %lu posted (%lu completed with an error)\n",
	       einval, posted, failed);
}

/* At exit: what setup() made goes, the keeper stops. */
static void teardown(void)
{
	kr_disconnect(v);
	kr_dereg_mr(mr);
	kr_detach(ctx);
	kp_keeper_stop(&K, SIGTERM);
	kp_keeper_fini(&K);
}

/* Attach, the heap's buffers, the MR, a vQP to this node. */
static void attach_job(void)
{
	ctx = kp_attach(&K, 5000);
	require(ctx != NULL);
	remote = kr_malloc(ctx, MR_LEN + GUARD);
	local = kr_malloc(ctx, LOCAL_LEN);
	require(remote && local);
	memset(remote, 0, MR_LEN);
	memset(remote + MR_LEN, 0x5a, GUARD);
	mr = kr_reg_mr(ctx, remote, MR_LEN,
		       KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE |
			   KR_MR_REMOTE_ATOMIC);
	require(mr && !kr_mr_key(mr, &key));
	v = kp_connect_wait(ctx, KR_NODE_SELF);
	require(v != NULL);
}

static void setup(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "1",
					   "--heap-mb", "2", "--hugepages", "64", NULL};

	setenv("KR_LOG", "error", 0);
	kp_keeper_init(&K);
	require(kp_keeper_start(&K, args) == 0);
	attach_job();
	atexit(teardown);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t x;

	memcpy(&x, p, sizeof(x));
	return x;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t x;

	memcpy(&x, p, sizeof(x));
	return x;
}

/* The documented checks, from the request alone: is it malformed? */
static bool malformed(int op, uint32_t flags, const void *l, uint32_t len, uint64_t raddr)
{
	bool inl = flags & KR_POST_INLINE, atomic = op >= 3;
	uintptr_t a = (uintptr_t)l, h = (uintptr_t)ctx->heap;

	if (!l || (flags & ~(uint32_t)(KR_POST_INLINE | KR_POST_FENCE | KR_POST_MORE)))
		return true;
	if (!len || len > KR_POST_MAX_LEN || raddr + len < raddr)
		return true;
	if (inl && (op == 0 || atomic || len > KR_POST_MAX_INLINE))
		return true;
	if (!inl && !(a >= h && len <= ctx->heap_len && a - h <= ctx->heap_len - len))
		return true;
	return atomic && ((a | raddr) & 7u);
}

static void attach_job(void);

/* The guard detached the job (keeper_guard.c): attach again, as a new job. */
static void reattach(void)
{
	kr_disconnect(v);
	kr_dereg_mr(mr); /* the handle is ours to free; the keeper took the MR */
	kr_detach(ctx);
	attach_job();
}

/*
 * A vQP again after a failed request. The keeper's guard refuses a job that
 * keeps failing requests new DCIs for a while (EBUSY) and detaches it at
 * last (keeper_guard.c): wait, or attach again.
 */
static void reconnect(void)
{
	for (double t0 = kp_now_ms(); kp_now_ms() - t0 < 30000; usleep(10000)) {
		v = kr_connect(ctx, KR_NODE_SELF, NULL);
		if (v)
			return;
		require(errno == EBUSY || errno == ENOSPC || errno == ENOTCONN || errno == EPIPE);
		if (errno == ENOTCONN || errno == EPIPE) {
			reattach();
			return;
		}
	}
	require(0);
}

static void wait_done(uint64_t id)
{
	struct kr_wc wc;
	int n = 0;

	for (double t0 = kp_now_ms(); !n;) {
		n = kr_poll(v, &wc, 1);
		require(kp_now_ms() - t0 < 30000);
		if (n == -EBUSY) { /* throttled: its DCI's replacement waits (keeper_guard.c) */
			usleep(10000);
			n = 0;
		} else if (n == -ENOTCONN || n == -EPIPE) { /* detached by the guard */
			failed++;
			reattach();
			return;
		}
		require(n >= 0);
	}
	require(wc.wr_id == id);
	if (wc.status != KR_WC_SUCCESS) {
		failed++;
		require(!kr_disconnect(v));
		reconnect();
	}
}

/* One request: the post's return. */
static int post(int op, uint8_t *l, uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t flags,
		const uint8_t *in, uint64_t id)
{
	switch (op) {
	case 0:
		return kr_post_read(v, l, len, raddr, rkey, id, flags);
	case 1:
		return kr_post_write(v, l, len, raddr, rkey, id, flags);
	case 2:
		return kr_post_write_imm(v, l, len, raddr, rkey, get32(in + 24), id, flags);
	case 3:
		return kr_post_cas(v, (uint64_t *)l, raddr, rkey, get64(in + 24), get64(in + 32),
				   id, flags);
	default:
		return kr_post_faa(v, (uint64_t *)l, raddr, rkey, get64(in + 24), id, flags);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t in[40] = {0}, stack_buf[KR_POST_MAX_INLINE * 2];
	uint32_t flags, len, rkey, off;
	uint64_t raddr, id;
	uint8_t *l;
	int op, rc;

	if (!ctx)
		setup();
	memcpy(in, data, size < sizeof(in) ? size : sizeof(in));
	op = in[0] % 5;
	flags = in[1];
	off = (uint32_t)in[3] | (uint32_t)in[4] << 8;
	/* requests that write locally (READ, atomics) write only into local */
	switch (in[2] % 4) {
	case 0:
		l = local + off % 4096;
		break;
	case 1:
		l = NULL;
		break;
	case 2:
		l = stack_buf;
		break;
	default: /* past what the heap has backed, or right at its end (never read inline:
		  * an inline source is copied as given, the caller's to make valid) */
		l = (op == 1 || op == 2) && !(flags & KR_POST_INLINE)
			? (uint8_t *)ctx->heap + ctx->heap_len - (off % 4096)
			: local;
	}
	len = get32(in + 5);
	if (!(in[9] & 1) || op == 0)
		len %= LOCAL_LEN - 4096;
	raddr = get64(in + 10);
	if (!(in[18] & 1))
		raddr = key.addr + raddr % REMOTE_W;
	rkey = in[23] & 1 ? get32(in + 19) : key.rkey;
	if (op >= 3)
		len = 8; /* what the atomics post */
	id = next_id++;
	rc = post(op, l, len, raddr, rkey, flags, in, id);
	/* a DCI being swapped after an earlier request's error has no credits yet:
	 * kr_poll() brings the new one, then the post goes */
	for (double t0 = kp_now_ms(); rc == -EAGAIN && kp_now_ms() - t0 < 30000;) {
		struct kr_wc wc;
		int n = kr_poll(v, &wc, 1);

		if (n == -EBUSY) /* throttled (keeper_guard.c) */
			usleep(10000);
		else if (n == -ENOTCONN || n == -EPIPE)
			reattach();
		else
			require(n == 0);
		rc = post(op, l, len, raddr, rkey, flags, in, id);
	}
	if (malformed(op, flags, l, len, raddr)) {
		require(rc == -EINVAL);
		einval++;
	} else {
		require(rc == 0);
		posted++;
		wait_done(id);
	}
	for (uint32_t i = 0; i < GUARD; i++)
		require(remote[MR_LEN + i] == 0x5a);
	return 0;
}
