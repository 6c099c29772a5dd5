/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: the hw backend's GID table reader against a sysfs tree laid
 * out as the kernel lays out /sys/class/infiniband/<dev>/ports/<p>/ (gids/,
 * gid_attrs/types/, gid_attrs/ndevs/, link_layer) and /sys/class/net/, with
 * the entries a ConnectX RoCE port shows: RoCE v1 and v2 twins of a
 * link-local, an IPv4-mapped and a global IPv6 address, an empty slot, a
 * VLAN device's address; and an InfiniBand port. Malformed files are
 * refused, not guessed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf_fixture.h"
#include "devx/devx.h"
#include "kr_test.h"

int main(void)
{
	static const uint8_t v4[16] = {[10] = 0xff, [11] = 0xff, 192, 168, 7, 1};
	static const uint8_t mac[6] = {0x0c, 0x42, 0xa1, 0, 0, 1};
	static const uint8_t vlan_mac[6] = {0x0c, 0x42, 0xa1, 0, 1, 1};
	char root[] = "/tmp/krsysfs.XXXXXX";
	struct kr_devx_gid_entry e;

	CHECK(mkdtemp(root) != NULL);
	conf_gid_fixture(root);

	CHECK_OK(kr_devx_sysfs_gid_entry(root, "mlx5_0", 1, 0, &e));
	CHECK_EQ(e.type, KR_GID_TYPE_ROCE_V1);
	CHECK(e.gid[0] == 0xfe && e.gid[1] == 0x80 && e.gid[15] == 0x01);
	CHECK(!memcmp(e.mac, mac, 6));
	CHECK_OK(kr_devx_sysfs_gid_entry(root, "mlx5_0", 1, 3, &e));
	CHECK_EQ(e.type, KR_GID_TYPE_ROCE_V2);
	CHECK(!memcmp(e.gid, v4, 16));
	CHECK(!memcmp(e.mac, mac, 6));
	CHECK_OK(kr_devx_sysfs_gid_entry(root, "mlx5_0", 1, 5, &e));
	CHECK_EQ(e.type, KR_GID_TYPE_ROCE_V2);
	CHECK(e.gid[0] == 0x20 && e.gid[1] == 0x01);
	CHECK_ERR(kr_devx_sysfs_gid_entry(root, "mlx5_0", 1, 6, &e), -ENODATA);
	CHECK_OK(kr_devx_sysfs_gid_entry(root, "mlx5_0", 1, 7, &e));
	CHECK(!memcmp(e.mac, vlan_mac, 6)); /* the MAC of the entry's own net device */
	CHECK_ERR(kr_devx_sysfs_gid_entry(root, "mlx5_0", 1, 8, &e), -EINVAL); /* beyond */
	CHECK_ERR(kr_devx_sysfs_gid_entry(root, "mlx5_0", 2, 0, &e), -ENOENT); /* no port 2 */
	CHECK_ERR(kr_devx_sysfs_gid_entry(root, "mlx5_9", 1, 0, &e), -ENOENT);
	CHECK_ERR(kr_devx_sysfs_gid_entry(root, "../x", 1, 0, &e), -EINVAL);

	/* InfiniBand: the same "IB/RoCE v1" type string means IB, and there is no MAC */
	CHECK_OK(kr_devx_sysfs_gid_entry(root, "mlx5_1", 1, 0, &e));
	CHECK_EQ(e.type, KR_GID_TYPE_IB);
	CHECK(e.gid[8] == 0x98 && e.gid[15] == 0x56);

	/* malformed files: refused */
	conf_sysfs_put(root, CONF_SYSFS_PORT "gids/0",
		       "fe80::1\n"); /* sysfs always writes eight groups */
	CHECK_ERR(kr_devx_sysfs_gid_entry(root, "mlx5_0", 1, 0, &e), -EBADMSG);
	conf_sysfs_put(root, CONF_SYSFS_PORT "gid_attrs/types/1", "RoCE v3\n");
	CHECK_ERR(kr_devx_sysfs_gid_entry(root, "mlx5_0", 1, 1, &e), -EBADMSG);
	conf_sysfs_put(root, "class/net/ens1f0/address", "0c:42:a1\n");
	CHECK_ERR(kr_devx_sysfs_gid_entry(root, "mlx5_0", 1, 3, &e), -EBADMSG);
	conf_sysfs_put(root, CONF_SYSFS_PORT "link_layer", "Token Ring\n");
	CHECK_ERR(kr_devx_sysfs_gid_entry(root, "mlx5_0", 1, 3, &e), -EBADMSG);

	conf_sysfs_rm(root);
	KR_PASS("conformance_gid_sysfs");
}
