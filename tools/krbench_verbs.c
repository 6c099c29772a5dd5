/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench: the verbs way, the baseline krcore is measured against. What an
 * application does for a new connection without krcore, through the same
 * devx code and the same sim cost model: a CQ and an RC QP, QPN/GID/PSN
 * exchanged over TCP the way ibv_rc_pingpong does (the client sends first;
 * the server creates its QP, brings it to RTS and answers with its QPN and
 * its buffer's address and rkey), the client's QP to RTS, one 8-byte READ.
 * Device, PD, UAR and MRs are opened once per process, outside the timing,
 * as a long-running application would.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "devx/devx.h"
#include "sim/sim.h"
#include "krbench.h"

#define VB_VAL	0x76657262733a3031ull /* "verbs:01" */
#define VB_PSN	0x2a2a2aU
#define VB_WAIT 10e6

struct vb_dev {
	struct kr_devx_ctx *ctx;
	struct kr_devx_pd pd;
	struct kr_devx_uar *uar;
	uint64_t *buf;
	struct kr_devx_mr mr;
};

/* What each side sends (host order: both ends are this machine). */
struct vb_msg {
	uint32_t qpn;
	uint32_t psn;
	struct kr_devx_addr port; /* the sender's: GID, MAC */
	uint64_t addr;
	uint32_t rkey;
	uint32_t pad;
};

static int vb_open(const struct kb_cluster *c, int host, const char *name, struct vb_dev *d)
{
	char dev[96];
	int rc;

	memset(d, 0, sizeof(*d));
	kb_sim_device(c, name, host, dev, sizeof(dev));
	rc = kr_devx_backend_add(&kr_sim_backend);
	if (!rc)
		rc = kr_devx_open(dev, &d->ctx);
	if (rc)
		return rc;
	rc = kr_devx_pd_alloc(d->ctx, &d->pd);
	if (!rc)
		rc = d->ctx->ops->alloc_uar(d->ctx, 0, &d->uar);
	if (rc)
		return rc;
	d->buf = aligned_alloc(4096, 4096);
	if (!d->buf)
		return -ENOMEM;
	d->buf[0] = VB_VAL;
	return kr_devx_mr_reg(d->ctx, &d->pd, d->buf, 4096,
			      KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_READ, &d->mr);
}

/* A CQ and an RC QP (in RST). 0 or the devx error. */
static int vb_qp_create(struct vb_dev *d, struct kr_devx_rc *k)
{
	return kr_devx_rc_create(d->ctx, &d->pd, d->uar, 64, 16, k);
}

/* RST->INIT->RTR->RTS towards the peer described by m. */
static int vb_qp_connect(struct kr_devx_rc *k, const struct vb_msg *m)
{
	return kr_devx_rc_connect(k, &m->port, m->qpn, m->psn, VB_PSN);
}

static bool io_all(int fd, void *buf, size_t len, bool wr)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* ---- server ---- */

static void vb_serve_one(struct vb_dev *d, int fd)
{
	struct vb_msg in, out = {.psn = VB_PSN, .addr = (uintptr_t)d->buf, .rkey = d->mr.rkey};
	struct kr_devx_rc k;
	char c;

	if (!io_all(fd, &in, sizeof(in), false))
		return;
	if (vb_qp_create(d, &k))
		return;
	if (!vb_qp_connect(&k, &in)) {
		out.qpn = k.qp.qpn;
		out.port = d->ctx->port.addr;
		/* the client READs, then closes: keep the QP until then */
		if (io_all(fd, &out, sizeof(out), true))
			while (read(fd, &c, 1) > 0)
				;
	}
	kr_devx_rc_destroy(&k);
}

static int vb_server_main(const struct kb_cluster *c, int host, int up)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	struct vb_dev d;
	uint16_t port;
	int ls, one = 1;

	if (vb_open(c, host, "vbsrv", &d))
		return 1;
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 16) ||
	    getsockname(ls, (struct sockaddr *)&a, &alen))
		return 1;
	port = ntohs(a.sin_port);
	if (write(up, &port, sizeof(port)) != sizeof(port))
		return 1;
	close(up);
	for (;;) {
		int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		vb_serve_one(&d, fd);
		close(fd);
	}
}

/* ---- client ---- */

/*
 * One connection the verbs way, timed from the first command: *conn_us until
 * the QP is in RTS, *us until the READ's completion.
 */
