/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: a job's view of a ConnectX shared by a --trusted keeper
 * (devx_hw_share.c), with a memfd standing in for the command fd. The view
 * maps exactly the page at the mmap offset the keeper reported, write-only,
 * and a doorbell is one 8-byte store at the reported register offset (0x800
 * on a non-cached DEVX UAR page); another page id, a register offset outside
 * the page or unaligned, is refused; every firmware command on the view is
 * -EPERM. A job of a kmod-min keeper gets no fd: its view maps nothing by
 * itself (-EPERM) and rings a DCI's page where the module mapped it (a
 * page-aligned stand-in here), at the register offset the keeper sent.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devx/devx.h"
#include "kr_test.h"

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct kr_devx_uar_ref ref = {.page_id = 17, .reg_off = 0x800, .mmap_off = (uint64_t)page};
	struct kr_devx_uar_ref bad = ref;
	struct kr_devx_ctx *view;
	struct kr_devx_uar *uar;
	uint8_t in[16] = {0}, out[16];
	uint64_t *p;
	int fd = memfd_create("uar", MFD_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_OK(ftruncate(fd, 3 * page));
	bad.reg_off = (uint32_t)page - 4;
	CHECK_ERR(kr_devx_import("mlx5_0", fd, &bad, &view), -EINVAL);
	bad.reg_off = 0x804;
	CHECK_ERR(kr_devx_import("mlx5_0", fd, &bad, &view), -EINVAL);
	CHECK_ERR(kr_devx_import("mlx5_0", fd, NULL, &view), -EINVAL);
	CHECK_OK(kr_devx_import("mlx5_0", fd, &ref, &view));
	CHECK(view->backend == &kr_devx_hw_view_backend);
	CHECK(!strcmp(view->name, "mlx5_0"));
	CHECK_ERR(kr_devx_uar_import(view, 18, &uar), -EINVAL);
	CHECK_OK(kr_devx_uar_import(view, 17, &uar));
	CHECK((uint8_t *)uar->reg_addr - (uint8_t *)uar->base_addr == 0x800);

	view->ops->doorbell(uar, 0x1122334455667788ull);
	p = mmap(NULL, (size_t)(3 * page), PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	for (long i = 0; i < 3 * page / 8; i++)
		CHECK_EQ(p[i], i == (page + 0x800) / 8 ? 0x1122334455667788ull : 0);
	munmap(p, (size_t)(3 * page));

	CHECK_ERR(view->ops->general_cmd(view, in, sizeof(in), out, sizeof(out)), -EPERM);
	CHECK_ERR(view->ops->query_eqn(view, 0, &(uint32_t){0}), -EPERM);
	kr_devx_uar_unimport(uar);
	kr_devx_close(view); /* closes fd */
	CHECK_ERR(fcntl(fd, F_GETFD), -1);

	/* a name longer than a ctx holds is cut, never overrun */
	{
		char longname[100];

		memset(longname, 'x', sizeof(longname) - 1);
		memcpy(longname, "mlx5_", 5);
		longname[sizeof(longname) - 1] = '\0';
		CHECK_OK(kr_devx_import(longname, -1, &ref, &view));
		CHECK_EQ(strlen(view->name), sizeof(view->name) - 1);
		CHECK(!memcmp(view->name, longname, sizeof(view->name) - 1));
		kr_devx_close(view);
	}

	/* fenced: no descriptor, UAR pages only as kmod-min maps them */
	CHECK_OK(kr_devx_import("mlx5_0", -1, &ref, &view));
	CHECK_ERR(kr_devx_uar_import(view, 17, &uar), -EPERM);
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_ERR(kr_devx_uar_wrap(view, 17, (uint8_t *)p + 8, 0x800, 0, &uar), -EINVAL);
	CHECK_ERR(kr_devx_uar_wrap(view, 17, p, (uint32_t)page - 4, 0, &uar), -EINVAL);
	CHECK_ERR(kr_devx_uar_wrap(view, 17, p, (uint32_t)page, 0, &uar), -EINVAL);
	CHECK_ERR(kr_devx_uar_wrap(view, 17, p, 0x804, 0, &uar), -EINVAL);
	CHECK_OK(kr_devx_uar_wrap(view, 17, p, 0x800, 0, &uar));
	CHECK_EQ(uar->page_id, 17);
	CHECK_EQ(kr_devx_uar_reg_off(uar), 0x800);
	view->ops->doorbell(uar, 0x8877665544332211ull);
	for (long i = 0; i < page / 8; i++)
		CHECK_EQ(p[i], i == 0x800 / 8 ? 0x8877665544332211ull : 0);
	kr_devx_uar_unimport(uar);
	kr_devx_close(view);
	munmap(p, (size_t)page);
	KR_PASS("conformance_hw_view");
}
