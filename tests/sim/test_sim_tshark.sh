#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The independent check of the sim's wire format: Wireshark's InfiniBand
# dissector must decode what the sim sends.
#
# Captures on the loopback (capture filter on a random port) while
# sim_tshark_gen runs one RC WRITE, READ, SEND, FETCH_ADD, COMPARE_SWAP and a
# DC SEND and DC WRITE between two UDP hosts, then decodes with
#   tshark -r <file> -d udp.port==<port>,infiniband -V
# and fails on any malformed packet, expert error or warning, wrong opcode
# (name), destination QP, PSN, RETH, AtomicETH, AETH, AtomicAckETH, DETH,
# payload or ICRC (sim_tshark_check.py).
#
#   test_sim_tshark.sh <sim_tshark_gen> <sim_tshark_check.py>
# Exit 0 pass, 1 fail, 77 skip (no tshark, no python3, capture not permitted).
set -u

gen=${1:?usage: $0 <sim_tshark_gen> <sim_tshark_check.py>}
check=${2:?usage: $0 <sim_tshark_gen> <sim_tshark_check.py>}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

command -v tshark >/dev/null || skip "tshark is not installed (Debian: apt-get install tshark)"
command -v python3 >/dev/null || skip "python3 is not installed"

tmp=$(mktemp -d /tmp/krsim-tshark.XXXXXX) || fail "mktemp"
cap_pid=
cleanup() {
	[ -n "$cap_pid" ] && kill "$cap_pid" 2>/dev/null && wait "$cap_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# A port both loopback addresses can bind now.
port=$(python3 - <<'EOF'
import random, socket
for _ in range(64):
    p = random.randrange(20000, 60000)
    try:
        for a in ("127.0.0.1", "127.0.0.2"):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((a, p))
            s.close()
        print(p)
        break
    except OSError:
        pass
EOF
)
[ -n "$port" ] || skip "no free UDP port on 127.0.0.1 and 127.0.0.2"

# Capture (as root tshark runs dumpcap directly); wait until it listens.
tshark -i lo -f "udp port $port" -F pcap -w "$tmp/cap.pcap" >"$tmp/cap.out" 2>"$tmp/cap.err" &
cap_pid=$!
for _ in $(seq 1 100); do
	grep -q "Capturing on" "$tmp/cap.err" 2>/dev/null && break
	kill -0 "$cap_pid" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q "Capturing on" "$tmp/cap.err"; then
	cat "$tmp/cap.err"
	if grep -qiE "permission|not permitted|privilege" "$tmp/cap.err"; then
		skip "capturing on lo is not permitted here"
	fi
	fail "tshark did not start capturing"
fi
sleep 0.3 # the filter is attached when "Capturing on" is printed; a margin costs little

"$gen" "$port" "$tmp/expect.json" || fail "sim_tshark_gen failed"
sleep 0.5
kill -INT "$cap_pid"
wait "$cap_pid"
cap_pid=

decode=(tshark -r "$tmp/cap.pcap" -d "udp.port==$port,infiniband")
"${decode[@]}" -V >"$tmp/verbose.txt" 2>"$tmp/decode.err" || fail "tshark -r: $(cat "$tmp/decode.err")"
fields=()
for f in frame.number ip.src ip.dst udp.srcport udp.dstport \
	infiniband.bth.opcode infiniband.bth.destqp infiniband.bth.psn infiniband.bth.a \
	infiniband.reth.va infiniband.reth.r_key infiniband.reth.dmalen \
	infiniband.atomiceth.swapdt infiniband.atomiceth.cmpdt \
	infiniband.aeth.syndrome infiniband.aeth.msn infiniband.atomicacketh.origremdt \
	infiniband.deth.srcqp infiniband.rdeth.eecnxt infiniband.invariant.crc data.data \
	_ws.col.Info; do
	fields+=(-e "$f")
done
"${decode[@]}" -T fields -E separator=/t -E occurrence=f "${fields[@]}" >"$tmp/fields.tsv" \
	2>"$tmp/decode.err" || fail "tshark -T fields: $(cat "$tmp/decode.err")"
"${decode[@]}" 2>/dev/null | sed 's/^/  /'

python3 "$check" "$tmp/cap.pcap" "$port" "$tmp/expect.json" "$tmp/fields.tsv" "$tmp/verbose.txt"
