#!/usr/bin/env python3
"""Turn fp8q_bench JSON (Google Benchmark) into a Markdown report and a PNG chart.

    python3 bench/report.py bench.json [more.json ...] [--md report.md] [--png chart.png]

Markdown goes to stdout (and to --md when given). The PNG (matplotlib, Agg backend) shows
frac_copy per benchmark with the issue's target and the peers' figures marked; without
matplotlib the chart is skipped with a message. Only the standard library is needed otherwise.

Per benchmark the median over repetitions is used (the `_median` aggregate when the run had
--benchmark_repetitions; otherwise the median of the plain runs). Inside one repetition the
binary already reports the median iteration time as the counter `us`, and frac_copy / GB/s are
derived from it (see bench/bench_quantize.cu).
"""

import argparse
import json
import os
import re
import statistics
import sys

# Targets of issue 4 on the H200 and the peers' figures from /work/shared/ANCHORS.md (H200,
# 2026-11-29, bf16 -> e4m3fn, fraction of copy bandwidth unless the unit says us).
# Key: (recipe, shape). They apply to bf16 input and e4m3 outputs (e4m3fn, e4m3fnuz).
TARGETS = {
    ("rowwise", "16384x5120"): {
        "kind": "frac", "value": 0.90,
        "peers": [("torch.compile", 0.50), ("TorchAO", 0.23)]},
    ("rowwise", "8192x8192"): {
        "kind": "frac", "value": 0.90,
        "peers": [("torch.compile", 0.45), ("TorchAO", 0.20)]},
    ("colwise_colmajor", "16384x5120"): {
        "kind": "frac", "value": 0.85,
        "peers": [("torch.compile", 0.32)]},
    ("tensorwise", "16384x5120"): {
        "kind": "frac", "value": 0.65,
        "peers": [("torch.compile", 0.42), ("TorchAO", 0.38)]},
    ("tensorwise_given_scale", "16384x5120"): {
        "kind": "frac", "value": 0.90, "peers": []},
    ("rowwise", "128x5120"): {
        "kind": "us", "value": 8.0,
        "peers": [("TorchAO", 117.0)]},
}

# Side-by-side comparisons: (title, variants in column order).
COMPARISONS = [
    ("Amax atomics: memory order", ["relaxed", "acq_rel", "seq_cst"]),
    ("Store path", ["direct", "staged"]),
    ("Colwise: one-launch relay vs two streaming passes vs one pass on clusters",
     ["relay", "two_launch", "one_pass"]),
    ("Colwise cast tile", ["tile32x128", "tile128x64", "tile128x128"]),
    ("Tensorwise: amax and cast launches vs one cooperative launch", ["two_launch", "last_block"]),
    ("FP8 conversion", ["sw", "hw"]),
]

# What Google Benchmark appends to a registered name.
_GB_SUFFIX = re.compile(
    r"/(manual_time|real_time|process_time|min_time:[^/]*|min_warmup_time:[^/]*|"
    r"iterations:\d+|repeats:\d+|threads:\d+)$")
_NAME = re.compile(r"^(?P<recipe>[^/]+)/(?P<format>[^/]+)/(?P<dtype>[^/]+)/"
                   r"(?P<rows>\d+)x(?P<cols>\d+)(?:/(?P<variant>[^/]+))?$")
_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def clean_name(name):
    while True:
        stripped = _GB_SUFFIX.sub("", name)
        if stripped == name:
            return name
        name = stripped


def parse_name(name):
    """Fields of <recipe>/<format>/<dtype>/<M>x<N>[/<variant>], or None."""
    m = _NAME.match(name)
    if not m:
        return None
    d = m.groupdict()
    d["shape"] = f"{d['rows']}x{d['cols']}"
    d["variant"] = d["variant"] or ""
    return d


