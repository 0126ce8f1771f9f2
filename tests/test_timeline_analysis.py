"""Timeline tracks, their coarsening, occupancy, the realtime clock and lanes: hand-made waves with known answers,
a brute-force reference for the coarsening, and the invariants on real traces."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import SHARED, captures, real_data, repeated_capture

import attdec
from attdec.analysis.clock import Clock
from attdec.analysis.occupancy import resample, resident_waves
from attdec.analysis.timeline import (
    COARSEST,
    assign_lanes,
    category_runs,
    coarsen,
    split_budget,
    spread_sample,
    state_runs,
    tracks,
)
from attdec.model import OCCUPANCY_DTYPE, Category, Dispatch, Wave, WaveState, empty_insts

EXEC, WAIT = int(WaveState.EXEC), int(WaveState.WAIT)


def wave(begin, end, timeline=(), insts=(), se=0, cu=0, simd=0, slot=0):
    ins = empty_insts(len(insts))
    for i, (t, d, c) in enumerate(insts):
        ins[i]["time"], ins[i]["duration"], ins[i]["category"] = t, d, c
    return Wave(se, cu, simd, slot, begin, end, insts=ins, timeline=list(timeline))


def test_state_runs_and_a_hand_coarsened_grid():
    w = wave(100, 200, [(EXEC, 10), (WAIT, 50), (EXEC, 40)])
    wi, s, e, v = state_runs([w])
    assert s.tolist() == [100, 110, 160] and e.tolist() == [110, 160, 200] and v.tolist() == [EXEC, WAIT, EXEC]
    # 32-cycle cells: [96,128) is 10 EXEC + 18 WAIT -> WAIT (from the wave's begin, not the grid line);
    # [128,160) WAIT; [160,192) and [192,224) EXEC.
    _, cs, cv = coarsen(wi, s, e, v, 32)
    assert cs.tolist() == [100, 160] and cv.tolist() == [WAIT, EXEC]
    assert coarsen(wi, s, e, v, 1)[1].tolist() == [100, 110, 160]


def test_timeline_longer_than_the_wave_is_clipped():
    w = wave(0, 50, [(EXEC, 30), (WAIT, 40)])
    assert state_runs([w])[2].tolist() == [30, 50]


def test_category_runs_fill_gaps_and_cut_overlaps():
    w = wave(100, 140, insts=[(105, 5, 6), (120, 20, 3), (130, 3, 1)])
    _, s, e, v = category_runs([w])
    assert list(zip(s.tolist(), e.tolist(), v.tolist())) == [
        (100, 105, 0),
        (105, 110, 6),
        (110, 120, 0),
        (120, 130, 3),  # its 20 cycles are cut at the next issue
        (130, 133, 1),
        (133, 140, 0),
    ]
    assert Category(6) == Category.VALU


def reference_coarsen(runs, q):
    """Per wave, per grid cell, the value covering most of it (ties: smaller value), merged; pure Python."""
    out = []
    for wi, rr in runs.items():
        first = rr[0][0]
        cells = {}
        for s, e, v in rr:
            for c in range(s // q, (e - 1) // q + 1):
                cov = min(e, (c + 1) * q) - max(s, c * q)
                cells.setdefault(c, {}).setdefault(v, 0)
                cells[c][v] += cov
        prev = None
        for c in sorted(cells):
            v = min(cells[c], key=lambda k: (-cells[c][k], k))
            if v != prev:
                out.append((wi, max(c * q, first), v))
                prev = v
    return out


def test_coarsen_equals_brute_force_on_random_runs():
    rng = random.Random(14)
    for trial in range(40):
        runs = {}
        for wi in range(rng.randint(1, 4)):
            t = rng.randint(0, 300)
            rr = []
            for _ in range(rng.randint(1, 30)):
                t += rng.choice([0, 0, rng.randint(1, 5)])  # gaps sometimes
                d = rng.choice([1, 2, 3, rng.randint(1, 80)])
                rr.append((t, t + d, rng.randint(0, 4)))
                t += d
            runs[wi] = rr
        w = np.array([wi for wi, rr in runs.items() for _ in rr])
        s = np.array([r[0] for rr in runs.values() for r in rr])
        e = np.array([r[1] for rr in runs.values() for r in rr])
        v = np.array([r[2] for rr in runs.values() for r in rr])
        for q in (2, 3, 8, 16, 64):
            got = list(zip(*(a.tolist() for a in coarsen(w, s, e, v, q))))
            assert got == reference_coarsen(runs, q), (trial, q)


@pytest.mark.parametrize("cap", captures("gfx1100/gemm_run0"))
def test_tracks_fit_the_budget_at_the_finest_resolution(cap):
    d = attdec.open(cap)[0]
    exact = tracks(d.waves, "state")
    assert exact.resolution == 1 and len(exact.start) == exact.exact_runs
    budget = exact.exact_runs // 5
    t = tracks(d.waves, "state", budget)
    assert t.resolution > 1 and len(t.start) <= budget
    w, s, e, v = state_runs(d.waves)
    assert len(coarsen(w, s, e, v, t.resolution // 2)[0]) > budget  # one step finer would not fit
    for i, wv in enumerate(d.waves):  # every wave keeps its first start and stays inside its life
        sl = t.of_wave(i)
        if sl.stop > sl.start:
            assert t.start[sl.start] == wv.begin and t.start[sl.stop - 1] < wv.end
            assert np.all(np.diff(t.start[sl]) > 0)
    # a budget below the number of waves cannot be met: the coarsest grid, not an overflow past it
    few = tracks(d.waves[:3], "category", 2)
    assert few.resolution == 1 << COARSEST and len(few.start) >= 3


def _many_waves() -> list:
    """(how to get a dispatch of many waves): the synthetic capture with a blob repeated 2,000 times, then
    the real gemm_gfx1200's third dispatch where ../shared has it."""
    params = [pytest.param(lambda tmp: attdec.open(repeated_capture(tmp / "big", 2000))[0], id="synthetic")]
    if real_data("captures", "gfx1200", "gemm_gfx1200_run0"):
        real = SHARED / "captures/gfx1200/gemm_gfx1200_run0"
        params.append(pytest.param(lambda _: attdec.open(real)[2], id="gemm_gfx1200"))
    return params


