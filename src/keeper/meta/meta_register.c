/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keeper side: this node's registration with every MetaServer replica
 * (--metaserver-addr), kept up, and the list of MetaServers its jobs read.
 *
 * A thread sends REGISTER to each replica every KR_META_REFRESH_MS from one
 * UDP socket. The request is idempotent (the same slots written again), so
 * a MetaServer that restarted has this node back within one period, and
 * each reply is taken as the replica's current address: its table's DCT,
 * VA and rkey all change when it restarts (the table's DC key is derived
 * from the cluster key here, never sent). A launch that comes or leaves
 * wakes the thread for a round at once (kr_meta_reg_own). Replies time the
 * round trip; the list the keeper publishes in every tenant zone
 * (kr_meta_reg_list) holds this keeper's own table first (--metaserver),
 * then the replicas that answer, nearest first, then those that missed
 * KR_META_DOWN_MISSES rounds (jobs try the list in order). Its generation
 * moves only when it changed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "keeper/meta/meta.h"

#define KR_META_REFRESH_MS 250u
#define KR_META_START_MS   1000u /* kr_meta_reg_start waits this long for first replies */

struct kr_meta_reg {
	const struct kr_meta_key *key; /* seals REGISTER, opens replies */
	uint64_t *drops;	       /* the pool segment's meta_drops[] */
	int sock;
	int wake_fd; /* eventfd: register again now */
	uint32_t n;  /* entries: [0] this keeper's own table when self, then replicas */
	bool self;
	struct sockaddr_in addr[KR_DCT_MAX_META];
	struct kr_meta_peer peer[KR_DCT_MAX_META];
	struct kr_meta_msg rep[KR_DCT_MAX_META]; /* last good reply (self: its own) */
	bool have[KR_DCT_MAX_META];
	uint64_t sent_ns[KR_DCT_MAX_META];
	uint32_t round;
	uint32_t order[KR_DCT_MAX_META]; /* as published */
	uint32_t published;		 /* entries published (have[] ones) */
	pthread_t th;
	bool th_ok;
	volatile int stop;
	_Atomic uint32_t answered; /* replicas that answered at least once */
	_Atomic uint32_t rounds;   /* rounds done (their list published) */
	/* this node's REGISTER, as the keeper last set it (kr_meta_reg_own) */
	pthread_mutex_t own_lock;
	struct kr_meta_msg own;
	/* the list as published (kr_meta_reg_list takes it), gen moved under list_lock */
	pthread_mutex_t list_lock;
	struct kr_dct_meta_addr list[KR_DCT_MAX_META];
	uint32_t nlist;
	uint32_t gen;
};

static bool meta_beats(const struct kr_meta_peer *a, const struct kr_meta_peer *b)
{
	int ca = a->self ? 0 : a->rtt_ns && a->misses < KR_META_DOWN_MISSES ? 1 : 2;
	int cb = b->self ? 0 : b->rtt_ns && b->misses < KR_META_DOWN_MISSES ? 1 : 2;

	if (ca != cb)
		return ca < cb;
	return ca == 1 && a->rtt_ns * 3 < b->rtt_ns * 2;
}

void kr_meta_order(const struct kr_meta_peer *p, uint32_t n, const uint32_t *prev,
		       uint32_t *order)
{
	uint32_t len = 0;

	/* insertion in the previous order: stable unless one clearly beats another */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t x = prev[i], at = len;

		while (at > 0 && meta_beats(&p[x], &p[order[at - 1]]))
			at--;
		memmove(&order[at + 1], &order[at], (len - at) * sizeof(*order));
		order[at] = x;
		len++;
	}
}

/* The list (entries with a reply, in order), for the keeper to take: the same for every zone. */
static void meta_publish(struct kr_meta_reg *r)
{
	struct kr_dct_meta_addr list[KR_DCT_MAX_META];
	uint64_t table_key = kr_meta_table_key(r->key);
	uint32_t nm = 0;

	for (uint32_t i = 0; i < r->n; i++) {
		const struct kr_meta_msg *m = &r->rep[r->order[i]];

		if (!r->have[r->order[i]] || !m->table_rkey || !m->table_dctn || !m->ntenants ||
		    m->ntenants > KR_META_MSG_TENANTS || m->nports > KR_META_MSG_PORTS)
			continue;
		list[nm++] = (struct kr_dct_meta_addr){.node_id = m->node_id,
						       .dctn = m->table_dctn,
						       .dc_key = table_key,
						       .va = m->table_va,
						       .rkey = m->table_rkey,
						       .max_nodes = m->max_nodes,
						       .stride = m->ntenants + m->nports};
		list[nm - 1].addr = m->addr;
	}
	pthread_mutex_lock(&r->list_lock);
	memcpy(r->list, list, nm * sizeof(list[0]));
	r->nlist = nm;
	r->gen++;
	pthread_mutex_unlock(&r->list_lock);
}

