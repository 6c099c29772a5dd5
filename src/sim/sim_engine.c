/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine of one simulated host: the thread that does what a ConnectX's
 * packet processors do (with the UDP receive thread, which runs inbound
 * packets itself when the lock is free: sim_engine_rx_direct). Each pass,
 * with sh->lock held:
 *   1. drain the inbound packet queue: requests to the responder, ACKs and
 *      responses to the completer;
 *   2. for every QP in RTS run its timers and its requester (new WQEs from
 *      the SQ up to the doorbell record, packets within the window); for
 *      every QP in ERR flush what was posted since the last pass.
 * When a pass finds nothing to do the engine polls a little longer (a
 * doorbell right after a completion is the common case), then sleeps until a
 * doorbell, a packet or its next timer: one futex_waitv on the host's word
 * sh->db_seq (the wire, commands, stop, doorbells of this process) and the
 * seq word of every UAR page exported to another process (sim_bell.c),
 * which live in separate memfds so a tenant's jobs map only their own page.
 *
 * Doorbells need no lock: sim_doorbell() stores the UAR word, bumps its
 * page's ring count and wakes the engine if it sleeps, through the host's
 * word or the ringing process's exported page. It touches only UAR pages,
 * so any process that maps the pages may ring.
 *
 * Sleep/wake handshake (Dekker, both sides seq_cst), per word:
 *   engine:   seq = word (before the pass); pass finds nothing; sleeping = 1;
 *             futex_waitv(word == seq, ...); sleeping = 0
 *   doorbell: word++; if (sleeping) futex_wake(word)
 * Either the wait sees the new value and returns at once, or the doorbell
 * sees the flag. A job that writes its page's words only delays itself.
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"

#define SIM_POLL_NS	 2000000ull   /* poll this long after the last work */
#define SIM_SLEEP_MAX_NS 100000000ull /* sleep at most this long without a timer */
#define SIM_RESCAN_NS	 1000000ull   /* look for QPs created behind our back */
#define SIM_PASS_BUDGET	 1024u	      /* request packets per pass: bounds the lock hold */
#define SIM_NO_WAITV_NS	 10000000ull  /* without futex_waitv: doorbell latency when asleep */

uint64_t sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t sim_mtu_bytes(uint8_t mtu)
{
	if (mtu < KR_MTU_256 || mtu > KR_MTU_4K)
		mtu = KR_MTU_1K;
	return 256u << (mtu - 1);
}

volatile uint32_t *sim_qp_dbrec(struct sim_engine *eng, uint32_t qpi)
{
	const struct sim_qp *q = &eng->sh->qp[qpi];

	return sim_umem_ptr(eng->dev, q->dbr_umem_id, q->dbr_offset, 8);
}

static long sim_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	/* Not FUTEX_PRIVATE: the word is in a MAP_SHARED segment other processes ring. */
	return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

void sim_engine_timer(struct sim_engine *eng, uint64_t deadline)
{
	if (deadline && deadline < eng->next_deadline)
		eng->next_deadline = deadline;
}

/* sh->lock held: everything posted on a QP in ERR completes with a flush error. */
static void sim_engine_flush(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_resp *r = &eng->resp[qpi];

	sim_req_flush(eng, qpi);
	if (r->has_rwqe) {
		/* the receive WQE of a message cut short comes first */
		sim_cqe_write_err(eng, q->cqn_rcv, MLX5_CQE_RESP_ERR,
				  MLX5_CQE_SYNDROME_WR_FLUSH_ERR, 0, SIM_QPN_BASE + qpi,
				  r->rwqe.idx & 0xffff, q->user_index);
		r->has_rwqe = false;
	}
	if (r->cur || r->rd_active || r->hold_head || r->on_pump)
		sim_resp_reset(eng, r);
	sim_recv_flush_rq(eng, qpi);
}

void sim_engine_qp_fail(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_qp *q = &eng->sh->qp[qpi];

	KR_DP_LOG("sim", "qp 0x%x: engine moves it to ERR", SIM_QPN_BASE + qpi);
	q->state = KR_QPC_STATE_ERR;
	sim_engine_flush(eng, qpi);
	eng->work = true;
}

void sim_engine_qp_reset(struct sim_dev *dev, uint32_t qp_idx)
{
	struct sim_engine *eng = dev->eng;
	struct sim_qp *q = &dev->sh->qp[qp_idx];

	if (qp_idx >= SIM_MAX_QP)
		return;
	if (eng) {
		sim_req_reset(eng, qp_idx);
		sim_resp_reset(eng, &eng->resp[qp_idx]);
		if (qp_idx >= eng->qp_hi)
			eng->qp_hi = qp_idx + 1;
	}
	q->sq_ci = 0;
	q->rq_ci = 0;
}