@pytest.mark.parametrize("dispatch", _many_waves())
def test_tracks_in_chunks_of_waves_equal_tracks_in_one(monkeypatch, tmp_path, dispatch):
    """Runs are built and coarsened a group of waves at a time (bounded memory): the same tracks as at once."""
    from attdec.analysis import timeline

    d = dispatch(tmp_path)
    for kind in ("state", "category"):
        for budget in (None, 50_000, 5_000):
            monkeypatch.setattr(timeline, "CHUNK_RECORDS", 1 << 40)
            whole = tracks(d.waves, kind, budget)
            monkeypatch.setattr(timeline, "CHUNK_RECORDS", 4096)
            monkeypatch.setattr(timeline, "PIECE_RUNS", 300)  # a grid that does not fit is given up sooner
            assert len(timeline._chunks(d.waves, kind)) > 10  # really in chunks
            parts = tracks(d.waves, kind, budget)
            # int32 times from an aligned base (the default) against absolute int64 times (every grid past ALIGN)
            assert timeline._chunks(d.waves, kind)[0][1].dtype == np.int32
            monkeypatch.setattr(timeline, "ALIGN", 0)
            wide = tracks(d.waves, kind, budget)
            monkeypatch.undo()
            for t in (parts, wide):
                assert t.resolution == whole.resolution and t.exact_runs == whole.exact_runs
                for a, b in ((t.wave, whole.wave), (t.start, whole.start), (t.value, whole.value)):
                    assert np.array_equal(a, b)


