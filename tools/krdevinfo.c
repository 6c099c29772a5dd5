/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krdevinfo: list the devices krcore can open, like ibv_devinfo: mlx5 devices
 * through rdma-core DEVX and simulated ConnectX hosts ("sim:<name>"). The
 * embedded default sim:sim0 is always listed. For each device: name, backend,
 * every general capability krcore reads (QUERY_HCA_CAP) and the GID of port 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "sim/sim.h"

#define KRDEVINFO_MAX_DEVS    64
#define KRDEVINFO_DEFAULT_SIM "sim:sim0"

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [-d DEVICE] [-v] [-h]\n"
		"  -d DEVICE  only this device (mlx5_<n> or sim:<name>)\n"
		"  -v         verbose: derived limits and the whole port 1 GID table\n"
		"  -h         this help\n",
		prog);
}

static void print_gid(const uint8_t gid[16])
{
	for (int i = 0; i < 16; i += 2)
		printf("%02x%02x%s", gid[i], gid[i + 1], i < 14 ? ":" : "");
}

static const char *port_type_str(uint8_t port_type)
{
	return port_type == KR_PORT_TYPE_ETH  ? "Ethernet (RoCE)"
	       : port_type == KR_PORT_TYPE_IB ? "InfiniBand"
					      : "unknown";
}

static void print_caps(const struct kr_devx_caps *c, bool verbose)
{
	printf("\tport_type:\t\t%u (%s)\n", c->port_type, port_type_str(c->port_type));
	printf("\tnum_ports:\t\t%u\n", c->num_ports);
	printf("\tvhca_id:\t\t%u\n", c->vhca_id);
	printf("\trc:\t\t\t%s\n", c->rc ? "yes" : "no");
	printf("\tdct:\t\t\t%s\n", c->dct ? "yes" : "no");
	printf("\troce:\t\t\t%s\n", c->roce ? "yes" : "no");
	printf("\tatomic:\t\t\t%s\n", c->atomic ? "yes" : "no");
	printf("\tcqe_version:\t\t%u\n", c->cqe_version);
	printf("\tlog_max_qp:\t\t%u\n", c->log_max_qp);
	printf("\tlog_max_qp_sz:\t\t%u\n", c->log_max_qp_sz);
	printf("\tlog_max_cq:\t\t%u\n", c->log_max_cq);
	printf("\tlog_max_cq_sz:\t\t%u\n", c->log_max_cq_sz);
	printf("\tlog_max_srq:\t\t%u\n", c->log_max_srq);
	printf("\tlog_max_srq_sz:\t\t%u\n", c->log_max_srq_sz);
	printf("\tlog_max_pd:\t\t%u\n", c->log_max_pd);
	printf("\tlog_max_mkey:\t\t%u\n", c->log_max_mkey);
	printf("\tlog_max_msg:\t\t%u\n", c->log_max_msg);
	printf("\tlog_max_ra_req_qp:\t%u\n", c->log_max_ra_req_qp);
	printf("\tlog_max_ra_res_qp:\t%u\n", c->log_max_ra_res_qp);
	printf("\tlog_max_ra_req_dc:\t%u\n", c->log_max_ra_req_dc);
	printf("\tlog_max_ra_res_dc:\t%u\n", c->log_max_ra_res_dc);
	printf("\tmax_wqe_sz_sq:\t\t%u\n", c->max_wqe_sz_sq);
	printf("\tmax_wqe_sz_rq:\t\t%u\n", c->max_wqe_sz_rq);
	printf("\tmax_wqe_sz_sq_dc:\t%u\n", c->max_wqe_sz_sq_dc);
	printf("\tgid_table_len:\t\t%u\n", c->gid_table_len);
	if (!verbose)
		return;
	printf("\tmax_qp:\t\t\t%llu\n", 1ull << c->log_max_qp);
	printf("\tmax_qp_wr (WQEBBs):\t%llu\n", 1ull << c->log_max_qp_sz);
	printf("\tmax_cq:\t\t\t%llu\n", 1ull << c->log_max_cq);
	printf("\tmax_cqe:\t\t%llu\n", 1ull << c->log_max_cq_sz);
	printf("\tmax_srq:\t\t%llu\n", 1ull << c->log_max_srq);
	printf("\tmax_srq_wr:\t\t%llu\n", 1ull << c->log_max_srq_sz);
	printf("\tmax_pd:\t\t\t%llu\n", 1ull << c->log_max_pd);
	printf("\tmax_mr:\t\t\t%llu\n", 1ull << c->log_max_mkey);
	printf("\tmax_msg_sz:\t\t%llu\n", 1ull << c->log_max_msg);
	printf("\tmax_qp_rd_atom:\t\t%llu\n", 1ull << c->log_max_ra_res_qp);
	printf("\tmax_qp_init_rd_atom:\t%llu\n", 1ull << c->log_max_ra_req_qp);
}

