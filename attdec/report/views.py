"""The data of the report's time views (drawn by assets/views.js): utilisation per instruction class and
SIMD, the latency histogram, counters over time and the occupancy summary.

Every figure here is one the command line gives too: binned sums add up to `attdec hotspots` totals
(latency, stall; busy = latency - stall) over the same waves (instructions with an unknown line left out, as
there), counters are `attdec counters`' rows and the achieved occupancy is `attdec kernel`'s. Bins hold exact
integer sums, so a range of them is exact too.
"""

from __future__ import annotations

import numpy as np

from attdec.analysis.clock import Clock
from attdec.analysis.counters import counter_report
from attdec.analysis.occupancy import Achieved, achieved_occupancy
from attdec.analysis.stream import Stream, stream_of
from attdec.isa import categories as C
from attdec.isa.categories import InstClass
from attdec.model import Dispatch
from attdec.model.totals import distinct

# The utilisation view's classes, and the InstClasses each one gathers.
UTIL_CLASSES = ("VALU", "VMEM", "SCALAR", "LDS", "MFMA", "OTHER")
UTIL_CLASS_OF = {
    InstClass.VALU: "VALU",
    InstClass.MFMA: "MFMA",
    InstClass.VMEM_LOAD: "VMEM",
    InstClass.VMEM_STORE: "VMEM",
    InstClass.FLAT: "VMEM",
    InstClass.SALU: "SCALAR",
    InstClass.SMEM: "SCALAR",
    InstClass.LDS: "LDS",
}
UTIL_BINS = 400  # time bins of the utilisation view
HIST_BINS = 200  # time bins of the latency histogram
COUNTER_POINTS = 2_000  # points per counter series; longer ones are summed into this many cells


def _line_classes(d: Dispatch) -> np.ndarray:
    """Class index of each listing line id (unknown ids: OTHER)."""
    top = max((c.line for c in d.code), default=-1)
    out = np.full(top + 1, UTIL_CLASSES.index("OTHER"), np.int8)
    for c in d.code:
        if not c.is_label:
            out[c.line] = UTIL_CLASSES.index(UTIL_CLASS_OF.get(C.class_of(c.text, d.target), "OTHER"))
    return out


_FIELDS = {"time": "time", "duration": "dur", "stall": "stall"}  # instruction record field -> column here

# Records per slice in the binning passes: their temporaries stay a few MB, reused slice after slice, instead
# of several copies of every column at once.
SLICE = 1 << 18


def _slices(n: int):
    return (slice(lo, min(lo + SLICE, n)) for lo in range(0, n, SLICE))


def _executed(d: Dispatch, stream: Stream | None = None) -> dict[str, np.ndarray]:
    """Time, duration, stall, class and SIMD index of every executed instruction with a known line
    (`attdec hotspots` leaves the others out of its totals), plus the SIMD keys (se, cu, simd).

    `stream`: the records of `d.waves` when the caller has them already (columns it gathered are shared).
    """
    st = stream_of(d.waves) if stream is None else stream
    simds = sorted({(w.se, w.cu, w.simd) for w in d.waves})
    index = {k: i for i, k in enumerate(simds)}
    simd_of_wave = np.array([index[(w.se, w.cu, w.simd)] for w in st.waves], np.int32)
    cols = {k: st.col(f) for f, k in _FIELDS.items()}
    cls = st.by_line(_line_classes(d), UTIL_CLASSES.index("OTHER"))
    simd = simd_of_wave.take(st.wave) if len(st) else np.zeros(0, np.int32)
    keep = st.lines >= 0
    if not keep.all():
        cols = {k: v[keep] for k, v in cols.items()}
        cls, simd = cls[keep], simd[keep]
    return {**cols, "cls": cls, "simd": simd, "simds": np.array(simds, np.int64)}


