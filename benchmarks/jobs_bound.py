#!/usr/bin/env python3
"""What bounds `attdec decode CAPTURES --jobs 2` against `--jobs 1` (issue 12, target 7: at least 1.7x on two
idle cores), measured: the whole command, and inside it the part that --jobs can split.

    python3 benchmarks/jobs_bound.py                  # 9 rounds on ../shared/captures (or $ATTDEC_SHARED)
    python3 benchmarks/jobs_bound.py --runs 5 --root /path/to/other/checkout

Each round runs these fresh processes in turn, each started once both cores have been idle for 0.5 s:
`python -c pass` (the interpreter and site's hooks); the imports decoding needs (numpy, the decoders, the ISA
layer: what --jobs imports before it forks); `python -m attdec decode CAPTURES --jobs 1` and `--jobs 2` (text
summary, to a pipe); and a process that reads the captures and times only decoding them, with jobs=1 and
jobs=2 (as the command does: the summary's reduction included, the workers forked inside the timed part).

From the medians: the serial part S = whole(jobs 1) - decode(jobs 1), which both commands pay; the best
ratio S allows, were the decode split exactly in two, (S + W1) / (S + W1 / 2); and the S at which the decode
split actually measured (W1 / W2) would give 1.7x: (W1 - 1.7 W2) / 0.7. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench import CAPTURES, ROOT, cache_bytecode  # (this folder is first on sys.path when a script here runs)

TARGET = 1.7

IMPORTS = "from attdec.sources.parallel import _preload; _preload()"
DECODE = """
import sys, time
from attdec import api
from attdec.commands.common import tune_allocator
from attdec.model.options import DecodeOptions
from attdec.report.records import summarize
from attdec.sources.parallel import _preload
_preload()
raws = api.open_blobs([{captures!r}])
tune_allocator(raws)
t = time.perf_counter()
for blobs in api.decode_raw_blobs(raws, DecodeOptions(jobs={jobs}), summarize):
    for _ in blobs:
        pass
print(time.perf_counter() - t)
"""


def idle_share(dt: float = 0.5) -> float:
    """The idle share of the busier core over the next `dt` seconds (1.0 where /proc/stat is missing)."""

    def sample():
        with open("/proc/stat") as f:
            rows = [ln.split() for ln in f if ln.startswith("cpu") and ln[3].isdigit()]
        return [(int(r[4]) + int(r[5]), sum(map(int, r[1:]))) for r in rows]

    try:
        a = sample()
        time.sleep(dt)
        b = sample()
    except OSError:
        return 1.0
    return min((bi[0] - ai[0]) / max(1, bi[1] - ai[1]) for ai, bi in zip(a, b))


def wait_idle(limit: float = 300) -> None:
    start = time.monotonic()
    while idle_share() < 0.9:
        if time.monotonic() - start > limit:
            raise SystemExit(f"jobs_bound: the cores were never idle for {limit:.0f} s")


def wall(cmd: list[str], env: dict) -> tuple[float, str]:
    """Wall time of a fresh process and its last line of output (stdout read from a pipe)."""
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=env["PYTHONPATH"], env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode not in (0, 3):  # 3: decoded, with warnings (the captures have some)
        raise SystemExit(f"jobs_bound: {' '.join(cmd[:4])}... failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return dt, (p.stdout.strip().splitlines() or [""])[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("captures", nargs="?", default=CAPTURES)
    ap.add_argument("--runs", type=int, default=9, help="rounds (default 9)")
    ap.add_argument("--root", default=ROOT, help="the attdec tree to measure (default: this one)")
    ap.add_argument("--json", help="also write the samples and figures here")
    a = ap.parse_args()
    if not os.path.isdir(a.captures):
        raise SystemExit(f"jobs_bound: no captures at {a.captures}")
    cache_bytecode(tempfile.mkdtemp(prefix="attdec-jobs-"))  # as bench.py: compiled once, not in every process
    env = dict(os.environ, PYTHONPATH=os.path.abspath(a.root))
    py = sys.executable
    cases = {
        "interpreter": [py, "-c", "pass"],
        "imports": [py, "-c", IMPORTS],
        "whole jobs1": [py, "-m", "attdec", "decode", a.captures, "--jobs", "1"],
        "whole jobs2": [py, "-m", "attdec", "decode", a.captures, "--jobs", "2"],
        "decode jobs1": [py, "-c", DECODE.format(captures=a.captures, jobs=1)],
        "decode jobs2": [py, "-c", DECODE.format(captures=a.captures, jobs=2)],
    }
    for cmd in cases.values():  # untimed: bytecode caches, page cache
        wall(cmd, env)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    load0 = os.getloadavg()
    for r in range(a.runs):
        for name, cmd in cases.items():
            wait_idle()
            dt, last = wall(cmd, env)
            samples[name].append(float(last) if name.startswith("decode") else dt)
        print(f"round {r + 1}/{a.runs}", file=sys.stderr)
    med = {name: statistics.median(v) for name, v in samples.items()}
    for name, v in samples.items():
        print(f"{name:13} median {med[name]:.3f} s  (min {min(v):.3f}, max {max(v):.3f})")
    w1, w2 = med["decode jobs1"], med["decode jobs2"]
    s = med["whole jobs1"] - w1
    fig = {
        "whole ratio": med["whole jobs1"] / med["whole jobs2"],
        "decode ratio": w1 / w2,
        "serial S": s,
        "best ratio at this S (decode halved exactly)": (s + w1) / (s + w1 / 2),
        "S that the measured decode split needs for 1.7x": (w1 - TARGET * w2) / (TARGET - 1),
    }
    for what, value in fig.items():
        print(f"{what}: {value:.3f}")
    print(f"load average {load0[0]:.2f} -> {os.getloadavg()[0]:.2f}; {a.runs} rounds, each case started on idle cores")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"samples": samples, "medians": med, "figures": fig}, f, indent=1)


if __name__ == "__main__":
    main()
