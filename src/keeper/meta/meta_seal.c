/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MetaServer datagrams on the wire: a struct kr_meta_msg, sealed with the
 * cluster key when the keepers have one (--cluster-key), in the clear
 * otherwise (loopback and test networks).
 *
 * Sealed: libsodium's crypto_secretbox (XSalsa20-Poly1305) with a random
 * nonce per datagram. It authenticates (a registration without the key
 * cannot write a record, a forged reply cannot point a keeper at another
 * table) and hides the DC keys a registration and a reply carry from anyone
 * on the network. Replays: a sealed message carries its sender's wall clock;
 * the MetaServer takes one only within KR_META_SKEW_NS of its own and only
 * newer than the last one of that node (meta_server.c), a keeper only the
 * reply to its current round (meta_register.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "keeper/meta/meta.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

_Static_assert(sizeof(((struct kr_meta_box *)0)->nonce) == crypto_secretbox_NONCEBYTES,
	       "kr_meta_box.nonce");
_Static_assert(sizeof(((struct kr_meta_box *)0)->mac) == crypto_secretbox_MACBYTES,
	       "kr_meta_box.mac");
_Static_assert(sizeof(((struct kr_meta_key *)0)->k) == crypto_secretbox_KEYBYTES, "kr_meta_key.k");

uint64_t kr_meta_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* kr_meta_table_key() - see meta.h. */
uint64_t kr_meta_table_key(const struct kr_meta_key *key)
{
	_Static_assert(sizeof(key->k) == crypto_kdf_KEYBYTES, "a cluster key is a kdf master key");
	return key->set ? kr_kdf_u64(key->k, 1, "krmetatb") : 0;
}

/* kr_meta_key_load() - see meta.h. */
int kr_meta_key_load(const char *path, struct kr_meta_key *key)
{
	char buf[2 * sizeof(key->k) + 2];
	size_t bin_len = 0;
	struct stat st;
	ssize_t n;
	int fd, rc = 0;

	memset(key, 0, sizeof(*key));
	if (sodium_init() < 0)
		return -EIO;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		KR_ERR("dct", "cluster-key %s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		KR_ERR("dct", "cluster-key %s: must be a regular file of ours, mode 0600", path);
		close(fd);
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	/* 64 hex digits, a newline allowed */
	if (n == (ssize_t)sizeof(buf) - 1 && buf[n - 1] == '\n')
		n--;
	if (n != 2 * (ssize_t)sizeof(key->k)) {
		KR_ERR("dct", "cluster-key %s: expected %zu hex digits (openssl rand -hex 32)",
		       path, 2 * sizeof(key->k));
		rc = -EINVAL;
	}
	if (!rc && (sodium_hex2bin(key->k, sizeof(key->k), buf, (size_t)n, NULL, &bin_len, NULL) ||
		    bin_len != sizeof(key->k))) {
		KR_ERR("dct", "cluster-key %s: not hex", path);
		rc = -EINVAL;
	}
	sodium_memzero(buf, sizeof(buf));
	if (rc)
		sodium_memzero(key, sizeof(*key));
	else
		key->set = true;
	return rc;
}

/* kr_meta_seal() - see meta.h. */
size_t kr_meta_seal(const struct kr_meta_key *key, const struct kr_meta_msg *m,
		    struct kr_meta_box *out)
{
	if (!key || !key->set) {
		memcpy(out, m, sizeof(*m));
		return sizeof(*m);
	}
	out->magic = KR_META_BOX_MAGIC;
	out->rsvd = 0;
	randombytes_buf(out->nonce, sizeof(out->nonce));
	crypto_secretbox_detached(out->sealed, out->mac, (const unsigned char *)m, sizeof(*m),
				  out->nonce, key->k);
	return sizeof(*out);
}

/* kr_meta_open() - see meta.h. */
bool kr_meta_open(const struct kr_meta_key *key, const struct kr_meta_box *in, ssize_t len,
		  uint16_t type, struct kr_meta_msg *m, enum kr_meta_drop *why)
{
	bool sealed = key && key->set;
	uint64_t now;

	/* recv with MSG_TRUNC gives the datagram's true length */
	if ((!sealed && len == (ssize_t)sizeof(*in) && in->magic == KR_META_BOX_MAGIC) ||
	    (sealed && len == (ssize_t)sizeof(*m) && in->magic == KR_META_MSG_MAGIC)) {
		*why = KR_META_DROP_AUTH; /* sealed and we have no key, or the other way round */
		return false;
	}
	if (len != (ssize_t)(sealed ? sizeof(*in) : sizeof(*m))) {
		*why = KR_META_DROP_SIZE;
		return false;
	}
	if (!sealed) {
		memcpy(m, in, sizeof(*m));
	} else if (in->magic != KR_META_BOX_MAGIC ||
		   crypto_secretbox_open_detached((unsigned char *)m, in->sealed, in->mac,
						  sizeof(in->sealed), in->nonce, key->k)) {
		*why = KR_META_DROP_AUTH;
		return false;
	}
	if (m->magic != KR_META_MSG_MAGIC || m->version != KR_META_MSG_VERSION || m->type != type ||
	    !m->node_id || m->ntenants > KR_META_MSG_TENANTS || m->nports > KR_META_MSG_PORTS) {
		*why = KR_META_DROP_BAD;
		return false;
	}
	now = kr_meta_wall_ns();
	if (sealed && (m->ts_ns + KR_META_SKEW_NS < now || m->ts_ns > now + KR_META_SKEW_NS)) {
		*why = KR_META_DROP_REPLAY; /* held back, or replayed later */
		return false;
	}
	return true;
}
