/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two simulated hosts in two network namespaces joined by a veth pair, as two
 * machines on one link: host A "sim:nsa@192.0.2.1" in namespace krsimA<pid>,
 * host B "sim:nsb@192.0.2.2" in krsimB<pid>, each its own process, both on
 * the default RoCEv2 port 4791 (each namespace has its own ports). 192.0.2.0/24
 * is TEST-NET-1 (RFC 5737): it lives only inside the two namespaces this test
 * creates and deletes; nothing is routed anywhere else. The veth MTU is 9000
 * so a 4096-byte path MTU fits, as RoCE runs over jumbo frames.
 *
 * Over it: RC WRITE (64 KiB, MTU 4096: 16 packets), READ back, SEND with
 * immediate, FETCH_ADD and COMPARE_SWAP, DC SEND and DC WRITE; every byte,
 * every returned value checked on both sides.
 *
 * Needs root and `ip netns` (iproute2): exits 77 without them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim_mp.h"

#define MEM_LEN (512u << 10)
#define TMO_MS	15000
#define BIG	(64u << 10)

static char ns_name[2][32];
static pid_t main_pid; /* children exit through KR_FAIL too: only the parent cleans up */
static char veth[2][16];
static const char *const ns_addr[2] = {"192.0.2.1", "192.0.2.2"};

struct shm {
	struct mp_barrier bar;
	uint32_t qpn[2];
	uint32_t dctn[2];
	uint64_t dc_key[2];
	uint8_t gid[2][16];
	uint64_t mem[2];
	uint32_t rkey[2];
};

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

