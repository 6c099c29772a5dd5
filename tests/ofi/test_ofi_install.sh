#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# meson install puts the provider where libfabric looks for providers: the
# libfabric directory under libfabric's own libdir (pkg-config libfabric), not
# under meson's prefix; fi_info finds it there (FI_PROVIDER_PATH naming that
# directory inside a temporary install root). Exit 77 without pkg-config's
# libfabric or fi_info.
# Usage: test_ofi_install.sh BUILDDIR
set -euo pipefail
bin=${1:?usage: test_ofi_install.sh BUILDDIR}
command -v fi_info >/dev/null || { echo "SKIP: no fi_info (apt-get install libfabric-bin)"; exit 77; }
libdir=$(pkg-config --variable=libdir libfabric 2>/dev/null) || { echo "SKIP: no libfabric.pc"; exit 77; }
root=$(mktemp -d /tmp/krcore-ofi-install.XXXXXX)
trap 'rm -rf "$root"' EXIT
meson install -C "$bin" --no-rebuild --destdir "$root" >"$root/install.log" 2>&1 ||
	{ cat "$root/install.log"; exit 1; }
mod=$root$libdir/libfabric/libkrcore-fi.so
[ -f "$mod" ] || { echo "FAIL: no $mod"; find "$root" -name 'libkrcore-fi*'; exit 1; }
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$root/k.sock"
KR_KEEPER_SOCKET=$root/k.sock FI_PROVIDER_PATH=$root$libdir/libfabric fi_info -p krcore |
	grep -q "provider: krcore" || { echo "FAIL: fi_info does not find the installed provider"; exit 1; }
echo "PASS: installed at $libdir/libfabric/libkrcore-fi.so, fi_info finds it"
