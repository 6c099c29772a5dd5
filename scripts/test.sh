#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Quickstart 2: install what is missing, build with ASan+UBSan, run every test
# suite (fast, integration, kmod; kmod skips itself without qemu), then the fast
# suite again under valgrind memcheck in a build without sanitizers, the fuzz
# suite (clang's libFuzzer, 8 s per harness), and compile the release build the
# benchmarks use. Exits non-zero when any test fails or a build does not compile.
# Usage: scripts/test.sh [extra meson test args, e.g. --suite fast]
#        (with args the fuzz suite runs only when they are exactly --suite fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --kmod
# Keepers need hugepages: reserved here as root (as .ci/run does).
if ! scripts/hugepages.sh 512; then
	echo "test.sh: without them the tests that start a keeper (integration, security) skip"
fi
if [ "$(id -u)" != 0 ]; then
	echo "test.sh: not root: the security suite, the network-namespace tests and the" \
		"kmod suite (the kernel image is readable by root only) skip; each skip says why"
fi
rc=0
logs=()
fuzz_only=false
[ "$*" = "--suite fuzz" ] && fuzz_only=true
if ! $fuzz_only; then
	builddir=build-test
	[ -d "$builddir" ] || meson setup "$builddir" -Db_sanitize=address,undefined -Db_lundef=false
	ninja -C "$builddir"
	meson test -C "$builddir" --print-errorlogs --no-suite bench "$@" || rc=$?
	logs+=("$builddir/meson-logs/testlog.json")

	# memcheck cannot run under ASan: a second, plain build.
	vgdir=build-valgrind
	[ -d "$vgdir" ] || meson setup "$vgdir" >/dev/null
	ninja -C "$vgdir"
	meson test -C "$vgdir" --setup valgrind --suite fast --print-errorlogs \
		--logbase valgrind || rc=$?
	logs+=("$vgdir/meson-logs/valgrind-valgrind.json")
	# The libfabric provider is dlopen'ed by programs built without ASan
	# (fi_info, mpirun's ranks): its suite runs from this plain build.
	if [ $# -eq 0 ]; then
		meson test -C "$vgdir" --suite ofi --print-errorlogs --logbase ofi || rc=$?
		[ -f "$vgdir/meson-logs/ofi.json" ] && logs+=("$vgdir/meson-logs/ofi.json")
	fi
fi

# Coverage-guided fuzzing: clang's libFuzzer over every harness of tests/fuzz
# (only those and the keeper are built with clang), each from its corpus.
if [ $# -eq 0 ] || $fuzz_only; then
	fzdir=build-fuzz
	[ -d "$fzdir" ] || CC=clang meson setup "$fzdir" -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
	harnesses=$(ls tests/fuzz/fuzz_*.c | sed -n 's|^tests/fuzz/\(fuzz_[a-z_]*\)\.c$|tests/fuzz/\1|p' |
		grep -v fuzz_main)
	# shellcheck disable=SC2086
	ninja -C "$fzdir" tools/krpoold $harnesses
	meson test -C "$fzdir" --no-rebuild --suite fuzz --print-errorlogs --logbase fuzz || rc=$?
	logs+=("$fzdir/meson-logs/fuzz.json")
fi

if ! $fuzz_only; then
	# The benchmarks' build (-O3 warns where -O2 does not): it must compile too.
	reldir=build-release
	[ -d "$reldir" ] || meson setup "$reldir" --buildtype=release >/dev/null
	ninja -C "$reldir" >/dev/null || { echo "release build failed"; rc=1; }
fi

# The verdict last, and each failure again with the end of its output: CI
# shows the end of the log, where meson's own error logs scrolled away.
python3 - "${logs[@]}" <<'PY'
import json, sys
runs = [json.loads(l) for f in sys.argv[1:] for l in open(f) if l.strip()]
bad = [t for t in runs if t["result"] not in ("OK", "EXPECTEDFAIL", "SKIP")]
for t in bad:
    out = (t.get("stdout") or "") + (t.get("stderr") or "")
    tail = out.rstrip().splitlines()[-25:]
    print(f"== {t['result']}: {t['name']} after {t['duration']:.1f} s; its last lines:")
    print("\n".join("   " + l for l in tail))
skip = sum(t["result"] == "SKIP" for t in runs)
print(f"tests: {len(runs) - len(bad) - skip} passed, {len(bad)} failed, {skip} skipped")
for t in bad:
    print(f"failed: {t['name']} ({t['result']})")
PY
exit $rc