static int vb_connect_read(struct vb_dev *d, uint16_t port, double *conn_us, double *us)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct vb_msg out = {.psn = VB_PSN}, in;
	struct kr_devx_sge sge = {.addr = (uintptr_t)&d->buf[1], .length = 8, .lkey = d->mr.lkey};
	struct kr_devx_wr wr = {.wr_id = 1,
				.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1};
	struct kr_devx_wc wc;
	struct kr_devx_rc k;
	double t0 = kb_now_us();
	int fd, rc, n = 0, one = 1;

	d->buf[1] = 0;
	rc = vb_qp_create(d, &k);
	if (rc)
		return rc;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto out_qp;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	out.qpn = k.qp.qpn;
	out.port = d->ctx->port.addr;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) || !io_all(fd, &out, sizeof(out), true) ||
	    !io_all(fd, &in, sizeof(in), false)) {
		rc = -ECONNRESET;
		goto out_fd;
	}
	rc = vb_qp_connect(&k, &in);
	if (rc)
		goto out_fd;
	*conn_us = kb_now_us() - t0;
	wr.remote_addr = in.addr;
	wr.rkey = in.rkey;
	rc = kr_devx_qp_post_send(&k.qp, &wr);
	if (rc)
		goto out_fd;
	kr_devx_qp_ring(&k.qp);
	while ((n = kr_devx_cq_poll(&k.cq, &wc, 1)) == 0 && kb_now_us() - t0 < VB_WAIT)
		;
	*us = kb_now_us() - t0;
	if (n != 1 || wc.status != KR_WC_SUCCESS)
		rc = n < 0 ? n : -EIO;
	else if (d->buf[1] != VB_VAL)
		rc = -EBADMSG; /* READ completed with the wrong bytes */
out_fd:
	close(fd);
out_qp:
	kr_devx_rc_destroy(&k);
	return rc;
}

static int vb_client_main(const struct kb_cluster *c, int host, uint16_t port, int iters, int go,
			  int res)
{
	struct vb_dev d;
	double *lat = calloc(2 * (size_t)iters, sizeof(*lat));
	char b;
	int rc;

	if (!lat || vb_open(c, host, "vbcli", &d))
		return 1;
	if (read(go, &b, 1) != 1)
		return 0; /* not wanted after all */
	for (int i = 0; i < iters; i++) {
		rc = vb_connect_read(&d, port, &lat[iters + i], &lat[i]);
		if (rc) {
			fprintf(stderr, "krbench: verbs baseline connection %d: %s\n", i,
				strerror(-rc));
			return 1;
		}
	}
	return io_all(res, lat, 2 * (size_t)iters * sizeof(*lat), true) ? 0 : 1;
}

int kb_verbs_start(struct kb_verbs *v, const struct kb_cluster *c, int host_srv, int host_cli,
		   int iters)
{
	int up[2], go[2], res[2];
	uint16_t port;

	memset(v, 0, sizeof(*v));
	v->go = v->res = -1;
	v->iters = iters;
	if (pipe2(up, O_CLOEXEC))
		return -errno;
	v->srv = fork();
	if (v->srv == 0) {
		close(up[0]);
		_exit(vb_server_main(c, host_srv, up[1]));
	}
	close(up[1]);
	if (v->srv < 0 || read(up[0], &port, sizeof(port)) != sizeof(port)) {
		close(up[0]);
		fprintf(stderr, "krbench: the verbs baseline's server did not start\n");
		kb_verbs_stop(v);
		return -ECHILD;
	}
	close(up[0]);
	if (pipe2(go, O_CLOEXEC) || pipe2(res, O_CLOEXEC)) {
		kb_verbs_stop(v);
		return -errno;
	}
	v->cli = fork();
	if (v->cli == 0) {
		close(go[1]);
		close(res[0]);
		_exit(vb_client_main(c, host_cli, port, iters, go[0], res[1]));
	}
	close(go[0]);
	close(res[1]);
	v->go = go[1];
	v->res = res[0];
	return v->cli < 0 ? -errno : 0;
}

int kb_verbs_run(struct kb_verbs *v, double *lat)
{
	if (write(v->go, "g", 1) != 1 ||
	    !io_all(v->res, lat, 2 * (size_t)v->iters * sizeof(*lat), false)) {
		fprintf(stderr, "krbench: the verbs baseline failed\n");
		return -EIO;
	}
	return 0;
}

void kb_verbs_stop(struct kb_verbs *v)
{
	if (v->go >= 0)
		close(v->go);
	if (v->res >= 0)
		close(v->res);
	v->go = v->res = -1;
	if (v->cli > 0)
		waitpid(v->cli, NULL, 0);
	if (v->srv > 0) {
		kill(v->srv, SIGTERM);
		waitpid(v->srv, NULL, 0);
	}
	v->cli = v->srv = 0;
}
