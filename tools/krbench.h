/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krbench internals shared by its files:
 *   krbench.c          options, attach, read and local connect benches
 *   krbench_util.c     clock, percentiles, finding krpoold
 *   krbench_cluster.c  N keepers on sim hosts over UDP loopback, a target job
 *   krbench_verbs.c    the verbs way: RC QP + TCP exchange + READ, per connection
 *   krbench_remote.c   krbench connect --nodes: remote connects vs the verbs way
 *   krbench_read.c     the READ loops (vQP, raw DCI) of krbench read
 *   krbench_peer.c     krbench read --peer: to another node, beside a UDP ping-pong
 *   krbench_fanout.c   krbench fanout: one thread's READs over N peers, by DCIs per thread
 *   krbench_send.c     krbench send: ports and vQPs vs a raw DCI -> DCT pair
 *   krbench_send_peer.c krbench send --peer: the same through node 2's echo job
 *   krbench_all.c      krbench all: every bench, one JSON document
 *   krbench_elastic.c  krbench elastic: fresh processes (krbench_fresh.c) reaching a peer
 */
#ifndef KRBENCH_H
#define KRBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "devx/devx.h"

struct kr_ctx;
struct kr_connect_opts;
struct kr_lease;
struct kr_vqp;

/* --profile: the sim's firmware cost model for keepers started here ("none": no model). */
extern const char *g_profile;

double kb_now_us(void);
int kb_cmp_double(const void *a, const void *b);
/* Percentile p of n sorted values. */
double kb_pct(const double *sorted, int n, double p);
/* Sort v[0..n) (n odd) and return its middle value. */
double kb_median(double *v, int n);
/* Sort lat[0..n) and return its p50 and p99. */
void kb_p50_p99(double *lat, int n, double *p50, double *p99);
/* Attach to the keeper at sock, retrying for up to 10 s; NULL (reported). */
struct kr_ctx *kb_attach_node(const char *sock);
/* The same with kr_attach_opts.dcis_per_thread (0: the default). */
struct kr_ctx *kb_attach_node_dcis(const char *sock, uint32_t dcis_per_thread);
/*
 * Every process of a krbench run is one launch: KR_LAUNCH_KEY as given, else
 * a random one set for this run before anything forks. 0 or -1.
 */
int kb_launch_env(void);
/*
 * Does ctx's device work on this host's cores (KR_CTX_F_HOST_CPU: the sim)?
 * Then a loop that polls empty yields, as the README tells users to.
 */
bool kb_host_cpu(struct kr_ctx *ctx);
/* The program name to run (krpoold, krbench-fresh): given if set, else the one next to this binary. */
int kb_tool_path(const char *name, const char *given, char *buf, size_t len);

/* ---- krbench_cluster.c ---- */

#define KB_MAX_NODES 9

/* N keepers, node ids 1..N, on sim hosts 127.0.0.2.. over one UDP port; node 1 the MetaServer. */
struct kb_cluster {
	int nodes;
	uint16_t port;	/* the sim hosts' UDP port */
	uint16_t mport; /* the MetaServer's registration port (on 127.0.0.2) */
	char dir[64];
	pid_t pid[KB_MAX_NODES];
	char sock[KB_MAX_NODES][128];
};

/*
 * Start nodes keepers (2..KB_MAX_NODES) under g_profile and wait until each
 * answers on its socket; extra_hosts more loopback addresses after theirs
 * must have the UDP port free too (the verbs baseline's hosts). 0 or -errno
 * (reported; what started is stopped).
 */
int kb_cluster_start(struct kb_cluster *c, int nodes, int extra_hosts, const char *krpoold);
void kb_cluster_stop(struct kb_cluster *c);
/* "sim:<name>@127.0.0.<host + 2>:<port>[,profile=...]" for host index host (node i is host i - 1).
 */
void kb_sim_device(const struct kb_cluster *c, const char *name, int host, char *buf, size_t len);