void sim_engine_qp_error(struct sim_dev *dev, uint32_t qp_idx)
{
	struct sim_engine *eng = dev->eng;

	if (!eng || qp_idx >= SIM_MAX_QP)
		return;
	eng->now = sim_now_ns();
	sim_engine_flush(eng, qp_idx);
}

/* One inbound packet, consumed. */
static void sim_engine_rx(struct sim_engine *eng, struct sim_pkt *pkt)
{
	uint32_t mask = sim_op_mask(pkt->opcode), qpi;
	struct sim_qp *q;

	eng->pkts_rx++;
	SIM_STAT_INC(eng->sh, pkts_rx);
	if (mask & SIM_OPM_REQ) {
		sim_resp_rx(eng, pkt);
		return;
	}
	if ((mask & SIM_OPM_RESP) && sim_qpn_to_idx(pkt->dqpn, &qpi)) {
		q = &eng->sh->qp[qpi];
		if (q->in_use && q->state == KR_QPC_STATE_RTS) {
			sim_comp_rx(eng, qpi, pkt);
			if (!sim_req_idle(eng, qpi))
				eng->req_left = true;
		} else {
			eng->pkts_dropped++;
		}
	} else {
		eng->pkts_dropped++;
	}
	sim_pkt_free(pkt);
}

static void sim_engine_rescan(struct sim_engine *eng)
{
	uint32_t i;

	for (i = eng->qp_hi; i < SIM_MAX_QP; i++)
		if (eng->sh->qp[i].in_use)
			eng->qp_hi = i + 1;
}

/* sim_engine_inq_append() - see sim_engine.h. */
void sim_engine_inq_append(struct sim_engine *eng, struct sim_pkt *head, struct sim_pkt *last)
{
	pthread_mutex_lock(&eng->inq_lock);
	if (eng->inq_tail)
		eng->inq_tail->next = head;
	else
		eng->inq_head = head;
	eng->inq_tail = last;
	pthread_mutex_unlock(&eng->inq_lock);
}

/* sh->lock held: the inbound queue, oldest first, then list (may be NULL). */
static void sim_engine_drain(struct sim_engine *eng, struct sim_pkt *list)
{
	struct sim_pkt *queued, *pkt;

	pthread_mutex_lock(&eng->inq_lock);
	queued = eng->inq_head;
	eng->inq_head = eng->inq_tail = NULL;
	pthread_mutex_unlock(&eng->inq_lock);
	while ((pkt = queued)) {
		queued = pkt->next;
		sim_engine_rx(eng, pkt);
		eng->work = true;
	}
	while ((pkt = list)) {
		list = pkt->next;
		sim_engine_rx(eng, pkt);
		eng->work = true;
	}
	sim_resp_pump(eng);
}

/*
 * One pass. The per-pass fields (work, next_deadline, now) are written under
 * sh->lock only, by the pass and by sim_engine_rx_direct() on the receiving
 * thread, so the loop gets its copies in *out before the lock is dropped.
 */
static void sim_engine_pass(struct sim_engine *eng, struct sim_engine_pass *out)
{
	struct sim_shared *sh = eng->sh;
	uint32_t n;

	sim_lock(eng->dev);
	eng->work = false;
	eng->next_deadline = UINT64_MAX;
	eng->now = sim_now_ns();
	sim_wire_pass(eng); /* held packets now due: first, they were sent earlier */
	sim_engine_drain(eng, NULL);

	eng->tx_budget = SIM_PASS_BUDGET;
	if (eng->qp_next >= eng->qp_hi)
		eng->qp_next = 0;
	for (n = 0; n < eng->qp_hi; n++) {
		uint32_t i = (eng->qp_next + n) % eng->qp_hi;
		struct sim_qp *q = &sh->qp[i];

		if (!q->in_use) {
			if (eng->req[i].nslots)
				sim_req_reset(eng, i);
			continue;
		}
		if (q->state == KR_QPC_STATE_RTS)
			sim_req_progress(eng, i);
		else if (q->state == KR_QPC_STATE_ERR)
			sim_engine_flush(eng, i);
	}
	eng->qp_next++;
	sim_wire_flush(eng); /* what the pass queued on the UDP socket */
	out->now = eng->now;
	out->work = eng->work;
	out->deadline = eng->next_deadline;
	sim_unlock(eng->dev);
}

