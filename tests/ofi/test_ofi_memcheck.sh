#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The provider under valgrind memcheck: test_ofi_msg, test_ofi_rma,
# test_ofi_rma_direct, test_ofi_idle and test_ofi_zcopy again, each test program (the provider loaded into it, and
# its forked peers) run under valgrind; an error or a definite leak fails.
# (meson's valgrind setup would wrap the shell, not the programs.) Exit 77
# without valgrind.
# Usage: test_ofi_memcheck.sh BUILDDIR SOURCE_ROOT
set -euo pipefail
bin=$1 src=$2
command -v valgrind >/dev/null || { echo "SKIP: no valgrind"; exit 77; }
export KR_TEST_WRAP="valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite"
for t in msg rma rma_direct idle zcopy; do
	echo "== test_ofi_$t under memcheck"
	bash "$src/tests/ofi/test_ofi_two_nodes.sh" "$bin" "$src" "test_ofi_$t"
done
echo "PASS: the provider is clean under memcheck"
