#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# An unmodified MPI program over krcore: tests/ofi/ofi_mpi_check.c includes
# only mpi.h and is built with Open MPI's wrapper flags, nothing of krcore.
# mpirun -np 8 over four sim nodes (two ranks a node, scripts/sim-rank.sh)
# with Open MPI's cm pml, its ofi mtl and the provider krcore from the build
# (FI_PROVIDER_PATH): point-to-point with tags and wildcards, non-blocking
# sends of 1 B .. 16 MiB, probe / iprobe / mprobe, Barrier, Bcast, Allreduce,
# Alltoall, Alltoallv, every result checked by the program. After it, each
# node's keeper must have counted two attaches and two detaches (its two
# ranks really went through krcore, and left) and hold no job. (Sampling
# krctl while the ranks ran missed them on a VM where 8 polling ranks on 2
# cores starved the sampler: its first round took the whole run.) Exit 77
# without mpirun, the program, or hugepages.
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
keepers=()
cleanup() {
	kr_stop ${keepers[@]+"${keepers[@]}"}
	rm -rf "$dir"
}
trap cleanup EXIT
kr_start_keepers "$dir" 4 >"$dir/start.log" || { cat "$dir/start.log"; exit 1; }

jobs_on() { # the keeper of node $1's attached jobs now
	"$bin/tools/krctl" -s "$dir/node$1.sock" --json jobs 2>/dev/null |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))' 2>/dev/null || echo 0
}
counted() { # the keeper of node $1's attaches and detaches so far
	"$bin/tools/krctl" -s "$dir/node$1.sock" --json status 2>/dev/null |
		python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["attaches"], s["detaches"])' \
			2>/dev/null || echo "? ?"
}

echo "== mpirun -np 8, pml cm, mtl ofi, provider krcore, two ranks on each of four nodes"
rc=0
timeout 240 mpirun --oversubscribe --bind-to none -np 8 -x KR_LAUNCH_KEY -x FI_PROVIDER_PATH \
	-x FI_LOG_LEVEL -x FI_LOG_PROV \
	--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include krcore \
	"$src/scripts/sim-rank.sh" "$dir" 2 "$prog" >"$dir/out" 2>&1 || rc=$?
cat "$dir/out"
[ "$rc" = 0 ] || { echo "FAIL: mpirun exited $rc"; exit 1; }
grep -q "^ofi_mpi: 8 ranks, every check passed" "$dir/out" || { echo "FAIL: the program's checks"; exit 1; }
for n in 1 2 3 4; do
	for _ in $(seq 40); do
		[ "$(jobs_on $n)" = 0 ] && break
		sleep 0.05
	done
	[ "$(jobs_on $n)" = 0 ] || { echo "FAIL: node $n still holds jobs after the run"; exit 1; }
	c=$(counted $n)
	echo "node $n: attaches, detaches: $c"
	[ "$c" = "2 2" ] || { echo "FAIL: the keeper of node $n did not serve its two ranks"; exit 1; }
done
echo "PASS: an MPI program over krcore through libfabric, 8 ranks on 4 nodes"
