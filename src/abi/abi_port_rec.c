/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A bound port's record (keeper_port.c's bindings) on the wire and in a
 * MetaServer row, after the node's tenant slots: its version byte is one a
 * launch record never has, so a reader tells the two kinds apart in one
 * row, and the same CRC32C and slot seqlock guard it (abi_slot.c).
 */
#include <errno.h>
#include <string.h>

#include "abi/abi.h"

int kr_dct_port_encode(const struct kr_dct_port_rec *rec, struct kr_dct_port_wire *w)
{
	if (!rec || !w || !rec->port || rec->port > 0xffff || !rec->dctn || rec->dctn > 0xffffffu ||
	    !rec->nslots || rec->nslots > 1024 || !rec->tag)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->version = KR_DCT_PORT_VERSION;
	w->port = (uint16_t)rec->port;
	w->node_id = rec->node_id;
	w->dctn = rec->dctn;
	w->nslots = rec->nslots;
	w->tag = rec->tag;
	w->table_va = rec->table_va;
	w->table_rkey = rec->table_rkey;
	w->gen = rec->gen;
	w->crc = kr_dct_crc32c(w, offsetof(struct kr_dct_port_wire, crc));
	return 0;
}

int kr_dct_port_decode(const struct kr_dct_port_wire *w, struct kr_dct_port_rec *rec)
{
	if (w->version == 0 && w->crc == 0)
		return -ENOENT;
	if (w->version != KR_DCT_PORT_VERSION ||
	    w->crc != kr_dct_crc32c(w, offsetof(struct kr_dct_port_wire, crc)) || !w->port ||
	    !w->dctn || w->dctn > 0xffffffu || !w->nslots || w->nslots > 1024 || (w->table_va & 7))
		return -EBADMSG;
	*rec = (struct kr_dct_port_rec){.node_id = w->node_id,
					.port = w->port,
					.dctn = w->dctn,
					.nslots = w->nslots,
					.tag = w->tag,
					.table_va = w->table_va,
					.table_rkey = w->table_rkey,
					.gen = w->gen};
	return 0;
}
