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
from attdec.analysis.occupancy import achieved_occupancy
from attdec.isa import categories as C
from attdec.isa.categories import InstClass
from attdec.model import Dispatch

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
    out = np.full(top + 1, UTIL_CLASSES.index("OTHER"), np.int64)
    for c in d.code:
        if not c.is_label:
            out[c.line] = UTIL_CLASSES.index(UTIL_CLASS_OF.get(C.class_of(c.text, d.target), "OTHER"))
    return out


_FIELDS = {"time": "time", "duration": "dur", "stall": "stall"}  # instruction record field -> column here


def _executed(d: Dispatch) -> dict[str, np.ndarray]:
    """Time, duration, stall, class and SIMD index of every executed instruction with a known line
    (`attdec hotspots` leaves the others out of its totals), plus the SIMD keys (se, cu, simd)."""
    waves = [w for w in d.waves if len(w.insts)]
    simds = sorted({(w.se, w.cu, w.simd) for w in d.waves})
    if not waves:
        z = np.zeros(0, np.int64)
        return {"time": z, "dur": z, "stall": z, "cls": z, "simd": z, "simds": np.array(simds, np.int64)}
    index = {k: i for i, k in enumerate(simds)}
    simd = np.repeat(np.array([index[(w.se, w.cu, w.simd)] for w in waves], np.int64), [len(w.insts) for w in waves])
    # Field by field: joining the packed records whole is several times slower.
    line, *rest = (np.concatenate([w.insts[f] for w in waves]).astype(np.int64) for f in ("line", *_FIELDS))
    cols = dict(zip(_FIELDS.values(), rest))
    keep = line >= 0
    if not keep.all():
        line, simd = line[keep], simd[keep]
        cols = {k: v[keep] for k, v in cols.items()}
    classes = _line_classes(d)
    cls = np.full(len(line), UTIL_CLASSES.index("OTHER"), np.int64)
    known = line < len(classes)
    cls[known] = classes[line[known]]
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
    t0 = min([w.begin for w in d.waves] + ([int(ex["time"].min())] if len(ex["time"]) else []))
    t1 = max([w.end for w in d.waves] + ([int((ex["time"] + ex["dur"]).max())] if len(ex["time"]) else []))
    q, nb = _grid(t0, max(t1, t0 + 1), UTIL_BINS)
    n = len(ex["simds"])
    group = ex["simd"] * len(UTIL_CLASSES) + ex["cls"]
    busy = busy_bins(ex["time"], ex["dur"] - ex["stall"], group, n * len(UTIL_CLASSES), t0, q, nb)
    busy = busy.reshape(n, len(UTIL_CLASSES), nb)
    hits = np.bincount(group, minlength=n * len(UTIL_CLASSES)).reshape(n, len(UTIL_CLASSES))
    return {
        "t0": int(t0),
        "q": int(q),
        "bins": int(nb),
        "simds": ex["simds"].tolist(),
        "busy": busy,  # packed by the caller
        "cycles": busy.sum(axis=2).tolist(),  # per SIMD, per class
        "hits": hits.tolist(),
    }


def histogram(d: Dispatch, ex: dict[str, np.ndarray]) -> dict | None:
    """Latency, stall and instructions issued per time bin (an instruction counts in the bin it issued in)."""
    if not len(ex["time"]):
        return None
    t0, t1 = int(ex["time"].min()), int(ex["time"].max()) + 1
    q, nb = _grid(t0, t1, HIST_BINS)
    b = (ex["time"] - t0) // q
    return {
        "t0": t0,
        "q": int(q),
        "latency": np.bincount(b, weights=ex["dur"], minlength=nb).astype(np.int64),
        "stall": np.bincount(b, weights=ex["stall"], minlength=nb).astype(np.int64),
        "hits": np.bincount(b, minlength=nb).astype(np.int64),
    }


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


def occupancy_summary(d: Dispatch) -> dict | None:
    """`attdec kernel`'s achieved occupancy of this dispatch (all CUs' wave start/end records)."""
    a = achieved_occupancy(d.occupancy) if d.occupancy is not None else None
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
    for s in np.unique(se).tolist():
        at = se == s
        for k, v in edges.items():
            out[k][at] = clock.seconds(s, v[at]) * 1e6
    return out


def views(d: Dispatch, pack, notes: list[str], clock: Clock | None = None) -> dict:
    """Everything views.js draws for one dispatch; `pack` turns numeric arrays into the page's typed arrays,
    `clock` is the dispatch's `Clock` when the caller has one already."""
    ex = _executed(d)
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
        "occupancy": occupancy_summary(d),
        "realtime": {k: pack(v) for k, v in rt.items()} if (rt := realtime(d, clock or Clock(d))) is not None else None,
    }
