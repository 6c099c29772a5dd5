#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: BSD-3-Clause
# /init of the soft-RoCE guest (rxe_guest_lib.sh builds it): loads the
# modules in /mod in name order (virtio-net, ib_core, rdma_rxe and what
# they need), puts eth0 on the tap's subnet, adds rxe0 over it with
# iproute2's rdma tool and reports on the console for the host to parse:
#   RXE-LINK <state>          rdma link's state of rxe0/1 (ACTIVE)
#   RXE-GID <gid>             GID index 1 (RoCE v2, from eth0's IPv4)
#   RXE-SELFTEST <rc>         rxe_peer selftest rxe0's exit status
#   RXE-COUNTER <name> <n>    each of rxe0's hw_counters
#   RXE-SERVING <port>        rxe_peer serve listens (RXE_SESSIONS set)
#   RXE-SESSION-DONE <i>      session i with the host's side ended
#   RXE-SESSION-COUNTER <i> <name> <n>  rxe0's hw_counters after session i
#   RXE-SERVE <rc>            rxe_peer serve's exit status
#   RXE-PING <rc>             a ping of the host's tap address
#   RXE-DMESG <line>          the kernel's lines on rxe / rdma
#   RXE-DONE                  the last line before power-off
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# shellcheck disable=SC1091 # written by rxe_guest_lib.sh
. /guest.env
for m in /mod/*.ko; do
	insmod "$m" || echo "RXE-INSMOD-FAILED $m"
done
ip link set lo up
ip link set eth0 up
ip addr add "$RXE_GUEST_IP/24" dev eth0
rdma link add rxe0 type rxe netdev eth0 || echo "RXE-ADD-FAILED $?"
echo "RXE-LINK $(rdma link show rxe0/1 | sed -n 's/.* state \([A-Z_]*\) .*/\1/p')"
echo "RXE-GID $(cat /sys/class/infiniband/rxe0/ports/1/gids/1 2>/dev/null)"
# the guest's own verbs through rxe0 (libibverbs and its rxe provider)
timeout 60 /bin/rxe_peer selftest rxe0
echo "RXE-SELFTEST $?"
# sessions with the host's krcore side (rxe_sim_side), when the test asks
if [ -n "${RXE_SESSIONS:-}" ]; then
	timeout 600 /bin/rxe_peer serve rxe0 "$RXE_SESSIONS"
	echo "RXE-SERVE $?"
fi
for c in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
	[ -f "$c" ] && echo "RXE-COUNTER $(basename "$c") $(cat "$c")"
done
ping -c 2 -W 2 "$RXE_HOST_IP" >/dev/null
echo "RXE-PING $?"
dmesg | grep -i -E 'rxe|rdma|infiniband' | sed 's/^/RXE-DMESG /'
echo "RXE-DONE"
poweroff -f