/*
 * A job attached to a keeper that exposes 8 readable bytes (val) at
 * addr/rkey, and echoes UDP datagrams on 127.0.0.1:udp_port (the floor a
 * READ over the sim's UDP wire is compared with).
 */
struct kb_target {
	pid_t pid;
	int ctl; /* closing it ends the job */
	uint64_t addr;
	uint32_t rkey;
	uint64_t val;
	uint16_t udp_port;
};

/* Fork a job attached to sock; returns once its buffer is registered. 0 or -errno. */
int kb_target_start(struct kb_target *t, const char *sock);
/*
 * Tell the job to end (its pipe closes); kb_target_wait() also reaps it.
 * Children forked later hold the pipe too: stop every target before waiting.
 */
void kb_target_stop(struct kb_target *t);
void kb_target_wait(struct kb_target *t);

/* ---- krbench_verbs.c ---- */

/*
 * The verbs way between two processes on their own sim devices (hosts
 * host_srv and host_cli of c, under g_profile): per connection the client
 * creates a CQ and an RC QP, exchanges QPN, GID and PSN with the server over
 * TCP as ibv_rc_pingpong does (the server creates its QP, brings it to RTS and
 * answers with its QPN and its buffer's address and rkey), brings its QP to
 * RTS and READs 8 bytes. Each process opens its device, PD and MR once,
 * outside the timing. Forked before the caller attaches to a keeper.
 */
struct kb_verbs {
	pid_t srv, cli;
	int go;	 /* to the client: one byte starts its iterations */
	int res; /* from the client: iterations doubles (us), or nothing on failure */
	int iters;
};

int kb_verbs_start(struct kb_verbs *v, const struct kb_cluster *c, int host_srv, int host_cli,
		   int iters);
/*
 * Run the client's iterations now: lat[0..iters) gets the time to the READ's
 * completion, lat[iters..2 iters) the time to a QP in RTS (us). 0 or -EIO
 * (reported).
 */
int kb_verbs_run(struct kb_verbs *v, double *lat);
void kb_verbs_stop(struct kb_verbs *v);

/*
 * kr_connect, retried for up to 5 s while it fails with ENOSPC (a thread's
 * first connect leases a DCI; those given back may still be resetting).
 * *t0 is when the last attempt began. NULL with errno set on failure.
 */
struct kr_vqp *kb_connect_wait(struct kr_ctx *ctx, uint32_t node,
			       const struct kr_connect_opts *opts, double *t0);
/*
 * n connects to node, each from a thread holding no DCI (the caller: its
 * disconnect lets the DCI go), the process keeping at most spares idle DCIs;
 * lat gets the latencies, sorted. 0, or 1 (reported).
 */
int kb_cold_loop(struct kr_ctx *ctx, uint32_t node, double *lat, int n, uint32_t spares,
		 double *p50, double *p99);

/* ---- krbench_read.c ---- */

#define KB_RD_WINDOW 64 /* READs in flight for the rate */
#define KB_RD_ROUNDS 5	/* runs of each path, alternating: this machine's noise */

struct kb_rd_res {
	double p50, p99, mops;
};

/* A raw leased DCI and where its READs go. */
struct kb_rd_raw {
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
	struct kr_devx_dc_av av;
	uint32_t lkey;
};

/*
 * iters sync 8-byte READs of raddr (p50/p99 into res), then iters more with
 * KB_RD_WINDOW in flight (Mop/s), through vQP v, or through raw when v is
 * NULL. local holds 8 * KB_RD_WINDOW bytes of heap; lat iters doubles.
 * 0 or -errno.
 */
int kb_rd_run(struct kr_vqp *v, struct kb_rd_raw *raw, uint8_t *local, uint64_t raddr,
	      uint32_t rkey, int iters, double *lat, struct kb_rd_res *res);
/*
 * KB_RD_ROUNDS rounds of kb_rd_run() through v and through raw, back to back
 * (which goes first alternates): rv and rr each figure's median over the
 * rounds, ratio (v over raw) the median of the rounds' own ratios. 0 or -errno.
 */
