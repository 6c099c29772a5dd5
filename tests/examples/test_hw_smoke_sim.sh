#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/hw-smoke.sh --sim BUILDDIR, and its report says how jobs reach the device: trusted
# on a host without kmod-min (/dev/krmin), kmod with it. Exit as the script (77: skip).
set -uo pipefail
src=$1 build=$2
report=$build/hw-smoke-report.txt
KR_SMOKE_REPORT=$report bash "$src/scripts/hw-smoke.sh" --sim "$build"
rc=$?
[ "$rc" = 0 ] || exit "$rc"
want=trusted
[ -e /dev/krmin ] && want=kmod
if ! grep -q "mode: $want" "$report"; then
	echo "FAIL: the report does not say 'mode: $want'"
	exit 1
fi
echo "report says: $(grep -m1 'mode:' "$report")"
