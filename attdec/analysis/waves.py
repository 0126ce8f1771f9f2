"""Per-wave summary: where and when each traced wave ran, how much it executed and stalled, and on what."""

from __future__ import annotations

import posixpath

import numpy as np

from attdec.analysis import RENAMED_COLUMNS, norm_path
from attdec.analysis.classify import STALL_TYPES, StallType, line_type_table
from attdec.model import Dispatch, WaveTable
from attdec.model.record import Record, field


class WaveRow(Record):
    dispatch: str
    se: int
    simd: int
    slot: int
    wave: int  # wv<N>: n-th wave of its slot
    cu: int
    begin: int
    end: int
    duration: int
    instructions: int
    latency: int
    stall: int
    stall_share: float  # stall / duration: fraction of the wave's life spent stalled
    dominant_type: str | None
    by_type: dict[str, int] = field(default_factory=dict)
    path: str | None = None
    kernel: str = ""
    stall_measured: bool = True  # False: the input has no stall (rocprofv2); `stall` is 0, not measured

    def __init__(
        self, dispatch, se, simd, slot, wave, cu, begin, end, duration, instructions, latency, stall, stall_share,
        dominant_type, by_type=None, path=None, kernel="", stall_measured=True,
    ):  # fmt: skip
        # made once per wave printed (a million for a big capture): the generic Record.__init__ is 5x slower
        self.dispatch = dispatch
        self.se = se
        self.simd = simd
        self.slot = slot
        self.wave = wave
        self.cu = cu
        self.begin = begin
        self.end = end
        self.duration = duration
        self.instructions = instructions
        self.latency = latency
        self.stall = stall
        self.stall_share = stall_share
        self.dominant_type = dominant_type
        self.by_type = {} if by_type is None else by_type
        self.path = path
        self.kernel = kernel
        self.stall_measured = stall_measured


def dispatch_labels(dispatches: list[Dispatch]) -> list[str]:
    """A name per dispatch that tells them apart: the folder name, or when two share it (runs in different
    parents), the path below what all of them share."""
    names = [d.name for d in dispatches]
    if len(set(names)) == len(names) or not all(d.path for d in dispatches):
        return names
    paths = [norm_path(str(d.path)) for d in dispatches]
    try:
        root = posixpath.commonpath(paths) if len(paths) > 1 else ""
    except ValueError:
        return paths
    return [p[len(root) :].lstrip("/") or p for p in paths]


BLOCK = 1 << 16  # waves per block: the per-row arrays of a million waves at once would be 100s of MB

# WaveRow's fields up to `stall_share`, as WaveRows columns (after the dispatch number)
ROW_COLUMNS = (
    *("dispatch", "se", "simd", "slot", "wave", "cu", "begin", "end", "duration", "instructions", "latency"),
    *("stall", "stall_share"),
)


