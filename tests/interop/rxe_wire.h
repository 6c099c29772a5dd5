/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The side channel of the soft-RoCE interop: a TCP connection over the tap
 * between the host program (rxe_sim_side.c, a devx RC QP on the sim) and
 * the guest's rxe_peer serve (a verbs RC QP of rxe0). The host sends its
 * struct rx_info, the guest brings its QP to RTS and answers with its own;
 * then the host sends commands (struct rx_cmd) and the guest answers each
 * one (struct rx_ans) once its work request completed.
 * Every field is big-endian on the wire (rx_be/rx_host below); the structs
 * have no padding.
 */
#ifndef KR_RXE_WIRE_H
#define KR_RXE_WIRE_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#define RX_PORT	   18515 /* the guest listens here, on its tap address */
#define RX_MEM_LEN (1u << 20)

/* Where a side's RC QP and memory are. */
struct rx_info {
	uint32_t qpn;
	uint32_t psn; /* the first PSN it sends with */
	uint32_t rkey;
	uint32_t len;
	uint64_t addr;
	uint8_t gid[16];
};

/* What the guest's QP does next, on its own memory [off, off + len). */
enum rx_op {
	RX_POST_RECV = 1, /* a receive into off, len bytes; answered at once */
	RX_WAIT_RECV,	  /* the next receive completion: byte_len, imm */
	RX_SEND,	  /* SEND (imm: flags & RX_F_IMM) from off */
	RX_WRITE,	  /* RDMA WRITE (imm: RX_F_IMM) from off to the host's raddr */
	RX_READ,	  /* RDMA READ of the host's raddr into off */
	RX_CAS,		  /* compare a, swap b at raddr; the old value to off and val */
	RX_FAA,		  /* add a at raddr; the old value to off and val */
	RX_QUIT,	  /* the session ends: the QP goes */
};

#define RX_F_IMM 1u

struct rx_cmd {
	uint32_t op;
	uint32_t len;
	uint32_t imm;
	uint32_t flags;
	uint64_t off;
	uint64_t raddr;
	uint64_t a;
	uint64_t b;
};

/* status: 0, or the ibv_wc_status of a failed completion, or -1: no completion in time. */
struct rx_ans {
	int32_t status;
	uint32_t byte_len;
	uint32_t imm;
	uint32_t has_imm;
	uint64_t val;
};

/* All of len bytes to (out) or from fd: 0, or -1 (closed: errno 0; or an I/O error). */
static inline int rx_io(int fd, void *p, size_t len, int out)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = out ? write(fd, (uint8_t *)p + done, len - done)
				: read(fd, (uint8_t *)p + done, len - done);

		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* Each struct is a run of 32- and 64-bit fields: swap them in place. */
static inline void rx_swap32(void *p, unsigned int n, int to_be)
{
	uint32_t *w = p;

	for (unsigned int i = 0; i < n; i++)
		w[i] = to_be ? htobe32(w[i]) : be32toh(w[i]);
}

static inline void rx_swap64(void *p, unsigned int n, int to_be)
{
	uint64_t *w = p;

	for (unsigned int i = 0; i < n; i++)
		w[i] = to_be ? htobe64(w[i]) : be64toh(w[i]);
}

static inline void rx_info_order(struct rx_info *m, int to_be)
{
	rx_swap32(&m->qpn, 4, to_be);
	rx_swap64(&m->addr, 1, to_be);
}

static inline void rx_cmd_order(struct rx_cmd *m, int to_be)
{
	rx_swap32(&m->op, 4, to_be);
	rx_swap64(&m->off, 4, to_be);
}

static inline void rx_ans_order(struct rx_ans *m, int to_be)
{
	rx_swap32(&m->status, 4, to_be);
	rx_swap64(&m->val, 1, to_be);
}

#endif
