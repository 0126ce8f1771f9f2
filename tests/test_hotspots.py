"""hotspots on the tiny fixture (hand-derived figures, see tools/makers/make_fixtures.py) and on topk.

tiny by type: VMEM-wait = line 4 `s_waitcnt vmcnt(0) lgkmcnt(0)` (tie -> VMEM) 300+200+100 = 600;
LGKM-wait = line 2 40+60+20 = 120; nop = s_nop 8*3 = 24; MFMA 16; VMEM (global_load) 4; VALU (v_fma) 4.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from conftest import FIXTURES, SHARED, capture_without_line_tables, invoke, real_data, shared_path

import attdec
from attdec.analysis.hotspots import frame_of, hotspots

TINY = FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3"


def run(*args):
    r = invoke([str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r.output


def js(*args):
    return json.loads(run(*args, "--format", "json"))


def test_frames():
    assert frame_of("a.py:1 -> b.py:2 -> c.py:3", "inner") == "a.py:1"
    assert frame_of("a.py:1 -> b.py:2 -> c.py:3", "outer") == "c.py:3"
    assert frame_of("", "outer") == ""


def test_json_shape_and_exact_figures():
    d = js("hotspots", TINY, "--top", "0")
    assert d["totals"] == {"hits": 24, "latency": 912, "stall": 768, "idle": 20}
    assert [(t["type"], t["stall"]) for t in d["by_type"]] == [
        ("VMEM-wait", 600),
        ("LGKM-wait", 120),
        ("nop", 24),
        ("MFMA", 16),
        ("VMEM", 4),
        ("VALU", 4),
    ]
    assert abs(sum(t["share"] for t in d["by_type"]) - 1) < 1e-5
    rows = {r["key"]: r for r in d["rows"]}
    assert set(rows) == {"/src/k.py:6", "/src/k.py:5", "/src/k.py:8", "/src/k.py:7", "(no source line)"}
    assert [r["key"] for r in d["rows"]][:4] == ["/src/k.py:6", "/src/k.py:5", "/src/k.py:8", "/src/k.py:7"]
    r6 = rows["/src/k.py:6"]
    assert (r6["stall"], r6["hits"], r6["dominant_type"]) == (604, 6, "VMEM-wait")
    assert abs(r6["share"] - 604 / 768) < 1e-6
    assert rows["/src/k.py:8"]["stall"] == 28 and rows["/src/k.py:8"]["dominant_type"] == "nop"
    assert rows["(no source line)"]["hits"] == 3 and rows["(no source line)"]["stall"] == 0
    for r in d["rows"]:
        assert {"key", "stall", "latency", "hits", "share", "dominant_type"} <= set(r)


def test_outer_frame_and_by_file_and_by_instruction():
    rows = {r["key"]: r for r in js("hotspots", TINY, "--frame", "outer", "--top", "0")["rows"]}
    assert rows["/src/main.py:40"]["stall"] == 16 + 4 + 24
    files = {r["key"]: r["stall"] for r in js("hotspots", TINY, "--by", "file")["rows"]}
    assert files == {"/src/k.py": 768, "(no source file)": 0}
    inst = js("hotspots", TINY, "--by", "instruction", "--top", "2")["rows"]
    assert inst[0]["key"] == "s_waitcnt vmcnt(0) lgkmcnt(0)" and inst[0]["stall"] == 600
    assert inst[0]["counters"] == {"vmcnt": 0, "lgkmcnt": 0} and inst[0]["line"] == 4
    assert inst[1]["dominant_type"] == "LGKM-wait" and len(inst) == 2


def test_wave_filters_recompute_from_waves():
    assert js("hotspots", TINY, "--se", "1")["totals"] == {"hits": 16, "latency": 496, "stall": 400, "idle": 12}
    assert js("hotspots", TINY, "--wave", "1")["totals"]["stall"] == 128
    assert js("hotspots", TINY, "--simd", "0", "--slot", "0")["totals"]["stall"] == 368
    assert js("hotspots", TINY, "--se", "3")["totals"]["stall"] == 0
    # unrestricted filter (all waves) gives exactly code.json's numbers
    [d] = attdec.open([TINY])
    assert hotspots([d], wave_filter=lambda w: True).totals == hotspots([d]).totals


def test_several_folders_and_merge():
    two = [TINY, FIXTURES / "python31"]
    d = js("hotspots", *two)
    assert len(d["dispatches"]) == 2 and all(x["totals"]["stall"] == 768 for x in d["dispatches"])
    m = js("hotspots", *two, "--merge")
    assert m["totals"]["stall"] == 1536 and len(m["merged"]) == 2
    assert m["rows"][0]["key"] == "/src/k.py:6" and m["rows"][0]["stall"] == 1208


def test_csv_and_table():
    rows = list(csv.DictReader(io.StringIO(run("hotspots", TINY, "--format", "csv"))))
    assert rows[0]["key"] == "/src/k.py:6" and rows[0]["stall"] == "604"
    out = run("hotspots", TINY)
    assert "tiny_kernel" in out and "gfx9 (chip unknown)" in out and "VMEM-wait" in out
    assert "912" in out and "768" in out and "84.2%" in out  # 768 / 912


def test_gfx12_split_counters():
    d = js("hotspots", FIXTURES / "gfx12")
    assert d["arch"] == "gfx1201"
    assert [(t["type"], t["stall"]) for t in d["by_type"]] == [("VMEM-wait", 400), ("LGKM-wait", 56), ("MFMA", 10)]


def test_topk_published_figures():
    p = shared_path("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "topk_gating_softmax")
    d = js("hotspots", p)
    t = d["totals"]
    assert (t["latency"], t["stall"]) == (272728, 132308)
    assert round(100 * t["stall"] / t["latency"], 1) == 48.5
    lgkm = next(x for x in d["by_type"] if x["type"] == "LGKM-wait")
    assert lgkm["stall"] == 57456 and round(100 * lgkm["share"], 1) == 43.4
    out = run("hotspots", p)
    for s in ("272.7K", "132.3K", "48.5%", "43.4%"):
        assert s in out


def test_header_figures_match_every_published_flydsl_report():
    """Total cycles / stall / share / listing size against each sample's hotspot_output.txt."""
    import re

    root = shared_path("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples")
    goldens = sorted(root.glob("*/source/hotspot_output.txt"))
    assert len(goldens) == 13
    for g in goldens:
        text = g.read_text()
        cycles = re.search(r"Total cycles:\s+(\S+)", text).group(1)
        stalls, share = re.search(r"Total stalls:\s+(\S+)\s+\((\S+)% of total", text).groups()
        listing = int(re.search(r"Instructions:\s+([\d,]+)", text).group(1).replace(",", ""))
        out = run("hotspots", g.parent.parent / "att_viewer", "--top", "1")
        assert f"total cycles {cycles}   stall {stalls} ({share}% of cycles)" in out, g
        assert f"({listing:,} in listing)" in out, g


