#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# krcore's RC path against the kernel's RoCE v2: a devx RC QP of a sim host
# bound on the tap's host side (rxe_sim_side) and an RC QP of the guest's
# rxe0 (rxe_peer serve), addresses swapped over TCP on the tap. Session 1 on
# a clean wire, session 2 with the sim dropping, duplicating and reordering
# its packets: WRITE, READ, SEND, SEND and WRITE with immediate both ways at
# sizes across the 1024-byte MTU, CAS and FAA both ways, every byte checked;
# session 3: a SEND into no receive each way (RNR NAKs until one is posted).
# rxe's counters after session 1 must show no error, duplicate or sequence
# event, and after session 2 no failure (retransmission converged); the sim
# must have dropped no packet of rxe's as malformed or for its ICRC; the
# guest's kernel must have logged no warning on rxe.
# Exit 77 when qemu, the kernel image or its rxe module is missing.
# Usage: test_rxe_sim_rc.sh SOURCE_ROOT RXE_SIM_SIDE
set -euo pipefail
. "$1/tests/interop/rxe_guest_lib.sh"
side=$2
rxe_need
dir=$(mktemp -d /tmp/krcore-rxe.XXXXXX)
qemu_pid=
cleanup() {
	[ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null
	rxe_netns_down
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM # meson's timeout: the EXIT trap still takes the namespace down
rxe_peer_build "$dir/rxe_peer"
rxe_initramfs "$dir/initramfs.cpio" "$dir/rxe_peer" 3
rxe_netns_up
log=$dir/console.log
rxe_boot "$log" "$dir/initramfs.cpio" &
qemu_pid=$!
fail() {
	echo "FAIL: $*"
	grep -a -E '^(RXE-|SIM-)|rdma_rxe|rxe_peer|error' "$log" "$dir"/side*.log 2>/dev/null | head -60
	exit 1
}
for _ in $(seq 1 "$rxe_timeout"); do
	grep -aq '^RXE-SERVING' "$log" && break
	grep -aq '^RXE-DONE' "$log" && fail "the guest ended before serving"
	sleep 1
done
grep -aq '^RXE-SERVING' "$log" || fail "the guest's rxe_peer did not start serving"

# the sim host on the tap: the sim's own GID index 3 is ::ffff:10.77.0.1
session() {
	local n=$1 opts=$2
	# shellcheck disable=SC2086 # $3: the mode word, or none
	ip netns exec "$rxe_ns" "$side" "sim:rxehost@$rxe_host_ip:4791$opts" "$rxe_guest_ip" ${3:-} \
		>"$dir/side$n.log" 2>&1 || { cat "$dir/side$n.log"; fail "session $n ($opts)"; }
	cat "$dir/side$n.log"
}
session 1 ""
session 2 ",drop=0.05,dup=0.02,reorder=0.05"
session 3 "" rnr
wait "$qemu_pid" || true
qemu_pid=
grep -aq '^RXE-DONE' "$log" || fail "the guest did not finish"
[ "$(sed -n 's/^RXE-SERVE //p' "$log")" = 0 ] || fail "rxe_peer serve failed"

counter() { awk -v s="$1" -v c="$2" '$1 == "RXE-SESSION-COUNTER" && $2 == s && $3 == c {print $4}' "$log"; }
# session 1, a clean wire: none of rxe's error, retry or sequence counters moved
# (lifespan is the counters' refresh interval in ms, not a count)
bad=$(awk '$1 == "RXE-SESSION-COUNTER" && $2 == 1 && $3 !~ /^(sent_pkts|rcvd_pkts|rdma_sends|rdma_recvs|ack_deferred|lifespan)$/ && $4 != 0' "$log")
[ -z "$bad" ] || fail "rxe counted errors on a clean wire: $bad"
[ "$(counter 1 rcvd_pkts)" -gt 100 ] || fail "rxe0 received $(counter 1 rcvd_pkts) packets in session 1"
# session 2, faults on the sim's side: what may move are the counts of the
# faults themselves; nothing gave up
for c in retry_exceeded_err retry_rnr_exceeded_err send_err link_downed; do
	[ "$(counter 2 "$c")" = "$(counter 1 "$c")" ] || fail "$c moved under injected faults"
done
stat() { sed -n "s/^SIM-STATS.* $2 \([0-9]*\).*/\1/p" "$dir/side$1.log"; }
for n in 1 2 3; do
	for c in icrc_drops rx_malformed l2_drops; do
		[ "$(stat $n $c)" = 0 ] || fail "session $n: the sim's $c is $(stat $n $c)"
	done
	# rxe fills the IPv4 identification the ICRC covers: the sim found it (sim_icrc_id.c)
	[ "$(stat $n icrc_ip_id)" -gt 0 ] || fail "session $n: no packet of rxe's named an IPv4 identification"
done
# a clean wire: nothing of the sim's timed out or went again
if [ "$(stat 1 retransmits)" != 0 ] || [ "$(stat 1 timeouts)" != 0 ]; then
	fail "the sim retransmitted $(stat 1 retransmits) times on a clean wire"
fi
[ "$(stat 2 fault_drops)" -gt 0 ] || fail "session 2 injected no fault"
# session 3, a SEND into no receive each way: RNR NAKs both ways, nothing
# out of sequence (the sim's SEND is one packet) and nothing given up
[ "$(stat 3 rnr_naks)" -gt 0 ] || fail "the sim sent no RNR NAK to rxe's early SEND"
[ "$(counter 3 send_rnr_err)" -gt "$(counter 2 send_rnr_err)" ] ||
	fail "rxe sent no RNR NAK to the sim's early SEND"
[ "$(counter 3 rcvd_rnr_err)" -gt "$(counter 2 rcvd_rnr_err)" ] ||
	fail "rxe took no RNR NAK of the sim's"
for c in out_of_seq_request rcvd_seq_err retry_exceeded_err retry_rnr_exceeded_err send_err; do
	[ "$(counter 3 "$c")" = "$(counter 2 "$c")" ] || fail "$c moved in the RNR session"
done
[ "$(stat 3 timeouts)" = 0 ] || fail "the sim timed out in the RNR session"
! grep -aq -i -E '^RXE-DMESG .*(warn|bad|error|fail)' "$log" || fail "the guest's kernel complained"
echo "PASS: krcore's devx RC QP on the sim and rxe0 in the $rxe_kver guest: three sessions (clean, faults, RNR), every check of rxe_sim_side; rxe counted no error on the clean wire and gave up no retry"
