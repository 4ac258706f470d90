#!/usr/bin/env python3
"""Compare two fp8q_bench JSON files of one device run, benchmark by benchmark.

usage: compare.py OLD.json NEW.json [--md OUT.md] [--tolerance 0.02]

For every benchmark present in both, the ratio new/old of the median time (`us`) and of the
host time per call (`host_us`); default-tuning rows (no variant) outside ±tolerance are marked.
Benchmarks present in one file only are listed. Exit status 0 always: this is a report.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402  (same folder)


def records(path):
    data = report.load_json(path)
    entries = []
    for e in data.get("benchmarks", []):
        e = dict(e)
        run = report.clean_name(e.get("run_name") or e.get("name", ""))
        e["_base"] = e["_key"] = run
        e["_tag"] = ""
        entries.append(e)
    return {r["name"]: r for r in report.summarize(entries)}, data.get("context", {})


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--md")
    p.add_argument("--tolerance", type=float, default=0.02)
    a = p.parse_args()
    old, _ = records(a.old)
    new, _ = records(a.new)
    lines = [f"old: {a.old}  new: {a.new}  (ratio = new / old; * default tuning outside "
             f"±{a.tolerance:.0%})", "",
             "| benchmark | old µs | new µs | ratio | old host µs | new host µs |",
             "|---|---:|---:|---:|---:|---:|"]
    outside = 0
    for name in sorted(set(old) & set(new)):
        o, n = old[name], new[name]
        if not o["us"] or not n["us"]:
            lines.append(f"| {name} | {o['us']} | {n['us']} | error | | |")
            continue
        r = n["us"] / o["us"]
        default = o["fields"] is not None and not o["fields"].get("variant")
        mark = "*" if default and abs(r - 1) > a.tolerance else ""
        outside += bool(mark)
        fh = lambda x: f"{x:.1f}" if isinstance(x, (int, float)) else "—"  # noqa: E731
        lines.append(f"| {name} | {o['us']:.2f} | {n['us']:.2f} | {r:.3f}{mark} | "
                     f"{fh(o['host_us'])} | {fh(n['host_us'])} |")
    only_old = sorted(set(old) - set(new))
    only_new = sorted(set(new) - set(old))
    if only_old:
        lines += ["", "only in old: " + ", ".join(only_old)]
    if only_new:
        lines += ["", "only in new: " + ", ".join(only_new)]
    lines += ["", f"default-tuning benchmarks outside ±{a.tolerance:.0%}: {outside}"]
    text = "\n".join(lines)
    print(text)
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
