/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * krmin: user/kernel interface of kmod-min, the module that enforces who owns
 * which virtual QP slot (../../kmod-min/README.md).
 *
 * Notes — who writes what, what is trusted:
 * - The keeper (krpoold) opens /dev/krmin once and sends KRMIN_IOC_KEEPER_REG
 *   (needs CAP_IPC_LOCK; one keeper per device, a second one gets -EBUSY).
 *   Only the keeper's file may register, grant, revoke and unregister slots
 *   and read revocation events.
 * - A slot is two page-aligned ranges of the keeper's own memory: the send
 *   ring and the doorbell record page(s). The module pins them
 *   (FOLL_LONGTERM) until the slot is unregistered or the keeper's file is
 *   released. The keeper keeps reading and writing its own mapping.
 * - A job opens /dev/krmin and claims a slot with the one-time token the
 *   keeper gave it (over the attach socket). The claim binds the slot to the
 *   job's open file; only that file, used from the process that opened it,
 *   may mmap the slot (MAP_SHARED, at krmin_mmap_offset(slot)).
 * - When the job's file is released (exit, crash, SIGKILL) or the job sends
 *   KRMIN_IOC_SLOT_RELEASE, its mappings are zapped and the slot is queued
 *   for the keeper: read() on the keeper's file returns struct
 *   krmin_revoke_event records and poll() reports POLLIN while any are queued.
 *   A queued slot cannot be granted again until the keeper has read it.
 * - When the keeper's file is released every slot is revoked, all job
 *   mappings are zapped (a later touch gets SIGBUS) and all pages unpinned.
 * - The kernel trusts nothing in these structures: every ioctl checks size,
 *   version, reserved fields (must be 0) and ranges.
 *
 * Every ioctl argument opens with `size` (= sizeof the struct) and `version`
 * (= KRMIN_UAPI_VERSION). Fields are __u32/__u64 with explicit padding, so
 * the layout is the same for 32- and 64-bit callers. Errors (negated errno
 * from the ioctl, i.e. -1 and errno in user space):
 *   EINVAL  bad size, reserved field, address, length or slot id
 *   EPROTO  version mismatch
 *   ENOTTY  unknown ioctl
 *   EPERM   a keeper-only call from a non-keeper file, or a job call from
 *           the keeper; keeper registration without CAP_IPC_LOCK
 *   EACCES  token not outstanding (unknown or already used), tenant
 *           mismatch, granted to another process, slot not owned by the
 *           caller, caller is not the
 *           process that opened the file (a forked child, or a file
 *           passed over a socket)
 *   EBUSY   a second keeper; granting a slot that is not free; adding
 *           device pages to a slot that has some or is not free
 *   ENOENT  keeper call on a slot id that is not registered
 *   ENOSPC  no free slot id, or the device's pin limit is reached
 *   ENOMEM, EFAULT as usual
 * read(): EAGAIN (O_NONBLOCK, nothing queued), EINVAL (count < one record),
 * EPERM (not the keeper), EFAULT (nothing is dequeued then).
 * mmap(): the file must be open O_RDWR and the mapping MAP_SHARED, not
 * PROT_EXEC (else EINVAL); EACCES if the slot is not the caller's.
 */
#ifndef KRCORE_KRMIN_UAPI_H
#define KRCORE_KRMIN_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KRMIN_UAPI_VERSION 1
#define KRMIN_DEV_NAME	   "krmin" /* /dev/krmin */

/* Slot ids are 0 .. KRMIN_MAX_SLOTS - 1. */
#define KRMIN_MAX_SLOTS 4096
/* Each of ring_len and dbr_len is at most this many bytes. */
#define KRMIN_SLOT_MAX_BYTES (16u << 20)
/* A slot's device pages (KRMIN_IOC_SLOT_ADD_IO) are at most this many bytes. */
#define KRMIN_SLOT_IO_MAX_BYTES (64u << 10)

/*
 * mmap: slot s is mapped at file offset s << KRMIN_MMAP_SLOT_SHIFT; its
 * ring pages come first, then its doorbell record pages, then its device
 * pages if it has any (KRMIN_IOC_SLOT_ADD_IO), which are mapped with the
 * caching the keeper's own mapping of them has. A mapping may cover any
 * page-aligned part of that range; anything beyond it fails with EINVAL.
 */
