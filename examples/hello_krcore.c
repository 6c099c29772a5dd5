/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hello_krcore: attach, connect to jobs on other nodes, READ, WRITE and CAS.
 *
 * Each peer is "NODE:ADDR:RKEY": the node id of the peer's keeper and the
 * address and key a serve_region job there printed (hex). For each peer the
 * job connects (no handshake: the peer's DC target comes from the node's
 * metadata), READs the peer's greeting, WRITEs 32 bytes and READs them back,
 * and swaps a word with CAS, checking every byte. It prints what it timed.
 *
 *   hello_krcore [--socket PATH] NODE:ADDR:RKEY...
 *
 * Build: cc hello_krcore.c $(pkg-config --cflags --libs --static krcore)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>

#define POLL_DEADLINE_NS 5000000000ll /* a completion later than this is a failure */

struct peer {
	uint32_t node;
	uint64_t addr; /* the peer's region: greeting at 0, our bytes at 64, a word at 128 */
	uint32_t rkey;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Poll until the request posted last completes; 0 when it succeeded. */
static int wait_one(struct kr_vqp *vqp, const char *what)
{
	int64_t deadline = now_ns() + POLL_DEADLINE_NS;
	struct kr_wc wc;
	int n;

	while ((n = kr_poll(vqp, &wc, 1)) == 0)
		if (now_ns() > deadline) {
			fprintf(stderr, "hello_krcore: %s: no completion\n", what);
			return -ETIMEDOUT;
		}
	if (n < 0) {
		fprintf(stderr, "hello_krcore: %s: kr_poll: %s\n", what, strerror(-n));
		return n;
	}
	if (wc.status != KR_WC_SUCCESS) {
		fprintf(stderr, "hello_krcore: %s: %s\n", what, kr_strerror((int)wc.status));
		return -EIO;
	}
	return 0;
}

/* Post with op's return code, then wait: 0 or -errno (reported). */
static int done(int posted, struct kr_vqp *vqp, const char *what)
{
	if (posted) {
		fprintf(stderr, "hello_krcore: %s: %s\n", what, strerror(-posted));
		return posted;
	}
	return wait_one(vqp, what);
}

/* READ, WRITE + READ back, CAS + READ back against one peer; buf is heap memory. */
static int talk(struct kr_vqp *vqp, const struct peer *p, char *buf, int64_t t_connect)
{
	uint64_t *word = (uint64_t *)(buf + 256), old, mine;
	char msg[32];
	int rc;

	rc = done(kr_post_read(vqp, buf, 64, p->addr, p->rkey, 1, 0), vqp, "READ");
	if (rc)
		return rc;
	printf("  node %" PRIu32 ": first READ done %.1f us after connect began: \"%.63s\"\n",
	       p->node, (double)(now_ns() - t_connect) / 1e3, buf);

	memset(msg, 0, sizeof(msg));
	snprintf(msg, sizeof(msg), "written by job %d", (int)getpid());
	memcpy(buf + 64, msg, sizeof(msg));
	rc = done(kr_post_write(vqp, buf + 64, sizeof(msg), p->addr + 64, p->rkey, 2, 0), vqp,
		  "WRITE");
	if (!rc)
		rc = done(kr_post_read(vqp, buf + 128, sizeof(msg), p->addr + 64, p->rkey, 3, 0),
			  vqp, "READ back");
	if (rc)
		return rc;
	if (memcmp(buf + 128, msg, sizeof(msg))) {
		fprintf(stderr, "hello_krcore: node %" PRIu32 ": WRITE did not land\n", p->node);
		return -EIO;
	}

	/* Learn the word's value (a CAS that fails returns it), then swap it for ours. */
	rc = done(kr_post_cas(vqp, word, p->addr + 128, p->rkey, 0, 0, 4, 0), vqp, "CAS");
	if (rc)
		return rc;
	old = *word;
	mine = ((uint64_t)getpid() << 32) | (uint64_t)now_ns() >> 32 | 1;
	rc = done(kr_post_cas(vqp, word, p->addr + 128, p->rkey, old, mine, 5, 0), vqp, "CAS");
	if (rc)
		return rc;
	if (*word != old) {
		fprintf(stderr,
			"hello_krcore: node %" PRIu32 ": CAS returned %" PRIx64
			" instead of %" PRIx64 "\n",
			p->node, *word, old);
		return -EIO;
	}
	rc = done(kr_post_read(vqp, word, 8, p->addr + 128, p->rkey, 6, 0), vqp, "READ back");
	if (rc)
		return rc;
	if (*word != mine) {
		fprintf(stderr, "hello_krcore: node %" PRIu32 ": CAS did not swap\n", p->node);
		return -EIO;
	}
	printf("  node %" PRIu32 ": READ, WRITE and CAS checked\n", p->node);
	return 0;
}

static int parse_peer(const char *s, struct peer *p)
{
	unsigned long long addr;
	unsigned int node, rkey;
	int end = 0;

	if (sscanf(s, "%u:%llx:%x%n", &node, &addr, &rkey, &end) != 3 || s[end] || !node ||
	    (addr & 7))
		return -EINVAL;
	p->node = node;
	p->addr = addr;
	p->rkey = rkey;
	return 0;
}

int main(int argc, char **argv)
{
	struct kr_attach_opts opts = {0};
	struct peer peers[64];
	int npeers = 0, failed = 0;
	struct kr_ctx *ctx;
	int64_t t0;
	char *buf;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			opts.socket_path = argv[++i];
		} else if (npeers < 64 && !parse_peer(argv[i], &peers[npeers])) {
			npeers++;
		} else {
			fprintf(stderr,
				"usage: hello_krcore [--socket PATH] NODE:ADDR:RKEY...\n"
				"bad argument: %s\n",
				argv[i]);
			return 2;
		}
	}
	if (!npeers) {
		fprintf(stderr, "usage: hello_krcore [--socket PATH] NODE:ADDR:RKEY...\n");
		return 2;
	}

	t0 = now_ns();
	ctx = kr_attach(&opts);
	if (!ctx) {
		fprintf(stderr, "hello_krcore: kr_attach: %s\n", strerror(errno));
		return 1;
	}
	printf("attached to the keeper in %.1f us\n", (double)(now_ns() - t0) / 1e3);
	buf = kr_malloc(ctx, 4096); /* RDMA-ready: the keeper registered the heap */
	if (!buf) {
		fprintf(stderr, "hello_krcore: kr_malloc: %s\n", strerror(errno));
		kr_detach(ctx);
		return 1;
	}

	for (int i = 0; i < npeers; i++) {
		int64_t t = now_ns();
		struct kr_vqp *vqp = kr_connect(ctx, peers[i].node, NULL);

		/* a MetaServer that did not answer in time (a loaded machine): ask again, 2 s */
		while (!vqp && (errno == EAGAIN || errno == EHOSTUNREACH) &&
		       now_ns() - t < 2000000000ll) {
			usleep(10000);
			vqp = kr_connect(ctx, peers[i].node, NULL);
		}

		if (!vqp) {
			/* ENOENT: no keeper of that node id registered with a MetaServer */
			fprintf(stderr, "hello_krcore: kr_connect(%" PRIu32 "): %s\n",
				peers[i].node, errno == ENOENT ? "no such node" : strerror(errno));
			failed++;
			continue;
		}
		printf("  node %" PRIu32 ": connected in %.2f us\n", peers[i].node,
		       (double)(now_ns() - t) / 1e3);
		if (talk(vqp, &peers[i], buf, t))
			failed++;
		kr_disconnect(vqp);
	}

	kr_free(ctx, buf);
	kr_detach(ctx);
	if (failed)
		fprintf(stderr, "hello_krcore: %d of %d peers failed\n", failed, npeers);
	return failed ? 1 : 0;
}
