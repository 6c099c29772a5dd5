/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper's life: start-up (lock the socket, EAL, device, pool segment,
 * every tenant warm, then the socket), one event loop, and shutdown.
 *
 * The loop is single-threaded (the sim's engine thread, when the device is
 * the sim, is the only other thread that matters): socket events first;
 * background work (DCI resets, rebuilds, heap scrubs) in small budgets
 * between them, so no attach or lease waits behind a firmware command for
 * more than one budget, and none at all while the grow thread (keeper_grow.c)
 * runs a command: the loop only try-locks the device's command lock; a 10 ms tick for the
 * heartbeat, idle connections and the DCTs' receive queues.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_memzone.h>

#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"
#include "sim/sim.h"

#define KR_EV_LISTEN	0ull
#define KR_EV_SIGNAL	1ull
#define KR_EV_TIMER	2ull
#define KR_EV_CONN	3ull
#define KR_EV_ADOPT	4ull
#define KR_EV_KRMIN	5ull
#define KR_EV_DCT	6ull
#define KR_TICK_NS	10000000ll
#define KR_MEM_TICKS	10 /* memory figures every 100 ms */
#define KR_SCRUB_BUDGET 2u

/* systemd Type=notify: one datagram to $NOTIFY_SOCKET; nothing when unset. */
static void keeper_sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t len;
	int fd;

	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
		KR_WARN("pool", "sd_notify(%s): %s", state, strerror(errno));
	close(fd);
}

static void keeper_raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The device named in cfg, else the first mlx5 device, else a sim host. */
static int keeper_open_device(struct kr_keeper *k)
{
	struct kr_devx_dev_info info[4];
	const char *name = k->cfg.device;
	int rc;

	rc = kr_devx_backend_add(&kr_sim_backend); /* "sim:<host>" names */
	if (rc)
		return rc;
	if (!*name) {
		name = kr_devx_hw_list(info, 4) > 0 ? info[0].name : "sim:krpoold";
		snprintf(k->cfg.device, sizeof(k->cfg.device), "%s", name);
	}
	rc = kr_devx_open(name, &k->ctx);
	if (rc) {
		KR_ERR("pool", "cannot open device %s: %s", name, strerror(-rc));
		return rc;
	}
	/*
	 * Jobs and peers address the port open chose, or the one --gid-index names:
	 * a GID that cannot be routed is fatal now. k->ctx->port never changes after.
	 */
	if (k->cfg.gid_index >= 0)
		rc = kr_devx_port_select(k->ctx, 1, k->cfg.gid_index, &k->ctx->port);
	else
		rc = k->ctx->port.gid_index == KR_DEVX_GID_NONE ? -ENOENT : 0;
	if (rc) {
		KR_ERR("pool", "%s port 1: no GID to send from (%s)", name, strerror(-rc));
		return rc;
	}
	if (k->ctx->port.roce && k->cfg.priority > 7) {
		KR_ERR("pool", "%s port 1: --priority %u: an Ethernet priority is 0..7", name,
		       k->cfg.priority);
		return -EINVAL;
	}
	/* every AV, DCT and QP path from the port carries them (kr_devx_dc_av_path...) */
	k->ctx->port.tclass = k->cfg.traffic_class;
	k->ctx->port.sl = k->cfg.priority;
	KR_INFO("pool", "%s port 1: GID index %u (%s), traffic class %u, %s %u", name,
		k->ctx->port.gid_index, kr_devx_gid_type_str(k->ctx->port.gid_type),
		k->ctx->port.tclass, k->ctx->port.roce ? "priority" : "SL", k->ctx->port.sl);
	return 0;
}

