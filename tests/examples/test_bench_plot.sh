#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krbench all writes one JSON document with every bench (small iteration
# counts here), and scripts/plot.py draws its four figures from it.
# Usage: test_bench_plot.sh KRBENCH SOURCE_ROOT
set -eu
krbench=$1 src=$2
/usr/bin/python3 -c "import matplotlib" 2>/dev/null ||
	{ echo "SKIP: no python3-matplotlib (scripts/deps.sh installs it)"; exit 77; }
dir=$(mktemp -d /tmp/krbench-all.XXXXXX)
trap 'rm -rf "$dir"' EXIT
rc=0
"$krbench" all -n 200 "$dir/all.json" || rc=$?
[ "$rc" = 0 ] || { echo "krbench all exited $rc"; exit "$rc"; }
/usr/bin/python3 - "$dir/all.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
names = [(r["bench"], r.get("nodes"), r.get("profile")) for r in runs]
assert len(runs) == 11, names
fan = next(r for r in runs if r["bench"] == "fanout")
assert fan["fanout_ratio"] > 0 and len(fan["dcis"]) == 4, fan
busy = next(r for r in runs if r["bench"] == "attach" and "busy_p99_ratio" in r)
assert busy["busy_p99_ratio"] > 0, busy
send = next(r for r in runs if r["bench"] == "send")
assert all(k in send for k in ("p50_us", "msg_rate", "raw_msg_rate", "rate_ratio")), send
peer = next(r for r in runs if r["bench"] == "read_peer")
assert peer["rtt_over_udp"] > 0 and peer["vqp"]["p50_us"] > 0, peer
remote = next(r for r in runs if r["bench"] == "connect" and r.get("nodes") == 2)
assert all(len(c["cdf_us"]) == 21 for c in remote["cases"]), remote
ela = next(r for r in runs if r["bench"] == "elastic")
assert ela["procs"] == 200 and ela["first_read_p50_us"] > 0, ela
print("runs:", names)
PY
"$src/scripts/plot.py" "$dir/all.json" "$dir"
for f in connect_cdf connects_per_s read fanout; do
	[ -s "$dir/$f.png" ] || { echo "FAIL: no $f.png"; exit 1; }
done
echo "ok: krbench all + plot.py"