static void print_device(struct kr_devx_ctx *ctx, bool verbose)
{
	const struct kr_devx_port *p = &ctx->port;
	struct kr_devx_gid_entry e;
	uint32_t n = ctx->caps.gid_table_len ? ctx->caps.gid_table_len : 1;

	printf("hca_id:\t%s\n", ctx->name);
	printf("\tbackend:\t\t%s\n",
	       ctx->backend == &kr_sim_backend ? "sim (software ConnectX)" : "hw (rdma-core DEVX)");
	print_caps(&ctx->caps, verbose);
	if (verbose)
		printf("\tcompletion eqn:\t\t%u\n", ctx->eqn);
	printf("\tport:\t1\n");
	if (p->gid_index == KR_DEVX_GID_NONE) {
		printf("\t\tsends from:\tno usable GID (no RoCE v2 address on the port)\n");
	} else {
		printf("\t\tsends from:\tGID[%u] (%s), ", p->gid_index,
		       kr_devx_gid_type_str(p->gid_type));
		if (p->roce)
			printf("MAC %02x:%02x:%02x:%02x:%02x:%02x\n", p->addr.mac[0], p->addr.mac[1],
			       p->addr.mac[2], p->addr.mac[3], p->addr.mac[4], p->addr.mac[5]);
		else
			printf("LID 0x%x\n", p->addr.lid);
	}
	/* the table, empty entries skipped (all of it with -v, else up to 16) */
	for (uint32_t i = 0; i < n && (verbose || i < 16); i++) {
		if (ctx->ops->query_gid_entry(ctx, 1, (uint16_t)i, &e))
			continue;
		printf("\t\tGID[%u]:\t\t", i);
		print_gid(e.gid);
		printf("  %s\n", kr_devx_gid_type_str(e.type));
	}
	printf("\n");
}

/* Open name (or reuse an open context of that name) and print it. */
static int show_one(const char *name, struct kr_devx_ctx *open_ctx, bool verbose)
{
	struct kr_devx_ctx *ctx = open_ctx;
	int rc;

	if (!ctx) {
		rc = kr_devx_open(name, &ctx);
		if (rc == -ENODEV || rc == -EINVAL) {
			fprintf(stderr,
				"krdevinfo: no such device '%s' (run krdevinfo to list them)\n",
				name);
			return rc;
		}
		if (rc) {
			fprintf(stderr, "krdevinfo: cannot open %s: %s\n", name, strerror(-rc));
			return rc;
		}
	}
	print_device(ctx, verbose);
	if (!open_ctx)
		kr_devx_close(ctx);
	return 0;
}

int main(int argc, char **argv)
{
	struct kr_devx_dev_info info[KRDEVINFO_MAX_DEVS];
	struct kr_devx_ctx *sim0 = NULL;
	const char *only = NULL;
	bool verbose = false, have_sim = false;
	int opt, n, rc, status = 0;

	while ((opt = getopt(argc, argv, "d:vh")) != -1) {
		switch (opt) {
		case 'd':
			only = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 1;
		}
	}
	if (optind < argc) {
		usage(stderr, argv[0]);
		return 1;
	}

	if (kr_devx_backend_add(&kr_sim_backend)) /* "sim:<host>" names */
		return 1;
	if (only)
		return show_one(only, NULL, verbose) ? 1 : 0;

	n = kr_devx_list(info, KRDEVINFO_MAX_DEVS);
	for (int i = 0; i < n; i++)
		have_sim |= info[i].backend == &kr_sim_backend;
	if (!have_sim) {
		/* No sim host open yet: open the embedded default so one is always listed. */
		rc = kr_devx_open(KRDEVINFO_DEFAULT_SIM, &sim0);
		if (rc) {
			fprintf(stderr, "krdevinfo: cannot open %s: %s\n", KRDEVINFO_DEFAULT_SIM,
				strerror(-rc));
			status = 1;
		}
		n = kr_devx_list(info, KRDEVINFO_MAX_DEVS);
	}
	if (n <= 0) {
		fprintf(stderr, "krdevinfo: no devices found\n");
		status = 1;
	}
	/* A device that fails to open is reported and skipped, as ibv_devinfo does. */
	for (int i = 0; i < n; i++) {
		bool is_sim0 = sim0 && strcmp(info[i].name, sim0->name) == 0;

		show_one(info[i].name, is_sim0 ? sim0 : NULL, verbose);
	}
	kr_devx_close(sim0);
	return status;
}
