# shellcheck shell=sh
# SPDX-License-Identifier: BSD-3-Clause
# Sourced (sh or bash) by the scripts that build a qemu guest's initramfs
# (tests/kmod/mkinitramfs.sh, tests/interop/rxe_guest_lib.sh).

# guest_copy ROOT FILE TO: FILE at ROOT/TO, and for a dynamically linked one
# every library ldd names (the loader included) at its own path under ROOT.
guest_copy() {
	mkdir -p "$1$(dirname "$3")"
	cp -L "$2" "$1$3"
	ldd "$2" 2>/dev/null | awk '/=> \// {print $3} /^[ \t]*\// {print $1}' | while read -r lib; do
		mkdir -p "$1$(dirname "$lib")"
		cp -L "$lib" "$1$lib"
	done
}
