#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds the kmod-min test initramfs: busybox-static, guest_init.sh as /init,
# krmin.ko and the statically linked test programs, in run order.
# Usage: [KRMIN_GUEST_TOOLS="PROG..."] [KRMIN_GUEST_FILES="/ABS/PATH[=/GUEST/PATH]..."] \
#        [KRMIN_GUEST_ENV=FILE] mkinitramfs.sh OUT.cpio BUSYBOX KO TEST...
# A dynamically linked test or tool is copied with every library ldd names
# (at the same paths) and the loader; tools go to /bin without being run;
# a file goes to its own path in the guest, or to the one after '=' (the
# guest mounts tmpfs on /tmp and /run, which would hide a file under them);
# KRMIN_GUEST_ENV becomes /tests.env, which /init sources.
# Uses busybox's own cpio (newc, uncompressed: the kernel unpacks it as is);
# no root needed (/dev comes from devtmpfs at boot).
set -eu
out=$1 busybox=$2 ko=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d "${TMPDIR:-/tmp}/krmin-root.XXXXXX")
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/run"
cp "$busybox" "$root/bin/busybox"
cp "$here/guest_init.sh" "$root/init"
chmod 755 "$root/init" "$root/bin/busybox"
cp "$ko" "$root/krmin.ko"
[ -z "${KRMIN_GUEST_ENV:-}" ] || cp "$KRMIN_GUEST_ENV" "$root/tests.env"

# A program, and for a dynamic one the libraries it loads.
add_prog() {
	cp "$1" "$root/bin/"
	ldd "$1" >/dev/null 2>&1 || return 0
	ldd "$1" | awk '/=> \// {print $3} /^[ \t]*\// {print $1}' | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
for p in ${KRMIN_GUEST_TOOLS:-}; do
	add_prog "$p"
done
for spec in ${KRMIN_GUEST_FILES:-}; do
	f=${spec%%=*}
	to=${spec#*=}
	mkdir -p "$root$(dirname "$to")"
	cp -L "$f" "$root$to"
	ldd "$f" 2>/dev/null | awk '/=> \// {print $3} /^[ \t]*\// {print $1}' | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
: >"$root/tests.list"
for t in "$@"; do
	add_prog "$t"
	basename "$t" >>"$root/tests.list"
done
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
(cd "$root" && find . | sort | "$busybox" cpio -o -H newc -R 0:0 >"$out" 2>/dev/null)
