/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two-host tests' set-up (test_virtqp_two_nodes, test_virtqp_promote):
 * node 2's keeper on sim host 127.0.0.3 and a job there that lends memory,
 * then node 1's keeper on 127.0.0.2 with node 2 in its --peers, both over
 * RoCEv2 on UDP loopback. The test's own job runs on node 1.
 */
#ifndef KR_VQ_TWO_HOSTS_H
#define KR_VQ_TWO_HOSTS_H

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_mp.h"
#include "vq_fixture.h"

/* What node 2's job lends: its tenant's DC target, and a region of its memory. */
struct vq_lent {
	struct kr_devx_dc_av av;
	uint64_t addr;
	uint32_t rkey;
};

/*
 * In node 2's job: register [buf, buf + len) with every remote right and
 * send what a peer needs to reach it (struct vq_lent) to out. The MR.
 */
static inline struct kr_mr *vq_lend(struct kr_ctx *ctx, void *buf, uint32_t len, int out)
{
	struct kr_mr *mr = kr_reg_mr(ctx, buf, len,
				     KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE |
					 KR_MR_REMOTE_ATOMIC);
	struct vq_lent info;
	struct kr_mr_key key;

	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	CHECK_OK(kr_job_tenant_av(ctx, &info.av));
	info.addr = key.addr;
	info.rkey = key.rkey;
	CHECK_EQ(write(out, &info, sizeof(info)), (ssize_t)sizeof(info));
	return mr;
}

/*
 * Node 2's job of a test that checks node 2's memory only through node 1's
 * READs: len zeroed bytes lent to out, kept until a byte comes on in.
 */
static inline int vq_lend_zeroed(const struct kp_keeper *kb, int out, int in, uint32_t len)
{
	struct kr_ctx *ctx = kp_attach(kb, 5000);
	struct kr_mr *mr;
	uint8_t *mem, go;

	CHECK(ctx != NULL);
	mem = kr_malloc(ctx, len);
	CHECK(mem != NULL);
	memset(mem, 0, len);
	mr = vq_lend(ctx, mem, len, out);
	CHECK_EQ(read(in, &go, 1), 1); /* node 1 is done */
	CHECK_OK(kr_dereg_mr(mr));
	CHECK_OK(kr_detach(ctx));
	return 0;
}

struct vq_two_hosts {
	struct kp_keeper a, b; /* node 1, node 2 */
	char peers[128];
	int to_b; /* a byte here: node 1 is done, node 2's job checks and exits */
	pid_t job_b;
	struct vq_lent lent;
};

/*
 * Start both: dev_opts follows node 1's device (",drop=0.05"), b_opts node
 * 2's (NULL: dev_opts too), b_extra (NULL terminated, or NULL) follows node
 * 2's keeper's arguments; side_b(keeper, out, in) is node 2's job, which
 * writes a struct vq_lent to out and waits for a byte on in. Skips (77)
 * without a free UDP port.
 */
static inline void vq_two_hosts_start2(struct vq_two_hosts *h, const char *dev_opts,
				       const char *b_opts, const char *const *b_extra,
				       int (*side_b)(const struct kp_keeper *k, int out, int in))
{
	static const char *const addrs[] = {"127.0.0.2", "127.0.0.3"};
	char deva[96], devb[96];
	const char *ab[32] = {"--device", devb, "--node-id", "2", "--tenants",	 "1", "--dcis", "4",
			      "--jobs",	  "1",	"--heap-mb", "2", "--hugepages", "64"};
	const char *const aa[] = {"--device",  deva, "--node-id",   "1",  "--peers", h->peers,
				  "--tenants", "1",  "--dcis",	    "4",  "--jobs",  "1",
				  "--heap-mb", "2",  "--hugepages", "64", NULL};
	int b2a[2], a2b[2], n = 14;
	uint16_t port;

	kp_require_hugepages(64);
	port = mp_pick_port(addrs, 2);
	if (!port)
		KR_SKIP("no free UDP port on 127.0.0.2/127.0.0.3");
	snprintf(deva, sizeof(deva), "sim:nodeA@127.0.0.2:%u%s", port, dev_opts);
	snprintf(devb, sizeof(devb), "sim:nodeB@127.0.0.3:%u%s", port, b_opts ? b_opts : dev_opts);
	for (int i = 0; b_extra && b_extra[i] && n < 31; i++)
		ab[n++] = b_extra[i];
	ab[n] = NULL;
	kp_keeper_init(&h->a);
	kp_keeper_init(&h->b);
	CHECK_OK(kp_keeper_start(&h->b, ab));
	CHECK_OK(pipe(b2a));
	CHECK_OK(pipe(a2b));
	h->job_b = kp_fork_job();
	CHECK(h->job_b >= 0);
	if (h->job_b == 0) {
		/* node 1's ends closed: node 1 failing (exit) is an EOF here, not a hang */
		close(b2a[0]);
		close(a2b[1]);
		_exit(side_b(&h->b, b2a[1], a2b[0]));
	}
	close(b2a[1]);
	close(a2b[0]);
	CHECK_EQ(read(b2a[0], &h->lent, sizeof(h->lent)), (ssize_t)sizeof(h->lent));
	close(b2a[0]);
	h->to_b = a2b[1];
	snprintf(h->peers, sizeof(h->peers), "%s/peers", h->a.dir);
	vq_peers_node2(h->peers, &h->lent.av); /* both sides: the tests' launch */
	CHECK_OK(kp_keeper_start(&h->a, aa));
}

/* vq_two_hosts_start2() with the same options on both devices. */
static inline void vq_two_hosts_start(struct vq_two_hosts *h, const char *dev_opts,
				      const char *const *b_extra,
				      int (*side_b)(const struct kp_keeper *k, int out, int in))
{
	vq_two_hosts_start2(h, dev_opts, NULL, b_extra, side_b);
}

/* Node 1 is done: node 2's job checks its memory and must exit 0. */
static inline void vq_two_hosts_join(struct vq_two_hosts *h)
{
	int status;

	CHECK_EQ(write(h->to_b, "g", 1), 1);
	close(h->to_b);
	CHECK_EQ(waitpid(h->job_b, &status, 0), h->job_b);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * Both keepers stop cleanly (one already stopped counts as clean), and
 * neither's sim saw a WQE rewritten before its completion.
 */
static inline void vq_two_hosts_stop(struct vq_two_hosts *h)
{
	CHECK_EQ(kp_keeper_stop(&h->a, SIGTERM), 0);
	CHECK_EQ(kp_keeper_stop(&h->b, SIGTERM), 0);
	CHECK(!kp_log_has(&h->a, "rewritten before its completion"));
	CHECK(!kp_log_has(&h->b, "rewritten before its completion"));
	unlink(h->peers);
	kp_keeper_fini(&h->a);
	kp_keeper_fini(&h->b);
}

#endif
