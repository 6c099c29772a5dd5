/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a job checks of the keeper's attach reply before it maps anything:
 * every region one page at a page-aligned address from a descriptor it was
 * sent, each role's regions exactly covering the range the reply names, and
 * the fields that only some keepers may send (no UAR descriptor, the DCI
 * block and BlueFlame buffers of a fenced keeper) only from those. Kept
 * apart from the attach itself so that it can be fed any reply.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "job/job.h"

static bool region_ok(const struct kr_msg_region *r, unsigned int nfds)
{
	return r->fd_index < nfds && r->len == KR_POOL_PAGE && !(r->va & (KR_POOL_PAGE - 1)) &&
	       !(r->off & (KR_POOL_PAGE - 1)) &&
	       (r->prot == PROT_READ || r->prot == (PROT_READ | PROT_WRITE));
}

/* The range of role's regions: lowest va, total length, all contiguous. */
static int reply_range(const struct kr_msg_attach_reply *rep, uint8_t role, uint64_t va,
		       uint64_t len)
{
	uint64_t got = 0;

	for (uint32_t i = 0; i < rep->nregions; i++) {
		const struct kr_msg_region *r = &rep->region[i];

		if (rep->region_role[i] != role)
			continue;
		if (r->va < va || r->va - va + r->len > len)
			return -EPROTO;
		got += r->len;
	}
	return got == len ? 0 : -EPROTO;
}

/* kr_attach_zone_head_len() - see job.h. */
uint64_t kr_attach_zone_head_len(const struct kr_msg_attach_reply *rep)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < rep->nregions; i++) {
		if (rep->region_role[i] != KR_REGION_ZONE)
			continue;
		if (rep->region[i].prot != PROT_READ)
			return 0; /* fails the range check */
		n += rep->region[i].len;
	}
	return n < rep->zone_len ? n : 0;
}

/* kr_attach_reply_check() - see job.h. */
int kr_attach_reply_check(const struct kr_msg_attach_reply *rep, unsigned int nfds, bool observer)
{
	if (rep->status)
		return rep->status < 0 && rep->status > -4096 ? rep->status : -EPROTO;
	if (observer) /* status only: nothing to map */
		return rep->nfds || nfds || rep->nregions ||
			       rep->seg_len < sizeof(struct kr_pool_seg) ||
			       rep->seg_len > KR_OBSERVE_MAX_SEG
			   ? -EPROTO
			   : 0;
	/* no UAR descriptor only from a fenced ConnectX keeper (keeper_server.c) */
	if (rep->nfds != nfds || !nfds || rep->nregions > KR_ATTACH_MAX_REGIONS ||
	    (rep->uar_fd_index >= nfds &&
	     (rep->uar_fd_index != KR_ATTACH_NO_FD || !rep->fenced || rep->dev_wake_page)) ||
	    !memchr(rep->dev_name, 0, sizeof(rep->dev_name)))
		return -EPROTO;
	for (uint32_t i = 0; i < rep->nregions; i++)
		if (!region_ok(&rep->region[i], nfds) ||
		    rep->region[i].fd_index == rep->uar_fd_index)
			return -EPROTO;
	if (reply_range(rep, KR_REGION_SEG, rep->seg_va, rep->seg_len))
		return -EPROTO;
	if (rep->fenced > 1 || (!rep->fenced && (rep->dci_block || rep->rc_block)) ||
	    (rep->fenced && (rep->uar_ref.reg_off > KR_KRMIN_PAGE - 8 || rep->uar_ref.reg_off & 7 ||
			     !rep->dci_block || rep->dci_block & (KR_KRMIN_PAGE - 1) ||
			     rep->rc_block & (KR_KRMIN_PAGE - 1))) ||
	    /* BlueFlame only on a fenced keeper's own DCI pages, both buffers in the page */
	    (rep->dci_bf_size &&
	     (!rep->fenced || rep->dci_bf_size & 63 ||
	      rep->uar_ref.reg_off + 2ull * rep->dci_bf_size > KR_KRMIN_PAGE)) ||
	    reply_range(rep, KR_REGION_ZONE, rep->zone_va,
			rep->fenced ? kr_attach_zone_head_len(rep) : rep->zone_len) ||
	    reply_range(rep, KR_REGION_HEAP, rep->heap_va, rep->heap_len) || !rep->heap_len ||
	    /* the reserved place: whole pages, holding what is backed, not wrapping */
	    rep->heap_max < rep->heap_len || rep->heap_max & (KR_POOL_PAGE - 1) ||
	    rep->heap_max > ((uint64_t)KR_POOL_MAX_HEAP_MB << 20) ||
	    rep->heap_va + rep->heap_max < rep->heap_va)
		return -EPROTO;
	return 0;
}
