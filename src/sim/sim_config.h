/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration of one simulated host: its address on the wire, the firmware
 * cost model and fault injection. Configuration, not code: everything here
 * comes from the device name and the environment (sim_config.c).
 *
 *   sim:<name>[@<ipv4>[:<udp port>]][,<key>=<value>...]
 *
 * keys: profile=<none|connectx4>, seed=<n>, drop=<rate>, dup=<rate>,
 * reorder=<rate>, delay=<rate>, delay_us=<n>, corrupt=<rate>,
 * wire_latency_ns=<n>, wire_gbps=<n>, cmd_<command>_us=<n> (override one
 * command's latency). Rates are fractions (0.05 = 5%). KR_SIM_OPTIONS in the
 * environment is appended to every host's options (the device name wins).
 *
 * Without @<ipv4> a host lives only in this process (the in-process wire);
 * with it, it binds a UDP socket on <ipv4>:<udp port> (default 4791) and
 * exchanges RoCEv2 packets with hosts in other processes.
 */
#ifndef KR_SIM_CONFIG_H
#define KR_SIM_CONFIG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

/* Firmware commands the cost model prices (index into sim_config.cmd_ns). */
enum sim_cost_cmd {
	SIM_COST_OPEN,        /* device open (context creation) */
	SIM_COST_QUERY_HCA_CAP,
	SIM_COST_ALLOC_PD,
	SIM_COST_CREATE_CQ,
	SIM_COST_CREATE_QP,
	SIM_COST_RST2INIT,
	SIM_COST_INIT2RTR,
	SIM_COST_RTR2RTS,
	SIM_COST_MODIFY_OTHER, /* 2ERR, 2RST */
	SIM_COST_QUERY,        /* QUERY_QP, QUERY_DCT, QUERY_RMP */
	SIM_COST_CREATE_DCT,
	SIM_COST_CREATE_RMP,
	SIM_COST_CREATE_MKEY,
	SIM_COST_UMEM_REG,
	SIM_COST_DESTROY,      /* any destroy / dealloc */
	SIM_COST_NCMDS
};

struct sim_config {
	char name[64];
	/* wire */
	bool has_addr;
	struct in_addr addr;     /* IPv4; the GID is ::ffff:<addr> */
	uint16_t udp_port;       /* default 4791 */
	/* cost model (all zero = off) */
	char profile[32];        /* "" or "connectx4" */
	uint64_t cmd_ns[SIM_COST_NCMDS];
	uint64_t wire_latency_ns; /* one-way, per packet */
	uint64_t wire_bps;        /* bits per second, 0 = unlimited */
	/* fault injection, per host, on packets it sends; rates in parts per million */
	uint64_t seed;
	uint32_t drop_ppm;
	uint32_t dup_ppm;
	uint32_t reorder_ppm;
	uint32_t delay_ppm;
	uint64_t delay_ns;       /* how long a delayed packet is held */
	uint32_t corrupt_ppm;    /* flip a bit after the ICRC: the receiver must drop it */
	/* the rdma-core release whose mlx5dv_devx_alloc_uar the host models
	 * (sim_bell.c): 0 is Debian 12's 44; from 45 dedicated NC pages exist */
	uint32_t libmlx5;
	bool no_blueflame; /* blueflame=0: cap.bf 0, BlueFlame UARs refused */
};

/*
 * Parse "<name>[@ip[:port]][,k=v...]" (the part after "sim:") plus
 * KR_SIM_OPTIONS into cfg. Returns 0, or -EINVAL with a logged message naming
 * the bad key or value (unknown key, rate outside [0,1], bad address...).
 */
int sim_config_parse(const char *spec, struct sim_config *cfg);

#endif /* KR_SIM_CONFIG_H */