static bool sim_engine_inq_empty(struct sim_engine *eng)
{
	bool empty;

	pthread_mutex_lock(&eng->inq_lock);
	empty = !eng->inq_head;
	pthread_mutex_unlock(&eng->inq_lock);
	return empty;
}

/* sim_engine_rx_direct() - see sim_engine.h. */
bool sim_engine_rx_direct(struct sim_engine *eng, struct sim_pkt *list)
{
	int rc = pthread_mutex_trylock(&eng->sh->lock);
	bool more;

	if (rc == EBUSY)
		return false;
	if (rc == EOWNERDEAD) {
		KR_WARN("sim", "%s: a process died holding the device lock; recovering",
			eng->dev->ctx.name);
		pthread_mutex_consistent(&eng->sh->lock);
	} else if (rc) {
		return false; /* the engine's own sim_lock() reports it */
	}
	eng->now = sim_now_ns();
	eng->req_left = false;
	eng->next_deadline = UINT64_MAX; /* the pass's copy is taken: only ours now */
	sim_engine_drain(eng, list);
	sim_wire_flush(eng); /* the answers leave now, not at the engine's next pass */
	/*
	 * What follows (the next WQEs behind an ACK, a READ streamed over
	 * passes, a held packet, a looped-back one) is the engine's: wake it
	 * for that only. A sleeping engine woken for nothing takes a core from
	 * the threads the next packet needs.
	 */
	more = eng->req_left || eng->pump_head || eng->next_deadline != UINT64_MAX ||
	       !sim_engine_inq_empty(eng);
	sim_unlock(eng->dev);
	if (more)
		sim_engine_kick(eng->sh);
	return true;
}

/*
 * Before an idle pass: the values the engine would sleep against, the
 * host's word first, then each exported UAR page's (pages are never
 * unmapped while the engine runs; the exported list's count only grows, and
 * an export that adds or replaces an entry kicks the engine to arm again). A
 * busy engine skips it: it sleeps only after idle passes, and the one before
 * the sleep armed.
 */
static void sim_engine_arm(struct sim_engine *eng)
{
	struct sim_dev *dev = eng->dev;
	uint32_t nwake = atomic_load(&dev->nwake), n = 1;

	eng->wait[0].uaddr = (uintptr_t)&eng->sh->db_seq;
	eng->wait[0].val = atomic_load(&eng->sh->db_seq);
	eng->wait[0].flags = FUTEX_32;
	for (uint32_t w = 0; w < nwake && w < SIM_MAX_WAKE; w++) {
		uint32_t i = __atomic_load_n(&dev->wake_page[w], __ATOMIC_ACQUIRE) - 1;
		struct sim_bell *b = i < SIM_MAX_UAR ? dev->bell[i] : NULL;

		if (!b)
			continue;
		eng->wait_bell[n - 1] = b;
		eng->wait[n].uaddr = (uintptr_t)&b->seq;
		eng->wait[n].val = atomic_load(&b->seq);
		eng->wait[n].flags = FUTEX_32;
		n++;
	}
	eng->nwait = n;
}

static void sim_engine_sleeping(struct sim_engine *eng, uint32_t on)
{
	atomic_store(&eng->sh->engine_sleeping, on);
	for (uint32_t i = 0; i + 1 < eng->nwait; i++)
		atomic_store(&eng->wait_bell[i]->sleeping, on);
}

/* Wait until a word of eng->wait changes or wait_ns pass. */
static void sim_engine_wait(struct sim_engine *eng, uint64_t wait_ns)
{
	uint64_t until = sim_now_ns() + wait_ns;
	struct timespec ts = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};

	if (!eng->no_waitv &&
	    syscall(SYS_futex_waitv, eng->wait, eng->nwait, 0, &ts, CLOCK_MONOTONIC) < 0 &&
	    errno == ENOSYS) {
		KR_INFO("sim",
			"%s: no futex_waitv: a sleeping engine looks at doorbells every %u ms",
			eng->sh->name, (unsigned int)(SIM_NO_WAITV_NS / 1000000u));
		eng->no_waitv = true;
	}
	if (eng->no_waitv) {
		/* before Linux 5.16, or under valgrind: sleep on the host's word
		 * (packets, commands), poll the pages */
		if (wait_ns > SIM_NO_WAITV_NS)
			wait_ns = SIM_NO_WAITV_NS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)wait_ns;
		sim_futex(&eng->sh->db_seq, FUTEX_WAIT, (uint32_t)eng->wait[0].val, &ts);
	}
}

