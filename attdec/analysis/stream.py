"""Many waves' executed instructions back to back, so per-wave analyses run as whole-array numpy passes.

A raw capture holds about a million instruction records spread over tens to hundreds of waves; looping
over waves in Python costs little, looping over records costs seconds. `Stream` concatenates the
records of the chosen waves (each wave's records in time order, waves one after the other) and keeps
which wave each record belongs to, and `by_line` looks a per-listing-line table up for every record.
"""

from __future__ import annotations

import numpy as np

from attdec.model import INST_DTYPE, Wave
from attdec.model.record import Record, field


class Stream(Record):
    """Records of `waves` back to back: `wave[i]` = index into `waves` of record i, `starts[k]:starts[k + 1]`
    = the records of waves[k]; `col(name)` = one INST_DTYPE field of every record."""

    waves: list[Wave]
    wave: np.ndarray
    starts: np.ndarray
    _cols: dict = field(default_factory=dict)
    _index: tuple | None = None  # (table size, clipped line per record)

    def __len__(self) -> int:
        return int(self.starts[-1])

    def col(self, name: str) -> np.ndarray:
        """Field `name` (time, stall, duration, line, ...) of every record, concatenated on first use: one
        column is a fraction of the whole 41-byte record."""
        if name not in self._cols:
            parts = [w.insts[name] for w in self.waves]
            self._cols[name] = np.concatenate(parts) if parts else np.zeros(0, INST_DTYPE[name])
        return self._cols[name]

    @property
    def lines(self) -> np.ndarray:
        return self.col("line")

    def by_line(self, table: np.ndarray, default=-1) -> np.ndarray:
        """`table[line]` for every record (`default` where the line is unknown or outside the table)."""
        n = len(table)
        if self._index is None or self._index[0] != n:
            lines = self.lines
            self._index = (n, np.where((lines >= 0) & (lines < n), lines, n))
        return np.append(table, np.array(default, table.dtype))[self._index[1]]


def stream_of(waves: list[Wave]) -> Stream:
    """The records of `waves`, in the given wave order."""
    sizes = np.array([len(w.insts) for w in waves], np.int64)
    starts = np.zeros(len(waves) + 1, np.int64)
    np.cumsum(sizes, out=starts[1:])
    return Stream(list(waves), np.repeat(np.arange(len(waves)), sizes), starts)


def line_table(code, value, default, dtype=np.int64) -> np.ndarray:
    """Array indexed by listing line id: `value(code_line)` for instruction rows, `default` elsewhere."""
    size = max((c.line for c in code), default=-1) + 1
    table = np.full(max(size, 1), default, dtype)
    for c in code:
        if c.line >= 0 and not c.is_label:
            table[c.line] = value(c)
    return table


def group_quantiles(values: np.ndarray, sizes: np.ndarray, qs) -> list[np.ndarray]:
    """Per group, the quantiles `qs` (linear interpolation, as numpy.percentile) of `values`, which holds
    the groups back to back, each sorted ascending, `sizes[g]` values each. Empty groups give nan."""
    sizes = np.asarray(sizes, np.int64)
    start = np.cumsum(sizes) - sizes
    out = []
    for q in qs:
        pos = (np.maximum(sizes, 1) - 1) * q
        lo = np.floor(pos).astype(np.int64)
        hi = np.ceil(pos).astype(np.int64)
        res = np.full(len(sizes), np.nan)
        ok = sizes > 0
        if ok.any():
            a, b = values[start[ok] + lo[ok]], values[start[ok] + hi[ok]]
            res[ok] = a + (b - a) * (pos[ok] - lo[ok])
        out.append(res)
    return out
