#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The first thing to run on two ConnectX hosts (and, with --sim, here on the
# software ConnectX: CI does). Steps, each written to a report file:
#   1. the device: capabilities krcore reads, port 1's GID table, the GID it
#      sends from (krdevinfo -v)
#   2. a keeper on it (krpoold --verbose), its status (krctl status)
#   3. serve_region (a job that offers 4 KiB of its heap) on the server side;
#      on the client side hello_krcore: attach, connect through the
#      MetaServer, READ, WRITE and CAS the server's bytes, each checked
#   4. every firmware command error of the keepers, status and syndrome
#      decoded where a name is known, and the end result
#
# Two hosts (A and B, same launch key on both; KR_LAUNCH_KEY, 64 hex digits;
# and the same cluster key file, mode 0600, which seals the MetaServer's
# datagrams: made on A by the first command if missing, copied to B by you):
#   A$ scripts/hw-smoke.sh --device mlx5_0 --node 1 --serve A_IP:PORT \
#        --cluster-key /etc/krcore/cluster.key BUILDDIR
#      (prints the command to run on B, with the region it serves)
#   B$ scripts/hw-smoke.sh --device mlx5_0 --node 2 --metaserver A_IP:PORT \
#        --cluster-key /etc/krcore/cluster.key --peer 1:ADDR:RKEY BUILDDIR
# Here: scripts/hw-smoke.sh --sim BUILDDIR (two sim hosts on UDP loopback).
# Needs hugepages (scripts/hugepages.sh). Exit 0 when every step passed,
# 1 otherwise, 77 (skip) without hugepages. Report: $KR_SMOKE_REPORT or
# ./hw-smoke-report.txt.
set -euo pipefail

usage() {
	sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
}
sim=0 device= node=1 serve= meta= peer= bin= region= key=
while [ $# -gt 0 ]; do
	case "$1" in
	--sim) sim=1 ;;
	--device) device=$2; shift ;;
	--node) node=$2; shift ;;
	--serve) serve=$2; shift ;;
	--metaserver) meta=$2; shift ;;
	--peer) peer=$2; shift ;;
	--cluster-key) key=$2; shift ;;
	-h | --help) usage ;;
	-*) echo "hw-smoke: unknown option $1" >&2; usage ;;
	*) bin=$1 ;;
	esac
	shift
done
[ -n "$bin" ] || usage
. "$(dirname "$0")/sim-cluster-lib.sh"
if [ "$sim" = 0 ] && [ -z "$device" ]; then
	echo "hw-smoke: --device mlx5_<n> (or --sim)" >&2
	exit 2
fi
if [ "$sim" = 0 ] && [ -z "$serve" ] && { [ -z "$meta" ] || [ -z "$peer" ]; }; then
	echo "hw-smoke: --serve IP:PORT on the first host, --metaserver and --peer on the second" >&2
	exit 2
fi
if [ "$sim" = 0 ] && [ -z "$key" ]; then
	echo "hw-smoke: --cluster-key FILE (the same 0600 file on both hosts; made if missing on" \
		"the first)" >&2
	exit 2
fi
if [ "$sim" = 0 ] && [ ! -s "$key" ]; then
	[ -n "$serve" ] || { echo "hw-smoke: $key: copy the first host's cluster key here" >&2; exit 2; }
	kr_cluster_key "$key"
fi
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
need=$((sim ? 64 : 32))
if [ "${free:-0}" -lt "$need" ]; then
	echo "SKIP: a keeper needs $need free 2 MB hugepages, ${free:-0} are free (scripts/hugepages.sh)"
	exit 77
fi

export KR_LAUNCH_KEY=${KR_LAUNCH_KEY:-$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')}
report=${KR_SMOKE_REPORT:-hw-smoke-report.txt}
[ "${report#/}" != "$report" ] || report=$PWD/$report # absolute (busybox has no realpath -m)
dir=$(mktemp -d /tmp/krcore-smoke.XXXXXX)
pids=()
cleanup() {
	kr_stop ${pids[@]+"${pids[@]}"}
	rm -rf "$dir"
}
[ -n "$key" ] || { key=$dir/cluster.key && kr_cluster_key "$key"; } # --sim: one of its own
trap cleanup EXIT
trap 'exit 130' INT TERM
: >"$report"
say() { echo "$*" | tee -a "$report"; }
fail() {
	say "FAIL: $*"
	errors
	exit 1
}
# Step 4: every failed firmware command the keepers logged, as logged (names included).
errors() {
	say "== 4. firmware command errors =="
	if grep -h "failed: status" "$dir"/keeper*.log 2>/dev/null | sort | uniq -c | tee -a "$report" |
		grep -q .; then
		say "   (syndromes without a name have no public table: quote them to the NIC vendor)"
	else
		say "   none"
	fi
}

# How jobs reach the device: with kmod-min loaded (/dev/krmin) each maps only the DCIs it
# leases; without it a keeper on a ConnectX needs --trusted (jobs get the command fd).
mode=kmod
if [ ! -e /dev/krmin ]; then
	mode=trusted
fi
say_mode() {
	if [ "$mode" = kmod ]; then
		say "   mode: kmod (kmod-min fences the queues: each job maps only the DCIs it leases)"
	else
		say "   mode: trusted (no /dev/krmin: jobs can write each other's queues and share" \
			"doorbell pages$([ "$sim" = 1 ] ||
			echo "; on hardware they hold the command fd: krpoold --trusted"))"
	fi
}

