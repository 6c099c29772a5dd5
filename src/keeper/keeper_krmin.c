/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kmod-min, keeper side: when /dev/krmin exists the keeper becomes its keeper
 * and jobs no longer map their tenant's DCI rings. Each DCI is one kmod-min
 * slot: its QP buffer (SQ ring and doorbell record), its CQ buffer (CQEs and
 * doorbell record; both page aligned in the zone, back to back) and the UAR
 * page the DCI was created on, its own (keeper_dci.c), registered once when
 * the DCI is built. A lease grants the slot and hands the job a one-time
 * token only its process can claim; the job claims it and maps exactly that
 * slot: the rings at the zone address the keeper uses, the UAR page beside
 * (job_krmin.c). So a job rings only the DCIs it holds, and on a
 * ConnectX it needs no descriptor of the device at all.
 * Release and reclaim revoke the slot before the DCI is reset, so its old
 * holder's mapping is gone (SIGBUS) before anyone else gets it.
 *
 * A job that exits, crashes or is killed with slots it claimed: the module
 * takes them away as its file goes and queues an event; the loop reads it
 * and takes the lease back as a reclaim. A grant that was never claimed has
 * no owner in the module: the socket's close reclaims it (revoke cancels the
 * grant), as in trusted mode.
 *
 * A receive endpoint (keeper_port.c) is a slot too: its CQ pages then its SRQ
 * pages, memory both, no UAR page (its holder rings nothing); granted at
 * bind, revoked at unbind or reclaim, before its DCT goes.
 *
 * Nothing here runs on the data path: grants and revocations are ioctls on
 * the lease path (one each, no firmware command), pinning happens at build.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "keeper/keeper.h"

/* Events read per read() call on the loop. */
#define KRMIN_EVENT_BATCH 32u

/*
 * kr_keeper_krmin_open() - become /dev/krmin's keeper, or stay trusted.
 * One keeper per machine holds the module: a second one (sim clusters on
 * one host), or one the module does not let keep, runs trusted and says
 * why, unless --require-kmod. Returns 0 (k->krmin_fd set, or -1), or -errno
 * with --require-kmod (missing, held by another keeper, not allowed).
 */
int kr_keeper_krmin_open(struct kr_keeper *k)
{
	struct krmin_keeper_reg reg = {.size = sizeof(reg), .version = KRMIN_UAPI_VERSION};
	int fd, rc;

	k->krmin_fd = -1;
	fd = open(KR_KRMIN_PATH, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ENOENT && !k->cfg.require_kmod)
			return 0;
		KR_ERR("pool", "%s: %s%s", KR_KRMIN_PATH, strerror(-rc),
		       rc == -ENOENT ? " (--require-kmod: load krmin.ko first)" : "");
		return rc;
	}
	if (ioctl(fd, KRMIN_IOC_KEEPER_REG, &reg)) {
		rc = -errno;
		close(fd);
		if (k->cfg.require_kmod) {
			KR_ERR(
			    "pool", "%s: cannot be its keeper: %s%s", KR_KRMIN_PATH, strerror(-rc),
			    rc == -EBUSY ? " (another keeper holds it)"
			    : rc == -EPERM
				? " (needs CAP_IPC_LOCK and the module's keeper_uid or keeper_gid)"
				: "");
			return rc;
		}
		KR_WARN("pool", "%s: cannot be its keeper (%s%s): this keeper runs without it",
			KR_KRMIN_PATH, strerror(-rc),
			rc == -EBUSY ? ": another keeper holds it" : "");
		return 0;
	}
	if (reg.page_size != KR_KRMIN_PAGE) {
		KR_ERR("pool", "%s: page size %u, the zone is laid out in %u-byte pages",
		       KR_KRMIN_PATH, reg.page_size, KR_KRMIN_PAGE);
		close(fd);
		return -EOPNOTSUPP;
	}
	k->krmin_qp = calloc(KRMIN_MAX_SLOTS, sizeof(*k->krmin_qp));
	if (!k->krmin_qp) {
		close(fd);
		return -ENOMEM;
	}
	k->krmin_fd = fd;
	KR_INFO("pool", "kmod-min: %s, %u slots; each job maps only the DCIs it leases",
		KR_KRMIN_PATH, reg.max_slots);
	return 0;
}

/* Closing the keeper's file revokes and unpins every slot (the module). */
void kr_keeper_krmin_close(struct kr_keeper *k)
{
	if (k->krmin_fd >= 0)
		close(k->krmin_fd);
	k->krmin_fd = -1;
	free(k->krmin_qp);
	k->krmin_qp = NULL;
}

/*
 * A ConnectX's UAR page is device memory, which the module does not pin: it
 * takes its frame from the keeper's own mapping of it (SLOT_ADD_IO) and maps
 * it after the rings. The slot goes again if that fails.
 */
