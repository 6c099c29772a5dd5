#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# An MPI job launched by mpirun attaches at launch: 4 keepers on simulated
# nodes, `mpirun --oversubscribe -np 8` with two ranks per node
# (scripts/sim-rank.sh picks each rank's keeper); every rank connects to
# every other, WRITEs and READs 8 bytes, and checks what all others wrote
# into its own memory; then the same bootstrap the verbs way (an RC QP per
# peer, MPI_Alltoall of QP numbers, RTS, WRITE + READ), both under the
# ConnectX-4 firmware cost model; then once more with peers found by rank
# in mpirun's PMIx store instead of the MetaServer. Then rank 3 is SIGKILLed while every rank
# keeps doing WRITE + READ rounds with every other: each other rank's first
# loss is rank 3 (no rank reports what it sees once mpirun takes the job
# down), mpirun exits non-zero, and no keeper holds a lease of the job
# afterwards. Then node 4's keeper is stopped: its ranks' attach
# fails with a message naming its socket and mpirun exits non-zero. No
# keeper or hugepage is left behind. Exit 77 without Open MPI or hugepages.
# Usage: test_mpi_alltoall.sh BUILDDIR SOURCE_ROOT
set -euo pipefail
bin=$1 src=$2
. "$src/scripts/sim-cluster-lib.sh"
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (apt-get install openmpi-bin)"; exit 77; }
[ -x "$bin/examples/mpi_alltoall" ] ||
	{ echo "SKIP: examples/mpi_alltoall not built (libopenmpi-dev missing at setup)"; exit 77; }
kr_need_hugepages 128 "four keepers"

kr_mpi_env
dir=$(mktemp -d /tmp/krcore-mpi.XXXXXX)
hp_before=$(ls /dev/hugepages)
keepers=()
kr_keeper_args=(--dcis 16)
kr_sim_opts=,profile=connectx4
cleanup() {
	kr_stop ${keepers[@]+"${keepers[@]}"}
	rm -rf "$dir"
}
trap cleanup EXIT

kr_start_keepers "$dir" 4 >"$dir/start.log" || { cat "$dir/start.log"; exit 1; }
vport=$(kr_free_port) # the verbs way's sim NICs, one per rank on 127.0.0.20..
run() { # NP ARG...: mpirun of mpi_alltoall, two ranks per node; its output in $dir/out
	local np=$1
	shift
	kr_mpirun 120 "$dir" 2 "$np" "$bin/examples/mpi_alltoall" "$@" >"$dir/out" 2>&1
}

echo "== 8 ranks on 4 nodes, all-to-all, krcore and the verbs way =="
rc=0
run 8 --verbs-port "$vport" --profile connectx4 || rc=$?
[ "$rc" = 0 ] || { cat "$dir/out"; echo "FAIL: mpirun exited $rc"; exit 1; }
cat "$dir/out"
grep -q "8 ranks on 4 nodes.*, 0 failures" "$dir/out" || { echo "FAIL: not 8 ranks on 4 nodes with 0 failures"; exit 1; }
grep -q "^bootstrap_ratio" "$dir/out" || { echo "FAIL: no verbs figure"; exit 1; }
grep -q "^serial_ratio" "$dir/out" || { echo "FAIL: no figure for verbs on one command queue per node"; exit 1; }
grep -q "^dc_ratio" "$dir/out" || { echo "FAIL: no per-process DC figure"; exit 1; }

echo "== the same, peers found by rank in mpirun's PMIx store =="
rc=0
run 8 --pmix || rc=$?
if [ "$rc" != 0 ] && grep -q "kr_pmix_exchange: Operation not supported" "$dir/out"; then
	echo "   skipped: libkrcore built without PMIx (libpmix-dev)"
else
	[ "$rc" = 0 ] || { cat "$dir/out"; echo "FAIL: mpirun --pmix exited $rc"; exit 1; }
	cat "$dir/out"
	grep -q "8 ranks on 4 nodes.*rank in the PMIx store, 0 failures" "$dir/out" ||
		{ echo "FAIL: not 8 ranks found through PMIx with 0 failures"; exit 1; }
fi

echo "== kr_pmix_exchange / kr_connect_rank: bad input and every rank through the store =="
rc=0
kr_mpirun 120 "$dir" 1 2 "$bin/tests/examples/test_pmix_rank" >"$dir/out" 2>&1 || rc=$?
cat "$dir/out"
if grep -q "SKIP: libkrcore built without PMIx" "$dir/out"; then
	echo "   skipped"
elif [ "$rc" != 0 ] || ! grep -q "^pmix: 2 ranks" "$dir/out"; then
	echo "FAIL: test_pmix_rank exited $rc"
	exit 1
fi

echo "== rank 3 SIGKILLed mid-run: the first peer each other rank loses is rank 3 =="
rm -f "$dir"/rank*.pid "$dir/soak.ready"
run 8 --soak 60000 --ready "$dir/soak.ready" &
mpid=$!
for _ in $(seq 1200); do
	[ -e "$dir/soak.ready" ] && [ -s "$dir/rank3.pid" ] && break
	sleep 0.05
done
[ -e "$dir/soak.ready" ] || { cat "$dir/out"; echo "FAIL: the soak did not start in 60 s"; exit 1; }
sleep 0.5
kill -KILL "$(cat "$dir/rank3.pid")"
rc=0
wait "$mpid" || rc=$?
[ "$rc" != 0 ] || { cat "$dir/out"; echo "FAIL: mpirun exited 0 with a rank killed"; exit 1; }
grep "lost rank" "$dir/out" || true
grep -q "lost rank 3 " "$dir/out" || { cat "$dir/out"; echo "FAIL: no rank saw rank 3 lost"; exit 1; }
for r in 0 1 2 4 5 6 7; do
	first=$(grep "^rank $r: lost rank" "$dir/out" | head -1)
	[ -z "$first" ] || [[ "$first" == "rank $r: lost rank 3 "* ]] ||
		{ echo "FAIL: rank $r lost another rank first: $first"; exit 1; }
done
for n in 1 2 3 4; do # every rank is gone now: each keeper took its leases back
	for _ in $(seq 100); do
		"$bin/tools/krctl" --socket "$dir/node$n.sock" --json leases | grep -q '"pid"' || break
		sleep 0.05
	done
	! "$bin/tools/krctl" --socket "$dir/node$n.sock" --json leases | grep -q '"pid"' ||
		{ echo "FAIL: node $n still holds leases of the job"; exit 1; }
done

echo "== node 4's keeper stopped: its ranks' attach names the socket =="
kill -TERM "${keepers[3]}"
wait "${keepers[3]}" 2>/dev/null || true
rc=0
run 8 || rc=$?
[ "$rc" != 0 ] || { cat "$dir/out"; echo "FAIL: mpirun exited 0 without node 4's keeper"; exit 1; }
grep -q "kr_attach to the keeper at $dir/node4.sock" "$dir/out" ||
	{ cat "$dir/out"; echo "FAIL: no message naming node 4's socket"; exit 1; }
grep "kr_attach to the keeper" "$dir/out" | head -2

cleanup
trap - EXIT
leftover=$(kr_hugepages_left "$hp_before")
[ -z "$leftover" ] || { echo "FAIL: hugepage files left behind:$leftover"; exit 1; }
echo "ok: mpirun all-to-all, missing keeper reported"
