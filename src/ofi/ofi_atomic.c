/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Atomic operations as the target applies them (ofi_rma.c serves the
 * request under the domain's lock, so the target's provider is the only
 * writer of the operation's memory while it runs: every operation of the
 * domain's peers is atomic with respect to every other). Datatypes: the
 * signed and unsigned integers of 8 to 64 bits, float and double (no
 * complex, long double or 128-bit types). Operations (fi_atomic(3)):
 * MIN, MAX, SUM, PROD, ATOMIC_WRITE on all of them; LOR, LAND, LXOR, BOR,
 * BAND, BXOR on the integers; ATOMIC_READ as a fetch; the CSWAP family as
 * a compare (MSWAP on the integers). Values are read and written with
 * memcpy: an address need not be aligned.
 */
#include <stdbool.h>
#include <string.h>

#include "ofi/ofi.h"

static bool op_fits(enum fi_op op, bool integer, uint32_t kind)
{
	switch (op) {
	case FI_MIN:
	case FI_MAX:
	case FI_SUM:
	case FI_PROD:
	case FI_ATOMIC_WRITE:
		return kind != KR_OFI_ATOMIC_COMPARE;
	case FI_LOR:
	case FI_LAND:
	case FI_LXOR:
	case FI_BOR:
	case FI_BAND:
	case FI_BXOR:
		return integer && kind != KR_OFI_ATOMIC_COMPARE;
	case FI_ATOMIC_READ:
		return kind == KR_OFI_ATOMIC_FETCH;
	case FI_CSWAP:
	case FI_CSWAP_NE:
	case FI_CSWAP_LE:
	case FI_CSWAP_LT:
	case FI_CSWAP_GE:
	case FI_CSWAP_GT:
		return kind == KR_OFI_ATOMIC_COMPARE;
	case FI_MSWAP:
		return integer && kind == KR_OFI_ATOMIC_COMPARE;
	default:
		return false;
	}
}

/* The integer-only operations on one value (v: what memory holds, o: the operand). */
#define INT_OPS(v, o)                                                                              \
	case FI_LOR:                                                                               \
		v = (v || o);                                                                      \
		break;                                                                             \
	case FI_LAND:                                                                              \
		v = (v && o);                                                                      \
		break;                                                                             \
	case FI_LXOR:                                                                              \
		v = (!v != !o);                                                                    \
		break;                                                                             \
	case FI_BOR:                                                                               \
		v |= o;                                                                            \
		break;                                                                             \
	case FI_BAND:                                                                              \
		v &= o;                                                                            \
		break;                                                                             \
	case FI_BXOR:                                                                              \
		v ^= o;                                                                            \
		break;                                                                             \
	case FI_MSWAP:                                                                             \
		v = (o & c) | (v & ~c);                                                            \
		break;

/* One function per datatype T: INTEGER says whether the integer-only operations exist. */
#define APPLY_FN(name, T, INTEGER_OPS)                                                             \
	static void name(enum fi_op op, uint8_t *dst, const uint8_t *opnd, const uint8_t *cmp,     \
			 uint8_t *old, size_t count)                                               \
	{                                                                                          \
		for (size_t i = 0; i < count; i++) {                                               \
			T v, o = 0, c = 0;                                                         \
                                                                                                   \
			memcpy(&v, dst + i * sizeof(T), sizeof(T));                                \
			if (old)                                                                   \
				memcpy(old + i * sizeof(T), &v, sizeof(T));                        \
			if (opnd)                                                                  \
				memcpy(&o, opnd + i * sizeof(T), sizeof(T));                       \
			if (cmp)                                                                   \
				memcpy(&c, cmp + i * sizeof(T), sizeof(T));                        \
			switch (op) {                                                              \
			case FI_MIN:                                                               \
				if (o < v)                                                         \
					v = o;                                                     \
				break;                                                             \
			case FI_MAX:                                                               \
				if (o > v)                                                         \
					v = o;                                                     \
				break;                                                             \
			case FI_SUM:                                                               \
				v = (T)(v + o);                                                    \
				break;                                                             \
			case FI_PROD:                                                              \
				v = (T)(v * o);                                                    \
				break;                                                             \
			case FI_ATOMIC_WRITE:                                                      \
				v = o;                                                             \
				break;                                                             \
			case FI_CSWAP:                                                             \
				if (c == v)                                                        \
					v = o;                                                     \
				break;                                                             \
			case FI_CSWAP_NE:                                                          \
				if (c != v)                                                        \
					v = o;                                                     \
				break;                                                             \
			case FI_CSWAP_LE:                                                          \
				if (c <= v)                                                        \
					v = o;                                                     \
				break;                                                             \
			case FI_CSWAP_LT:                                                          \
				if (c < v)                                                         \
					v = o;                                                     \
				break;                                                             \
			case FI_CSWAP_GE:                                                          \
				if (c >= v)                                                        \
					v = o;                                                     \
				break;                                                             \
			case FI_CSWAP_GT:                                                          \
				if (c > v)                                                         \
					v = o;                                                     \
				break;                                                             \
				INTEGER_OPS                                                        \
			default: /* FI_ATOMIC_READ: only the old value */                          \
				continue;                                                          \
			}                                                                          \
			memcpy(dst + i * sizeof(T), &v, sizeof(T));                                \
		}                                                                                  \
	}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfloat-equal"
APPLY_FN(apply_i8, int8_t, INT_OPS(v, o))
APPLY_FN(apply_u8, uint8_t, INT_OPS(v, o))
APPLY_FN(apply_i16, int16_t, INT_OPS(v, o))
APPLY_FN(apply_u16, uint16_t, INT_OPS(v, o))
APPLY_FN(apply_i32, int32_t, INT_OPS(v, o))
APPLY_FN(apply_u32, uint32_t, INT_OPS(v, o))
APPLY_FN(apply_i64, int64_t, INT_OPS(v, o))
APPLY_FN(apply_u64, uint64_t, INT_OPS(v, o))
APPLY_FN(apply_float, float, )
APPLY_FN(apply_double, double, )
#pragma GCC diagnostic pop

typedef void apply_fn(enum fi_op op, uint8_t *dst, const uint8_t *opnd, const uint8_t *cmp,
		      uint8_t *old, size_t count);

/* The datatypes applied: size, whether integer operations exist, the function. */
static const struct {
	uint8_t size;
	bool integer;
	apply_fn *apply;
} g_types[] = {
    [FI_INT8] = {1, true, apply_i8},	  [FI_UINT8] = {1, true, apply_u8},
    [FI_INT16] = {2, true, apply_i16},	  [FI_UINT16] = {2, true, apply_u16},
    [FI_INT32] = {4, true, apply_i32},	  [FI_UINT32] = {4, true, apply_u32},
    [FI_INT64] = {8, true, apply_i64},	  [FI_UINT64] = {8, true, apply_u64},
    [FI_FLOAT] = {4, false, apply_float}, [FI_DOUBLE] = {8, false, apply_double},
};

/* kr_ofi_atomic_size() - see ofi.h. */
size_t kr_ofi_atomic_size(enum fi_datatype dt, enum fi_op op, uint32_t kind)
{
	if ((unsigned int)dt >= sizeof(g_types) / sizeof(g_types[0]) || !g_types[dt].apply ||
	    kind > KR_OFI_ATOMIC_COMPARE)
		return 0;
	return op_fits(op, g_types[dt].integer, kind) ? g_types[dt].size : 0;
}

/* kr_ofi_atomic_apply() - see ofi.h. */
void kr_ofi_atomic_apply(enum fi_datatype dt, enum fi_op op, uint8_t *dst, const uint8_t *opnd,
			 const uint8_t *cmp, uint8_t *old, size_t count)
{
	g_types[dt].apply(op, dst, opnd, cmp, old, count);
}

/* kr_ofi_query_atomic() - see ofi.h: fi_query_atomic(3). */
int kr_ofi_query_atomic(struct fid_domain *dom, enum fi_datatype dt, enum fi_op op,
			struct fi_atomic_attr *attr, uint64_t flags)
{
	uint32_t kind = KR_OFI_ATOMIC_WRITE;
	size_t sz;

	(void)dom;
	if (!attr)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC))
		return -FI_EBADFLAGS;
	if ((flags & FI_FETCH_ATOMIC) && (flags & FI_COMPARE_ATOMIC))
		return -FI_EINVAL;
	if (flags & FI_FETCH_ATOMIC)
		kind = KR_OFI_ATOMIC_FETCH;
	else if (flags & FI_COMPARE_ATOMIC)
		kind = KR_OFI_ATOMIC_COMPARE;
	sz = kr_ofi_atomic_size(dt, op, kind);
	if (!sz)
		return -FI_EOPNOTSUPP;
	attr->size = sz;
	attr->count = kr_ofi_atomic_max(sz, kind);
	return 0;
}