/* kr_meta_reg_list() - see kr_meta_list_take (meta.h). */
bool kr_meta_reg_list(struct kr_meta_reg *r, uint32_t *gen, struct kr_dct_meta_addr *list,
		      uint32_t *n)
{
	bool changed;

	pthread_mutex_lock(&r->list_lock);
	changed = r->gen != *gen;
	if (changed) {
		memcpy(list, r->list, r->nlist * sizeof(list[0]));
		*n = r->nlist;
		*gen = r->gen;
	}
	pthread_mutex_unlock(&r->list_lock);
	return changed;
}

/*
 * A reply that names a MetaServer we can use (it comes from the network:
 * open and check it). false when dropped (counted) or refused.
 */
static bool meta_reply_ok(const struct kr_meta_reg *r, const struct kr_meta_box *in, ssize_t len,
			  struct kr_meta_msg *m)
{
	enum kr_meta_drop why = KR_META_DROP_BAD;

	if (!kr_meta_open(r->key, in, len, KR_META_REPLY, m, &why) || !m->max_nodes) {
		__atomic_fetch_add(&r->drops[why], 1, __ATOMIC_RELAXED);
		return false;
	}
	return !m->status;
}

/*
 * One round: REGISTER to every replica, replies until all answered or the
 * period ends (*end). Did the list change?
 */
static bool meta_round(struct kr_meta_reg *r, const struct kr_meta_msg *own, uint64_t *end)
{
	bool changed = false, got[KR_DCT_MAX_META] = {false};
	uint32_t order[KR_DCT_MAX_META], left = r->n - r->self;

	r->round++;
	for (uint32_t i = r->self; i < r->n; i++) {
		struct kr_meta_msg req = *own;
		struct kr_meta_box box;
		size_t len;

		req.seq = (r->round << 8) | i;
		req.ts_ns = kr_meta_wall_ns();
		len = kr_meta_seal(r->key, &req, &box);
		r->sent_ns[i] = kr_now_ns();
		if (sendto(r->sock, &box, len, MSG_NOSIGNAL, (struct sockaddr *)&r->addr[i],
			   sizeof(r->addr[i])) < 0 &&
		    errno != ECONNREFUSED)
			KR_WARN_RATELIMITED("dct", "MetaServer registration: %s", strerror(errno));
	}
	*end = kr_now_ns() + KR_META_REFRESH_MS * 1000000ull;
	while (!r->stop && left) {
		struct pollfd pfd[2] = {{.fd = r->sock, .events = POLLIN},
					{.fd = r->wake_fd, .events = POLLIN}};
		uint64_t now = kr_now_ns();
		struct kr_meta_box box;
		struct kr_meta_msg m;
		ssize_t len;
		uint32_t i;

		if (now >= *end || poll(pfd, 2, (int)((*end - now) / 1000000u) + 1) <= 0)
			break;
		if (pfd[1].revents) {
			*end = now; /* a launch came or left: the next round now, not a replica's
				       timeout */
			break;
		}
		len = recv(r->sock, &box, sizeof(box), MSG_DONTWAIT | MSG_TRUNC);
		if (len < 0 || !meta_reply_ok(r, &box, len, &m))
			continue;
		i = m.seq & 0xff;
		if (m.seq >> 8 != (r->round & 0xffffff) || i < r->self || i >= r->n || got[i])
			continue; /* malformed, refused, a duplicate or a late reply */
		left--;
		now = kr_now_ns() - r->sent_ns[i];
		r->peer[i].rtt_ns = r->peer[i].rtt_ns ? (r->peer[i].rtt_ns * 7 + now) / 8 : now;
		r->peer[i].misses = 0;
		got[i] = true;
		if (!r->have[i])
			atomic_fetch_add(&r->answered, 1);
		/* a restarted MetaServer answers with its new table and DCT */
		changed |= !r->have[i] || r->rep[i].table_dctn != m.table_dctn ||
			   r->rep[i].table_va != m.table_va ||
			   r->rep[i].table_rkey != m.table_rkey ||
			   r->rep[i].ntenants != m.ntenants || r->rep[i].nports != m.nports ||
			   r->rep[i].node_id != m.node_id || r->rep[i].max_nodes != m.max_nodes ||
			   memcmp(&r->rep[i].addr, &m.addr, sizeof(m.addr));
		r->rep[i] = m;
		r->have[i] = true;
	}
	for (uint32_t i = r->self; i < r->n; i++)
		if (!got[i] && r->peer[i].misses++ == KR_META_DOWN_MISSES - 1)
			changed = true; /* just went down: to the end of the list */
	kr_meta_order(r->peer, r->n, r->order, order);
	changed |= memcmp(order, r->order, r->n * sizeof(*order)) != 0;
	memcpy(r->order, order, r->n * sizeof(*order));
	return changed;
}

