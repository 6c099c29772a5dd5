/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GID table as the kernel shows it in sysfs, for the hw backend (the
 * same files rdma-core's ibv_query_gid_ex falls back to):
 *   class/infiniband/<dev>/ports/<p>/gids/<i>             "fe80:0000:...:0001"
 *   class/infiniband/<dev>/ports/<p>/gid_attrs/types/<i>  "IB/RoCE v1" or "RoCE v2";
 *                                                         read fails for an empty entry
 *   class/infiniband/<dev>/ports/<p>/gid_attrs/ndevs/<i>  net device of a RoCE entry
 *   class/infiniband/<dev>/ports/<p>/link_layer           "Ethernet" or "InfiniBand"
 *   class/net/<ndev>/address                              "aa:bb:cc:dd:ee:ff"
 * The root is a parameter so that tests read a fixture tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "devx/devx.h"

/* Read a small sysfs file into buf, newline stripped. 0, -ENOENT, -ENODATA, -EBADMSG. */
static int sysfs_read(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0) /* the kernel answers EINVAL for the type of an empty entry */
		return -ENODATA;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return n ? 0 : -ENODATA;
}

static int parse_gid(const char *s, uint8_t gid[16])
{
	unsigned int w[8];
	int i, used = 0;

	if (sscanf(s, "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x%n", &w[0], &w[1], &w[2], &w[3], &w[4], &w[5],
		   &w[6], &w[7], &used) != 8 ||
	    s[used] != '\0')
		return -EBADMSG;
	for (i = 0; i < 8; i++) {
		gid[2 * i] = (uint8_t)(w[i] >> 8);
		gid[2 * i + 1] = (uint8_t)w[i];
	}
	return 0;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	int i, used = 0;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &used) != 6 ||
	    s[used] != '\0')
		return -EBADMSG;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

int kr_devx_sysfs_gid_entry(const char *sysfs, const char *dev, uint8_t port, uint16_t index,
			    struct kr_devx_gid_entry *entry)
{
	static const uint8_t zero[16];
	char path[512], buf[128], ndev[64];
	bool eth;
	int rc;

	if (!sysfs || !dev || !entry || strchr(dev, '/'))
		return -EINVAL;
	memset(entry, 0, sizeof(*entry));
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/link_layer", sysfs, dev,
		 port);
	rc = sysfs_read(path, buf, sizeof(buf));
	if (rc)
		return rc == -ENODATA ? -EBADMSG : rc;
	if (!strcmp(buf, "Ethernet"))
		eth = true;
	else if (!strcmp(buf, "InfiniBand"))
		eth = false;
	else
		return -EBADMSG;

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/gids/%u", sysfs, dev, port,
		 index);
	rc = sysfs_read(path, buf, sizeof(buf));
	if (rc)
		return rc == -ENOENT ? -EINVAL : rc; /* no such index: beyond the table */
	rc = parse_gid(buf, entry->gid);
	if (rc)
		return rc;
	if (!memcmp(entry->gid, zero, sizeof(zero)))
		return -ENODATA;

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/gid_attrs/types/%u", sysfs,
		 dev, port, index);
	rc = sysfs_read(path, buf, sizeof(buf));
	if (rc)
		return -ENODATA;
	if (!strcmp(buf, "RoCE v2") && eth)
		entry->type = KR_GID_TYPE_ROCE_V2;
	else if (!strcmp(buf, "IB/RoCE v1"))
		entry->type = eth ? KR_GID_TYPE_ROCE_V1 : KR_GID_TYPE_IB;
	else
		return -EBADMSG;
	if (!eth)
		return 0;

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/gid_attrs/ndevs/%u", sysfs,
		 dev, port, index);
	rc = sysfs_read(path, ndev, sizeof(ndev));
	if (rc || strchr(ndev, '/'))
		return -EBADMSG;
	snprintf(path, sizeof(path), "%s/class/net/%s/address", sysfs, ndev);
	rc = sysfs_read(path, buf, sizeof(buf));
	if (rc)
		return -EBADMSG;
	return parse_mac(buf, entry->mac);
}
