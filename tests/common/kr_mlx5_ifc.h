/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The installed kernel's mlx5_ifc.h, the oracle of the PRM layout and
 * conformance tests (KR_MLX5_IFC_H, set by tests/devx/meson.build), with
 * the few kernel definitions it needs in user space: u8, BIT, and 6.12's
 * DECLARE_FLEX_ARRAY (a flexible array alone in a union member). Include
 * only where KR_MLX5_IFC_H is defined.
 */
#ifndef KR_MLX5_IFC_SHIM_H
#define KR_MLX5_IFC_SHIM_H

#include <stdint.h>

typedef uint8_t u8;
#define BIT(n)	   (1UL << (n))
#define BIT_ULL(n) (1ULL << (n))
/* include/uapi/linux/stddef.h's __DECLARE_FLEX_ARRAY */
#define DECLARE_FLEX_ARRAY(TYPE, NAME)                                                             \
	struct {                                                                                   \
		struct {                                                                           \
		} __empty_##NAME;                                                                  \
		TYPE NAME[];                                                                       \
	}
#include KR_MLX5_IFC_H

#endif
