#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# test_ofi_msg (the provider's message semantics between two jobs, see its
# header) on two keepers of sim nodes over UDP loopback, one launch.
# Exit 77 without hugepages.
# Usage: test_ofi_msg.sh BUILDDIR SOURCE_ROOT
set -euo pipefail
bin=$1 src=$2
. "$src/scripts/sim-cluster-lib.sh"
kr_need_hugepages 64 "two keepers"
export KR_LAUNCH_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
export FI_PROVIDER_PATH=$bin FI_PROVIDER=krcore
dir=$(mktemp -d /tmp/krcore-ofi-msg.XXXXXX)
keepers=()
cleanup() {
	kr_stop ${keepers[@]+"${keepers[@]}"}
	rm -rf "$dir"
}
trap cleanup EXIT
kr_start_keepers "$dir" 2 >"$dir/start.log" || { cat "$dir/start.log"; exit 1; }
timeout 120 ${KR_TEST_WRAP:-} "$bin/tests/ofi/test_ofi_msg" "$dir/node1.sock" "$dir/node2.sock"