#define KRMIN_MMAP_SLOT_SHIFT 32

static inline __u64 krmin_mmap_offset(__u32 slot)
{
	return (__u64)slot << KRMIN_MMAP_SLOT_SHIFT;
}

/* KRMIN_IOC_KEEPER_REG: make the calling file the keeper. */
struct krmin_keeper_reg {
	__u32 size;	 /* in: sizeof(struct krmin_keeper_reg) */
	__u32 version;	 /* in: KRMIN_UAPI_VERSION */
	__u32 max_slots; /* out: KRMIN_MAX_SLOTS */
	__u32 page_size; /* out: the kernel's page size */
};

/* KRMIN_IOC_SLOT_REG: pin a slot's pages; returns its id. */
struct krmin_slot_reg {
	__u32 size;	 /* in */
	__u32 version;	 /* in */
	__u64 ring_addr; /* in: page-aligned address in the keeper */
	__u64 ring_len;	 /* in: page multiple, 1 .. KRMIN_SLOT_MAX_BYTES */
	__u64 dbr_addr;	 /* in: page-aligned; the page(s) hold only this slot's DBR */
	__u64 dbr_len;	 /* in: page multiple, 1 .. KRMIN_SLOT_MAX_BYTES */
	__u32 tenant;	 /* in: tenant id the slot belongs to */
	__u32 slot;	 /* out: slot id */
};

/* KRMIN_IOC_SLOT_GRANT: mint a one-time token for a free slot. */
struct krmin_slot_grant {
	__u32 size;	/* in */
	__u32 version;	/* in */
	__u32 slot;	/* in */
	__u32 pid;	/* in: 0 = any process of the slot's tenant may claim it; else
			 * only this one (its thread group id, in the keeper's pid
			 * namespace; EINVAL if there is none) */
	__u64 token;	/* out: random, never 0 */
};

/* KRMIN_IOC_SLOT_CLAIM (job): take the slot a token names. */
struct krmin_slot_claim {
	__u32 size;	   /* in */
	__u32 version;	   /* in */
	__u64 token;	   /* in: from KRMIN_IOC_SLOT_GRANT; consumed */
	__u32 slot;	   /* out */
	__u32 tenant;	   /* out */
	__u64 ring_len;	   /* out: bytes at mmap_offset */
	__u64 dbr_len;	   /* out: bytes at mmap_offset + ring_len */
	__u64 mmap_offset; /* out: krmin_mmap_offset(slot) */
};

/*
 * KRMIN_IOC_SLOT_ADD_IO: give a registered, free slot device pages (on a
 * ConnectX, the UAR page its QP rings doorbells through). io_addr is the
 * keeper's own mapping of them: an mmap of a device file (VM_IO |
 * VM_PFNMAP), physically contiguous. The module records the page frames and
 * the mapping's caching, and holds a reference to the device file until the
 * slot is unregistered, so the pages stay the device's while any job may
 * still map them. No pages are pinned. Once per slot (EBUSY after). The
 * keeper's mapping stays watched: when it goes (a device reset or unbind
 * zaps it, or munmap) the slot's device pages are no job's any more, and a
 * job's touch of them raises SIGBUS. EAGAIN: the mapping changed while the
 * module read it.
 */
struct krmin_slot_io {
	__u32 size;	/* in */
	__u32 version;	/* in */
	__u32 slot;	/* in */
	__u32 reserved; /* in: 0 */
	__u64 io_addr;	/* in: page-aligned address in the keeper */
	__u64 io_len;	/* in: page multiple, 1 .. KRMIN_SLOT_IO_MAX_BYTES */
};

/*
 * KRMIN_IOC_SLOT_UNREG, KRMIN_IOC_SLOT_REVOKE (keeper) and
 * KRMIN_IOC_SLOT_RELEASE (job) name one slot.
 */
struct krmin_slot_id {
	__u32 size;	/* in */
	__u32 version;	/* in */
	__u32 slot;	/* in */
	__u32 reserved; /* in: 0 */
};

