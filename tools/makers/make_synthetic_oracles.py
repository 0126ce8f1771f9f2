#!/usr/bin/env python3
"""Write tests/fixtures/oracles/*.json: what AMD's decoder library reports for the synthetic capture folders
(tests/fixtures/captures/gfx1100/synth_run*, attdec/data/demo_raw), in the layout of ../shared's oracle.json
(the fields the suite reads), so the tests that compare attdec with AMD's decoder run in a bare clone too.

Each SE blob is decoded alone, without a code object (no ISA answers: pcs are 0), by
tools/oracles/amd_reference.py in a child process. Only the library's output is written; the library stays
outside the repository. Category names are read from the library's own header (trace_decoder_types.h).

    python3 tools/makers/make_synthetic_oracles.py [--decoder /tmp/amd-0.1.6]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFERENCE = os.path.join(ROOT, "tools", "oracles", "amd_reference.py")
OUT = os.path.join(ROOT, "tests", "fixtures", "oracles")
CAPTURES = {  # oracle file -> capture folder
    "gfx1100-synth_run0.json": "tests/fixtures/captures/gfx1100/synth_run0",
    "gfx1100-synth_run1.json": "tests/fixtures/captures/gfx1100/synth_run1",
    "gfx942-demo_raw.json": "attdec/data/demo_raw",
}
HEADER = "include/trace_decoder_types.h"


def category_names(decoder: str) -> list[str]:
    """The instruction categories in the order of the library's enum (NONE, SMEM, ...)."""
    text = open(os.path.join(decoder, HEADER)).read()
    body = text[text.index("enum rocprofiler_thread_trace_decoder_inst_category_t") :]
    body = body[: body.index("}")]
    names = re.findall(r"ROCPROFILER_THREAD_TRACE_DECODER_INST_(\w+)", body)
    return [n for n in names if n != "LAST"]


def se_of(blob: str) -> int:
    return int(re.search(r"se(\d+)", blob).group(1))


def reference(decoder: str, path: str) -> dict:
    p = subprocess.run(
        [sys.executable, REFERENCE, "--decoder", decoder, "--no-code", path], capture_output=True, check=True
    )
    return json.loads(p.stdout)


def dispatch(decoder: str, folder: str, disp: dict, names: list[str]) -> dict:
    """One dispatch's records, each blob decoded alone, tagged with its SE (oracle.json's columns)."""
    out: dict = {"kernel": disp["kernel"], "exec_tag": disp["exec_tag"], "blobs": disp["blobs"], "status": []}
    for key in ("waves", "occupancy", "realtime", "inst_other_simd", "info"):
        out[key] = []
    for blob in disp["blobs"]:
        se = se_of(blob)
        r = reference(decoder, os.path.join(ROOT, folder, blob))
        out["status"].append(r["status"])
        out["info"] += r["info"]
        for cu, simd, slot, begin, end, contexts, states, rows in r["waves"]:
            out["waves"].append(
                {
                    "se": se,
                    "cu": cu,
                    "simd": simd,
                    "wave_id": slot,
                    "begin_time": begin,
                    "end_time": end,
                    "contexts": contexts,
                    "timeline": states,
                    "instructions": [[pc, None, t, dur, stall, names[cat]] for pc, _co, t, dur, stall, cat in rows],
                }
            )
        occupancy = r["occupancy"]
        out["occupancy"] += [[se, cu, simd, slot, start, t, pc, None] for cu, simd, slot, start, t, pc, _ in occupancy]
        out["realtime"] += [[se, shader, real] for shader, real in r["realtime"]]
        out["inst_other_simd"] += [[se, t, cyc, wgp, names[cat]] for t, cyc, wgp, cat in r["other_simd"]]
    rows = [row for w in out["waves"] for row in w["instructions"]]
    out["summary"] = {  # the totals oracle.json's summary gives
        "instructions": len(rows),
        "stall_sum": sum(row[4] for row in rows),
        "waves_with_instructions": sum(1 for w in out["waves"] if w["instructions"]),
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--decoder", default=os.environ.get("ATTDEC_AMD_DECODER", "/tmp/amd-0.1.6"))
    a = ap.parse_args()
    names = category_names(a.decoder)
    os.makedirs(OUT, exist_ok=True)
    for name, folder in CAPTURES.items():
        cap = json.load(open(os.path.join(ROOT, folder, "capture.json")))
        doc = {
            "capture": folder,
            "decoder": {"library": os.path.basename(os.path.abspath(a.decoder)), "per_se_decode": True},
            "gfx_arch": cap["gfx_arch"],
            "fields": {
                "instructions": ["pc", "pc_offset", "time", "duration", "stall", "category"],
                "occupancy": ["se", "cu", "simd", "wave_id", "start", "time", "pc", "pc_offset"],
                "realtime": ["se", "shader_clock", "realtime_clock"],
                "inst_other_simd": ["se", "time", "cycles", "wgp", "category"],
                "timeline": ["wave_state_type", "duration"],
            },
            "dispatches": [dispatch(a.decoder, folder, d, names) for d in cap["dispatches"]],
        }
        with open(os.path.join(OUT, name), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        waves = sum(len(d["waves"]) for d in doc["dispatches"])
        print(f"wrote {os.path.relpath(os.path.join(OUT, name), ROOT)}: {waves} waves")


if __name__ == "__main__":
    main()
