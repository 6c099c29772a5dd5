/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A simulated host: its shared segment, its DEVX ops table and the registry
 * of hosts open in this process (the wire delivers packets through it).
 *
 * The segment is a memfd ("krsim:<name>") holding struct sim_shared, mapped
 * MAP_SHARED so a forked child sees the same tables. It is the device's
 * private memory: never sent to a job (a job gets one UAR page, sim_bell.c).
 * sh->lock is a robust process-shared mutex: firmware commands, umem/UAR
 * bookkeeping and the engine's passes all take it.
 *
 * The ops are the kernel's DEVX gate in front of the firmware: obj_create
 * takes only create commands, obj_modify/obj_query only commands for that
 * object's type and number, general_cmd only what is not an object command;
 * anything else is -EINVAL before the firmware sees it, as on hardware.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "sim/sim.h"

/* Recursive: sim_dev_lookup_gid() takes it, and callers may already hold it. */
static pthread_mutex_t sim_registry_mtx = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct sim_dev *sim_registry; /* guarded by sim_registry_mtx */

#define SIM_NAME_MAX 59 /* "sim:" + name fits ctx->name[64] */

/* ---- registry ---- */

void sim_registry_lock(void)
{
	pthread_mutex_lock(&sim_registry_mtx);
}

void sim_registry_unlock(void)
{
	pthread_mutex_unlock(&sim_registry_mtx);
}

/* sim_gid_of_name() - ::ffff:127.a.b.c, a b c in 1..254 from FNV-1a of name. */
void sim_gid_of_name(const char *name, uint8_t gid[16])
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	gid[12] = 127;
	gid[13] = (uint8_t)(1 + h % 254);
	h /= 254;
	gid[14] = (uint8_t)(1 + h % 254);
	h /= 254;
	gid[15] = (uint8_t)(1 + h % 254);
}

/* Registry lock held. A host with this name or this GID, or NULL. */
static struct sim_dev *sim_registry_find_locked(const char *name, const uint8_t gid[16])
{
	for (struct sim_dev *d = sim_registry; d; d = d->next)
		if ((name && !strcmp(d->sh->name, name)) || (gid && !memcmp(d->sh->gid, gid, 16)))
			return d;
	return NULL;
}

/*
 * sim_dev_lookup_gid() - the host open in this process whose GID is gid, or
 * NULL. The result stays valid while the caller holds sim_registry_lock().
 */
struct sim_dev *sim_dev_lookup_gid(const uint8_t gid[16])
{
	struct sim_dev *d;

	sim_registry_lock();
	d = sim_registry_find_locked(NULL, gid);
	sim_registry_unlock();
	return d;
}

void sim_dev_foreach(void (*fn)(struct sim_dev *dev, void *arg), void *arg)
{
	sim_registry_lock();
	for (struct sim_dev *d = sim_registry; d; d = d->next)
		fn(d, arg);
	sim_registry_unlock();
}

/* sim_list() - fill up to max entries with the hosts open here; returns how many. */
int sim_list(struct kr_devx_dev_info *info, int max)
{
	int n = 0;

	sim_registry_lock();
	for (struct sim_dev *d = sim_registry; d && n < max; d = d->next, n++) {
		snprintf(info[n].name, sizeof(info[n].name), "%s", d->ctx.name);
		info[n].backend = &kr_sim_backend;
	}
	sim_registry_unlock();
	return n;
}

static void sim_registry_del(struct sim_dev *dev)
{
	sim_registry_lock();
	for (struct sim_dev **pp = &sim_registry; *pp; pp = &(*pp)->next) {
		if (*pp == dev) {
			*pp = dev->next;
			break;
		}
	}
	dev->next = NULL;
	sim_registry_unlock();
}

/* ---- the segment lock ---- */

