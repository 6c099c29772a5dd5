/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the keeper's side of the attach protocol, everything a
 * process that can connect to krpoold's socket may send it. A real keeper
 * (kr_keeper_run on the sim, 2 tenants) runs on a thread of this process,
 * so libFuzzer sees its branches. Each input is one connection carrying up
 * to 8 messages, each
 *   [0]      bit 0: a memfd goes along (SCM_RIGHTS)
 *            bit 1: the header as given (else magic, version and len are
 *                   made right, so the search reaches the bodies)
 *            bit 2: an attach's launch as given (else a job's names the
 *                   probe's launch, an observer's none: a new launch binds
 *                   a tenant, and a tenant lingers 200 ms after its launch)
 *   [1..2]   the message's length (little-endian, mod 600: the keeper reads
 *            at most 256 bytes, a longer message is malformed)
 *   [3..]    the message
 * What must hold: every request is answered within a deadline, except a
 * well-formed KR_MSG_CACHE (one-way), and a malformed one closes the
 * connection after its answer; an answer names the request's type and seq
 * (0 for one too short to have them), its status is 0 or a negative errno.
 * After the connection closes the keeper frees what it held: a job of a
 * fixed launch attaches again (a leaked job slot or tenant would refuse it
 * within a few inputs). No crash, no sanitizer report in either side.
 */
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/keeper.h"
#include "fuzz_record.h"
#include "fuzz_require.h"
#include "kr_test.h"

#define MSGS_MAX    8u
#define MSG_MAX	    600u
#define DEADLINE_MS 5000
#define DEADLINE_NS (DEADLINE_MS * 1000000ull)
#define PROBE_KEY   "krfuzz attach probe launch key!" /* 31 chars + NUL: 32 bytes */

static struct kr_keeper_cfg cfg;
static pthread_t keeper;
static char dir[64];
static int memfd = -1;
static unsigned long sent, answered, closed, oneway, probes;

void fuzz_summary(void);
void fuzz_summary(void)
{
	printf("attach_msg: %lu messages, %lu answered, %lu connections closed by the keeper, "
	       "%lu one-way, %lu probe attaches\n",
	       sent, answered, closed, oneway, probes);
}

static void *keeper_main(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)kr_keeper_run(&cfg);
}

/* At exit: SIGTERM to the keeper's thread (its signalfd), which tears down. */
static void teardown(void)
{
	pthread_kill(keeper, SIGTERM);
	pthread_join(keeper, NULL);
	unlink(cfg.socket);
	rmdir(dir);
}

