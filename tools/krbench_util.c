/* SPDX-License-Identifier: BSD-3-Clause */
/* krbench: clock, percentiles, finding krpoold, the cold connect loop (see krbench.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <krcore/krcore.h>
#include <sodium.h>

#include "krbench.h"
#include "job/virtqp/virtqp.h"

const char *g_profile = "none";

double kb_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int kb_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double kb_pct(const double *sorted, int n, double p)
{
	int i = (int)(p / 100.0 * (n - 1) + 0.5);

	return sorted[i < n ? i : n - 1];
}

double kb_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), kb_cmp_double);
	return v[n / 2];
}

void kb_p50_p99(double *lat, int n, double *p50, double *p99)
{
	qsort(lat, (size_t)n, sizeof(*lat), kb_cmp_double);
	*p50 = kb_pct(lat, n, 50);
	*p99 = kb_pct(lat, n, 99);
}

int kb_tool_path(const char *name, const char *given, char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n;

	if (given) {
		if (strlen(given) >= len)
			return -ENAMETOOLONG;
		strcpy(buf, given);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -errno;
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	if ((size_t)snprintf(buf, len, "%s/%s", self, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

struct kr_vqp *kb_connect_wait(struct kr_ctx *ctx, uint32_t node,
			       const struct kr_connect_opts *opts, double *t0)
{
	struct kr_vqp *v;

	for (double tw = kb_now_us();;) {
		*t0 = kb_now_us();
		v = kr_connect(ctx, node, opts);
		if (v || errno != ENOSPC || kb_now_us() - tw > 5e6)
			return v;
		usleep(100); /* the keeper's worker still resets the DCIs given back */
	}
}

int kb_cold_loop(struct kr_ctx *ctx, uint32_t node, double *lat, int n, uint32_t spares,
		 double *p50, double *p99)
{
	kr_vq_spare_max(spares);
	for (int i = 0; i < n; i++) {
		struct kr_vqp *v;
		double t0;

		v = kb_connect_wait(ctx, node, NULL, &t0);
		lat[i] = kb_now_us() - t0;
		if (!v) {
			fprintf(stderr, "krbench: cold kr_connect: %s\n", strerror(errno));
			return 1;
		}
		kr_disconnect(v);
	}
	kb_p50_p99(lat, n, p50, p99);
	return 0;
}

struct kr_ctx *kb_attach_node(const char *sock)
{
	return kb_attach_node_dcis(sock, 0);
}

struct kr_ctx *kb_attach_node_dcis(const char *sock, uint32_t dcis_per_thread)
{
	struct kr_attach_opts o = {.socket_path = sock, .dcis_per_thread = dcis_per_thread};
	struct kr_ctx *ctx = NULL;

	/* a keeper answers its socket before it takes attaches */
	for (double t0 = kb_now_us(); !ctx && kb_now_us() - t0 < 10e6;)
		if (!(ctx = kr_attach(&o)))
			usleep(10000);
	if (!ctx)
		fprintf(stderr, "krbench: attach to %s: %s\n", sock, strerror(errno));
	return ctx;
}

/* kb_host_cpu() - see krbench.h. */
bool kb_host_cpu(struct kr_ctx *ctx)
{
	struct kr_ctx_attr a;

	return !kr_ctx_query(ctx, &a) && (a.flags & KR_CTX_F_HOST_CPU);
}

int kb_launch_env(void)
{
	uint8_t key[32];
	char hex[2 * sizeof(key) + 1];

	if (getenv("KR_LAUNCH_KEY"))
		return 0;
	if (sodium_init() < 0)
		return -1;
	randombytes_buf(key, sizeof(key));
	sodium_bin2hex(hex, sizeof(hex), key, sizeof(key));
	return setenv("KR_LAUNCH_KEY", hex, 0);
}
