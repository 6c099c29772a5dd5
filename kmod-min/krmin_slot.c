// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * krmin slots: registration and pinning (keeper), grant tokens (keeper),
 * claim and release (job), revocation and the keeper's event queue.
 * Locking rules are in krmin.h.
 */
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "krmin.h"

/* Events copied out per read() call; bounds the stack buffer. */
#define KRMIN_READ_BATCH 32

/* Every ioctl struct opens with size and version; rejects anything else. */
/*
 * Every ioctl's argument opens with its size and the UAPI version: copy it
 * in and check both. 0, -EFAULT, -EINVAL (size), -EPROTO (version).
 */
int krmin_copy_req(void *req, size_t len, const void __user *uarg)
{
	const u32 *hdr = req;

	if (copy_from_user(req, uarg, len))
		return -EFAULT;
	if (hdr[0] != len)
		return -EINVAL;
	if (hdr[1] != KRMIN_UAPI_VERSION)
		return -EPROTO;
	return 0;
}

bool krmin_is_keeper_locked(const struct krmin_file *kf)
{
	return kf->role == KRMIN_ROLE_KEEPER && krmin_dev.keeper == kf;
}

struct krmin_slot *krmin_slot_get_locked(u32 id)
{
	if (id >= KRMIN_MAX_SLOTS)
		return NULL;
	return krmin_dev.slots[id];
}

/* Ends a grant or an ownership; zaps the owner's mappings. */
static void krmin_slot_disown_locked(struct krmin_slot *slot)
{
	if (slot->state == KRMIN_SLOT_OWNED) {
		slot->owner->nr_owned--;
		slot->owner = NULL;
		krmin_slot_zap_locked(slot);
	}
	if (slot->state == KRMIN_SLOT_GRANTED || slot->state == KRMIN_SLOT_OWNED)
		slot->state = KRMIN_SLOT_FREE;
	slot->token = 0;
	put_pid(slot->grant_pid); /* NULL-safe */
	slot->grant_pid = NULL;
}

/* Takes an OWNED slot from its job and queues it for the keeper. */
static void krmin_slot_queue_locked(struct krmin_slot *slot, u32 reason)
{
	krmin_slot_disown_locked(slot);
	slot->state = KRMIN_SLOT_QUEUED;
	slot->reason = reason;
	slot->queue_seq = ++krmin_dev.queue_seq;
	list_add_tail(&slot->queue_node, &krmin_dev.queue);
	WRITE_ONCE(krmin_dev.nr_queued, krmin_dev.nr_queued + 1);
	wake_up_interruptible(&krmin_dev.wq);
}

static void krmin_slot_dequeue_locked(struct krmin_slot *slot)
{
	list_del_init(&slot->queue_node);
	WRITE_ONCE(krmin_dev.nr_queued, krmin_dev.nr_queued - 1);
	slot->state = KRMIN_SLOT_FREE;
}

/* Disowns, dequeues and removes a slot from the table; caller unpins it. */
static void krmin_slot_detach_locked(struct krmin_slot *slot)
{
	krmin_slot_disown_locked(slot);
	if (slot->state == KRMIN_SLOT_QUEUED)
		krmin_slot_dequeue_locked(slot);
	krmin_dev.slots[slot->id] = NULL;
	krmin_dev.pinned_pages -= slot->nr_pages;
}

/* Unpins and frees a slot no longer reachable from krmin_dev. */
static void krmin_slot_free(struct krmin_slot *slot)
{
	/* Jobs wrote through PFN mappings the kernel does not track: dirty. */
	unpin_user_pages_dirty_lock(slot->pages, slot->nr_pages, true);
	kvfree(slot->pages);
	krmin_io_unwatch(slot);
	if (slot->io_file) /* no mapping of its device pages is left */
		fput(slot->io_file);
	kfree(slot);
}

