/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the keeper's configuration file (krpoold --config),
 * which an operator writes but a mistake in it must not crash the keeper:
 * its bytes as a file (kr_keeper_cfg_read), then the checks krpoold runs
 * before it starts (kr_keeper_cfg_check). What must hold: no crash, no
 * sanitizer report; a refused file says why (a message); a file taken and
 * checked leaves a configuration within the keeper's limits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "keeper/keeper.h"
#include "fuzz_require.h"

static unsigned long read_ok, checked_ok, seen;

void fuzz_summary(void);
void fuzz_summary(void)
{
	printf("pool_cfg: %lu files, %lu read, %lu passed the checks\n", seen, read_ok, checked_ok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kr_keeper_cfg cfg;
	char err[256] = "";
	FILE *f;
	int rc;

	seen++;
	if (!size)
		return 0;
	f = fmemopen((void *)(uintptr_t)data, size, "r");
	if (!f)
		return 0;
	kr_keeper_cfg_default(&cfg);
	rc = kr_keeper_cfg_read(&cfg, f, "fuzz.conf", err, sizeof(err));
	fclose(f);
	require(!rc || (rc == -EINVAL && err[0]));
	if (rc)
		return 0;
	read_ok++;
	if (kr_keeper_cfg_check(&cfg, err, sizeof(err))) {
		require(err[0] != 0);
		return 0;
	}
	checked_ok++;
	require(cfg.tenants >= 1 && cfg.tenants <= KR_POOL_MAX_TENANTS);
	require(cfg.rc_spares <= KR_POOL_MAX_RC && kr_keeper_cfg_dci_slots(&cfg) <= KR_POOL_MAX_DCIS);
	require(memchr(cfg.socket, 0, sizeof(cfg.socket)) &&
		memchr(cfg.device, 0, sizeof(cfg.device)));
	return 0;
}
