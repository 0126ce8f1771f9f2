"""Performance counters: tinygrad PMC buffers unpacked against their schedule, checked against the trace,
and the counter report (a second, time-resolved source plugs in the same way)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attdec.analysis.counters import counter_report, counters_across
from attdec.errors import FormatError
from attdec.model import COUNTER_DTYPE, Category, CounterSamples, Dispatch
from attdec.sources.pipeline import open_dispatches, open_raw
from attdec.sources.pmc import unpack_pmc
from tests.conftest import FIXTURES, SHARED, SYNTHETIC_MORE, real_data


def _pmc_sets() -> list:
    """(capture folders with PMC buffers, least buffers, least dispatches whose waves are all traced): the
    synthetic one (tools/makers/make_synthetic_capture.py synth_run1), then every real one ../shared has."""
    sets = [pytest.param([SYNTHETIC_MORE], 2, 2, id="synthetic")]
    if real_data("captures"):
        caps = sorted(SHARED.glob("captures/gfx*/*/capture.json"))
        real = [cj.parent for cj in caps if json.loads(cj.read_text()).get("pmc")]
        sets.append(pytest.param(real, 50, 10, id="real"))
    return sets


@pytest.mark.parametrize("folders,least,least_equal", _pmc_sets())
def test_every_capture_pmc_buffer_unpacks(folders, least, least_equal):
    n = 0
    for folder in folders:
        cap = json.loads((folder / "capture.json").read_text())
        for p in cap.get("pmc") or []:
            cs = unpack_pmc((folder / p["file"]).read_bytes(), p["sched"], p["file"])
            assert cs.names == [s["name"] for s in p["sched"]]
            for i, s in enumerate(p["sched"]):
                a = cs.samples[cs.samples["counter"] == i]
                assert len(a) == s["xcc"] * s["inst"] * s["se"] * s["sa"] * s["wgp"] == s["size"] // 8
                # locations: every split present once; a dimension of one is "not split" (-1)
                assert (a["se"] >= 0).all() == (s["se"] > 1) and (a["cu"] >= 0).all() == (s["wgp"] > 1)
                assert len(np.unique(a[["xcc", "inst", "se", "sa", "cu"]])) == len(a)
            n += 1
    assert n >= least


@pytest.mark.parametrize("folders,least,least_equal", _pmc_sets())
def test_pmc_valu_count_equals_the_traced_waves(folders, least, least_equal):
    """SQ_INSTS_VALU counts every wave's VALU instructions; where the trace has instruction records for
    every wave the dispatch ran, their VALU count must be the same number (and never more elsewhere)."""
    equal = 0
    for folder in folders:
        for d in open_dispatches([folder]):
            (cs,) = d.counters
            valu = int(cs.samples["value"][cs.samples["counter"] == cs.names.index("SQ_INSTS_VALU")].sum())
            traced = sum(int((w.insts["category"] == Category.VALU).sum()) for w in d.waves)
            assert traced <= valu, d.name
            if len(d.waves) == int(d.occupancy["start"].sum()) and len(d.waves):
                assert traced == valu, d.name
                equal += 1
    assert equal >= least_equal


def _profile_and_folder() -> list:
    """(tinygrad profile, the capture folder of the same run): the synthetic pair, the real gemm one."""
    params = [pytest.param(FIXTURES / "tinygrad/gfx1100/profile_synth_run1.pkl", SYNTHETIC_MORE, id="synthetic")]
    if real_data("tinygrad_profiles") and real_data("captures", "gfx1100", "gemm_run0"):
        pkl = SHARED / "tinygrad_profiles/gfx1100/profile_gemm_run_0.pkl"
        params.append(pytest.param(pkl, SHARED / "captures/gfx1100/gemm_run0", id="gemm"))
    return params


@pytest.mark.parametrize("pkl,folder", _profile_and_folder())
def test_profile_and_capture_folder_give_the_same_counters(pkl, folder):
    from_pkl, *_ = open_raw([pkl])
    from_folder, *_ = open_raw([folder])
    a, b = from_pkl.counters[0], from_folder.counters[0]
    assert a.names == b.names and a.blocks == b.blocks and a.source == "tinygrad PMC"
    assert (a.samples == b.samples).all() and int(a.samples["value"].sum()) > 0


def test_bad_schedule_is_a_format_error():
    blob = bytes(64)
    sched = [{"name": "X", "block": "SQ", "xcc": 1, "inst": 1, "se": 4, "sa": 2, "wgp": 2, "off": 0, "size": 128}]
    with pytest.raises(FormatError, match="16 instances need 128 bytes"):
        unpack_pmc(blob, sched, "x.pmc")
    with pytest.raises(FormatError, match="se is 0"):
        unpack_pmc(blob, [{**sched[0], "se": 0, "size": 0}], "x.pmc")


def _split_captures() -> list:
    """(capture, an SQ counter, its WGPs, its SEs, GL2C channels): the schedules the capture.json says."""
    params = [pytest.param(SYNTHETIC_MORE, "SQ_WAVES", 8, 2, 4, id="synthetic")]
    if real_data("captures", "gfx1100", "gemm_run0"):
        params.append(pytest.param(SHARED / "captures/gfx1100/gemm_run0", "SQ_BUSY_CYCLES", 48, 6, 32, id="gemm"))
    return params


@pytest.mark.parametrize("cap,sq_name,wgps,ses,channels", _split_captures())
def test_report_totals_and_splits(cap, sq_name, wgps, ses, channels):
    d = next(iter(open_dispatches([cap])))
    r = counter_report(d)
    rows = {row.name: row for row in r.rows}
    sq = rows[sq_name]
    assert sq.block == "SQ" and sq.instances == wgps and len(sq.per_cu) == wgps and len(sq.per_se) == ses
    assert sum(v for *_, v in sq.per_cu) == sum(v for *_, v in sq.per_se) == sq.total > 0
    l2 = rows["GL2C_HIT"]
    assert len(l2.per_instance) == channels and l2.per_se == [] and sum(v for *_, v in l2.per_instance) == l2.total
    assert not r.time_resolved and "no time resolution" in r.notes[0]


def test_a_time_resolved_source_plugs_in():
    """What SQTT PERFEVENT records will give: samples per SE/CU with a time; they form a series."""
    s = np.zeros(4, COUNTER_DTYPE)
    s["counter"], s["se"], s["cu"], s["sa"], s["xcc"], s["inst"] = 0, [0, 1, 0, 1], 2, 0, 0, -1
    s["time"], s["value"] = [100, 100, 200, 200], [1, 2, 3, 4]
    d = Dispatch("k#1", "gfx1100", kernel="k", counters=[CounterSamples("SQTT PERFEVENT", ["SQ_WAVES"], ["SQ"], s)])
    r = counter_report(d)
    (row,) = r.rows
    assert r.time_resolved and row.series == [(100, 3), (200, 7)] and row.total == 10
    assert row.instances == 2 and row.per_se == [(0, 0, 4), (0, 1, 6)]
    assert counters_across([r, r])[("SQTT PERFEVENT", "SQ_WAVES")] == [("k#1", 10), ("k#1", 10)]
    assert "no counter samples" in counter_report(Dispatch("u", "gfx9")).notes[0]


def test_a_counter_read_the_same_everywhere_is_flagged():
    s = np.zeros(8, COUNTER_DTYPE)
    s["se"], s["cu"], s["time"], s["value"] = np.arange(8) // 4, np.arange(8) % 4, -1, 699603
    d = Dispatch("k#1", "gfx1200", counters=[CounterSamples("tinygrad PMC", ["SQ_BUSY_CYCLES"], ["SQ"], s)])
    r = counter_report(d)
    assert r.rows[0].total == 8 * 699603 and "the same value at all 8 locations" in r.notes[0]
