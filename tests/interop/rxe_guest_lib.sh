# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# A Linux guest whose kernel speaks RoCE v2 (soft-RoCE, rdma_rxe) on a
# virtio-net interface, for the interop tests (issue: the kernel as an
# independent check of the sim's packets). Sourced; the caller sets -eu.
#   rxe_need               exit 77, saying what is missing, unless qemu, a
#                          Debian kernel image with its rdma_rxe module,
#                          busybox, iproute2's rdma tool and root are here
#   rxe_peer_build OUT     rxe_peer.c, the guest's verbs program (plain gcc:
#                          the guest has no sanitizer runtime)
#   rxe_initramfs OUT PEER the guest: busybox, the modules rxe and virtio-net
#                          need (modinfo's dependencies, and crc32 for the
#                          ICRC: rxe's add fails ENOENT without it), rdma,
#                          PEER, libibverbs' rxe provider and its driver file
#                          (dlopened: ldd does not name them) with every
#                          library they load, guest_init_rxe.sh as /init
#   rxe_netns_up / _down   network namespace $rxe_ns with tap $rxe_tap at
#                          $rxe_host_ip/24 (the guest is $rxe_guest_ip): the
#                          sim host binds there; slirp cannot work (it
#                          rewrites the addresses the ICRC covers)
#   rxe_boot OUT.log       boot the guest in the namespace (kvm when it
#                          boots this kernel here, else tcg), console to
#                          OUT.log, at most $rxe_timeout seconds
rxe_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/common/guest_copy.sh
. "$rxe_here/../common/guest_copy.sh"
rxe_ns=${RXE_NS:-krcore-rxe-$$}
rxe_tap=rxetap0
rxe_host_ip=10.77.0.1
rxe_guest_ip=10.77.0.2
rxe_timeout=${RXE_QEMU_TIMEOUT:-120}
# the guest's kernel: $RXE_KVER, else the newest /boot/vmlinuz-$RXE_KVER_GLOB
rxe_kglob=${RXE_KVER_GLOB:-6.1.*-amd64}
rxe_kver=${RXE_KVER:-$(find /boot -maxdepth 1 -name "vmlinuz-$rxe_kglob" 2>/dev/null |
	sed 's|.*/vmlinuz-||' | sort -V | tail -n 1)}
rxe_kernel=/boot/vmlinuz-$rxe_kver
rxe_provider=$(find /usr/lib/x86_64-linux-gnu/libibverbs -name 'librxe-rdmav*.so' 2>/dev/null | head -n 1)

rxe_need() {
	local why=""
	[ "$(id -u)" = 0 ] || why="not root (network namespace, tap device, kernel image)"
	command -v qemu-system-x86_64 >/dev/null || why="qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
	[ -n "$rxe_kver" ] && [ -r "$rxe_kernel" ] || why="no readable /boot/vmlinuz-$rxe_kglob (Debian's linux-image packages)"
	[ -z "$why" ] && ! modinfo -k "$rxe_kver" -n rdma_rxe >/dev/null 2>&1 && why="no rdma_rxe module for $rxe_kver"
	[ -x /bin/busybox ] || why="/bin/busybox missing (apt-get install busybox-static)"
	command -v rdma >/dev/null || why="iproute2's rdma tool missing"
	command -v gcc >/dev/null && [ -f /usr/include/infiniband/verbs.h ] ||
		why="gcc or libibverbs-dev missing"
	[ -f "$rxe_provider" ] || why="libibverbs' rxe provider missing ($rxe_provider: rdma-core)"
	if [ -n "$why" ]; then
		echo "SKIP: $why"
		exit 77
	fi
}

# The module files m needs, dependencies first.
rxe_mod_deps() {
	local m=$1 f d
	f=$(modinfo -k "$rxe_kver" -n "$m" 2>/dev/null) || return 0
	[ "$f" != "(builtin)" ] || return 0 # in the kernel image (6.12: crc32_generic)
	for d in $(modinfo -k "$rxe_kver" -F depends "$m" | tr ',' ' '); do
		rxe_mod_deps "$d"
	done
	echo "$f"
}

rxe_peer_build() {
	gcc -O2 -Wall -Wextra -Werror -o "$1" "$rxe_here/rxe_peer.c" -libverbs
}

# rxe_initramfs OUT RXE_PEER [SESSIONS]: SESSIONS > 0 makes the guest serve
# that many sessions of the host's side after its selftest.
rxe_initramfs() {
	local out=$1 peer=$2 sessions=${3:-} root i=0 f
	root=$(mktemp -d "${TMPDIR:-/tmp}/krcore-rxe-root.XXXXXX")
	mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/mod"
	cp /bin/busybox "$root/bin/"
	cp "$rxe_here/guest_init_rxe.sh" "$root/init"
	chmod 755 "$root/init"
	printf 'RXE_GUEST_IP=%s\nRXE_HOST_IP=%s\nRXE_SESSIONS=%s\n' "$rxe_guest_ip" "$rxe_host_ip" \
		"$sessions" >"$root/guest.env"
	for f in $( (rxe_mod_deps crc32_generic; rxe_mod_deps virtio_pci; rxe_mod_deps virtio_net
		rxe_mod_deps rdma_rxe; rxe_mod_deps ib_uverbs) | awk '!seen[$0]++'); do
		i=$((i + 1))
		case $f in
		*.ko.xz) xz -dc "$f" >"$root/mod/$(printf %02d $i)_$(basename "$f" .xz)" ;;
		*) cp "$f" "$root/mod/$(printf %02d $i)_$(basename "$f")" ;;
		esac
	done
	guest_copy "$root" "$(command -v rdma)" /bin/rdma
	guest_copy "$root" "$peer" /bin/rxe_peer
	guest_copy "$root" "$rxe_provider" "$rxe_provider"
	mkdir -p "$root/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
	(cd "$root" && find . | sort | /bin/busybox cpio -o -H newc -R 0:0 >"$out" 2>/dev/null)
	rm -rf "$root"
}

rxe_netns_up() {
	ip netns add "$rxe_ns"
	ip -n "$rxe_ns" link set lo up
	ip -n "$rxe_ns" tuntap add dev "$rxe_tap" mode tap
	ip -n "$rxe_ns" addr add "$rxe_host_ip/24" dev "$rxe_tap"
	ip -n "$rxe_ns" link set "$rxe_tap" up
}

rxe_netns_down() {
	ip netns del "$rxe_ns" 2>/dev/null || true
}

rxe_boot() {
	local log=$1 initrd=$2 accel=tcg cpu=max probe
	# kvm only where it boots this kernel (the kmod suite's probe, remembered)
	probe=${TMPDIR:-/tmp}/krmin-kvm-probe-$rxe_kver
	if [ -w /dev/kvm ] && [ "$(cat "$probe" 2>/dev/null)" = kvm ]; then
		accel=kvm
		cpu=host,-arch-capabilities
	fi
	ip netns exec "$rxe_ns" timeout "$rxe_timeout" qemu-system-x86_64 -accel "$accel" \
		-cpu "$cpu" -m 512M -smp 1 -nodefaults -display none -monitor none -no-reboot \
		-serial stdio -kernel "$rxe_kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet" \
		-netdev "tap,id=n0,ifname=$rxe_tap,script=no,downscript=no" \
		-device virtio-net-pci,netdev=n0 </dev/null 2>&1 | stdbuf -oL tr -d '\r' >"$log"
}