int kb_rd_rounds(struct kr_vqp *v, struct kb_rd_raw *raw, uint8_t *local, uint64_t raddr,
		 uint32_t rkey, int iters, double *lat, struct kb_rd_res *rv, struct kb_rd_res *rr,
		 struct kb_rd_res *ratio);

/* ---- krbench_fanout.c ---- */

/* Async READs from one thread to peers nodes round-robin, K DCIs per thread. 0, 1 or 77. */
int kb_bench_fanout(int peers, int iters, bool json, const char *krpoold);

/* ---- krbench_peer.c ---- */

int kb_bench_read_peer(int iters, bool json, bool promote, const char *krpoold);

/* ---- krbench_send.c ---- */

#define KB_SD_WINDOW 32 /* messages in flight for the rate */
#define KB_SD_ROUNDS 3	/* runs of each path, alternating: this machine's noise */

/* The two message sizes measured. */
extern const uint32_t kb_sd_sizes[2];

struct kb_sd_res {
	double p50, p99, rate;
};

/* One measurement: bind port0, port0 + 1 here, send to node's rport0, rport0 + 1. */
struct kb_sd_case {
	uint32_t node; /* KR_NODE_SELF, or the node whose echo job sends back */
	bool raw;      /* a raw DCI into the ports' queues, or ports and vQPs */
	uint32_t len;
	uint32_t port0, rport0;
};

/* A raw DCI leased for the raw cases. 0 or -EIO (reported). */
int kb_sd_lease_dci(struct kr_ctx *ctx, struct kb_rd_raw *dci, struct kr_lease *l);
/* Ping-pong (lat: iters doubles) and rate of case c into res. 0 or -errno. */
int kb_sd_measure(struct kr_ctx *ctx, const struct kb_sd_case *c, const struct kb_rd_raw *dci,
		  int iters, double *lat, struct kb_sd_res *res);
/* The echo side of a peer case: each message back to the same port of c->node, until stop_fd reads.
 */
int kb_sd_echo(struct kr_ctx *ctx, const struct kb_sd_case *c, const struct kb_rd_raw *dci,
	       int stop_fd);
/* Each figure's median over KB_SD_ROUNDS results. */
void kb_sd_median(const struct kb_sd_res *r, struct kb_sd_res *out);
/* The table, or one JSON object named what ("send", "send_peer"). */
void kb_sd_report(const char *what, int iters, bool json, const struct kb_sd_res *rv,
		  const struct kb_sd_res *rr);
/* Ping-pong and rate at 64 B and 4 KiB, vQP vs raw, attached to ctx; the table or JSON. 0 or 1. */
int kb_bench_send(struct kr_ctx *ctx, int iters, bool json);
/* krbench_send_peer.c: the same to node 2 of two keepers started here. 0, 1 or 77. */
int kb_bench_send_peer(int iters, bool json, const char *krpoold);

/* ---- krbench_all.c ---- */

/* Every bench in a child; JSON to file (stdout when NULL). 0, 1 (a run failed) or 77. */
/* krbench_busy.c: jobs that keep about ndci DCIs of the keeper at sock resetting */
#define KB_CHURN_MAX 8
struct kb_churn {
	pid_t pid[KB_CHURN_MAX];
	int n;
};
int kb_churn_start(struct kb_churn *c, const char *sock, int ndci);
int kb_churn_stop(struct kb_churn *c);

int kb_bench_all(const char *file, const char *iters, bool json, const char *krpoold);

/* ---- krbench_elastic.c ---- */

/* Fresh processes attach, connect and READ, PROCS cached and PROCS not. 0, 1 or 77. */
int kb_bench_elastic(int nodes, int procs, bool json, const char *krpoold);

/* ---- krbench_remote.c ---- */

int kb_bench_connect_remote(int nodes, int iters, bool json, const char *krpoold);

#endif /* KRBENCH_H */
