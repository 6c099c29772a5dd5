#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# krbench elastic -n 20 --json: fresh processes attach, connect (the peer's
# record cached and not) and READ; the last line carries every key the
# elastic-start issue names, each a positive number, and procs is 20.
# Timing decides nothing here (release figures: krbench elastic --nodes 2).
# Usage: test_krbench_elastic.sh KRBENCH
set -eu
krbench=$1
out=$(mktemp /tmp/krbench-elastic.XXXXXX)
trap 'rm -f "$out"' EXIT
rc=0
"$krbench" elastic -n 20 --json >"$out" || rc=$?
[ "$rc" = 0 ] || { echo "krbench elastic exited $rc"; cat "$out"; exit "$rc"; }
/usr/bin/python3 - "$out" <<'PY'
import json, sys
last = open(sys.argv[1]).read().strip().splitlines()[-1]
r = json.loads(last)
keys = ["attach_p50_us", "attach_p99_us", "first_connect_cached_p50_us",
        "first_connect_cached_p99_us", "first_connect_uncached_p50_us",
        "first_connect_uncached_p99_us", "first_read_p50_us", "first_read_p99_us",
        "read_rtt_p50_us", "procs"]
missing = [k for k in keys if k not in r]
assert not missing, ("missing keys", missing, r)
assert r["bench"] == "elastic" and r["procs"] == 20, r
assert all(r[k] > 0 for k in keys), r
# attach + connect + READ cannot take less than its attach or its connect
assert r["first_read_p50_us"] >= r["first_connect_cached_p50_us"], r
print("ok:", last)
PY
