/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Job side: is the process answering on the keeper's socket the keeper? The
 * attach carries the launch's DC key, so a user who listens at the socket
 * path first (a directory others can write, a keeper not yet started) must
 * never get it. The job asks the kernel who holds the other end
 * (SO_PEERCRED, taken at connect: the listener cannot fake it) and sends
 * nothing unless that uid is root, the job's own, or the one the user named
 * (kr_attach_opts.keeper_uid, $KR_KEEPER_UID): a keeper run by a service
 * account.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "job/job.h"

/* kr_attach_keeper_uid() - see job.h. */
int kr_attach_keeper_uid(uint32_t opt, uint32_t *uid)
{
	const char *env = getenv("KR_KEEPER_UID");
	unsigned long v;
	char *end;

	*uid = opt;
	if (opt || !env || !*env)
		return 0;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (errno || *end || v >= UINT32_MAX) {
		KR_ERR("pool", "KR_KEEPER_UID=%s: not a uid", env);
		return -EINVAL;
	}
	*uid = (uint32_t)v;
	return 0;
}

/* kr_attach_peer_check() - see job.h. */
int kr_attach_peer_check(int sock, uint32_t keeper_uid, const char *path)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return -errno;
	if (cr.uid == 0 || cr.uid == getuid() || cr.uid == geteuid() ||
	    (keeper_uid && cr.uid == keeper_uid))
		return 0;
	KR_ERR("pool",
	       "%s is served by uid %u (pid %d), not root, this job's uid nor $KR_KEEPER_UID: "
	       "not a keeper to trust with this launch's key; refusing to attach",
	       path, (unsigned)cr.uid, (int)cr.pid);
	return -EPERM;
}
