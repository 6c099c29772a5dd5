/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Logging for every krcore component. Messages go to stderr with the
 * component name; the level comes from KR_LOG (error, warn, info, debug),
 * default warn. Macros preserve errno. KR_DP_LOG is data-path logging: it
 * compiles away unless meson's -Ddp_debug=true sets KR_DP_DEBUG.
 */
#ifndef KR_LOG_H
#define KR_LOG_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

enum kr_log_level {
	KR_LOG_ERR = 0,
	KR_LOG_WARN = 1,
	KR_LOG_INFO = 2,
	KR_LOG_DEBUG = 3,
};

void kr_log_write(enum kr_log_level lvl, const char *comp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
enum kr_log_level kr_log_level_get(void);
/* True when a rate-limited message may be printed now (at most 10/s per site). */
bool kr_log_ratelimit_ok(uint64_t *last_ns, uint32_t *burst);

#define KR_LOG(lvl, comp, ...)                                                                     \
	do {                                                                                       \
		if ((lvl) <= kr_log_level_get()) {                                                 \
			int kr_saved_errno_ = errno;                                               \
			kr_log_write((lvl), (comp), __VA_ARGS__);                                  \
			errno = kr_saved_errno_;                                                   \
		}                                                                                  \
	} while (0)

#define KR_ERR(comp, ...) KR_LOG(KR_LOG_ERR, comp, __VA_ARGS__)
#define KR_WARN(comp, ...) KR_LOG(KR_LOG_WARN, comp, __VA_ARGS__)
#define KR_INFO(comp, ...) KR_LOG(KR_LOG_INFO, comp, __VA_ARGS__)
#define KR_DBG(comp, ...) KR_LOG(KR_LOG_DEBUG, comp, __VA_ARGS__)

/* For errors inside loops: at most 10 a second from one call site. */
#define KR_ERR_RATELIMITED(comp, ...)                                                              \
	do {                                                                                       \
		static uint64_t kr_rl_last_;                                                       \
		static uint32_t kr_rl_burst_;                                                      \
		if (kr_log_ratelimit_ok(&kr_rl_last_, &kr_rl_burst_))                              \
			KR_ERR(comp, __VA_ARGS__);                                                 \
	} while (0)

/* The same for warnings another process can trigger at will. */
#define KR_WARN_RATELIMITED(comp, ...)                                                             \
	do {                                                                                       \
		static uint64_t kr_rl_last_;                                                       \
		static uint32_t kr_rl_burst_;                                                      \
		if (kr_log_ratelimit_ok(&kr_rl_last_, &kr_rl_burst_))                              \
			KR_WARN(comp, __VA_ARGS__);                                                \
	} while (0)

#ifdef KR_DP_DEBUG
#define KR_DP_LOG(comp, ...) KR_DBG(comp, __VA_ARGS__)
#else
#define KR_DP_LOG(comp, ...)                                                                       \
	do {                                                                                       \
	} while (0)
#endif

#endif /* KR_LOG_H */