@pytest.mark.parametrize("dispatch", _many_waves())
def test_a_grid_is_given_up_once_its_runs_exceed_the_limit(monkeypatch, tmp_path, dispatch):
    """`_coarsened` with a limit: None exactly when the whole grid has more runs than the limit, else the
    same runs as without one (pieces of whole waves are coarsened on their own)."""
    from attdec.analysis import timeline

    d = dispatch(tmp_path)
    monkeypatch.setattr(timeline, "PIECE_RUNS", 50)
    chunks = timeline._chunks(d.waves, "category")
    for q in (2, 16, 256):
        full = timeline._coarsened(chunks, q)
        assert full is not None and len(timeline._pieces(chunks[0][0])) > 3
        n = len(full[0])
        assert timeline._coarsened(chunks, q, n - 1) is None
        for limit in (n, n + 1):
            got = timeline._coarsened(chunks, q, limit)
            assert got is not None and all(np.array_equal(a, b) for a, b in zip(got, full))


def occ(rows):
    a = np.zeros(len(rows), OCCUPANCY_DTYPE)
    for i, (se, start, time) in enumerate(rows):
        a[i]["se"], a[i]["start"], a[i]["time"] = se, start, time
    return a


def test_resident_waves_and_resample():
    o = resident_waves(occ([(0, 1, 10), (0, 1, 12), (0, 0, 20), (0, 1, 25), (1, 0, 5), (1, 1, 8)]))
    assert [x.se for x in o] == [0, 1]
    assert o[0].time.tolist() == [10, 12, 20, 25] and o[0].count.tolist() == [1, 2, 1, 2]
    # SE1 starts with an end: one wave was resident before tracing began
    assert o[1].count.tolist() == [0, 1] and o[1].peak == 1
    r = resample(o[0], 10, 30, 2)  # cells [10,20) and [20,30): means (2*1 + 8*2)/10 and (5*1 + 5*2)/10
    assert r.resolution == 10 and r.time.tolist() == [10, 20]
    assert np.allclose(r.count, [1.8, 1.5])


def test_clock_maps_cycles_per_se():
    d = Dispatch("k", "gfx1100", realtime=[(1000, 0), (2000, 100)], realtime_se={1: [(3000, 0), (5000, 100)]})
    c = Clock(d)
    assert c and abs(c.ghz() - 1.0) < 1e-9 and abs(c.ghz(1) - 2.0) < 1e-9
    assert np.allclose(c.seconds(0, [1500, 3000]), [50e-8, 200e-8])  # SE0 has none: the dispatch's list
    assert np.allclose(c.seconds(1, [4000, 2000]), [50e-8, -50e-8])  # extrapolated at the average rate
    assert not Clock(Dispatch("k", "gfx1100"))


def test_clock_samples_keep_a_strictly_increasing_walk():
    """Samples out of order or with a clock standing still are dropped; strictly increasing ones all kept."""
    from attdec.analysis.clock import _clean

    assert _clean([(10, 1), (30, 3), (20, 2)]).tolist() == [[10, 1], [20, 2], [30, 3]]
    got = _clean([(10, 1), (20, 1), (20, 2), (30, 3), (40, 2), (50, 4)])
    assert got.tolist() == [[10, 1], [20, 2], [30, 3], [50, 4]]
    assert _clean([(10, 1)]) is None and _clean([(10, 1), (10, 2)]) is None


def test_lanes_put_overlapping_waves_apart():
    ws = [wave(0, 10), wave(10, 20), wave(5, 15), wave(0, 5, simd=1)]
    keys, lane = assign_lanes(ws)
    assert keys == [(0, 0, 0, 0, 0), (0, 0, 0, 0, 1), (0, 0, 1, 0, 0)]
    assert lane == [0, 0, 1, 2]


def test_budgets():
    assert split_budget([10, 1000, 50], 300) == [10, 240, 50]
    assert split_budget([10, 20], 300) == [10, 20]
    pick = spread_sample([100] * 10, 450)
    assert len(pick) == 4 and pick[0] == 0 and pick[-1] >= 6
    assert spread_sample([5, 5], 100) == [0, 1] and spread_sample([500], 100) == []
