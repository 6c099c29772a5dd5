#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check a capture of sim_tshark_gen's traffic against what it says it sent.

    sim_tshark_check.py <capture.pcap> <port> <expect.json> <fields.tsv> <verbose.txt>

fields.tsv is `tshark -T fields` output (the FIELDS list below, tab separated),
verbose.txt is `tshark -V` output. Fails (exit 1) on:
  - any "Malformed", any expert info of severity Error or Warning;
  - a packet count, opcode, Wireshark opcode name (Info column), address,
    destination QP, PSN, AckReq, RETH, AtomicETH, AETH, AtomicAckETH, DETH
    or payload that differs from the expectation (packets A->B in order,
    packets B->A in order);
  - a DC request whose BTH extension is not the DC access key, or whose
    RDETH connection number differs between requests of one connection;
  - an ICRC that is not CRC-32 over the masked IPv4/UDP/BTH pseudo-header,
    the rest of the headers and the payload (IBTA annex A17.8), computed here
    from the captured bytes; an IPv4 header without DF or with ID != 0.
"""
import json
import struct
import sys
import zlib

FIELDS = [
    "frame.number", "ip.src", "ip.dst", "udp.srcport", "udp.dstport",
    "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
    "infiniband.bth.a", "infiniband.reth.va", "infiniband.reth.r_key",
    "infiniband.reth.dmalen", "infiniband.atomiceth.swapdt",
    "infiniband.atomiceth.cmpdt", "infiniband.aeth.syndrome", "infiniband.aeth.msn",
    "infiniband.atomicacketh.origremdt", "infiniband.deth.srcqp",
    "infiniband.rdeth.eecnxt", "infiniband.invariant.crc", "data.data", "_ws.col.Info",
]

errors = []


def err(msg):
    errors.append(msg)


def num(s):
    s = s.strip()
    if s == "":
        return None
    s = s.split(",")[0]
    if s in ("True", "true"):
        return 1
    if s in ("False", "false"):
        return 0
    return int(s, 0)


def read_pcap(path):
    """UDP payloads of the capture with their IPv4 headers, in order."""
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        en = "<"
    elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
        en = ">"
    else:
        sys.exit("not a pcap file (write it with tshark -F pcap)")
    linktype = struct.unpack(en + "I", data[20:24])[0]
    off, pkts = 24, []
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(en + "IIII", data[off:off + 16])
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if linktype == 1:          # Ethernet
            l3 = frame[14:]
        elif linktype == 113:      # Linux cooked v1
            l3 = frame[16:]
        elif linktype == 276:      # Linux cooked v2
            l3 = frame[20:]
        elif linktype in (12, 101):  # raw IP
            l3 = frame
        else:
            sys.exit("unexpected link type %d" % linktype)
        ihl = (l3[0] & 0xf) * 4
        pkts.append((l3[:ihl], l3[ihl:ihl + 8], l3[ihl + 8:]))
    return pkts


def icrc_ok(iph, udph, ib):
    ip = bytearray(iph)
    ip[1] = 0xff            # TOS
    ip[8] = 0xff            # TTL
    ip[10:12] = b"\xff\xff"  # header checksum
    udp = bytearray(udph)
    udp[6:8] = b"\xff\xff"   # UDP checksum
    body = bytearray(ib[:-4])
    body[4] = 0xff          # BTH resv8a
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(body))
    return struct.pack("<I", crc) == bytes(ib[-4:])


def main():
    pcap, port, expect_path, fields_path, verbose_path = sys.argv[1:6]
    expect = json.load(open(expect_path))
    verbose = open(verbose_path).read()
    for needle in ("Malformed", "Expert Info (Error", "Expert Info (Warning"):
        if needle in verbose:
            line = [l for l in verbose.splitlines() if needle in l][0].strip()
            err("tshark -V: %s" % line)

    rows = []
    for line in open(fields_path):
        cols = line.rstrip("\n").split("\t")
        if len(cols) != len(FIELDS):
            err("tshark -T fields: %d columns, expected %d: %r" % (len(cols), len(FIELDS), line))
            continue
        rows.append(dict(zip(FIELDS, cols)))
    raw = read_pcap(pcap)
    if len(raw) != len(rows):
        err("%d packets in the pcap, %d rows decoded" % (len(raw), len(rows)))

    for i, (iph, udph, ib) in enumerate(raw):
        if not icrc_ok(iph, udph, ib):
            err("packet %d: ICRC 0x%s does not match the masked headers and payload"
                % (i + 1, ib[-4:].hex()))
        ident, frag = struct.unpack("!HH", iph[4:8])
        if ident != 0 or frag != 0x4000:
            err("packet %d: IPv4 ID 0x%x flags/offset 0x%x (want 0, DF)" % (i + 1, ident, frag))
        if i < len(rows):
            shown = num(rows[i]["infiniband.invariant.crc"])
            if shown is not None and shown != struct.unpack("!I", ib[-4:])[0]:
                err("packet %d: tshark shows ICRC 0x%x, the bytes are %s"
                    % (i + 1, shown, ib[-4:].hex()))

    # A->B and B->A, each in order
    for direction in ("127.0.0.1", "127.0.0.2"):
        want = [e for e in expect if e["src"] == direction]
        got = [(r, raw[i]) for i, r in enumerate(rows)
               if r["ip.src"] == direction and i < len(raw)]
        if len(got) != len(want):
            err("from %s: %d packets captured, %d expected" % (direction, len(got), len(want)))
        dc_conns = set()
        for e, (r, (iph, udph, ib)) in zip(want, got):
            where = "frame %s (%s)" % (r["frame.number"], e["name"])
            info = r["_ws.col.Info"]
            if not info.startswith(e["name"]):
                err("%s: Info column %r, expected %r" % (where, info, e["name"]))
            checks = [
                ("ip.dst", r["ip.dst"], e["dst"]),
                ("udp.dstport", num(r["udp.dstport"]), int(port)),
                ("opcode", num(r["infiniband.bth.opcode"]), e["opcode"]),
                ("destqp", num(r["infiniband.bth.destqp"]), e["dqp"]),
                ("psn", num(r["infiniband.bth.psn"]), e["psn"]),
                ("ackreq", num(r["infiniband.bth.a"]), e["ackreq"]),
            ]
            for key, field in (("va", "infiniband.reth.va"), ("rkey", "infiniband.reth.r_key"),
                               ("len", "infiniband.reth.dmalen"),
                               ("swap", "infiniband.atomiceth.swapdt"),
                               ("cmp", "infiniband.atomiceth.cmpdt"),
                               ("syndrome", "infiniband.aeth.syndrome"),
                               ("msn", "infiniband.aeth.msn"),
                               ("orig", "infiniband.atomicacketh.origremdt"),
                               ("srcqp", "infiniband.deth.srcqp")):
                checks.append((key, num(r[field]), e.get(key)))
            for key, have, should in checks:
                if have != should:
                    err("%s: %s is %r, expected %r" % (where, key, have, should))
            payload = r["data.data"].replace(":", "")
            if payload != e.get("payload", ""):
                err("%s: payload %s, expected %s" % (where, payload, e.get("payload", "")))
            if "dc_key" in e:
                key = struct.unpack("!Q", ib[12:20])[0]
                if key != e["dc_key"]:
                    err("%s: DC access key 0x%x on the wire, expected 0x%x"
                        % (where, key, e["dc_key"]))
                dc_conns.add(num(r["infiniband.rdeth.eecnxt"]))
        if len(dc_conns) > 1 or None in dc_conns:
            err("from %s: DC requests of one connection carry RDETH %r" % (direction, dc_conns))

    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("PASS: %d packets decode as sent, ICRCs correct" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
