#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The soft-RoCE guest the rxe interop tests talk to (rxe_guest_lib.sh): it
# boots in a network namespace of its own, loads rdma_rxe, brings rxe0 up
# over virtio-net (ACTIVE, its RoCE v2 GID the IPv4-mapped guest address),
# runs the guest's own verbs through it (rxe_peer selftest: two RC QPs of
# rxe0, SEND of three MTU packets, WRITE, READ, CAS, FAA, bytes checked),
# reads its counters (packets sent, error counters 0) and reaches the host
# side of the tap: the guest test_rxe_sim_rc's krcore side talks to.
# Exit 77 when qemu, the kernel image or its rxe module is missing.
# Usage: test_rxe_guest.sh BUILDDIR SOURCE_ROOT
set -euo pipefail
. "$2/tests/interop/rxe_guest_lib.sh"
rxe_need
dir=$(mktemp -d /tmp/krcore-rxe.XXXXXX)
trap 'rxe_netns_down; rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM # meson's timeout: the EXIT trap still takes the namespace down
rxe_peer_build "$dir/rxe_peer"
rxe_initramfs "$dir/initramfs.cpio" "$dir/rxe_peer"
rxe_netns_up
rxe_boot "$dir/console.log" "$dir/initramfs.cpio" || true
fail() {
	echo "FAIL: $*"
	grep -a -E 'RXE-|rdma_rxe|error' "$dir/console.log" | head -40
	exit 1
}
grep -aq '^RXE-DONE' "$dir/console.log" || fail "the guest did not finish"
! grep -aq -E '^RXE-(INSMOD|ADD)-FAILED' "$dir/console.log" || fail "a module or rxe0 failed"
[ "$(sed -n 's/^RXE-LINK //p' "$dir/console.log")" = ACTIVE ] || fail "rxe0 is not ACTIVE"
gid=$(sed -n 's/^RXE-GID //p' "$dir/console.log")
[ "$gid" = "0000:0000:0000:0000:0000:ffff:0a4d:0002" ] || fail "rxe0's GID is '$gid', not the guest's IPv4"
[ "$(sed -n 's/^RXE-SELFTEST //p' "$dir/console.log")" = 0 ] || fail "the guest's verbs selftest failed"
n=$(grep -ac '^RXE-COUNTER ' "$dir/console.log")
sent=$(awk '$1 == "RXE-COUNTER" && $2 == "sent_pkts" {print $3}' "$dir/console.log")
[ "${sent:-0}" -ge 5 ] || fail "rxe0 sent ${sent:-no} packets: the selftest did not go through it"
[ "$n" -ge 10 ] || fail "only $n hw_counters"
bad=$(awk '/^RXE-COUNTER .*(err|duplicate|out_of_seq)/ && $3 != 0' "$dir/console.log")
[ -z "$bad" ] || fail "error counters not 0: $bad"
[ "$(sed -n 's/^RXE-PING //p' "$dir/console.log")" = 0 ] || fail "the guest cannot reach $rxe_host_ip"
echo "PASS: rxe0 ACTIVE in the $rxe_kver guest, GID $gid, verbs selftest ok ($sent packets), $n counters, the host reachable"