static void *meta_reg_thread(void *arg)
{
	struct kr_meta_reg *r = arg;
	struct kr_meta_msg own;

	while (!r->stop) {
		uint64_t end, now, n;

		pthread_mutex_lock(&r->own_lock); /* launches come and go */
		own = r->own;
		pthread_mutex_unlock(&r->own_lock);
		if (meta_round(r, &own, &end))
			meta_publish(r);
		atomic_fetch_add(&r->rounds, 1);
		/* the rest of the period, or until a launch comes or leaves */
		if (read(r->wake_fd, &n, sizeof(n)) == sizeof(n))
			continue; /* woken during the round: register again at once */
		while (!r->stop && (now = kr_now_ns()) < end) {
			struct pollfd p = {.fd = r->wake_fd, .events = POLLIN};
			uint64_t ms = (end - now) / 1000000u + 1;

			if (poll(&p, 1, (int)(ms < 50 ? ms : 50)) == 1 &&
			    read(r->wake_fd, &n, sizeof(n)) == sizeof(n))
				break;
		}
	}
	return NULL;
}

/*
 * kr_meta_reg_start() - the list with this keeper's own table (self, its
 * REPLY, first when not NULL), and registration of own with every replica
 * of cfg->addrs. Waits up to 1 s for their first answers. 0, -EINVAL (a bad
 * address), -ENOMEM, -errno; *out is set (for kr_meta_reg_stop) once
 * allocated, even on a later error.
 */
int kr_meta_reg_start(const struct kr_meta_cfg *cfg, const struct kr_meta_msg *self,
		      const struct kr_meta_msg *own, struct kr_meta_reg **out)
{
	char *list, *save = NULL;
	struct kr_meta_reg *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	list = strdup(cfg->addrs);
	if (!list) {
		free(r);
		return -ENOMEM;
	}
	r->key = cfg->key;
	r->drops = cfg->drops;
	r->sock = -1;
	r->wake_fd = -1;
	r->own = *own;
	pthread_mutex_init(&r->own_lock, NULL);
	pthread_mutex_init(&r->list_lock, NULL);
	if (self) {
		r->self = true;
		r->peer[0].self = true;
		r->rep[0] = *self;
		r->have[0] = true;
		r->n = 1;
	}
	for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
		if (cfg->listen[0] && !strcmp(a, cfg->listen))
			continue; /* ourselves: already first */
		if (r->n == KR_DCT_MAX_META) {
			KR_WARN("dct", "metaserver-addr: more than %u MetaServers; %s ignored",
				KR_DCT_MAX_META, a);
			continue;
		}
		if (kr_meta_parse_inet(a, &r->addr[r->n])) {
			KR_ERR("dct", "metaserver-addr: '%s' is not IPv4:port", a);
			free(list);
			kr_meta_reg_stop(r);
			return -EINVAL;
		}
		r->n++;
	}
	free(list);
	for (uint32_t i = 0; i < r->n; i++)
		r->order[i] = i;
	meta_publish(r); /* this keeper's own table, before any job attaches */
	*out = r;
	if (r->n == r->self)
		return 0; /* nobody to register with */
	r->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (r->sock < 0)
		return -errno;
	r->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->wake_fd < 0)
		return -errno;
	rc = -pthread_create(&r->th, NULL, meta_reg_thread, r);
	if (rc)
		return rc;
	r->th_ok = true;
	/* the first round's list, so that jobs attaching now find the MetaServers (bounded) */
	for (uint32_t ms = 0; ms < KR_META_START_MS && !atomic_load(&r->rounds); ms += 5)
		usleep(5000);
	if (atomic_load(&r->answered) < r->n - r->self)
		KR_WARN("dct", "%u of %u MetaServers answered at start; registration goes on",
			atomic_load(&r->answered), r->n - r->self);
	return 0;
}

void kr_meta_reg_stop(struct kr_meta_reg *r)
{
	if (!r)
		return;
	r->stop = 1;
	if (r->th_ok)
		pthread_join(r->th, NULL);
	if (r->sock >= 0)
		close(r->sock);
	if (r->wake_fd >= 0)
		close(r->wake_fd);
	pthread_mutex_destroy(&r->own_lock);
	pthread_mutex_destroy(&r->list_lock);
	free(r);
}

/* kr_meta_reg_own() - this node's REGISTER from now on; a round at once. */
void kr_meta_reg_own(struct kr_meta_reg *r, const struct kr_meta_msg *own)
{
	uint64_t one = 1;

	if (!r)
		return;
	pthread_mutex_lock(&r->own_lock);
	r->own = *own;
	pthread_mutex_unlock(&r->own_lock);
	if (r->wake_fd >= 0 && write(r->wake_fd, &one, sizeof(one)) < 0)
		KR_WARN_RATELIMITED("dct", "MetaServer registration wake-up: %s", strerror(errno));
}