long krmin_keeper_reg(struct krmin_file *kf, void __user *uarg)
{
	struct krmin_keeper_reg req;
	long ret;

	ret = krmin_copy_req(&req, sizeof(req), uarg);
	if (ret)
		return ret;
	if (!krmin_may_keep())
		return -EPERM;
	/* The answer is constant: copy it out first, nothing to undo. */
	req.max_slots = KRMIN_MAX_SLOTS;
	req.page_size = PAGE_SIZE;
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;

	mutex_lock(&krmin_dev.lock);
	if (kf->role == KRMIN_ROLE_JOB) {
		ret = -EPERM;
	} else if (krmin_dev.keeper) {
		ret = -EBUSY;
	} else {
		kf->role = KRMIN_ROLE_KEEPER;
		krmin_dev.keeper = kf;
	}
	mutex_unlock(&krmin_dev.lock);
	return ret;
}

/* Pins nr pages of the caller's memory at addr into pages; all or nothing. */
static int krmin_pin(u64 addr, unsigned long nr, struct page **pages)
{
	unsigned long done = 0;
	int ret;

	while (done < nr) {
		ret = pin_user_pages_fast(addr + (done << PAGE_SHIFT),
					  nr - done, FOLL_WRITE | FOLL_LONGTERM,
					  pages + done);
		if (ret <= 0) {
			unpin_user_pages(pages, done);
			return ret ? ret : -EFAULT;
		}
		done += ret;
	}
	return 0;
}

/* krmin_range_ok() - see krmin.h. */
bool krmin_range_ok(u64 addr, u64 len, u64 max)
{
	if (!len || len > max)
		return false;
	if (!PAGE_ALIGNED(addr) || !PAGE_ALIGNED(len))
		return false;
	return addr + len > addr && addr + len <= TASK_SIZE;
}

/* Undoes a registration whose answer could not be copied out. */
static void krmin_slot_unreg_id(struct krmin_file *kf, u32 id)
{
	struct krmin_slot *slot = NULL;

	mutex_lock(&krmin_dev.lock);
	if (krmin_is_keeper_locked(kf)) {
		slot = krmin_slot_get_locked(id);
		if (slot)
			krmin_slot_detach_locked(slot);
	}
	mutex_unlock(&krmin_dev.lock);
	if (slot)
		krmin_slot_free(slot);
}

long krmin_slot_reg(struct krmin_file *kf, void __user *uarg)
{
	struct krmin_slot_reg req;
	struct krmin_slot *slot;
	unsigned long ring_pages, nr_pages;
	long ret;
	u32 id;

	ret = krmin_copy_req(&req, sizeof(req), uarg);
	if (ret)
		return ret;
	if (!krmin_range_ok(req.ring_addr, req.ring_len, KRMIN_SLOT_MAX_BYTES) ||
	    !krmin_range_ok(req.dbr_addr, req.dbr_len, KRMIN_SLOT_MAX_BYTES))
		return -EINVAL;
	/* Cheap early answer; checked again under the lock. */
	if (READ_ONCE(kf->role) != KRMIN_ROLE_KEEPER)
		return -EPERM;

	ring_pages = req.ring_len >> PAGE_SHIFT;
	nr_pages = ring_pages + (req.dbr_len >> PAGE_SHIFT);
	slot = kzalloc(sizeof(*slot), GFP_KERNEL);
	if (!slot)
		return -ENOMEM;
	slot->pages = kvcalloc(nr_pages, sizeof(*slot->pages), GFP_KERNEL);
	if (!slot->pages) {
		ret = -ENOMEM;
		goto err_free_slot;
	}
	/* Pinning takes mmap_lock: never under krmin_dev.lock. */
	ret = krmin_pin(req.ring_addr, ring_pages, slot->pages);
	if (ret)
		goto err_free_pages;
	ret = krmin_pin(req.dbr_addr, nr_pages - ring_pages,
			slot->pages + ring_pages);
	if (ret)
		goto err_unpin_ring;
	slot->tenant = req.tenant;
	slot->state = KRMIN_SLOT_FREE;
	slot->ring_pages = ring_pages;
	slot->nr_pages = nr_pages;
	INIT_LIST_HEAD(&slot->queue_node);

	mutex_lock(&krmin_dev.lock);
	if (!krmin_is_keeper_locked(kf)) {
		ret = -EPERM;
		goto err_unlock;
	}
	if (krmin_dev.pinned_pages + nr_pages > krmin_dev.max_pinned_pages) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	for (id = 0; id < KRMIN_MAX_SLOTS && krmin_dev.slots[id]; id++)
		;
	if (id == KRMIN_MAX_SLOTS) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	slot->id = id;
	krmin_dev.slots[id] = slot;
	krmin_dev.pinned_pages += nr_pages;
	mutex_unlock(&krmin_dev.lock);

	req.slot = id;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		krmin_slot_unreg_id(kf, id);
		return -EFAULT;
	}
	return 0;

