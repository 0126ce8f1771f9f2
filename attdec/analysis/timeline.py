"""Wave timelines as run-length tracks, at a time resolution that fits a size budget.

A wave's life is a sequence of runs [start, end) with one value each: its `WaveState` (from
`Wave.timeline`) or the `Category` of the instruction it was issuing (from `Wave.insts`, 0 between
instructions). A 4 MB capture holds ~400K state runs and ~1M instructions, far more than a page or a
trace viewer should carry, so `tracks` coarsens them onto a grid of `resolution` cycles (a power of
two, 1 = exact): a grid cell that several runs share takes the value that covers most of it, cells
inside one run keep its value, and equal neighbours merge. Everything is vectorised over all waves.
"""

from __future__ import annotations

import itertools

import numpy as np

from attdec.model import Category, Wave, WaveState
from attdec.model.record import Record
from attdec.model.totals import distinct

KINDS = ("state", "category")


class Tracks(Record):
    """Runs of many waves: run i is [start[i], next start) of wave `wave[i]`; a wave's last run ends at its end."""

    kind: str  # "state" (values are WaveState) or "category" (values are Category)
    resolution: int  # cycles per grid cell; 1 = the exact runs
    wave: np.ndarray  # index into the waves given, non-decreasing
    start: np.ndarray  # absolute cycles, increasing within a wave
    value: np.ndarray
    exact_runs: int  # how many runs there were before coarsening

    def of_wave(self, i: int) -> slice:
        lo, hi = np.searchsorted(self.wave, [i, i + 1])
        return slice(int(lo), int(hi))


def _clip(w, s, e, v, ends):
    """Runs clipped to their wave's end (some traces run a wave's last instruction past it), empty ones dropped."""
    e = np.minimum(e, ends[w])
    keep = e > s
    return w[keep], s[keep], e[keep], v[keep]


