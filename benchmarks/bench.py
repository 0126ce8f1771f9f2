#!/usr/bin/env python3
"""Speed and memory of attdec on the project's real data (not part of the test suite).

Each case runs in a fresh Python process, five times; it prints wall time (median, min, max), CPU
(process) time (median, min), MB/s and records/s (from the median wall time) and that process's peak
RSS, with the load average (the machines are shared: wall time under load is inflated), next to the
reference figures the issues give:

  decode gfx1200/gemm_gfx1200_run0   AMD's C++ decoder 1.31 s, tinygrad's Python token decoder 3.6 s
                                     (tokens only, 1.1 MB/s); target <= 1.3 s and <= 300 MB peak
  decode one gfx950 and one gfx1100 capture
  hotspots on the largest ui_output sample (moe_reduce, 4,112 wave files, a .tar.xz)
  disasm of the largest code object in the captures

    python3 benchmarks/bench.py [--runs 5] [--only decode-gfx1200 ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("ATTDEC_SHARED", os.path.join(ROOT, "..", "shared"))
CAPTURES = os.path.join(SHARED, "captures")

# Each case is a snippet run in a child process: `setup` once (imports, reading files), then `run` timed;
# `run` returns (bytes processed, records produced).
DECODE = """
import json, os
from attdec.sources.explicit import codemap
from attdec.decoders import decode_blob
cap_dir = {cap_dir!r}
cap = json.load(open(os.path.join(cap_dir, "capture.json")))
jobs = []
for d in cap["dispatches"]:
    codes = [os.path.join(cap_dir, k["code_object"]) + "@" + k["base_hex"] for k in cap["kernels"]
             if k["name"] == d["kernel"]]
    blobs = [(b, open(os.path.join(cap_dir, b), "rb").read()) for b in d["blobs"]]
    jobs.append((codes, blobs))
arch = cap["gfx_arch"]
def run():
    nbytes = nrec = 0
    for codes, blobs in jobs:
        code = codemap(codes, arch)
        for name, data in blobs:
            se = int(name.rsplit("_se", 1)[1].split(".")[0])
            r = decode_blob(data, arch, code, se, where=name)
            nbytes += len(data)
            nrec += sum(len(w.insts) for w in r.waves) + len(r.occupancy)
    return nbytes, nrec
"""

HOTSPOTS = """
import attdec
from attdec.analysis.hotspots import hotspots
path = {path!r}
import os
def run():
    ds = attdec.open([path])
    nrec = 0
    for d in ds:
        hotspots([d])
        nrec += sum(len(w.insts) for w in d.waves)
    return os.path.getsize(path), nrec
"""

DISASM = """
import json, os
from attdec.isa import disassemble, load_code_object
path = {path!r}
co = load_code_object(open(path, "rb").read())
# tinygrad's minimal containers carry no target: take it from the capture
arch = co.arch or json.load(open(os.path.join(os.path.dirname(path), "capture.json")))["gfx_arch"]
def run():
    return len(co.text), len(disassemble(co.text, arch, co.text_vaddr))
"""

CHILD = """
import resource, sys, time, json
sys.path.insert(0, {root!r})
{setup}
times, cpu = [], []
for _ in range({runs}):
    t0, c0 = time.perf_counter(), time.process_time()
    nbytes, nrec = run()
    times.append(time.perf_counter() - t0); cpu.append(time.process_time() - c0)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"times": times, "cpu": cpu, "bytes": nbytes, "records": nrec, "peak_rss_mb": rss}}))
"""


def largest(paths):
    return max(paths, key=os.path.getsize) if paths else None


def cases():
    cap = lambda *p: os.path.join(CAPTURES, *p)
    out = {
        "decode-gfx1200": (
            DECODE.format(cap_dir=cap("gfx1200", "gemm_gfx1200_run0")),
            "AMD C++ 1.31 s; tinygrad tokens-only 3.6 s (1.1 MB/s); target <= 1.3 s, <= 300 MB",
        ),
        "decode-gfx950": (DECODE.format(cap_dir=cap("gfx950", "gemm_run0")), ""),
        "decode-gfx1100": (DECODE.format(cap_dir=cap("gfx1100", "gemm_run0")), ""),
    }
    tars = []
    for dirpath, _, files in os.walk(os.path.join(SHARED, "ui_output_samples")):
        tars += [os.path.join(dirpath, f) for f in files if f.endswith((".tar.xz", ".tar.gz"))]
    if tars:
        out["hotspots-moe_reduce"] = (HOTSPOTS.format(path=largest(tars)), "")
    cos = []
    for dirpath, _, files in os.walk(CAPTURES):
        cos += [os.path.join(dirpath, f) for f in files if f.endswith(".co")]
    if cos:
        out["disasm-largest"] = (DISASM.format(path=largest(cos)), "")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", nargs="*", help="case names to run")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    if not os.path.isdir(CAPTURES):
        sys.exit(f"no captures at {CAPTURES} (set ATTDEC_SHARED)")
    results = {}
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; wall seconds, CPU = process time")
    print(
        f"{'case':22} {'median s':>9} {'min':>7} {'max':>7} {'CPU med':>8} {'CPU min':>8} {'MB/s':>7} "
        f"{'records/s':>11} {'peak MB':>8}  reference"
    )
    for name, (setup, ref) in cases().items():
        if a.only and name not in a.only:
            continue
        code = CHILD.format(root=ROOT, setup=textwrap.dedent(setup), runs=a.runs)
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if p.returncode:
            print(f"{name:22} failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        med = statistics.median(r["times"])
        r.update(
            median=med,
            min=min(r["times"]),
            max=max(r["times"]),
            cpu_median=statistics.median(r["cpu"]),
            cpu_min=min(r["cpu"]),
            load=os.getloadavg()[0],
        )
        results[name] = r
        print(
            f"{name:22} {med:9.3f} {r['min']:7.3f} {r['max']:7.3f} {r['cpu_median']:8.3f} {r['cpu_min']:8.3f} "
            f"{r['bytes'] / med / 1e6:7.2f} "
            f"{r['records'] / med:11,.0f} {r['peak_rss_mb']:8.0f}  {ref}"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
