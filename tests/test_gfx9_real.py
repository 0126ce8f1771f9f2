"""gfx9 decoder against AMD's decoder (oracle.json) on the real gfx950 captures, and on the synthetic gfx942 demo
capture (its oracle written by AMD's library, tests/fixtures/oracles), straight through gfx9.decode.

Compares every wave's begin/end, every instruction row's time, duration, stall and category, and every occupancy
row. (The pc column needs the PC walk and the disassembler; conformance.py checks it through `attdec decode`.)
"""

from __future__ import annotations

import collections
import json
import re

import pytest

from attdec.decoders import gfx9
from attdec.decoders.common import CodeMap
from attdec.model import Category
from attdec.model.target import target
from tests.conftest import SYNTHETIC_CAPTURES, oracle_captures

CAPTURES = ["empty_run0", "empty_run1", "gemm_run0", "gemm_run1", "plus_run0", "plus_run1"]


def decode_capture(cdir, disp, arch):
    waves, occ, problems = [], [], []
    for b in disp["blobs"]:
        se = int(re.search(r"se(\d+)", b).group(1))
        r = gfx9.decode((cdir / b).read_bytes(), target(arch), CodeMap(), se, where=b)
        waves += r.waves
        occ += [tuple(int(x) for x in o)[:6] for o in r.occupancy]
        problems += r.problems
    return waves, occ, problems


@pytest.mark.parametrize(
    "cdir,oracle_file",
    oracle_captures(*(f"gfx950/{c}" for c in CAPTURES), synthetic=(SYNTHETIC_CAPTURES["gfx942"],)),
)
def test_gfx9_capture_matches_oracle_without_pc(cdir, oracle_file):
    cap = json.loads((cdir / "capture.json").read_text())
    oracle = json.loads(oracle_file.read_text()) if oracle_file.exists() else None
    for disp in cap["dispatches"]:
        waves, occ, problems = decode_capture(cdir, disp, cap["gfx_arch"])
        assert problems == []
        assert occ, "every capture has wave starts"
        if oracle is None:
            continue
        exp = next(
            d for d in oracle["dispatches"] if d["kernel"] == disp["kernel"] and d["exec_tag"] == disp["exec_tag"]
        )
        got = {(w.se, w.cu, w.simd, w.slot, w.begin): w for w in waves}
        assert set(got) == {(w["se"], w["cu"], w["simd"], w["wave_id"], w["begin_time"]) for w in exp["waves"]}
        for ew in exp["waves"]:
            g = got[(ew["se"], ew["cu"], ew["simd"], ew["wave_id"], ew["begin_time"])]
            assert g.end == ew["end_time"]
            assert [
                [int(r["time"]), int(r["duration"]), int(r["stall"]), Category(r["category"]).name] for r in g.insts
            ] == [r[2:6] for r in ew["instructions"]]
            assert [list(t) for t in g.timeline] == ew["timeline"]
        assert collections.Counter(occ) == collections.Counter(tuple(o[:6]) for o in exp["occupancy"])
