/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a job accepts of a keeper's attach reply (kr_attach_reply_check),
 * fed replies no keeper of ours sends. Good: a trusted sim keeper's (the
 * tenant's UAR page and the regions), a fenced sim keeper's (zone head
 * only, the DCIs' register offset and block size), a fenced ConnectX
 * keeper's (no UAR descriptor, BlueFlame buffers). Refused (-EPROTO): no
 * UAR descriptor from a sim or unfenced keeper, a UAR descriptor index past
 * the ones sent, a region sharing it; a DCI block from an unfenced keeper,
 * none, or not page-sized from a fenced one; a register offset past the
 * page or unaligned; BlueFlame buffers from the sim or an unfenced keeper,
 * not 64-byte multiples, or not both inside the page; a fenced reply whose
 * zone regions are writable. A negative status comes back as sent.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "kr_test.h"
#include "job/job.h"
#include "keeper/keeper.h"

#define SEG_VA	0x100000000000ull
#define ZONE_VA 0x110000000000ull
#define HEAP_VA 0x120000000000ull

static struct kr_msg_attach_reply R;

static void region(uint32_t i, uint8_t role, uint64_t va, uint32_t prot, uint32_t fd)
{
	R.region[i] = (struct kr_msg_region){
	    .va = va, .len = KR_POOL_PAGE, .off = 0, .fd_index = fd, .prot = prot};
	R.region_role[i] = role;
}

/* A trusted sim keeper's reply: UAR fd 0, regions on fd 1. */
static void trusted_sim(void)
{
	memset(&R, 0, sizeof(R));
	R.dev_wake_page = 1;
	strcpy(R.dev_name, "sim:a");
	R.nfds = 2;
	R.uar_fd_index = 0;
	R.seg_va = SEG_VA;
	R.seg_len = KR_POOL_PAGE;
	R.zone_va = ZONE_VA;
	R.zone_len = 2ull * KR_POOL_PAGE;
	R.heap_va = HEAP_VA;
	R.heap_len = KR_POOL_PAGE;
	R.heap_max = 4 * KR_POOL_PAGE;
	R.nregions = 4;
	region(0, KR_REGION_SEG, SEG_VA, PROT_READ, 1);
	region(1, KR_REGION_ZONE, ZONE_VA, PROT_READ, 1);
	region(2, KR_REGION_ZONE, ZONE_VA + KR_POOL_PAGE, PROT_READ | PROT_WRITE, 1);
	region(3, KR_REGION_HEAP, HEAP_VA, PROT_READ | PROT_WRITE, 1);
}

/* Fenced: the zone's head only (read-only), the DCI geometry. */
static void fenced_sim(void)
{
	trusted_sim();
	R.fenced = 1;
	R.nregions = 3;
	region(2, KR_REGION_HEAP, HEAP_VA, PROT_READ | PROT_WRITE, 1);
	R.uar_ref.reg_off = 0x800;
	R.dci_block = 3 * KR_KRMIN_PAGE;
	R.rc_block = 4 * KR_KRMIN_PAGE;
}

/* A fenced ConnectX keeper: no UAR descriptor, regions on fd 0, BlueFlame. */
static void fenced_hw(void)
{
	fenced_sim();
	R.dev_wake_page = 0;
	strcpy(R.dev_name, "mlx5_0");
	R.nfds = 1;
	R.uar_fd_index = KR_ATTACH_NO_FD;
	for (uint32_t i = 0; i < R.nregions; i++)
		R.region[i].fd_index = 0;
	R.dci_bf_size = 256;
}

int main(void)
{
	trusted_sim();
	CHECK_OK(kr_attach_reply_check(&R, 2, false));
	CHECK_EQ(kr_attach_zone_head_len(&R), 0); /* not fenced: the whole zone is sent */
	R.status = -EPERM;
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPERM);
	trusted_sim();
	R.uar_fd_index = KR_ATTACH_NO_FD; /* an unfenced keeper always sends the page */
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	trusted_sim();
	R.uar_fd_index = 2; /* past what came */
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	trusted_sim();
	R.region[0].fd_index = 0; /* a region on the UAR's descriptor */
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	trusted_sim();
	R.dci_block = 3 * KR_KRMIN_PAGE; /* only a fenced keeper's */
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	trusted_sim();
	R.rc_block = 4 * KR_KRMIN_PAGE; /* likewise */
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	trusted_sim();
	R.dci_bf_size = 256;
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	/* the heap's place: holds what is backed, whole pages, not past the largest heap */
	trusted_sim();
	R.heap_max = KR_POOL_PAGE;
	CHECK_OK(kr_attach_reply_check(&R, 2, false));
	R.heap_max = 0;
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	R.heap_max = 2 * KR_POOL_PAGE + 4096;
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	R.heap_max = ((uint64_t)KR_POOL_MAX_HEAP_MB << 20) + KR_POOL_PAGE;
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	trusted_sim();
	R.heap_va = ~(uint64_t)(KR_POOL_PAGE - 1); /* the place would wrap */
	R.region[3].va = R.heap_va;
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);

	fenced_sim();
	CHECK_OK(kr_attach_reply_check(&R, 2, false));
	CHECK_EQ(kr_attach_zone_head_len(&R), KR_POOL_PAGE);
	R.uar_fd_index = KR_ATTACH_NO_FD; /* the sim's jobs wake its engine through it */
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	fenced_sim();
	R.dci_block = 0;
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	R.dci_block = 3 * KR_KRMIN_PAGE + 64;
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	fenced_sim();
	R.rc_block = 4 * KR_KRMIN_PAGE + 64; /* whole pages */
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	R.rc_block = 0; /* a keeper with no RC slot */
	CHECK_OK(kr_attach_reply_check(&R, 2, false));
	fenced_sim();
	R.uar_ref.reg_off = KR_KRMIN_PAGE - 4;
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	R.uar_ref.reg_off = 0x804;
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	fenced_sim();
	R.dci_bf_size = 256; /* the sim has BlueFlame, as a ConnectX */
	CHECK_OK(kr_attach_reply_check(&R, 2, false));
	R.dci_bf_size = 100; /* not whole 64-byte units */
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);
	fenced_sim();
	R.region[1].prot = PROT_READ | PROT_WRITE; /* the zone head is read-only */
	CHECK_ERR(kr_attach_reply_check(&R, 2, false), -EPROTO);

	fenced_hw();
	CHECK_OK(kr_attach_reply_check(&R, 1, false));
	R.dci_bf_size = 100; /* not whole 64-byte units */
	CHECK_ERR(kr_attach_reply_check(&R, 1, false), -EPROTO);
	R.dci_bf_size = 1280; /* 0x800 + 2 x 1280 is past the page */
	CHECK_ERR(kr_attach_reply_check(&R, 1, false), -EPROTO);
	R.dci_bf_size = 1024; /* both buffers end at the page's end */
	CHECK_OK(kr_attach_reply_check(&R, 1, false));
	fenced_hw();
	R.fenced = 0; /* no descriptor from an unfenced ConnectX keeper */
	R.dci_block = 0;
	R.rc_block = 0;
	R.dci_bf_size = 0;
	CHECK_ERR(kr_attach_reply_check(&R, 1, false), -EPROTO);
	KR_PASS("attach_reply");
}
