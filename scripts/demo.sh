#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Quickstart 1: install what is missing, build, and run the demo on the embedded
# default device (the software mlx5, "sim").
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build
ninja -C build
echo "== krdevinfo: devices and capabilities =="
./build/tools/krdevinfo
echo
echo "== krping: RC and DC ping-pong between two simulated hosts =="
./build/tools/krping
