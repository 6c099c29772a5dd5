#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One libFuzzer harness for a bounded time (meson test --suite fuzz): starts
# from the committed corpus, writes what it finds under WORKDIR (never into
# the corpus), prints libFuzzer's final statistics. A crash, a sanitizer
# report or a broken invariant fails the test; its input is WORKDIR/crash-*
# (printed in base64 too): add it to the corpus as a regression case.
# Usage: fuzz_run.sh HARNESS CORPUS WORKDIR SECONDS
set -euo pipefail
exe=$1 corpus=$2 work=$3 secs=$4
rm -rf "$work"
mkdir -p "$work/new"
exec "$exe" -max_total_time="$secs" -max_len=2048 -print_final_stats=1 \
	-artifact_prefix="$work/" "$work/new" "$corpus"
