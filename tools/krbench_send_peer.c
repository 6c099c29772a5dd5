/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench send --peer: krbench send's cases to node 2 of two keepers started
 * here (sim hosts over UDP loopback, node 1 the MetaServer). A job on node 2
 * binds the case's ports and sends every message back to the same port
 * numbers on node 1, where this job (attached to node 1) takes them: per
 * case, the echo job gets the case over a pipe, serves it until told to
 * stop, and says how it ended. Both sides bind before they connect, and a
 * connect waits (up to 10 s) for the other side's ports to be published.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "krbench.h"

#define KB_SP_PORT 7400

/* The echo job on node 2: a case per read of its orders pipe, until EOF. */
static int echo_main(const char *sock, int orders, int stop, int result)
{
	struct kb_rd_raw dci;
	struct kr_lease l;
	struct kb_sd_case c;
	struct kr_ctx *ctx = kb_attach_node(sock);
	int rc = 0;

	if (!ctx || kb_sd_lease_dci(ctx, &dci, &l))
		return 1;
	while (read(orders, &c, sizeof(c)) == sizeof(c)) {
		char b;

		rc = kb_sd_echo(ctx, &c, &dci, stop);
		if (read(stop, &b, 1) != 1 || write(result, &rc, sizeof(rc)) != sizeof(rc))
			return 1;
	}
	kr_lease_free(ctx, &l);
	kr_detach(ctx);
	return 0;
}

struct echo_job {
	pid_t pid;
	int orders, stop, result;
};

static int echo_start(struct echo_job *e, const char *sock)
{
	int o[2], s[2], r[2];

	if (pipe(o) || pipe(s) || pipe(r))
		return -errno;
	e->pid = fork();
	if (e->pid == 0) {
		close(o[1]);
		close(s[1]);
		close(r[0]);
		_exit(echo_main(sock, o[0], s[0], r[1]));
	}
	close(o[0]);
	close(s[0]);
	close(r[1]);
	e->orders = o[1];
	e->stop = s[1];
	e->result = r[0];
	return e->pid < 0 ? -errno : 0;
}

/* One case: the echo job serves c mirrored while this job measures c. */
static int peer_case(struct kr_ctx *ctx, struct echo_job *e, struct kb_sd_case *c,
		     const struct kb_rd_raw *dci, int iters, double *lat, struct kb_sd_res *res)
{
	struct kb_sd_case m = *c;
	int rc, erc = -EIO;

	m.node = 1;
	m.port0 = c->rport0;
	m.rport0 = c->port0;
	if (write(e->orders, &m, sizeof(m)) != sizeof(m))
		return -EIO;
	rc = kb_sd_measure(ctx, c, dci, iters, lat, res);
	if (write(e->stop, "s", 1) != 1 || read(e->result, &erc, sizeof(erc)) != sizeof(erc))
		return rc ? rc : -EIO;
	if (erc)
		fprintf(stderr, "krbench: the echo job on node 2: %s\n", strerror(-erc));
	return rc ? rc : erc;
}

int kb_bench_send_peer(int iters, bool json, const char *krpoold)
{
	struct kb_sd_res rv[2], rr[2];
	struct kb_cluster c;
	struct echo_job e = {0};
	struct kb_rd_raw dci;
	struct kr_lease l;
	struct kr_ctx *ctx = NULL;
	double *lat = calloc((size_t)iters, sizeof(*lat));
	int rc;

	if (!lat)
		return 1;
	rc = kb_cluster_start(&c, 2, 0, krpoold);
	if (rc) {
		free(lat);
		return rc == -ENOSPC ? 77 : 1;
	}
	rc = echo_start(&e, c.sock[1]);
	if (!rc)
		ctx = kb_attach_node(c.sock[0]);
	if (rc || !ctx || kb_sd_lease_dci(ctx, &dci, &l)) {
		rc = -EIO;
		goto out;
	}
	for (int z = 0; z < 2 && !rc; z++) {
		struct kb_sd_res r[2][KB_SD_ROUNDS];

		for (int k = 0; k < KB_SD_ROUNDS && !rc; k++)
			for (int raw = 0; raw < 2 && !rc; raw++) {
				/* new ports each time: a rebound port's record may lag */
				uint32_t p0 = KB_SP_PORT + 2 * (uint32_t)(4 * k + 2 * z + raw);
				struct kb_sd_case sc = {.node = 2,
							.raw = raw,
							.len = kb_sd_sizes[z],
							.port0 = p0,
							.rport0 = p0 + 100};

				rc = peer_case(ctx, &e, &sc, &dci, iters, lat, &r[raw][k]);
				if (rc)
					fprintf(stderr, "krbench: send --peer %u B %s: %s\n",
						sc.len, raw ? "raw" : "vqp", strerror(-rc));
			}
		if (!rc) {
			kb_sd_median(r[0], &rv[z]);
			kb_sd_median(r[1], &rr[z]);
		}
	}
	kr_lease_free(ctx, &l);
	if (!rc)
		kb_sd_report("send_peer", iters, json, rv, rr);
out:
	if (ctx)
		kr_detach(ctx);
	if (e.pid > 0) {
		close(e.orders); /* EOF: the echo job detaches and exits */
		close(e.stop);
		close(e.result);
		waitpid(e.pid, NULL, 0);
	}
	kb_cluster_stop(&c);
	free(lat);
	return rc ? 1 : 0;
}
