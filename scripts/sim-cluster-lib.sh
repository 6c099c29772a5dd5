# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the scripts that start keepers on sim hosts over UDP loopback
# (demo-cluster.sh, hw-smoke.sh): the steps they share. Needs $bin (a build
# directory).

# A UDP port P with P and P + 1 free: the sim hosts' port and the MetaServer's.
kr_free_port() {
	local p
	kr_bound() { ss -Hlun "( sport = :$1 or sport = :$(($1 + 1)) )" 2>/dev/null | grep -q .; }
	p=$((20000 + RANDOM % 40000))
	while kr_bound "$p"; do p=$((20000 + RANDOM % 40000)); done
	echo "$p"
}

# kr_wait_keeper SOCKET [PID]: up to 10 s for the keeper to answer krctl
# status (less if PID, the keeper, exits first). 0 when it answers.
kr_wait_keeper() {
	for _ in $(seq 200); do
		"$bin/tools/krctl" --socket "$1" status >/dev/null 2>&1 && return 0
		[ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	"$bin/tools/krctl" --socket "$1" status >/dev/null 2>&1
}

# kr_serve_region SOCKET OUTFILE: start serve_region (no subshell: the caller
# keeps its pid from $kr_pid), wait up to 10 s for the region it prints, and
# set kr_addr and kr_rkey. 0, or 1 when it printed none.
kr_serve_region() {
	"$bin/examples/serve_region" --socket "$1" >"$2" &
	kr_pid=$!
	for _ in $(seq 200); do
		[ -s "$2" ] && break
		sleep 0.05
	done
	read -r kr_addr kr_rkey <"$2"
}
