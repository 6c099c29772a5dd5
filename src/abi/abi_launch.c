/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The launch key. A launch is a tenant: the ranks of one launch share a
 * 32-byte launch key (kr_attach_opts.launch_key, else $KR_LAUNCH_KEY, else
 * none: a lone job, whose keeper draws one). A job gives it to its local
 * keeper at attach (kr_launch_key_get: hex parsing only, no libsodium, so a
 * fresh process pays no library start-up), and the keeper derives from it
 * the same values on every node (kr_launch_derive), so no one has to
 * publish them:
 *   - the DC access key of the launch's DC target on every node (secret:
 *     the keeper hands it back to the job, which posts with it), from
 *     libsodium's crypto_kdf (BLAKE2b keyed with the launch key);
 *   - the launch tag, which names the launch in the MetaServer and in krctl
 *     (public), a BLAKE2b hash of the DC key (crypto_generichash): it tells
 *     nothing about the key, and since an attach names a launch only by its
 *     key, no one without the launch key can hold the launch's name on a
 *     node (squat it between two of its ranks).
 *   - the DC key of each binding of a port (kr_port_dc_key): a hash of the
 *     launch's DC key, the port and the binding's generation, so a sender
 *     still aiming at an earlier binding of the port is dropped by the new
 *     binding's DC target, whatever DCT number the device reused.
 * Nothing here is home-made crypto.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "common/kr_log.h"
#include "abi/abi.h"

#define KR_LAUNCH_KDF_CTX    "krlaunch" /* crypto_kdf context: exactly 8 bytes */
#define KR_LAUNCH_SUBKEY_DC  1u
#define KR_LAUNCH_TAG_DOMAIN "krcore-launchtag" /* hashed before the DC key: 16 bytes */
#define KR_PORT_KEY_DOMAIN   "krcore-port-key!" /* hashed before a port's: 16 bytes */

_Static_assert(crypto_kdf_KEYBYTES == KR_LAUNCH_KEY_BYTES, "a launch key is a kdf master key");
_Static_assert(sizeof(KR_LAUNCH_KDF_CTX) - 1 == crypto_kdf_CONTEXTBYTES, "kdf context size");

/* kr_kdf_u64() - see abi.h. */
uint64_t kr_kdf_u64(const uint8_t key[KR_LAUNCH_KEY_BYTES], uint64_t id, const char ctx[8])
{
	uint8_t sub[crypto_kdf_BYTES_MIN];
	uint64_t v;

	crypto_kdf_derive_from_key(sub, sizeof(sub), id, ctx, key);
	memcpy(&v, sub, sizeof(v));
	sodium_memzero(sub, sizeof(sub));
	return v;
}

/*
 * The first 8 bytes of BLAKE2b(domain (16 bytes) || dc_key || extra): what
 * the public tag and a port binding's key are derived by. 0 when libsodium
 * cannot start.
 */
static uint64_t launch_hash(const char *domain, uint64_t dc_key, const void *extra,
			    size_t extra_len)
{
	crypto_generichash_state st;
	uint8_t out[crypto_generichash_BYTES_MIN];
	uint64_t v;

	if (sodium_init() < 0)
		return 0;
	crypto_generichash_init(&st, NULL, 0, sizeof(out));
	crypto_generichash_update(&st, (const uint8_t *)domain, 16);
	crypto_generichash_update(&st, (const uint8_t *)&dc_key, sizeof(dc_key));
	if (extra_len)
		crypto_generichash_update(&st, extra, extra_len);
	crypto_generichash_final(&st, out, sizeof(out));
	memcpy(&v, out, sizeof(v));
	sodium_memzero(&st, sizeof(st));
	sodium_memzero(out, sizeof(out));
	return v;
}

_Static_assert(sizeof(KR_LAUNCH_TAG_DOMAIN) - 1 == 16 && sizeof(KR_PORT_KEY_DOMAIN) - 1 == 16,
	       "hash domains are 16 bytes");

/*
 * The launch tag of the launch whose DC key is dc_key: a hash of it (never
 * 0), so the tag names the launch publicly and says nothing of its key. 0
 * only when libsodium cannot start.
 */
static uint64_t launch_tag_of(uint64_t dc_key)
{
	uint64_t tag;

	if (sodium_init() < 0)
		return 0;
	tag = launch_hash(KR_LAUNCH_TAG_DOMAIN, dc_key, NULL, 0);
	return tag ? tag : 1; /* 0 means "no launch" in the tables (2^-64) */
}

/* kr_port_dc_key() - see abi.h. */
uint64_t kr_port_dc_key(uint64_t dc_key, uint32_t port, uint32_t gen)
{
	uint32_t pg[2] = {port, gen & KR_PORT_GEN_MASK};

	return launch_hash(KR_PORT_KEY_DOMAIN, dc_key, pg, sizeof(pg));
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* kr_launch_parse() - see abi.h. Hex decoding is not crypto: no library start-up for it. */
int kr_launch_parse(const char *hex, uint8_t key[KR_LAUNCH_KEY_BYTES])
{
	if (!hex || strlen(hex) != 2 * KR_LAUNCH_KEY_BYTES)
		return -EINVAL;
	for (uint32_t i = 0; i < KR_LAUNCH_KEY_BYTES; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			explicit_bzero(key, KR_LAUNCH_KEY_BYTES);
			return -EINVAL;
		}
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* kr_launch_key_get() - see abi.h. */
int kr_launch_key_get(const char *hex, uint8_t key[KR_LAUNCH_KEY_BYTES])
{
	const char *from = "kr_attach_opts.launch_key";

	if (!hex) {
		hex = getenv("KR_LAUNCH_KEY");
		from = "KR_LAUNCH_KEY";
	}
	if (!hex || !*hex)
		return 1;
	if (kr_launch_parse(hex, key)) {
		KR_ERR("pool", "%s is not a launch key: 64 hex digits (32 bytes) expected", from);
		return -EINVAL;
	}
	return 0;
}

/* kr_launch_derive() - see abi.h. */
int kr_launch_derive(const uint8_t *key, struct kr_launch *l)
{
	uint8_t drawn[KR_LAUNCH_KEY_BYTES];

	if (sodium_init() < 0)
		return -EIO;
	l->lone = !key;
	if (!key) {
		randombytes_buf(drawn, sizeof(drawn)); /* a launch of its own */
		key = drawn;
	}
	l->dc_key = kr_kdf_u64(key, KR_LAUNCH_SUBKEY_DC, KR_LAUNCH_KDF_CTX);
	l->tag = launch_tag_of(l->dc_key);
	sodium_memzero(drawn, sizeof(drawn));
	return l->tag ? 0 : -EIO;
}

/* kr_launch_init() - see abi.h. */
int kr_launch_init(const char *hex, struct kr_launch *l)
{
	uint8_t key[KR_LAUNCH_KEY_BYTES];
	int rc;

	rc = kr_launch_key_get(hex, key);
	if (rc < 0)
		return rc;
	rc = kr_launch_derive(rc == 1 ? NULL : key, l);
	sodium_memzero(key, sizeof(key));
	return rc;
}