def load_json(path):
    """Google Benchmark JSON; a file cut short by a crash is repaired to its last whole entry."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    # Cut after the last complete benchmark object and close the array and the document.
    for end in (m.end() for m in reversed(list(re.finditer(r"\n    }", text)))):
        try:
            data = json.loads(text[:end] + "\n  ]\n}\n")
            print(f"note: {path} was truncated; using the {len(data.get('benchmarks', []))} "
                  "complete entries", file=sys.stderr)
            return data
        except json.JSONDecodeError:
            continue
    raise SystemExit(f"error: {path} is not Google Benchmark JSON")


def entry_us(e):
    """Median per-call microseconds of one JSON entry (counter `us`, else real_time)."""
    if isinstance(e.get("us"), (int, float)):
        return float(e["us"])
    t = e.get("real_time")
    if t is None:
        return None
    return float(t) * _TO_US.get(e.get("time_unit", "ns"), 1e-3)


def summarize(entries):
    """One record per benchmark: median over repetitions of us, frac_copy, bytes, host_us."""
    groups = {}
    order = []
    for e in entries:
        run = e["_key"]
        if run not in groups:
            groups[run] = {"iteration": [], "median": None, "error": None, "base": e["_base"],
                           "tag": e["_tag"]}
            order.append(run)
        g = groups[run]
        if e.get("error_occurred"):
            g["error"] = e.get("error_message", "error")
        elif e.get("run_type") == "aggregate":
            if e.get("aggregate_name") == "median":
                g["median"] = e
        else:
            g["iteration"].append(e)

    def med(values):
        values = [v for v in values if isinstance(v, (int, float))]
        return statistics.median(values) if values else None

    records = []
    for run in order:
        g = groups[run]
        rec = {"name": run, "fields": parse_name(g["base"]), "error": g["error"], "tag": g["tag"]}
        if g["median"] is not None:
            src = [g["median"]]
        else:
            src = g["iteration"]
        if not src:
            rec.update(us=None, frac=None, gbps=None, host_us=None, reps=0)
            records.append(rec)
            continue
        us = med([entry_us(e) for e in src])
        frac = med([e.get("frac_copy") for e in src])
        min_bytes = med([e.get("min_bytes") for e in src])
        host = med([e.get("host_us") for e in src])
        if min_bytes is not None and us:
            gbps = min_bytes / (us * 1e-6) / 1e9
        else:
            gbps = med([e.get("bytes_per_second") for e in src])
            gbps = gbps / 1e9 if gbps is not None else None
        reps = g["median"].get("repetitions") if g["median"] is not None else len(src)
        rec.update(us=us, frac=frac, gbps=gbps, host_us=host, reps=reps)
        records.append(rec)
    return records


def target_of(fields):
    if not fields or fields["dtype"] != "bf16" or not fields["format"].startswith("e4m3"):
        return None
    return TARGETS.get((fields["recipe"], fields["shape"]))


def verdict(rec, t):
    if t is None:
        return ""
    if rec["error"]:
        return "error"
    if t["kind"] == "frac":
        if rec["frac"] is None:
            return "?"
        return "pass" if rec["frac"] >= t["value"] else "miss"
    if rec["us"] is None:
        return "?"
    return "pass" if rec["us"] <= t["value"] else "miss"


def fmt_target(t):
    if t is None:
        return ""
    return f"≥ {t['value']:.2f}" if t["kind"] == "frac" else f"≤ {t['value']:g} µs"


def fmt_peers(t):
    if t is None or not t["peers"]:
        return ""
    if t["kind"] == "frac":
        return ", ".join(f"{name} {v:.2f}" for name, v in t["peers"])
    return ", ".join(f"{name} {v:g} µs" for name, v in t["peers"])


def f(x, spec):
    return "—" if x is None else format(x, spec)


def markdown(records, contexts, sources):
    out = []
    ctx = contexts[0] if contexts else {}
    device = ctx.get("device", "unknown device")
    arch = ctx.get("device_arch", "")
    copy = ctx.get("copy_GBps")
    date = ctx.get("date", "")
    out.append("## fp8q benchmarks")
    out.append("")
    head = f"Device: {device}" + (f" ({arch})" if arch else "")
    if date:
        head += f", run {date}"
    out.append(head + ".  ")
    if copy:
        method = ctx.get("copy_method", "device-to-device copy")
        out.append(f"Copy bandwidth (same binary, {method}): **{copy} GB/s**.  ")
    out.append("Times are GPU time per call (CUDA events; host launch cost excluded, shown as "
               "host µs), median over repetitions of each repetition's median iteration. GB/s and "
               "frac_copy use the minimum traffic: input read once, FP8 output and scales "
               "written once.  ")
    out.append("Sources: " + ", ".join(os.path.basename(s) for s in sources) + ".")
    out.append("")

    # Targets, judged on the default-tuning rows.
    judged = [r for r in records if target_of(r["fields"]) and not r["fields"]["variant"]]
    if judged:
        out.append("### Targets (issue 4, default tuning)")
        out.append("")
        out.append("| benchmark | measured | target | peers (ANCHORS.md) | result |")
        out.append("|---|---:|---:|---|---|")
        for r in judged:
            t = target_of(r["fields"])
            measured = (f"{f(r['frac'], '.3f')} of copy" if t["kind"] == "frac"
                        else f"{f(r['us'], '.2f')} µs")
            res = verdict(r, t)
            res = {"pass": "**pass**", "miss": "**MISS**"}.get(res, res)
            out.append(f"| `{r['name']}` | {measured} | {fmt_target(t)} | {fmt_peers(t)} | {res} |")
        out.append("")

    out.append("### All benchmarks")
    out.append("")
    out.append("| benchmark | median µs | GB/s | frac_copy | host µs | target | peers | result |")
    out.append("|---|---:|---:|---:|---:|---:|---|---|")
    for r in records:
        t = target_of(r["fields"])
        if r["error"]:
            out.append(f"| `{r['name']}` | error: {r['error']} | | | | {fmt_target(t)} | | error |")
            continue
        out.append(f"| `{r['name']}` | {f(r['us'], '.2f')} | {f(r['gbps'], '.0f')} | "
                   f"{f(r['frac'], '.3f')} | {f(r['host_us'], '.1f')} | {fmt_target(t)} | "
                   f"{fmt_peers(t)} | {verdict(r, t)} |")
    out.append("")

    by_key = {}
    for r in records:
        fl = r["fields"]
        if fl:
            key = (fl["recipe"], fl["format"], fl["dtype"], fl["shape"], r["tag"])
            by_key.setdefault(key, {})[fl["variant"]] = r
    for title, variants in COMPARISONS:
        rows = [(k, v) for k, v in by_key.items() if sum(x in v for x in variants) >= 2]
        if not rows:
            continue
        out.append(f"### {title}")
        out.append("")
        out.append("µs per call (frac_copy); *default* is the library's default tuning.")
        out.append("")
        out.append("| benchmark | default | " + " | ".join(variants) + " |")
        out.append("|---|" + "---:|" * (len(variants) + 1))
        for (recipe, fmt, dtype, shape, tag), v in rows:
            cells = []
            for var in [""] + variants:
                r = v.get(var)
                if r is None:
                    cells.append("")
                elif r["error"]:
                    cells.append("error")
                else:
                    cells.append(f"{f(r['us'], '.1f')} ({f(r['frac'], '.3f')})")
            label = f"{recipe}/{fmt}/{dtype}/{shape}" + (f" [{tag}]" if tag else "")
            out.append(f"| `{label}` | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def chart(records, contexts, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"note: matplotlib is not installed; skipping the chart ({path})", file=sys.stderr)
        return False
    rows = [r for r in records if r["frac"] is not None and not r["error"]]
    if not rows:
        print("note: nothing to chart", file=sys.stderr)
        return False
    ctx = contexts[0] if contexts else {}
    fig_h = max(3.0, 0.34 * len(rows) + 1.6)
    fig, ax = plt.subplots(figsize=(10.5, fig_h))
    ys = list(range(len(rows)))[::-1]
    colors = []
    for r in rows:
        v = verdict(r, target_of(r["fields"]))
        colors.append({"pass": "#2e7d32", "miss": "#c62828"}.get(v, "#607d8b"))
    fracs = [r["frac"] for r in rows]
    ax.barh(ys, fracs, color=colors, height=0.7)
    xmax = max([1.3] + [x * 1.1 for x in fracs])  # room on the right for the legend
    target_drawn = peer_drawn = False
    for y, r in zip(ys, rows):
        t = target_of(r["fields"])
        label = f"{r['frac']:.3f}"
        if r["us"] is not None:
            label += f"  ({r['us']:.1f} µs)"
        ax.text(r["frac"] + 0.01, y, label, va="center", fontsize=7, zorder=5,
                bbox=dict(facecolor="white", alpha=0.7, edgecolor="none", pad=0.5))
        if t is None:
            continue
        if t["kind"] == "frac":
            ax.plot([t["value"]] * 2, [y - 0.45, y + 0.45], color="black", lw=2,
                    label=None if target_drawn else "target")
            target_drawn = True
            for name, v in t["peers"]:
                ax.plot(v, y, marker="x", color="#ff8f00", ms=6, mew=2, ls="none",
                        label=None if peer_drawn else "peers (ANCHORS.md)")
                peer_drawn = True
        else:
            ax.text(xmax * 0.99, y, f"target ≤ {t['value']:g} µs, {fmt_peers(t)}", va="center",
                    ha="right", fontsize=7, style="italic")
    ax.set_yticks(ys)
    ax.set_yticklabels([r["name"] for r in rows], fontsize=7, family="monospace")
    for tick, r in zip(ax.get_yticklabels(), rows):  # default-tuning rows carry the targets
        if r["fields"] and not r["fields"]["variant"]:
            tick.set_fontweight("bold")
    ax.set_xlim(0, xmax)
    ax.axvline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("fraction of device-to-device copy bandwidth (minimum traffic / median time); "
                  "bold: default tuning")
    title = "fp8q quantize, bf16 input"
    if ctx.get("device"):
        title += f" — {ctx['device']}"
    if ctx.get("copy_GBps"):
        title += f", copy {ctx['copy_GBps']} GB/s"
    ax.set_title(title, fontsize=10)
    from matplotlib.patches import Patch
    handles, _ = ax.get_legend_handles_labels()
    handles += [Patch(color="#2e7d32", label="meets target"),
                Patch(color="#c62828", label="misses target"),
                Patch(color="#607d8b", label="no target")]
    ax.legend(handles=handles, loc="lower right", fontsize=7, framealpha=0.9)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return True


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", nargs="+", help="Google Benchmark JSON file(s) from fp8q_bench")
    p.add_argument("--md", help="also write the Markdown report here")
    p.add_argument("--png", help="write a bar chart of frac_copy here")
    args = p.parse_args(argv)

    entries = []
    contexts = []
    seen = set()
    for path in args.json:
        data = load_json(path)
        contexts.append(data.get("context", {}))
        tag = os.path.splitext(os.path.basename(path))[0]
        file_names = set()
        for e in data.get("benchmarks", []):
            e = dict(e)
            run = clean_name(e.get("run_name") or e.get("name", ""))
            e["_base"] = run
            # the same benchmark in an earlier file: keep both, told apart by the file's name
            e["_tag"] = tag if run in seen else ""
            e["_key"] = f"{run} [{tag}]" if run in seen else run
            file_names.add(run)
            entries.append(e)
        seen |= file_names
    records = summarize(entries)
    if not records:
        raise SystemExit("error: no benchmarks in the input")
    md = markdown(records, contexts, args.json)
    print(md)
    if args.md:
        with open(args.md, "w", encoding="utf-8") as fh:
            fh.write(md + "\n")
    if args.png:
        chart(records, contexts, args.png)  # a missing chart is no error: the Markdown has it all
    if any(r["error"] for r in records):
        print("note: some benchmarks failed (see the error rows)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