static int krmin_add_uar(struct kr_keeper *k, uint32_t slot, const struct kr_devx_uar *uar)
{
	struct krmin_slot_io io = {.size = sizeof(io),
				   .version = KRMIN_UAPI_VERSION,
				   .slot = slot,
				   .io_addr = (uintptr_t)uar->base_addr,
				   .io_len = KR_KRMIN_PAGE};
	int rc;

	if (!ioctl(k->krmin_fd, KRMIN_IOC_SLOT_ADD_IO, &io))
		return 0;
	rc = -errno;
	kr_krmin_slot_call(k->krmin_fd, KRMIN_IOC_SLOT_UNREG, slot);
	return rc;
}

/*
 * kr_keeper_krmin_reg() - DCI (or RC slot) q as a slot of its tenant: its block of the
 * zone, [block, block + len) (QP buffer, then the CQ buffer at cq_off, page
 * aligned), and its own UAR page q->uar, which its holder sees right after
 * the block. A page that is memory (the sim's) is pinned as the slot's
 * second range behind the whole block; device memory (KR_DEVX_BE_UAR_MMIO,
 * a ConnectX's) is added after the QP (first range) and the CQ (second). 0 (nothing to do in trusted
 * mode), -EINVAL (no page of its own), or the ioctl's -errno.
 */
int kr_keeper_krmin_reg(struct kr_keeper *k, struct kr_keeper_qp *q, uint8_t *block,
			uint64_t cq_off, uint64_t len)
{
	bool io = kr_devx_has(k->ctx, KR_DEVX_BE_UAR_MMIO);
	struct krmin_slot_reg reg = {.size = sizeof(reg),
				     .version = KRMIN_UAPI_VERSION,
				     .ring_addr = (uintptr_t)block,
				     .ring_len = io ? cq_off : len,
				     .dbr_len = io ? len - cq_off : KR_KRMIN_PAGE,
				     .tenant = q->tenant};
	int rc;

	if (k->krmin_fd < 0)
		return 0;
	if (!q->uar)
		return -EINVAL;
	reg.dbr_addr = io ? (uintptr_t)(block + cq_off) : (uintptr_t)q->uar->base_addr;
	if (ioctl(k->krmin_fd, KRMIN_IOC_SLOT_REG, &reg)) {
		rc = -errno;
		KR_ERR("pool", "tenant %u %s %u: kmod-min slot: %s", q->tenant,
		       q->kind == KR_SLOT_RC ? "RC" : "DCI", q->index, strerror(-rc));
		return rc;
	}
	if (reg.slot >= KRMIN_MAX_SLOTS) { /* never: no id to index by, or to unregister */
		KR_ERR("pool", "kmod-min answered slot %u of %u", reg.slot, KRMIN_MAX_SLOTS);
		return -EPROTO;
	}
	rc = io ? krmin_add_uar(k, reg.slot, q->uar) : 0;
	if (rc) {
		KR_ERR("pool", "tenant %u %s %u: kmod-min cannot map its UAR page %u: %s",
		       q->tenant, q->kind == KR_SLOT_RC ? "RC" : "DCI", q->index, q->uar->page_id,
		       strerror(-rc));
		return rc;
	}
	q->krmin_slot_plus1 = reg.slot + 1;
	__atomic_store_n(&k->krmin_qp[reg.slot], q, __ATOMIC_RELEASE);
	return 0;
}

/* kr_keeper_krmin_reg_mem() - see keeper.h. */
int kr_keeper_krmin_reg_mem(struct kr_keeper *k, uint32_t tenant, void *ring, uint64_t ring_len,
			    void *dbr, uint64_t dbr_len, uint32_t *slot_plus1)
{
	struct krmin_slot_reg reg = {.size = sizeof(reg),
				     .version = KRMIN_UAPI_VERSION,
				     .ring_addr = (uintptr_t)ring,
				     .ring_len = ring_len,
				     .dbr_addr = (uintptr_t)dbr,
				     .dbr_len = dbr_len,
				     .tenant = tenant};

	*slot_plus1 = 0;
	if (k->krmin_fd < 0)
		return 0;
	if (ioctl(k->krmin_fd, KRMIN_IOC_SLOT_REG, &reg))
		return -errno;
	if (reg.slot >= KRMIN_MAX_SLOTS)
		return -EPROTO;
	*slot_plus1 = reg.slot + 1;
	return 0;
}

/* kr_keeper_krmin_unreg_slot() - see keeper.h. */
void kr_keeper_krmin_unreg_slot(struct kr_keeper *k, uint32_t *slot_plus1)
{
	int rc;

	if (k->krmin_fd < 0 || !*slot_plus1)
		return;
	__atomic_store_n(&k->krmin_qp[*slot_plus1 - 1], NULL, __ATOMIC_RELEASE);
	rc = kr_krmin_slot_call(k->krmin_fd, KRMIN_IOC_SLOT_UNREG, *slot_plus1 - 1);
	if (rc)
		KR_ERR("pool", "kmod-min slot %u: unregister: %s", *slot_plus1 - 1, strerror(-rc));
	*slot_plus1 = 0;
}

