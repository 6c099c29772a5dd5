/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper's UNIX socket: one keeper per socket (a lock file next to it),
 * accept, peer identity from SO_PEERCRED (never from what the peer says),
 * requests and replies, and the end of a connection: a job that closes its
 * socket without a detach died, and everything it held is taken back.
 *
 * Every request is checked before it touches anything: size exact for its
 * type, known type, flags, and for leases/MRs that the connection owns what
 * it names. A malformed message gets an error reply and the connection is
 * closed (an attached job is then reclaimed as if it had died).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

#define KR_EV_CONN 3ull

_Static_assert((int)KR_MR_LOCAL_WRITE == (int)KR_ACCESS_LOCAL_WRITE &&
		   (int)KR_MR_REMOTE_WRITE == (int)KR_ACCESS_REMOTE_WRITE &&
		   (int)KR_MR_REMOTE_READ == (int)KR_ACCESS_REMOTE_READ &&
		   (int)KR_MR_REMOTE_ATOMIC == (int)KR_ACCESS_REMOTE_ATOMIC,
	       "public access bits are the devx ones");

/*
 * The socket's directory must be a real directory (not a symlink) owned by
 * us or root that no other user can write, sticky or not: in a directory
 * others can write, one of them can bind the socket path before we do (and
 * receive the attaches, launch keys included) or plant the lock file.
 */
