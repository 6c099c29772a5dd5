#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install the Debian 12 packages krcore builds and tests with, if any is missing.
# Usage: scripts/deps.sh [--kmod]   (--kmod adds what the qemu kernel-module tests need)
set -euo pipefail

pkgs=(meson ninja-build pkg-config gcc make libc6-dev python3
      clang libclang-rt-14-dev   # the fuzz suite: libFuzzer
      libibverbs-dev ibverbs-providers rdma-core
      libdpdk-dev libjemalloc-dev libcmocka-dev libsodium-dev
      linux-headers-amd64 valgrind
      tshark iproute2   # tshark: the sim's wire-format test; iproute2: ip netns
      python3-matplotlib   # scripts/plot.py
      openmpi-bin libopenmpi-dev libpmix-dev   # examples/mpi_alltoall under mpirun
      libfabric-dev libfabric-bin)  # src/ofi, the libfabric provider; fi_info, fi_pingpong
# One Linux 6.12 (Debian 12's newer kernel, as Debian 13 and RHEL 10 run) for
# kmod_qemu_6_12: the one installed with its headers, else the newest offered.
one_6_12() {
	local v
	for img in /boot/vmlinuz-6.12.*+deb12-amd64; do
		v=${img#/boot/vmlinuz-}
		[ -f "/usr/src/linux-headers-$v/Makefile" ] && echo "$v"
	done | sort -V | tail -n 1 | grep . && return
	apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' |
		sed -n 's/^linux-image-\(6\.12\.[^ ]*-amd64\)-unsigned .*/\1/p' | sort -V | tail -n 1
}
if [ "${1:-}" = "--kmod" ]; then
	pkgs+=(qemu-system-x86 busybox-static linux-image-amd64 cpio kmod)
	k612=$(one_6_12 || true)
	if [ -n "$k612" ]; then
		pkgs+=("linux-image-$k612-unsigned" "linux-headers-$k612")
	else
		echo "krcore: no Linux 6.12 package found (apt-get update?): kmod_qemu_6_12 will skip" >&2
	fi
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "krcore: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
