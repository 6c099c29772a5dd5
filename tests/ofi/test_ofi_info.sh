#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fi_info -p krcore (libfabric-bin) with the provider loaded from the build
# (FI_PROVIDER_PATH): an RDM endpoint with the capabilities Open MPI's
# mtl/ofi asks for, RMA and atomics, send-after-send order, 4 bytes of CQ
# data; nothing for what it does not offer (FI_RMA_EVENT, a MSG endpoint),
# and nothing at all on a node
# without a keeper socket. Exit 77 without fi_info.
# Usage: test_ofi_info.sh BUILDDIR
set -euo pipefail
bin=${1:?usage: test_ofi_info.sh BUILDDIR}
command -v fi_info >/dev/null || { echo "SKIP: no fi_info (apt-get install libfabric-bin)"; exit 77; }
[ -f "$bin/libkrcore-fi.so" ] || { echo "FAIL: no $bin/libkrcore-fi.so"; exit 1; }
export FI_PROVIDER_PATH=$bin
dir=$(mktemp -d /tmp/krcore-ofi-info.XXXXXX)
trap 'rm -rf "$dir"' EXIT
# no keeper here: no offer (a program taking the first provider must not pick krcore)
if KR_KEEPER_SOCKET=$dir/none fi_info -p krcore >/dev/null 2>&1; then
	echo "FAIL: krcore offered with no keeper socket"
	exit 1
fi
# a socket where the keeper's would be: the offer (fi_info opens no domain)
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$dir/k.sock"
export KR_KEEPER_SOCKET=$dir/k.sock
out=$(fi_info -p krcore -v)
echo "$out" | head -80
want=("prov_name: krcore" "type: FI_EP_RDM" "FI_TAGGED" "FI_MSG" "FI_LOCAL_COMM" "FI_REMOTE_COMM"
      "FI_DIRECTED_RECV" "FI_RMA" "FI_ATOMIC" "FI_REMOTE_WRITE" "rma_iov_limit: 1"
      "mr_key_size: 8" "msg_order: \[ FI_ORDER_SAS \]" "cq_data_size: 4" "max_msg_size: 67108864")
for w in "${want[@]}"; do
	echo "$out" | grep -q -- "$w" || { echo "FAIL: fi_info -p krcore -v lacks '$w'"; exit 1; }
done
# what it does not offer yields nothing
fi_info -p krcore -c "FI_RMA|FI_ATOMIC" >/dev/null || { echo "FAIL: no RMA and atomics offer"; exit 1; }
if fi_info -p krcore -c FI_RMA_EVENT >/dev/null 2>&1; then
	echo "FAIL: fi_info offers FI_RMA_EVENT"
	exit 1
fi
if fi_info -p krcore -t FI_EP_MSG >/dev/null 2>&1; then
	echo "FAIL: fi_info offers an FI_EP_MSG endpoint"
	exit 1
fi
echo "PASS: fi_info lists krcore's RDM endpoint"
