/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DCI's request tables (ent and redo, 208 KiB for the keeper's 256 WQEBBs): one
 * anonymous mapping each, so a fresh process's first connect clears none of
 * it (the kernel hands zero pages as they are first touched; a calloc
 * cleared them all). Mapping and unmapping cost 1.5 and 2.7 us here, more
 * than the rest of a thread's first connect, so the process keeps a few
 * mappings that DCIs gave back and hands them to the next: nothing in them
 * is read before it is written (entries between head and tail, redo below
 * nredo), so they need no clearing. The first DCI of a process takes
 * tables in the library's own zero pages (bss) when its queue has the
 * keeper's usual size: a fresh process's first connect maps nothing. Fresh
 * tables get the page of their first entry populated (kr_populate.h): the
 * first post writes it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "common/kr_populate.h"
#include "job/virtqp/virtqp.h"

#define KR_VQ_TABLES_KEPT 8

/* Bytes of the request tables for cnt requests: ent and redo, cnt each, whole pages. */
#define VQ_TABLES_LEN(cnt) ((2 * (size_t)(cnt) * sizeof(struct kr_vq_ent) + 4095) & ~(size_t)4095)

static struct {
	pthread_mutex_t lock;
	uint32_t n;
	size_t len[KR_VQ_TABLES_KEPT];
	void *p[KR_VQ_TABLES_KEPT];
	bool first_taken;
	bool first_used; /* g_first_tables was taken before: its first page is in */
} g_tables = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The first DCI's tables, for the keeper's usual queue size (zero pages until touched). */
static struct kr_vq_ent g_first_tables[VQ_TABLES_LEN(KR_POOL_DCI_WQEBB) / sizeof(struct kr_vq_ent)]
    __attribute__((aligned(4096)));

/* A kept mapping of len bytes, or NULL; *fresh when none of its pages was touched yet. */
static void *tables_take(size_t len, bool *fresh)
{
	void *p = NULL;

	pthread_mutex_lock(&g_tables.lock);
	if (!g_tables.first_taken && len <= sizeof(g_first_tables)) {
		g_tables.first_taken = true;
		*fresh = !g_tables.first_used;
		g_tables.first_used = true;
		p = g_first_tables;
	}
	for (uint32_t i = 0; !p && i < g_tables.n; i++) {
		if (g_tables.len[i] != len)
			continue;
		p = g_tables.p[i];
		g_tables.n--;
		g_tables.p[i] = g_tables.p[g_tables.n];
		g_tables.len[i] = g_tables.len[g_tables.n];
		break;
	}
	pthread_mutex_unlock(&g_tables.lock);
	return p;
}

/* Keep p (len bytes) for the next DCI; false when enough are kept. */
static bool tables_keep(void *p, size_t len)
{
	bool kept = false;

	pthread_mutex_lock(&g_tables.lock);
	if (p == (void *)g_first_tables) {
		g_tables.first_taken = false;
		kept = true;
	} else if (g_tables.n < KR_VQ_TABLES_KEPT) {
		g_tables.p[g_tables.n] = p;
		g_tables.len[g_tables.n] = len;
		g_tables.n++;
		kept = true;
	}
	pthread_mutex_unlock(&g_tables.lock);
	return kept;
}

/* kr_vq_tables_alloc() - see virtqp.h. */
int kr_vq_tables_alloc(struct kr_vq_dci *d)
{
	size_t len = VQ_TABLES_LEN(d->cnt);
	bool fresh = false;
	void *p = tables_take(len, &fresh);

	if (!p) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		fresh = true;
	}
	if (p == MAP_FAILED)
		return -ENOMEM;
	if (fresh) /* the first post writes entry 0: one page populated, not a fault */
		(void)kr_populate(p, sizeof(struct kr_vq_ent), 1);
	d->ent = p;
	d->redo = d->ent + d->cnt;
	return 0;
}

/* kr_vq_tables_free() - see virtqp.h. */
void kr_vq_tables_free(struct kr_vq_dci *d)
{
	size_t len = VQ_TABLES_LEN(d->cnt);

	if (d->ent && !tables_keep(d->ent, len))
		munmap(d->ent, len);
	d->ent = d->redo = NULL;
}
