"""`attdec timeline`: Chrome trace-event JSON. Every event has the fields its phase needs, timestamps never go
back on a track, slices nest, and the figures in it are attdec's own (waves, instructions, stall)."""

from __future__ import annotations

import io
import json
from collections import defaultdict

import pytest
from conftest import FIXTURES, captures, cli, invoke, one_line_error, ui_samples

import attdec
from attdec.analysis.hotspots import hotspots
from attdec.analysis.occupancy import resident_waves
from attdec.commands.demo import demo_path
from attdec.report.trace_events import write_trace

# What each phase must carry (Trace Event Format: "X" complete, "C" counter, "M" metadata, "i" instant).
NEEDS = {
    "X": {"name", "ts", "dur", "pid", "tid"},
    "C": {"name", "ts", "pid", "args"},
    "M": {"name", "pid", "args"},
    "i": {"name", "ts", "pid", "s"},
}


def validate(doc: dict) -> dict:
    """Check a trace's structure; returns its events by phase. Raises AssertionError on the first fault."""
    assert isinstance(doc.get("traceEvents"), list)
    by_phase = defaultdict(list)
    names = {}
    last_ts: dict[tuple, float] = {}
    open_slices: dict[tuple, list[float]] = defaultdict(list)  # ends of the enclosing slices, per track
    for ev in doc["traceEvents"]:
        ph = ev.get("ph")
        assert ph in NEEDS, ev
        missing = NEEDS[ph] - set(ev)
        assert not missing, (missing, ev)
        assert isinstance(ev["pid"], int) and isinstance(ev.get("tid", 0), int)
        by_phase[ph].append(ev)
        if ph == "M":
            assert ev["name"] in ("process_name", "thread_name", "process_sort_index", "thread_sort_index")
            key = (ev["name"], ev["pid"], ev.get("tid"))
            assert key not in names, f"named twice: {key}"
            names[key] = ev["args"]
            continue
        assert isinstance(ev["ts"], (int, float)) and ev["ts"] == ev["ts"]
        track = (ev["pid"], ev["name"]) if ph == "C" else (ev["pid"], ev.get("tid", 0), ph == "i")
        assert ev["ts"] >= last_ts.get(track, float("-inf")), f"time goes back on {track}: {ev}"
        last_ts[track] = ev["ts"]
        if ph == "C":
            assert all(isinstance(v, (int, float)) for v in ev["args"].values())
        if ph == "X":
            assert ev["dur"] >= 0
            stack = open_slices[track]
            while stack and stack[-1] <= ev["ts"] + 1e-6:  # µs with 3 decimals: sums carry float error
                stack.pop()
            if stack:  # inside the enclosing slice, never straddling its end
                assert ev["ts"] + ev["dur"] <= stack[-1] + 1e-6, f"slice straddles its parent's end: {ev}"
            stack.append(ev["ts"] + ev["dur"])
    for ev in by_phase["X"] + by_phase["C"]:
        assert ("process_name", ev["pid"], 0) in names, f"pid {ev['pid']} has no process_name"
    for ev in by_phase["X"]:
        assert ("thread_name", ev["pid"], ev["tid"]) in names, f"tid {ev['tid']} of pid {ev['pid']} has no name"
    return by_phase


def trace(dispatches, **kw) -> tuple[dict, object]:
    buf = io.StringIO()
    s = write_trace(buf, dispatches, **kw)
    doc = json.loads(buf.getvalue())
    return doc, s


@pytest.mark.parametrize("granularity", ["inst", "state", "wave"])
def test_demo_every_granularity(granularity):
    ds = attdec.open(demo_path())
    doc, s = trace(ds, granularity=granularity)
    ev = validate(doc)
    waves = [e for e in ev["X"] if e["cat"] == "wave"]
    assert len(waves) == len(ds[0].waves) == s.waves
    h = hotspots(ds)
    if granularity == "inst":
        inst = [e for e in ev["X"] if e["cat"] != "wave"]
        assert len(inst) == h.totals["hits"]  # every executed instruction, once
        assert sum(e["args"]["stall"] for e in inst) == h.totals["stall"]
    if granularity == "state":
        names = {e["name"] for e in ev["X"] if e["cat"] == "state"}
        assert names <= {"IDLE", "EXEC", "WAIT", "STALL"} and "WAIT" in names
    counters = [e for e in ev["C"] if e["name"] == "resident waves"]
    assert max(e["args"]["waves"] for e in counters) == max(o.peak for o in resident_waves(ds[0].occupancy))
    assert not s.notes and not doc["otherData"]["notes"]


