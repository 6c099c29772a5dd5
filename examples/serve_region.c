/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * serve_region: a job that lends 4 KiB of RDMA memory to jobs on other nodes.
 *
 * It attaches to its node's keeper, takes the memory from its heap (no
 * registration call: kr_malloc memory is RDMA-ready), asks for a key that
 * other nodes may READ, WRITE and use atomics on, writes a greeting into the
 * first bytes and prints one line, "<addr> <rkey>" in hex, for the peers:
 * exchanging addresses and keys is the application's business, as with verbs.
 * It then serves until SIGTERM or SIGINT, and detaches.
 *
 *   serve_region [--socket PATH]        (default: $KR_KEEPER_SOCKET)
 *
 * Build: cc serve_region.c $(pkg-config --cflags --libs --static krcore)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <krcore/krcore.h>

#define REGION_LEN 4096

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

int main(int argc, char **argv)
{
	struct kr_attach_opts opts = {0};
	struct kr_mr_key key;
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t block, old;
	struct kr_ctx *ctx;
	struct kr_mr *mr;
	char *region;

	if (argc == 3 && !strcmp(argv[1], "--socket")) {
		opts.socket_path = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: serve_region [--socket PATH]\n");
		return 2;
	}
	/* The signals end the wait below instead of the job: held until then. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	ctx = kr_attach(&opts);
	if (!ctx) {
		fprintf(stderr, "serve_region: kr_attach: %s\n", strerror(errno));
		return 1;
	}
	region = kr_malloc(ctx, REGION_LEN);
	if (!region) {
		fprintf(stderr, "serve_region: kr_malloc: %s\n", strerror(errno));
		kr_detach(ctx);
		return 1;
	}
	memset(region, 0, REGION_LEN);
	snprintf(region, 64, "hello from job %d", (int)getpid());
	/* Remote write and atomics need local write too (as with verbs). */
	mr = kr_reg_mr(ctx, region, REGION_LEN,
		       KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ | KR_MR_REMOTE_WRITE |
			   KR_MR_REMOTE_ATOMIC);
	if (!mr || kr_mr_key(mr, &key)) {
		fprintf(stderr, "serve_region: kr_reg_mr: %s\n", strerror(errno));
		kr_free(ctx, region);
		kr_detach(ctx);
		return 1;
	}
	printf("%llx %x\n", (unsigned long long)key.addr, key.rkey);
	fflush(stdout);

	while (!g_stop)
		sigsuspend(&old);

	kr_dereg_mr(mr);
	kr_free(ctx, region);
	kr_detach(ctx);
	return 0;
}
