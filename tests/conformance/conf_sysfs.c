/* SPDX-License-Identifier: BSD-3-Clause */
/* A sysfs tree for the GID table reader: see conf_fixture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf_fixture.h"
#include "kr_test.h"

void conf_sysfs_put(const char *root, const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	fputs(text, f);
	fclose(f);
}

static void entry(const char *root, int i, const char *gid, const char *type, const char *ndev)
{
	char rel[128];

	snprintf(rel, sizeof(rel), CONF_SYSFS_PORT "gids/%d", i);
	conf_sysfs_put(root, rel, gid);
	if (type) {
		snprintf(rel, sizeof(rel), CONF_SYSFS_PORT "gid_attrs/types/%d", i);
		conf_sysfs_put(root, rel, type);
	}
	if (ndev) {
		snprintf(rel, sizeof(rel), CONF_SYSFS_PORT "gid_attrs/ndevs/%d", i);
		conf_sysfs_put(root, rel, ndev);
	}
}

void conf_gid_fixture(const char *root)
{
	conf_sysfs_put(root, CONF_SYSFS_PORT "link_layer", "Ethernet\n");
	conf_sysfs_put(root, "class/net/ens1f0/address", "0c:42:a1:00:00:01\n");
	conf_sysfs_put(root, "class/net/ens1f0.100/address", "0c:42:a1:00:01:01\n");
	entry(root, 0, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001\n", "IB/RoCE v1\n", "ens1f0\n");
	entry(root, 1, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001\n", "RoCE v2\n", "ens1f0\n");
	entry(root, 2, "0000:0000:0000:0000:0000:ffff:c0a8:0701\n", "IB/RoCE v1\n", "ens1f0\n");
	entry(root, 3, "0000:0000:0000:0000:0000:ffff:c0a8:0701\n", "RoCE v2\n", "ens1f0\n");
	entry(root, 4, "2001:0db8:0000:0000:0000:0000:0000:0001\n", "IB/RoCE v1\n", "ens1f0\n");
	entry(root, 5, "2001:0db8:0000:0000:0000:0000:0000:0001\n", "RoCE v2\n", "ens1f0\n");
	entry(root, 6, "0000:0000:0000:0000:0000:0000:0000:0000\n", NULL, NULL); /* empty */
	entry(root, 7, "0000:0000:0000:0000:0000:ffff:0a00:6401\n", "RoCE v2\n", "ens1f0.100\n");
	conf_sysfs_put(root, CONF_SYSFS_IBP "link_layer", "InfiniBand\n");
	conf_sysfs_put(root, CONF_SYSFS_IBP "gids/0", "fe80:0000:0000:0000:9803:9b03:0012:3456\n");
	conf_sysfs_put(root, CONF_SYSFS_IBP "gid_attrs/types/0", "IB/RoCE v1\n");
}

void conf_sysfs_rm(const char *root)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK_EQ(system(cmd), 0);
}