/* kr_keeper_krmin_revoke_slot() - see keeper.h. */
void kr_keeper_krmin_revoke_slot(struct kr_keeper *k, uint32_t slot_plus1)
{
	int rc;

	if (k->krmin_fd < 0 || !slot_plus1)
		return;
	rc = kr_krmin_slot_call(k->krmin_fd, KRMIN_IOC_SLOT_REVOKE, slot_plus1 - 1);
	if (rc)
		KR_ERR("pool", "kmod-min slot %u: revoke: %s", slot_plus1 - 1, strerror(-rc));
}

/* Unpin q's slot (before its memory is destroyed or renewed). */
void kr_keeper_krmin_unreg(struct kr_keeper *k, struct kr_keeper_qp *q)
{
	kr_keeper_krmin_unreg_slot(k, &q->krmin_slot_plus1);
}

/* Take q's slot from whoever has it or holds its token: their mapping is gone. */
void kr_keeper_krmin_revoke(struct kr_keeper *k, struct kr_keeper_qp *q)
{
	kr_keeper_krmin_revoke_slot(k, q->krmin_slot_plus1);
}

static int krmin_grant_once(struct kr_keeper *k, uint32_t slot, pid_t pid, uint64_t *token)
{
	struct krmin_slot_grant g = {.size = sizeof(g),
				     .version = KRMIN_UAPI_VERSION,
				     .slot = slot,
				     .pid = pid > 0 ? (uint32_t)pid : 0};

	if (ioctl(k->krmin_fd, KRMIN_IOC_SLOT_GRANT, &g))
		return -errno;
	*token = g.token;
	return 0;
}

/*
 * kr_keeper_krmin_grant() - a one-time token for q's slot that only process
 * pid (the lessee, from SO_PEERCRED) can claim (*token 0 in trusted mode):
 * a token that leaks is worth nothing to anyone else. A slot whose old
 * holder's exit event is still queued is refused by the module (EBUSY):
 * the queue is read and the grant tried once more. 0 or -errno (-EBUSY,
 * -EINVAL: the lessee is gone, -EIO: not registered).
 */
int kr_keeper_krmin_grant(struct kr_keeper *k, struct kr_keeper_qp *q, pid_t pid, uint64_t *token)
{
	int rc = kr_keeper_krmin_grant_slot(k, q->krmin_slot_plus1, pid, token);

	if (rc)
		KR_ERR("pool", "tenant %u DCI %u: kmod-min grant: %s", q->tenant, q->index,
		       strerror(-rc));
	return rc;
}

/* kr_keeper_krmin_grant_slot() - see keeper.h. */
int kr_keeper_krmin_grant_slot(struct kr_keeper *k, uint32_t slot_plus1, pid_t pid, uint64_t *token)
{
	int rc;

	*token = 0;
	if (k->krmin_fd < 0)
		return 0;
	if (!slot_plus1)
		return -EIO;
	rc = krmin_grant_once(k, slot_plus1 - 1, pid, token);
	if (rc == -EBUSY) {
		kr_keeper_krmin_events(k);
		rc = krmin_grant_once(k, slot_plus1 - 1, pid, token);
	}
	return rc;
}

/* A slot the module took from its job: the lease comes back as a reclaim. */
static void krmin_slot_lost(struct kr_keeper *k, const struct krmin_revoke_event *ev)
{
	struct kr_keeper_qp *q;

	if (ev->slot >= KRMIN_MAX_SLOTS)
		return;
	q = __atomic_load_n(&k->krmin_qp[ev->slot], __ATOMIC_ACQUIRE);
	if (!q) /* unregistered meanwhile (rebuilt or renewed) */
		return;
	if (kr_keeper_lease_lost(k, q->kind, q->tenant, q->index))
		KR_INFO("pool", "tenant %u %s %u: its holder %s; reclaimed", q->tenant,
			q->kind == KR_SLOT_RC ? "RC" : "DCI", q->index,
			ev->reason == KRMIN_REVOKE_EXIT ? "exited" : "gave its slot up");
}

/*
 * kr_keeper_krmin_events() - read every queued event (non-blocking) and
 * reclaim the leases they name. An event for a lease the socket's close
 * already took back finds it no longer leased and is dropped.
 */
void kr_keeper_krmin_events(struct kr_keeper *k)
{
	struct krmin_revoke_event ev[KRMIN_EVENT_BATCH];
	ssize_t n;

	if (k->krmin_fd < 0)
		return;
	while ((n = read(k->krmin_fd, ev, sizeof(ev))) > 0) {
		for (size_t i = 0; i < (size_t)n / sizeof(ev[0]); i++)
			krmin_slot_lost(k, &ev[i]);
		if ((size_t)n < sizeof(ev))
			break;
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR)
		KR_ERR_RATELIMITED("pool", "%s: read: %s", KR_KRMIN_PATH, strerror(errno));
}
