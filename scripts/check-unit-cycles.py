#!/usr/bin/env python3
"""Fails when a unit of a folder includes itself through other units.

A unit is a header and the source of the same name (wave_impl.hpp and
wave_impl.cpp), wherever in the folder each lies; a unit includes another
when one of its files includes one of the other's headers by name. Prints
each cycle as the chain of units and the file that closes it.

  scripts/check-unit-cycles.py ROOT FOLDER...   # e.g. . scheduler common
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def units_of(root, folders):
    files = []
    for folder in folders:
        for directory, _, names in os.walk(os.path.join(root, folder)):
            files += [os.path.join(directory, n) for n in names if n.endswith((".hpp", ".cpp"))]
    headers = {os.path.basename(f): f for f in files if f.endswith(".hpp")}
    edges = {}  # unit -> {included unit: the file that includes it}
    for f in files:
        unit = os.path.splitext(os.path.basename(f))[0]
        with open(f, encoding="utf-8") as text:
            for included in INCLUDE.findall(text.read()):
                name = os.path.basename(included)
                if name not in headers:
                    continue
                other = os.path.splitext(name)[0]
                if other != unit:
                    edges.setdefault(unit, {}).setdefault(other, os.path.relpath(f, root))
    return edges


def cycles(edges):
    found, state = [], {}

    def visit(unit, chain):
        state[unit] = "open"
        for other in sorted(edges.get(unit, {})):
            if state.get(other) == "open":
                loop = chain[chain.index(other):] + [other]
                found.append((loop, edges[unit][other]))
            elif other not in state:
                visit(other, chain + [other])
        state[unit] = "done"

    for unit in sorted(edges):
        if unit not in state:
            visit(unit, [unit])
    return found


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    found = cycles(units_of(sys.argv[1], sys.argv[2:]))
    for loop, closing in found:
        print(f"unit cycle: {' -> '.join(loop)} (closed by {closing})")
    if found:
        return 1
    print(f"no unit cycle in {', '.join(sys.argv[2:])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
