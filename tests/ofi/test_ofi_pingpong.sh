#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fabtests' fi_pingpong (libfabric-bin, unmodified) over the krcore provider
# between jobs on two sim nodes: the server's keeper is node 2's, the
# client's node 1's, one launch. Every size checked byte by byte (-c): 1 B,
# then fi_pingpong's own list (64 B .. 1 MiB: eager SENDs, and staged chunks
# READ by the receiver above 4 KiB), untagged and tagged, and one 4 MiB
# message (32 chunks through 4 staging slots). Then each keeper's job table
# must be empty again (the provider detached). Exit 77 without fi_pingpong
# or hugepages.
# Usage: test_ofi_pingpong.sh BUILDDIR SOURCE_ROOT
set -euo pipefail
bin=$1 src=$2
. "$src/scripts/sim-cluster-lib.sh"
command -v fi_pingpong >/dev/null || { echo "SKIP: no fi_pingpong (apt-get install libfabric-bin)"; exit 77; }
kr_need_hugepages 64 "two keepers"

export KR_LAUNCH_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export FI_PROVIDER_PATH=$bin FI_PROVIDER=krcore
dir=$(mktemp -d /tmp/krcore-ofi.XXXXXX)
keepers=() srv=
cleanup() {
	[ -z "$srv" ] || kill "$srv" 2>/dev/null || true
	kr_stop ${keepers[@]+"${keepers[@]}"}
	rm -rf "$dir"
}
trap cleanup EXIT
kr_start_keepers "$dir" 2 >"$dir/start.log" || { cat "$dir/start.log"; exit 1; }

# A TCP port for fi_pingpong's own control connection.
tcp_port() {
	local p
	p=$((20000 + RANDOM % 40000))
	while ss -Hltn "( sport = :$p )" 2>/dev/null | grep -q .; do p=$((20000 + RANDOM % 40000)); done
	echo "$p"
}

# pingpong NAME ARG...: server on node 2, client on node 1, both must succeed.
pingpong() {
	local name=$1 port rc=0
	shift
	port=$(tcp_port)
	KR_KEEPER_SOCKET=$dir/node2.sock timeout 60 fi_pingpong -e rdm -B "$port" "$@" \
		>"$dir/srv.out" 2>&1 &
	srv=$!
	for _ in $(seq 100); do # the server listens once its endpoint is up
		ss -Hltn "( sport = :$port )" 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	KR_KEEPER_SOCKET=$dir/node1.sock timeout 60 fi_pingpong -e rdm -P "$port" "$@" 127.0.0.1 \
		>"$dir/cli.out" 2>&1 || rc=$?
	wait "$srv" || rc=$((rc ? rc : $?))
	srv=
	echo "== $name: fi_pingpong -e rdm $*"
	cat "$dir/cli.out"
	if [ "$rc" != 0 ]; then
		echo "-- server:"
		cat "$dir/srv.out"
		echo "FAIL: $name: exit $rc"
		exit 1
	fi
	# every size ran, none short of its acknowledgements
	grep -Eq '^[0-9.]+[kmg]? +[0-9.]+[kmg]? +=' "$dir/cli.out" ||
		{ echo "FAIL: $name: no result line"; exit 1; }
	if grep -Eq '^[0-9.]+[kmg]? +[0-9.]+[kmg]? +[-+]' "$dir/cli.out"; then
		echo "FAIL: $name: sent and acknowledged counts differ"
		exit 1
	fi
}

pingpong "1 byte" -S 1 -I 100 -c
pingpong "all sizes" -I 20 -c
pingpong "all sizes, tagged" -I 20 -c -m tagged
pingpong "4 MiB" -S 4194304 -I 4 -c
grep -q "^4m " "$dir/cli.out" || { echo "FAIL: no 4 MiB line"; exit 1; }

jobs_on() { # the keeper of node $1's attached jobs
	"$bin/tools/krctl" -s "$dir/node$1.sock" --json jobs |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))'
}
for n in 1 2; do
	for _ in $(seq 40); do
		[ "$(jobs_on $n)" = 0 ] && break
		sleep 0.05
	done
	[ "$(jobs_on $n)" = 0 ] || { echo "FAIL: node $n still holds $(jobs_on $n) jobs"; exit 1; }
done
echo "PASS: fi_pingpong over krcore, 1 B to 4 MiB, data checked"
