/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The provider libfabric loads: fi_prov_ini() hands it the provider's name,
 * version and entry points (fi_provider(7): an external provider is a
 * lib<name>-fi.so exporting fi_prov_ini).
 */
#include "ofi/ofi.h"

static void kr_ofi_cleanup(void)
{
}

struct fi_provider kr_ofi_prov = {
    .name = KR_OFI_NAME,
    .version = KR_OFI_VERSION,
    .fi_version = KR_OFI_API,
    .getinfo = kr_ofi_getinfo,
    .fabric = kr_ofi_fabric,
    .cleanup = kr_ofi_cleanup,
};

FI_EXT_INI
{
	return &kr_ofi_prov;
}
