#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Make sure PAGES (default 512) 2 MB hugepages are reserved and hugetlbfs is
# mounted on /dev/hugepages: the keeper's shared memory lives there. As root
# it reserves and mounts what is missing (never lowers a reservation); as
# another user it says what to run and exits 1. Used by demo.sh, test.sh and
# .ci/run.
# Usage: scripts/hugepages.sh [PAGES]
set -euo pipefail
want=${1:-512}
nr=/proc/sys/vm/nr_hugepages
have=$(cat "$nr" 2>/dev/null || echo 0)
mounted=0
mountpoint -q /dev/hugepages 2>/dev/null && mounted=1

if [ "$have" -ge "$want" ] && [ "$mounted" = 1 ]; then
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "hugepages: $have of $want 2 MB hugepages reserved, hugetlbfs $([ $mounted = 1 ] || echo "not ")mounted on /dev/hugepages."
	echo "hugepages: as root, run: echo $want > $nr; mkdir -p /dev/hugepages; mount -t hugetlbfs nodev /dev/hugepages"
	exit 1
fi
if [ "$have" -lt "$want" ]; then
	echo "$want" >"$nr" 2>/dev/null || true
	have=$(cat "$nr")
	# The kernel reserves what it can find; fragmented memory gives fewer.
	[ "$have" -ge "$want" ] || echo "hugepages: asked for $want, the kernel reserved $have"
fi
if [ "$mounted" = 0 ]; then
	mkdir -p /dev/hugepages
	mount -t hugetlbfs nodev /dev/hugepages || { echo "hugepages: cannot mount hugetlbfs on /dev/hugepages"; exit 1; }
fi
[ "$have" -ge "$want" ]
