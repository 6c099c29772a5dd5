#!/bin/sh
# shellcheck shell=dash
# SPDX-License-Identifier: BSD-3-Clause
# In the qemu guest (scripts/krmin-insn.sh puts it there): callgrind's count
# of the instructions one 8-byte READ's post+poll costs, through a vQP and
# through the raw DCI (bench_virtqp_insn, 2000 of each), first with no
# kmod-min (the keeper runs trusted) and then with it loaded (fenced: the
# job maps its DCI through /dev/krmin). The module adds nothing to the data
# path, so the counts must be equal; exits 1 when they differ.
set -u
ops=2000
# one mode, one path (vq or raw): instructions per post+poll
count() {
	out=/tmp/cg.$1.$2
	valgrind.bin --tool=callgrind --callgrind-out-file="$out" --toggle-collect="$2_post*" \
		--toggle-collect="$2_poll" /bin/bench_virtqp_insn >"$out.log" 2>&1 || {
		cat "$out.log"
		echo "insn: bench_virtqp_insn failed under callgrind ($1)"
		exit 1
	}
	sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out" | awk -v n="$ops" '{printf "%.1f", $1 / n}'
}
measure() {
	vq=$(count "$1" vq)
	raw=$(count "$1" raw)
	echo "insn: $1: vQP post+poll $vq, raw DCI $raw instructions per 8-byte READ"
	eval "vq_$1=$vq raw_$1=$raw"
}
rmmod krmin || exit 1
measure trusted
insmod /krmin.ko || exit 1
measure kmod
# shellcheck disable=SC2154 # set by eval in measure
if [ "$vq_trusted" != "$vq_kmod" ] || [ "$raw_trusted" != "$raw_kmod" ]; then
	echo "insn: FAIL: the module changed the data path's instruction count"
	exit 1
fi
echo "insn: same with and without kmod-min"