static void setup(void)
{
	int ready[2];
	char c;

	setenv("KR_LOG", "error", 0);
	snprintf(dir, sizeof(dir), "/tmp/krpool.XXXXXX");
	require(mkdtemp(dir) != NULL);
	kr_keeper_cfg_default(&cfg);
	snprintf(cfg.device, sizeof(cfg.device), "sim:fzat%d", (int)getpid());
	snprintf(cfg.socket, sizeof(cfg.socket), "%s/krpoold.sock", dir);
	cfg.dcis = 4;
	cfg.rc_spares = 1;
	cfg.jobs = 2;
	cfg.heap_mb = 2;
	cfg.warm_heaps = 1;
	cfg.hugepages_mb = 64;
	cfg.foreground = true;
	require(pipe(ready) == 0);
	cfg.ready_fd = ready[1];
	require(pthread_create(&keeper, NULL, keeper_main, NULL) == 0);
	/* one byte once the socket is up; EOF if the keeper gave up */
	require(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	memfd = memfd_create("fuzz_attach_msg", MFD_CLOEXEC);
	require(memfd >= 0 && ftruncate(memfd, 8192) == 0);
	atexit(teardown);
}

/* An attach request names the probe's launch, or none when it observes. */
static void name_launch(uint8_t *msg)
{
	struct kr_msg_attach a;

	memcpy(&a, msg, sizeof(a));
	if (a.hdr.type != KR_MSG_ATTACH)
		return;
	if (a.flags & (KR_ATTACH_F_OBSERVE | KR_ATTACH_F_LONE))
		memset(a.launch_key, 0, sizeof(a.launch_key));
	else
		memcpy(a.launch_key, PROBE_KEY, sizeof(a.launch_key));
	memcpy(msg, &a, sizeof(a));
}

/* A connection whose reads give up after the deadline: a hung keeper aborts. */
static int connect_keeper(void)
{
	struct timeval tv = {.tv_sec = DEADLINE_MS / 1000};
	int sock = kr_msg_connect(cfg.socket);

	require(sock >= 0);
	require(!setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	require(!setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	return sock;
}

/* Wait for what the keeper sends next: 1 readable, 0 closed; a hang aborts. */
static int wait_answer(int sock)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	int n = poll(&p, 1, DEADLINE_MS);

	require(n == 1); /* every request is answered in time */
	return (p.revents & POLLIN) ? 1 : 0;
}

/* The keeper's answer to req (of len bytes); false once it closed on us. */
static bool take_answer(int sock, const uint8_t *req, size_t len)
{
	union {
		struct kr_msg_hdr hdr;
		struct kr_msg_reply reply;
		uint8_t
		    raw[sizeof(struct kr_msg_attach_reply) + sizeof(struct kr_msg_status_reply)];
	} rep;
	struct kr_msg_hdr rq = {0};
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 0;
	ssize_t n;

	if (!wait_answer(sock))
		return false;
	n = kr_msg_recv(sock, &rep, sizeof(rep), fds, KR_ATTACH_MAX_REGIONS + 1, &nfds);
	if (n == -ENOTCONN)
		return false;
	/* well-formed (kr_msg_recv checked the header), with a status */
	require(n >= (ssize_t)offsetof(struct kr_msg_status_reply, data));
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
	answered++;
	if (len >= sizeof(rq))
		memcpy(&rq, req, sizeof(rq));
	/* the request's type and seq, or none: a header it could not read */
	require((rep.hdr.type == (KR_MSG_REPLY | rq.type) && rep.hdr.seq == rq.seq) ||
		(rep.hdr.type == KR_MSG_REPLY && rep.hdr.seq == 0));
	require(rep.reply.status <= 0 && rep.reply.status > -4096);
	return true;
}

/* A well-formed one-way message: the keeper answers nothing. */
static bool one_way(const uint8_t *msg, size_t len, bool with_fd)
{
	struct kr_msg_hdr h;

	if (with_fd || len != sizeof(struct kr_msg_cache))
		return false;
	memcpy(&h, msg, sizeof(h));
	return h.magic == KR_PROTO_MAGIC && h.version == KR_PROTO_VERSION && h.len == len &&
	       h.type == KR_MSG_CACHE;
}

/* After a connection: a job of a fixed launch attaches (job slots come back). */
static void probe_attach(void)
{
	for (uint64_t t0 = kr_test_now_ns();;) {
		struct kr_msg_attach req = {0};
		union {
			struct kr_msg_attach_reply a;
			struct kr_msg_reply r;
		} rep;
		int fds[KR_ATTACH_MAX_REGIONS + 1];
		unsigned int nfds = 0;
		int sock = connect_keeper(), rc;

		_Static_assert(sizeof(PROBE_KEY) == sizeof(req.launch_key), "probe key size");
		memcpy(req.launch_key, PROBE_KEY, sizeof(req.launch_key));
		kr_msg_init(&req.hdr, KR_MSG_ATTACH, sizeof(req), 1);
		rc = kr_msg_call(sock, &req, sizeof(req), &rep, sizeof(rep), fds,
				 KR_ATTACH_MAX_REGIONS + 1, &nfds);
		for (unsigned int i = 0; i < nfds; i++)
			close(fds[i]);
		close(sock);
		probes++;
		if (!rc && !rep.r.status)
			return;
		/* ENOSPC: the keeper's loop has not seen the last connection close
		 * yet; EAGAIN: its worker is warming a heap (the library waits too).
		 * rc -EAGAIN: no answer within the socket's timeout (a hung keeper). */
		if (rc || (rep.r.status != -ENOSPC && rep.r.status != -EAGAIN) ||
		    kr_test_now_ns() - t0 >= DEADLINE_NS) {
			fprintf(stderr, "probe attach, after %.0f ms: %s\n",
				(double)(kr_test_now_ns() - t0) / 1e6,
				strerror(rc ? -rc : -rep.r.status));
			require(0);
		}
		usleep(1000);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	uint8_t msg[MSG_MAX], flags;
	unsigned int m;
	size_t len;
	int sock;

	if (!ready) {
		setup();
		ready = 1;
	}
	sock = connect_keeper();
	for (m = 0; m < MSGS_MAX && fuzz_record(&data, &size, MSG_MAX, msg, &flags, &len); m++) {
		bool with_fd = flags & 1;
		int rc;

		if (!(flags & 2) && len >= sizeof(struct kr_msg_hdr)) {
			struct kr_msg_hdr h;

			memcpy(&h, msg, sizeof(h));
			kr_msg_init(&h, h.type, (uint32_t)len, h.seq);
			memcpy(msg, &h, sizeof(h));
		}
		if (!(flags & 4) && len >= sizeof(struct kr_msg_attach))
			name_launch(msg);
		rc = kr_msg_send(sock, msg, len, &memfd, with_fd);
		if (rc) {
			require(rc != -EAGAIN); /* a keeper that reads nothing: hung */
			break;			/* it closed on us (EPIPE) */
		}
		sent++;
		if (one_way(msg, len, with_fd)) {
			oneway++;
			continue;
		}
		if (!take_answer(sock, msg, len)) {
			closed++;
			break;
		}
	}
	close(sock);
	probe_attach();
	return 0;
}
