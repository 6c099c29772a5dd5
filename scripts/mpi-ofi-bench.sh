#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The libfabric provider's benchmark, every figure from this one run (release
# build; plain sim, no firmware cost model: Open MPI's tcp path has none):
# Rows 1-3 run in alternating rounds (ROUNDS, default 3), each ratio the
# median of its rounds' ratios:
#   1. krbench send --peer: a krcore vQP's 64-byte SEND latency between two
#      nodes, the yardstick. It prints a one-way figure (p50_us: its ping-pong
#      goes to node 2 and back twice and is divided by 4), so its round trip
#      here is twice that;
#   2. fabtests' fi_pingpong -p krcore, 8 bytes, between jobs on nodes 1 and 2
#      (it prints the mean time per one-way transfer: the round trip is 2x);
#   3. an MPI ping-pong (tests/ofi/ofi_mpi_bench.c, mpi.h only), 8 bytes,
#      rank 0 on node 1 and rank 1 on node 2, over pml cm + mtl ofi + krcore
#      (p50 round trip);
#   4. MPI_Init + a first MPI_Alltoall (the slowest rank, from main) at 8 and
#      16 ranks over four nodes, through krcore and through Open MPI's own
#      ob1 + tcp on loopback, one after the other; and through the same cm +
#      mtl ofi path over libfabric's own tcp provider (what the libfabric
#      path costs whatever the provider).
# Ratios, round trip against round trip: fi_ratio = fi_pingpong round trip /
# krbench send round trip (goal <= 1.2), mpi_ratio = MPI ping-pong p50 /
# krbench send round trip (goal <= 1.3), bootstrap_ratio = ob1+tcp / krcore
# and ofi_tcp_ratio = ofi tcp / krcore per size. Prints a table and writes
# {"bench": "mpi_ofi", ...} to OUT (default BUILDDIR/mpi-ofi-bench.json);
# scripts/plot.py OUT draws mpi_ofi.png. Exit 77 without fi_pingpong,
# Open MPI or hugepages.
# Usage: [ROUNDS=N] scripts/mpi-ofi-bench.sh BUILDDIR [OUT]
set -euo pipefail
bin=$(realpath "${1:?usage: mpi-ofi-bench.sh BUILDDIR [OUT]}")
out=$(realpath -m "${2:-$bin/mpi-ofi-bench.json}")
. "$(dirname "$0")/sim-cluster-lib.sh"
command -v fi_pingpong >/dev/null || { echo "SKIP: no fi_pingpong (libfabric-bin)"; exit 77; }
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (openmpi-bin)"; exit 77; }
prog=$bin/tests/ofi/ofi_mpi_bench
[ -x "$prog" ] && [ -f "$bin/libkrcore-fi.so" ] || { echo "SKIP: $prog or the provider not built"; exit 77; }
kr_need_hugepages 160 "the keepers"

rounds=${ROUNDS:-3}
kr_mpi_env
export FI_PROVIDER_PATH=$bin
dir=$(mktemp -d /tmp/krcore-ofib.XXXXXX)
keepers=()
kr_keeper_args=(--dcis 16)
trap 'kr_stop ${keepers[@]+"${keepers[@]}"}; rm -rf "$dir"' EXIT

# 1. a krcore vQP's SEND round trip (krbench starts its own two keepers):
# twice krbench's one-way p50.
# Its raw-DCI side failed now and then on this sim (issue #47, fixed since):
# up to three tries, each said.
send_p50() {
	local try
	for try in 1 2 3; do
		"$bin/tools/krbench" send --peer -n 5000 --json --krpoold "$bin/tools/krpoold" \
			>"$dir/send.json" 2>"$dir/send.err" && break
		echo "   try $try: $(tail -1 "$dir/send.err")" >&2
		[ "$try" != 3 ] || { echo "krbench send --peer failed three times" >&2; return 1; }
	done
	python3 -c 'import json,sys; print(2 * json.load(open(sys.argv[1]))["p50_us"])' "$dir/send.json"
}

# 2. fi_pingpong's round trip (twice its mean one-way time), node 2 <- node 1
pp_rtt() {
	local port srv
	port=$((20000 + RANDOM % 40000))
	KR_KEEPER_SOCKET=$dir/node2.sock timeout 120 fi_pingpong -p krcore -e rdm -S 8 -I 5000 \
		-B "$port" >"$dir/pp_srv.out" 2>&1 &
	srv=$!
	for _ in $(seq 100); do
		ss -Hltn "( sport = :$port )" 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	KR_KEEPER_SOCKET=$dir/node1.sock timeout 120 fi_pingpong -p krcore -e rdm -S 8 -I 5000 \
		-P "$port" 127.0.0.1 >"$dir/pp_cli.out" 2>&1
	wait "$srv"
	python3 -c "print(round(2 * $(awk '$1 == "8" {print $7}' "$dir/pp_cli.out"), 2))"
}