class WaveRows:
    """The rows of `waves` as columns, so that a million waves hold no million objects: `cols` name -> array
    (`dispatch` indexes `labels`/`kernels`/`measured`, the others are WaveRow fields), `by_type` the stall
    per STALL_TYPES column, `paths` the wave files (None: none). Iterating gives WaveRow objects, made a
    block at a time."""

    def __init__(self, cols, by_type, labels, kernels, measured, paths=None):
        self.cols, self.by_type, self.paths = cols, by_type, paths
        self.labels, self.kernels, self.measured = labels, kernels, measured

    def __len__(self) -> int:
        return len(self.by_type)

    def take(self, idx: np.ndarray) -> WaveRows:
        paths = None if self.paths is None else [self.paths[i] for i in idx.tolist()]
        cols = {k: v[idx] for k, v in self.cols.items()}
        return WaveRows(cols, self.by_type[idx], self.labels, self.kernels, self.measured, paths)

    @classmethod
    def concat(cls, parts: list[WaveRows]) -> WaveRows:
        """The parts one after the other (their dispatch numbers made one series)."""
        if len(parts) == 1:
            return parts[0]
        if not parts:
            none = {k: np.zeros(0, np.int64) for k in ROW_COLUMNS}
            return cls(none, np.zeros((0, len(STALL_TYPES)), np.int64), [], [], [])
        labels: list[str] = []
        kernels: list[str] = []
        measured: list[bool] = []
        cols = []
        for p in parts:
            c = dict(p.cols)
            c["dispatch"] = c["dispatch"] + len(labels)
            cols.append(c)
            labels += p.labels
            kernels += p.kernels
            measured += p.measured
        paths = None
        if any(p.paths is not None for p in parts):
            paths = [x for p in parts for x in (p.paths if p.paths is not None else [None] * len(p))]
        joined = {k: np.concatenate([c[k] for c in cols]) for k in ROW_COLUMNS}
        by_type = np.concatenate([p.by_type for p in parts])
        return cls(joined, by_type, labels, kernels, measured, paths)

    def sorted(self, key: str) -> WaveRows:
        """`position` keeps the order (se/simd/slot/wv within each dispatch); any other key sorts largest first
        (begin/end/cu: smallest), then by position within a dispatch, dispatches in their order."""
        if key == "position":
            return self
        key = RENAMED_COLUMNS.get(key, key)
        c = self.cols
        k = c[key] if key in ("begin", "end", "cu") else -c[key]
        return self.take(np.lexsort((c["wave"], c["slot"], c["simd"], c["se"], k)))

    def head(self, n: int) -> WaveRows:
        return self.take(np.arange(min(n, len(self))))

    def __iter__(self):
        c, names = self.cols, STALL_TYPES
        for a in range(0, len(self), BLOCK):
            b = min(len(self), a + BLOCK)
            values = [c[k][a:b].tolist() for k in ROW_COLUMNS]
            paths = self.paths[a:b] if self.paths is not None else [None] * (b - a)
            for (d, *fields), per, path in zip(zip(*values), self.by_type[a:b].tolist(), paths):
                by_type = {names[i]: v for i, v in enumerate(per) if v}
                stall = fields[-2]
                dom = max(by_type.items(), key=lambda kv: (kv[1], -names.index(kv[0])))[0] if stall else None
                yield WaveRow(
                    self.labels[d], *fields, dom, by_type, path, self.kernels[d], self.measured[d]
                )  # fmt: skip


def wave_columns(dispatch: Dispatch, wave_filter=None, label: str | None = None) -> WaveRows:
    """The rows of `wave_rows` as columns (in se/simd/slot/wv order): from a WaveTable (a big blob's folded
    waves) without an object per wave."""
    waves = dispatch.waves
    if not isinstance(waves, WaveTable):  # Wave objects: filtered as they are, then made columns
        t = WaveTable.of(waves if wave_filter is None else [w for w in waves if wave_filter(w)], keep_lines=True)
    elif wave_filter is not None:
        t = waves.filter(wave_filter)
    else:
        t = waves
    n, nt = len(t), len(STALL_TYPES)
    order = np.lexsort((t.waves["seq"], t.waves["slot"], t.waves["simd"], t.waves["se"]))
    w = t.waves[order]
    table = line_type_table(dispatch)
    other = STALL_TYPES.index(StallType.OTHER)
    by_type = np.zeros((n, nt), np.int64)  # made in row order: a million rows' breakdowns are held once
    for a in range(0, n, BLOCK):
        idx = order[a : a + BLOCK]
        counts = t.first[idx + 1] - t.first[idx]
        rows = np.repeat(t.first[idx] - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))
        lines = t.lines(rows)
        ok = (lines >= 0) & (lines < len(table))
        types = np.full(len(lines), other, np.int64)
        types[ok] = table[lines[ok]]
        row_wave = np.repeat(np.arange(len(idx)), counts)
        per = np.bincount(row_wave * nt + types, weights=t.stall[rows], minlength=len(idx) * nt)
        by_type[a : a + len(idx)] = per.reshape(len(idx), nt).round()
    duration = w["end"] - w["begin"]
    stall = w["stall"]
    share = np.zeros(n)
    np.divide(stall, duration, out=share, where=duration > 0)
    cols = {
        "dispatch": np.zeros(n, np.int64),
        "se": w["se"],
        "simd": w["simd"],
        "slot": w["slot"],
        "wave": w["seq"],
        "cu": w["cu"],
        "begin": w["begin"],
        "end": w["end"],
        "duration": duration,
        "instructions": w["records"],
        "latency": w["latency"],
        "stall": stall,
        "stall_share": share,
    }
    paths = None if t.paths is None else [t.paths[i] for i in order.tolist()]
    return WaveRows(cols, by_type, [label or dispatch.name], [dispatch.kernel], [dispatch.stall_measured], paths)


def wave_rows(dispatch: Dispatch, wave_filter=None, label: str | None = None) -> list[WaveRow]:
    """One row per wave of the dispatch (in se/simd/slot/wv order), optionally filtered; `label` names the
    dispatch in the rows (default: its name)."""
    return list(wave_columns(dispatch, wave_filter, label))
