#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Quickstart 1: install what is missing, build, and show krcore on four
# simulated nodes on this machine (software ConnectX hosts on 127.0.0.2..5
# over UDP loopback):
#   1. a keeper (krpoold) per node, node 1 also the MetaServer;
#   2. a serve_region job on nodes 2..4 lending 4 KiB of memory;
#   3. hello_krcore on node 1: attaches, connects to the three others, READs,
#      WRITEs and CASes their memory and checks every byte;
#   4. krbench: attach, connect and first completion, krcore beside the
#      verbs way, under the sim's ConnectX-4 firmware cost model.
# Everything it starts is stopped on exit; no hugepage file is left behind.
# Usage: scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/hugepages.sh 512 || {
	echo "demo: the keepers need hugepages (see above); then run scripts/demo.sh again"
	exit 1
}
builddir=build-release
[ -d "$builddir" ] || meson setup "$builddir" --buildtype=release >/dev/null
ninja -C "$builddir" >/dev/null
bin=$builddir
scripts/demo-cluster.sh "$builddir"

dir=$(mktemp -d /tmp/krcore-demo.XXXXXX)
trap 'rm -rf "$dir"' EXIT
echo "== 4. krbench: krcore beside the verbs way, ConnectX-4 firmware cost model =="
"$bin/tools/krbench" attach -n 200 --json >"$dir/attach.json"
"$bin/tools/krbench" connect --nodes 2 --profile connectx4 -n 2000 --json >"$dir/connect.json"
python3 - "$dir/attach.json" "$dir/connect.json" <<'PY'
import json, sys
att = json.load(open(sys.argv[1]))
con = json.load(open(sys.argv[2]))
case = {c["name"]: c for c in con["cases"]}
def us(v):
    return f"{v:,.2f} us" if v < 100 else f"{v:,.0f} us"
rows = [
    ("attach a job to its keeper", att["p50_us"], None),
    ("connect, peer's record cached", case["connect_cached"]["p50_us"], case["verbs_connect"]["p50_us"]),
    ("connect, record from MetaServer", case["connect_uncached"]["p50_us"], None),
    ("thread's first connect (DCI lease)", case["connect_first"]["p50_us"], None),
    ("connect + first 8-byte READ", case["first_read"]["p50_us"], case["verbs_baseline"]["p50_us"]),
]
print(f"{'p50, 2 nodes':36} {'krcore':>14} {'verbs (RC)':>14} {'verbs/krcore':>13}")
for name, k, v in rows:
    vs = us(v) if v else "-"
    ratio = f"{v / k:,.0f}x" if v else ""
    print(f"{name:36} {us(k):>14} {vs:>14} {ratio:>13}")
print(f"connects/s, one thread: {con['connects_per_s']:,.0f}")
print("verbs: CQ + RC QP, QPN/GID exchange over TCP as ibv_rc_pingpong, RST->INIT->RTR->RTS.")
print("Full tables: krbench connect --nodes 2 --profile connectx4; krbench(1).")
PY
