/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/kr_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static int kr_log_cached = -1;

enum kr_log_level kr_log_level_get(void)
{
	int lvl = __atomic_load_n(&kr_log_cached, __ATOMIC_RELAXED);
	const char *env;

	if (lvl >= 0)
		return (enum kr_log_level)lvl;
	env = getenv("KR_LOG");
	lvl = KR_LOG_WARN;
	if (env) {
		if (!strcasecmp(env, "error"))
			lvl = KR_LOG_ERR;
		else if (!strcasecmp(env, "info"))
			lvl = KR_LOG_INFO;
		else if (!strcasecmp(env, "debug"))
			lvl = KR_LOG_DEBUG;
	}
	__atomic_store_n(&kr_log_cached, lvl, __ATOMIC_RELAXED);
	return (enum kr_log_level)lvl;
}

void kr_log_write(enum kr_log_level lvl, const char *comp, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};
	char line[512];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "krcore %s %s: ", comp, names[lvl]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}

bool kr_log_ratelimit_ok(uint64_t *last_ns, uint32_t *burst)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now - *last_ns > 1000000000ull) {
		*last_ns = now;
		*burst = 0;
	}
	return (*burst)++ < 10;
}