void sim_lock(struct sim_dev *dev)
{
	int rc = pthread_mutex_lock(&dev->sh->lock);

	if (rc == EOWNERDEAD) {
		KR_WARN("sim", "%s: a process died holding the device lock; recovering",
			dev->ctx.name);
		pthread_mutex_consistent(&dev->sh->lock);
	} else if (rc) {
		KR_ERR("sim", "%s: device lock unusable: %s", dev->ctx.name, strerror(rc));
		abort();
	}
}

void sim_unlock(struct sim_dev *dev)
{
	pthread_mutex_unlock(&dev->sh->lock);
}

/* ---- firmware commands through the DEVX gate ---- */

enum sim_obj_role {
	SIM_ROLE_NONE,
	SIM_ROLE_CREATE,
	SIM_ROLE_MODIFY,
	SIM_ROLE_QUERY,
	SIM_ROLE_DESTROY,
};

/* Role of an opcode and the create opcode of the object type it acts on. */
static enum sim_obj_role sim_obj_role_of(uint16_t op, uint16_t *type)
{
	switch (op) {
	case KR_CMD_OP_ALLOC_PD:
	case KR_CMD_OP_CREATE_CQ:
	case KR_CMD_OP_CREATE_QP:
	case KR_CMD_OP_CREATE_RMP:
	case KR_CMD_OP_CREATE_DCT:
	case KR_CMD_OP_CREATE_MKEY:
		*type = op;
		return SIM_ROLE_CREATE;
	case KR_CMD_OP_RST2INIT_QP:
	case KR_CMD_OP_INIT2RTR_QP:
	case KR_CMD_OP_RTR2RTS_QP:
	case KR_CMD_OP_RTS2RTS_QP:
	case KR_CMD_OP_2ERR_QP:
	case KR_CMD_OP_2RST_QP:
		*type = KR_CMD_OP_CREATE_QP;
		return SIM_ROLE_MODIFY;
	case KR_CMD_OP_DRAIN_DCT:
		*type = KR_CMD_OP_CREATE_DCT;
		return SIM_ROLE_MODIFY;
	case KR_CMD_OP_QUERY_QP:
		*type = KR_CMD_OP_CREATE_QP;
		return SIM_ROLE_QUERY;
	case KR_CMD_OP_QUERY_DCT:
		*type = KR_CMD_OP_CREATE_DCT;
		return SIM_ROLE_QUERY;
	case KR_CMD_OP_QUERY_RMP:
		*type = KR_CMD_OP_CREATE_RMP;
		return SIM_ROLE_QUERY;
	case KR_CMD_OP_QUERY_CQ:
		*type = KR_CMD_OP_CREATE_CQ;
		return SIM_ROLE_QUERY;
	case KR_CMD_OP_QUERY_MKEY:
		*type = KR_CMD_OP_CREATE_MKEY;
		return SIM_ROLE_QUERY;
	case KR_CMD_OP_DEALLOC_PD:
		*type = KR_CMD_OP_ALLOC_PD;
		return SIM_ROLE_DESTROY;
	case KR_CMD_OP_DESTROY_CQ:
		*type = KR_CMD_OP_CREATE_CQ;
		return SIM_ROLE_DESTROY;
	case KR_CMD_OP_DESTROY_QP:
		*type = KR_CMD_OP_CREATE_QP;
		return SIM_ROLE_DESTROY;
	case KR_CMD_OP_DESTROY_RMP:
		*type = KR_CMD_OP_CREATE_RMP;
		return SIM_ROLE_DESTROY;
	case KR_CMD_OP_DESTROY_DCT:
		*type = KR_CMD_OP_CREATE_DCT;
		return SIM_ROLE_DESTROY;
	case KR_CMD_OP_DESTROY_MKEY:
		*type = KR_CMD_OP_CREATE_MKEY;
		return SIM_ROLE_DESTROY;
	default:
		*type = 0;
		return SIM_ROLE_NONE;
	}
}