@pytest.mark.parametrize("sample", ui_samples("jhinpan__flydsl-kernel-profiling-lib/examples/topk_gating_softmax"))
def test_sample_instructions_carry_attdec_figures(sample):
    ds = attdec.open(sample)
    doc, _ = trace(ds, granularity="inst")
    ev = validate(doc)
    inst = [e for e in ev["X"] if e["cat"] != "wave"]
    h = hotspots(ds)
    assert len(inst) == h.totals["hits"] and sum(e["args"]["stall"] for e in inst) == h.totals["stall"]
    assert any("source" in e["args"] for e in inst) and all(e["args"]["type"] for e in inst if "type" in e["args"])
    ses = {w.se for w in ds[0].waves}
    procs = [e for e in ev["M"] if e["name"] == "process_name"]
    assert {int(p["args"]["name"].rsplit("SE", 1)[1]) for p in procs} >= ses


@pytest.mark.parametrize("cap", captures("gfx1100/gemm_run0", synthetic=("gfx1100",)))
def test_raw_capture_on_the_realtime_clock(cap):
    ds = attdec.open(cap)[:1]
    doc, _ = trace(ds, granularity="state", clock="realtime")
    ev = validate(doc)
    d = ds[0]
    waves = [e for e in ev["X"] if e["cat"] == "wave"]
    assert len(waves) == len(d.waves)
    # ~3 GHz shader clock: a wave's microseconds are its cycles / (cycles per µs) within a few percent
    ghz = doc["otherData"]["dispatches"][0]["shader_ghz"]
    assert 1.0 < ghz < 4.0
    longest = max(d.waves, key=lambda w: w.duration)
    us = max(e["dur"] for e in waves)
    assert abs(us - longest.duration / (ghz * 1e3)) / us < 0.05
    assert min(e["ts"] for e in ev["X"]) >= 0


@pytest.mark.parametrize("cap", captures("gfx1151/gemm_run0", synthetic=("gfx1100",)))
def test_several_dispatches_get_their_own_processes(cap):
    ds = attdec.open(cap)
    assert len(ds) > 1
    for clock in ("cycles", "realtime"):
        doc, s = trace(ds, granularity="inst", clock=clock)
        ev = validate(doc)
        procs = [e["args"]["name"] for e in ev["M"] if e["name"] == "process_name"]
        assert all(any(d.name in p for p in procs) for d in ds)
        assert s.waves == sum(len(d.waves) for d in ds)
        inst = [e for e in ev["X"] if e["cat"] != "wave"]
        assert len(inst) == sum(hotspots([d]).totals["hits"] for d in ds)


@pytest.mark.parametrize("cap", captures("gfx1100/gemm_run0", synthetic=("gfx1100",)))
def test_cap_keeps_whole_waves_and_says_so(cap):
    ds = attdec.open(cap)
    _, s_full = trace(ds, granularity="inst")
    cap = s_full.events // 3
    doc, s = trace(ds, granularity="inst", max_events=cap)
    ev = validate(doc)
    assert s.events <= cap + 1  # plus the note marker
    assert 0 < s.detailed_waves < len(ds[0].waves)
    assert any("--max-events" in n for n in doc["otherData"]["notes"])
    assert any(e["name"].startswith("attdec:") for e in ev["i"])
    per_wave = defaultdict(int)
    for e in ev["X"]:
        if e["cat"] != "wave":
            per_wave[(e["pid"], e["tid"])] += 1
    sizes = sorted(len(w.insts) for w in ds[0].waves)
    assert all(n in sizes for n in per_wave.values())  # whole waves, never part of one


def test_cli_writes_the_file_and_refuses_what_it_cannot_do(tmp_path):
    out = tmp_path / "t.json"
    r = invoke(["timeline", str(demo_path()), "-o", str(out), "--granularity", "inst"])
    assert r.exit_code == 0, r.output
    validate(json.loads(out.read_text()))
    no_realtime = FIXTURES / "early8" / "ui_output_agent_7_dispatch_4"
    one_line_error(cli("timeline", no_realtime, "-o", tmp_path / "r.json", "--clock", "realtime"), "realtime")
    assert not (tmp_path / "r.json").exists()
    one_line_error(cli("timeline", demo_path(), "-o", tmp_path / "no" / "t.json"), "cannot write")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]  # no half-written file left behind
