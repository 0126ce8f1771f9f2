#!/usr/bin/env python3
"""Measure the run-to-run noise of the real repeated captures in ../shared (the figures in docs/diff.md).

Every `<example>_run0` / `_run1` pair under ../shared/captures/<arch>/ (raw captures, decoded on the fly)
and the two big pa_mqa_logits_fp4 dispatches of the ui_output samples (234 and 236: the same kernel and
workload captured twice) go through `attdec.analysis.compare.noise`. Printed as markdown: per kernel the
total cycles of each run, median, MAD and MAD %, the smallest change `attdec diff` would call significant
against such runs, and the top lines (instructions here: none of these has line info) with their spread.

With --rule it instead measures the significance rule itself on simulated runs (normal noise, sigma
100 cycles; the real `attdec.analysis.compare.significant` decides): how often an unchanged row is
marked significant (false alarm) and how often a real shift of 3 or 5 sigma is, by number of runs per side.

    python3 tools/noise_report.py [--shared ../shared] [--top 3] [--rule]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from attdec.analysis.compare import Spread, noise, significant
from attdec.report.common import human
from attdec.report.compare import floor
from attdec.sources.pipeline import open_dispatches

PA = "ui_output_samples/jhinpan__flydsl-kernel-profiling/examples/pa_mqa_logits_fp4/att_viewer/big"


def pairs(shared: str) -> list[tuple[str, list[str]]]:
    """(label, [run paths]) for every example captured at least twice."""
    out = []
    root = os.path.join(shared, "captures")
    for arch in sorted(os.listdir(root)):
        folder = os.path.join(root, arch)
        if not os.path.isdir(folder):
            continue
        groups: dict[str, list[str]] = {}
        for name in sorted(os.listdir(folder)):
            m = re.fullmatch(r"(.+)_run\d+", name)
            if m:
                groups.setdefault(m.group(1), []).append(os.path.join(folder, name))
        out += [(f"{arch}/{ex}", runs) for ex, runs in groups.items() if len(runs) > 1]
    pa = os.path.join(shared, PA)
    if os.path.isdir(pa):
        out.append(("pa_mqa_logits_fp4 big (dispatch 234, 236)", [pa]))
    return out


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def rule(trials: int = 20000, sigma: float = 100.0) -> None:
    rng = random.Random(1)
    print("| runs per side | false alarms (no change) | detected: 3 sigma shift | detected: 5 sigma shift |")
    print("|---:|---:|---:|---:|")
    for n in (2, 3, 5, 10):
        hits = {0: 0, 3: 0, 5: 0}
        for _ in range(trials):
            before = Spread.of(round(rng.gauss(10000, sigma)) for _ in range(n))
            noise_after = [rng.gauss(10000, sigma) for _ in range(n)]
            for shift in hits:
                after = Spread.of(round(v + shift * sigma) for v in noise_after)
                hits[shift] += bool(significant(before, after))
        print(f"| {n} | " + " | ".join(f"{100 * hits[s] / trials:.1f}%" for s in (0, 3, 5)) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared"))
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--rule", action="store_true", help="simulate the significance rule instead")
    a = ap.parse_args()
    if a.rule:
        rule()
        return
    print("| capture | kernel | waves | total cycles per run | median | MAD | MAD % | diff floor | top lines |")
    print("|---|---|---|---|---:|---:|---:|---:|---|")
    idle, rel = [], []
    for label, paths in pairs(a.shared):
        for kn in noise(open_dispatches(paths), by="instruction"):
            s = kn.total.values["cycles"]
            if len(s.values) < 2 or not s.hi:
                idle.append(f"{label} {kn.kernel}")
                continue
            fl = floor(s)
            rel.append((s.relative, f"{label} {kn.kernel}"))
            tops = "; ".join(
                f"`{r.key.split(' ')[0]}`@0x{r.extra['vaddr']:x} {human(r.values['cycles'].median)} "
                f"{pct(r.values['cycles'].relative)}"
                for r in kn.rows[: a.top]
            )
            print(
                f"| {label} | {kn.kernel} | {'/'.join(map(str, kn.runs.waves))} | "
                f"{' / '.join(map(str, s.values))} | {s.median:g} | {s.mad:g} | {pct(s.relative)} | "
                f"±{fl:g} ({pct(fl / s.median)}) | {tops} |"
            )
    if rel:
        rel.sort()
        print(
            f"\n{len(rel)} kernels; MAD of total cycles: median {pct(rel[len(rel) // 2][0])}, "
            f"{sum(r > 0.005 for r, _ in rel)} above 0.5%, largest {pct(rel[-1][0])} ({rel[-1][1]})"
        )
    if idle:
        print(f"\nfewer than two runs with traced instructions (nothing to measure): {', '.join(idle)}")


if __name__ == "__main__":
    main()