/* Every object command names its object in the same 24 bits. */
#define SIM_OBJ_NUM_OFF 0x48
#define SIM_OBJ_NUM_W	0x18
_Static_assert(KR_PRM_OFF(destroy_qp_in, qpn) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(query_qp_in, qpn) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(rtr2rts_qp_in, qpn) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(destroy_cq_in, cqn) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(query_cq_in, cqn) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(dealloc_pd_in, pd) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(destroy_rmp_in, rmpn) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(query_rmp_in, rmpn) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(destroy_dct_in, dctn) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(drain_dct_in, dctn) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(query_dct_in, dctn) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_OFF(destroy_mkey_in, mkey_index) == SIM_OBJ_NUM_OFF &&
		   KR_PRM_W(destroy_qp_in, qpn) == SIM_OBJ_NUM_W,
	       "object number is not at 0x48 in every object command");

/* Lock, run, unlock; on a bad status record it in ctx->last_err. */
static int sim_ops_exec(struct sim_dev *dev, const void *in, size_t inlen, void *out, size_t outlen,
			uint32_t *obj_id)
{
	int rc;

	sim_lock(dev);
	rc = sim_cmd_exec(dev, in, inlen, out, outlen, obj_id);
	sim_unlock(dev);
	if (rc == -EREMOTEIO) {
		dev->ctx.last_err.opcode = (uint16_t)KR_PRM_GET(mbox_in, in, opcode);
		dev->ctx.last_err.status = (uint8_t)KR_PRM_GET(mbox_out, out, status);
		dev->ctx.last_err.syndrome = KR_PRM_GET(mbox_out, out, syndrome);
	}
	return rc;
}

static int sim_general_cmd(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			   size_t outlen)
{
	uint16_t type;

	if (!in || inlen < KR_PRM_BYTES(mbox_in))
		return -EINVAL;
	if (sim_obj_role_of((uint16_t)KR_PRM_GET(mbox_in, in, opcode), &type) != SIM_ROLE_NONE) {
		KR_WARN("sim", "%s: opcode 0x%x is an object command, not a general one", ctx->name,
			KR_PRM_GET(mbox_in, in, opcode));
		return -EINVAL;
	}
	return sim_ops_exec(sim_dev_of(ctx), in, inlen, out, outlen, NULL);
}

static int sim_obj_create(struct kr_devx_ctx *ctx, const void *in, size_t inlen, void *out,
			  size_t outlen, struct kr_devx_obj **objp)
{
	struct kr_devx_obj *obj;
	uint32_t id = 0;
	uint16_t op, type;
	int rc;

	if (!in || inlen < KR_PRM_BYTES(mbox_in) || !objp)
		return -EINVAL;
	op = (uint16_t)KR_PRM_GET(mbox_in, in, opcode);
	if (sim_obj_role_of(op, &type) != SIM_ROLE_CREATE)
		return -EINVAL;
	obj = calloc(1, sizeof(*obj));
	if (!obj)
		return -ENOMEM;
	rc = sim_ops_exec(sim_dev_of(ctx), in, inlen, out, outlen, &id);
	if (rc) {
		free(obj);
		return rc;
	}
	obj->ctx = ctx;
	obj->create_op = op;
	obj->id = id;
	*objp = obj;
	return 0;
}

/* The mailbox is a command of role for obj's type and names obj. */
static bool sim_obj_cmd_matches(const struct kr_devx_obj *obj, const void *in, size_t inlen,
				enum sim_obj_role role)
{
	uint16_t type;

	if (!in || inlen < KR_PRM_BYTES(mbox_in))
		return false;
	if (sim_obj_role_of((uint16_t)KR_PRM_GET(mbox_in, in, opcode), &type) != role ||
	    type != obj->create_op)
		return false;
	return kr_prm_get(in, SIM_OBJ_NUM_OFF, SIM_OBJ_NUM_W) == obj->id;
}

static int sim_obj_modify(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
			  size_t outlen)
{
	if (!sim_obj_cmd_matches(obj, in, inlen, SIM_ROLE_MODIFY))
		return -EINVAL;
	return sim_ops_exec(sim_dev_of(obj->ctx), in, inlen, out, outlen, NULL);
}