/* read() on the keeper's file returns whole records of this type. */
enum krmin_revoke_reason {
	KRMIN_REVOKE_EXIT = 1,	  /* the owner's file was released */
	KRMIN_REVOKE_RELEASE = 2, /* the owner sent KRMIN_IOC_SLOT_RELEASE */
};

struct krmin_revoke_event {
	__u32 slot;
	__u32 reason; /* enum krmin_revoke_reason */
};

/* Layout pins: these sizes and offsets are the ABI. */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define KRMIN_PIN(type, field, off)                                                                \
	_Static_assert(__builtin_offsetof(type, field) == (off), #type "." #field " moved")
_Static_assert(sizeof(struct krmin_keeper_reg) == 16, "krmin_keeper_reg");
KRMIN_PIN(struct krmin_keeper_reg, page_size, 12);
_Static_assert(sizeof(struct krmin_slot_reg) == 48, "krmin_slot_reg");
KRMIN_PIN(struct krmin_slot_reg, ring_addr, 8);
KRMIN_PIN(struct krmin_slot_reg, dbr_addr, 24);
KRMIN_PIN(struct krmin_slot_reg, tenant, 40);
KRMIN_PIN(struct krmin_slot_reg, slot, 44);
_Static_assert(sizeof(struct krmin_slot_grant) == 24, "krmin_slot_grant");
KRMIN_PIN(struct krmin_slot_grant, token, 16);
_Static_assert(sizeof(struct krmin_slot_claim) == 48, "krmin_slot_claim");
KRMIN_PIN(struct krmin_slot_claim, token, 8);
KRMIN_PIN(struct krmin_slot_claim, slot, 16);
KRMIN_PIN(struct krmin_slot_claim, ring_len, 24);
KRMIN_PIN(struct krmin_slot_claim, mmap_offset, 40);
_Static_assert(sizeof(struct krmin_slot_id) == 16, "krmin_slot_id");
KRMIN_PIN(struct krmin_slot_id, slot, 8);
_Static_assert(sizeof(struct krmin_revoke_event) == 8, "krmin_revoke_event");
_Static_assert(sizeof(struct krmin_slot_io) == 32, "krmin_slot_io");
KRMIN_PIN(struct krmin_slot_io, io_addr, 16);
#undef KRMIN_PIN
#endif

#define KRMIN_IOC_MAGIC 0xD7
/* Keeper: register; returns 0. */
#define KRMIN_IOC_KEEPER_REG _IOWR(KRMIN_IOC_MAGIC, 1, struct krmin_keeper_reg)
/* Keeper: pin and register a slot; returns 0. */
#define KRMIN_IOC_SLOT_REG _IOWR(KRMIN_IOC_MAGIC, 2, struct krmin_slot_reg)
/* Keeper: revoke if held, drop any queued event, unpin, free the id. */
#define KRMIN_IOC_SLOT_UNREG _IOW(KRMIN_IOC_MAGIC, 3, struct krmin_slot_id)
/* Keeper: mint a token for a free slot (not granted, owned or queued). */
#define KRMIN_IOC_SLOT_GRANT _IOWR(KRMIN_IOC_MAGIC, 4, struct krmin_slot_grant)
/* Keeper: cancel a grant or take a slot back now; no event is queued. */
#define KRMIN_IOC_SLOT_REVOKE _IOW(KRMIN_IOC_MAGIC, 5, struct krmin_slot_id)
/* Job: claim the slot a token names; binds the file to the slot's tenant. */
#define KRMIN_IOC_SLOT_CLAIM _IOWR(KRMIN_IOC_MAGIC, 6, struct krmin_slot_claim)
/* Job: give an owned slot back; queues a KRMIN_REVOKE_RELEASE event. */
#define KRMIN_IOC_SLOT_RELEASE _IOW(KRMIN_IOC_MAGIC, 7, struct krmin_slot_id)
/* Keeper: add device pages (a UAR) to a free slot. */
#define KRMIN_IOC_SLOT_ADD_IO _IOW(KRMIN_IOC_MAGIC, 8, struct krmin_slot_io)

#endif /* KRCORE_KRMIN_UAPI_H */
