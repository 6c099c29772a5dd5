#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Builds krmin.ko out of the source tree.
# Usage: build.sh OUTDIR [KDIR]
#   OUTDIR  where the sources are copied and krmin.ko is built
#   KDIR    kernel build tree; default: the headers Debian's linux-headers-amd64
#           stands for (dpkg), e.g. /usr/src/linux-headers-6.1.0-56-amd64
# Builds against Linux 6.1 and 6.12 (krmin_compat.h). Exits 77 if the
# headers are missing.
set -eu
out=${1:?usage: build.sh OUTDIR [KDIR]}
# linux-headers-amd64 depends on linux-headers-<version>-amd64 (= ...)
meta=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
	sed -n 's/^\(linux-headers-[^ ,]*\).*/\1/p')
kdir=${2:-/usr/src/${meta:-linux-headers-amd64-not-installed}}
src=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$kdir/Makefile" ]; then
	echo "build.sh: no kernel headers at $kdir (apt-get install linux-headers-amd64)" >&2
	exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
cp "$src"/Kbuild "$src"/*.c "$src"/*.h "$out"/
make -s -C "$kdir" M="$out" KRMIN_INCLUDE="$src/../include" \
	KCFLAGS="-Werror" modules
test -f "$out/krmin.ko"
