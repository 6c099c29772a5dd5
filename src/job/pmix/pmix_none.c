/* SPDX-License-Identifier: BSD-3-Clause */
/* Built without PMIx (meson -Dpmix=disabled, or no libpmix-dev): the calls say so. */
#include <errno.h>
#include <stddef.h>

#include "krcore/krcore.h"

int kr_pmix_exchange(struct kr_ctx *ctx)
{
	(void)ctx;
	return -EOPNOTSUPP;
}

struct kr_vqp *kr_connect_rank(struct kr_ctx *ctx, uint32_t rank,
			       const struct kr_connect_opts *opts)
{
	(void)ctx;
	(void)rank;
	(void)opts;
	errno = EOPNOTSUPP;
	return NULL;
}
