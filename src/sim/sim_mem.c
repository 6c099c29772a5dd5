/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory keys and umems as the engine sees them: a key plus an IO virtual
 * address range becomes a pointer into the owning umem, after the checks
 * hardware makes (key index and variant, PD, access right, range). Called by
 * the engine with sh->lock held; umem addresses belong to the opening process.
 */
#include "sim/sim.h"

/*
 * sim_umem_ptr() - pointer to bytes [offset, offset + len) of a umem, or NULL
 * when umem_id names no umem or the range leaves it.
 */
void *sim_umem_ptr(struct sim_dev *dev, uint32_t umem_id, uint64_t offset, uint64_t len)
{
	struct sim_umem *u = sim_umem_get(dev->sh, umem_id);

	if (!u || !sim_range_fits(offset, len, u->size))
		return NULL;
	return (void *)(uintptr_t)(u->addr + offset);
}

static bool sim_mkey_allows(const struct sim_mkey *mk, uint32_t need, bool remote)
{
	if (remote) {
		if ((need & KR_ACCESS_REMOTE_READ) && !mk->rr)
			return false;
		if ((need & KR_ACCESS_REMOTE_WRITE) && !mk->rw)
			return false;
		if ((need & KR_ACCESS_REMOTE_ATOMIC) && !mk->a)
			return false;
		return true;
	}
	if (need & KR_ACCESS_LOCAL_WRITE)
		return mk->lw;
	return mk->lr;
}

/*
 * sim_mem_translate() - see sim.h. NULL when: the key's index names no MKEY,
 * its low byte is not the MKEY's variant, the MKEY is in another PD, it lacks
 * a right in need, or [addr, addr + len) is not inside [start_addr,
 * start_addr + len) of the key.
 */
void *sim_mem_translate(struct sim_dev *dev, uint32_t key, uint32_t pdn, uint64_t addr,
			uint64_t len, uint32_t need, bool remote)
{
	struct sim_mkey *mk = sim_mkey_get(dev->sh, key >> 8);
	uint64_t off;

	if (!mk || mk->variant != (key & 0xff) || mk->pdn != pdn)
		return NULL;
	if (!sim_mkey_allows(mk, need, remote))
		return NULL;
	if (addr < mk->start_addr)
		return NULL;
	off = addr - mk->start_addr;
	if (!sim_range_fits(off, len, mk->len))
		return NULL;
	/* off + len <= mk->len, and umem_offset + mk->len fit the umem at create */
	return sim_umem_ptr(dev, mk->umem_id, mk->umem_offset + off, len);
}
