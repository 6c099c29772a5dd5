#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bootstrap time of an MPI job against its size, krcore beside the verbs way
# (RC QP per peer: a NIC per rank, then the ranks of a node on one firmware
# command queue, as one NIC) and a per-process DC transport (8 DCIs, an SRQ
# and a DC target per rank, a node's ranks on one queue): four keepers on
# simulated nodes under the ConnectX-4 firmware cost model, then
# `mpirun --oversubscribe -np N examples/mpi_alltoall --json` for
# N = 4, 8, 16 (N/4 ranks per node, at least 1); each run's JSON has every
# rank's phases and kr_connect calls (per_rank). Writes
# {"bench": "mpi_bootstrap", "runs": [...]} to OUT (default
# BUILDDIR/mpi-bootstrap.json); `scripts/plot.py OUT` draws
# mpi_bootstrap.png from it. Exit 77 without Open MPI or hugepages.
# KR_MPI_ARGS adds arguments to every run (e.g. --pmix: peers found by rank
# in mpirun's PMIx store instead of the MetaServer).
# Usage: scripts/mpi-bootstrap.sh BUILDDIR [OUT] [RANKS...]
set -euo pipefail
bin=${1:?usage: mpi-bootstrap.sh BUILDDIR [OUT] [RANKS...]}
out=$(realpath -m "${2:-$bin/mpi-bootstrap.json}")
shift $(($# < 2 ? $# : 2))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(4 8 16)
. "$(dirname "$0")/sim-cluster-lib.sh"
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (apt-get install openmpi-bin)"; exit 77; }
[ -x "$bin/examples/mpi_alltoall" ] || { echo "SKIP: no $bin/examples/mpi_alltoall"; exit 77; }
kr_need_hugepages 128 "four keepers"

kr_mpi_env
dir=$(mktemp -d /tmp/krcore-mpib.XXXXXX)
keepers=()
kr_keeper_args=(--dcis 16)
kr_sim_opts=,profile=connectx4
trap 'kr_stop ${keepers[@]+"${keepers[@]}"}; rm -rf "$dir"' EXIT
kr_start_keepers "$dir" 4 >"$dir/start.log" || { cat "$dir/start.log"; exit 1; }
vport=$(kr_free_port)
runs=()
for n in "${sizes[@]}"; do
	per=$(((n + 3) / 4))
	kr_mpirun 600 "$dir" "$per" "$n" "$bin/examples/mpi_alltoall" --json \
		--verbs-port "$vport" --profile connectx4 ${KR_MPI_ARGS:-} >"$dir/out" 2>&1 ||
		{ cat "$dir/out"; echo "mpi-bootstrap: $n ranks failed"; exit 1; }
	line=$(grep '^{"bench": "mpi_alltoall"' "$dir/out")
	echo "$line"
	runs+=("$line")
done
{
	printf '{"bench": "mpi_bootstrap", "profile": "connectx4", "runs": ['
	(IFS=,; printf '%s' "${runs[*]}")
	printf ']}\n'
} >"$out"
echo "wrote $out"
