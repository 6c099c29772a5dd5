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
      openmpi-bin libopenmpi-dev libpmix-dev)  # examples/mpi_alltoall under mpirun
if [ "${1:-}" = "--kmod" ]; then
	pkgs+=(qemu-system-x86 busybox-static linux-image-amd64 cpio kmod)
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