err_unlock:
	mutex_unlock(&krmin_dev.lock);
	unpin_user_pages(slot->pages + ring_pages, nr_pages - ring_pages);
err_unpin_ring:
	unpin_user_pages(slot->pages, ring_pages);
err_free_pages:
	kvfree(slot->pages);
err_free_slot:
	kfree(slot);
	return ret;
}

/* Reads a struct krmin_slot_id and checks it. */
static int krmin_get_slot_id(void __user *uarg, u32 *id)
{
	struct krmin_slot_id req;
	int ret;

	ret = krmin_copy_req(&req, sizeof(req), uarg);
	if (ret)
		return ret;
	if (req.reserved || req.slot >= KRMIN_MAX_SLOTS)
		return -EINVAL;
	*id = req.slot;
	return 0;
}

long krmin_slot_unreg(struct krmin_file *kf, void __user *uarg)
{
	struct krmin_slot *slot = NULL;
	long ret;
	u32 id;

	ret = krmin_get_slot_id(uarg, &id);
	if (ret)
		return ret;
	mutex_lock(&krmin_dev.lock);
	if (!krmin_is_keeper_locked(kf)) {
		ret = -EPERM;
	} else {
		slot = krmin_slot_get_locked(id);
		if (slot)
			krmin_slot_detach_locked(slot);
		else
			ret = -ENOENT;
	}
	mutex_unlock(&krmin_dev.lock);
	if (slot)
		krmin_slot_free(slot);
	return ret;
}

/* A random token, never 0, unlike any other outstanding token. */
static u64 krmin_token_new_locked(void)
{
	u64 token;
	u32 id;

again:
	token = get_random_u64();
	if (!token)
		goto again;
	for (id = 0; id < KRMIN_MAX_SLOTS; id++) {
		if (krmin_dev.slots[id] && krmin_dev.slots[id]->token == token)
			goto again;
	}
	return token;
}

long krmin_slot_grant(struct krmin_file *kf, void __user *uarg)
{
	struct krmin_slot_grant req;
	struct krmin_slot *slot;
	struct pid *pid = NULL;
	long ret;
	u64 token = 0;

	ret = krmin_copy_req(&req, sizeof(req), uarg);
	if (ret)
		return ret;
	if (req.slot >= KRMIN_MAX_SLOTS || req.pid > INT_MAX)
		return -EINVAL;
	/* the one process that may claim it, named in the keeper's pid namespace */
	if (req.pid) {
		pid = find_get_pid((pid_t)req.pid);
		if (!pid)
			return -EINVAL;
	}

	mutex_lock(&krmin_dev.lock);
	slot = krmin_slot_get_locked(req.slot);
	if (!krmin_is_keeper_locked(kf)) {
		ret = -EPERM;
	} else if (!slot) {
		ret = -ENOENT;
	} else if (slot->state != KRMIN_SLOT_FREE) {
		ret = -EBUSY;
	} else {
		token = krmin_token_new_locked();
		slot->token = token;
		slot->grant_pid = pid;
		pid = NULL;
		slot->state = KRMIN_SLOT_GRANTED;
	}
	mutex_unlock(&krmin_dev.lock);
	put_pid(pid);
	if (ret)
		return ret;

	req.token = token;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		/* Nobody saw the token: cancel the grant if it still stands. */
		mutex_lock(&krmin_dev.lock);
		slot = krmin_slot_get_locked(req.slot);
		if (slot && slot->state == KRMIN_SLOT_GRANTED &&
		    slot->token == token)
			krmin_slot_disown_locked(slot);
		mutex_unlock(&krmin_dev.lock);
		return -EFAULT;
	}
	return 0;
}

