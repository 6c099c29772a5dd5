#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The chaos soak, longer and wider than CI's: keepers on NODES simulated hosts
# over UDP loopback with 1% drop, 0.5% duplication and 1% reorder on every
# host's packets, 2 jobs x 3 threads per node checking every READ, CAS and FAA
# against their own writes, in 2% of their rounds disconnecting a vQP with
# requests in flight (whose buffers nothing may write once kr_disconnect
# returned), a job SIGKILLed every 4 s, node 1's keeper
# SIGSTOPped for 1 s at a quarter of the run, the last node's keeper killed
# and restarted at half. Release build. Prints the summary table; the JSON
# goes to build-rel/soak.json. Exits non-zero on any corruption, request
# without completion within 5 s, crash or lease left behind.
# Usage: scripts/soak.sh [MINUTES (10)] [NODES (4)]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-10}
nodes=${2:-4}
case "$minutes$nodes" in *[!0-9]*) echo "usage: scripts/soak.sh [MINUTES] [NODES]" >&2; exit 2;; esac
scripts/deps.sh
builddir=build-rel
[ -d "$builddir" ] || meson setup "$builddir" --buildtype=release >/dev/null
ninja -C "$builddir"
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
if [ "${free:-0}" -lt $((nodes * 16 + 16)) ]; then
	echo "soak: needs $((nodes * 16 + 16)) free 2 MB hugepages (have ${free:-0}):" \
	     "echo 512 > /proc/sys/vm/nr_hugepages; mount -t hugetlbfs nodev /dev/hugepages" >&2
	exit 77
fi
export KRPOOLD="$PWD/$builddir/tools/krpoold" KRCTL="$PWD/$builddir/tools/krctl"
export KR_LAUNCH_KEY=${KR_LAUNCH_KEY:-$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')} # one launch
exec "$builddir/tests/job/virtqp/test_virtqp_chaos_soak" --seconds $((minutes * 60)) \
	--nodes "$nodes" --jobs 2 --threads 3 --kill-ms 4000 --pause-keeper \
	--json "$builddir/soak.json"