static int keeper_dir_check(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st)) {
		KR_ERR("pool", "socket directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		KR_ERR("pool", "socket directory %s is not a directory (a symlink?); refusing",
		       dir);
		return -ENOTDIR;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		KR_ERR("pool", "socket directory %s belongs to uid %u; refusing", dir,
		       (unsigned)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		KR_ERR("pool",
		       "socket directory %s (mode %04o) is writable by other users, who could "
		       "take the socket path first; refusing: use a directory only its owner "
		       "writes, such as /run/krcore",
		       dir, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/*
 * kr_keeper_lock() - take <socket>.lock (flock, held for the keeper's life)
 * and make sure no keeper answers on the socket. The lock file is opened
 * without following a symlink and must be a regular file of ours. Returns 0,
 * -EADDRINUSE (another keeper: logged with its pid), -errno (directory, lock
 * file: unsafe ones are refused with a message).
 */
int kr_keeper_lock(struct kr_keeper *k)
{
	char lock[sizeof(k->cfg.socket) + 8], dir[sizeof(k->cfg.socket)], pid[32];
	struct stat st;
	int fd, other, rc;

	snprintf(dir, sizeof(dir), "%s", k->cfg.socket);
	if (mkdir(dirname(dir), 0755) && errno != EEXIST) {
		KR_ERR("pool", "cannot create the socket directory for %s: %s", k->cfg.socket,
		       strerror(errno));
		return -errno;
	}
	rc = keeper_dir_check(dir);
	if (rc)
		return rc;
	snprintf(lock, sizeof(lock), "%s.lock", k->cfg.socket);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	if (fd < 0) {
		rc = -errno;
		KR_ERR("pool", "%s: %s", lock,
		       rc == -ELOOP ? "is a symlink; refusing to follow it" : strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		KR_ERR("pool", "%s is not a regular file of ours; refusing", lock);
		close(fd);
		return -EPERM;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);

		pid[n > 0 ? n : 0] = '\0';
		KR_ERR("pool", "another keeper (pid %s) is serving %s; refusing to start",
		       n > 0 ? strtok(pid, "\n") : "?", k->cfg.socket);
		close(fd);
		return -EADDRINUSE;
	}
	/* a keeper without our lock file (older build, other prefix) still answering? */
	other = kr_msg_connect(k->cfg.socket);
	if (other >= 0) {
		close(other);
		KR_ERR("pool", "a keeper is answering on %s; refusing to start", k->cfg.socket);
		close(fd);
		return -EADDRINUSE;
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, strlen(pid), 0) < 0)
		KR_WARN("pool", "%s: cannot record our pid", lock);
	k->lock_fd = fd;
	return 0;
}

/*
 * kr_keeper_listen() - bind the socket (a stale one from a dead keeper is
 * replaced: we hold the lock; anything else at the path is refused), mode
 * 0660 from the moment it exists (umask, no chmod through a path), group
 * cfg.group set without following a symlink: who may connect, and so
 * attach or observe, is that group. Returns 0 or -errno.
 */
int kr_keeper_listen(struct kr_keeper *k)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0};
	struct stat st;
	mode_t old;
	int fd, rc;

	memcpy(sa.sun_path, k->cfg.socket, strlen(k->cfg.socket) + 1);
	if (!lstat(k->cfg.socket, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			KR_ERR("pool", "%s exists and is not a socket; refusing to replace it",
			       k->cfg.socket);
			return -EEXIST;
		}
		unlink(k->cfg.socket);
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	old = umask(0117);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (!rc && k->cfg.group >= 0 &&
	    fchownat(AT_FDCWD, k->cfg.socket, (uid_t)-1, (gid_t)k->cfg.group, AT_SYMLINK_NOFOLLOW))
		rc = -errno;
	if (!rc && listen(fd, SOMAXCONN))
		rc = -errno;
	if (rc) {
		KR_ERR("pool", "%s: %s", k->cfg.socket, strerror(-rc));
		close(fd);
		return rc;
	}
	if (epoll_ctl(k->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
		rc = -errno;
		close(fd);
		return rc;
	}
	k->listen_fd = fd;
	return 0;
}

void kr_keeper_unlisten(struct kr_keeper *k)
{
	char lock[sizeof(k->cfg.socket) + 8];

	for (uint32_t i = 0; k->conn && i < KR_POOL_MAX_CONNS; i++)
		if (k->conn[i])
			kr_keeper_conn_close(k, i, false);
	if (k->listen_fd >= 0) {
		close(k->listen_fd);
		unlink(k->cfg.socket);
		k->listen_fd = -1;
	}
	if (k->lock_fd >= 0) {
		snprintf(lock, sizeof(lock), "%s.lock", k->cfg.socket);
		unlink(lock);
		close(k->lock_fd);
		k->lock_fd = -1;
	}
}

/*
 * Refuse a connection without serving it: an ATTACH reply with seq 0 and the
 * reason (a client's first request is always ATTACH), then close. What the
 * client already sent is read first: closing with it unread would turn the
 * reply into ECONNRESET at the client. A client that sends after the close
 * gets EPIPE and still finds the reply queued (kr_msg_call).
 */
static void refuse_conn(struct kr_keeper *k, int fd, int status)
{
	struct kr_msg_attach_reply *rep = calloc(1, sizeof(*rep));
	char drain[256];

	for (int i = 0; i < 4 && recv(fd, drain, sizeof(drain), MSG_DONTWAIT) > 0; i++)
		;

	if (rep) {
		kr_msg_init(&rep->hdr, KR_MSG_REPLY | KR_MSG_ATTACH, sizeof(*rep), 0);
		rep->status = status;
		kr_msg_send(fd, rep, sizeof(*rep), NULL, 0);
		free(rep);
	}
	k->seg->refused++;
	close(fd);
}

void kr_keeper_accept(struct kr_keeper *k)
{
	for (;;) {
		struct kr_keeper_conn *c;
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};
		uint32_t slot;
		int fd, rc;

		fd = accept4(k->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				KR_ERR_RATELIMITED("pool", "accept: %s", strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid <= 0) {
			KR_WARN_RATELIMITED("pool", "connection without peer credentials; closed");
			close(fd);
			continue;
		}
		/* one uid cannot take the slots every other uid needs */
		rc = kr_keeper_conn_slot_get(k, cred.uid, k->cfg.jobs + KR_POOL_UID_CONNS_EXTRA,
					     &slot);
		if (rc == -EUSERS)
			KR_WARN_RATELIMITED("pool",
					    "uid %u holds %u connections (its limit); refusing pid %d",
					    (unsigned)cred.uid, k->cfg.jobs + KR_POOL_UID_CONNS_EXTRA,
					    (int)cred.pid);
		else if (rc)
			KR_ERR_RATELIMITED("pool", "too many connections (%u); refusing pid %d",
					   k->nconn, (int)cred.pid);
		if (rc) {
			refuse_conn(k, fd, -EUSERS);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			kr_keeper_conn_slot_put(k, slot, cred.uid);
			refuse_conn(k, fd, -ENOMEM);
			continue;
		}
		c->fd = fd;
		c->pid = cred.pid;
		c->uid = cred.uid;
		c->accept_ns = kr_now_ns();
		c->last_ns = c->accept_ns;
		ev.data.u64 = (KR_EV_CONN << 32) | slot;
		if (epoll_ctl(k->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
			kr_keeper_conn_slot_put(k, slot, cred.uid);
			close(fd);
			free(c);
			continue;
		}
		k->conn[slot] = c;
		k->nconn++;
	}
}

/* ---- requests ---- */

static void reply_init(struct kr_msg_reply *rep, const struct kr_msg_hdr *req, int status)
{
	memset(rep, 0, sizeof(*rep));
	kr_msg_init(&rep->hdr, KR_MSG_REPLY | req->type, sizeof(*rep), req->seq);
	rep->status = status;
}

static int attach_regions(struct kr_keeper *k, struct kr_keeper_conn *c,
			  struct kr_msg_attach_reply *rep, int *fds, unsigned int *nfds)
{
	const struct kr_pool_seg *s = k->seg;
	const struct kr_pool_job *job;
	struct kr_keeper_tenant *t;
	struct kr_keeper_heap *h;
	int rc;

	rep->dev_wake_page = kr_devx_has(k->ctx, KR_DEVX_BE_WAKE_PAGE);
	snprintf(rep->dev_name, sizeof(rep->dev_name), "%s", k->ctx->name);
	rep->keeper_gen = s->keeper_gen;
	if (c->observer) {
		/* status only: no descriptor, no shared memory; KR_MSG_STATUS copies */
		rep->seg_len = s->size;
		return 0;
	}
	job = kr_seg_job(s, c->job_plus1 - 1);
	t = &k->tenant[job->tenant];
	h = kr_keeper_job_heap(k, c->job_plus1 - 1);
	/* the tenant's UAR page, the only part of the device a job reaches; or
	 * nothing, fenced on a ConnectX: each DCI's page comes with its slot */
	rep->uar_fd_index = KR_ATTACH_NO_FD;
	if (kr_keeper_sends_uar(k)) {
		fds[(*nfds)++] = t->uar_fd;
		rep->uar_fd_index = 0;
		rep->uar_ref = t->uar_ref;
	}
	rep->seg_va = (uintptr_t)s;
	rep->seg_len = kr_keeper_pages_len(s->size);
	rc = kr_keeper_ro_regions(s, rep->seg_len, KR_REGION_SEG, rep, fds, nfds);
	if (rc)
		return rc;
	rep->tenant = job->tenant;
	rep->job = c->job_plus1 - 1;
	rep->job_gen = job->gen;
	rep->zone_va = (uintptr_t)t->zone;
	rep->zone_len = t->zone_len;
	rep->heap_va = (uintptr_t)h->addr;
	rep->heap_len = h->len;
	rep->heap_max = h->max;
	rep->heap_lkey = kr_keeper_heap_mr(h)->lkey;
	rep->heap_rkey = kr_keeper_heap_mr(h)->rkey;
	rc = kr_keeper_shm_regions(&t->zhead_shm, KR_REGION_ZONE, false, rep, fds, nfds);
	/* fenced: the rings only through /dev/krmin, one leased DCI at a time,
	 * each with its own UAR page: where its register and buffers are */
	rep->fenced = k->krmin_fd >= 0;
	if (rep->fenced) {
		rep->dci_block =
		    (uint32_t)(kr_keeper_zone_dci_qp_off(1) - kr_keeper_zone_dci_qp_off(0));
		rep->uar_ref.reg_off = k->dci_reg_off;
		rep->dci_bf_size = k->dci_bf_size;
		rep->rc_block = kr_keeper_cfg_rc_slots(&k->cfg)
				    ? (uint32_t)(kr_keeper_zone_rc_qp_off(&k->cfg, 1) -
						 kr_keeper_zone_rc_qp_off(&k->cfg, 0))
				    : 0;
	}
	if (!rc && !rep->fenced)
		rc = kr_keeper_shm_regions(&t->zone_shm, KR_REGION_ZONE, true, rep, fds, nfds);
	for (uint32_t i = 0; !rc && i < h->nchunks; i++)
		rc = kr_keeper_shm_regions(&h->chunk[i], KR_REGION_HEAP, true, rep, fds, nfds);
	return rc;
}

/* Bind the connection to a job slot of launch l's tenant. 0, -ENOSPC, -EPERM. */
static int attach_job(struct kr_keeper *k, struct kr_keeper_conn *c, const struct kr_launch *l)
{
	struct kr_keeper_heap *h;
	struct kr_pool_tenant *tr;
	struct kr_pool_job *job;
	uint32_t j;
	int t;

	t = kr_keeper_tenant_of_launch(k, c->uid, l);
	if (t < 0)
		return t;
	tr = kr_seg_tenant(k->seg, (uint32_t)t);
	if (kr_keeper_ring_get(k, tr->job_ring_off, &j))
		return -ENOSPC;
	h = kr_keeper_heap_take(k, &k->tenant[t], j % k->cfg.jobs);
	if (!h) {
		int e = errno;

		kr_keeper_ring_put(k, tr->job_ring_off, j);
		if (e != EAGAIN) /* EAGAIN: the worker is warming one; the library waits */
			KR_WARN_RATELIMITED("pool", "pid %d: no heap: %s", (int)c->pid,
					    strerror(e));
		return -e;
	}
	job = kr_seg_job(k->seg, j);
	job->heap_len = h->len;
	job->gen++;
	job->pid = c->pid;
	job->uid = c->uid;
	job->dci_leases = 0;
	job->vqp_leases = 0;
	job->mrs = 0;
	job->remote_errors = 0;
	job->throttles = 0;
	job->throttle_until_ns = 0;
	job->bucket_ns = 0; /* a full bucket at its first error */
	job->attach_ns = kr_now_ns();
	/* no answer of the slot's last job is read as one to this job's ask */
	memset(job->pair_ans, 0, sizeof(job->pair_ans));
	job->state = KR_JOB_ATTACHED;
	tr->jobs_attached++;
	c->job_plus1 = j + 1;
	kr_keeper_ready_reset(k, c);
	return 0;
}

static void release_job(struct kr_keeper *k, struct kr_keeper_conn *c, bool died)
{
	struct kr_pool_job *job = kr_seg_job(k->seg, c->job_plus1 - 1);
	uint32_t n;

	/* its ports first: no message lands once its MRs are gone */
	n = kr_keeper_port_reclaim(k, c->job_plus1 - 1);
	for (uint32_t i = 0; i < KR_POOL_MAX_JOB_MRS; i++)
		if (c->mrs[i].used && kr_keeper_mr_release(k, &c->mrs[i]))
			c->mrs[i].used = false; /* the key stays with the device: not reused */
	n += kr_keeper_lease_reclaim(k, c->job_plus1 - 1);
	if (n && !k->reclaim_t0)
		k->reclaim_t0 = kr_now_ns();
	job->state = KR_JOB_DIRTY;
	kr_seg_tenant(k->seg, job->tenant)->jobs_attached--;
	if (died) {
		k->seg->deaths++;
		KR_INFO("pool", "job %u (pid %d) died holding %u leases; reclaimed",
			c->job_plus1 - 1, (int)c->pid, n);
	} else {
		k->seg->detaches++;
	}
	c->job_plus1 = 0;
}

/*
 * The launch an attach names: its key's tag and DC key, or a key drawn here
 * for a lone job. -EINVAL: unknown flags, an observer or lone job with a
 * key, a job with none.
 */
static int attach_launch(const struct kr_msg_attach *req, struct kr_launch *l)
{
	static const uint8_t zero[KR_LAUNCH_KEY_BYTES];
	const uint32_t known = KR_ATTACH_F_OBSERVE | KR_ATTACH_F_LONE;
	bool keyless = !memcmp(req->launch_key, zero, sizeof(zero));

	_Static_assert(sizeof(req->launch_key) == KR_LAUNCH_KEY_BYTES, "launch key size");
	memset(l, 0, sizeof(*l));
	if ((req->flags & ~known) || req->rsvd || req->flags == known)
		return -EINVAL;
	if (req->flags & KR_ATTACH_F_OBSERVE)
		return keyless ? 0 : -EINVAL; /* an observer names no launch */
	if (!!(req->flags & KR_ATTACH_F_LONE) != keyless)
		return -EINVAL;
	return kr_launch_derive(keyless ? NULL : req->launch_key, l); /* lone: a key drawn */
}

static void serve_attach(struct kr_keeper *k, uint32_t slot, const struct kr_msg_attach *req)
{
	struct kr_keeper_conn *c = k->conn[slot];
	struct kr_msg_attach_reply *rep;
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 0;
	struct kr_launch l;
	int rc = 0;

	rep = calloc(1, sizeof(*rep));
	if (!rep) {
		kr_keeper_conn_close(k, slot, false);
		return;
	}
	if (c->job_plus1 || c->observer)
		rc = -EALREADY;
	else
		rc = attach_launch(req, &l);
	if (!rc && (req->flags & KR_ATTACH_F_OBSERVE))
		c->observer = true;
	else if (!rc)
		rc = attach_job(k, c, &l);
	if (!rc)
		rc = attach_regions(k, c, rep, fds, &nfds);
	if (rc) {
		if (c->job_plus1)
			release_job(k, c, false);
		c->observer = false;
		nfds = 0;
		memset(rep, 0, sizeof(*rep));
		k->seg->refused++;
	} else if (!c->observer) {
		k->seg->attaches++;
		rep->launch_tag = l.tag;
		rep->dc_key = l.dc_key;
		/* the first connect's DCI, on the job's ready ring: it calls nobody */
		kr_keeper_ready_offer(k, c, KR_POOL_READY_DCIS);
	}
	kr_msg_init(&rep->hdr, KR_MSG_REPLY | KR_MSG_ATTACH, sizeof(*rep), req->hdr.seq);
	rep->status = rc;
	rep->nfds = nfds;
	rc = kr_msg_send(c->fd, rep, sizeof(*rep), fds, nfds);
	if (rc && c->job_plus1)
		release_job(k, c, true);
	free(rep);
}

/*
 * Back more of the job's heap (its allocator ran past what is backed). One
 * registration on the loop, like kr_reg_mr. The reply carries the new pages
 * as one descriptor, or none when the heap already reaches len.
 */
static void serve_heap_grow(struct kr_keeper *k, uint32_t slot, const struct kr_msg_heap *req)
{
	struct kr_keeper_conn *c = k->conn[slot];
	struct kr_msg_heap_reply rep = {0};
	struct kr_keeper_heap *h = NULL;
	uint64_t old = 0;
	int fd = -1, rc;

	if (!c->job_plus1) {
		rc = -EPERM;
	} else if (req->rsvd || !req->len) {
		rc = -EINVAL;
	} else {
		struct kr_pool_job *job = kr_seg_job(k->seg, c->job_plus1 - 1);

		h = kr_keeper_job_heap(k, c->job_plus1 - 1);
		old = h->len;
		pthread_mutex_lock(&k->cmd_lock);
		rc = kr_keeper_heap_grow(k, &k->tenant[job->tenant], h, req->len);
		pthread_mutex_unlock(&k->cmd_lock);
		job->heap_len = h->len;
	}
	kr_msg_init(&rep.hdr, KR_MSG_REPLY | KR_MSG_HEAP_GROW, sizeof(rep), req->hdr.seq);
	rep.status = rc;
	if (!rc) {
		rep.heap_len = h->len;
		rep.lkey = kr_keeper_heap_mr(h)->lkey;
		rep.rkey = kr_keeper_heap_mr(h)->rkey;
		if (h->len > old) {
			const struct kr_shm *ch = &h->chunk[h->nchunks - 1];

			fd = ch->fd;
			rep.nfds = 1;
			rep.chunk_off = (uint64_t)(ch->addr - h->addr);
			rep.chunk_len = ch->len;
		}
	}
	if (kr_msg_send(c->fd, &rep, sizeof(rep), &fd, rep.nfds))
		kr_keeper_conn_close(k, slot, c->job_plus1 != 0);
}

/* Expected size of each request type; 0 = not a request. */
static size_t req_size(uint16_t type)
{
	switch (type) {
	case KR_MSG_ATTACH:
		return sizeof(struct kr_msg_attach);
	case KR_MSG_DETACH:
		return sizeof(struct kr_msg_hdr);
	case KR_MSG_LEASE:
	case KR_MSG_RELEASE:
		return sizeof(struct kr_msg_lease);
	case KR_MSG_REG_MR:
	case KR_MSG_DEREG_MR:
		return sizeof(struct kr_msg_mr);
	case KR_MSG_STATUS:
		return sizeof(struct kr_msg_status);
	case KR_MSG_CACHE:
		return sizeof(struct kr_msg_cache);
	case KR_MSG_BIND:
	case KR_MSG_UNBIND:
		return sizeof(struct kr_msg_bind);
	case KR_MSG_HEAP_GROW:
		return sizeof(struct kr_msg_heap);
	case KR_MSG_REG_MR_FD:
		return sizeof(struct kr_msg_mr_fd);
	case KR_MSG_PAIR:
		return sizeof(struct kr_msg_pair);
	default:
		return 0;
	}
}

/* An observer's chunk of the pool segment, copied (constant work per request). */
static void serve_status(struct kr_keeper *k, uint32_t slot, const struct kr_msg_status *req)
{
	struct kr_keeper_conn *c = k->conn[slot];
	struct kr_msg_status_reply *rep = malloc(sizeof(*rep));
	uint64_t size = k->seg->size;
	int rc = 0;

	if (!rep) {
		kr_keeper_conn_close(k, slot, false);
		return;
	}
	memset(rep, 0, offsetof(struct kr_msg_status_reply, data));
	if (!c->observer)
		rc = -EPERM; /* jobs map the segment; others have not asked to observe */
	else if (req->rsvd || !req->len || req->len > KR_STATUS_CHUNK || req->off >= size ||
		 req->len > size - req->off)
		rc = -EINVAL;
	kr_msg_init(&rep->hdr, KR_MSG_REPLY | KR_MSG_STATUS,
		    (uint32_t)(offsetof(struct kr_msg_status_reply, data) + (rc ? 0 : req->len)),
		    req->hdr.seq);
	rep->status = rc;
	rep->seg_len = size;
	if (!rc) {
		memcpy(rep->data, (const uint8_t *)k->seg + req->off, req->len);
		rep->len = req->len;
	}
	if (kr_msg_send(c->fd, rep, rep->hdr.len, NULL, 0))
		kr_keeper_conn_close(k, slot, c->job_plus1 != 0);
	free(rep);
}

void kr_keeper_conn_serve(struct kr_keeper *k, uint32_t slot)
{
	struct kr_keeper_conn *c = k->conn[slot];
	union {
		struct kr_msg_hdr hdr;
		struct kr_msg_attach attach;
		struct kr_msg_lease lease;
		struct kr_msg_mr mr;
		struct kr_msg_status status;
		struct kr_msg_cache cache;
		struct kr_msg_bind bind;
		struct kr_msg_heap heap;
		struct kr_msg_mr_fd mr_fd;
		struct kr_msg_pair pair;
		uint8_t raw[256];
	} req;
	struct kr_msg_reply rep;
	unsigned int nfds = 0;
	bool fatal = false, bad_fds = false;
	int fd = -1, rc;
	ssize_t n;

	/* a descriptor comes only with KR_MSG_REG_MR_FD, exactly one */
	n = kr_msg_recv(c->fd, &req, sizeof(req), &fd, 1, &nfds);
	if (n == -EAGAIN)
		return;
	if (n == -ENOTCONN || n == -ECONNRESET || n == -EPIPE) {
		kr_keeper_conn_close(k, slot, c->job_plus1 != 0);
		return;
	}
	if (n >= 0 && (req.hdr.type == KR_MSG_REG_MR_FD) != (nfds == 1))
		bad_fds = true; /* a descriptor missing, or one that has no business here */
	if (n < 0 || bad_fds || (size_t)n != req_size(req.hdr.type)) {
		/* a reply to what we could parse, then the connection goes */
		struct kr_msg_hdr h = {0};

		if (n >= (ssize_t)sizeof(h))
			h = req.hdr;
		if (bad_fds)
			n = -EMSGSIZE;
		KR_WARN_RATELIMITED("pool",
				    "pid %d: malformed request (%s, type %u, %zd bytes); closing",
				    (int)c->pid, n < 0 ? strerror((int)-n) : "bad size", h.type, n);
		if (nfds)
			close(fd);
		reply_init(&rep, &h, n == -EMSGSIZE ? -EMSGSIZE : -EPROTO);
		kr_msg_send(c->fd, &rep, sizeof(rep), NULL, 0);
		k->seg->refused += !c->job_plus1;
		kr_keeper_conn_close(k, slot, c->job_plus1 != 0);
		return;
	}

	c->last_ns = kr_now_ns();
	reply_init(&rep, &req.hdr, 0);
	switch (req.hdr.type) {
	case KR_MSG_ATTACH:
		serve_attach(k, slot, &req.attach);
		return;
	case KR_MSG_STATUS:
		serve_status(k, slot, &req.status);
		return;
	case KR_MSG_HEAP_GROW:
		serve_heap_grow(k, slot, &req.heap);
		return;
	case KR_MSG_DETACH:
		if (c->job_plus1)
			release_job(k, c, false);
		rc = 0;
		break;
	case KR_MSG_LEASE:
		k->seg->lease_calls++;
		if (req.lease.index || req.lease.gen || req.lease.flags)
			rc = -EINVAL;
		else if (c->job_plus1 && kr_keeper_guard_busy(k, c->job_plus1 - 1))
			rc = -EBUSY; /* too many remote errors lately (keeper_guard.c) */
		else if (req.lease.kind == KR_SLOT_DCI && kr_keeper_ready_hand(k, c, &rep))
			rc = 0; /* an offer of its ring it had not seen yet */
		else
			rc = kr_keeper_lease_grant(k, c, req.lease.kind, &rep);
		/* a job that had to ask finds its next DCI on the ring */
		if (!rc && req.lease.kind == KR_SLOT_DCI)
			kr_keeper_ready_fill(k, c);
		break;
	case KR_MSG_RELEASE:
		rc = req.lease.flags & ~KR_RELEASE_F_IDLE
			 ? -EINVAL
			 : kr_keeper_lease_release(k, c, req.lease.kind, req.lease.index,
						   req.lease.gen, req.lease.flags);
		/* a job that gives DCIs back takes them again (threads that come and
		 * go): its next thread's first connect finds one on the ring, not at
		 * the tick 10 ms later; nothing while its ring is unused */
		if (!rc && req.lease.kind == KR_SLOT_DCI)
			kr_keeper_ready_fill_used(k, c);
		break;
	case KR_MSG_REG_MR:
		rc = kr_keeper_reg_mr(k, c, &req.mr, &rep);
		break;
	case KR_MSG_REG_MR_FD:
		rc = kr_keeper_reg_mr_fd(k, c, &req.mr_fd, fd, &rep);
		close(fd); /* the keeper's mapping keeps the file */
		break;
	case KR_MSG_BIND:
		rc = kr_keeper_port_bind(k, c, &req.bind, &rep);
		break;
	case KR_MSG_PAIR:
		/* one-way: answered in the job slot (keeper_pair.c) */
		k->seg->lease_calls++;
		kr_keeper_pair_serve(k, c, &req.pair);
		return;
	case KR_MSG_UNBIND:
		rc = kr_keeper_port_unbind(k, c, &req.bind);
		break;
	case KR_MSG_CACHE:
		/* one-way: no reply; a bad report changes nothing */
		if (c->job_plus1 &&
		    kr_keeper_cache_report(k, kr_seg_job(k->seg, c->job_plus1 - 1)->tenant,
					   &req.cache) == -EINVAL)
			KR_WARN_RATELIMITED("pool", "pid %d: node cache report refused",
					    (int)c->pid);
		return;
	default: /* KR_MSG_DEREG_MR */
		rc = kr_keeper_dereg_mr(k, c, &req.mr);
		break;
	}
	rep.status = rc;
	if (kr_msg_send(c->fd, &rep, sizeof(rep), NULL, 0))
		fatal = true;
	if (fatal)
		kr_keeper_conn_close(k, slot, c->job_plus1 != 0);
}

void kr_keeper_conn_close(struct kr_keeper *k, uint32_t slot, bool died)
{
	struct kr_keeper_conn *c = k->conn[slot];

	if (!c)
		return;
	if (c->job_plus1)
		release_job(k, c, died);
	epoll_ctl(k->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	kr_keeper_conn_slot_put(k, slot, c->uid);
	free(c);
	k->conn[slot] = NULL;
	k->nconn--;
}

void kr_keeper_conn_expire(struct kr_keeper *k)
{
	uint64_t now = kr_now_ns();

	for (uint32_t i = 0; i < KR_POOL_MAX_CONNS; i++) {
		struct kr_keeper_conn *c = k->conn[i];

		if (c && c->observer &&
		    now - c->last_ns > (uint64_t)KR_POOL_HELLO_MS * 1000000u) {
			/* an observer reads status and goes: one that lingers holds a slot */
			kr_keeper_conn_close(k, i, false);
			continue;
		}
		if (c && !c->job_plus1 && !c->observer &&
		    now - c->accept_ns > (uint64_t)KR_POOL_HELLO_MS * 1000000u) {
			KR_WARN_RATELIMITED("pool", "pid %d connected but never attached; closed",
					    (int)c->pid);
			k->seg->refused++;
			kr_keeper_conn_close(k, i, false);
		}
	}
}
