#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Builds krmin.ko out of the source tree.
# Usage: build.sh OUTDIR [KDIR]
#   OUTDIR  where the sources are copied and krmin.ko is built
#   KDIR    kernel build tree; default: Debian's 6.1.0-56-amd64 headers
# Exits 77 if the headers are missing.
set -eu
out=${1:?usage: build.sh OUTDIR [KDIR]}
kdir=${2:-/usr/src/linux-headers-6.1.0-56-amd64}
src=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$kdir/Makefile" ]; then
	echo "build.sh: no kernel headers at $kdir (apt-get install linux-headers-6.1.0-56-amd64)" >&2
	exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
cp "$src"/Kbuild "$src"/*.c "$src"/*.h "$out"/
make -s -C "$kdir" M="$out" KRMIN_INCLUDE="$src/../include" \
	KCFLAGS="-Werror" modules
test -f "$out/krmin.ko"
