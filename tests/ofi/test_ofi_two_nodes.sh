#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run a two-job test program of this folder (test_ofi_msg, test_ofi_rma,
# test_ofi_idle: see each one's header) against two keepers of sim nodes
# over UDP loopback, one launch: PROGRAM NODE1_SOCKET NODE2_SOCKET.
# KR_TEST_WRAP, when set, runs the program under it (valgrind in
# test_ofi_memcheck). Exit 77 without hugepages.
# Usage: test_ofi_two_nodes.sh BUILDDIR SOURCE_ROOT PROGRAM
set -euo pipefail
bin=$1 src=$2 prog=$3
. "$src/scripts/sim-cluster-lib.sh"
kr_need_hugepages 64 "two keepers"
export KR_LAUNCH_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export FI_PROVIDER_PATH=$bin FI_PROVIDER=krcore
dir=$(mktemp -d "/tmp/krcore-$prog.XXXXXX")
keepers=()
cleanup() {
	kr_stop ${keepers[@]+"${keepers[@]}"}
	rm -rf "$dir"
}
trap cleanup EXIT
kr_start_keepers "$dir" 2 >"$dir/start.log" || { cat "$dir/start.log"; exit 1; }
# shellcheck disable=SC2086
timeout 120 ${KR_TEST_WRAP:-} "$bin/tests/ofi/$prog" "$dir/node1.sock" "$dir/node2.sock"
