/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UDP socket of a simulated host opened with an address
 * ("sim:h0@127.0.0.2:4791"): RoCEv2 datagrams to and from other hosts, in
 * other processes (or network namespaces) and in this one alike.
 *
 * One socket per host, bound to cfg.addr:cfg.udp_port. Every host of a
 * cluster uses the same port, as RoCEv2 uses 4791: a packet goes to the IPv4
 * address inside its IPv4-mapped destination GID, at our own port.
 *
 * Send (whoever holds sh->lock: the engine's pass, or the receive thread
 * running packets itself): sim_udp_send() serialises a packet into the next
 * slot of a batch; sim_udp_flush() hands the batch to the kernel with one
 * sendmmsg() before the lock is dropped (or when it is full). The
 * socket is unconnected and sends with IP_PMTUDISC_DO, so every datagram has
 * Don't Fragment set and, on Linux, IP identification 0: the two IP fields
 * the ICRC covers that a receiver cannot see (sim_roce.c). A send error
 * (e.g. EMSGSIZE when the path MTU of the QP exceeds the link's) loses the
 * packet, as a switch would; the requester retransmits.
 *
 * Receive: a thread per host blocks in recvmmsg() (one system call a
 * wake-up, as a ping-pong's recv; sim_udp_stop cancels it there, the only
 * place it can be cancelled), checks and parses the datagrams
 * (sim_roce_parse: malformed or ICRC-failed ones are dropped and counted) and
 * runs them to completion itself when the device lock is free
 * (sim_engine_rx_direct: a READ is answered without waking the engine, as a
 * NIC answers without a scheduler in between); when the engine holds it, it
 * appends them to the engine's inbound queue and kicks the engine as the
 * in-process wire does.
 *
 * Owners: tx_* fields belong to the holder of sh->lock; rx_* fields to the
 * receive thread (what it drops is counted in the host's statistics); fd is
 * set before either thread starts and closed after both are gone. The socket
 * blocks; sends pass MSG_DONTWAIT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"

#define SIM_UDP_BATCH	32u
#define SIM_UDP_SOCKBUF (4u << 20) /* asked for; the kernel caps it at [rw]mem_max */

struct sim_udp {
	struct sim_engine *eng;
	int fd;
	pthread_t rx_thread;
	bool rx_started;
	_Atomic bool stop;
	uint32_t addr; /* ours, network order */
	uint16_t port; /* ours and every peer's, host order */
	/* engine thread */
	uint32_t tx_n;
	uint64_t tx_errors;
	struct mmsghdr tx_msg[SIM_UDP_BATCH];
	struct iovec tx_iov[SIM_UDP_BATCH];
	struct sockaddr_in tx_dst[SIM_UDP_BATCH];
	uint8_t tx_buf[SIM_UDP_BATCH][SIM_ROCE_PKT_MAX];
	/* receive thread */
	struct mmsghdr rx_msg[SIM_UDP_BATCH];
	struct iovec rx_iov[SIM_UDP_BATCH];
	struct sockaddr_in rx_src[SIM_UDP_BATCH];
	uint8_t rx_buf[SIM_UDP_BATCH][SIM_ROCE_PKT_MAX + 1]; /* +1: a longer datagram shows */
};

/* ---- send ---- */

void sim_udp_flush(struct sim_engine *eng)
{
	struct sim_udp *u = eng->udp;
	uint32_t i = 0;

	while (i < u->tx_n) {
		int n = sendmmsg(u->fd, &u->tx_msg[i], u->tx_n - i, MSG_DONTWAIT);

		if (n > 0) {
			i += (uint32_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		/* this datagram cannot go (EMSGSIZE, ENOBUFS, EAGAIN...): lose it */
		u->tx_errors++;
		KR_ERR_RATELIMITED("sim", "%s: UDP send to %s: %s", eng->sh->name,
				   inet_ntoa(u->tx_dst[i].sin_addr), strerror(errno));
		i++;
	}
	u->tx_n = 0;
}

void sim_udp_send(struct sim_engine *eng, const struct sim_pkt *pkt, bool corrupt)
{
	struct sim_udp *u = eng->udp;
	struct sim_roce_addr a = {.saddr = u->addr, .sport = u->port, .dport = u->port};
	uint32_t i;
	int n;

	if (!sim_gid_to_ipv4(pkt->dgid, &a.daddr)) {
		KR_DP_LOG("sim", "%s: destination GID is not IPv4-mapped, packet dropped",
			  eng->sh->name);
		eng->pkts_dropped++;
		return;
	}
	if (u->tx_n == SIM_UDP_BATCH)
		sim_udp_flush(eng);
	i = u->tx_n;
	n = sim_roce_build(pkt, &a, u->tx_buf[i], sizeof(u->tx_buf[i]));
	if (n < 0) {
		KR_ERR_RATELIMITED("sim", "%s: cannot serialise opcode 0x%x (%d bytes): %s",
				   eng->sh->name, pkt->opcode, pkt->len, strerror(-n));
		eng->pkts_dropped++;
		return;
	}
	if (corrupt)
		sim_roce_corrupt(u->tx_buf[i], (size_t)n);
	u->tx_dst[i] = (struct sockaddr_in){
	    .sin_family = AF_INET,
	    .sin_port = htons(u->port),
	    .sin_addr.s_addr = a.daddr,
	};
	u->tx_iov[i] = (struct iovec){.iov_base = u->tx_buf[i], .iov_len = (size_t)n};
	u->tx_msg[i] = (struct mmsghdr){.msg_hdr = {
					    .msg_name = &u->tx_dst[i],
					    .msg_namelen = sizeof(u->tx_dst[i]),
					    .msg_iov = &u->tx_iov[i],
					    .msg_iovlen = 1,
					}};
	u->tx_n++;
}

/* ---- receive ---- */

/* Parse the n datagrams of a recvmmsg() and queue them for the engine. */
static void sim_udp_deliver(struct sim_udp *u, int n)
{
	struct sim_engine *eng = u->eng;
	struct sim_pkt *head = NULL, *last = NULL, *pkt;
	int i, rc;

	for (i = 0; i < n; i++) {
		struct msghdr *m = &u->rx_msg[i].msg_hdr;
		struct sim_roce_addr a = {
		    .saddr = u->rx_src[i].sin_addr.s_addr,
		    .daddr = u->addr,
		    .sport = ntohs(u->rx_src[i].sin_port),
		    .dport = u->port,
		};
		size_t len = u->rx_msg[i].msg_len;

		if ((m->msg_flags & MSG_TRUNC) || len > SIM_ROCE_PKT_MAX ||
		    m->msg_namelen != sizeof(u->rx_src[i])) {
			rc = -EBADMSG;
		} else {
			rc = sim_roce_parse(u->rx_buf[i], len, &a, &pkt);
		}
		m->msg_namelen = sizeof(u->rx_src[i]); /* reset for the next call */
		m->msg_flags = 0;
		if (rc == -EILSEQ) {
			SIM_STAT_INC(eng->sh, icrc_drops);
			KR_DP_LOG("sim", "%s: ICRC mismatch from %s, dropped", eng->sh->name,
				  inet_ntoa(u->rx_src[i].sin_addr));
			continue;
		}
		if (rc) {
			SIM_STAT_INC(eng->sh, rx_malformed);
			KR_ERR_RATELIMITED("sim", "%s: %zu-byte datagram from %s:%u dropped: %s",
					   eng->sh->name, len, inet_ntoa(u->rx_src[i].sin_addr),
					   ntohs(u->rx_src[i].sin_port), strerror(-rc));
			continue;
		}
		if (pkt->ip_id)
			SIM_STAT_INC(eng->sh, icrc_ip_id);
		if (last)
			last->next = pkt;
		else
			head = pkt;
		last = pkt;
	}
	if (!head || sim_engine_rx_direct(eng, head))
		return;
	sim_engine_inq_append(eng, head, last);
	/* queued before db_seq moves, as sim_wire_deliver() */
	sim_engine_kick(eng->sh);
}

static void *sim_udp_rx_main(void *arg)
{
	struct sim_udp *u = arg;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* cancelled (sim_udp_stop) only while it waits for datagrams */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	while (!atomic_load(&u->stop)) {
		int n;

		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		n = recvmmsg(u->fd, u->rx_msg, SIM_UDP_BATCH, MSG_WAITFORONE, NULL);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (n > 0)
			sim_udp_deliver(u, n);
		else if (n < 0 && errno != EINTR)
			KR_ERR_RATELIMITED("sim", "%s: UDP receive: %s", u->eng->sh->name,
					   strerror(errno));
	}
	return NULL;
}

/* ---- open / close ---- */

static int sim_udp_socket(struct sim_udp *u, const struct sim_config *cfg)
{
	int pmtu = IP_PMTUDISC_DO, buf = SIM_UDP_SOCKBUF;
	struct sockaddr_in sa = {
	    .sin_family = AF_INET,
	    .sin_port = htons(cfg->udp_port),
	    .sin_addr = cfg->addr,
	};
	int fd, rc;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* DF and IP ID 0 on every datagram: the receiver's ICRC depends on it */
	if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)))
		goto err_errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto err_errno;
	u->fd = fd;
	return 0;

err_errno:
	rc = -errno;
	close(fd);
	return rc;
}

/*
 * sim_udp_open() - bind the host's socket and start its receive thread.
 * Returns 0, -EINVAL (port 0), -ENOMEM, or the errno of socket/bind
 * (-EADDRINUSE: another host has this address and port, -EADDRNOTAVAIL: no
 * interface has the address), or the errno of pthread_create.
 */
int sim_udp_open(struct sim_engine *eng, const struct sim_config *cfg)
{
	struct sim_udp *u;
	char name[16];
	uint32_t i;
	int rc;

	if (!cfg->udp_port)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->eng = eng;
	u->addr = cfg->addr.s_addr;
	u->port = cfg->udp_port;
	u->fd = -1;
	rc = sim_udp_socket(u, cfg);
	if (rc) {
		KR_ERR("sim", "%s: UDP socket on %s:%u: %s", eng->sh->name, inet_ntoa(cfg->addr),
		       cfg->udp_port, strerror(-rc));
		goto err_free;
	}
	for (i = 0; i < SIM_UDP_BATCH; i++) {
		u->rx_iov[i] =
		    (struct iovec){.iov_base = u->rx_buf[i], .iov_len = sizeof(u->rx_buf[i])};
		u->rx_msg[i].msg_hdr = (struct msghdr){
		    .msg_name = &u->rx_src[i],
		    .msg_namelen = sizeof(u->rx_src[i]),
		    .msg_iov = &u->rx_iov[i],
		    .msg_iovlen = 1,
		};
	}
	eng->udp = u;
	rc = pthread_create(&u->rx_thread, NULL, sim_udp_rx_main, u);
	if (rc) {
		rc = -rc;
		eng->udp = NULL;
		goto err_close_fd;
	}
	u->rx_started = true;
	snprintf(name, sizeof(name), "simrx:%.9s", eng->sh->name);
	pthread_setname_np(u->rx_thread, name);
	KR_DBG("sim", "%s: RoCEv2 over UDP on %s:%u", eng->sh->name, inet_ntoa(cfg->addr),
	       cfg->udp_port);
	return 0;

err_close_fd:
	close(u->fd);
err_free:
	free(u);
	return rc;
}

void sim_udp_stop(struct sim_engine *eng)
{
	struct sim_udp *u = eng->udp;

	if (!u || !u->rx_started)
		return;
	atomic_store(&u->stop, true);
	pthread_cancel(u->rx_thread);
	pthread_join(u->rx_thread, NULL);
	u->rx_started = false;
}

void sim_udp_close(struct sim_engine *eng)
{
	struct sim_udp *u = eng->udp;

	if (!u)
		return;
	sim_udp_stop(eng);
	if (u->tx_errors || eng->sh->stats.rx_malformed)
		KR_INFO("sim", "%s: UDP: %llu sends failed, %llu malformed datagrams dropped",
			eng->sh->name, (unsigned long long)u->tx_errors,
			(unsigned long long)eng->sh->stats.rx_malformed);
	close(u->fd);
	eng->udp = NULL;
	free(u);
}
