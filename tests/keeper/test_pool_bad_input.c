/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad input at the keeper's socket and through the API: malformed,
 * truncated, oversized and fd-carrying messages get an error reply and the
 * connection is closed; a client that connects and sends nothing does not
 * stop anyone else and is dropped; 1,000 concurrent attaches all get an
 * answer (success or -ENOSPC, never a hang) and the keeper serves normally
 * afterwards; exhausted pools say -ENOSPC; bad API arguments say -EINVAL.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kr_test.h"
#include "pool_fixture.h"

#define CONCURRENT 1000

/* Send raw bytes (and optionally one fd); expect a reply with status want, then EOF. */
static void expect_refused(const struct kp_keeper *k, const void *msg, size_t len, int send_fd,
			   int want)
{
	struct kr_msg_reply rep;
	int fd = kr_msg_connect(k->sock);
	struct pollfd p;
	ssize_t n;

	CHECK(fd >= 0);
	CHECK_OK(kr_msg_send(fd, msg, len, send_fd >= 0 ? &send_fd : NULL, send_fd >= 0));
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	CHECK_EQ(poll(&p, 1, 5000), 1);
	n = recv(fd, &rep, sizeof(rep), 0);
	CHECK_EQ(n, sizeof(rep));
	CHECK_EQ(rep.hdr.magic, KR_PROTO_MAGIC);
	CHECK_EQ(rep.status, want);
	CHECK_EQ(poll(&p, 1, 5000), 1);
	CHECK_EQ(recv(fd, &rep, sizeof(rep), 0), 0); /* closed by the keeper */
	close(fd);
}

static void raw_messages(const struct kp_keeper *k)
{
	struct kr_msg_attach a = {0};
	uint8_t big[300] = {0};
	int devnull;

	kr_msg_init(&a.hdr, KR_MSG_ATTACH, sizeof(a), 1);
	a.hdr.magic = 0xdeadbeef; /* malformed */
	expect_refused(k, &a, sizeof(a), -1, -EPROTO);
	kr_msg_init(&a.hdr, KR_MSG_ATTACH, sizeof(a), 1);
	expect_refused(k, &a, 8, -1, -EPROTO);		   /* truncated: shorter than a header */
	expect_refused(k, &a, sizeof(a) - 4, -1, -EPROTO); /* truncated body */
	a.hdr.len = sizeof(a) + 4;
	expect_refused(k, &a, sizeof(a), -1, -EPROTO); /* length field lies */
	kr_msg_init(&a.hdr, KR_MSG_ATTACH, sizeof(a), 1);
	expect_refused(k, &a, sizeof(a), -1, -EINVAL); /* a job without a key, not lone */
	a.flags = KR_ATTACH_F_OBSERVE;
	a.launch_key[0] = 5;
	expect_refused(k, &a, sizeof(a), -1, -EINVAL); /* an observer names no launch */
	a.flags = KR_ATTACH_F_LONE;
	expect_refused(k, &a, sizeof(a), -1, -EINVAL); /* lone, yet a key */
	a.launch_key[0] = 0;
	a.flags = KR_ATTACH_F_LONE | KR_ATTACH_F_OBSERVE;
	expect_refused(k, &a, sizeof(a), -1, -EINVAL); /* an observer is not a job */
	a.flags = 0;
	kr_msg_init(&a.hdr, 99, sizeof(a), 1);
	expect_refused(k, &a, sizeof(a), -1, -EPROTO); /* unknown type */
	kr_msg_init(&a.hdr, KR_MSG_ATTACH, sizeof(a), 1);
	a.hdr.version = KR_PROTO_VERSION + 1;
	expect_refused(k, &a, sizeof(a), -1, -EPROTO); /* other protocol version */
	kr_msg_init((struct kr_msg_hdr *)big, KR_MSG_ATTACH, sizeof(big), 1);
	expect_refused(k, big, sizeof(big), -1, -EMSGSIZE); /* oversized */
	devnull = open("/dev/null", O_RDONLY);
	kr_msg_init(&a.hdr, KR_MSG_ATTACH, sizeof(a), 1);
	expect_refused(k, &a, sizeof(a), devnull, -EMSGSIZE); /* descriptors to the keeper */
	close(devnull);

	/* well formed but not allowed: lease before attach, unknown attach flags */
	{
		struct kr_msg_lease l = {.kind = KR_SLOT_DCI};
		struct kr_msg_reply rep;
		int fd = kr_msg_connect(k->sock);

		CHECK(fd >= 0);
		kr_msg_init(&l.hdr, KR_MSG_LEASE, sizeof(l), 5);
		CHECK_OK(kr_msg_call(fd, &l, sizeof(l), &rep, sizeof(rep), NULL, 0, NULL));
		CHECK_EQ(rep.status, -EPERM);
		kr_msg_init(&a.hdr, KR_MSG_ATTACH, sizeof(a), 6);
		a.flags = 0x80;
		{
			struct kr_msg_attach_reply *ar = calloc(1, sizeof(*ar));

			CHECK(ar != NULL);
			CHECK_OK(kr_msg_call(fd, &a, sizeof(a), ar, sizeof(*ar), NULL, 0, NULL));
			CHECK_EQ(ar->status, -EINVAL);
			CHECK_EQ(ar->nfds, 0);
			free(ar);
		}
		a.flags = 0;
		close(fd);
	}
}