# mpirun of ofi_mpi_bench ARGS over krcore, PER ranks per node, NP ranks
mpi_krcore() {
	local per=$1 np=$2
	shift 2
	timeout 300 mpirun --oversubscribe --bind-to none -np "$np" -x KR_LAUNCH_KEY \
		-x FI_PROVIDER_PATH --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include krcore \
		"$(dirname "$0")/sim-rank.sh" "$dir" "$per" "$prog" "$@" | grep '^{'
}
mpi_ofi_tcp() {
	local np=$1
	shift
	timeout 300 mpirun --oversubscribe --bind-to none -np "$np" --mca pml cm --mca mtl ofi \
		--mca mtl_ofi_provider_include tcp "$prog" "$@" | grep '^{'
}
mpi_tcp() {
	local np=$1
	shift
	timeout 300 mpirun --oversubscribe --bind-to none -np "$np" --mca pml ob1 \
		--mca btl tcp,self --mca btl_tcp_if_include lo "$prog" "$@" | grep '^{'
}

kr_start_keepers "$dir" 4 >"$dir/start.log" || { cat "$dir/start.log"; exit 1; }

# 1-3 in alternating rounds: this machine's round trips move by up to 2x
# between runs, so each ratio is the median of its rounds' ratios.
sends=() pps=() mpis=()
for round in $(seq "$rounds"); do
	echo "== round $round of $rounds: krbench send --peer, fi_pingpong -S 8 -I 5000," \
		"MPI ping-pong 8 B (node 1 <-> node 2)"
	s=$(send_p50)
	p=$(pp_rtt)
	m=$(mpi_krcore 1 2 pingpong 5000 | python3 -c 'import json,sys; print(json.load(sys.stdin)["rtt_p50_us"])')
	echo "   vQP SEND round trip $s us (2 x p50), fi_pingpong round trip $p us, MPI p50 $m us"
	sends+=("$s") pps+=("$p") mpis+=("$m")
done

echo "== MPI_Init + first MPI_Alltoall, krcore beside ob1 + tcp and cm + ofi + libfabric's tcp"
boots=()
for n in 8 16; do
	k=$(mpi_krcore $(((n + 3) / 4)) "$n" bootstrap)
	t=$(mpi_tcp "$n" bootstrap)
	o=$(mpi_ofi_tcp "$n" bootstrap)
	echo "   krcore:      $k"
	echo "   ob1 + tcp:   $t"
	echo "   ofi tcp:     $o"
	boots+=("$(python3 -c '
import json, sys
k, t, o = (json.loads(a) for a in sys.argv[1:4])
assert k["checked"] and t["checked"] and o["checked"]
print(json.dumps({"ranks": k["ranks"], "krcore_init_ms": k["init_ms"],
                  "krcore_ms": k["init_alltoall_ms"], "tcp_init_ms": t["init_ms"],
                  "tcp_ms": t["init_alltoall_ms"], "ofi_tcp_init_ms": o["init_ms"],
                  "ofi_tcp_ms": o["init_alltoall_ms"],
                  "bootstrap_ratio": round(t["init_alltoall_ms"] / k["init_alltoall_ms"], 2),
                  "ofi_tcp_ratio": round(o["init_alltoall_ms"] / k["init_alltoall_ms"], 2)}))
' "$k" "$t" "$o")")
done

python3 - "$out" "${sends[*]}" "${pps[*]}" "${mpis[*]}" "${boots[@]}" <<'PY'
import json, statistics, sys
out = sys.argv[1]
sends, pps, mpis = ([float(x) for x in a.split()] for a in sys.argv[2:5])
boots = [json.loads(b) for b in sys.argv[5:]]
med = statistics.median
fi_r = [p / s for p, s in zip(pps, sends)]
mpi_r = [m / s for m, s in zip(mpis, sends)]
r = {"bench": "mpi_ofi", "rounds": len(sends), "krbench_send_rtt_us": round(med(sends), 2),
     "krbench_send_p50_us": round(med(sends) / 2, 2),
     "fi_pingpong_rtt_us": round(med(pps), 2), "fi_ratio": round(med(fi_r), 3),
     "mpi_pingpong_p50_us": round(med(mpis), 2), "mpi_ratio": round(med(mpi_r), 3),
     "round_fi_ratios": [round(x, 3) for x in fi_r],
     "round_mpi_ratios": [round(x, 3) for x in mpi_r], "bootstrap": boots}
print("\n8-byte round trip, median of %d alternating rounds (each round's ratio)" % len(sends))
print("%-34s %10s %8s" % ("", "us", "ratio"))
print("%-34s %10.2f %8s" % ("krbench send --peer (64 B, 2 x p50)", r["krbench_send_rtt_us"], "1"))
print("%-34s %10.2f %8.3f  %s" % ("fi_pingpong -p krcore (mean)", r["fi_pingpong_rtt_us"],
      r["fi_ratio"], " ".join("%.2f" % x for x in fi_r)))
print("%-34s %10.2f %8.3f  %s" % ("MPI ping-pong over krcore (p50)", r["mpi_pingpong_p50_us"],
      r["mpi_ratio"], " ".join("%.2f" % x for x in mpi_r)))
print("\n%-6s %12s %12s %8s %14s %10s" % ("ranks", "krcore ms", "ob1+tcp ms", "tcp/kr",
      "ofi tcp ms", "ofitcp/kr"))
for b in boots:
    print("%-6d %12.1f %12.1f %8.2f %14.1f %10.2f" % (b["ranks"], b["krcore_ms"], b["tcp_ms"],
          b["bootstrap_ratio"], b["ofi_tcp_ms"], b["ofi_tcp_ratio"]))
with open(out, "w") as f:
    json.dump(r, f)
    f.write("\n")
print(json.dumps(r))
PY
echo "wrote $out"