static int sim_obj_query(struct kr_devx_obj *obj, const void *in, size_t inlen, void *out,
			 size_t outlen)
{
	if (!sim_obj_cmd_matches(obj, in, inlen, SIM_ROLE_QUERY))
		return -EINVAL;
	return sim_ops_exec(sim_dev_of(obj->ctx), in, inlen, out, outlen, NULL);
}

static uint16_t sim_destroy_op_of(uint16_t create_op)
{
	switch (create_op) {
	case KR_CMD_OP_ALLOC_PD:
		return KR_CMD_OP_DEALLOC_PD;
	case KR_CMD_OP_CREATE_CQ:
		return KR_CMD_OP_DESTROY_CQ;
	case KR_CMD_OP_CREATE_QP:
		return KR_CMD_OP_DESTROY_QP;
	case KR_CMD_OP_CREATE_RMP:
		return KR_CMD_OP_DESTROY_RMP;
	case KR_CMD_OP_CREATE_DCT:
		return KR_CMD_OP_DESTROY_DCT;
	case KR_CMD_OP_CREATE_MKEY:
		return KR_CMD_OP_DESTROY_MKEY;
	default:
		return 0;
	}
}

/* Destroy the object; on a bad status (e.g. still in use) obj stays valid. */
static int sim_obj_destroy(struct kr_devx_obj *obj)
{
	uint32_t in[KR_PRM_BYTES(mbox_in) / 4] = {0};
	uint32_t out[KR_PRM_BYTES(mbox_out) / 4];
	uint16_t op;
	int rc;

	if (!obj)
		return -EINVAL;
	op = sim_destroy_op_of(obj->create_op);
	if (!op)
		return -EINVAL;
	KR_PRM_SET(mbox_in, in, opcode, op);
	kr_prm_set(in, SIM_OBJ_NUM_OFF, SIM_OBJ_NUM_W, obj->id);
	rc = sim_ops_exec(sim_dev_of(obj->ctx), in, sizeof(in), out, sizeof(out), NULL);
	if (rc)
		return rc;
	free(obj);
	return 0;
}

/* ---- UARs, umems, EQ, GID ---- */

static int sim_umem_reg(struct kr_devx_ctx *ctx, void *addr, size_t size, uint32_t access,
			struct kr_devx_umem **umemp)
{
	struct sim_dev *dev = sim_dev_of(ctx);
	struct sim_shared *sh = dev->sh;
	struct kr_devx_umem *umem;
	uint32_t i;

	/* hardware pins any byte range; it only has to exist and not wrap; and
	 * the kernel takes only the umem access bits (devx_umem_get) */
	if (!addr || !size || (uintptr_t)addr + size < (uintptr_t)addr || !umemp ||
	    (access & ~(uint32_t)KR_ACCESS_UMEM))
		return -EINVAL;
	sim_cost_charge(&dev->cfg, SIM_COST_UMEM_REG); /* pinning, on hardware */
	umem = calloc(1, sizeof(*umem));
	if (!umem)
		return -ENOMEM;
	sim_lock(dev);
	for (i = 0; i < SIM_MAX_UMEM && sh->umem[i].in_use; i++)
		;
	if (i == SIM_MAX_UMEM) {
		sim_unlock(dev);
		free(umem);
		return -ENOMEM;
	}
	sh->umem[i] = (struct sim_umem){
	    .in_use = 1,
	    .access = access,
	    .addr = (uint64_t)(uintptr_t)addr,
	    .size = size,
	};
	sim_unlock(dev);

	umem->ctx = ctx;
	umem->id = i + 1;
	umem->addr = addr;
	umem->size = size;
	*umemp = umem;
	return 0;
}