static int keeper_events(struct kr_keeper *k)
{
	struct itimerspec its = {.it_interval = {0, KR_TICK_NS}, .it_value = {0, KR_TICK_NS}};
	struct epoll_event ev = {.events = EPOLLIN};
	sigset_t set;

	k->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (k->epoll_fd < 0)
		return -errno;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	k->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	k->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (k->signal_fd < 0 || k->timer_fd < 0 || timerfd_settime(k->timer_fd, 0, &its, NULL))
		return -errno;
	ev.data.u64 = KR_EV_SIGNAL << 32;
	if (epoll_ctl(k->epoll_fd, EPOLL_CTL_ADD, k->signal_fd, &ev))
		return -errno;
	k->adopt_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (k->adopt_fd < 0)
		return -errno;
	ev.data.u64 = KR_EV_ADOPT << 32;
	if (epoll_ctl(k->epoll_fd, EPOLL_CTL_ADD, k->adopt_fd, &ev))
		return -errno;
	ev.data.u64 = KR_EV_TIMER << 32;
	if (epoll_ctl(k->epoll_fd, EPOLL_CTL_ADD, k->timer_fd, &ev))
		return -errno;
	ev.data.u64 = KR_EV_KRMIN << 32; /* slots of jobs that went (keeper_krmin.c) */
	if (k->krmin_fd >= 0 && epoll_ctl(k->epoll_fd, EPOLL_CTL_ADD, k->krmin_fd, &ev))
		return -errno;
	return kr_keeper_dct_events_open(k, KR_EV_DCT); /* pairing messages wake the loop */
}

/*
 * kmod-min, or trusted mode said once. Without the module a job maps its
 * tenant's queues directly and could write another job's; on a ConnectX it
 * would even hold the command fd, to map its UAR page: that takes the
 * operator's --trusted. With the module a job holds no descriptor of the
 * device; each DCI's own UAR page comes with its slot, and --trusted
 * changes nothing.
 */
/*
 * With kmod-min each DCI's holder maps the DCI's UAR page: the keeper must
 * be able to give every slot a page no other QP is on. libmlx5 44 without
 * BlueFlame cannot (one shared non-cached page, no dedicated ones): the
 * keeper then runs trusted, or refuses to start with --require-kmod.
 * 0 (k->krmin_fd may now be -1), or with --require-kmod the allocation's error.
 */
static int keeper_krmin_pages(struct kr_keeper *k)
{
	struct kr_devx_uar *uar;
	int rc = kr_devx_uar_alloc_private(k->ctx, &uar);

	if (!rc) {
		kr_devx_uar_free_private(uar);
		return 0;
	}
	KR_LOG(k->cfg.require_kmod ? KR_LOG_ERR : KR_LOG_WARN, "pool",
	       "%s: no UAR page of its own for each DCI (%s%s): %s", k->ctx->name, strerror(-rc),
	       rc == -EOPNOTSUPP ? ": the device has no BlueFlame and this libmlx5 has no "
				   "dedicated pages, which rdma-core 45 adds"
				 : "",
	       k->cfg.require_kmod ? "--require-kmod cannot keep jobs' doorbells apart"
				   : "running without kmod-min");
	kr_keeper_krmin_close(k);
	return k->cfg.require_kmod ? rc : 0;
}

static int keeper_open_krmin(struct kr_keeper *k)
{
	int rc = kr_keeper_krmin_open(k);

	if (!rc && k->krmin_fd >= 0)
		rc = keeper_krmin_pages(k);
	if (rc)
		return rc;
	if (k->krmin_fd >= 0) {
		if (k->cfg.trusted)
			KR_INFO("pool",
				"--trusted: not needed with kmod-min, jobs get no command fd");
		return 0;
	}
	if (!kr_devx_has(k->ctx, KR_DEVX_BE_UAR_FD) && !k->cfg.trusted) {
		KR_ERR("pool",
		       "%s: without kmod-min jobs can ring doorbells only through the keeper's "
		       "command fd; load krmin.ko, or start with --trusted to hand it to them "
		       "(any job can then issue firmware commands as the keeper)",
		       k->ctx->name);
		return -EPERM;
	}
	k->ctx->share_cmd_fd = !kr_devx_has(k->ctx, KR_DEVX_BE_UAR_FD);
	KR_WARN("pool", "trusted mode: jobs can write each other's queues%s",
		kr_devx_has(k->ctx, KR_DEVX_BE_UAR_FD) ? " (no kmod-min to keep them apart)"
			       : " and issue firmware commands as the keeper");
	return 0;
}

