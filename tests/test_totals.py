"""The vectorised per-line totals (attdec.model.totals) and PC -> line lookup against the per-wave and
per-record definitions they replace."""

from __future__ import annotations

import numpy as np
import pytest

from attdec.model.records import lines_of_pcs
from attdec.model.totals import TABLE_SPAN, WAVE_KEY, dense_index, distinct, idle_before, median, totals_by


def idle_one_wave(time, duration, begin) -> np.ndarray:
    """The definition (ui-output-format.md §5.1): prev_end starts at begin, then max(prev_end, time + duration)."""
    out, prev = [], begin
    for t, d in zip(time.tolist(), duration.tolist()):
        out.append(max(0, t - prev))
        prev = max(prev, t + d)
    return np.array(out, np.int64)


def waves(rng, counts, spread):
    begins = rng.integers(-1000, 10**6, len(counts))
    time = np.concatenate([b + np.sort(rng.integers(-50, spread, k)) for b, k in zip(begins, counts)])
    duration = rng.integers(0, 400, len(time))
    return time.astype(np.int64), duration.astype(np.int64), begins.astype(np.int64)


@pytest.mark.parametrize("spread", [5_000, 3 * WAVE_KEY])  # one running maximum; a wave too long for it: a loop
def test_idle_before_is_the_per_wave_definition(spread):
    rng = np.random.default_rng(7)
    counts = np.array([0, 1, 5, 0, 300, 2, 1000, 3])
    time, duration, begins = waves(rng, counts, spread)
    want = np.concatenate(
        [
            idle_one_wave(time[a : a + k], duration[a : a + k], b)
            for a, k, b in zip(np.cumsum(counts) - counts, counts, begins)
        ]
    )
    assert np.array_equal(idle_before(time, duration, begins, counts), want)
    assert len(idle_before(time[:0], duration[:0], begins[:0], counts[:0])) == 0


@pytest.mark.parametrize("span", [64, 4 * TABLE_SPAN])  # counted in an array by key; too wide for one: sorted
def test_totals_by_is_unique_and_bincount(span):
    rng = np.random.default_rng(3)
    key = (0x7FFF_0000_0000 + 4 * rng.integers(0, span // 4, 5000)).astype(np.uint64)
    a, b = rng.integers(0, 10**6, (2, len(key)))
    uniq, rows = totals_by(key, (a, b))
    want, inverse = np.unique(key, return_inverse=True)
    got, index = dense_index(key)
    assert np.array_equal(got, want) and got.dtype == want.dtype and np.array_equal(index, inverse)
    assert np.array_equal(uniq, want) and uniq.dtype == key.dtype
    assert rows.dtype == np.int64 and rows.shape == (len(want), 3)
    for k in rng.choice(len(want), 20):
        sel = key == want[k]
        assert rows[k].tolist() == [int(sel.sum()), int(a[sel].sum()), int(b[sel].sum())]
    lines, rows = totals_by(np.array([5, -1, 5, 2], np.int64), (np.array([1, 2, 3, 4]),))
    assert lines.tolist() == [-1, 2, 5] and rows.tolist() == [[1, 2], [1, 4], [2, 4]]
    assert totals_by(key[:0], (a[:0],))[1].shape == (0, 2)


@pytest.mark.parametrize("span", [4096, 4 * TABLE_SPAN])  # a table by PC; too wide for one: a search
@pytest.mark.parametrize("no_pc_line", [-1, 99])
def test_lines_of_pcs_is_a_lookup_per_record(span, no_pc_line):
    rng = np.random.default_rng(5)
    base = 0x7FFF_0000_0000
    pcs = np.unique(base + 4 * rng.integers(0, span // 4, 50)).astype(np.uint64)
    lines = rng.permutation(len(pcs)).astype(np.int64)
    # listed PCs, PCs between them, below the first, past the last, far away, and 0
    pc = np.concatenate([pcs, pcs + 2, pcs[:1] - 4, pcs[-1:] + 4, [base << 4, 0, 0]]).astype(np.uint64)
    pc = pc[rng.permutation(len(pc))]
    line_of = dict(zip(pcs.tolist(), lines.tolist()))
    want = [no_pc_line if p == 0 else line_of.get(p, -1) for p in pc.tolist()]
    assert lines_of_pcs(pc, pcs, lines, no_pc_line).tolist() == want
    nothing_listed = [no_pc_line if p == 0 else -1 for p in pc.tolist()]
    assert lines_of_pcs(pc, pcs[:0], lines[:0], no_pc_line).tolist() == nothing_listed


def test_median_is_numpys():
    rng = np.random.default_rng(2)
    for n in (1, 2, 3, 4, 7, 50, 51):
        for a in (rng.integers(-(10**12), 10**12, n).astype(np.float64), rng.random(n), rng.integers(0, 9, n)):
            assert median(a) == float(np.median(a))


def test_distinct_is_unique():
    rng = np.random.default_rng(1)
    for a in (np.zeros(0, np.int64), np.array([3, 3, 1, 2, 2, 9], np.int32), rng.integers(0, 50, 999).astype("u8")):
        got = distinct(a)
        assert np.array_equal(got, np.unique(a)) and got.dtype == a.dtype
