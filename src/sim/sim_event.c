/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion events of a simulated host, as the kernel delivers a ConnectX's
 * (devx_event.c says what they are for): a CQ subscribed to an eventfd and
 * armed through the CQ doorbell raises one event, a write to that eventfd,
 * at its next CQE, or at once when CQEs past the arm's consumer index are
 * there already; then it is disarmed until armed again.
 *
 * What it refuses, as the kernel and device do: an fd that is not an
 * eventfd (mlx5_ib: eventfd_ctx_fdget), an object that is gone, an arm
 * rung through a UAR page other than the CQ's (the device ignores it: a
 * process cannot arm a CQ it was given no page of). Stricter than the
 * kernel, said plainly: events other than completions (number 0) on a CQ
 * are refused (the sim raises none) and a CQ takes one subscription.
 *
 * Subscriptions are the opener's (the engine raises events in its process):
 * the fds live in dev->ev, not in the shared segment. The arm state is in
 * the segment under sh->lock, which the engine holds while it writes CQEs,
 * so an arm never misses a CQE written meanwhile.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "sim/sim.h"

struct sim_event_tab {
	int fd[SIM_MAX_CQ];   /* dup of the subscribed eventfd, -1: none */
	void *ch[SIM_MAX_CQ]; /* the channel it came through */
};

/* The channel: only its identity matters (its subscriptions end with it). */
struct sim_event_ch {
	struct sim_dev *dev;
};

/* sh->lock held: dev's table, made on first use. */
static struct sim_event_tab *event_tab(struct sim_dev *dev)
{
	if (!dev->ev) {
		dev->ev = malloc(sizeof(*dev->ev));
		if (!dev->ev)
			return NULL;
		for (uint32_t i = 0; i < SIM_MAX_CQ; i++) {
			dev->ev->fd[i] = -1;
			dev->ev->ch[i] = NULL;
		}
	}
	return dev->ev;
}

static void event_drop(struct sim_event_tab *t, uint32_t i)
{
	if (t->fd[i] >= 0)
		close(t->fd[i]);
	t->fd[i] = -1;
	t->ch[i] = NULL;
}

/* Is fd an eventfd? (what the kernel's eventfd_ctx_fdget insists on) */
static bool is_eventfd(int fd)
{
	char path[32], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventfd]") == 0;
}

/* sh->lock held: raise CQ idx's event and disarm it. */
static void event_raise(struct sim_dev *dev, uint32_t idx)
{
	uint64_t one = 1;

	dev->sh->cq[idx].armed = 0;
	if (dev->ev && dev->ev->fd[idx] >= 0 && write(dev->ev->fd[idx], &one, sizeof(one)) < 0)
		KR_ERR_RATELIMITED("sim", "cq %u: event not raised: %s", idx + 1, strerror(errno));
}

/* sim_event_ch_open() - see sim.h. */
int sim_event_ch_open(struct kr_devx_ctx *ctx, void **priv)
{
	struct sim_dev *dev = sim_dev_of(ctx);
	struct sim_event_ch *ch;

	if (!dev->eng)
		return -EOPNOTSUPP; /* not the opener: no engine raises events here */
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->dev = dev;
	sim_lock(dev);
	if (!event_tab(dev)) {
		sim_unlock(dev);
		free(ch);
		return -ENOMEM;
	}
	sim_unlock(dev);
	*priv = ch;
	return 0;
}

/* sim_event_ch_close() - see sim.h. */
void sim_event_ch_close(struct kr_devx_ctx *ctx, void *priv)
{
	struct sim_dev *dev = sim_dev_of(ctx);

	sim_lock(dev);
	for (uint32_t i = 0; dev->ev && i < SIM_MAX_CQ; i++)
		if (dev->ev->ch[i] == priv)
			event_drop(dev->ev, i);
	sim_unlock(dev);
	free(priv);
}

/* sim_event_subscribe_fd() - see sim.h. */
int sim_event_subscribe_fd(struct kr_devx_ctx *ctx, void *priv, struct kr_devx_obj *obj,
			   uint16_t event_num, int fd)
{
	struct sim_dev *dev = sim_dev_of(ctx);
	uint32_t idx;
	int dup_fd, rc = 0;

	if (!obj || obj->ctx != ctx || obj->create_op != KR_CMD_OP_CREATE_CQ || event_num != 0)
		return -EINVAL;
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	if (!is_eventfd(fd))
		return -EINVAL;
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup_fd < 0)
		return -errno;
	sim_lock(dev);
	if (!sim_num_to_idx(obj->id, SIM_MAX_CQ, &idx) || !dev->sh->cq[idx].in_use)
		rc = -EINVAL;
	else if (!dev->ev)
		rc = -EINVAL; /* not a channel of this host */
	else if (dev->ev->fd[idx] >= 0)
		rc = -EEXIST;
	if (!rc) {
		dev->ev->fd[idx] = dup_fd;
		dev->ev->ch[idx] = priv;
	}
	sim_unlock(dev);
	if (rc)
		close(dup_fd);
	return rc;
}

/* sim_cq_doorbell() - see sim.h. */
void sim_cq_doorbell(struct kr_devx_uar *uar, uint64_t val)
{
	struct sim_dev *dev = sim_dev_of(uar->ctx);
	uint32_t db[2], word, idx;
	struct sim_cq *cq;

	memcpy(db, &val, sizeof(db));
	word = be32toh(db[0]);
	sim_lock(dev);
	if (!sim_num_to_idx(be32toh(db[1]) & 0xffffffu, SIM_MAX_CQ, &idx) ||
	    !dev->sh->cq[idx].in_use || dev->sh->cq[idx].uar_page != uar->page_id) {
		sim_unlock(dev);
		KR_DBG("sim", "CQ doorbell for CQ %u through UAR page %u ignored",
		       be32toh(db[1]) & 0xffffffu, uar->page_id);
		return;
	}
	cq = &dev->sh->cq[idx];
	cq->arm_word = word;
	cq->armed = 1;
	if ((cq->pi - word) & 0xffffffu) /* CQEs past the consumer index: at once */
		event_raise(dev, idx);
	sim_unlock(dev);
}

/* sim_event_cqe() - see sim.h. */
void sim_event_cqe(struct sim_dev *dev, uint32_t idx)
{
	if (dev->sh->cq[idx].armed)
		event_raise(dev, idx);
}

/* sim_event_cq_gone() - see sim.h. */
void sim_event_cq_gone(struct sim_dev *dev, uint32_t idx)
{
	dev->sh->cq[idx].armed = 0;
	if (dev->ev)
		event_drop(dev->ev, idx);
}

/* sim_event_release() - see sim.h. */
void sim_event_release(struct sim_dev *dev)
{
	for (uint32_t i = 0; dev->ev && i < SIM_MAX_CQ; i++)
		event_drop(dev->ev, i);
	free(dev->ev);
	dev->ev = NULL;
}
