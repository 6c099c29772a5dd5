#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Folder dependencies of krcore, counted from the build's objects.

A folder uses another when one of its objects needs (nm: undefined) a
symbol an object of the other defines. The check fails on any cycle
between folders, and when an archive holds an object of a folder it must
not (libkrcore.a, what a job links, holds nothing of the keeper).

usage: scripts/layout-check.py BUILD_DIR [--quiet]
"""
import json
import os
import subprocess
import sys

# What each archive may not hold: the folders of the other program.
ARCHIVE_BANS = {
    'libkrcore.a': ('src/keeper',),
}


def nm_symbols(path):
    out = subprocess.run(['nm', '-P', path], check=True, capture_output=True,
                         text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == 'U':
            undefined.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, undefined


def objects(build):
    """(folder, object path, source path) for every object built from src/ or tools/."""
    with open(os.path.join(build, 'compile_commands.json')) as f:
        cmds = json.load(f)
    src_root = source_root(build)
    seen = {}
    for c in cmds:
        src = os.path.normpath(os.path.join(c['directory'], c['file']))
        out = os.path.normpath(os.path.join(c['directory'], c['output']))
        rel = os.path.relpath(src, src_root)
        if not (rel.startswith('src/') or rel.startswith('tools/')):
            continue
        # One object per source: the static library's build of it.
        if src in seen and '.so.p' in out:
            continue
        seen[src] = (os.path.dirname(rel), out, rel)
    return sorted(seen.values())


def source_root(build):
    with open(os.path.join(build, 'meson-info', 'meson-info.json')) as f:
        return json.load(f)['directories']['source']


def cycles(graph):
    """Strongly connected components with more than one folder (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def archive_members(build, name):
    path = os.path.join(build, name)
    if not os.path.exists(path):
        return None
    out = subprocess.run(['ar', 't', path], check=True, capture_output=True,
                         text=True).stdout
    return out.split()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    quiet = '--quiet' in sys.argv
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    build = args[0]
    objs = objects(build)
    defined_by = {}
    needs = []
    for folder, obj, rel in objs:
        d, u = nm_symbols(obj)
        for s in d:
            defined_by.setdefault(s, set()).add(folder)
        needs.append((folder, rel, u))
    graph, why = {}, {}
    for folder, rel, undef in needs:
        graph.setdefault(folder, set())
        for s in undef:
            for other in defined_by.get(s, ()):
                if other != folder:
                    graph[folder].add(other)
                    why.setdefault((folder, other), []).append('%s: %s' % (rel, s))
    bad = 0
    if not quiet:
        for f in sorted(graph):
            print('%-20s -> %s' % (f, ', '.join(sorted(graph[f])) or '-'))
    for comp in cycles(graph):
        bad = 1
        print('cycle between folders: ' + ' <-> '.join(comp))
        for a in comp:
            for b in comp:
                for w in sorted(why.get((a, b), []))[:6]:
                    print('  %s -> %s  (%s)' % (a, b, w))
    objs_by_name = {os.path.basename(o): rel for _, o, rel in objs}
    for archive, banned in ARCHIVE_BANS.items():
        members = archive_members(build, archive)
        if members is None:
            continue
        for m in members:
            rel = objs_by_name.get(m)
            if rel and rel.startswith(banned):
                bad = 1
                print('%s holds %s (a folder it must not link)' % (archive, rel))
    print('layout: %d folders, %s' % (len(graph), 'cycles or misplaced objects' if bad
                                      else 'no cycle between folders'))
    return bad


if __name__ == '__main__':
    sys.exit(main())
