"""`Table`: analysis results as named numpy columns, the shape notebooks and scripts want.

A Table is a read-only mapping of column name -> 1-D numpy array (all of one length), so
`pandas.DataFrame(table)` works without attdec depending on pandas, and `table["stall"].sum()` is numpy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np


class Table(Mapping[str, np.ndarray]):
    """Named columns of equal length. Build it from rows (`Table.from_rows`) or from columns."""

    def __init__(self, columns: Mapping[str, np.ndarray]):
        self._cols = {k: np.asarray(v) for k, v in columns.items()}
        lengths = {len(v) for v in self._cols.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: { {k: len(v) for k, v in self._cols.items()} }")

    @classmethod
    def from_rows(cls, rows: list[dict], columns: list[str] | None = None) -> Table:
        """A table of dict rows; `columns` fixes the order (and the columns of an empty table)."""
        names = columns or (list(rows[0]) if rows else [])
        return cls({n: _column([r.get(n) for r in rows]) for n in names})

    def __getitem__(self, name: str) -> np.ndarray:
        return self._cols[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._cols)

    def __len__(self) -> int:
        """Number of columns (Mapping semantics); the number of rows is `rows`."""
        return len(self._cols)

    @property
    def nrows(self) -> int:
        return len(next(iter(self._cols.values()))) if self._cols else 0

    def records(self) -> list[dict]:
        """The rows as plain-Python dicts (JSON-ready)."""
        cols = {k: v.tolist() for k, v in self._cols.items()}
        return [{k: cols[k][i] for k in cols} for i in range(self.nrows)]

    def __repr__(self) -> str:
        return f"Table({self.nrows} rows: {', '.join(self._cols)})"


def _column(values: list) -> np.ndarray:
    """Integers stay int64, floats float64, everything else (text, None) an object array."""
    if values and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return np.asarray(values, np.int64)
    if values and all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in values):
        return np.asarray(values, np.float64)
    out = np.empty(len(values), object)
    out[:] = values
    return out
