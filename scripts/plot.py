#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Figures from `krbench all FILE.json` (Debian: apt-get install python3-matplotlib).

    scripts/plot.py FILE.json [OUTDIR]

writes into OUTDIR (default: FILE's directory):
  connect_cdf.png     connect latency CDF to another node, krcore's cases beside the verbs
                      way (the `connect --nodes 2 --profile connectx4` run)
  connects_per_s.png  cached connects per second on 1 and 2 threads, to this node and to
                      another node
  read.png            8-byte READ latency (p50) and async rate, vQP beside raw DCI, to this
                      node and to another node (with the UDP ping-pong floor)
  fanout.png          one thread's async READ rate to N peers round-robin by DCIs per thread

or from `scripts/mpi-bootstrap.sh`'s FILE.json:
  mpi_bootstrap.png   an MPI job's bootstrap time against its ranks, krcore beside verbs
or from `scripts/mpi-ofi-bench.sh`'s FILE.json:
  mpi_ofi.png         8-byte round trips (krcore vQP, fi_pingpong, MPI over the provider)
                      and MPI_Init + first Alltoall through krcore beside Open MPI's tcp
"""
import json
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot.py needs matplotlib: apt-get install python3-matplotlib")


def find(runs, bench, **keys):
    for r in runs:
        if r.get("bench") == bench and all(r.get(k) == v for k, v in keys.items()):
            return r
    return None


def connect_cdf(run, out):
    fig, ax = plt.subplots(figsize=(7, 4))
    names = {
        "connect_cached": "krcore: connect, record cached",
        "connect_uncached": "krcore: connect, one MetaServer READ",
        "connect_first": "krcore: thread's first connect (DCI lease)",
        "first_read": "krcore: connect + first READ",
        "verbs_connect": "verbs: RC QP to RTS",
        "verbs_baseline": "verbs: RC QP + first READ",
    }
    for case in run["cases"]:
        if case["name"] not in names or "cdf_us" not in case:
            continue
        cdf = case["cdf_us"]
        pct = [100.0 * i / (len(cdf) - 1) for i in range(len(cdf))]
        style = "--" if case["name"].startswith("verbs") else "-"
        ax.plot(cdf, pct, style, label=names[case["name"]])
    ax.set_xscale("log")
    ax.set_xlabel("latency (us, log scale)")
    ax.set_ylabel("percentile")
    ax.set_title(f"Connecting to another node ({run['nodes']} sim nodes, "
                 f"cost model {run['profile']})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def connects_per_s(local, remote, out):
    fig, ax = plt.subplots(figsize=(5, 3.5))
    rows = []
    if local:
        rows.append(("this node, 1 thread", local["connects_per_s"]))
    if remote:
        rows.append(("other node, 1 thread", remote["connects_per_s"]))
        rows.append(("other node, 2 threads", remote["connects_per_s_2t"]))
    ax.bar([r[0] for r in rows], [r[1] / 1e6 for r in rows])
    ax.set_ylabel("million connects/s (cached)")
    ax.set_title("kr_connect + kr_disconnect")
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def read_fig(local, peer, out):
    fig, (lat, rate) = plt.subplots(1, 2, figsize=(8, 3.5))
    groups = [("this node", local), ("other node", peer)]
    xs = range(len(groups))
    w = 0.35
    for off, path in ((-w / 2, "vqp"), (w / 2, "raw_dci")):
        lat.bar([x + off for x in xs], [g[1][path]["p50_us"] if g[1] else 0 for g in groups],
                w, label=path)
        rate.bar([x + off for x in xs], [g[1][path]["mops"] if g[1] else 0 for g in groups],
                 w, label=path)
    if peer:
        lat.plot([1 - w, 1 + w], [peer["udp_pingpong"]["p50_us"]] * 2, "k:",
                 label="UDP ping-pong")
    for ax, title in ((lat, "sync 8-byte READ, p50 (us)"), (rate, "async READ, Mop/s")):
        ax.set_xticks(list(xs))
        ax.set_xticklabels([g[0] for g in groups])
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def fanout_fig(run, out):
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ks = [str(d["dcis_per_thread"]) for d in run["dcis"]]
    ax.bar(ks, [d["mops"] for d in run["dcis"]])
    ax.set_xlabel("DCIs per thread (kr_attach_opts.dcis_per_thread)")
    ax.set_ylabel("async 8-byte READ, Mop/s")
    ax.set_title(f"One thread to {run['peers']} peers round-robin", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def mpi_bootstrap_fig(runs, out):
    runs = sorted(runs, key=lambda r: r["ranks"])
    ranks = [r["ranks"] for r in runs]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(ranks, [r["krcore_bootstrap_ms"] for r in runs], "o-", label="krcore")
    for key, style, label in (
            ("verbs_bootstrap_ms", "s--", "verbs (RC QP per peer, NIC per rank)"),
            ("verbs_serial_bootstrap_ms", "^--", "verbs (one command queue per node)"),
            ("dc_bootstrap_ms", "d-.", "per-process DC (8 DCIs, SRQ, DCT)")):
        base = [r for r in runs if key in r]
        if base:
            ax.plot([r["ranks"] for r in base], [r[key] for r in base], style, label=label)
    ax.set_yscale("log")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([str(n) for n in ranks])
    ax.set_xlabel("ranks (all-to-all, 4 sim nodes)")
    ax.set_ylabel("bootstrap, slowest rank (ms)")
    ax.set_title("MPI job bootstrap", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def mpi_ofi_fig(run, out):
    fig, (a, b) = plt.subplots(1, 2, figsize=(8, 3.5))
    names = ["krcore vQP\nSEND", "fi_pingpong\n(krcore)", "MPI\n(cm/ofi/krcore)"]
    vals = [run["krbench_send_rtt_us"], run["fi_pingpong_rtt_us"], run["mpi_pingpong_p50_us"]]
    a.bar(names, vals, color=["#555555", "#1f77b4", "#2ca02c"])
    a.set_ylabel("8-byte round trip (us)")
    a.set_title("latency, two sim nodes", fontsize=10)
    boots = sorted(run["bootstrap"], key=lambda r: r["ranks"])
    x = range(len(boots))
    a.tick_params(axis="x", labelsize=8)
    b.bar([i - 0.27 for i in x], [r["krcore_ms"] for r in boots], 0.27, label="krcore (mtl ofi)")
    b.bar([i for i in x], [r.get("ofi_tcp_ms", 0) for r in boots], 0.27,
          label="libfabric tcp (mtl ofi)")
    b.bar([i + 0.27 for i in x], [r["tcp_ms"] for r in boots], 0.27, label="ob1 + tcp")
    b.set_xticks(list(x))
    b.set_xticklabels([f"{r['ranks']} ranks" for r in boots])
    b.set_ylabel("MPI_Init + first Alltoall (ms)")
    b.set_title("bootstrap, slowest rank", fontsize=10)
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    runs = doc.get("runs", [doc])
    outdir = sys.argv[2] if len(sys.argv) == 3 else os.path.dirname(sys.argv[1]) or "."
    os.makedirs(outdir, exist_ok=True)
    remote = find(runs, "connect", nodes=2, profile="connectx4") or find(runs, "connect",
                                                                         nodes=2)
    local = next((r for r in runs if r.get("bench") == "connect" and "nodes" not in r), None)
    made = []
    if remote:
        connect_cdf(remote, os.path.join(outdir, "connect_cdf.png"))
        made.append("connect_cdf.png")
    if remote or local:
        connects_per_s(local, remote, os.path.join(outdir, "connects_per_s.png"))
        made.append("connects_per_s.png")
    rd, peer = find(runs, "read"), find(runs, "read_peer")
    if rd or peer:
        read_fig(rd, peer, os.path.join(outdir, "read.png"))
        made.append("read.png")
    mpi = [r for r in runs if r.get("bench") == "mpi_alltoall"]
    if mpi:
        mpi_bootstrap_fig(mpi, os.path.join(outdir, "mpi_bootstrap.png"))
        made.append("mpi_bootstrap.png")
    ofi = find(runs, "mpi_ofi")
    if ofi:
        mpi_ofi_fig(ofi, os.path.join(outdir, "mpi_ofi.png"))
        made.append("mpi_ofi.png")
    fan = find(runs, "fanout")
    if fan:
        fanout_fig(fan, os.path.join(outdir, "fanout.png"))
        made.append("fanout.png")
    if not made:
        sys.exit(f"{sys.argv[1]}: no krbench or mpi_alltoall run in it")
    print(f"wrote {', '.join(made)} to {outdir}")


if __name__ == "__main__":
    main()
