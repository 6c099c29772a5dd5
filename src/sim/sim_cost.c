/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The firmware cost model: a command of class c takes cfg.cmd_ns[c] of real
 * time, spent in clock_nanosleep, as the caller of a slow firmware command
 * waits on hardware. All zero (no profile, no cmd_<command>_us) = off.
 *
 * The time is spent without sh->lock: the packet engine keeps serving every
 * QP, and other threads' commands run (each command waits its own time).
 * Hosts opened with the same cmdq=<name>, in any process, share one
 * command queue: a charged command holds an exclusive lock on
 * /dev/shm/krsim-cmdq-<name> for its time, so the commands of a node's
 * processes (one NIC per node, each with its own host here) take turns as
 * on one ConnectX's command interface.
 * Where the time is spent: sim_open() (SIM_COST_OPEN, before anything
 * else), sim_umem_reg() (before it takes the lock), and sim_cmd_exec() for
 * every mailbox, before the mailbox is even looked at (a command refused by
 * the firmware still paid the round trip).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "common/kr_log.h"

#include "sim/sim.h"

static const char *const sim_cost_cmd_names[] = {
    [SIM_COST_OPEN] = "open",
    [SIM_COST_QUERY_HCA_CAP] = "query_hca_cap",
    [SIM_COST_ALLOC_PD] = "alloc_pd",
    [SIM_COST_CREATE_CQ] = "create_cq",
    [SIM_COST_CREATE_QP] = "create_qp",
    [SIM_COST_RST2INIT] = "rst2init",
    [SIM_COST_INIT2RTR] = "init2rtr",
    [SIM_COST_RTR2RTS] = "rtr2rts",
    [SIM_COST_MODIFY_OTHER] = "modify_other",
    [SIM_COST_QUERY] = "query",
    [SIM_COST_CREATE_DCT] = "create_dct",
    [SIM_COST_CREATE_RMP] = "create_rmp",
    [SIM_COST_CREATE_MKEY] = "create_mkey",
    [SIM_COST_UMEM_REG] = "umem_reg",
    [SIM_COST_DESTROY] = "destroy",
};
_Static_assert(sizeof(sim_cost_cmd_names) / sizeof(sim_cost_cmd_names[0]) == SIM_COST_NCMDS,
	       "a cost class has no name");

/* sim_cost_cmd_name() - see sim.h. */
const char *sim_cost_cmd_name(enum sim_cost_cmd c)
{
	return (unsigned int)c < SIM_COST_NCMDS ? sim_cost_cmd_names[c] : NULL;
}

/* sim_cost_cmd_of() - see sim.h. */
enum sim_cost_cmd sim_cost_cmd_of(uint16_t opcode)
{
	switch (opcode) {
	case KR_CMD_OP_QUERY_HCA_CAP:
		return SIM_COST_QUERY_HCA_CAP;
	case KR_CMD_OP_ALLOC_PD:
		return SIM_COST_ALLOC_PD;
	case KR_CMD_OP_CREATE_CQ:
		return SIM_COST_CREATE_CQ;
	case KR_CMD_OP_CREATE_QP:
		return SIM_COST_CREATE_QP;
	case KR_CMD_OP_RST2INIT_QP:
		return SIM_COST_RST2INIT;
	case KR_CMD_OP_INIT2RTR_QP:
		return SIM_COST_INIT2RTR;
	case KR_CMD_OP_RTR2RTS_QP:
		return SIM_COST_RTR2RTS;
	case KR_CMD_OP_RTS2RTS_QP:
	case KR_CMD_OP_2ERR_QP:
	case KR_CMD_OP_2RST_QP:
	case KR_CMD_OP_DRAIN_DCT:
		return SIM_COST_MODIFY_OTHER;
	case KR_CMD_OP_QUERY_QP:
	case KR_CMD_OP_QUERY_DCT:
	case KR_CMD_OP_QUERY_RMP:
	case KR_CMD_OP_QUERY_CQ:
	case KR_CMD_OP_QUERY_MKEY:
		return SIM_COST_QUERY;
	case KR_CMD_OP_CREATE_DCT:
		return SIM_COST_CREATE_DCT;
	case KR_CMD_OP_CREATE_RMP:
		return SIM_COST_CREATE_RMP;
	case KR_CMD_OP_CREATE_MKEY:
		return SIM_COST_CREATE_MKEY;
	case KR_CMD_OP_DESTROY_MKEY:
	case KR_CMD_OP_DESTROY_CQ:
	case KR_CMD_OP_DESTROY_QP:
	case KR_CMD_OP_DESTROY_DCT:
	case KR_CMD_OP_DEALLOC_PD:
	case KR_CMD_OP_DESTROY_RMP:
		return SIM_COST_DESTROY;
	default:
		return SIM_COST_NCMDS;
	}
}

/* Sleep ns of CLOCK_MONOTONIC time, whatever signals arrive meanwhile. */
static void sim_cost_sleep(uint64_t ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns += (uint64_t)ts.tv_nsec;
	ts.tv_sec += (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* The command's time, in cfg's command queue's turn when it shares one. */
static void sim_cost_spend(const struct sim_config *cfg, uint64_t ns)
{
	char path[64];
	int fd = -1;

	if (cfg->cmdq[0]) {
		snprintf(path, sizeof(path), "/dev/shm/krsim-cmdq-%s", cfg->cmdq);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0 || flock(fd, LOCK_EX)) {
			KR_WARN_RATELIMITED("sim", "%s: command queue %s: %s (charged alone)",
					    cfg->name, path, strerror(errno));
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
	}
	sim_cost_sleep(ns);
	if (fd >= 0)
		close(fd); /* and the lock with it */
}

/* sim_cost_charge() - see sim.h. */
void sim_cost_charge(const struct sim_config *cfg, enum sim_cost_cmd c)
{
	if ((unsigned int)c >= SIM_COST_NCMDS || !cfg->cmd_ns[c])
		return;
	sim_cost_spend(cfg, cfg->cmd_ns[c]);
}

/* sim_cost_charge_locked() - see sim.h. */
void sim_cost_charge_locked(struct sim_dev *dev, enum sim_cost_cmd c)
{
	if ((unsigned int)c >= SIM_COST_NCMDS || !dev->cfg.cmd_ns[c])
		return;
	/* the firmware is busy with this command; the packet engine is not */
	sim_unlock(dev);
	sim_cost_spend(&dev->cfg, dev->cfg.cmd_ns[c]);
	sim_lock(dev);
}