long krmin_slot_revoke(struct krmin_file *kf, void __user *uarg)
{
	struct krmin_slot *slot;
	long ret;
	u32 id;

	ret = krmin_get_slot_id(uarg, &id);
	if (ret)
		return ret;
	mutex_lock(&krmin_dev.lock);
	slot = krmin_slot_get_locked(id);
	if (!krmin_is_keeper_locked(kf))
		ret = -EPERM;
	else if (!slot)
		ret = -ENOENT;
	else
		krmin_slot_disown_locked(slot); /* a QUEUED slot stays queued */
	mutex_unlock(&krmin_dev.lock);
	return ret;
}

/* Finds the GRANTED slot holding token; NULL if none. */
static struct krmin_slot *krmin_slot_by_token_locked(u64 token)
{
	struct krmin_slot *slot;
	u32 id;

	for (id = 0; id < KRMIN_MAX_SLOTS; id++) {
		slot = krmin_dev.slots[id];
		if (slot && slot->state == KRMIN_SLOT_GRANTED &&
		    slot->token == token)
			return slot;
	}
	return NULL;
}

long krmin_slot_claim(struct krmin_file *kf, void __user *uarg)
{
	struct krmin_slot_claim req;
	struct krmin_slot *slot;
	struct pid *pid = NULL;
	long ret = 0;
	u64 token;

	ret = krmin_copy_req(&req, sizeof(req), uarg);
	if (ret)
		return ret;
	token = req.token;
	if (!token)
		return -EACCES;

	mutex_lock(&krmin_dev.lock);
	slot = krmin_slot_by_token_locked(token);
	if (kf->role == KRMIN_ROLE_KEEPER) {
		ret = -EPERM;
	} else if (!slot) {
		ret = -EACCES;
	} else if (kf->tenant_bound && kf->tenant != slot->tenant) {
		ret = -EACCES; /* the token stays valid for its rightful job */
	} else if (slot->grant_pid && slot->grant_pid != task_tgid(current)) {
		ret = -EACCES; /* granted to another process: likewise */
	} else {
		pid = slot->grant_pid; /* dropped once the job knows its slot */
		slot->grant_pid = NULL;
		kf->role = KRMIN_ROLE_JOB;
		kf->tenant_bound = true;
		kf->tenant = slot->tenant;
		kf->nr_owned++;
		slot->token = 0;
		slot->owner = kf;
		slot->state = KRMIN_SLOT_OWNED;
		req.slot = slot->id;
		req.tenant = slot->tenant;
		req.ring_len = (u64)slot->ring_pages << PAGE_SHIFT;
		req.dbr_len = (u64)(slot->nr_pages - slot->ring_pages)
			      << PAGE_SHIFT;
		req.mmap_offset = krmin_mmap_offset(slot->id);
	}
	mutex_unlock(&krmin_dev.lock);
	if (ret)
		return ret;

	if (copy_to_user(uarg, &req, sizeof(req))) {
		/* The job never learnt its slot: give the token back. */
		mutex_lock(&krmin_dev.lock);
		slot = krmin_slot_get_locked(req.slot);
		if (slot && slot->state == KRMIN_SLOT_OWNED &&
		    slot->owner == kf) {
			krmin_slot_disown_locked(slot);
			slot->token = token;
			slot->grant_pid = pid;
			pid = NULL;
			slot->state = KRMIN_SLOT_GRANTED;
		}
		mutex_unlock(&krmin_dev.lock);
		put_pid(pid);
		return -EFAULT;
	}
	put_pid(pid);
	return 0;
}

long krmin_slot_release(struct krmin_file *kf, void __user *uarg)
{
	struct krmin_slot *slot;
	long ret;
	u32 id;

	ret = krmin_get_slot_id(uarg, &id);
	if (ret)
		return ret;
	mutex_lock(&krmin_dev.lock);
	slot = krmin_slot_get_locked(id);
	if (kf->role == KRMIN_ROLE_KEEPER)
		ret = -EPERM;
	else if (!slot || slot->state != KRMIN_SLOT_OWNED || slot->owner != kf)
		ret = -EACCES;
	else
		krmin_slot_queue_locked(slot, KRMIN_REVOKE_RELEASE);
	mutex_unlock(&krmin_dev.lock);
	return ret;
}