/*
 * CONCURRENT raw attaches in flight at once, from one uid; every one
 * answered: capacity attach, the rest of the uid's connection allowance
 * (jobs + KR_POOL_UID_CONNS_EXTRA) get ENOSPC, the others are refused at
 * once with EUSERS (a seq 0 reply). EAGAIN (a slot, no heap warm yet) is
 * asked again, as kr_attach does.
 */
static void many_attaches(const struct kp_keeper *k, uint32_t capacity, uint32_t allowance)
{
	static int fds[CONCURRENT];
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	uint8_t key[KR_LAUNCH_KEY_BYTES];
	struct rlimit rl;
	int ok = 0, full = 0, refused = 0, again = 0, rc;

	CHECK(rep != NULL);
	CHECK_OK(getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max < CONCURRENT + 200)
		KR_SKIP("RLIMIT_NOFILE hard limit %lu below %d", (unsigned long)rl.rlim_max,
			CONCURRENT + 200);
	rl.rlim_cur = rl.rlim_max;
	CHECK_OK(setrlimit(RLIMIT_NOFILE, &rl));
	CHECK_EQ(kr_launch_key_get(NULL, key), 0); /* the tests' launch (KR_LAUNCH_KEY) */
	for (int i = 0; i < CONCURRENT; i++) {
		struct kr_msg_attach a = {0};

		memcpy(a.launch_key, key, sizeof(key));
		fds[i] = kr_msg_connect(k->sock);
		if (fds[i] < 0)
			KR_FAIL("connect %d: %s", i, strerror(-fds[i]));
		kr_msg_init(&a.hdr, KR_MSG_ATTACH, sizeof(a), (uint32_t)i + 1);
		/* EPIPE: refused already, the reason is queued */
		rc = kr_msg_send(fds[i], &a, sizeof(a), NULL, 0);
		CHECK(rc == 0 || rc == -EPIPE);
	}
	for (int i = 0; i < CONCURRENT; i++) {
		struct pollfd p = {.fd = fds[i], .events = POLLIN};
		int got[KR_ATTACH_MAX_REGIONS + 1];
		unsigned int n = 0;
		ssize_t len;

		if (poll(&p, 1, 10000) != 1)
			KR_FAIL("attach %d: no answer in 10 s", i);
		len = kr_msg_recv(fds[i], rep, sizeof(*rep), got, KR_ATTACH_MAX_REGIONS + 1, &n);
		if (len != (ssize_t)sizeof(*rep))
			KR_FAIL("attach %d: %zd (%s)", i, len, len < 0 ? strerror((int)-len) : "");
		for (unsigned int j = 0; j < n; j++)
			close(got[j]);
		if (rep->hdr.seq == 0) {
			CHECK_EQ(rep->status, -EUSERS);
			CHECK_EQ(n, 0);
			refused++;
			continue;
		}
		CHECK_EQ(rep->hdr.seq, (uint32_t)i + 1);
		if (rep->status == -EAGAIN) {
			/* a job slot, but no heap warm yet: ask again, as kr_attach does */
			struct kr_msg_attach a = {0};

			memcpy(a.launch_key, key, sizeof(key));
			CHECK_EQ(n, 0);
			CHECK(++again < 10000); /* the worker warms a heap in milliseconds */
			usleep(1000);
			kr_msg_init(&a.hdr, KR_MSG_ATTACH, sizeof(a), (uint32_t)i + 1);
			CHECK_OK(kr_msg_send(fds[i], &a, sizeof(a), NULL, 0));
			i--;
			continue;
		}
		if (rep->status == 0) {
			ok++;
			CHECK(n > 0);
		} else {
			CHECK_EQ(rep->status, -ENOSPC);
			CHECK_EQ(n, 0);
			full++;
		}
	}
	CHECK_EQ(ok, capacity);
	CHECK_EQ(full, (int)(allowance - capacity));
	CHECK_EQ(refused, CONCURRENT - (int)allowance);
	for (int i = 0; i < CONCURRENT; i++)
		close(fds[i]);
	free(rep);
}