static uint32_t keeper_dirty_dcis(struct kr_keeper *k)
{
	uint32_t n = 0;

	for (uint32_t t = 0; t < k->cfg.tenants; t++)
		for (uint32_t i = 0; i < k->seg->dcis; i++)
			n += kr_seg_dci(k->seg, t, i)->state == KR_SLOT_DIRTY;
	return n;
}

/* What /proc/self/statm says is resident, in bytes (hugetlb pages are not in it). */
static uint64_t keeper_rss_bytes(void)
{
	unsigned long long size, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* kr_keeper_mem_update() - the memory figures krctl shows (pool segment). */
void kr_keeper_mem_update(struct kr_keeper *k)
{
	k->seg->hugepage_bytes = kr_keeper_eal_bytes() + kr_keeper_shm_huge_bytes();
	k->seg->rss_bytes = keeper_rss_bytes();
}

static void keeper_tick(struct kr_keeper *k)
{
	uint64_t ticks;

	if (read(k->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		KR_ERR_RATELIMITED("pool", "timerfd: %s", strerror(errno));
	k->seg->heartbeat_ns = kr_now_ns();
	if (++k->ticks % KR_MEM_TICKS == 0)
		kr_keeper_mem_update(k);
	kr_keeper_conn_expire(k);
	kr_keeper_ready_tick(k);
	for (uint32_t t = 0; t < k->cfg.tenants; t++)
		kr_keeper_tenant_poll_dct(k, &k->tenant[t]);
	kr_keeper_launch_leave_idle(k);
	kr_keeper_meta_tick(k);
}

static void keeper_loop(struct kr_keeper *k)
{
	struct epoll_event ev[64];
	int work = 0;

	while (!k->stop) {
		int n = epoll_wait(k->epoll_fd, ev, 64, work ? 0 : 100);

		if (n < 0 && errno != EINTR) {
			KR_ERR("pool", "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			uint64_t kind = ev[i].data.u64 >> 32;
			uint32_t slot = (uint32_t)ev[i].data.u64;

			if (kind == KR_EV_LISTEN) {
				kr_keeper_accept(k);
			} else if (kind == KR_EV_SIGNAL) {
				struct signalfd_siginfo si;

				if (read(k->signal_fd, &si, sizeof(si)) == sizeof(si)) {
					KR_INFO("pool", "signal %u: stopping", si.ssi_signo);
					k->stop = 1;
				}
			} else if (kind == KR_EV_TIMER) {
				keeper_tick(k);
			} else if (kind == KR_EV_ADOPT) {
				kr_keeper_worker_adopt(k);
			} else if (kind == KR_EV_KRMIN) {
				kr_keeper_krmin_events(k);
			} else if (kind == KR_EV_DCT) {
				kr_keeper_dct_event(k, slot);
			} else if (k->conn[slot]) {
				/* the reply first, then the worker's work */
				kr_keeper_worker_hold();
				kr_keeper_conn_serve(k, slot);
				kr_keeper_worker_release(k);
			}
		}
		work = kr_keeper_scrub_jobs(k, KR_SCRUB_BUDGET);
		if (k->reclaim_t0 && !keeper_dirty_dcis(k)) {
			k->seg->last_reclaim_ns = kr_now_ns() - k->reclaim_t0;
			k->reclaim_t0 = 0;
		}
	}
}

static void keeper_shutdown(struct kr_keeper *k)
{
	kr_keeper_unlisten(k);
	kr_keeper_worker_stop(k); /* before the QPs it resets and builds go */
	kr_keeper_meta_stop(k);	  /* the DC metadata: after the worker (no command runs), before the PDs go */
	kr_keeper_dct_events_close(k);
	if (k->tenant) {
		for (uint32_t t = 0; t < k->cfg.tenants; t++)
			kr_keeper_tenant_destroy(k, &k->tenant[t]);
		free(k->tenant);
		free(k->peers);
	}
	kr_keeper_krmin_close(k); /* every slot is unregistered by now */
	if (k->ctx)
		kr_devx_close(k->ctx);
	if (k->seg_mz)
		rte_memzone_free(k->seg_mz);
	kr_keeper_eal_stop(k);
	if (k->timer_fd >= 0)
		close(k->timer_fd);
	if (k->adopt_fd >= 0)
		close(k->adopt_fd);
	pthread_mutex_destroy(&k->cmd_lock);
	pthread_mutex_destroy(&k->zone_lock);
	if (k->signal_fd >= 0)
		close(k->signal_fd);
	if (k->epoll_fd >= 0)
		close(k->epoll_fd);
	kr_keeper_conns_fini(k);
}

int kr_keeper_run(const struct kr_keeper_cfg *cfg)
{
	struct kr_keeper *k;
	uint64_t t0 = kr_now_ns();
	sigset_t set;
	int rc;

	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->cfg = *cfg;
	k->listen_fd = k->lock_fd = k->epoll_fd = k->signal_fd = k->timer_fd = -1;
	k->adopt_fd = k->work_fd = k->krmin_fd = -1;
	pthread_mutex_init(&k->cmd_lock, NULL);
	pthread_mutex_init(&k->zone_lock, NULL);
	keeper_raise_nofile();
	/* before any thread exists, so the EAL's and the sim's threads inherit it */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	rc = kr_keeper_lock(k);
	if (rc)
		goto out;
	rc = kr_keeper_eal_start(k);
	if (rc)
		goto out;
	rc = keeper_open_device(k);
	if (!rc)
		rc = keeper_open_krmin(k);
	if (rc)
		goto out;
	rc = kr_keeper_seg_init(k);
	if (rc)
		goto out;
	k->seg->keeper_pid = getpid();
	k->seg->start_ns = kr_now_ns();
	if (getrandom(&k->seg->keeper_gen, sizeof(k->seg->keeper_gen), 0) < 0)
		k->seg->keeper_gen = k->seg->start_ns;
	k->tenant = calloc(k->cfg.tenants, sizeof(*k->tenant));
	if (!k->tenant || kr_keeper_conns_init(k)) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t t = 0; t < k->cfg.tenants; t++) {
		k->tenant[t].idx = t;
		rc = kr_keeper_tenant_build(k, &k->tenant[t]);
		if (rc) {
			KR_ERR("pool", "tenant %u: %s", t, strerror(-rc));
			goto out;
		}
	}
	rc = kr_keeper_meta_start(k); /* the DC metadata: MetaServer role, registration */
	if (rc)
		goto out;
	rc = keeper_events(k);
	if (!rc)
		rc = kr_keeper_listen(k);
	if (!rc)
		rc = kr_keeper_worker_start(k);
	if (rc)
		goto out;
	k->seg->heartbeat_ns = kr_now_ns();
	kr_keeper_mem_update(k);
	KR_INFO("pool", "ready on %s: device %s, %u tenants x (%u DCIs, %u RC, %u jobs), %.1f ms",
		k->cfg.socket, k->ctx->name, k->cfg.tenants, k->cfg.dcis, k->cfg.rc_spares,
		k->cfg.jobs, (double)(kr_now_ns() - t0) / 1e6);
	keeper_sd_notify("READY=1");
	if (k->cfg.ready_fd >= 0) {
		if (write(k->cfg.ready_fd, "R", 1) != 1)
			KR_WARN("pool", "cannot report readiness: %s", strerror(errno));
		close(k->cfg.ready_fd);
		k->cfg.ready_fd = -1;
	}
	keeper_loop(k);
	keeper_sd_notify("STOPPING=1");
out:
	keeper_shutdown(k);
	free(k);
	return rc;
}
