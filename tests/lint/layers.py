#!/usr/bin/env python3
"""Check the `#include "..."` lines of kvmlu's C folders against its layers.

Three kinds of violation are found:
  upward  a file includes a header of a folder listed above its own in the
          layer table (tests/lint/layers.txt, top first);
  pair    two folders include each other (in either direction each);
  circle  modules (a .c and its .h count as one, named without the
          extension) that include each other round a circle.

The violations the code has today are listed in a baseline file. The check
fails on a violation the baseline does not list, and on a baseline entry
that no longer occurs, so the list can only shrink. `--list` prints every
violation found in the baseline's line format.

Usage: layers.py [--root DIR] [--layers FILE] [--baseline FILE] [--list]
Exit 0 clean, 1 violations or stale baseline entries, 2 bad input.
"""

import argparse
import os
import re
import sys

SCANNED = ("vmm", "agent", "common", "guestmem", "include")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def read_table(path):
    """Non-comment words of each line of PATH: a list of word lists."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if words:
                rows.append((n, words))
    return rows


def read_layers(path):
    order = {}
    for n, words in read_table(path):
        if len(words) != 1:
            raise ValueError(f"{path}:{n}: one folder a line")
        if words[0] in order:
            raise ValueError(f"{path}:{n}: {words[0]} listed twice")
        order[words[0]] = len(order)  # 0 is the top
    return order


def read_baseline(path):
    known = set()
    for n, words in read_table(path):
        kind = words[0]
        want = {"upward": 3, "pair": 3}.get(kind)
        if kind == "circle" and len(words) >= 3:
            entry = ("circle",) + tuple(sorted(words[1:]))
        elif want is not None and len(words) == want:
            entry = tuple(words) if kind == "upward" else \
                ("pair",) + tuple(sorted(words[1:]))
        else:
            raise ValueError(f"{path}:{n}: expected 'upward FILE HEADER', "
                             "'pair FOLDER FOLDER' or 'circle MODULE MODULE...'")
        if entry in known:
            raise ValueError(f"{path}:{n}: listed twice")
        known.add(entry)
    return known


def source_files(root):
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def resolve(root, src, inc):
    """Where the compiler finds INC from SRC: the file's own folder first,
    then -I. and -Iinclude (the Makefile's INC)."""
    for base in (os.path.dirname(src), "", "include"):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def includes(root):
    """(file, header) for every quoted include that resolves in the tree."""
    edges = set()
    for src in source_files(root):
        with open(os.path.join(root, src), encoding="utf-8",
                  errors="replace") as f:
            for line in f:
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                hdr = resolve(root, src, m.group(1))
                if hdr is None:
                    print(f"layers: warning: {src}: cannot find "
                          f"\"{m.group(1)}\"", file=sys.stderr)
                elif hdr != src:
                    edges.add((src, hdr))
    return edges


def circles(edges):
    """Strongly connected sets of two or more modules (Tarjan's algorithm,
    iterative), each a sorted tuple of module names."""
    graph = {}
    for a, b in edges:
        ma, mb = os.path.splitext(a)[0], os.path.splitext(b)[0]
        graph.setdefault(ma, set())
        graph.setdefault(mb, set())
        if ma != mb:
            graph[ma].add(mb)
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    members.append(m)
                    if m == node:
                        break
                if len(members) > 1:
                    found.append(tuple(sorted(members)))
    return sorted(found)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(here)))
    ap.add_argument("--layers", default=os.path.join(here, "layers.txt"))
    ap.add_argument("--baseline",
                    default=os.path.join(here, "layers-baseline.txt"))
    ap.add_argument("--list", action="store_true",
                    help="print every violation in the baseline's format")
    args = ap.parse_args()
    try:
        order = read_layers(args.layers)
        known = set() if args.list else read_baseline(args.baseline)
    except (OSError, ValueError) as e:
        print(f"layers: {e}", file=sys.stderr)
        return 2

    edges = includes(args.root)
    unplaced = sorted({os.path.dirname(f) for e in edges for f in e}
                      - set(order))
    if unplaced:
        for d in unplaced:
            print(f"layers: FAIL: folder {d} is not in {args.layers}: "
                  "place it in the layer order", file=sys.stderr)
        return 1

    found = set()
    folder_edges = set()
    for src, hdr in sorted(edges):
        a, b = os.path.dirname(src), os.path.dirname(hdr)
        if a == b:
            continue
        folder_edges.add((a, b))
        if order[b] < order[a]:
            found.add(("upward", src, hdr))
    for a, b in folder_edges:
        if a < b and (b, a) in folder_edges:
            found.add(("pair", a, b))
    for members in circles(edges):
        found.add(("circle",) + members)

    if args.list:
        for v in sorted(found):
            print(" ".join(v))
        return 0

    new = sorted(found - known)
    gone = sorted(known - found)
    for v in new:
        what = {"upward": "upward include", "pair": "folders include each other",
                "circle": "modules include each other in a circle"}[v[0]]
        if v[0] == "upward":
            detail = (f"{v[1]} includes {v[2]} ({os.path.dirname(v[2])} is "
                      f"above {os.path.dirname(v[1])} in {args.layers})")
        else:
            detail = " ".join(v[1:])
        print(f"layers: FAIL: new {what}: {detail}")
    for v in gone:
        print(f"layers: FAIL: baseline entry no longer occurs, delete it "
              f"from {args.baseline}: {' '.join(v)}")

    def count(kind, pool):
        return sum(1 for v in pool if v[0] == kind)
    print(f"layers: {count('upward', found)} upward includes "
          f"({count('upward', found & known)} known), "
          f"{count('pair', found)} folder pairs, "
          f"{count('circle', found)} file circles")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
