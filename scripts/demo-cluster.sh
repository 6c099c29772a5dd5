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
	local p
	for p in "${jobs[@]}" "${keepers[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${jobs[@]}" "${keepers[@]}"; do wait "$p" 2>/dev/null || true; done
	jobs=() keepers=()
}
cleanup() {
	stop_all
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One UDP port for every sim host, the next one for MetaServer registrations.
port=$(kr_free_port)
meta=127.0.0.2:$((port + 1))
echo "== 1. four keepers: sim hosts 127.0.0.2..5, UDP port $port, MetaServer on node 1 =="
for n in 1 2 3 4; do
	args=(--foreground --socket "$dir/node$n.sock" --device "sim:node$n@127.0.0.$((n + 1)):$port"
		--node-id "$n" --tenants 1 --dcis 8 --jobs 4 --heap-mb 2 --hugepages 32)
	if [ "$n" = 1 ]; then
		args+=(--metaserver --max-nodes 64 --meta-listen "$meta") # a table for this cluster's size
	else
		args+=(--metaserver-addr "$meta")
	fi
	"$bin/tools/krpoold" "${args[@]}" >"$dir/node$n.log" 2>&1 &
	keepers+=($!)
	echo "   krpoold ${args[*]}"
done
for n in 1 2 3 4; do
	kr_wait_keeper "$dir/node$n.sock" || {
		echo "demo: the keeper of node $n did not start:"
		cat "$dir/node$n.log"
		exit 1
	}
done

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
# New hugepage files that no live process maps (others' keepers may run meanwhile).
leftover=
for f in $(comm -13 <(echo "$hp_before") <(ls /dev/hugepages)); do
	grep -qs "/dev/hugepages/$f" /proc/[0-9]*/maps || leftover+=" $f"
done
[ -z "$leftover" ] || { echo "demo: hugepage files left behind:$leftover"; exit 1; }
echo "   keepers and jobs stopped, hugepages released"

