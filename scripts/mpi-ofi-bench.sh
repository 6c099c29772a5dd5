#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The libfabric provider's benchmark, every figure from this one run (release
# build; plain sim, no firmware cost model: Open MPI's tcp path has none):
#   1. krbench send --peer: a krcore vQP's 64-byte SEND round trip between
#      two nodes (p50), the yardstick;
#   2. fabtests' fi_pingpong -p krcore, 8 bytes, between jobs on nodes 1 and 2
#      (it prints the mean time per one-way transfer: the round trip is 2x);
#   3. an MPI ping-pong (tests/ofi/ofi_mpi_bench.c, mpi.h only), 8 bytes,
#      rank 0 on node 1 and rank 1 on node 2, over pml cm + mtl ofi + krcore
#      (p50 round trip);
#   4. MPI_Init + a first MPI_Alltoall (the slowest rank, from main) at 8 and
#      16 ranks over four nodes, through krcore and through Open MPI's own
#      ob1 + tcp on loopback, one after the other.
# Ratios: fi_ratio = fi_pingpong round trip / krbench send p50 (goal <= 1.2),
# mpi_ratio = MPI ping-pong p50 / krbench send p50 (goal <= 1.3),
# bootstrap_ratio = tcp / krcore per size. Prints a table and writes
# {"bench": "mpi_ofi", ...} to OUT (default BUILDDIR/mpi-ofi-bench.json);
# scripts/plot.py OUT draws mpi_ofi.png. Exit 77 without fi_pingpong,
# Open MPI or hugepages.
# Usage: scripts/mpi-ofi-bench.sh BUILDDIR [OUT]
set -euo pipefail
bin=$(realpath "${1:?usage: mpi-ofi-bench.sh BUILDDIR [OUT]}")
out=$(realpath -m "${2:-$bin/mpi-ofi-bench.json}")
. "$(dirname "$0")/sim-cluster-lib.sh"
command -v fi_pingpong >/dev/null || { echo "SKIP: no fi_pingpong (libfabric-bin)"; exit 77; }
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (openmpi-bin)"; exit 77; }
prog=$bin/tests/ofi/ofi_mpi_bench
[ -x "$prog" ] && [ -f "$bin/libkrcore-fi.so" ] || { echo "SKIP: $prog or the provider not built"; exit 77; }
kr_need_hugepages 160 "the keepers"

kr_mpi_env
export FI_PROVIDER_PATH=$bin
dir=$(mktemp -d /tmp/krcore-ofib.XXXXXX)
keepers=()
kr_keeper_args=(--dcis 16)
trap 'kr_stop ${keepers[@]+"${keepers[@]}"}; rm -rf "$dir"' EXIT

echo "== 1. krbench send --peer (its own two keepers)"
# its raw-DCI side fails now and then on this sim (a buffer holding a later
# message, issue #47): up to three tries, each said
for try in 1 2 3; do
	"$bin/tools/krbench" send --peer -n 5000 --json --krpoold "$bin/tools/krpoold" \
		>"$dir/send.json" 2>"$dir/send.err" && break
	echo "   try $try: $(tail -1 "$dir/send.err")"
	[ "$try" != 3 ] || { echo "krbench send --peer failed three times"; exit 1; }
done
send_p50=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["p50_us"])' "$dir/send.json")
echo "   vQP SEND round trip p50: $send_p50 us (64 B)"

kr_start_keepers "$dir" 4 >"$dir/start.log" || { cat "$dir/start.log"; exit 1; }

echo "== 2. fi_pingpong -p krcore -e rdm -S 8 -I 5000, node 2 <- node 1"
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
cat "$dir/pp_cli.out"
pp_oneway=$(awk '$1 == "8" {print $7}' "$dir/pp_cli.out")
pp_rtt=$(python3 -c "print(round(2 * $pp_oneway, 2))")

# mpirun of ofi_mpi_bench ARGS over krcore, PER ranks per node, NP ranks
mpi_krcore() {
	local per=$1 np=$2
	shift 2
	timeout 300 mpirun --oversubscribe --bind-to none -np "$np" -x KR_LAUNCH_KEY \
		-x FI_PROVIDER_PATH --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include krcore \
		"$(dirname "$0")/sim-rank.sh" "$dir" "$per" "$prog" "$@" | grep '^{'
}
mpi_tcp() {
	local np=$1
	shift
	timeout 300 mpirun --oversubscribe --bind-to none -np "$np" --mca pml ob1 \
		--mca btl tcp,self --mca btl_tcp_if_include lo "$prog" "$@" | grep '^{'
}

echo "== 3. MPI ping-pong, 8 bytes, rank 0 on node 1, rank 1 on node 2"
mpp=$(mpi_krcore 1 2 pingpong 5000)
echo "   $mpp"
mpi_p50=$(echo "$mpp" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rtt_p50_us"])')

echo "== 4. MPI_Init + first MPI_Alltoall, krcore beside ob1 + tcp"
boots=()
for n in 8 16; do
	k=$(mpi_krcore $(((n + 3) / 4)) "$n" bootstrap)
	t=$(mpi_tcp "$n" bootstrap)
	echo "   krcore: $k"
	echo "   tcp:    $t"
	boots+=("$(python3 -c '
import json, sys
k, t = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert k["checked"] and t["checked"]
print(json.dumps({"ranks": k["ranks"], "krcore_init_ms": k["init_ms"],
                  "krcore_ms": k["init_alltoall_ms"], "tcp_init_ms": t["init_ms"],
                  "tcp_ms": t["init_alltoall_ms"],
                  "bootstrap_ratio": round(t["init_alltoall_ms"] / k["init_alltoall_ms"], 2)}))
' "$k" "$t")")
done

python3 - "$out" "$send_p50" "$pp_rtt" "$mpi_p50" "${boots[@]}" <<'PY'
import json, sys
out, send, pp, mpi = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
boots = [json.loads(b) for b in sys.argv[5:]]
r = {"bench": "mpi_ofi", "krbench_send_p50_us": send, "fi_pingpong_rtt_us": pp,
     "fi_ratio": round(pp / send, 3), "mpi_pingpong_p50_us": mpi,
     "mpi_ratio": round(mpi / send, 3), "bootstrap": boots}
print("\n%-34s %10s %8s" % ("8-byte round trip", "us", "ratio"))
print("%-34s %10.2f %8s" % ("krbench send --peer (64 B, p50)", send, "1"))
print("%-34s %10.2f %8.3f" % ("fi_pingpong -p krcore (mean)", pp, r["fi_ratio"]))
print("%-34s %10.2f %8.3f" % ("MPI ping-pong over krcore (p50)", mpi, r["mpi_ratio"]))
print("\n%-6s %12s %12s %8s" % ("ranks", "krcore ms", "ob1+tcp ms", "tcp/kr"))
for b in boots:
    print("%-6d %12.1f %12.1f %8.2f" % (b["ranks"], b["krcore_ms"], b["tcp_ms"], b["bootstrap_ratio"]))
with open(out, "w") as f:
    json.dump(r, f)
    f.write("\n")
print(json.dumps(r))
PY
echo "wrote $out"
