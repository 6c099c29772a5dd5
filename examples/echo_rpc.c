/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * echo_rpc: request/response over krcore ports, both sides in one program.
 *
 * It forks: the child is the server, which binds port 7000 and answers
 * every request with the same bytes, sent straight from the buffer the
 * request landed in (zero copy); the parent is the client, which binds a
 * reply port, connects to the server's port naming that reply port, and
 * sends N requests one at a time, checking each answer. Each side attaches
 * to the node's keeper itself (one attach per process). The server learns
 * where to answer from the completion: its src names the sender's slot, and
 * kr_port_sender() gives the sender's node and reply port — no lookup, no
 * handshake of the application's own.
 *
 *   echo_rpc [--socket PATH] [-n N]     (default: $KR_KEEPER_SOCKET, 10000)
 *
 * Prints the round trip's median and the requests per second. Exit 0 when
 * every answer matched. Empty polls yield the CPU: polite where busy pollers
 * outnumber cores (on the sim the NIC is a thread of the keeper too); a
 * latency-bound server on its own core would spin instead.
 *
 * Build: cc echo_rpc.c $(pkg-config --cflags --libs --static krcore)
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#define SERVER_PORT 7000
#define CLIENT_PORT 7001
#define NBUF	    16
#define MSG	    64

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Send, retrying while the receiver has granted no credit (-EAGAIN); polls v meanwhile. */
static int send_retry(struct kr_vqp *v, const void *buf, uint32_t len, uint64_t id)
{
	struct kr_wc wc[4];

	for (double t0 = now_us(); now_us() - t0 < 5e6;) {
		int rc = kr_post_send(v, buf, len, id, 0);

		if (rc != -EAGAIN)
			return rc;
		if (kr_poll(v, wc, 4) < 0)
			return -EIO;
		sched_yield();
	}
	return -ETIMEDOUT;
}

/* Wait for v's send completion with wr_id id. */
static int send_done(struct kr_vqp *v, uint64_t id)
{
	struct kr_wc wc;

	for (double t0 = now_us(); now_us() - t0 < 5e6;) {
		int n = kr_poll(v, &wc, 1);

		if (n < 0)
			return n;
		if (n == 1)
			return wc.status == KR_WC_SUCCESS && wc.wr_id == id ? 0 : -EIO;
		sched_yield();
	}
	return -ETIMEDOUT;
}

/* One received message, or 0 on timeout. */
static int recv_one(struct kr_port *p, struct kr_wc *wc, double timeout_us)
{
	for (double t0 = now_us(); now_us() - t0 < timeout_us;) {
		int n = kr_poll_recv(p, wc, 1);

		if (n)
			return n;
		sched_yield();
	}
	return 0;
}

static int server(const struct kr_attach_opts *ao, int ready_fd)
{
	struct kr_vqp *reply[16] = {0}; /* one per sender slot, connected at its first request */
	uint32_t reply_port[16] = {0};
	struct kr_ctx *ctx = kr_attach(ao);
	uint8_t *bufs;
	struct kr_port *p;
	struct kr_wc wc;

	if (!ctx)
		return 1;
	bufs = kr_malloc(ctx, NBUF * MSG);
	p = bufs ? kr_bind(ctx, SERVER_PORT, &(struct kr_bind_opts){.senders = 16}) : NULL;
	if (!p)
		return 1;
	for (int i = 0; i < NBUF; i++)
		kr_post_recv(p, bufs + i * MSG, MSG, (uint64_t)i);
	if (write(ready_fd, "r", 1) != 1)
		return 1;
	for (;;) {
		struct kr_port_sender who;
		uint8_t *m;

		if (recv_one(p, &wc, 30e6) != 1 || wc.status != KR_WC_SUCCESS)
			break;
		m = bufs + wc.wr_id * MSG;
		if (wc.byte_len == 3 && !memcmp(m, "bye", 3))
			break;
		if (wc.src >= 16 || kr_port_sender(p, wc.src, &who) || !who.reply_port)
			continue; /* nobody to answer */
		if (!reply[wc.src] || reply_port[wc.src] != who.reply_port) {
			struct kr_connect_opts co = {.port = who.reply_port};

			if (reply[wc.src])
				kr_disconnect(reply[wc.src]);
			reply[wc.src] = kr_connect(ctx, who.node, &co);
			reply_port[wc.src] = who.reply_port;
			if (!reply[wc.src])
				break;
		}
		/* the answer goes out of the request's own buffer, posted again once sent */
		if (send_retry(reply[wc.src], m, wc.byte_len, wc.wr_id) ||
		    send_done(reply[wc.src], wc.wr_id))
			break;
		kr_post_recv(p, m, MSG, wc.wr_id);
	}
	for (int i = 0; i < 16; i++)
		if (reply[i])
			kr_disconnect(reply[i]);
	kr_unbind(p);
	kr_detach(ctx);
	return 0;
}

