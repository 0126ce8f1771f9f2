#!/usr/bin/env python3
"""Measure the run-to-run noise of the real repeated captures in ../shared (the figures in docs/diff.md).

Every `<example>_run0` / `_run1` pair under ../shared/captures/<arch>/ (raw captures, decoded on the fly)
and the two big pa_mqa_logits_fp4 dispatches of the ui_output samples (234 and 236: the same kernel and
workload captured twice) go through `attdec.analysis.compare.noise`. Printed as markdown: per kernel the
total cycles of each run, median, MAD and MAD %, the smallest change `attdec diff` would call significant
against such runs, and the top lines (instructions here: none of these has line info) with their spread.

With --rule it instead measures the significance rule itself on simulated tables (16 rows, normal noise
of sigma 100 cycles, one row shifted by 3 or 5 sigma; the real `attdec.analysis.stats.judge_rows`
decides): how often an unchanged row is marked significant (false alarm) and how often the shifted row
is, by number of runs per side.

    python3 tools/figures/noise_report.py [--shared ../shared] [--top 3] [--rule]
"""

from __future__ import annotations

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np

from attdec.analysis.compare import noise
from attdec.analysis.stats import judge_rows
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


def rule(tables: int = 500, rows: int = 16, sigma: float = 100.0) -> None:
    rng = np.random.default_rng(1)
    print("| runs per side | false alarms (unchanged rows) | detected: 3 sigma shift | detected: 5 sigma shift |")
    print("|---:|---:|---:|---:|")
    for n in (2, 3, 5, 10):
        false = {3: 0, 5: 0}
        found = {3: 0, 5: 0}
        for _ in range(tables):
            before = [np.round(rng.normal(10000, sigma, n)) for _ in range(rows)]
            after = [np.round(rng.normal(10000, sigma, n)) for _ in range(rows)]
            for shift in found:
                moved = [a + (shift * sigma if i == 0 else 0) for i, a in enumerate(after)]
                marks = [bool(t.significant) for t in judge_rows(before, moved)]
                found[shift] += marks[0]
                false[shift] += sum(marks[1:])
        alarms = sum(false.values()) / (2 * tables * (rows - 1))
        print(f"| {n} | {100 * alarms:.2f}% | " + " | ".join(f"{100 * found[s] / tables:.1f}%" for s in (3, 5)) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--shared", default=os.path.join(here, "..", "..", "..", "shared"))
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
