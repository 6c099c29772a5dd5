/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the MetaServer attacks share (test_sec_metaserver, test_sec_meta_spoof):
 * a key file, a node's record as a job of a keeper resolves it, a forged
 * REGISTER datagram and whether one is answered.
 */
#ifndef KR_SEC_META_H
#define KR_SEC_META_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job/job.h"
#include "keeper/meta/meta.h"
#include "kr_test.h"
#include "sec_fixture.h"

/* The launch whose records the forged registrations carry (the tests' own). */
static uint64_t g_tag;

static inline void key_file(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	CHECK_OK(fchmod(fd, mode));
	close(fd);
}

/* In a child attached to k: node's record (rc and DCT number) through the MetaServer. */
static inline int resolve(const struct kp_keeper *k, uint32_t node, uint32_t *dctn)
{
	int p[2], status, res[2] = {-1, 0};
	pid_t pid;

	CHECK_OK(pipe(p));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct kr_ctx *ctx = kp_attach(k, 5000);
		struct kr_dct_rec rec;

		close(p[0]);
		if (!ctx)
			_exit(2);
		kr_dct_invalidate(ctx, node);
		res[0] = kr_dct_resolve(ctx, node, &rec);
		res[1] = res[0] ? 0 : (int)rec.dctn;
		if (write(p[1], res, sizeof(res)) != sizeof(res))
			_exit(3);
		kr_detach(ctx);
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ(read(p[0], res, sizeof(res)), (ssize_t)sizeof(res));
	close(p[0]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*dctn = (uint32_t)res[1];
	return res[0];
}

static inline void fake(struct kr_meta_msg *m, uint32_t node, uint32_t dctn, uint64_t ts)
{
	memset(m, 0, sizeof(*m));
	m->magic = KR_META_MSG_MAGIC;
	m->version = KR_META_MSG_VERSION;
	m->type = KR_META_REGISTER;
	m->seq = dctn;
	m->node_id = node;
	m->ntenants = 1;
	m->ts_ns = ts;
	m->t[0].dctn = dctn;
	m->t[0].tag = g_tag;
	m->addr.gid[10] = 0xff;
	m->addr.gid[11] = 0xff;
	m->addr.gid[12] = 127;
	m->addr.gid[15] = (uint8_t)node;
}

/* Send len bytes of buf; was it answered within 300 ms? */
static inline bool answered(int fd, const struct sockaddr_in *ms, const void *buf, size_t len)
{
	struct kr_meta_box rep;

	if (sendto(fd, buf, len, 0, (const struct sockaddr *)ms, sizeof(*ms)) != (ssize_t)len)
		return true; /* counts as a failure of the attack setup */
	return recv(fd, &rep, sizeof(rep), 0) > 0;
}

#endif
