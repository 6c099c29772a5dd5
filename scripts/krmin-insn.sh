#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Post+poll instructions with and without kmod-min, measured by callgrind in
# the kmod suite's qemu guest (root; needs what tests/kmod/run_qemu_tests.sh
# needs, and valgrind): a release build's krpoold and bench_virtqp_insn and
# valgrind's callgrind are copied into the guest, which runs
# tests/kmod/krmin_insn.sh. Prints one line per mode and exits 1 when the
# counts differ.
# Usage: scripts/krmin-insn.sh [BUILDDIR]   (default build-release)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build-release}
[ -d "$build" ] || meson setup "$build" --buildtype=release >/dev/null
ninja -C "$build" tools/krpoold tests/job/virtqp/bench_virtqp_insn >/dev/null
command -v valgrind.bin >/dev/null || { echo "valgrind missing (apt-get install valgrind)"; exit 77; }
vg=/usr/libexec/valgrind
work=$(pwd)/$build/krmin-insn
rc=0
KRMIN_WORKDIR=$work KRMIN_TESTS=krmin_insn.sh KRMIN_GUEST_TIMEOUT=600 KRMIN_QEMU_TIMEOUT=900 \
	KRMIN_DYN_TESTS=$(pwd)/tests/kmod/krmin_insn.sh \
	KRMIN_DYN_TOOLS="$build/tools/krpoold $build/tests/job/virtqp/bench_virtqp_insn" \
	KRMIN_GUEST_FILES="$(command -v valgrind.bin) $vg/callgrind-amd64-linux $vg/vgpreload_core-amd64-linux.so $vg/default.supp" \
	tests/kmod/run_qemu_tests.sh >"$work.log" 2>&1 || rc=$?
grep -a '^insn:' "$work/console.log" 2>/dev/null || tail -n 30 "$work.log"
exit "$rc"
