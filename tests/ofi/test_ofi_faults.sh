#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The provider over a lossy wire: test_ofi_msg, test_ofi_rma,
# test_ofi_rma_direct, test_ofi_idle and test_ofi_zcopy again with both sim nodes dropping 5 %, duplicating 5 % and
# reordering 10 % of their packets (krcore-sim(7)): messages, RMA and
# atomics must come out the same, every byte checked by the programs.
# Usage: test_ofi_faults.sh BUILDDIR SOURCE_ROOT
set -euo pipefail
bin=$1 src=$2
export kr_sim_opts=",drop=0.05,dup=0.05,reorder=0.1"
for t in msg rma rma_direct idle zcopy; do
	echo "== test_ofi_$t, sim $kr_sim_opts"
	bash "$src/tests/ofi/test_ofi_two_nodes.sh" "$bin" "$src" "test_ofi_$t"
done
echo "PASS: the provider's messages, RMA and atomics over a lossy, duplicating, reordering wire"
