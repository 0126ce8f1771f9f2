#!/usr/bin/env python3
"""Damage .rgp files (truncations, bit flips) and check that attdec never gives a traceback: every damaged
file is read, its dispatches decoded and `hotspots` run in-process; the outcome must be a result (maybe
with problem notes) or one attdec error. Prints a tally and every unexpected exception.

    python3 tools/fuzzers/fuzz_rgp.py ../shared/rgp --cuts 6 --flips 6 --seed 1 [--no-decode]
"""

from __future__ import annotations

import argparse
import random
import sys
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from attdec.errors import AttdecError
from attdec.sources import rgp
from attdec.sources.raw import decode_dispatch
from attdec.sources.rgp.container import read_rgp


def damaged(data: bytes, rng: random.Random, cuts: int, flips: int):
    """(what, bytes) variants: truncations at random points (and just after the header), single bit flips."""
    n = len(data)
    for k in [56, *sorted(rng.randrange(1, n) for _ in range(cuts))]:
        yield f"cut at {k}", data[:k]
    for _ in range(flips):
        at = rng.randrange(n)
        b = bytearray(data)
        b[at] ^= 1 << rng.randrange(8)
        yield f"bit flip at byte {at}", bytes(b)


def check(path: Path, data: bytes, decode: bool) -> str:
    from attdec.analysis.hotspots import hotspots

    try:
        raws = rgp.build(read_rgp(data, str(path)))
    except AttdecError:
        return "refused (one error line)"
    if not decode:
        return "read"
    decoded = 0
    for raw in raws:
        try:
            d = decode_dispatch(raw)
        except AttdecError:
            continue
        hotspots([d])
        decoded += 1
    return "decoded" if decoded == len(raws) else ("partly decoded" if decoded else "no dispatch decoded")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--cuts", type=int, default=6)
    ap.add_argument("--flips", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-decode", action="store_true", help="only read the container and build dispatches")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    tally, crashes = Counter(), 0
    files = sorted(a.root.rglob("*.rgp")) if a.root.is_dir() else [a.root]
    for f in files:
        for what, data in damaged(f.read_bytes(), rng, a.cuts, a.flips):
            try:
                tally[check(f, data, not a.no_decode)] += 1
            except Exception:
                crashes += 1
                print(f"TRACEBACK {f} {what}:\n{traceback.format_exc()}")
    print(f"{len(files)} files, {sum(tally.values()) + crashes} damaged variants: {dict(tally)}, tracebacks {crashes}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