def test_no_source_lines_ranks_by_instruction_and_says_why():
    d = attdec.open([TINY])[0]
    for c in d.code:
        c.source = ""
    h = hotspots([d], by=None)
    assert h.by == "instruction" and any("no source lines" in p for p in h.problems)
    assert hotspots([d], by="line").by == "line"  # asked for explicitly: honoured
    d2 = attdec.open([TINY])[0]
    assert hotspots([d2], by=None).by == "line"  # has source lines: the default stays


def _without_dwarf() -> list:
    """(how to get a raw input whose code object has no line table): the demo capture with its DWARF
    sections renamed away, then tinygrad's gfx950 gemm profile where ../shared has it."""
    params = [pytest.param(lambda tmp: capture_without_line_tables(tmp / "cap"), id="synthetic")]
    if real_data("tinygrad_profiles", "gfx950", "profile_gemm_run_0.pkl"):
        pkl = SHARED / "tinygrad_profiles/gfx950/profile_gemm_run_0.pkl"
        params.append(pytest.param(lambda _: pkl, id="gemm"))
    return params


@pytest.mark.parametrize("make", _without_dwarf())
def test_raw_capture_without_dwarf_shows_addresses(tmp_path, make):
    out = run("hotspots", make(tmp_path), "--top", "3")
    assert "ranked by instruction" in out or "by instruction" in out
    rows = [ln.split() for ln in out.splitlines() if ln[:2].strip().isdigit()]
    addrs = [r[-1] for r in rows]
    assert len(rows) == 3 and all(a.startswith("0x") for a in addrs) and len(set(addrs)) == 3
