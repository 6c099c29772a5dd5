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

# kr_cluster_key FILE: a fresh cluster key (64 random hex digits), mode 0600:
# every keeper of one cluster seals its MetaServer datagrams with it.
kr_cluster_key() {
	(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$1" && echo >>"$1")
}

# kr_start_keepers DIR N: the keepers of nodes 1..N on sim hosts
# 127.0.0.2.. over one free UDP port (node 1 also the MetaServer, the
# cluster's key in DIR/cluster.key), sockets
# DIR/node<n>.sock, logs DIR/node<n>.log; each pid appended to the array
# keepers, the port in kr_port. More krpoold arguments: the array
# kr_keeper_args; sim device options (",profile=connectx4"): kr_sim_opts. Waits until each answers; 0, or 1 (a keeper that did not
# start: its log printed).
kr_start_keepers() {
	local dir=$1 n=$2 i meta args
	kr_port=$(kr_free_port)
	meta=127.0.0.2:$((kr_port + 1))
	[ -s "$dir/cluster.key" ] || kr_cluster_key "$dir/cluster.key"
	for i in $(seq "$n"); do
		args=(--foreground --socket "$dir/node$i.sock" --cluster-key "$dir/cluster.key"
			--device "sim:node$i@127.0.0.$((i + 1)):$kr_port${kr_sim_opts:-}" --node-id "$i" --tenants 1
			--dcis 8 --jobs 4 --heap-mb 2 --hugepages 32 ${kr_keeper_args[@]+"${kr_keeper_args[@]}"})
		if [ "$i" = 1 ]; then
			args+=(--metaserver --max-nodes 64 --meta-listen "$meta") # a table for this size
		else
			args+=(--metaserver-addr "$meta")
		fi
		"$bin/tools/krpoold" "${args[@]}" >"$dir/node$i.log" 2>&1 &
		keepers+=($!)
		echo "   krpoold ${args[*]}"
	done
	for i in $(seq "$n"); do
		kr_wait_keeper "$dir/node$i.sock" || {
			echo "the keeper of node $i did not start:"
			cat "$dir/node$i.log"
			return 1
		}
	done
}

# kr_stop PID...: SIGTERM each, then reap each (children of this shell).
kr_stop() {
	local p
	for p in "$@"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "$@"; do wait "$p" 2>/dev/null || true; done
}

# kr_need_hugepages N WHAT: skip (exit 77, saying why) unless N 2 MB hugepages
# are free; WHAT names what needs them.
kr_need_hugepages() {
	local free
	free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
	[ "${free:-0}" -ge "$1" ] && return 0
	echo "SKIP: $2 need $1 free 2 MB hugepages, ${free:-0} are free"
	exit 77
}

# kr_hugepages_left BEFORE: the hugepage files made since BEFORE (a listing
# of /dev/hugepages) that no live process maps (others' keepers may run
# meanwhile); prints them, nothing when none.
kr_hugepages_left() {
	local f left=
	for f in $(comm -13 <(echo "$1") <(ls /dev/hugepages)); do
		grep -qs "/dev/hugepages/$f" /proc/[0-9]*/maps || left+=" $f"
	done
	echo "$left"
}

# kr_mpi_env: what mpirun jobs need here: one fresh launch key for the job's
# ranks, root allowed (the tests run as root), and no leak report in ASan
# builds from Open MPI's own allocations at exit (many from components it
# has dlclose()d: no module name to suppress; krcore's leaks are checked by
# every other test of the ASan build).
kr_mpi_env() {
	KR_LAUNCH_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
	export KR_LAUNCH_KEY OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
}

# kr_mpirun SECONDS DIR PER NP PROGRAM [ARG...]: PROGRAM as an NP-rank job
# on the keepers of DIR, PER ranks per node (scripts/sim-rank.sh), cores
# oversubscribed, killed after SECONDS. Its exit status.
kr_mpirun() {
	local secs=$1 dir=$2 per=$3 np=$4
	shift 4
	timeout "$secs" mpirun --oversubscribe --bind-to none -np "$np" -x KR_LAUNCH_KEY \
		-x ASAN_OPTIONS "$(dirname "${BASH_SOURCE[0]}")/sim-rank.sh" "$dir" "$per" "$@"
}
