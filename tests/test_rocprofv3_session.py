"""rocprofv3 session folders as they lie on disk: `<host>/<pid>_<agent>_shader_engine_<S>_<D>.att`, the agent
table, and `ui_output_agent_<A>_dispatch_<D>/` (rocprofv3's own decode), often without the code object.

Each dispatch is decoded once from its .att files; without a code object its instructions and source lines
come from the ui_output folder's code.json; without either it is decoded without PCs. The decode must give
what rocprofv3's folder holds: the per-line totals of its code.json and the waves of its wave files."""

from __future__ import annotations

import itertools
import json
import shutil

import numpy as np
import pytest
from conftest import ROOT, invoke, shared_path

import attdec
from attdec.model import Category
from attdec.sources.pipeline import describe
from attdec.sources.raw import KERNARG_PRELOAD_SKIP, PAGE, _placements
from tests.support import uisynth

FIELDS = ("time", "category", "stall", "duration", "line")


def _session():
    return shared_path("rocprofv3_sessions", "skinny_M128_att_hack0")


def _totals(d) -> dict:
    return {(c.codeobj, c.vaddr): (c.hit, c.latency, c.stall, c.idle) for c in d.code if not c.is_label}


def _waves(d) -> dict:
    return {(w.se, w.simd, w.slot, w.seq): w for w in d.waves}


def _same_waves(decoded, folder) -> None:
    got, want = _waves(decoded), _waves(folder)
    assert sorted(got) == sorted(want)
    for k, w in want.items():
        g = got[k]
        assert (g.begin, g.end, g.cu) == (w.begin, w.end, w.cu), k
        assert len(g.insts) == len(w.insts), k
        assert all(np.array_equal(g.insts[f], w.insts[f]) for f in FIELDS), k
        assert [tuple(r) for r in g.timeline] == [tuple(r) for r in w.timeline], k


def test_real_session_is_decoded_once_with_code_json_as_its_isa():
    s = _session()
    (d,) = attdec.open(s)
    (ui,) = attdec.open(s, input_format="ui_output")  # rocprofv3's own decode, read as it is
    assert d.name == "dispatch_20" and ui.name == "ui_output_agent_1026_dispatch_20"
    assert d.arch == ui.arch == "gfx950"  # from the agent table, not "gfx9 (chip unknown)"
    assert any("instructions and source lines from" in p and p.endswith("code.json") for p in d.problems)
    # code.json's own columns (this writer's has Hit and Latency only) ...
    cj = json.loads((s / "ui_output_agent_1026_dispatch_20" / "code.json").read_text())["code"]
    listed = {(r[4], r[5]): (r[6], r[7]) for r in cj if not r[0].startswith(";")}
    got = _totals(d)
    assert {k: v[:2] for k, v in got.items()} == listed
    # ... and Stall/Idle as the wave files give them; then the waves themselves, record for record
    assert got == _totals(ui)
    assert [c.source for c in d.code if not c.is_label] == [r[3] for r in cj if not r[0].startswith(";")]
    _same_waves(d, ui)
    assert sum(c.stall for c in d.code) == sum(int(w.insts["stall"].sum()) for w in ui.waves) > 0


def test_real_session_on_the_command_line(tmp_path):
    s = _session()
    for args in ([], ["--compat", "rocm-7.13"], ["--input-format", "ui_output"]):
        r = invoke(["hotspots", "--format", "json", *args, s])
        assert r.exit_code == 0 and r.exception is None, r.output
        doc = json.loads(r.output[r.output.index("{") :])
        assert doc["arch"] == "gfx950" and doc["by"] == "line" and doc["totals"]["stall"] > 0
    r = invoke(["export-ui", s, "-o", tmp_path / "o"])  # raw-only: the dispatch's .att files, decoded
    assert r.exit_code == 0, r.output
    (back,) = attdec.open(tmp_path / "o")
    (d,) = attdec.open(s)
    assert sum(c.stall for c in back.code) == sum(c.stall for c in d.code)


def test_real_session_without_code_json_is_decoded_without_pcs(tmp_path):
    s = _session()
    host = next(p for p in s.iterdir() if p.is_dir() and not p.name.startswith("ui_output"))
    shutil.copytree(host, tmp_path / host.name)
    (bare,) = attdec.open(tmp_path)
    (d,) = attdec.open(s)
    assert bare.target is not None and bare.target.name == "gfx950"
    assert any("decoded without PCs" in p for p in bare.problems)
    (row,) = [c for c in bare.code if not c.is_label]  # every record, in the one row a no-PC decode has
    assert row.is_no_pc and row.hit == sum(len(w.insts) for w in bare.waves) > sum(c.hit for c in d.code) / 2
    assert sorted(_waves(bare)) == sorted(_waves(d))
    # without code, AMD's decoder times an OTHER_MSG only as a wave's last record and leaves earlier ones out
    message = int(Category.MESSAGE)
    assert all(message not in w.insts["category"][:-1] for w in bare.waves)
    assert any(message in w.insts["category"] for w in d.waves)  # with code.json, barrier entries are kept


def test_placement_by_entry_pc_skips_a_kernarg_preload_preamble():
    base = 0x7F00_0000_0000
    assert _placements(base + 0x1700, [(0, 0x1700)]) == [(0, base)]
    # the waves started 256 bytes into the kernel: the firmware preloaded its arguments
    assert _placements(base + 0x1700 + KERNARG_PRELOAD_SKIP, [(0, 0x1700)]) == [(0, base)]
    # an entry that is neither is not placed; an exact fit wins over a preamble
    assert _placements(base + 0x1740, [(0, 0x1700)]) == []
    assert _placements(base + PAGE + 0x100, [(0, 0x100), (1, 0x0)]) == [(0, base + PAGE)]


