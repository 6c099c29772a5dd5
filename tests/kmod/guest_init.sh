#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: BSD-3-Clause
# /init of the kmod-min test initramfs (see mkinitramfs.sh): mounts the
# pseudo filesystems, loads krmin.ko, runs every program in /tests.list and
# reports on the console, for run_qemu_tests.sh to parse:
#   KRTEST-RESULT <name> <exit status>    one per program (and for insmod)
#   KRTEST-TAINT <n>                      /proc/sys/kernel/tainted at the end
#   KRTEST-DMESG-BEGIN ... -END           the kernel log
#   KRTEST-DONE                           the last line before power-off
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
# krpoold's memory (test_krmin_keeper): 2 MB hugepages, as on the host
if [ -f /tests.env ]; then
	# shellcheck disable=SC1091 # written by run_qemu_tests.sh
	. /tests.env
	mkdir -p /dev/hugepages
	mount -t hugetlbfs nodev /dev/hugepages
	echo 256 >/proc/sys/vm/nr_hugepages
fi
echo "KRTEST-BOOT uptime $(cut -d' ' -f1 /proc/uptime) s, $(nproc) cpus"

insmod /krmin.ko
rc=$?
echo "KRTEST-RESULT insmod $rc"
if [ "$rc" = 0 ]; then
	while read -r t; do
		echo "KRTEST-START $t $(cut -d' ' -f1 /proc/uptime)"
		timeout "${KRMIN_GUEST_TIMEOUT:-120}" "/bin/$t" </dev/null
		echo "KRTEST-RESULT $t $?"
	done </tests.list
fi
echo "KRTEST-TAINT $(cat /proc/sys/kernel/tainted)"
echo "KRTEST-DMESG-BEGIN"
dmesg
echo "KRTEST-DMESG-END"
echo "KRTEST-DONE uptime $(cut -d' ' -f1 /proc/uptime) s"
poweroff -f
