#!/usr/bin/env python3
"""Disassembly speed: 100 KB of .text per family, built by repeating real capture code.

    ATTDEC_SHARED=/work/shared PYTHONPATH=. python3 benchmarks/bench_disasm.py [--kb 100] [--repeat 5]

Prints, per target, the median wall time of `disassemble()` over --repeat runs (each on a fresh
table cache is not needed: tables load once per process, which the first `load` line shows).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from attdec.isa import disassemble, load_code_object  # noqa: E402
from attdec.isa.decoder import table_for  # noqa: E402

SOURCES = {  # a real code object per family (the largest capture ones) and its target
    "gfx950": "captures/gfx950/gemm_run0/r_32_32_16_2.co",
    "gfx1100": "captures/gfx1100/ops_run0/discover_ops.co",
    "gfx1201": "captures/gfx1200/ops_run0/discover_ops.co",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kb", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    shared = Path(os.environ.get("ATTDEC_SHARED", ROOT.parent / "shared"))
    for arch, rel in SOURCES.items():
        path = shared / rel
        if not path.exists():
            print(f"{arch}: {path} missing, skipped")
            continue
        t0 = time.perf_counter()
        table_for(arch)
        load = time.perf_counter() - t0
        co = load_code_object(path.read_bytes(), str(path), arch=arch)
        text = (co.text * (args.kb * 1024 // len(co.text) + 1))[: args.kb * 1024]
        times, n = [], 0
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            n = len(disassemble(text, arch, 0x1000))
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        print(
            f"{arch}: {len(text) // 1024} KB .text, {n} instructions: median {med * 1000:.0f} ms "
            f"(min {min(times) * 1000:.0f} ms, {n / med / 1e3:.0f}k instr/s); table load {load * 1000:.0f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
