#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The examples build the way a user builds them: against an installed copy of
# krcore (meson install into a temporary root) through pkg-config, and run.
# Usage: test_examples_pkgconfig.sh BUILD_ROOT SOURCE_ROOT SANITIZE
set -eu
build=$1 src=$2 sanitize=$3
command -v pkg-config >/dev/null || { echo "SKIP: no pkg-config"; exit 77; }
root=$(mktemp -d /tmp/krcore-install.XXXXXX)
trap 'rm -rf "$root"' EXIT

meson install -C "$build" --no-rebuild --destdir "$root" >"$root.log" 2>&1 ||
	{ cat "$root.log"; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
pc=$(find "$root" -name krcore.pc)
[ -n "$pc" ] || { echo "FAIL: no krcore.pc installed"; exit 1; }
# The .pc names the install prefix; point it at the temporary root.
prefix=$(sed -n 's/^prefix=//p' "$pc")
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --define-variable=prefix="$root$prefix" --cflags --libs --static krcore)
# A library built with sanitizers needs them in the program too.
[ "$sanitize" = none ] || flags="$flags -fsanitize=$sanitize"

for ex in hello_krcore serve_region echo_rpc; do
	srcfile=$(find "$root" -path "*/examples/$ex.c")
	[ -n "$srcfile" ] || { echo "FAIL: $ex.c not installed"; exit 1; }
	cmp -s "$srcfile" "$src/examples/$ex.c" || { echo "FAIL: installed $ex.c differs"; exit 1; }
	# shellcheck disable=SC2086
	cc -std=gnu11 -Wall -Wextra -Werror -Wl,--as-needed "$srcfile" $flags -o "$root/$ex"
	# as the README says: a job loads no rdma-core and no DPDK
	python3 "$src/scripts/job-needs-check.py" "$root/$ex" >/dev/null ||
		{ python3 "$src/scripts/job-needs-check.py" "$root/$ex"; echo "FAIL: $ex"; exit 1; }
	# A bad argument: the usage line and exit 2, from the program just linked.
	rc=0
	out=$("$root/$ex" --no-such-option 2>&1) || rc=$?
	[ "$rc" = 2 ] || { echo "FAIL: $ex exited $rc: $out"; exit 1; }
	case $out in *usage:*) ;; *) echo "FAIL: $ex printed no usage: $out"; exit 1 ;; esac
	echo "ok: $ex built through pkg-config and ran"
done