int main(void)
{
	static const char *const args[] = {
	    "--tenants", "1",		"--dcis", "4",		 "--jobs", "2", "--heap-mb",
	    "2",	 "--hugepages", "64",	  "--rc-spares", "0",	   NULL};
	struct kr_attach_opts bad = {.flags = 1};
	struct kr_lease l[5];
	struct kp_keeper k;
	struct kr_ctx *ctx;
	struct kr_mr *mr;
	struct kr_mr_key key;
	struct pollfd p;
	uint8_t *buf;
	int idle;

	kp_require_hugepages(16);
	kp_keeper_init(&k);
	CHECK_OK(kp_keeper_start(&k, args));

	/* API arguments */
	CHECK(kr_attach(&bad) == NULL && errno == EINVAL);
	{
		struct kr_attach_opts none = {.socket_path = "/nonexistent/krpoold.sock"};

		CHECK(kr_attach(&none) == NULL && errno == ENOENT);
	}

	raw_messages(&k);

	/* a client that connects and sends nothing: others are served, it is dropped */
	idle = kr_msg_connect(k.sock);
	CHECK(idle >= 0);
	ctx = kp_attach(&k, 5000);
	CHECK(ctx != NULL);
	CHECK(kr_attach(NULL) == NULL && errno == EALREADY);

	/* exhausted pools and bad leases */
	for (int i = 0; i < 4; i++)
		CHECK_OK(kr_lease_alloc(ctx, KR_LEASE_DCI, &l[i]));
	CHECK_ERR(kr_lease_alloc(ctx, KR_LEASE_DCI, &l[4]), -ENOSPC);
	/* a kind this keeper was started without (--rc-spares 0) */
	CHECK_ERR(kr_lease_alloc(ctx, KR_LEASE_RC, &l[4]), -EINVAL);
	CHECK_ERR(kr_lease_alloc(ctx, 77, &l[4]), -EINVAL);
	/* pairs (promotion): bad targets, then a keeper without RC spares */
	{
		struct kr_devx_dc_av av, av2;

		CHECK_OK(kr_job_tenant_av(ctx, &av));
		CHECK_ERR(kr_job_rc_pair(NULL, 1, &av, &l[4]), -EINVAL);
		CHECK_ERR(kr_job_rc_pair(ctx, 1, NULL, &l[4]), -EINVAL);
		CHECK_ERR(kr_job_rc_pair(ctx, 0, &av, &l[4]), -EINVAL); /* node 0 */
		av2 = av;
		av2.dctn = 0;
		CHECK_ERR(kr_job_rc_pair(ctx, 1, &av2, &l[4]), -EINVAL);
		av2.dctn = 1u << 24; /* past a DCT number */
		CHECK_ERR(kr_job_rc_pair(ctx, 1, &av2, &l[4]), -EINVAL);
		CHECK_ERR(kr_job_rc_pair(ctx, 1, &av, &l[4]), -EINVAL);
		/* one-way requests a job writes by hand: an answer slot out of range is
		 * dropped with a warning (nothing written past the job slot, no reply
		 * to desync the socket); reserved bits set are answered -EINVAL in
		 * the slot, not by a reply */
		{
			struct kr_msg_pair raw = {.node = 1, .dctn = av.dctn, .ans = KR_JOB_PAIR_ASKS};
			const struct kr_pool_pair_ans *ans = &kr_seg_job(ctx->seg, ctx->job)->pair_ans[0];

			pthread_mutex_lock(&ctx->lock);
			kr_msg_init(&raw.hdr, KR_MSG_PAIR, sizeof(raw), ++ctx->seq);
			CHECK_OK(kr_msg_send(ctx->sock, &raw, sizeof(raw), NULL, 0));
			raw.ans = 0;
			raw.rsvd = 1;
			kr_msg_init(&raw.hdr, KR_MSG_PAIR, sizeof(raw), ++ctx->seq);
			CHECK_OK(kr_msg_send(ctx->sock, &raw, sizeof(raw), NULL, 0));
			pthread_mutex_unlock(&ctx->lock);
			for (double t0 = kp_now_ms();
			     __atomic_load_n(&ans->seq, __ATOMIC_ACQUIRE) != raw.hdr.seq &&
			     kp_now_ms() - t0 < 5000;)
				usleep(1000);
			CHECK_EQ(ans->seq, raw.hdr.seq);
			CHECK_EQ(ans->status, -EINVAL);
			CHECK_ERR(kr_lease_alloc(ctx, 77, &l[4]), -EINVAL); /* replies still line up */
			CHECK(kp_log_has(&k, "pair request with nowhere to answer dropped"));
		}
		l[4] = (struct kr_lease){.kind = KR_LEASE_RC, .index = 0, .gen = 1};
		CHECK_ERR(kr_job_rc_link(ctx, &l[4]), -EINVAL); /* no such slot */
		CHECK_ERR(kr_job_rc_link(ctx, &l[0]), -EINVAL); /* a DCI lease */
	}
	CHECK_ERR(kr_lease_alloc(NULL, KR_LEASE_DCI, &l[4]), -EINVAL);
	l[4] = l[0];
	l[4].index = 1000;
	CHECK_ERR(kr_lease_free(ctx, &l[4]), -EINVAL);
	for (int i = 0; i < 4; i++)
		CHECK_OK(kr_lease_free(ctx, &l[i]));
	CHECK_ERR(kr_lease_free(ctx, &l[0]), -EINVAL); /* twice */

	/* MRs: only over this job's heap, exactly the range asked */
	buf = kr_malloc(ctx, 8192);
	CHECK(buf != NULL);
	CHECK(kr_malloc(ctx, 0) == NULL && errno == EINVAL);
	CHECK(kr_malloc(ctx, 64u << 20) == NULL && errno == ENOMEM);
	CHECK(kr_reg_mr(ctx, &bad, 16, KR_MR_REMOTE_READ) == NULL && errno == EINVAL);
	CHECK(kr_reg_mr(ctx, buf, 0, KR_MR_REMOTE_READ) == NULL && errno == EINVAL);
	CHECK(kr_reg_mr(ctx, buf, 8192, 0x100) == NULL && errno == EINVAL);
	mr = kr_reg_mr(ctx, buf, 8192, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	CHECK_EQ(key.addr, (uintptr_t)buf);
	CHECK_EQ(key.len, 8192);
	CHECK(key.rkey != ctx->heap_rkey);
	CHECK_EQ(kr_seg_job(ctx->seg, ctx->job)->mrs, 1);
	CHECK_OK(kr_dereg_mr(mr));
	kr_free(ctx, buf);

	/* the idle connection is dropped by the keeper */
	p = (struct pollfd){.fd = idle, .events = POLLIN};
	CHECK_EQ(poll(&p, 1, 10000), 1);
	{
		char c;

		CHECK_EQ(recv(idle, &c, 1, 0), 0);
	}
	close(idle);
	CHECK_OK(kr_detach(ctx));

	/* 1,000 concurrent attaches from one uid on a pool of 2 job slots */
	many_attaches(&k, 2, 2 + KR_POOL_UID_CONNS_EXTRA);
	/* the storm's connections are closed, but the keeper counts them until its
	 * loop has seen each close: EUSERS meanwhile (seen once in a run of mine) */
	for (double t0 = kp_now_ms();; usleep(10000)) {
		ctx = kp_attach(&k, 5000);
		if (ctx || errno != EUSERS || kp_now_ms() - t0 > 10000)
			break;
	}
	if (!ctx)
		KR_FAIL("attach after the storm: %s", strerror(errno));
	CHECK_OK(kr_detach(ctx));

	CHECK_EQ(kp_keeper_stop(&k, SIGTERM), 0);
	kp_keeper_fini(&k);
	KR_PASS("pool_bad_input");
}
