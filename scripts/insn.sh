#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Data-path instructions: a vQP's post+poll of one 8-byte request against the
# raw DCI's (the same request built from the same arguments, posted and
# polled with the public devx API: kr_devx_qp_post_send, kr_devx_cq_poll),
# counted by callgrind in a release build (tests/job/virtqp/bench_virtqp_insn.c:
# 2,000 of each, the wait for the CQE outside the count). One row per request: READ, an inline
# WRITE, CAS, batch: 16 READs posted with one doorbell (the vQP: KR_POST_MORE on all but the
# last; raw: a post list) and polled with one call, per request, and send: an 8-byte SEND to a
# port of this node with its send completion, its receive completion and the buffer posted
# again (the vQP: kr_post_send, kr_poll, kr_poll_recv, kr_post_recv, the port's credits
# included; raw: the DCI to the port's DC target, its CQ and SRQ); insn_ratio = vqp / raw.
# Repeatable to the instruction.
# Usage: scripts/insn.sh [--json] [--per-function] [BUILDDIR]   (default build-release)
#   --per-function   also each function's own instructions per request (vQP path)
set -eu
cd "$(dirname "$0")/.."
json=0 perfn=0 build=build-release
for a in "$@"; do
	case $a in
	--json) json=1 ;;
	--per-function) perfn=1 ;;
	-*) echo "usage: scripts/insn.sh [--json] [--per-function] [BUILDDIR]" >&2; exit 2 ;;
	*) build=$a ;;
	esac
done
command -v valgrind >/dev/null || { echo "insn.sh: valgrind missing (apt-get install valgrind)" >&2; exit 77; }
[ -d "$build" ] || meson setup "$build" --buildtype=release >/dev/null
ninja -C "$build" tools/krpoold tests/job/virtqp/bench_virtqp_insn >/dev/null
export KRPOOLD="$build/tools/krpoold"
: "${KR_LAUNCH_KEY:=6b72636f7265207465737473206f6e65206c61756e63682c206e6f2073656372}"
export KR_LAUNCH_KEY
ops=2000
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# count OP PATH: instructions per request of PATH (vq or raw) for OP
count() {
	out="$work/$1.$2"
	if ! valgrind --tool=callgrind --callgrind-out-file="$out" \
		--toggle-collect="$2_post*" --toggle-collect="$2_poll" --toggle-collect="$2_recv" \
		"$build/tests/job/virtqp/bench_virtqp_insn" "$1" >"$out.log" 2>&1; then
		echo "insn.sh: bench_virtqp_insn $1 failed under callgrind:" >&2
		tail -n 20 "$out.log" >&2
		exit 1
	fi
	total=$(sed -n 's/^summary: *//p' "$out" | cut -d' ' -f1)
	echo $((total / ops))
}

rows=""
for op in read write cas batch send; do
	vq=$(count "$op" vq)
	raw=$(count "$op" raw)
	ratio=$(awk -v a="$vq" -v b="$raw" 'BEGIN { printf "%.3f", a / b }')
	rows="$rows$op $vq $raw $ratio
"
done

if [ "$json" = 1 ]; then
	printf '{"bench": "insn", "build": "%s", "ops": %d, "requests": [' "$build" "$ops"
	printf '%s' "$rows" | awk 'NF { printf "%s{\"op\": \"%s\", \"vqp_insn\": %d, \"raw_insn\": %d, \"insn_ratio\": %s}", n++ ? ", " : "", $1, $2, $3, $4 }'
	printf '%s' "$rows" | awk '$1 == "read" { printf "], \"vqp_insn\": %d, \"raw_insn\": %d, \"insn_ratio\": %s}\n", $2, $3, $4 }'
else
	echo "instructions per post+poll of one 8-byte request (callgrind, $build, $ops each)"
	printf '%-8s %10s %10s %11s\n' request vqp_insn raw_insn insn_ratio
	printf '%s' "$rows" | awk 'NF { printf "%-8s %10d %10d %11s\n", $1, $2, $3, $4 }'
fi
if [ "$perfn" = 1 ]; then
	for op in read write cas batch send; do
		echo "vQP $op: each function's own instructions per request"
		callgrind_annotate "$work/$op.vq" 2>/dev/null |
			awk -v n="$ops" '/Auto-annotated/ { exit }
				/^ *[0-9,]+ \( *[0-9.]+%\)  / && !/PROGRAM TOTALS/ {
					c = $1; gsub(",", "", c); f = $0
					sub(/ \[.*/, "", f); sub(/^.*\//, "", f)
					if (c + 0 >= n) printf "  %6.1f  %s\n", c / n, f }'
	done
fi
