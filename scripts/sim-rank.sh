#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run one rank of an MPI job on a simulated cluster of one machine: rank r
# attaches to the keeper of node r / RANKS_PER_NODE + 1, whose socket is
# DIR/node<n>.sock (as scripts/sim-cluster-lib.sh starts them). On a real
# cluster there is one keeper per node at the default socket and no wrapper.
#   mpirun -np 8 scripts/sim-rank.sh DIR 2 examples/mpi_alltoall
# The rank comes from Open MPI (OMPI_COMM_WORLD_RANK) or any PMIx launcher
# (PMIX_RANK). Each rank's pid goes to DIR/rank<r>.pid.
set -eu
[ $# -ge 3 ] || { echo "usage: sim-rank.sh DIR RANKS_PER_NODE PROGRAM [ARG...]" >&2; exit 2; }
dir=$1 per=$2
shift 2
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}
[ -n "$rank" ] || { echo "sim-rank.sh: no rank in the environment (not under mpirun?)" >&2; exit 2; }
KR_KEEPER_SOCKET=$dir/node$((rank / per + 1)).sock
export KR_KEEPER_SOCKET
echo $$ >"$dir/rank$rank.pid" # the rank keeps this pid: tests signal ranks by it
exec "$@"