def _grid(t0: int, t1: int, bins: int) -> tuple[int, int]:
    """(cycles per bin, number of bins) covering [t0, t1) in at most `bins` whole-cycle bins."""
    q = max(1, -(-(t1 - t0) // bins))
    return q, max(1, -(-(t1 - t0) // q))


def busy_bins(start: np.ndarray, dur: np.ndarray, group: np.ndarray, groups: int, t0: int, q: int, nb: int):
    """Cycles of the intervals [start, start + dur) inside each of `nb` bins of `q` cycles from t0, per group:
    an int64 array (groups, nb) whose rows sum to each group's total duration (all intervals inside the grid)."""
    if not len(start):
        return np.zeros((groups, nb), np.int64)
    end = start + dur
    b0 = (start - t0) // q
    cell = group * nb + b0
    # Each interval's part in its first bin (all of it, for most); the few that reach further are added after.
    first_end = np.minimum(end, t0 + (b0 + 1) * q)
    out = np.bincount(cell, weights=first_end - start, minlength=groups * nb).astype(np.int64)
    many = np.flatnonzero(end > first_end)
    if len(many):
        e, lo, c = end[many], b0[many], cell[many]
        hi = (e - 1 - t0) // q
        np.add.at(out, c + (hi - lo), e - (t0 + hi * q))  # the last bin's part
        # whole bins in between: +q from lo+1 up to hi-1, as a difference array summed along each row
        step = np.zeros(groups * nb + 1, np.int64)
        inner = hi - lo >= 2
        np.add.at(step, (c + 1)[inner], q)
        np.add.at(step, (c + hi - lo)[inner], -q)
        out += np.cumsum(step[:-1].reshape(groups, nb), axis=1).reshape(-1)
    return out.reshape(groups, nb)


def utilization(d: Dispatch, ex: dict[str, np.ndarray]) -> dict | None:
    """Busy cycles per instruction class per SIMD over time: each instruction's latency less its stall, from
    its issue time, so that stalls show as gaps (a wait's cycles are almost all stall)."""
    if not d.waves:
        return None
    time, dur, stall = ex["time"], ex["dur"], ex["stall"]
    n = len(time)
    t0 = min([w.begin for w in d.waves] + ([int(time.min())] if n else []))
    t1 = max([w.end for w in d.waves] + [int((time[s] + dur[s]).max()) for s in _slices(n)])
    q, nb = _grid(t0, max(t1, t0 + 1), UTIL_BINS)
    groups = len(ex["simds"]) * len(UTIL_CLASSES)
    busy_flat = np.zeros((groups, nb), np.int64)
    hits = np.zeros(groups, np.int64)
    for s in _slices(n):
        group = ex["simd"][s] * len(UTIL_CLASSES) + ex["cls"][s]
        busy_flat += busy_bins(time[s], dur[s] - stall[s], group, groups, t0, q, nb)
        hits += np.bincount(group, minlength=groups)
    busy = busy_flat.reshape(len(ex["simds"]), len(UTIL_CLASSES), nb)
    return {
        "t0": int(t0),
        "q": int(q),
        "bins": int(nb),
        "simds": ex["simds"].tolist(),
        "busy": busy,  # packed by the caller
        "cycles": busy.sum(axis=2).tolist(),  # per SIMD, per class
        "hits": hits.reshape(len(ex["simds"]), len(UTIL_CLASSES)).tolist(),
    }


def histogram(d: Dispatch, ex: dict[str, np.ndarray]) -> dict | None:
    """Latency, stall and instructions issued per time bin (an instruction counts in the bin it issued in)."""
    time = ex["time"]
    if not len(time):
        return None
    t0, t1 = int(time.min()), int(time.max()) + 1
    q, nb = _grid(t0, t1, HIST_BINS)
    out = {k: np.zeros(nb, np.int64) for k in ("latency", "stall", "hits")}
    for s in _slices(len(time)):
        b = (time[s] - t0) // q
        out["latency"] += np.bincount(b, weights=ex["dur"][s], minlength=nb).astype(np.int64)
        out["stall"] += np.bincount(b, weights=ex["stall"][s], minlength=nb).astype(np.int64)
        out["hits"] += np.bincount(b, minlength=nb)
    return {"t0": t0, "q": int(q), **out}


def _series(points: list[tuple[int, int]], notes: list[str], name: str) -> dict:
    """A counter's (time, value) points as columns, summed into equal cells past the budget (totals kept)."""
    t = np.array([p[0] for p in points], np.int64)
    v = np.array([p[1] for p in points], np.int64)
    if len(t) > COUNTER_POINTS:
        q, nb = _grid(int(t[0]), int(t[-1]) + 1, COUNTER_POINTS)
        cell = (t - t[0]) // q
        sums = np.bincount(cell, weights=v, minlength=nb).astype(np.int64)
        notes.append(f"counter {name}: {len(t):,} samples summed into {nb:,} cells of {q:,} cycles")
        t, v = t[0] + np.arange(nb) * q, sums
    return {"t": t, "v": v}


def counters(d: Dispatch, notes: list[str]) -> dict:
    """`attdec counters`' rows of this dispatch: totals, per SE, and the time series where the source has one."""
    rep = counter_report(d)
    rows = [
        {
            "name": r.name,
            "block": r.block,
            "source": r.source,
            "total": r.total,
            "per_se": [list(x) for x in r.per_se],  # (xcc, se, value)
            "series": _series(r.series, notes, r.name) if r.series else None,
        }
        for r in rep.rows
    ]
    return {"rows": rows, "time_resolved": rep.time_resolved, "notes": rep.notes}


def occupancy_summary(d: Dispatch, achieved: Achieved | None = None) -> dict | None:
    """`attdec kernel`'s achieved occupancy of this dispatch (all CUs' wave start/end records); `achieved`:
    that figure when the caller has it already."""
    a = achieved or (achieved_occupancy(d.occupancy) if d.occupancy is not None else None)
    if a is None:
        return None
    return {"mean": a.mean, "peak": a.peak, "mean_per_unit": a.mean_per_unit, "simds": a.simds, "waves": a.waves}


def realtime(d: Dispatch, clock: Clock) -> dict[str, np.ndarray] | None:
    """Each wave's begin and end in µs of the reference clock (as `attdec timeline --clock realtime`, before
    it subtracts the earliest event): what lines up the SEs and dispatches. None without realtime samples."""
    if not clock or not d.waves:
        return None
    se = np.array([w.se for w in d.waves], np.int64)
    edges = {k: np.array([getattr(w, k) for w in d.waves], np.int64) for k in ("begin", "end")}
    out = {k: np.zeros(len(se)) for k in edges}
    for s in distinct(se).tolist():
        at = se == s
        for k, v in edges.items():
            out[k][at] = clock.seconds(s, v[at]) * 1e6
    return out


def views(
    d: Dispatch,
    pack,
    notes: list[str],
    clock: Clock | None = None,
    stream: Stream | None = None,
    achieved: Achieved | None = None,
) -> dict:
    """Everything views.js draws for one dispatch; `pack` turns numeric arrays into the page's typed arrays.
    `clock` (the dispatch's `Clock`), `stream` (the records of its waves) and `achieved` (its achieved
    occupancy): what the caller has already."""
    ex = _executed(d, stream)
    util = utilization(d, ex)
    if util is not None:
        util["busy"] = [[pack(row) if row.any() else None for row in per_simd] for per_simd in util["busy"]]
    hist = histogram(d, ex)
    if hist is not None:
        for k in ("latency", "stall", "hits"):
            hist[k] = pack(hist[k])
    ctr = counters(d, notes)
    for r in ctr["rows"]:
        if r["series"]:
            r["series"] = {k: pack(v) for k, v in r["series"].items()}
    hits = len(ex["time"])
    return {
        "classes": list(UTIL_CLASSES),
        "cost": float(ex["dur"].sum()) / hits if hits else None,  # latency per executed instruction
        "utilization": util,
        "histogram": hist,
        "counters": ctr,
        "occupancy": occupancy_summary(d, achieved),
        "realtime": {k: pack(v) for k, v in rt.items()} if (rt := realtime(d, clock or Clock(d))) is not None else None,
    }
