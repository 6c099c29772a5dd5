/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The installed kernel's mlx5_ifc.h for its enum values (KR_MLX5_IFC_H, set
 * by tests/devx/meson.build). Include only where it is defined.
 */
#ifndef KR_CONF_IFC_H
#define KR_CONF_IFC_H

#include <stdint.h>

typedef uint8_t u8;
#define BIT(n)	   (1UL << (n))
#define BIT_ULL(n) (1ULL << (n))
#include KR_MLX5_IFC_H

#endif
