#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Coverage-guided fuzzing of the harnesses in tests/fuzz with clang's
# libFuzzer and ASan+UBSan, starting from the committed corpora.
# Usage: scripts/fuzz.sh [SECONDS per harness, default 60] [harness...]
# New inputs go to build-fuzz/corpus/<name> (the first directory libFuzzer is
# given: never run a harness with tests/fuzz/corpus/<name> first, or the
# search writes into the committed corpus); a crash leaves crash-* in the
# current directory (replay it: build-fuzz/tests/fuzz/<harness> crash-...).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
dir=build-fuzz
[ -d "$dir" ] || CC=clang meson setup "$dir" -Dfuzz=true -Db_sanitize=address,undefined \
	-Db_lundef=false >/dev/null
# fuzz_vqp_post starts a keeper on the sim (hugepages: scripts/hugepages.sh)
export KRPOOLD="$dir/tools/krpoold"
export KR_LAUNCH_KEY="${KR_LAUNCH_KEY:-6b72636f7265207465737473206f6e65206c61756e63682c206e6f2073656372}"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=($(ls tests/fuzz/*.c | xargs -n1 basename | sed -n 's/^\(fuzz_[a-z_]*\)\.c$/\1/p' | grep -v '^fuzz_main$'))
for n in "${names[@]}"; do
	ninja -C "$dir" "tests/fuzz/$n" tools/krpoold >/dev/null
	corpus="$dir/corpus/${n#fuzz_}"
	mkdir -p "$corpus"
	echo "== $n: $secs s"
	"$dir/tests/fuzz/$n" -max_total_time="$secs" -max_len=2048 -print_final_stats=1 "$corpus" \
		"tests/fuzz/corpus/${n#fuzz_}"
done
