/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: which GID a port sends from, over tables read from a sysfs
 * tree as the kernel writes it. On RoCE the RoCE v2 entry of an IPv4
 * address (the lowest such index), else of a global IPv6 address, else of
 * the link-local one, as UCX picks by default; RoCE v1 only when forced
 * (UCX_IB_GID_INDEX, krpoold --gid-index); never an empty entry. On
 * InfiniBand the first IB entry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf_fixture.h"
#include "kr_test.h"

#define N 8

static char g_root[] = "/tmp/krsysfs.XXXXXX";

static int pick(const char *dev, bool roce, int want)
{
	struct kr_devx_gid_entry tab[N];

	for (int i = 0; i < N; i++) {
		int rc = kr_devx_sysfs_gid_entry(g_root, dev, 1, (uint16_t)i, &tab[i]);

		CHECK(rc == 0 || rc == -ENODATA || rc == -EINVAL);
		if (rc)
			memset(&tab[i], 0, sizeof(tab[i]));
	}
	return kr_devx_gid_pick(tab, N, roce, want);
}

static void empty(int i)
{
	char rel[128];

	snprintf(rel, sizeof(rel), CONF_SYSFS_PORT "gids/%d", i);
	conf_sysfs_put(g_root, rel, "0000:0000:0000:0000:0000:0000:0000:0000\n");
}

int main(void)
{
	CHECK(mkdtemp(g_root) != NULL);
	conf_gid_fixture(g_root);

	CHECK_EQ(pick("mlx5_0", true, -1), 3);	      /* v2 IPv4, lowest index of two */
	CHECK_EQ(pick("mlx5_0", true, 2), 2);	      /* forced: RoCE v1 if asked */
	CHECK_ERR(pick("mlx5_0", true, 6), -EINVAL);  /* an empty entry */
	CHECK_ERR(pick("mlx5_0", true, 99), -EINVAL); /* beyond the table */
	empty(3);
	CHECK_EQ(pick("mlx5_0", true, -1), 7); /* the VLAN's IPv4 */
	empty(7);
	CHECK_EQ(pick("mlx5_0", true, -1), 5); /* global IPv6 */
	empty(5);
	CHECK_EQ(pick("mlx5_0", true, -1), 1); /* link-local, v2 */
	empty(1);
	CHECK_ERR(pick("mlx5_0", true, -1), -ENOENT); /* RoCE v1 only: not by itself */
	CHECK_EQ(pick("mlx5_0", true, 0), 0);

	CHECK_EQ(pick("mlx5_1", false, -1), 0);
	CHECK_ERR(pick("mlx5_0", false, -1), -ENOENT); /* no IB entry on an Ethernet port */

	conf_sysfs_rm(g_root);
	KR_PASS("conformance_gid_pick");
}
