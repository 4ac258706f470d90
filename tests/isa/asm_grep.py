#!/usr/bin/env python3
"""Assertions over compiler assembly (AMDGPU .s or NVIDIA PTX), for fp8q_add_isa_check.

usage: asm_grep.py <asm file> [--function REGEX] [--require REGEX]... [--forbid REGEX]...
                   [--min-count REGEX N]... [--max-count REGEX N]... [--count REGEX]...
                   [--then <another group of the same options>]...

--function limits every other check to the bodies of the functions/kernels whose symbol
matches REGEX (AMDGPU: from `name:` to `.Lfunc_endN:`; PTX: from `.entry name` / `.func name`
to the closing `}` at column 0). Each check prints what it found, so a failing run shows why.
--max-count fails when more than N lines match (an instruction budget); --count only reports
how many lines match (a figure recorded for comparison).
--then starts another group of checks on the same file, with its own --function; the run fails
when any group fails.
"""
import argparse
import re
import sys


def function_bodies(lines, name_re):
    """Lines of every function whose symbol matches name_re, with a header per function."""
    pattern = re.compile(name_re)
    out = []
    found = []
    inside = False
    for line in lines:
        if not inside:
            amd = re.match(r"^([A-Za-z_.$][\w.$]*):", line)
            ptx = re.match(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w.$]+)", line)
            label = amd.group(1) if amd else ptx.group(1) if ptx else None
            if label and not label.startswith(".L") and pattern.search(label):
                inside = True
                found.append(label)
                out.append(line)
            continue
        out.append(line)
        if re.match(r"^\.Lfunc_end\d+:", line) or line.startswith("}"):
            inside = False
    return out, found


def main():
    argv = sys.argv[1:]
    if not argv:
        print(__doc__)
        return 2
    asm, rest = argv[0], argv[1:]
    groups = [[]]
    for a in rest:
        if a == "--then":
            groups.append([])
        else:
            groups[-1].append(a)
    with open(asm, encoding="utf-8", errors="replace") as f:
        all_lines = f.read().splitlines()
    return 1 if sum(check_group(asm, all_lines, g) for g in groups) else 0


def check_group(asm, all_lines, argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--function", help="restrict checks to functions matching this regex")
    parser.add_argument("--require", action="append", default=[], metavar="REGEX")
    parser.add_argument("--forbid", action="append", default=[], metavar="REGEX")
    parser.add_argument("--min-count", action="append", nargs=2, default=[],
                        metavar=("REGEX", "N"))
    parser.add_argument("--max-count", action="append", nargs=2, default=[],
                        metavar=("REGEX", "N"))
    parser.add_argument("--count", action="append", default=[], metavar="REGEX")
    args = parser.parse_args(argv)

    lines = all_lines
    where = asm
    if args.function:
        lines, found = function_bodies(lines, args.function)
        if not found:
            print(f"FAIL: no function matching /{args.function}/ in {asm}")
            return 1
        where = f"{len(found)} function bodies matching /{args.function}/ in {asm}"

    failures = 0

    def count(regex):
        r = re.compile(regex)
        return [ln for ln in lines if r.search(ln)]

    for regex in args.require:
        hits = count(regex)
        ok = bool(hits)
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} require /{regex}/: {len(hits)} line(s)"
              + (f", first: {hits[0].strip()}" if hits else ""))
    for regex in args.forbid:
        hits = count(regex)
        ok = not hits
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} forbid /{regex}/: {len(hits)} line(s)")
        for ln in hits[:10]:
            print(f"        {ln.strip()}")
    for regex, n in args.min_count:
        hits = count(regex)
        ok = len(hits) >= int(n)
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} at least {n} of /{regex}/: {len(hits)} line(s)")
    for regex, n in args.max_count:
        hits = count(regex)
        ok = len(hits) <= int(n)
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} at most {n} of /{regex}/: {len(hits)} line(s)")
    for regex in args.count:
        print(f"info count of /{regex}/: {len(count(regex))} line(s)")

    print(f"checked {where}: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
