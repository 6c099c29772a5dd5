#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What a job's binary loads at exec: no library of the keeper's side.

A job reaches the device only through the keeper's pages (a doorbell-only
view, src/devx/devx_hw_view.c), so a program that links libkrcore.a and
never opens a device must not load rdma-core (libibverbs, libmlx5, libnl)
or DPDK: each shared library costs every exec ~60-100 us on the 2-vCPU VM,
rdma-core's three ~0.3 ms. Fails, naming the library, when one is needed.

The libfabric provider (libkrcore-fi.so) is checked too: it links the job
library as an archive, so it carries only what it calls (libfabric itself
may load libibverbs; the provider adds none of it).

usage: scripts/job-needs-check.py BINARY...
"""
import re
import subprocess
import sys

BANNED = re.compile(r'^(libibverbs|libmlx5|libnl-|librte_|libnuma)')


def needed(path):
    out = subprocess.run(['readelf', '-d', '--wide', path], check=True, capture_output=True,
                         text=True).stdout
    return re.findall(r'\(NEEDED\)\s+Shared library: \[([^\]]+)\]', out)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    bad = 0
    for path in sys.argv[1:]:
        libs = needed(path)
        banned = [lib for lib in libs if BANNED.match(lib)]
        if banned:
            print('%s: a job loads %s at exec' % (path, ', '.join(banned)))
            bad += 1
        else:
            print('%s: %s' % (path, ' '.join(libs)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
