/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * krmin private header: device state, slots, per-file state.
 *
 * Locking (the whole module has two kinds of lock):
 * - krmin_dev.lock (a mutex) guards every field of krmin_dev, every slot and
 *   the role/tenant/nr_owned fields of every krmin_file. Taken in process
 *   context only: ioctl, read (briefly), mmap, the fault handler, release.
 * - krmin_file.read_lock (a mutex) serialises read() on the keeper's file so
 *   that copy_to_user() never runs under krmin_dev.lock.
 * Order: mmap_lock -> krmin_dev.lock -> i_mmap_rwsem -> page table locks.
 * ->mmap and ->fault run under mmap_lock and take krmin_dev.lock;
 * revocation zaps with unmap_mapping_range() under krmin_dev.lock. Therefore
 * nothing may touch user memory (copy_{to,from}_user, pin_user_pages) while
 * holding krmin_dev.lock: pinning and copying happen before or after it.
 * Nothing here runs in atomic context; no spinlock is taken by this module.
 * The mmu notifier on the keeper's device mapping (krmin_io.c) runs under
 * the keeper's mmap_lock and takes krmin_dev.lock: the same order.
 */
#ifndef KRMIN_H
#define KRMIN_H

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>

#include <krcore/krmin_uapi.h>

#define KRMIN_PGOFF_SLOT_SHIFT (KRMIN_MMAP_SLOT_SHIFT - PAGE_SHIFT)
#define KRMIN_PGOFF_PAGE_MASK ((1UL << KRMIN_PGOFF_SLOT_SHIFT) - 1)

/*
 * FREE -> GRANTED (keeper: grant) -> OWNED (job: claim)
 * OWNED -> QUEUED (job: release or file released) -> FREE (keeper: read)
 * GRANTED, OWNED -> FREE (keeper: revoke); any -> gone (keeper: unreg/close)
 */
enum krmin_slot_state {
	KRMIN_SLOT_FREE,
	KRMIN_SLOT_GRANTED,
	KRMIN_SLOT_OWNED,
	KRMIN_SLOT_QUEUED,
};

struct krmin_file;

/* A registered slot. All fields under krmin_dev.lock; pages constant. */
struct krmin_slot {
	u32 id;
	u32 tenant;
	enum krmin_slot_state state;
	u32 reason;                /* QUEUED: enum krmin_revoke_reason */
	u64 queue_seq;             /* QUEUED: position stamp, see krmin_read */
	u64 token;                 /* GRANTED: the outstanding token */
	struct pid *grant_pid;     /* GRANTED: the only claimer, or NULL (any) */
	struct krmin_file *owner;  /* OWNED */
	struct list_head queue_node; /* QUEUED: on krmin_dev.queue */
	unsigned long ring_pages;  /* pages[0, ring_pages) is the ring */
	unsigned long nr_pages;    /* then the doorbell record page(s) */
	struct page **pages;       /* pinned with FOLL_LONGTERM */
	/* device pages after them (KRMIN_IOC_SLOT_ADD_IO; set once, when free) */
	unsigned long io_pages;
	unsigned long io_pfn;      /* physically contiguous from here */
	pgprot_t io_prot;          /* the keeper's mapping's caching */
	struct file *io_file;      /* the device file, held until the slot goes */
	struct krmin_io_watch *io_watch; /* the keeper's mapping of them, watched */
	bool io_gone;              /* that mapping went: its frames are no job's now */
};

enum krmin_role {
	KRMIN_ROLE_NONE,
	KRMIN_ROLE_KEEPER,
	KRMIN_ROLE_JOB,
};

/* One per open file of /dev/krmin (file->private_data). */
struct krmin_file {
	enum krmin_role role;      /* krmin_dev.lock; NONE until first use */
	bool tenant_bound;         /* krmin_dev.lock; job: set by first claim */
	u32 tenant;                /* krmin_dev.lock */
	unsigned int nr_owned;     /* krmin_dev.lock; job: OWNED slots */
	struct mm_struct *mm;      /* opener's mm (mmgrab), constant */
	struct mutex read_lock;    /* keeper: serialises read() */
};

struct krmin_dev {
	struct mutex lock;         /* guards all of the below, see top */
	struct krmin_file *keeper;
	struct list_head queue;    /* QUEUED slots, oldest first */
	unsigned int nr_queued;    /* written under lock, read by wait/poll */
	u64 queue_seq;
	unsigned long pinned_pages;
	unsigned long max_pinned_pages;
	wait_queue_head_t wq;      /* keeper read/poll: queue not empty */
	struct address_space *mapping; /* one for all files: revocation zaps */
	struct krmin_slot *slots[KRMIN_MAX_SLOTS];
};

extern struct krmin_dev krmin_dev;

/* krmin_slot.c: helpers the ioctls share */
int krmin_copy_req(void *req, size_t len, const void __user *uarg);
/* A page-aligned user range of 1 .. max bytes, below TASK_SIZE. */
bool krmin_range_ok(u64 addr, u64 len, u64 max);
bool krmin_is_keeper_locked(const struct krmin_file *kf);
struct krmin_slot *krmin_slot_get_locked(u32 id);

/* krmin_slot.c: ioctls and teardown; each returns 0 or a negative errno. */
/* krmin_dev.c: CAP_IPC_LOCK and the keeper_uid, or a member of keeper_gid. */
bool krmin_may_keep(void);
long krmin_keeper_reg(struct krmin_file *kf, void __user *uarg);
long krmin_slot_reg(struct krmin_file *kf, void __user *uarg);
long krmin_slot_unreg(struct krmin_file *kf, void __user *uarg);
long krmin_slot_grant(struct krmin_file *kf, void __user *uarg);
long krmin_slot_revoke(struct krmin_file *kf, void __user *uarg);
long krmin_slot_claim(struct krmin_file *kf, void __user *uarg);
long krmin_slot_release(struct krmin_file *kf, void __user *uarg);
/* krmin_io.c: a slot's device pages */
long krmin_slot_add_io(struct krmin_file *kf, void __user *uarg);
/* Stops watching the keeper's mapping (a slot being freed, lock not held). */
void krmin_io_unwatch(struct krmin_slot *slot);
void krmin_keeper_detach(struct krmin_file *kf);
void krmin_job_detach(struct krmin_file *kf);
ssize_t krmin_read_events(struct krmin_file *kf, char __user *buf,
			  size_t count, bool nonblock);

/* krmin_map.c */
int krmin_mmap(struct file *file, struct vm_area_struct *vma);
void krmin_slot_zap_locked(const struct krmin_slot *slot);

#endif /* KRMIN_H */
