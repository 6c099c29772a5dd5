#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# An unmodified MPI program over krcore: tests/ofi/ofi_mpi_check.c includes
# only mpi.h and is built with Open MPI's wrapper flags, nothing of krcore.
# mpirun -np 8 over four sim nodes (two ranks a node, scripts/sim-rank.sh)
# with Open MPI's cm pml, its ofi mtl and the provider krcore from the build
# (FI_PROVIDER_PATH): point-to-point with tags and wildcards, non-blocking
# sends of 1 B .. 16 MiB, probe / iprobe / mprobe, Barrier, Bcast, Allreduce,
# Alltoall, Alltoallv, every result checked by the program. While it runs,
# krctl must show each node's keeper holding two jobs (the ranks really
# went through krcore); after it, none. Exit 77 without mpirun, the
# program, or hugepages.
# Usage: test_ofi_mpi.sh BUILDDIR SOURCE_ROOT
set -euo pipefail
bin=$1 src=$2
. "$src/scripts/sim-cluster-lib.sh"
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (apt-get install openmpi-bin)"; exit 77; }
prog=$bin/tests/ofi/ofi_mpi_check
[ -x "$prog" ] || { echo "SKIP: $prog not built (libopenmpi-dev missing at setup)"; exit 77; }
kr_need_hugepages 128 "four keepers"

kr_mpi_env
# the provider's own warnings (why an operation failed) in the output, nobody else's
export FI_PROVIDER_PATH=$bin FI_LOG_LEVEL=${FI_LOG_LEVEL:-warn} FI_LOG_PROV=krcore
dir=$(mktemp -d /tmp/krcore-ofi-mpi.XXXXXX)
keepers=() watch=
cleanup() {
	[ -z "$watch" ] || kill "$watch" 2>/dev/null || true
	kr_stop ${keepers[@]+"${keepers[@]}"}
	rm -rf "$dir"
}
trap cleanup EXIT
kr_start_keepers "$dir" 4 >"$dir/start.log" || { cat "$dir/start.log"; exit 1; }

jobs_on() { # the keeper of node $1's attached jobs now
	"$bin/tools/krctl" -s "$dir/node$1.sock" --json jobs 2>/dev/null |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))' 2>/dev/null || echo 0
}
# the most jobs each keeper held while the program ran, sampled every 50 ms
(
	declare -A most=([1]=0 [2]=0 [3]=0 [4]=0)
	while :; do
		for n in 1 2 3 4; do
			j=$(jobs_on $n)
			[ "$j" -le "${most[$n]}" ] || most[$n]=$j
		done
		echo "${most[1]} ${most[2]} ${most[3]} ${most[4]}" >"$dir/most"
		sleep 0.05
	done
) &
watch=$!

echo "== mpirun -np 8, pml cm, mtl ofi, provider krcore, two ranks on each of four nodes"
rc=0
timeout 240 mpirun --oversubscribe --bind-to none -np 8 -x KR_LAUNCH_KEY -x FI_PROVIDER_PATH \
	-x FI_LOG_LEVEL -x FI_LOG_PROV \
	--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include krcore \
	"$src/scripts/sim-rank.sh" "$dir" 2 "$prog" >"$dir/out" 2>&1 || rc=$?
kill "$watch" 2>/dev/null || true
wait "$watch" 2>/dev/null || true
watch=
cat "$dir/out"
[ "$rc" = 0 ] || { echo "FAIL: mpirun exited $rc"; exit 1; }
grep -q "^ofi_mpi: 8 ranks, every check passed" "$dir/out" || { echo "FAIL: the program's checks"; exit 1; }
read -r m1 m2 m3 m4 <"$dir/most"
echo "jobs seen on nodes 1..4 while it ran: $m1 $m2 $m3 $m4"
for m in "$m1" "$m2" "$m3" "$m4"; do
	[ "$m" = 2 ] || { echo "FAIL: a keeper did not hold the two ranks of its node"; exit 1; }
done
for n in 1 2 3 4; do
	for _ in $(seq 40); do
		[ "$(jobs_on $n)" = 0 ] && break
		sleep 0.05
	done
	[ "$(jobs_on $n)" = 0 ] || { echo "FAIL: node $n still holds jobs after the run"; exit 1; }
done
echo "PASS: an MPI program over krcore through libfabric, 8 ranks on 4 nodes"