static int client(const struct kr_attach_opts *ao, int n)
{
	struct kr_connect_opts co = {.port = SERVER_PORT, .reply_port = CLIENT_PORT};
	struct kr_ctx *ctx = kr_attach(ao);
	double *rtt = calloc((size_t)n, sizeof(*rtt)), t0, t1;
	uint8_t *bufs, *req;
	struct kr_port *p;
	struct kr_vqp *v;
	struct kr_wc wc;
	int bad = 0;

	if (!ctx || !rtt) {
		fprintf(stderr, "echo_rpc: attach: %s\n", strerror(errno));
		return 1;
	}
	bufs = kr_malloc(ctx, NBUF * MSG);
	req = kr_malloc(ctx, MSG);
	p = bufs && req ? kr_bind(ctx, CLIENT_PORT, NULL) : NULL;
	v = p ? kr_connect(ctx, KR_NODE_SELF, &co) : NULL;
	if (!v) {
		fprintf(stderr, "echo_rpc: client setup: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < NBUF; i++)
		kr_post_recv(p, bufs + i * MSG, MSG, (uint64_t)i);
	t0 = now_us();
	for (int i = 0; i < n && !bad; i++) {
		double s = now_us();
		int len = snprintf((char *)req, MSG, "request %d", i);

		if (send_retry(v, req, (uint32_t)len, (uint64_t)i) || send_done(v, (uint64_t)i) ||
		    recv_one(p, &wc, 5e6) != 1 || wc.status != KR_WC_SUCCESS ||
		    wc.byte_len != (uint32_t)len || memcmp(bufs + wc.wr_id * MSG, req, (size_t)len))
			bad = 1;
		else
			kr_post_recv(p, bufs + wc.wr_id * MSG, MSG, wc.wr_id);
		rtt[i] = now_us() - s;
	}
	t1 = now_us();
	memcpy(req, "bye", 3);
	if (!send_retry(v, req, 3, (uint64_t)n))
		send_done(v, (uint64_t)n);
	if (!bad) {
		qsort(rtt, (size_t)n, sizeof(*rtt), cmp);
		printf("echo_rpc: %d requests of up to %d bytes, round trip p50 %.2f us, "
		       "%.0f requests/s\n",
		       n, MSG, rtt[n / 2], n / ((t1 - t0) / 1e6));
	} else {
		fprintf(stderr, "echo_rpc: a request went unanswered or came back wrong\n");
	}
	kr_disconnect(v);
	kr_unbind(p);
	kr_detach(ctx);
	free(rtt);
	return bad;
}

int main(int argc, char **argv)
{
	struct kr_attach_opts ao = {0};
	int n = 10000, rc, st, ready[2];
	char c;
	pid_t pid;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			ao.socket_path = argv[++i];
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			n = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: echo_rpc [--socket PATH] [-n N]\n");
			return 2;
		}
	}
	if (n < 1 || pipe(ready))
		return 2;
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		_exit(server(&ao, ready[1]));
	}
	close(ready[1]);
	if (pid < 0 || read(ready[0], &c, 1) != 1) { /* the server's port is bound */
		fprintf(stderr, "echo_rpc: the server did not start\n");
		return 1;
	}
	rc = client(&ao, n);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		rc = 1;
	return rc;
}