/* -EBUSY while a CQ, QP, SRQ or MKEY still uses it (as the kernel refuses). */
static int sim_umem_dereg(struct kr_devx_umem *umem)
{
	struct sim_dev *dev;
	struct sim_umem *u;

	if (!umem)
		return -EINVAL;
	dev = sim_dev_of(umem->ctx);
	sim_lock(dev);
	u = sim_umem_get(dev->sh, umem->id);
	if (!u) {
		sim_unlock(dev);
		return -EINVAL;
	}
	if (u->refcnt) {
		sim_unlock(dev);
		return -EBUSY;
	}
	u->in_use = 0;
	sim_unlock(dev);
	free(umem);
	return 0;
}

static int sim_query_eqn(struct kr_devx_ctx *ctx, uint32_t vector, uint32_t *eqn)
{
	(void)ctx;
	if (vector != 0) /* one completion vector */
		return -EINVAL;
	*eqn = 0;
	return 0;
}

static int sim_query_gid_entry(struct kr_devx_ctx *ctx, uint8_t port, uint16_t index,
			       struct kr_devx_gid_entry *entry)
{
	if (port != 1)
		return -EINVAL;
	return sim_gid_entry(sim_dev_of(ctx)->sh, index, entry);
}

static int sim_query_lid(struct kr_devx_ctx *ctx, uint8_t port, uint16_t *lid)
{
	(void)ctx;
	if (port != 1)
		return -EINVAL;
	*lid = 0; /* Ethernet */
	return 0;
}

static void sim_close(struct kr_devx_ctx *ctx);

static const struct kr_devx_ops sim_ops = {
    .alloc_uar = sim_alloc_uar,
    .bf_copy = sim_bf_copy,
    .close = sim_close,
    .doorbell = sim_doorbell,
    .free_uar = sim_free_uar,
    .general_cmd = sim_general_cmd,
    .obj_create = sim_obj_create,
    .obj_destroy = sim_obj_destroy,
    .obj_modify = sim_obj_modify,
    .obj_query = sim_obj_query,
    .query_eqn = sim_query_eqn,
    .query_gid_entry = sim_query_gid_entry,
    .query_lid = sim_query_lid,
    .syndrome_str = sim_syndrome_str,
    .uar_export = sim_uar_export_fd,
    .uar_import = sim_uar_import,
    .uar_wrap = sim_uar_wrap,
    .umem_dereg = sim_umem_dereg,
    .umem_reg = sim_umem_reg,
    .event_ch_open = sim_event_ch_open,
    .event_ch_close = sim_event_ch_close,
    .event_subscribe_fd = sim_event_subscribe_fd,
    .cq_doorbell = sim_cq_doorbell,
};

/* ---- open / close ---- */

/*
 * The host's GID: ::ffff:<address> when it has one (RoCEv2 names a port by
 * the IPv4-mapped GID of its IP address), else derived from the name.
 */
static void sim_host_gid(const struct sim_config *cfg, uint8_t gid[16])
{
	if (!cfg->has_addr) {
		sim_gid_of_name(cfg->name, gid);
		return;
	}
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, &cfg->addr.s_addr, 4);
}

static int sim_shared_init(struct sim_shared *sh, const char *name, const uint8_t gid[16])
{
	pthread_mutexattr_t attr;
	int rc;

	sh->magic = SIM_MAGIC;
	sh->version = SIM_VERSION;
	sh->size = sizeof(*sh);
	snprintf(sh->name, sizeof(sh->name), "%s", name);
	memcpy(sh->gid, gid, 16);

	rc = pthread_mutexattr_init(&attr);
	if (rc)
		return -rc;
	rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	if (!rc)
		rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	if (!rc)
		rc = pthread_mutex_init(&sh->lock, &attr);
	pthread_mutexattr_destroy(&attr);
	return -rc;
}

