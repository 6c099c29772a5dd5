#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The demo's cluster, on its own (scripts/demo.sh runs it; the integration
# test test_demo_cluster too): four keepers on simulated nodes (sim hosts
# 127.0.0.2..5 over UDP loopback, node 1 also the MetaServer), a serve_region
# job on nodes 2..4, and hello_krcore on node 1, which connects to them and
# checks READ, WRITE and CAS. Stops all it started and checks that no
# hugepage file is left. Exit 0, 1 on any failure, 77 without hugepages.
# Usage: scripts/demo-cluster.sh BUILDDIR
set -euo pipefail
bin=${1:?usage: demo-cluster.sh BUILDDIR}
. "$(dirname "$0")/sim-cluster-lib.sh"
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
if [ "${free:-0}" -lt 128 ]; then
	echo "SKIP: the four keepers need 128 free 2 MB hugepages, $free are free (scripts/hugepages.sh)"
	exit 77
fi

# The demo's jobs are one launch: they reach each other's memory, no one else's.
export KR_LAUNCH_KEY=${KR_LAUNCH_KEY:-$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')}
dir=$(mktemp -d /tmp/krcore-demo.XXXXXX)
hp_before=$(ls /dev/hugepages)
keepers=() jobs=()
stop_all() {
	kr_stop ${jobs[@]+"${jobs[@]}"} ${keepers[@]+"${keepers[@]}"}
	jobs=() keepers=()
}
cleanup() {
	stop_all
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One UDP port for every sim host, the next one for MetaServer registrations.
echo "== 1. four keepers: sim hosts 127.0.0.2..5 over UDP loopback, MetaServer on node 1 =="
kr_start_keepers "$dir" 4 || exit 1

echo "== 2. serve_region on nodes 2..4: 4 KiB of each job's heap, READ/WRITE/atomic key =="
peers=()
for n in 2 3 4; do
	kr_serve_region "$dir/node$n.sock" "$dir/region$n" && ok=1 || ok=0
	jobs+=("$kr_pid")
	[ "$ok" = 1 ] || { echo "demo: serve_region on node $n failed"; exit 1; }
	peers+=("$n:$kr_addr:$kr_rkey")
	echo "   node $n: addr 0x$kr_addr rkey 0x$kr_rkey"
done

echo "== 3. hello_krcore on node 1 =="
"$bin/examples/hello_krcore" --socket "$dir/node1.sock" "${peers[@]}"
stop_all
leftover=$(kr_hugepages_left "$hp_before")
[ -z "$leftover" ] || { echo "demo: hugepage files left behind:$leftover"; exit 1; }
echo "   keepers and jobs stopped, hugepages released"