# keeper N DEVICE EXTRA...: start krpoold, wait for its socket, record its status.
keeper() {
	local n=$1 dev=$2 trusted=()
	shift 2
	# the sim runs trusted without the module by itself; a ConnectX only when told
	[ "$mode" = trusted ] && [ "$sim" = 0 ] && trusted=(--trusted)
	"$bin/tools/krpoold" --foreground --verbose --socket "$dir/node$n.sock" --device "$dev" \
		${trusted[@]+"${trusted[@]}"} --cluster-key "$key" --node-id "$n" --tenants 1 \
		--dcis 4 --jobs 2 --heap-mb 2 --hugepages 32 "$@" \
		>"$dir/keeper$n.log" 2>&1 &
	pids+=($!)
	kr_wait_keeper "$dir/node$n.sock" "${pids[-1]}" || true
	"$bin/tools/krctl" --socket "$dir/node$n.sock" status >>"$report" 2>&1 ||
		{ cat "$dir/keeper$n.log" >>"$report"; fail "the keeper on $dev did not start (log above)"; }
	grep -h "port 1: GID index" "$dir/keeper$n.log" | tee -a "$report" || true
}

# serve N: serve_region on node N; sets region=NODE:ADDR:RKEY
serve() {
	local n=$1 ok
	kr_serve_region "$dir/node$n.sock" "$dir/region$n" && ok=1 || ok=0
	pids+=("$kr_pid")
	[ "$ok" = 1 ] || fail "serve_region on node $n printed no region"
	region="$n:$kr_addr:$kr_rkey"
}

say "krcore hardware smoke test, $(date -u +%FT%TZ), $(uname -n)"
if [ "$sim" = 1 ]; then
	port=$(kr_free_port)
	dev1="sim:smoke1@127.0.0.2:$port" dev2="sim:smoke2@127.0.0.3:$port"
	say "== 1. devices: two sim hosts, 127.0.0.2 and 127.0.0.3, UDP port $port =="
	"$bin/tools/krdevinfo" -v -d "$dev1" >>"$report" 2>&1 || fail "krdevinfo $dev1"
	say "== 2. keepers: node 1 (MetaServer) and node 2 =="
	say_mode
	keeper 1 "$dev1" --metaserver --meta-listen "127.0.0.2:$((port + 1))"
	keeper 2 "$dev2" --metaserver-addr "127.0.0.2:$((port + 1))"
	say "== 3. serve_region on node 2, hello_krcore on node 1 =="
	serve 2
	say "   node 2 serves $region"
	"$bin/examples/hello_krcore" --socket "$dir/node1.sock" "$region" 2>&1 | tee -a "$report" ||
		fail "hello_krcore"
elif [ -n "$serve" ]; then
	say "== 1. device $device =="
	"$bin/tools/krdevinfo" -v -d "$device" >>"$report" 2>&1 || fail "krdevinfo $device"
	say "== 2. keeper on $device, node $node, MetaServer on $serve =="
	say_mode
	keeper "$node" "$device" --metaserver --meta-listen "$serve"
	say "== 3. serve_region on node $node =="
	serve "$node"
	say "   run on the second host (same KR_LAUNCH_KEY):"
	say "   KR_LAUNCH_KEY=$KR_LAUNCH_KEY scripts/hw-smoke.sh --device <mlx5_n> --node <n> \\"
	say "     --metaserver $serve --cluster-key <a copy of $key> --peer $region <builddir>"
	say "   this side keeps serving until Ctrl-C"
	errors
	wait "${pids[0]}"
	exit 0
else
	say "== 1. device $device =="
	"$bin/tools/krdevinfo" -v -d "$device" >>"$report" 2>&1 || fail "krdevinfo $device"
	say "== 2. keeper on $device, node $node, registered with $meta =="
	say_mode
	keeper "$node" "$device" --metaserver-addr "$meta"
	say "== 3. hello_krcore on node $node against $peer =="
	"$bin/examples/hello_krcore" --socket "$dir/node$node.sock" "$peer" 2>&1 | tee -a "$report" ||
		fail "hello_krcore"
fi
errors
say "PASS: every step; report in $report"