# --- a synthetic session: the demo's raw capture (tools/makers/make_demo_raw.py, written with
# tests/support/sqtt_encoder.py) laid out as rocprofv3 leaves it, its ui_output folder written by
# tests/support/uisynth.py --------------------------------------------------------------------------------

PID, AGENT, DISP = 4242, 7, 3
DEMO_RAW = ROOT / "attdec" / "data" / "demo_raw"
AGENT_TABLE = '"Node_Id","Agent_Type","Gfx_Target_Version","Name"\n0,"CPU",0,"cpu"\n1,"GPU",90402,"gfx942"\n'


def _synthetic_session(tmp_path, code_json=True, code_object=False, shift=0):
    """The session folder, and the dispatch as the capture folder (with its code object) decodes it."""
    (cap,) = attdec.open(DEMO_RAW)
    session = tmp_path / "session"
    host = session / "gpu-host"
    host.mkdir(parents=True)
    capture = json.loads((DEMO_RAW / "capture.json").read_text())
    for b in capture["blobs"]:
        shutil.copy(DEMO_RAW / b["file"], host / f"{PID}_{AGENT}_shader_engine_{b['se']}_{DISP}.att")
    (host / f"{PID}_agent_info.csv").write_text(AGENT_TABLE)
    if code_object:
        shutil.copy(DEMO_RAW / "kern.co", host / f"{PID}_gfx942_code_object_id_1.out")
    if code_json:
        code = [c for c in cap.code if not c.is_label and not c.is_no_pc]
        sizes = [b.vaddr - a.vaddr for a, b in itertools.pairwise(code)] + [4]
        insts = [uisynth.Inst(c.text, c.source, n) for c, n in zip(code, sizes)]
        rows = uisynth.listing(cap.kernel, insts, codeobj=1, base=code[0].vaddr + shift)
        assert [r[5] - shift for r in rows[1:]] == [c.vaddr for c in code]
        line_of = {c.line: r[2] for c, r in zip(code, rows[1:])}
        waves = [
            uisynth.SynthWave(
                w.se, w.simd, w.slot, w.seq, w.cu, w.begin,
                [[int(x["time"]), int(x["category"]), int(x["stall"]), int(x["duration"]), line_of[int(x["line"])]]
                 for x in w.insts],
                [list(r) for r in w.timeline], w.end,
            )
            for w in cap.waves
        ]  # fmt: skip
        uisynth.write_dispatch(session / f"ui_output_agent_{AGENT}_dispatch_{DISP}", cap.kernel, rows, waves)
    return session, cap


def test_synthetic_session_decodes_to_its_code_json_and_wave_files(tmp_path):
    session, cap = _synthetic_session(tmp_path)
    (d,) = attdec.open(session)
    (ui,) = attdec.open(session, input_format="ui_output")
    assert d.name == f"dispatch_{DISP}" and d.arch == ui.arch == "gfx942"
    cj_name = f"ui_output_agent_{AGENT}_dispatch_{DISP}/code.json"
    cj = json.loads((session / cj_name).read_text())["code"]
    want = {(r[4], r[5]): tuple(r[6:10]) for r in cj if not r[0].startswith(";")}  # uisynth's own sums
    assert _totals(d) == want and sum(v[0] for v in want.values()) > 0
    assert [c.source for c in d.code if not c.is_label] == [r[3] for r in cj if not r[0].startswith(";")]
    assert any(c.source for c in d.code)
    _same_waves(d, ui)
    # the same as the code object itself gives
    assert sorted(_totals(d).values()) == sorted(_totals(cap).values())
    (info,) = describe([session])
    assert info["dispatches"][0]["code_objects"] == [{"name": str(session / cj_name), "base": None}]


def test_synthetic_session_prefers_its_code_object_and_falls_back_to_no_pcs(tmp_path):
    session, cap = _synthetic_session(tmp_path / "a", code_object=True)
    (d,) = attdec.open(session)
    assert not any("code.json" in p for p in d.problems)
    assert _totals(d) == {(1, k[1]): v for k, v in _totals(cap).items()}
    session, cap = _synthetic_session(tmp_path / "b", code_json=False)
    (d,) = attdec.open(session)
    (row,) = [c for c in d.code if not c.is_label]
    assert row.is_no_pc and row.hit == sum(len(w.insts) for w in d.waves) > 0 and d.arch == "gfx942"
    assert sorted(_waves(d)) == sorted(_waves(cap))
    assert any("decoded without PCs" in p for p in d.problems)


def test_a_code_json_the_trace_cannot_place_gives_a_no_pc_decode_that_says_so(tmp_path):
    """Addresses that put no listed kernel on the latched entry PC (at a page-aligned load): nothing is
    mapped to the wrong instructions."""
    session, _ = _synthetic_session(tmp_path, shift=0x40)
    (d,) = attdec.open(session)
    (row,) = [c for c in d.code if not c.is_label]
    assert row.is_no_pc and row.hit == sum(len(w.insts) for w in d.waves) > 0
    assert any("code.json: no code-object marker in the trace" in p for p in d.problems)


@pytest.mark.parametrize("what", ["garbage", "no instructions"])
def test_a_bad_code_json_is_one_line_naming_it(tmp_path, what):
    session, _ = _synthetic_session(tmp_path)
    cj = session / f"ui_output_agent_{AGENT}_dispatch_{DISP}" / "code.json"
    cj.write_text("{not json" if what == "garbage" else json.dumps({"code": [["; kern", 0, 0, "", 1, 0]]}))
    r = invoke(["hotspots", session])
    assert r.exit_code == 1 and r.exception is None
    assert len(r.stderr.strip().splitlines()) == 1 and "code.json" in r.stderr