def state_runs(waves: list[Wave]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(wave index, start, end, WaveState) of every timeline entry of every wave."""
    parts = [np.asarray(w.timeline, np.int64).reshape(-1, 2) for w in waves]
    n = np.array([len(p) for p in parts], np.int64)
    if not n.sum():
        z = np.zeros(0, np.int64)
        return z, z, z, z
    tl = np.concatenate(parts)
    wi = np.repeat(np.arange(len(waves)), n)
    begins = np.array([w.begin for w in waves], np.int64)
    ends = np.array([w.end for w in waves], np.int64)
    cum = np.cumsum(tl[:, 1])
    first = np.repeat(np.cumsum(n) - n, n)  # per entry: index of its wave's first entry
    before = cum - tl[:, 1] - (cum[first] - tl[first, 1])  # sum of this wave's earlier durations
    s = begins[wi] + before
    return _clip(wi, s, s + tl[:, 1], tl[:, 0], ends)


def category_runs(waves: list[Wave]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(wave index, start, end, Category) of every issued instruction, and Category.NONE for the gaps.

    An instruction's run lasts its duration, cut at the next instruction's issue (so runs never overlap).
    """
    n = np.array([len(w.insts) for w in waves], np.int64)
    if not n.sum():
        z = np.zeros(0, np.int64)
        return z, z, z, z
    t, duration, category = _inst_columns(waves)
    begins = np.array([w.begin for w in waves], np.int64)
    ends = np.array([w.end for w in waves], np.int64)
    return _category_runs(n, t, duration, category.astype(np.int64), begins, ends)


def _inst_columns(waves: list[Wave]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nonempty = [w.insts for w in waves if len(w.insts)]
    return tuple(np.concatenate([x[f] for x in nonempty]) for f in ("time", "duration", "category"))  # type: ignore[return-value]


def _category_runs(n, t, duration, category, begins, ends):
    """`category_runs` of waves with `n` instructions each (`n.sum()` > 0), from their instructions' columns
    and the waves' begins and ends; every column of one integer type, which the results keep."""
    wi = np.repeat(np.arange(len(n), dtype=t.dtype), n)
    last = np.cumsum(n)[n > 0] - 1
    nxt = np.empty_like(t)
    nxt[:-1] = t[1:]
    nxt[last] = np.maximum(ends[wi[last]], t[last])  # a wave's last instruction runs at most to its end
    e = np.maximum(np.minimum(t + duration, nxt), t)
    # Each instruction and the gap after it side by side, clipped to the wave's end (some traces run a wave's
    # last instruction past it) and empty ones dropped; then the gap before each wave's first instruction,
    # put where it goes: all four columns are gathered through one index (an insert is a pass per column).
    end = ends[wi]
    first = last - n[n > 0] + 1
    lead = wi[first], begins[wi[first]], np.minimum(t[first], end[first]), np.zeros(len(first), t.dtype)
    gap = np.flatnonzero(lead[2] > lead[1])  # the waves that begin before their first instruction
    size = 2 * len(t)
    pair = [np.empty(size + len(gap), t.dtype) for _ in range(4)]
    for x, a, b, y in zip(pair, (wi, t, np.minimum(e, end), category), (wi, e, np.minimum(nxt, end), 0), lead):
        x[0:size:2], x[1:size:2], x[size:] = a, b, y[gap]
    kept = np.flatnonzero(pair[2][:size] > pair[1][:size])
    at = np.searchsorted(kept, 2 * first[gap])  # where each lead goes among the kept runs
    order = np.insert(kept, at, np.arange(size, size + len(gap)))
    w, s, en, v = (x.take(order) for x in pair)
    return w, s, en, v


def _category_runs_from_base(waves: list[Wave]):
    """`category_runs` as (wave, start - base, end - base, Category, base): int32 from a base aligned to
    2**ALIGN cycles when every time fits (the runs are built narrow, half the memory to stream through),
    else int64 from 0."""
    n = np.array([len(w.insts) for w in waves], np.int64)
    if not n.sum():
        z = np.zeros(0, np.int64)
        return z, z, z, z, 0
    t, duration, category = _inst_columns(waves)
    begins = np.array([w.begin for w in waves], np.int64)
    ends = np.array([w.end for w in waves], np.int64)
    base = (min(int(t.min()), int(begins.min())) >> ALIGN) << ALIGN
    top = max(int(ends.max()), int(t.max()) + max(int(duration.max()), 0))
    bottom = int(t.min()) + min(int(duration.min()), 0)
    if top - base >= 1 << 30 or bottom - base <= -(1 << 30):  # grid lines up to 2**ALIGN past the end fit too
        return (*_category_runs(n, t, duration, category.astype(np.int64), begins, ends), 0)
    t32, begins32, ends32 = ((x - base).astype(np.int32) for x in (t, begins, ends))
    runs = _category_runs(n, t32, duration.astype(np.int32), category.astype(np.int32), begins32, ends32)
    return (*runs, base)


def _merge(w, s, v):
    """Drop runs that continue the previous run of the same wave with the same value."""
    if not len(w):
        return w, s, v
    keep = np.ones(len(w), bool)
    keep[1:] = (w[1:] != w[:-1]) | (v[1:] != v[:-1])
    return w[keep], s[keep], v[keep]


def _dominant(group, ngroups: int, cv, cov) -> np.ndarray:
    """Per group (`group`: each entry's, 0..ngroups-1), the value whose entries' `cov` sums most, the smaller
    value on ties.

    One weighted bincount over (group, value rank) cells, then an argmax per group (the first maximum is the
    smallest value). Float sums are exact below 2**53, far above any cell's coverage.
    """
    present = np.bincount(cv) > 0
    vals = np.flatnonzero(present)
    rank = np.cumsum(present) - 1
    sums = np.bincount(group * len(vals) + rank[cv], weights=cov, minlength=ngroups * len(vals))
    return vals[sums.reshape(ngroups, len(vals)).argmax(axis=1)]


def coarsen(w, s, e, v, q: int):
    """Runs onto a grid of `q` cycles: (wave, start, value) with equal neighbours merged.

    Non-overlapping runs per wave, in time order, are assumed. Grid cells holding a run boundary take
    the value that covers most of the cell (ties: the smaller value); cells strictly inside a run keep
    its value. No sort is needed: a wave's runs visit the cells in order, each run touching its first
    cell, maybe some whole cells, and its last cell, so one pass in run order yields the result.
    """
    if q <= 1:
        return _merge(w, s, v)
    if not len(w):
        return w, s, v
    sb, eb = s // q, (e - 1) // q
    # Contributions in time order: each run's first cell, then its last cell when that is another one
    # (`two`: those runs; `pos_b`: where their last cells go).
    two_cells = eb > sb
    two = np.flatnonzero(two_cells)
    pos_b = two + np.arange(1, len(two) + 1)
    reps = two_cells + np.intp(1)
    at = np.repeat(np.arange(len(w)), reps)  # one repeat, then gathers: a repeat per column is several times slower
    cell, cw, cv = sb.take(at), w.take(at), v.take(at)
    cov = (np.minimum(e, (sb + 1) * q) - s).take(at)
    cell[pos_b] = eb[two]
    cov[pos_b] = e[two] - eb[two] * q
    m = len(cell)
    # Cell groups (one cell of one wave) are numbered in order; per group, the value covering most of it,
    # the smaller value winning ties.
    new = np.ones(m, bool)
    new[1:] = (cell[1:] != cell[:-1]) | (cw[1:] != cw[:-1])
    heads = np.flatnonzero(new)
    ngroups = len(heads)
    group_of = np.cumsum(new, dtype=np.intp) - 1
    dominant = _dominant(group_of, ngroups, cv, cov)
    # Segments in time order: one per cell group, and after a run's first cell the whole cells inside it
    # (a cell starts at most one run that reaches past it, so at most one such segment follows a group).
    spans = eb[two] - sb[two] >= 2
    inner = two[spans]
    after = group_of[pos_b[spans] - 1]  # (increasing)
    reps = np.ones(ngroups, np.intp)
    reps[after] = 2
    group = np.repeat(np.arange(ngroups), reps)
    at = heads.take(group)
    W, S, V = cw.take(at), cell.take(at) * q, dominant.take(group)
    pos_i = after + np.arange(1, len(after) + 1)
    W[pos_i], S[pos_i], V[pos_i] = w[inner], (sb[inner] + 1) * q, v[inner]
    first = np.flatnonzero(np.r_[True, w[1:] != w[:-1]])
    first_start = np.zeros(int(w.max()) + 1, np.int64)
    first_start[w[first]] = s[first]
    S = np.maximum(S, first_start[W])  # the first cell starts where the wave does, not at the grid line
    return _merge(W, S, V)


def _upper_bound(s, e, q: int, new_wave) -> int:
    """At least as many runs as `coarsen(..., q)` gives, counted without sorting: grid cells holding a run
    boundary (the cells of a wave's consecutive boundaries never decrease) plus one per run spanning whole cells.
    `new_wave`: whether each run but the first starts another wave (the same for every `q`)."""
    sb, eb = s // q, (e - 1) // q
    if not len(s):
        return 0
    moved = sb[1:] != eb[:-1]  # a run starts in another cell than the previous one ended in
    moved |= new_wave
    return 1 + int(np.count_nonzero(eb != sb)) + int(np.count_nonzero(moved)) + int(np.count_nonzero(eb - sb >= 2))


# The coarsest grid `tracks` tries, 2**COARSEST cycles (minutes at GHz clocks): every wave is one run or two there,
# so a budget below the number of waves gives this grid, over budget.
COARSEST = 40


# Waves are turned into runs and coarsened a group at a time, about this many records per group: the
# temporaries of a big trace stay a fraction of its records' memory instead of several times it.
CHUNK_RECORDS = 1 << 18
ALIGN = 24  # chunks hold times from a multiple of 2**ALIGN cycles, in int32 when they fit


def _chunks(waves: list[Wave], kind: str) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]]:
    """The runs of `kind` of consecutive groups of waves (wave indices global), equal neighbours merged:
    (wave, start - base, end - base, value, base) per group."""
    sizes = np.array([len(w.timeline) if kind == "state" else len(w.insts) for w in waves], np.int64)
    cuts = [0, *np.flatnonzero(np.diff(np.cumsum(sizes) // CHUNK_RECORDS)) + 1, len(waves)]
    out = []
    for lo, hi in itertools.pairwise(cuts):
        if hi <= lo:
            continue
        if kind == "state":
            w, s, e, v = state_runs(waves[lo:hi])
            base = 0
        else:
            w, s, e, v, base = _category_runs_from_base(waves[lo:hi])
        if not len(w):
            continue
        head = np.ones(len(w), bool)  # equal neighbours merged first: the same cells, fewer runs to coarsen
        head[1:] = (w[1:] != w[:-1]) | (v[1:] != v[:-1]) | (s[1:] != e[:-1])
        if head.all():
            w = w + lo
        else:
            last = np.r_[np.flatnonzero(head)[1:] - 1, len(w) - 1]
            w, s, e, v = w[head] + lo, s[head], e[last], v[head]
        if s.dtype == np.int32:
            out.append((w, s, e, v, base))
            continue
        # Narrower columns, less memory to stream through: times from a base on every grid up to 2**ALIGN.
        base = (int(s.min()) >> ALIGN) << ALIGN
        if int(e.max()) - base < 1 << 30:  # grid lines up to 2**ALIGN past the end fit too
            w, s, e, v = (
                w.astype(np.int32),
                (s - base).astype(np.int32),
                (e - base).astype(np.int32),
                v.astype(np.int32),
            )
        else:
            base = 0
        out.append((w, s, e, v, base))
    return out


# A grid that does not fit the budget is given up as soon as the runs so far exceed it: coarsened this many runs
# (whole waves) at a time, so that a grid finer than the answer costs about the share of the budget it reaches.
PIECE_RUNS = 1 << 16


def _pieces(w: np.ndarray):
    """Slices of a chunk of runs (sorted by wave) holding whole waves, about PIECE_RUNS runs each."""
    cuts = distinct(np.searchsorted(w, w[PIECE_RUNS : len(w) : PIECE_RUNS]))
    return [slice(int(a), int(b)) for a, b in itertools.pairwise([0, *cuts.tolist(), len(w)]) if b > a]


def _coarsened(chunks, q: int, limit: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """`coarsen` of every chunk (a wave's runs are coarsened on their own, so chunks are independent);
    None once more than `limit` runs came out (the rest is not coarsened)."""
    parts = []
    count = 0
    for w, s, e, v, base in chunks:
        if q > 1 << ALIGN or base % q:  # a grid coarser than the base's alignment: absolute times
            s, e, base = s.astype(np.int64) + base, e.astype(np.int64) + base, 0
        for p in _pieces(w):
            W, S, V = coarsen(w[p], s[p], e[p], v[p], q)
            count += len(W)
            if limit is not None and count > limit:
                return None
            parts.append((W.astype(np.int64), S.astype(np.int64) + base, V.astype(np.int64)))
    if not parts:
        z = np.zeros(0, np.int64)
        return z, z, z
    return tuple(np.concatenate(c) for c in zip(*parts))  # type: ignore[return-value]


def tracks(waves: list[Wave], kind: str = "state", budget: int | None = None) -> Tracks:
    """The runs of `kind` at the finest power-of-two resolution that gives at most `budget` runs (at most
    2**COARSEST cycles: fewer runs than waves do not exist)."""
    chunks = _chunks(waves, kind)
    exact_runs = sum(1 + int(np.count_nonzero((w[1:] != w[:-1]) | (v[1:] != v[:-1]))) for w, _s, _e, v, _b in chunks)
    if budget is None or exact_runs <= budget:
        exact = _coarsened(chunks, 1)
        assert exact is not None
        return Tracks(kind, 1, exact[0], exact[1], exact[2], exact_runs)
    # Runs about halve each time the grid doubles, so the exact count over the budget guesses the answer:
    # the guess and its neighbour (one step finer if the guess fits, else one coarser) are tried first,
    # usually the only two coarsenings. Failing that, a bisection between grids known not to fit (`lo`,
    # 0 = exact) and to fit (`hi`, from the cheap upper bound when no coarsening has fitted yet).
    done: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray] | None] = {}  # None: does not fit

    def fits(h: int) -> bool:
        if h not in done:
            done[h] = _coarsened(chunks, 1 << h, budget)
        return done[h] is not None

    guess = max(1, min(COARSEST, int(np.ceil(np.log2(exact_runs / max(budget, 1))))))
    if fits(guess):
        lo, hi = (guess - 1, guess) if guess > 1 and not fits(guess - 1) else (0, guess)
    elif guess == COARSEST or fits(guess + 1):
        lo, hi = guess, min(guess + 1, COARSEST)
    else:
        lo, hi, step = guess + 1, guess + 2, 1
        bound = [
            (s.astype(np.int64) + b, e.astype(np.int64) + b, np.r_[True, w[1:] != w[:-1]]) for w, s, e, _v, b in chunks
        ]
        while hi < COARSEST and sum(_upper_bound(s, e, 1 << hi, nw[1:]) for s, e, nw in bound) > budget:
            hi, step = min(hi + step, COARSEST), 2 * step
        hi = min(hi, COARSEST)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    best = done.get(hi) or _coarsened(chunks, 1 << hi)
    assert best is not None
    return Tracks(kind, 1 << hi, best[0], best[1], best[2], exact_runs)


def value_names(kind: str) -> list[str]:
    """Display names of a track kind's values, by value."""
    enum = WaveState if kind == "state" else Category
    return [m.name for m in sorted(enum, key=int)]


def spread_sample(sizes: list[int], budget: int) -> list[int]:
    """Indices of items to keep whole so that their sizes sum to at most `budget`, spread evenly over the list.

    Used to embed the instructions of some waves when all of them would not fit.
    """
    n, total = len(sizes), sum(sizes)
    if total <= budget:
        return list(range(n))
    m = max(1, min(n, int(budget * n / max(total, 1))))
    while m > 0:
        pick = sorted({int(i * n / m) for i in range(m)})
        if sum(sizes[i] for i in pick) <= budget:
            return pick
        m -= 1
    return []


def split_budget(needs: list[int], budget: int) -> list[int]:
    """Share `budget` among consumers: each gets what it needs, the largest ones share what is left equally."""
    out = [0] * len(needs)
    left, rest = budget, sorted(range(len(needs)), key=lambda i: needs[i])
    while rest:
        share = left // len(rest)
        i = rest.pop(0)
        out[i] = min(needs[i], share)
        left -= out[i]
    return out


def assign_lanes(waves: list[Wave]) -> tuple[list[tuple[int, int, int, int, int]], list[int]]:
    """Lanes for drawing: one per (se, cu, simd, slot) in that order, and the lane of each wave.

    A slot holds one wave at a time, so its waves follow each other in one lane; should two overlap (a
    damaged trace), the later one goes to an extra lane of that slot, the fifth key field numbering them.
    """
    by_slot: dict[tuple[int, int, int, int], list[int]] = {}
    for i, w in enumerate(waves):
        by_slot.setdefault((w.se, w.cu, w.simd, w.slot), []).append(i)
    keys: list[tuple[int, int, int, int, int]] = []
    lane_of = [0] * len(waves)
    for slot in sorted(by_slot):
        ends: list[int] = []  # last end of each lane of this slot
        for i in sorted(by_slot[slot], key=lambda i: waves[i].begin):
            sub = next((k for k, e in enumerate(ends) if e <= waves[i].begin), len(ends))
            if sub == len(ends):
                ends.append(0)
                keys.append((*slot, sub))
            ends[sub] = waves[i].end
            lane_of[i] = len(keys) - len(ends) + sub
    return keys, lane_of
