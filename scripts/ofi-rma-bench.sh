#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# RMA through the libfabric provider by the NIC (a region of heap memory,
# include/krcore/fi_krcore.h) beside the same served by the target's
# provider (a malloc'ed region), in one run on two sim nodes, alternating
# rounds (tests/ofi/ofi_rma_bench.c says what it measures): 8-byte fi_read
# and fi_write round trips (p50), 1 MiB fi_read bandwidth. Prints a table
# and, last, a JSON line. Release build. Exit 77 without the provider or
# hugepages.
# Usage: [ROUNDS=N] scripts/ofi-rma-bench.sh BUILDDIR
set -euo pipefail
bin=$(realpath "${1:?usage: ofi-rma-bench.sh BUILDDIR}")
. "$(dirname "$0")/sim-cluster-lib.sh"
prog=$bin/tests/ofi/ofi_rma_bench
[ -x "$prog" ] && [ -f "$bin/libkrcore-fi.so" ] || { echo "SKIP: $prog or the provider not built"; exit 77; }
kr_need_hugepages 64 "two keepers"
export KR_LAUNCH_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export FI_PROVIDER_PATH=$bin FI_PROVIDER=krcore
dir=$(mktemp -d /tmp/krcore-ofirma.XXXXXX)
keepers=()
kr_keeper_args=(--heap-mb 8) # a 1 MiB region and buffer beside the provider's own
trap 'kr_stop ${keepers[@]+"${keepers[@]}"}; rm -rf "$dir"' EXIT
kr_start_keepers "$dir" 2 >"$dir/start.log" || { cat "$dir/start.log"; exit 1; }
timeout 300 "$prog" "$dir/node1.sock" "$dir/node2.sock" --rounds "${ROUNDS:-3}" --json
