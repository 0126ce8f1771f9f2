#!/usr/bin/env python3
"""Raw inputs end to end: decode, compare with the official decoder, export ui_output, read it back.

For every capture folder (../shared/captures/*/*) and tinygrad profile (../shared/tinygrad_profiles) or
the paths given, per dispatch:
  * decode with attdec (sources.raw.decode_dispatch) and take the totals over traced waves: waves,
    waves with instructions, instructions, stall sum, duration sum;
  * compare them with the dispatch summary in oracle.json when the capture has one;
  * write the dispatch as a ui_output folder (report.ui_output) into a temp folder, read it back with
    attdec's own ui_output reader (attdec.open) and check the same totals come back.
Prints one line per dispatch and 'N ok, M differ'. Needs the ISA layer, the decoders and the
ui_output reader (i.e. run it from a tree where they have landed).

Usage: ATTDEC_SHARED=/work/shared PYTHONPATH=. python3 tools/oracles/raw_roundtrip.py [PATH ...]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import attdec
from attdec.errors import AttdecError
from attdec.report.ui_output import write_ui_output
from attdec.sources.raw import decode_dispatch

SHARED = Path(os.environ.get("ATTDEC_SHARED", Path(__file__).resolve().parents[3] / "shared"))


def totals(d) -> dict:
    w_insts = [w.insts for w in d.waves]
    return {
        "waves": len(d.waves),
        "waves_with_instructions": sum(1 for a in w_insts if len(a)),
        "instructions": sum(len(a) for a in w_insts),
        "stall_sum": sum(int(a["stall"].sum()) for a in w_insts),
        "duration_sum": sum(int(a["duration"].sum()) for a in w_insts),
        "instructions_without_pc": sum(int((a["pc"] == 0).sum()) for a in w_insts),
    }


def oracle_summary(path: Path, name: str) -> dict | None:
    f = path / "oracle.json"
    if not path.is_dir() or not f.exists():
        return None
    for od in json.loads(f.read_text())["dispatches"]:
        tag = od.get("exec_tag")
        if (f"{od['kernel']}#{tag}" if tag is not None else od["kernel"]) == name:
            return alone_summary(od)
    return None


def alone_summary(od: dict) -> dict:
    """The oracle summary with each SE blob decoded alone (as attdec and rocprofiler-sdk do): the oracle
    sums the combined decode and lists, per wave, where the alone decode differs."""
    s = dict(od["summary"])
    for diff in (od.get("per_se_decode") or {}).get("differences", []):
        a, c = diff.get("alone"), diff.get("combined")
        if a and c:
            s["instructions"] += a["n_instructions"] - c["n_instructions"]
            for key, col in (("stall_sum", 4), ("duration_sum", 3)):
                if isinstance(a["instructions"], list) and isinstance(c["instructions"], list):
                    s[key] += sum(r[col] for r in a["instructions"]) - sum(r[col] for r in c["instructions"])
    return s


def readback(folder: Path) -> dict:

    (d,) = attdec.open([folder])
    t = totals(d)
    t["waves"] = None  # waves without a file are not in a ui_output folder
    t["code_stall"] = sum(c.stall for c in d.code)
    return t


def main(argv: list[str]) -> int:
    inputs = [Path(p) for p in argv] or (
        sorted(p.parent for p in (SHARED / "captures").glob("*/*/capture.json"))
        + sorted((SHARED / "tinygrad_profiles").glob("*/*.pkl"))
    )
    ok = bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, path in enumerate(inputs):
            try:
                raws = attdec.open_raw([path])
            except AttdecError as e:
                print(f"{path}: ERROR {e}")
                bad += 1
                continue
            for i, raw in enumerate(raws):
                label = f"{path.relative_to(SHARED) if path.is_relative_to(SHARED) else path} {raw.name}"
                t0 = time.time()
                try:
                    d = decode_dispatch(raw)
                except AttdecError as e:
                    print(f"{label}: ERROR {e}")
                    bad += 1
                    continue
                dt = time.time() - t0
                mine = totals(d)
                code_stall = sum(c.stall for c in d.code)
                notes = []
                orc = oracle_summary(path, raw.name)
                if orc is not None:
                    for k, v in mine.items():
                        if k != "waves" and orc.get(k) != v:  # waves without a wave file are dropped
                            notes.append(f"{k} {v} != oracle {orc.get(k)}")
                folder = write_ui_output(d, Path(tmp) / str(n), f"ui_output_agent_0_dispatch_{i + 1}")
                back = readback(folder)
                for k in ("waves_with_instructions", "instructions", "stall_sum", "duration_sum"):  # pc not in files
                    if back[k] != mine[k]:
                        notes.append(f"read back {k} {back[k]} != {mine[k]}")
                if back["code_stall"] != code_stall:
                    notes.append(f"read back code stall {back['code_stall']} != {code_stall}")
                status = "ok" if not notes else "DIFF " + "; ".join(notes)
                ok += not notes
                bad += bool(notes)
                print(
                    f"{label}: {d.arch} waves {mine['waves']} traced {mine['waves_with_instructions']} "
                    f"insts {mine['instructions']} stall {mine['stall_sum']} (listing {code_stall}) "
                    f"{'oracle ' if orc else ''}{dt:.2f}s {status}"
                )
    print(f"{ok} ok, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
