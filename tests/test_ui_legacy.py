"""Folders the ui_output reader must not get wrong: rocprofv2-era `*_ui` folders, wave files without a
listing, and manifests naming many missing wave files (issue 19, items 1, 2, 4).

The rocprofv2 fixture is written by tests/support/uisynth.py `write_legacy_dispatch` (layout of the rocprofv2 ATT
plugin); its expected figures below are read from its own code.json and wave files with plain loops, not
from attdec.
"""

from __future__ import annotations

import json
import shutil
import time

from conftest import FIXTURES, cli

import attdec

LEGACY = FIXTURES / "rocprofv2" / "vec_kernel_v0_ui"
NOCODE = {k: FIXTURES / "nocode" / k / "ui_output_agent_7_dispatch_5" for k in ("null", "empty", "missing")}


def legacy_code_rows():
    return json.loads((LEGACY / "code.json").read_text())["code"]


def legacy_wave_docs():
    return [json.loads(p.read_text()) for p in sorted(LEGACY.glob("se*_sm*_sl*_wv*.json"))]


def test_legacy_totals_equal_code_json_sums():
    """Executed instructions and cycles are code.json's sums (rows keyed by column 2, not 5)."""
    rows = legacy_code_rows()
    insts = [r for r in rows if not r[0].startswith(";")]
    p = cli("hotspots", LEGACY, "--by", "instruction", "--top", "0", "--format", "json")
    assert p.returncode == 0, p.stderr
    h = json.loads(p.stdout)
    assert h["totals"]["hits"] == sum(r[6] for r in rows) == 24
    assert h["totals"]["latency"] == sum(r[7] for r in rows)
    assert h["instructions"] == len(insts)
    # every instruction keeps its own hits and cycles (none shifted onto the next row, none lost)
    got = {r["key"]: (r["hits"], r["latency"]) for r in h["rows"]}
    assert got == {r[0]: (r[6], r[7]) for r in insts}


def test_legacy_idle_stall_kernel_arch():
    [d] = attdec.open([LEGACY])
    assert d.kernel == "_Z10vec_kernelPfPKfi"  # not "Begin ATT ASM, ..."
    assert d.arch == "gfx9 (chip unknown)"  # gfxv "vega" says the family, nothing says the chip
    assert not d.stall_measured
    idle = 0
    for doc in legacy_wave_docs():  # the writer's Idle formula, by hand
        w = doc["wave"]
        prev = w["begin"]
        for t, _c, _s, dur, _line in w["instructions"]:
            idle += max(0, t - prev)
            prev = max(prev, t + dur)
    assert sum(c.idle for c in d.code) == idle > 0
    assert sorted({int(s) for s in d.occupancy["se"]}) == [1, 3]  # occupancy keys are trace-file indices
    assert {w.cu for w in d.waves} == {-1}  # rocprofv2 wave files do not name the CU


def test_legacy_says_no_stall_instead_of_zeros():
    p = cli("hotspots", LEGACY)
    assert p.returncode == 0, p.stderr
    assert "stall - (not in this format)" in p.stdout and "ranked by latency" in p.stdout
    assert "recomputed from the wave files" not in p.stdout
    assert "Begin ATT ASM" not in p.stdout
    j = json.loads(cli("hotspots", LEGACY, "--format", "json").stdout)
    assert j["totals"]["stall"] is None and all(r["stall"] is None for r in j["rows"])
    assert j["ranked_by"] == "latency"
    w = json.loads(cli("waves", LEGACY, "--format", "json").stdout)["waves"]
    assert all(x["stall"] is None and x["stall_share"] is None and x["cu"] is None for x in w)
    table = cli("waves", LEGACY).stdout
    assert " - " in table.splitlines()[-1] and "0.0%" not in table


def test_navi_without_gfxip_says_the_generation_is_unknown(tmp_path):
    d = tmp_path / "k_ui"
    shutil.copytree(LEGACY, d)
    fn = json.loads((d / "filenames.json").read_text())
    fn["gfxv"] = "navi"
    (d / "filenames.json").write_text(json.dumps(fn))
    [x] = attdec.open([d])
    assert x.arch == "gfx10-12 (generation unknown)"
    assert any("no gfxip" in p for p in x.problems)
    del fn["gfxv"]
    (d / "filenames.json").write_text(json.dumps(fn))
    [x] = attdec.open([d])
    assert x.arch.startswith("unknown")


def test_wave_files_without_listing_build_it_from_the_waves():
    """code null, [] or absent: the same totals as the tiny fixture's code.json (24 / 912 / 768 / 20)."""
    waves_json = json.loads(cli("waves", NOCODE["null"], "--format", "json").stdout)["waves"]
    for kind, folder in NOCODE.items():
        p = cli("hotspots", folder, "--format", "json")
        assert p.returncode == 0, p.stderr
        h = json.loads(p.stdout)
        assert h["totals"] == {"hits": 24, "latency": 912, "stall": 768, "idle": 20}, kind
        assert h["instructions"] == 8 and h["by"] == "instruction"
        assert h["totals"]["hits"] == sum(w["instructions"] for w in waves_json)
        note = [x for x in h["problems"] if "listing built from the wave files" in x]
        assert len(note) == 1 and ("no code.json" in note[0]) == (kind == "missing"), h["problems"]


def test_many_missing_wave_files_one_note_and_fast(tmp_path):
    d = tmp_path / "d"
    shutil.copytree(FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3", d)
    fn = json.loads((d / "filenames.json").read_text())
    tree = fn["wave_filenames"]
    for i in range(100_000):
        tree.setdefault("9", {}).setdefault(str(i % 4), {}).setdefault(str(i // 4 % 16), {})[str(i)] = [
            f"se9_sm{i % 4}_sl{i // 4 % 16}_wv{i}.json",
            1,
            2,
        ]
    (d / "filenames.json").write_text(json.dumps(fn))
    t0 = time.perf_counter()
    p = cli("hotspots", d)
    elapsed = time.perf_counter() - t0
    assert p.returncode == 0, p.stderr
    notes = [ln for ln in p.stdout.splitlines() if "missing" in ln]
    assert len(notes) == 1 and "100,000 wave files listed in filenames.json are missing, e.g. se9_" in notes[0]
    assert len(p.stdout.splitlines()) < 40
    assert elapsed < 20, elapsed  # was 52-69 s (one note per file); about 1 s now
    j = json.loads(cli("hotspots", d, "--format", "json").stdout)
    assert j["totals"]["hits"] == 24 and len(j["problems"]) == 1


def test_legacy_rows_are_keyed_by_position_in_either_plugin_mode():
    """With an assembly file given, column 2 is a jump target (often null); the position still keys."""
    from attdec.sources.ui_output import parse_code

    rows = legacy_code_rows()
    for r in rows[2:]:
        r[2] = 0
    cj = parse_code({"code": rows, "top_n": []}, "code.json")
    assert [c.line for c in cj.rows] == list(range(len(rows)))
    assert not cj.stall_measured and cj.recompute == ("idle",)
