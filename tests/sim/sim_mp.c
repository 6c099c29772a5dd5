/* SPDX-License-Identifier: BSD-3-Clause */
/* Multi-process test helpers (sim_mp.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "sim/sim.h"
#include "sim_mp.h"

uint64_t mp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void mp_barrier_init(struct mp_barrier *b, uint32_t n)
{
	atomic_store(&b->arrived, 0);
	atomic_store(&b->gen, 0);
	b->n = n;
}

int mp_barrier_wait(struct mp_barrier *b, int timeout_ms)
{
	uint32_t gen = atomic_load(&b->gen);
	uint64_t deadline = mp_now_ms() + (uint64_t)timeout_ms;

	if (atomic_fetch_add(&b->arrived, 1) + 1 == b->n) {
		atomic_store(&b->arrived, 0);
		atomic_fetch_add(&b->gen, 1);
		return 0;
	}
	while (atomic_load(&b->gen) == gen) {
		if (mp_now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(200);
	}
	return 0;
}

static bool mp_port_free(const char *addr, uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

uint16_t mp_pick_port(const char *const *addrs, int n)
{
	struct timespec ts;
	unsigned int seed;

	clock_gettime(CLOCK_REALTIME, &ts);
	seed = (unsigned int)(ts.tv_nsec ^ (getpid() << 16));
	for (int tries = 0; tries < 64; tries++) {
		uint16_t port = (uint16_t)(20000 + rand_r(&seed) % 40000);
		int i;

		for (i = 0; i < n && mp_port_free(addrs[i], port); i++)
			;
		if (i == n)
			return port;
	}
	return 0;
}

pid_t mp_spawn(int (*fn)(int idx, void *arg), int idx, void *arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		int rc = fn(idx, arg);

		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	return pid;
}

int mp_wait(pid_t *pids, int n, int timeout_ms)
{
	uint64_t deadline = mp_now_ms() + (uint64_t)timeout_ms;
	int left = n, result = 0;

	while (left) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			for (int i = 0; i < n; i++) {
				if (pids[i] != p)
					continue;
				pids[i] = 0;
				left--;
				if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
					break;
				if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
					if (!result)
						result = 77;
					break;
				}
				fprintf(stderr, "child %d (pid %d) %s %d\n", i, (int)p,
					WIFEXITED(st) ? "exited" : "killed by signal",
					WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
				result = 1;
				break;
			}
			continue;
		}
		if (mp_now_ms() > deadline) {
			fprintf(stderr, "%d children still running after %d ms: killed\n", left,
				timeout_ms);
			for (int i = 0; i < n; i++)
				if (pids[i] > 0) {
					kill(pids[i], SIGKILL);
					waitpid(pids[i], NULL, 0);
					pids[i] = 0;
				}
			return 1;
		}
		usleep(2000);
	}
	return result;
}

int mp_rc_create(struct kr_fx_host *h, struct kr_devx_qp *qp)
{
	struct kr_devx_qp_attr a = {
	    .type = KR_DEVX_QP_RC,
	    .pdn = h->pd.pdn,
	    .send_cq = &h->scq,
	    .recv_cq = &h->rcq,
	    .uar = h->uar,
	    .sq_wqebb = 256,
	    .rq_wqe = 64,
	    .max_recv_sge = 4,
	};
	int rc;

	a.buf_len = kr_devx_qp_buf_size(&a);
	a.buf = kr_fx_alloc_shared(a.buf_len);
	if (!a.buf)
		return -ENOMEM;
	rc = kr_devx_qp_create(h->ctx, &a, qp);
	if (rc)
		kr_fx_free_shared(a.buf, a.buf_len);
	return rc;
}

void mp_gid(struct kr_fx_host *h, uint8_t gid[16])
{
	memcpy(gid, h->ctx->port.addr.gid, 16);
}

void mp_dc_av_to(struct kr_devx_dc_av *av, const struct kr_fx_host *h, const uint8_t rgid[16])
{
	struct kr_devx_addr peer = {0};

	memcpy(peer.gid, rgid, 16);
	sim_mac_of_gid(rgid, peer.mac); /* a sim host elsewhere: the sim's ARP */
	kr_devx_dc_av_path(av, &h->ctx->port, &peer, 1, av->dctn);
}

int mp_rc_connect(struct kr_devx_qp *qp, uint32_t rqpn, const uint8_t rgid[16],
		  const struct kr_devx_qp_conn *tmpl)
{
	struct kr_devx_addr peer = {0};
	struct kr_devx_qp_conn c;

	if (tmpl)
		c = *tmpl;
	else
		kr_fx_conn_default(&c);
	c.remote_qpn = rqpn;
	/* the peer is a sim host in another process: its MAC is the sim's ARP of its GID */
	memcpy(peer.gid, rgid, 16);
	sim_mac_of_gid(rgid, peer.mac);
	kr_devx_qp_conn_path(&c, &qp->ctx->port, &peer, qp->qpn, rqpn);
	return kr_devx_qp_connect(qp, &c);
}

