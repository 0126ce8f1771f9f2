"""The data behind the report's time views (attdec/report/views.py), without a browser: binned sums are exact,
long counter series are cut to a budget that keeps their totals and says so."""

from __future__ import annotations

import numpy as np

from attdec.model import CounterSamples, Dispatch
from attdec.model.records import COUNTER_DTYPE
from attdec.report.views import COUNTER_POINTS, busy_bins, counters


def test_busy_bins_equal_a_cycle_by_cycle_count():
    rng = np.random.default_rng(7)
    n, groups, t0, q, nb = 400, 3, 50, 16, 40
    start = rng.integers(t0, t0 + q * nb - 100, n)
    dur = rng.integers(0, 90, n)  # many span several bins, some none
    group = rng.integers(0, groups, n)
    got = busy_bins(start, dur, group, groups, t0, q, nb)
    want = np.zeros((groups, q * nb), np.int64)
    for s, d, g in zip(start, dur, group):
        want[g, s - t0 : s - t0 + d] += 1
    assert (got == want.reshape(groups, nb, q).sum(axis=2)).all()
    assert (got.sum(axis=1) == np.bincount(group, weights=dur, minlength=groups)).all()


def test_a_long_counter_series_is_summed_into_cells_and_said():
    m = 3 * COUNTER_POINTS + 7
    s = np.zeros(m, COUNTER_DTYPE)
    s["counter"], s["se"], s["cu"], s["sa"], s["xcc"], s["inst"] = 0, 0, 0, 0, 0, -1
    s["time"] = 1000 + 5 * np.arange(m)
    s["value"] = np.arange(m) % 11
    d = Dispatch("k#1", "gfx1100", kernel="k", counters=[CounterSamples("SQTT PERFEVENT", ["SQ_WAVES"], ["SQ"], s)])
    notes: list[str] = []
    out = counters(d, notes)
    (row,) = out["rows"]
    assert out["time_resolved"] and row["total"] == int(s["value"].sum())
    assert len(row["series"]["t"]) <= COUNTER_POINTS and row["series"]["v"].sum() == row["total"]
    assert row["series"]["t"][0] == 1000 and any("SQ_WAVES" in n and f"{m:,}" in n for n in notes)
