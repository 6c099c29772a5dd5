#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds the kmod-min test initramfs: busybox-static, guest_init.sh as /init,
# krmin.ko and the statically linked test programs, in run order.
# Usage: [KRMIN_GUEST_TOOLS="PROG..."] [KRMIN_GUEST_FILES="/ABS/PATH[=/GUEST/PATH]..."] \
#        [KRMIN_GUEST_ENV=FILE] mkinitramfs.sh OUT.cpio BUSYBOX KO TEST...
# A dynamically linked test or tool is copied with every library ldd names
# (at the same paths) and the loader (tests/common/guest_copy.sh); tools go to /bin without being run;
# a file goes to its own path in the guest, or to the one after '=' (the
# guest mounts tmpfs on /tmp and /run, which would hide a file under them);
# KRMIN_GUEST_ENV becomes /tests.env, which /init sources.
# Uses busybox's own cpio (newc, uncompressed: the kernel unpacks it as is);
# no root needed (/dev comes from devtmpfs at boot).
set -eu
out=$1 busybox=$2 ko=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/common/guest_copy.sh
. "$here/../common/guest_copy.sh"
root=$(mktemp -d "${TMPDIR:-/tmp}/krmin-root.XXXXXX")
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/run"
cp "$busybox" "$root/bin/busybox"
cp "$here/guest_init.sh" "$root/init"
chmod 755 "$root/init" "$root/bin/busybox"
cp "$ko" "$root/krmin.ko"
[ -z "${KRMIN_GUEST_ENV:-}" ] || cp "$KRMIN_GUEST_ENV" "$root/tests.env"

for p in ${KRMIN_GUEST_TOOLS:-}; do
	guest_copy "$root" "$p" "/bin/$(basename "$p")"
done
for spec in ${KRMIN_GUEST_FILES:-}; do
	guest_copy "$root" "${spec%%=*}" "${spec#*=}"
done
: >"$root/tests.list"
for t in "$@"; do
	guest_copy "$root" "$t" "/bin/$(basename "$t")"
	basename "$t" >>"$root/tests.list"
done
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
(cd "$root" && find . | sort | "$busybox" cpio -o -H newc -R 0:0 >"$out" 2>/dev/null)