/*
 * sim_open() - create simulated host spec (without "sim:"; see sim.h:
 * "<name>[@<ipv4>[:<port>]][,<key>=<value>...]") in this process and start
 * its engine. A host with an address talks RoCEv2 over a UDP socket bound to
 * it, and its GID is ::ffff:<address>. Returns 0, -EINVAL (empty or too long
 * name, bad option: see sim_config_parse), -EEXIST (a host of that name, or
 * of the same GID, is open here), -ENOMEM, the errno of
 * memfd_create/ftruncate/mmap, or sim_engine_start()'s error (with an
 * address also -EADDRINUSE, -EADDRNOTAVAIL: see sim_udp_open).
 */
int sim_open(const char *spec, struct kr_devx_ctx **ctxp)
{
	char memfd_name[80];
	struct sim_config cfg;
	struct sim_shared *sh;
	struct sim_dev *dev;
	const char *name;
	uint8_t gid[16];
	int fd, rc;

	if (!spec || !ctxp)
		return -EINVAL;
	rc = sim_config_parse(spec, &cfg);
	if (rc)
		return rc;
	name = cfg.name;
	if (!*name || strlen(name) > SIM_NAME_MAX)
		return -EINVAL;
	sim_cost_charge(&cfg, SIM_COST_OPEN); /* the driver context, on hardware */
	sim_host_gid(&cfg, gid);
	sim_registry_lock();
	if (sim_registry_find_locked(name, gid)) {
		sim_registry_unlock();
		KR_ERR("sim", "sim:%s: a host with this name or GID is already open", name);
		return -EEXIST;
	}
	sim_registry_unlock();

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->cfg = cfg;
	snprintf(memfd_name, sizeof(memfd_name), "krsim:%s", name);
	fd = memfd_create(memfd_name, MFD_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto err_free_dev;
	}
	if (ftruncate(fd, sizeof(struct sim_shared))) {
		rc = -errno;
		goto err_close_fd;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED) {
		rc = -errno;
		goto err_close_fd;
	}
	rc = sim_shared_init(sh, name, gid);
	if (rc)
		goto err_unmap;

	dev->sh = sh;
	dev->shm_fd = fd;
	dev->ctx.ops = &sim_ops;
	dev->ctx.backend = &kr_sim_backend;
	dev->ctx.priv = dev;
	snprintf(dev->ctx.name, sizeof(dev->ctx.name), "sim:%s", name);

	rc = sim_engine_start(dev);
	if (rc)
		goto err_unmap;

	sim_registry_lock();
	if (sim_registry_find_locked(name, gid)) {
		sim_registry_unlock();
		rc = -EEXIST; /* lost a race with another sim_open of the name */
		goto err_stop_engine;
	}
	dev->next = sim_registry;
	sim_registry = dev;
	sim_registry_unlock();

	*ctxp = &dev->ctx;
	return 0;

err_stop_engine:
	sim_engine_stop(dev);
err_unmap:
	munmap(sh, sizeof(*sh));
err_close_fd:
	close(fd);
err_free_dev:
	free(dev);
	return rc;
}

/*
 * Leave the registry first so no other host's wire delivers to us, then stop
 * the engine, then drop the segment (processes that still map it keep it).
 */
static void sim_close(struct kr_devx_ctx *ctx)
{
	struct sim_dev *dev;

	if (!ctx)
		return;
	dev = sim_dev_of(ctx);
	sim_registry_del(dev);
	sim_engine_stop(dev);
	sim_event_release(dev);
	sim_bell_release(dev);
	munmap(dev->sh, sizeof(*dev->sh));
	close(dev->shm_fd);
	free(dev);
}

static int sim_backend_open(const char *name, struct kr_devx_ctx **ctx)
{
	return sim_open(name + strlen(SIM_PREFIX), ctx);
}

/* The sim of a program that opens hosts (the keeper, tools, tests). */
const struct kr_devx_backend kr_sim_backend = {
    .name = "sim",
    .prefix = SIM_PREFIX,
    .caps = SIM_BACKEND_CAPS,
    .open = sim_backend_open,
    .list = sim_list,
    .import = sim_view_import,
};