/* Keeper's file released: revoke and unpin everything. */
void krmin_keeper_detach(struct krmin_file *kf)
{
	struct krmin_slot *gone[16];
	unsigned int n, i;
	u32 id;

	do {
		n = 0;
		mutex_lock(&krmin_dev.lock);
		for (id = 0; id < KRMIN_MAX_SLOTS && n < ARRAY_SIZE(gone); id++) {
			if (!krmin_dev.slots[id])
				continue;
			gone[n] = krmin_dev.slots[id];
			krmin_slot_detach_locked(gone[n]);
			n++;
		}
		if (!n && krmin_dev.keeper == kf)
			krmin_dev.keeper = NULL;
		mutex_unlock(&krmin_dev.lock);
		/* Zapped and unreachable: unpin outside the lock. */
		for (i = 0; i < n; i++)
			krmin_slot_free(gone[i]);
	} while (n);
}

/* Job's file released: every slot it owns goes to the keeper's queue. */
void krmin_job_detach(struct krmin_file *kf)
{
	struct krmin_slot *slot;
	u32 id;

	mutex_lock(&krmin_dev.lock);
	/* Every slot, whatever nr_owned says: none may keep a pointer to kf. */
	for (id = 0; id < KRMIN_MAX_SLOTS; id++) {
		slot = krmin_dev.slots[id];
		if (slot && slot->state == KRMIN_SLOT_OWNED && slot->owner == kf)
			krmin_slot_queue_locked(slot, KRMIN_REVOKE_EXIT);
	}
	WARN_ON_ONCE(kf->nr_owned);
	mutex_unlock(&krmin_dev.lock);
}

/*
 * read() on the keeper's file: peek up to a batch of queued slots under the
 * lock, copy them out without it, then dequeue exactly the ones copied (their
 * queue_seq still matches). A failed copy leaves the queue untouched.
 */
ssize_t krmin_read_events(struct krmin_file *kf, char __user *buf,
			  size_t count, bool nonblock)
{
	struct krmin_revoke_event ev[KRMIN_READ_BATCH];
	u64 seq[KRMIN_READ_BATCH];
	struct krmin_slot *slot;
	unsigned int n, i, max;
	ssize_t ret;

	if (count < sizeof(ev[0]))
		return -EINVAL;
	max = min_t(size_t, count / sizeof(ev[0]), KRMIN_READ_BATCH);
	if (mutex_lock_interruptible(&kf->read_lock))
		return -ERESTARTSYS;
	for (;;) {
		n = 0;
		mutex_lock(&krmin_dev.lock);
		if (!krmin_is_keeper_locked(kf)) {
			mutex_unlock(&krmin_dev.lock);
			ret = -EPERM;
			goto out;
		}
		list_for_each_entry(slot, &krmin_dev.queue, queue_node) {
			if (n == max)
				break;
			ev[n].slot = slot->id;
			ev[n].reason = slot->reason;
			seq[n] = slot->queue_seq;
			n++;
		}
		mutex_unlock(&krmin_dev.lock);
		if (n)
			break;
		if (nonblock) {
			ret = -EAGAIN;
			goto out;
		}
		if (wait_event_interruptible(krmin_dev.wq,
					     READ_ONCE(krmin_dev.nr_queued))) {
			ret = -ERESTARTSYS;
			goto out;
		}
	}
	if (copy_to_user(buf, ev, n * sizeof(ev[0]))) {
		ret = -EFAULT;
		goto out;
	}
	mutex_lock(&krmin_dev.lock);
	for (i = 0; i < n; i++) {
		slot = krmin_slot_get_locked(ev[i].slot);
		if (slot && slot->state == KRMIN_SLOT_QUEUED &&
		    slot->queue_seq == seq[i])
			krmin_slot_dequeue_locked(slot);
	}
	mutex_unlock(&krmin_dev.lock);
	ret = n * sizeof(ev[0]);
out:
	mutex_unlock(&kf->read_lock);
	return ret;
}
