/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * krctl: what the keeper holds, read from its pool segment (mapped read-only
 * through an observer attach: no job slot, no heap).
 *   krctl [-s SOCKET] [--json] status|pool|leases|jobs
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kr_clock.h"
#include "job/job.h"
#include "keeper/keeper.h"

static const char *slot_state(uint32_t s)
{
	static const char *const names[] = {"empty", "free", "leased", "dirty", "broken"};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static const char *job_state(uint32_t s)
{
	static const char *const names[] = {"free", "attached", "scrubbing"};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static const char *kind_name(uint32_t k)
{
	return k == KR_SLOT_DCI ? "dci" : k == KR_SLOT_RC ? "rc" : k == KR_SLOT_VQP ? "vqp" : "?";
}

/* The port peers address, as a peers file line wants it (<gid> <mac|lid=N>). */
static void print_port(const struct kr_devx_port *p)
{
	char gid[INET6_ADDRSTRLEN];

	if (!inet_ntop(AF_INET6, p->addr.gid, gid, sizeof(gid)))
		snprintf(gid, sizeof(gid), "?");
	if (p->roce)
		printf("port %u: GID index %u (%s) %s %02x:%02x:%02x:%02x:%02x:%02x\n", p->num,
		       p->gid_index, kr_devx_gid_type_str(p->gid_type), gid, p->addr.mac[0],
		       p->addr.mac[1], p->addr.mac[2], p->addr.mac[3], p->addr.mac[4],
		       p->addr.mac[5]);
	else
		printf("port %u: GID index %u (%s) %s lid=0x%x\n", p->num, p->gid_index,
		       kr_devx_gid_type_str(p->gid_type), gid, p->addr.lid);
}

static void show_status(const struct kr_pool_seg *s, bool json)
{
	uint64_t now = kr_now_ns();
	double up = (double)(now - s->start_ns) / 1e9;
	double hb = (double)(now - s->heartbeat_ns) / 1e6;

	if (json) {
		printf(
		    "{\"keeper_pid\": %d, \"device\": \"%s\", \"mode\": \"%s\", \"uptime_s\": "
		    "%.3f, "
		    "\"heartbeat_age_ms\": %.1f, \"tenants\": %u, \"dcis_per_tenant\": %u, "
		    "\"rc_spares_per_tenant\": %u, \"jobs_per_tenant\": %u, "
		    "\"vqps_per_tenant\": %u, \"heap_bytes\": %llu, \"attaches\": %llu, "
		    "\"detaches\": %llu, \"deaths\": %llu, \"reclaims\": %llu, \"resets\": %llu, "
		    "\"idle_returns\": %llu, "
		    "\"refused\": %llu, \"last_reclaim_us\": %.1f, \"gid_index\": %u, "
		    "\"meta_drops\": {\"size\": "
		    "%llu, \"unauthenticated\": %llu, \"malformed\": %llu, \"replayed\": %llu}}\n",
		    s->keeper_pid, s->device, s->trusted ? "trusted" : "kmod", up, hb, s->ntenants,
		    s->dcis, s->rc_spares, s->jobs, s->vqps, (unsigned long long)s->heap_len,
		    (unsigned long long)s->attaches, (unsigned long long)s->detaches,
		    (unsigned long long)s->deaths, (unsigned long long)s->reclaims,
		    (unsigned long long)s->resets, (unsigned long long)s->idle_returns,
		    (unsigned long long)s->refused, (double)s->last_reclaim_ns / 1e3, s->port.gid_index,
		    (unsigned long long)s->meta_drops[0], (unsigned long long)s->meta_drops[1],
		    (unsigned long long)s->meta_drops[2], (unsigned long long)s->meta_drops[3]);
		return;
	}
	printf("keeper pid %d on %s, up %.1f s, heartbeat %.1f ms ago\n", s->keeper_pid, s->device,
	       up, hb);
	if (s->trusted)
		printf("mode: trusted (no kmod-min: jobs can write each other's queues; doorbell "
		       "pages are shared%s)\n",
		       strncmp(s->device, "sim:", 4) ? "; on hardware they hold the command fd"
						     : "");
	else
		printf("mode: kmod (kmod-min fences the queues: each job maps only the DCIs it "
		       "leases)\n");
	print_port(&s->port);
	printf("pool: %u tenants x (%u DCIs, %u RC spares, %u vQPs, %u jobs with heaps of up to "
	       "%llu MB)\n",
	       s->ntenants, s->dcis, s->rc_spares, s->vqps, s->jobs,
	       (unsigned long long)(s->heap_len >> 20));
	printf("attaches %llu, detaches %llu, deaths %llu, leases reclaimed %llu, QP resets %llu, "
	       "DCIs back idle (no reset) %llu, refused %llu, last reclaim %.1f us\n",
	       (unsigned long long)s->attaches, (unsigned long long)s->detaches,
	       (unsigned long long)s->deaths, (unsigned long long)s->reclaims,
	       (unsigned long long)s->resets, (unsigned long long)s->idle_returns,
	       (unsigned long long)s->refused, (double)s->last_reclaim_ns / 1e3);
	printf("MetaServer datagrams dropped: %llu bad size, %llu unauthenticated, %llu malformed, "
	       "%llu replayed\n",
	       (unsigned long long)s->meta_drops[0], (unsigned long long)s->meta_drops[1],
	       (unsigned long long)s->meta_drops[2], (unsigned long long)s->meta_drops[3]);
}

struct counts {
	uint32_t st[5];
};

static void count_slots(const struct kr_pool_slot *first, uint32_t n, struct counts *c)
{
	memset(c, 0, sizeof(*c));
	for (uint32_t i = 0; i < n; i++)
		if (first[i].state < 5)
			c->st[first[i].state]++;
}

/*
 * Each uid's use of the per-uid quotas (krpoold --uid-launches, --uid-ports):
 * the unpinned tenant slots its launches hold and the ports bound on them.
 */
static void show_uids(const struct kr_pool_seg *s, bool json)
{
	uint32_t seen = 0;

	if (json)
		printf("\"uid_quota\": {\"launches\": %u, \"ports\": %u}, \"uids\": [",
		       s->uid_launches, s->uid_ports);
	else
		printf("per uid (root not limited): at most %u launches, %u ports\n",
		       s->uid_launches, s->uid_ports);
	for (uint32_t t = 0; t < s->ntenants; t++) {
		const struct kr_pool_tenant *tr = kr_seg_tenant(s, t);
		uint32_t launches = 0, ports = 0;
		bool first = true;

		if (tr->pinned || !tr->uid_plus1 || !tr->launch_tag)
			continue;
		for (uint32_t u = 0; u < t && first; u++) /* counted with an earlier tenant */
			first = kr_seg_tenant(s, u)->pinned ||
				kr_seg_tenant(s, u)->uid_plus1 != tr->uid_plus1 ||
				!kr_seg_tenant(s, u)->launch_tag;
		if (!first)
			continue;
		for (uint32_t u = t; u < s->ntenants; u++) {
			const struct kr_pool_tenant *o = kr_seg_tenant(s, u);

			if (!o->pinned && o->launch_tag && o->uid_plus1 == tr->uid_plus1) {
				launches++;
				ports += o->ports_bound;
			}
		}
		if (json)
			printf("%s{\"uid\": %u, \"launches\": %u, \"ports\": %u}", seen ? ", " : "",
			       tr->uid_plus1 - 1, launches, ports);
		else
			printf("  uid %-8u launches %u/%u, ports %u/%u\n", tr->uid_plus1 - 1,
			       launches, s->uid_launches, ports, s->uid_ports);
		seen++;
	}
	if (json)
		printf("]");
}

static void show_pool(const struct kr_pool_seg *s, bool json)
{
	if (json)
		printf("{\"tenants\": [");
	else
		printf("%-6s %-6s %-16s %-5s %-7s %-22s %-14s %-14s %-9s %-14s %s\n", "TENANT",
		       "UID", "LAUNCH", "PD", "DCT", "DCI free/leased/dirty", "RC free/leased",
		       "VQP free/leased", "JOBS", "KEY_VIOLATIONS", "LAUNCHES/RENEWALS");
	for (uint32_t t = 0; t < s->ntenants; t++) {
		const struct kr_pool_tenant *tr = kr_seg_tenant(s, t);
		struct counts d, r, v;
		char uid[16];

		count_slots(kr_seg_dci(s, t, 0), s->dcis, &d);
		count_slots(kr_seg_rc(s, t, 0), s->rc_spares, &r);
		count_slots(kr_seg_vqp(s, t, 0), s->vqps, &v);
		if (tr->uid_plus1)
			snprintf(uid, sizeof(uid), "%u", tr->uid_plus1 - 1);
		else
			snprintf(uid, sizeof(uid), "-");
		if (json) {
			printf(
			    "%s{\"tenant\": %u, \"uid\": %s, \"pinned\": %s, \"pdn\": %u, "
			    "\"dctn\": %u, \"dci\": {\"free\": %u, \"leased\": %u, \"dirty\": %u, "
			    "\"broken\": %u, \"free_ring\": %u, \"built\": %u, \"max\": %u}, "
			    "\"rc\": {\"free\": %u, \"leased\": %u, \"dirty\": %u, \"built\": %u, "
			    "\"max\": %u}, \"vqp\": {\"free\": %u, \"leased\": %u}, "
			    "\"growing\": %s, \"jobs_attached\": %u, \"jobs_free\": %u, "
			    "\"dct_recvs\": %llu, \"dct_events\": %u, \"dct_key_violations\": %llu, "
			    "\"launch\": \"%016llx\", \"launches\": %llu, \"renewals\": %llu}",
			    t ? ", " : "", t, tr->uid_plus1 ? uid : "null",
			    tr->pinned ? "true" : "false", tr->pdn, tr->dctn, d.st[KR_SLOT_FREE],
			    d.st[KR_SLOT_LEASED], d.st[KR_SLOT_DIRTY], d.st[KR_SLOT_BROKEN],
			    kr_keeper_seg_ring_count(s, tr->dci_ring_off),
			    s->dcis - d.st[KR_SLOT_EMPTY], s->dcis, r.st[KR_SLOT_FREE],
			    r.st[KR_SLOT_LEASED], r.st[KR_SLOT_DIRTY],
			    s->rc_spares - r.st[KR_SLOT_EMPTY], s->rc_spares, v.st[KR_SLOT_FREE],
			    v.st[KR_SLOT_LEASED], tr->growing ? "true" : "false", tr->jobs_attached,
			    kr_keeper_seg_ring_count(s, tr->job_ring_off),
			    (unsigned long long)tr->dct_recvs, tr->dct_events,
			    (unsigned long long)tr->dct_key_violations,
			    (unsigned long long)tr->launch_tag, (unsigned long long)tr->launches,
			    (unsigned long long)tr->renewals);
		} else {
			char dci[32], rc[24], vqp[24], jobs[16], launch[20], lr[48];

			snprintf(dci, sizeof(dci), "%u/%u/%u", d.st[KR_SLOT_FREE],
				 d.st[KR_SLOT_LEASED], d.st[KR_SLOT_DIRTY]);
			snprintf(rc, sizeof(rc), "%u/%u", r.st[KR_SLOT_FREE], r.st[KR_SLOT_LEASED]);
			snprintf(vqp, sizeof(vqp), "%u/%u", v.st[KR_SLOT_FREE],
				 v.st[KR_SLOT_LEASED]);
			snprintf(jobs, sizeof(jobs), "%u/%u", tr->jobs_attached, s->jobs);
			if (tr->launch_tag)
				snprintf(launch, sizeof(launch), "%016llx",
					 (unsigned long long)tr->launch_tag);
			else
				snprintf(launch, sizeof(launch), "-");
			snprintf(lr, sizeof(lr), "%llu/%llu", (unsigned long long)tr->launches,
				 (unsigned long long)tr->renewals);
			printf("%-6u %-6s %-16s %-5u 0x%-5x %-22s %-14s %-14s %-9s %-14llu %s\n", t,
			       uid, launch, tr->pdn, tr->dctn, dci, rc, vqp, jobs,
			       (unsigned long long)tr->dct_key_violations, lr);
		}
	}
	if (json)
		printf("], ");
	show_uids(s, json);
	if (json)
		printf(", \"hugepages_mib\": %.1f, \"rss_mib\": %.1f}\n",
		       (double)s->hugepage_bytes / (1 << 20), (double)s->rss_bytes / (1 << 20));
	else
		printf("memory: %.1f MiB of hugepages (reserved or in use), %.1f MiB resident\n",
		       (double)s->hugepage_bytes / (1 << 20), (double)s->rss_bytes / (1 << 20));
}

/* An RC slot's pairing (keeper_pair.c): "up" is a promoted vQP's, "peer" another keeper's pair. */
static const char *link_name(uint32_t kind, uint32_t link)
{
	static const char *const names[] = {"parked", "pairing", "up", "failed", "peer"};

	if (kind != KR_SLOT_RC)
		return "-";
	return link < sizeof(names) / sizeof(names[0]) ? names[link] : "?";
}

static void show_leases(const struct kr_pool_seg *s, bool json)
{
	bool first = true;
	uint32_t n = 0;

	if (json)
		printf("{\"leases\": [");
	else
		printf("%-6s %-4s %-5s %-8s %-7s %-8s %-6s %-6s %-7s\n", "TENANT", "KIND", "SLOT",
		       "QPN", "JOB", "PID", "GEN", "STATE", "LINK");
	for (uint32_t t = 0; t < s->ntenants; t++) {
		for (uint32_t kind = KR_SLOT_DCI; kind <= KR_SLOT_VQP; kind++) {
			uint32_t cnt = kind == KR_SLOT_DCI  ? s->dcis
				       : kind == KR_SLOT_RC ? s->rc_spares
							    : s->vqps;

			for (uint32_t i = 0; i < cnt; i++) {
				const struct kr_pool_slot *sl =
				    kind == KR_SLOT_DCI	 ? kr_seg_dci(s, t, i)
				    : kind == KR_SLOT_RC ? kr_seg_rc(s, t, i)
							 : kr_seg_vqp(s, t, i);

				if (sl->state != KR_SLOT_LEASED)
					continue;
				n++;
				/* job -1: the keeper holds it for another keeper's pair */
				if (json)
					printf(
					    "%s{\"tenant\": %u, \"kind\": \"%s\", \"slot\": %u, "
					    "\"qpn\": %u, \"job\": %d, \"pid\": %d, \"gen\": %u, "
					    "\"link\": \"%s\"}",
					    first ? "" : ", ", t, kind_name(kind), i, sl->qpn,
					    (int)sl->owner_job - 1, sl->owner_pid, sl->gen,
					    link_name(kind, sl->link));
				else
					printf("%-6u %-4s %-5u 0x%-6x %-7d %-8d %-6u %-6s %-7s\n",
					       t, kind_name(kind), i, sl->qpn,
					       (int)sl->owner_job - 1, sl->owner_pid, sl->gen,
					       slot_state(sl->state), link_name(kind, sl->link));
				first = false;
			}
		}
	}
	if (json)
		printf("], \"count\": %u}\n", n);
	else
		printf("%u leases held\n", n);
}

static void show_jobs(const struct kr_pool_seg *s, bool json)
{
	uint64_t now = kr_now_ns();
	bool first = true;

	if (json)
		printf("{\"jobs\": [");
	else
		printf("%-5s %-6s %-10s %-8s %-6s %-6s %-5s %-5s %-4s %-9s %-7s %-9s\n", "JOB",
		       "TENANT", "STATE", "PID", "UID", "GEN", "DCIS", "VQPS", "MRS", "AGE_S",
		       "ERRORS", "THROTTLES");
	for (uint32_t j = 0; j < s->ntenants * s->jobs; j++) {
		const struct kr_pool_job *jb = kr_seg_job(s, j);
		double age = jb->attach_ns ? (double)(now - jb->attach_ns) / 1e9 : 0;

		if (jb->state == KR_JOB_FREE)
			continue;
		if (json)
			printf("%s{\"job\": %u, \"tenant\": %u, \"state\": \"%s\", \"pid\": %d, "
			       "\"uid\": %u, \"gen\": %u, \"dci_leases\": %u, \"vqp_leases\": %u, "
			       "\"mrs\": %u, \"age_s\": %.3f, \"remote_errors\": %u, "
			       "\"throttles\": %u, \"throttled\": %s}",
			       first ? "" : ", ", j, jb->tenant, job_state(jb->state), jb->pid,
			       jb->uid, jb->gen, jb->dci_leases, jb->vqp_leases, jb->mrs, age,
			       jb->remote_errors, jb->throttles,
			       jb->throttle_until_ns > now ? "true" : "false");
		else
			printf("%-5u %-6u %-10s %-8d %-6u %-6u %-5u %-5u %-4u %-9.1f %-7u %-9u\n",
			       j, jb->tenant, job_state(jb->state), jb->pid, jb->uid, jb->gen,
			       jb->dci_leases, jb->vqp_leases, jb->mrs, age, jb->remote_errors,
			       jb->throttles);
		first = false;
	}
	if (json)
		printf("], ");
	show_uids(s, json);
	if (json)
		printf(", \"hugepages_mib\": %.1f, \"rss_mib\": %.1f}\n",
		       (double)s->hugepage_bytes / (1 << 20), (double)s->rss_bytes / (1 << 20));
	else
		printf("memory: %.1f MiB of hugepages (reserved or in use), %.1f MiB resident\n",
		       (double)s->hugepage_bytes / (1 << 20), (double)s->rss_bytes / (1 << 20));
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: krctl [-s SOCKET] [--json] status|pool|leases|jobs\n"
		"  -s, --socket PATH  keeper socket (default $KR_KEEPER_SOCKET or %s)\n"
		"  -j, --json         JSON instead of tables\n"
		"  -h, --help         this text\n",
		KR_POOL_DEFAULT_SOCKET);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *sock = NULL, *cmd;
	struct kr_ctx *ctx;
	bool json = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "s:jh", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			sock = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind];
	if (strcmp(cmd, "status") && strcmp(cmd, "pool") && strcmp(cmd, "leases") &&
	    strcmp(cmd, "jobs")) {
		fprintf(stderr, "krctl: unknown command '%s'\n", cmd);
		usage(stderr);
		return 2;
	}
	ctx = kr_job_observe(sock);
	if (!ctx) {
		fprintf(stderr, "krctl: cannot reach the keeper at %s: %s\n",
			sock ? sock : kr_msg_socket_default(), strerror(errno));
		return 1;
	}
	if (!strcmp(cmd, "status"))
		show_status(ctx->seg, json);
	else if (!strcmp(cmd, "pool"))
		show_pool(ctx->seg, json);
	else if (!strcmp(cmd, "leases"))
		show_leases(ctx->seg, json);
	else
		show_jobs(ctx->seg, json);
	kr_detach(ctx);
	return 0;
}
