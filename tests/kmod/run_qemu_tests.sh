#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# kmod-min under qemu: builds krmin.ko against a kernel's headers and the
# guest test programs (gcc -static), packs a busybox initramfs, boots the
# SAME kernel version under qemu-system-x86_64 once, and fails on any failed
# test, missing result, kernel warning, BUG, oops or lockdep report.
# Exit: 0 pass, 1 fail, 77 skip (something needed is not installed).
#
# Environment (all optional):
#   KRMIN_KVER        kernel version, default the one Debian's linux-image-amd64
#                     stands for (dpkg: 6.1.0-56-amd64 on Debian 12) if its
#                     image and headers are installed, else the newest version
#                     that has both (the module must match the kernel)
#   KRMIN_KSERIES     instead: the newest installed version of this series
#                     with image and headers, e.g. 6.12 (kmod_qemu_6_12)
#   KRMIN_KDIR        headers, default /usr/src/linux-headers-$KRMIN_KVER
#   KRMIN_KERNEL      image, default /boot/vmlinuz-$KRMIN_KVER
#   KRMIN_BUSYBOX     statically linked busybox, default /bin/busybox
#   KRMIN_WORKDIR     build and log directory (kept), default a temp dir
#                     (removed on success)
#   KRMIN_QEMU_ACCEL  qemu accelerator, default kvm where /dev/kvm can be
#                     opened (falling back to tcg), else tcg (software)
#   KRMIN_QEMU_TIMEOUT seconds before the guest is killed, default 120
#   KRMIN_FUZZ_SEED, KRMIN_FUZZ_ITERS  passed to test_krmin_fuzz
#   KRMIN_TESTS       guest programs to run, default all, in order
#   KRMIN_DYN_TESTS   dynamically linked guest tests built elsewhere (meson:
#                     test_krmin_keeper), copied with the libraries they load;
#                     they run before test_krmin_unload. Without it they are
#                     left out (said at the start)
#   KRMIN_DYN_TOOLS   programs those tests start (krpoold, krctl), copied the
#                     same way into the guest's /bin
#   KRMIN_GUEST_FILES more files for the guest, at the same absolute paths
#                     (scripts/krmin-insn.sh: valgrind)
#   KRMIN_GUEST_TIMEOUT seconds each guest program may run, default 120
#   KR_LAUNCH_KEY     passed to the dynamic tests (their root job's launch)
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# The booted kernel and the headers must be the same version.
has_both() {
	[ -r "/boot/vmlinuz-$1" ] && [ -f "/usr/src/linux-headers-$1/Makefile" ]
}
pick_kver() {
	# linux-image-amd64 depends on linux-image-<version> (= ...)
	meta=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
		sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
	if [ -z "${KRMIN_KSERIES:-}" ] && [ -n "$meta" ] && has_both "$meta"; then
		echo "$meta"
		return
	fi
	for img in /boot/vmlinuz-${KRMIN_KSERIES:+$KRMIN_KSERIES.}*-amd64; do
		v=${img#/boot/vmlinuz-}
		has_both "$v" && echo "$v"
	done | sort -V | tail -n 1
}
kver=${KRMIN_KVER:-$(pick_kver)}
[ -n "$kver" ] || {
	echo "SKIP: no kernel ${KRMIN_KSERIES:-}image with its headers (apt-get install" \
		"linux-image-${KRMIN_KSERIES:+$KRMIN_KSERIES.<n>+deb12-amd64-unsigned and headers, or }amd64;" \
		"scripts/deps.sh --kmod)"
	exit 77
}
kdir=${KRMIN_KDIR:-/usr/src/linux-headers-$kver}
kernel=${KRMIN_KERNEL:-/boot/vmlinuz-$kver}
busybox=${KRMIN_BUSYBOX:-/bin/busybox}
# -cpu max under tcg: DPDK, which krpoold links, uses instructions qemu's
# default CPU lacks; under kvm the host's CPU, without the MSR a nested
# hypervisor may refuse (IA32_ARCH_CAPABILITIES: qemu aborts)
kvm_cpu=host,-arch-capabilities
# Does kvm boot this kernel here? It reaches "VFS: Unable to mount root"
# within seconds if so; some nested hypervisors hang it early (said once,
# remembered per kernel in $TMPDIR).
kvm_boots() {
	probe=${TMPDIR:-/tmp}/krmin-kvm-probe-$kver
	if [ ! -f "$probe" ]; then
		timeout 20 qemu-system-x86_64 -accel kvm -cpu "$kvm_cpu" -m 256M -nodefaults \
			-display none -monitor none -no-reboot -serial stdio -kernel "$kernel" \
			-append "console=ttyS0 panic=-1" </dev/null 2>&1 |
			grep -q -m1 -E 'VFS|Kernel panic' && echo kvm >"$probe" || echo tcg >"$probe"
	fi
	[ "$(cat "$probe")" = kvm ]
}
if [ -n "${KRMIN_QEMU_ACCEL:-}" ]; then
	accel=$KRMIN_QEMU_ACCEL
elif [ -r /dev/kvm ] && [ -w /dev/kvm ] && [ -r "$kernel" ] && kvm_boots; then
	accel=kvm
else
	[ ! -e /dev/kvm ] || echo "note: kvm does not boot $kver here; software emulation (tcg)"
	accel=tcg
fi
cpu=max
[ "$accel" != kvm ] || cpu=$kvm_cpu
qtimeout=${KRMIN_QEMU_TIMEOUT:-240}
fuzz_seed=${KRMIN_FUZZ_SEED:-1}
fuzz_iters=${KRMIN_FUZZ_ITERS:-100000}
dyn_tests=${KRMIN_DYN_TESTS:-}
dyn_tools=${KRMIN_DYN_TOOLS:-}
dyn_names=
for d in $dyn_tests; do dyn_names="$dyn_names $(basename "$d")"; done
tests=${KRMIN_TESTS:-test_krmin_map test_krmin_revoke test_krmin_race test_krmin_fuzz test_krmin_io$dyn_names test_krmin_unload}
[ -n "$dyn_tests" ] ||
	echo "note: KRMIN_DYN_TESTS unset: test_krmin_keeper (krpoold with the module) is left out; meson test --suite kmod runs it"
start=$(date +%s)

skip() {
	echo "SKIP: $*"
	exit 77
}

command -v qemu-system-x86_64 >/dev/null ||
	skip "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
[ -r "$kernel" ] ||
	skip "$kernel missing or unreadable (apt-get install linux-image-$kver)"
[ -f "$kdir/Makefile" ] ||
	skip "$kdir missing (apt-get install linux-headers-$kver)"
[ -x "$busybox" ] ||
	skip "$busybox missing (apt-get install busybox-static)"
if ldd "$busybox" >/dev/null 2>&1; then
	skip "$busybox is dynamically linked (apt-get install busybox-static)"
fi
command -v gcc >/dev/null || skip "gcc missing"
command -v make >/dev/null || skip "make missing"

fail() {
	echo "FAIL: $*"
	[ -z "${work:-}" ] || echo "(build products and console log kept in $work)"
	exit 1
}

if [ -n "${KRMIN_WORKDIR:-}" ]; then
	work=$KRMIN_WORKDIR
	keep=1
	mkdir -p "$work" || fail "cannot create $work"
	rm -rf "${work:?}/ko" "${work:?}/bin" "$work/initramfs.cpio" "$work/console.raw" \
		"$work/console.log" "$work/splats.txt"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/krmin-qemu.XXXXXX")
	keep=0
fi
log=$work/console.log

# 1. The module, out of the source tree.
"$top/kmod-min/build.sh" "$work/ko" "$kdir" >"$work/build-ko.log" 2>&1 || {
	cat "$work/build-ko.log"
	fail "kmod-min build"
}
# Same version as the kernel we boot, or insmod would refuse it.
modver=$(modinfo -F vermagic "$work/ko/krmin.ko" 2>/dev/null | cut -d' ' -f1)
[ -z "$modver" ] || [ "$modver" = "$kver" ] ||
	fail "krmin.ko is for $modver, the guest kernel is $kver"

# 2. The guest programs: ours statically linked, the dynamic ones as built.
mkdir -p "$work/bin"
progs=
is_dyn() {
	for d in $dyn_tests; do
		[ "$(basename "$d")" = "$1" ] && echo "$d" && return 0
	done
	return 1
}
for t in $tests; do
	if d=$(is_dyn "$t"); then
		[ -x "$d" ] || fail "$d is not built"
		progs="$progs $d"
		continue
	fi
	gcc -static -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
		-I"$top/include" -I"$top/tests/common" -I"$here" \
		-DKT_FUZZ_SEED="$fuzz_seed" -DKT_FUZZ_ITERS="$fuzz_iters" \
		"$here/$t.c" -o "$work/bin/$t" >"$work/build-$t.log" 2>&1 || {
		cat "$work/build-$t.log"
		fail "building $t"
	}
	progs="$progs $work/bin/$t"
done

# 3. The initramfs.
# The dynamic tests' environment in the guest (sourced by guest_init.sh).
{
	echo "export KRPOOLD=/bin/krpoold KRCTL=/bin/krctl TMPDIR=/tmp"
	echo "export KR_LAUNCH_KEY=${KR_LAUNCH_KEY:-6b72636f7265207465737473206f6e65206c61756e63682c206e6f2073656372}"
	echo "export KRMIN_GUEST_TIMEOUT=${KRMIN_GUEST_TIMEOUT:-120}"
} >"$work/tests.env"
# shellcheck disable=SC2086 # progs is a list
KRMIN_GUEST_TOOLS=$dyn_tools KRMIN_GUEST_ENV=$work/tests.env \
	KRMIN_GUEST_FILES=${KRMIN_GUEST_FILES:-} \
	"$here/mkinitramfs.sh" "$work/initramfs.cpio" "$busybox" "$work/ko/krmin.ko" \
	$progs || fail "mkinitramfs"

# 4. One boot runs everything; the guest powers itself off.
build_s=$(($(date +%s) - start))
echo "kernel $kver: built in ${build_s}s; booting $kernel under qemu ($accel)"
boot_start=$(date +%s)
# 2 GiB: the keeper's hugepages (guest_init.sh reserves them) and ASan.
mem=512M
[ -z "$dyn_tests" ] || mem=2G
# An ivshmem PCI device: its BAR 2 is test_krmin_io's stand-in for a UAR page.
timeout "$qtimeout" qemu-system-x86_64 \
	-accel "$accel" -cpu "$cpu" -m "$mem" -smp 2 \
	-object memory-backend-ram,id=krio,size=1M,share=on -device ivshmem-plain,memdev=krio \
	-nodefaults -display none -monitor none -no-reboot \
	-serial "file:$work/console.raw" \
	-kernel "$kernel" -initrd "$work/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 oops=panic softlockup_panic=1 loglevel=7" \
	</dev/null >"$work/qemu.log" 2>&1
qrc=$?
boot_s=$(($(date +%s) - boot_start))
[ -f "$work/console.raw" ] && tr -d '\r' <"$work/console.raw" >"$log"
[ -f "$log" ] || {
	cat "$work/qemu.log"
	fail "qemu produced no console log (exit $qrc)"
}

# 5. Verdict.
bad=0
report() {
	echo "FAIL: $*"
	bad=1
}
[ "$qrc" = 124 ] && report "guest timed out after ${qtimeout}s"
grep -q '^KRTEST-DONE' "$log" || report "guest did not finish (no KRTEST-DONE)"
for t in insmod $tests; do
	line=$(grep -a "^KRTEST-RESULT $t " "$log" | tail -n 1)
	rc=${line##* }
	[ -n "$line" ] || { report "$t: no result"; continue; }
	[ "$rc" = 0 ] || report "$t: exit status $rc"
done
# Kernel trouble, anywhere in the console (the kernel log is also dumped).
pattern='WARNING:|BUG:|Oops|Call Trace|lockdep|possible recursive locking'
pattern="$pattern|KASAN|general protection fault|Kernel panic|soft lockup"
pattern="$pattern|hard LOCKUP|rcu.*stall|list_add corruption|list_del corruption"
if grep -a -E "$pattern" "$log" >"$work/splats.txt"; then
	report "kernel reported trouble:"
	sed 's/^/    /' "$work/splats.txt" | head -n 40
fi
# Taint: only O (out-of-tree, 4096) and E (unsigned, 8192) are expected.
taint=$(grep -a '^KRTEST-TAINT ' "$log" | tail -n 1 | cut -d' ' -f2)
if [ -n "$taint" ] && [ $((taint & ~(4096 | 8192))) != 0 ]; then
	report "kernel tainted: $taint"
fi

echo "--- guest results ---"
grep -a -E '^(KRTEST-BOOT|KRTEST-RESULT|KRTEST-DONE|PASS:|SKIP)|FAIL|^(map|revoke|race|fuzz|io|unload|keeper|insn):' \
	"$log"
total_s=$(($(date +%s) - start))
echo "--- kernel $kver: build ${build_s}s, boot+tests ${boot_s}s, total ${total_s}s ---"
if [ "$bad" != 0 ]; then
	echo "--- console tail ---"
	tail -n 60 "$log"
	fail "kmod-min qemu tests"
fi
[ "$keep" = 1 ] || rm -rf "$work"
echo "PASS: kmod_qemu on $kver"
exit 0