static void sim_engine_sleep(struct sim_engine *eng, uint64_t deadline)
{
	uint64_t now = sim_now_ns(), wait = SIM_SLEEP_MAX_NS;

	if (deadline != UINT64_MAX) {
		if (deadline <= now)
			return;
		if (deadline - now < wait)
			wait = deadline - now;
	}
	sim_engine_sleeping(eng, 1);
	if (sim_engine_inq_empty(eng) && !atomic_load(&eng->stop))
		sim_engine_wait(eng, wait);
	sim_engine_sleeping(eng, 0);
}

static void *sim_engine_main(void *arg)
{
	struct sim_engine *eng = arg;
	uint64_t idle_since = 0, last_rescan = 0;
	sigset_t all;

	/* Signals are for the application's threads, not the device. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);

	while (!atomic_load(&eng->stop)) {
		struct sim_engine_pass p;

		if (idle_since)
			sim_engine_arm(eng);
		sim_engine_pass(eng, &p);
		if (p.now - last_rescan > SIM_RESCAN_NS) {
			sim_lock(eng->dev);
			sim_engine_rescan(eng);
			sim_unlock(eng->dev);
			last_rescan = p.now;
		}
		if (p.work) {
			idle_since = 0;
			continue;
		}
		if (!idle_since)
			idle_since = p.now;
		if (p.now - idle_since < SIM_POLL_NS) {
			sched_yield();
			continue;
		}
		sim_engine_sleep(eng, p.deadline);
	}
	return NULL;
}

int sim_engine_start(struct sim_dev *dev)
{
	struct sim_engine *eng;
	char name[16];
	int rc;

	if (dev->eng)
		return -EBUSY;
	eng = calloc(1, sizeof(*eng));
	if (!eng)
		return -ENOMEM;
	eng->dev = dev;
	eng->sh = dev->sh;
	eng->pid = getpid();
	memcpy(eng->gid, dev->sh->gid, sizeof(eng->gid));
	eng->dc_conn_seq = (uint32_t)sim_now_ns();
	eng->next_deadline = UINT64_MAX;
	pthread_mutex_init(&eng->inq_lock, NULL);
	/* No sh->lock here: the caller may hold it; in_use reads are benign. */
	dev->eng = eng;
	sim_engine_rescan(eng);
	rc = sim_wire_open(eng);
	if (rc)
		goto err_free;

	rc = pthread_create(&eng->thread, NULL, sim_engine_main, eng);
	if (rc) {
		KR_ERR("sim", "%s: engine thread: %s", dev->sh->name, strerror(rc));
		rc = -rc;
		goto err_detach;
	}
	eng->started = true;
	snprintf(name, sizeof(name), "sim:%.11s", dev->sh->name);
	pthread_setname_np(eng->thread, name);
	return 0;

err_detach:
	sim_wire_stop(eng);
	sim_wire_close(eng);
err_free:
	dev->eng = NULL;
	pthread_mutex_destroy(&eng->inq_lock);
	free(eng);
	return rc;
}

void sim_engine_stop(struct sim_dev *dev)
{
	struct sim_engine *eng = dev->eng;
	struct sim_pkt *pkt;
	uint32_t i;

	if (!eng)
		return;
	dev->eng = NULL;
	if (eng->pid != getpid())
		return; /* a forked child: the thread and its state live in the parent */

	sim_wire_stop(eng);
	atomic_store(&eng->stop, true);
	sim_engine_kick(eng->sh);
	if (eng->started)
		pthread_join(eng->thread, NULL);

	while ((pkt = eng->inq_head)) {
		eng->inq_head = pkt->next;
		sim_pkt_free(pkt);
	}
	sim_wire_close(eng);
	sim_capture_free(eng);
	for (i = 0; i < SIM_MAX_QP; i++) {
		sim_req_reset(eng, i);
		sim_resp_reset(eng, &eng->resp[i]);
	}
	for (i = 0; i < SIM_MAX_DCT; i++) {
		if (eng->dct[i]) {
			uint32_t c;

			for (c = 0; c < SIM_DCT_CTX; c++)
				sim_resp_reset(eng, &eng->dct[i]->ctx[c]);
			free(eng->dct[i]);
		}
	}
	pthread_mutex_destroy(&eng->inq_lock);
	KR_DBG("sim", "%s: engine stopped: %llu packets out, %llu in, %llu dropped", eng->sh->name,
	       (unsigned long long)eng->pkts_tx, (unsigned long long)eng->pkts_rx,
	       (unsigned long long)eng->pkts_dropped);
	free(eng);
}