static void cleanup(void)
{
	if (getpid() != main_pid)
		return;
	for (int i = 0; i < 2; i++)
		if (ns_name[i][0])
			sh("ip netns del %s 2>/dev/null", ns_name[i]);
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static uint8_t pat(int who, uint32_t k)
{
	return (uint8_t)(who * 71 + k * 13 + (k >> 8) + 3);
}

#define BAR(s)                                                                                     \
	do {                                                                                       \
		if (mp_barrier_wait(&(s)->bar, TMO_MS))                                            \
			KR_FAIL("host %d: barrier timed out", me);                                 \
	} while (0)

static void expect_ok(struct kr_fx_host *h, int me, uint64_t id)
{
	struct kr_devx_wc wc;

	if (kr_fx_poll_one(&h->scq, &wc, TMO_MS))
		KR_FAIL("host %d: completion of wr %llu missing", me, (unsigned long long)id);
	if (wc.status != KR_WC_SUCCESS || wc.wr_id != id)
		KR_FAIL("host %d: wr %llu: %s (wr_id %llu)", me, (unsigned long long)id,
			kr_strerror(wc.status), (unsigned long long)wc.wr_id);
}

static int host_main(int me, void *arg)
{
	struct shm *s = arg;
	int peer = !me, fd;
	char path[64], dev[64];
	struct kr_devx_qp_conn c;
	struct kr_devx_qp qp, dci;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_fx_host h;
	struct kr_devx_wc wc;
	uint8_t *mem;
	uint64_t v;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns_name[me]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		KR_FAIL("host %d: cannot enter %s: %s", me, path, strerror(errno));
	close(fd);

	snprintf(dev, sizeof(dev), "sim:ns%c@%s", 'a' + me, ns_addr[me]);
	CHECK_OK(kr_fx_host_open(&h, dev, MEM_LEN));
	mem = h.mem;
	CHECK_OK(mp_rc_create(&h, &qp));
	CHECK_OK(kr_fx_dct_create(&h, &srq, &dct, 0x5eed0000u + (uint64_t)me));
	kr_fx_conn_default(&c);
	c.mtu = KR_MTU_4K;
	CHECK_OK(kr_fx_dci_create(&h, &dci, &c));
	s->qpn[me] = qp.qpn;
	s->dctn[me] = dct.dctn;
	s->dc_key[me] = dct.dc_key;
	mp_gid(&h, s->gid[me]);
	s->mem[me] = (uint64_t)(uintptr_t)mem;
	s->rkey[me] = h.mr.rkey;
	for (uint32_t k = 0; k < BIG; k++)
		mem[k] = pat(me, k); /* what the peer READs, and our WRITE source */
	BAR(s);

	CHECK_OK(mp_rc_connect(&qp, s->qpn[peer], s->gid[peer], &c));
	{
		struct kr_devx_sge r1 = kr_fx_sge(&h, 0x30000, 256);
		struct kr_devx_sge r2 = kr_fx_sge(&h, 0x30100, 256);

		CHECK_OK(kr_devx_qp_post_recv(&qp, &r1, 1, 11));
		CHECK_OK(kr_devx_srq_post_recv(&srq, &r2, 1, 12));
	}
	BAR(s);

	{
		struct kr_devx_sge sw = kr_fx_sge(&h, 0, BIG);
		struct kr_devx_sge sr = kr_fx_sge(&h, 0x10000, BIG);
		struct kr_devx_sge ss = kr_fx_sge(&h, 100, 200);
		struct kr_devx_sge sfa = kr_fx_sge(&h, 0x38000, 8);
		struct kr_devx_sge scs = kr_fx_sge(&h, 0x38008, 8);
		struct kr_devx_sge sdc = kr_fx_sge(&h, 300, 128);
		struct kr_devx_dc_av av = {.dctn = s->dctn[peer], .dc_key = s->dc_key[peer]};
		struct kr_devx_wr wr[] = {
		    {.wr_id = 1,
		     .opcode = KR_WR_RDMA_WRITE,
		     .sge = &sw,
		     .num_sge = 1,
		     .remote_addr = s->mem[peer] + 0x20000,
		     .rkey = s->rkey[peer]},
		    {.wr_id = 2,
		     .opcode = KR_WR_RDMA_READ,
		     .sge = &sr,
		     .num_sge = 1,
		     .remote_addr = s->mem[peer],
		     .rkey = s->rkey[peer]},
		    {.wr_id = 3,
		     .opcode = KR_WR_SEND_IMM,
		     .sge = &ss,
		     .num_sge = 1,
		     .imm = 0x1234500u + (uint32_t)me},
		    {.wr_id = 4,
		     .opcode = KR_WR_ATOMIC_FA,
		     .sge = &sfa,
		     .num_sge = 1,
		     .remote_addr = s->mem[peer] + 0x38100,
		     .rkey = s->rkey[peer],
		     .compare_add = 5},
		    {.wr_id = 5,
		     .opcode = KR_WR_ATOMIC_CS,
		     .sge = &scs,
		     .num_sge = 1,
		     .remote_addr = s->mem[peer] + 0x38100,
		     .rkey = s->rkey[peer],
		     .compare_add = 5,
		     .swap = 0x77},
		};
		struct kr_devx_wr dwr[] = {
		    {.wr_id = 6, .opcode = KR_WR_SEND, .sge = &sdc, .num_sge = 1, .av = &av},
		    {.wr_id = 7,
		     .opcode = KR_WR_RDMA_WRITE,
		     .sge = &sdc,
		     .num_sge = 1,
		     .av = &av,
		     .remote_addr = s->mem[peer] + 0x38200,
		     .rkey = s->rkey[peer]},
		};

		mp_dc_av_to(&av, &h, s->gid[peer]);
		for (size_t k = 0; k < sizeof(wr) / sizeof(wr[0]); k++) {
			wr[k].flags = KR_WR_SIGNALED;
			CHECK_OK(kr_devx_qp_post_send(&qp, &wr[k]));
		}
		kr_devx_qp_ring(&qp);
		for (uint64_t k = 1; k <= 5; k++)
			expect_ok(&h, me, k);
		for (size_t k = 0; k < 2; k++) {
			dwr[k].flags = KR_WR_SIGNALED;
			CHECK_OK(kr_devx_qp_post_send(&dci, &dwr[k]));
		}
		kr_devx_qp_ring(&dci);
		expect_ok(&h, me, 6);
		expect_ok(&h, me, 7);
	}
	for (uint32_t k = 0; k < BIG; k++)
		if (mem[0x10000 + k] != pat(peer, k))
			KR_FAIL("host %d: READ byte %u wrong", me, k);
	memcpy(&v, mem + 0x38000, 8);
	CHECK_EQ(v, 0); /* FETCH_ADD saw the counter at 0 */
	memcpy(&v, mem + 0x38008, 8);
	CHECK_EQ(v, 5); /* CAS compared 5, found 5 */

	/* what the peer sent us */
	for (int n = 0; n < 2; n++) {
		CHECK_OK(kr_fx_poll_one(&h.rcq, &wc, TMO_MS));
		CHECK_EQ(wc.status, KR_WC_SUCCESS);
		if (wc.qpn == qp.qpn) {
			CHECK_EQ(wc.wr_id, 11);
			CHECK_EQ(wc.byte_len, 200);
			CHECK(wc.has_imm);
			CHECK_EQ(wc.imm, 0x1234500u + (uint32_t)peer);
			CHECK_EQ(wc.src_qpn, s->qpn[peer]);
			for (uint32_t k = 0; k < 200; k++)
				CHECK_EQ(mem[0x30000 + k], pat(peer, 100 + k));
		} else {
			CHECK_EQ(wc.qpn, dct.dctn);
			CHECK_EQ(wc.wr_id, 12);
			CHECK_EQ(wc.byte_len, 128);
			for (uint32_t k = 0; k < 128; k++)
				CHECK_EQ(mem[0x30100 + k], pat(peer, 300 + k));
		}
	}
	BAR(s);
	for (uint32_t k = 0; k < BIG; k++)
		if (mem[0x20000 + k] != pat(peer, k))
			KR_FAIL("host %d: WRITE byte %u wrong", me, k);
	memcpy(&v, mem + 0x38100, 8);
	CHECK_EQ(v, 0x77);
	for (uint32_t k = 0; k < 128; k++)
		CHECK_EQ(mem[0x38200 + k], pat(peer, 300 + k));
	BAR(s);

	kr_fx_qp_destroy(&qp);
	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
	kr_fx_host_close(&h);
	return 0;
}

int main(void)
{
	struct shm *s;
	pid_t pids[2];
	int rc, pid = (int)getpid();

	main_pid = getpid();
	setvbuf(stdout, NULL, _IONBF, 0);
	if (geteuid() != 0)
		KR_SKIP("network namespaces need root");
	if (sh("ip netns list >/dev/null 2>&1"))
		KR_SKIP("no `ip netns` (iproute2)");
	for (int i = 0; i < 2; i++) {
		snprintf(ns_name[i], sizeof(ns_name[i]), "krsim%c%d", 'A' + i, pid);
		snprintf(veth[i], sizeof(veth[i]), "krv%c%d", 'a' + i, pid % 1000000);
	}
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (int i = 0; i < 2; i++) {
		if (sh("ip netns add %s", ns_name[i])) {
			ns_name[i][0] = '\0';
			KR_SKIP("cannot create a network namespace");
		}
	}
	if (sh("ip link add %s netns %s mtu 9000 type veth peer name %s netns %s mtu 9000", veth[0],
	       ns_name[0], veth[1], ns_name[1]))
		KR_SKIP("cannot create a veth pair");
	for (int i = 0; i < 2; i++)
		if (sh("ip -n %s addr add %s/24 dev %s && ip -n %s link set %s up && "
		       "ip -n %s link set lo up",
		       ns_name[i], ns_addr[i], veth[i], ns_name[i], veth[i], ns_name[i]))
			KR_FAIL("cannot configure %s in %s", veth[i], ns_name[i]);

	s = kr_fx_alloc_shared(sizeof(*s));
	CHECK(s);
	memset(s, 0, sizeof(*s));
	mp_barrier_init(&s->bar, 2);
	for (int i = 0; i < 2; i++) {
		pids[i] = mp_spawn(host_main, i, s);
		CHECK(pids[i] > 0);
	}
	rc = mp_wait(pids, 2, 40000);
	kr_fx_free_shared(s, sizeof(*s));
	if (rc)
		return rc;
	KR_PASS("sim_netns");
}
