#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds the kmod-min test initramfs: busybox-static, guest_init.sh as /init,
# krmin.ko and the statically linked test programs, in run order.
# Usage: mkinitramfs.sh OUT.cpio BUSYBOX KO TEST...
# Uses busybox's own cpio (newc, uncompressed: the kernel unpacks it as is);
# no root needed (/dev comes from devtmpfs at boot).
set -eu
out=$1 busybox=$2 ko=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d "${TMPDIR:-/tmp}/krmin-root.XXXXXX")
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp"
cp "$busybox" "$root/bin/busybox"
cp "$here/guest_init.sh" "$root/init"
chmod 755 "$root/init" "$root/bin/busybox"
cp "$ko" "$root/krmin.ko"
: >"$root/tests.list"
for t in "$@"; do
	cp "$t" "$root/bin/"
	basename "$t" >>"$root/tests.list"
done
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
(cd "$root" && find . | sort | "$busybox" cpio -o -H newc -R 0:0 >"$out" 2>/dev/null)
