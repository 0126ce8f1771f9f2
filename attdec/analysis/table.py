"""`Table`: analysis results as named numpy columns, the shape notebooks and scripts want.

A Table is a read-only dict of column name -> 1-D numpy array (all of one length), so
`pandas.DataFrame(table)` gives one column per name without attdec depending on pandas (pandas builds a
frame column by column only from a `dict`: any other mapping it iterates, and gets a single column of
names), and `table["stall"].sum()` is numpy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NoReturn

import numpy as np


class Table(dict[str, np.ndarray]):
    """Named columns of equal length, read-only. Build it from rows (`Table.from_rows`) or from columns."""

    def __init__(self, columns: Mapping[str, np.ndarray], renamed: Mapping[str, str] | None = None):
        super().__init__((k, np.asarray(v)) for k, v in columns.items())
        lengths = {len(v) for v in self.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: { {k: len(v) for k, v in self.items()} }")
        self.renamed = dict(renamed or {})  # a column's earlier name -> its name: still read, not listed

    @classmethod
    def from_rows(cls, rows: list[dict], columns: list[str] | None = None, renamed=None) -> Table:
        """A table of dict rows; `columns` fixes the order (and the columns of an empty table)."""
        names = columns or (list(rows[0]) if rows else [])
        return cls({n: _column([r.get(n) for r in rows]) for n in names}, renamed)

    def __missing__(self, name: str) -> np.ndarray:
        if name in self.renamed:
            return self[self.renamed[name]]
        raise KeyError(name)

    def _read_only(self, *args, **kwargs) -> NoReturn:
        raise TypeError("a Table is read-only: build a new one from its columns")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _read_only

    def __reduce__(self):
        return Table, (dict(self), self.renamed)  # pickled and copied by its columns, never through __setitem__

    @property
    def nrows(self) -> int:
        """Number of rows (`len(table)` is the number of columns, as for any dict)."""
        return len(next(iter(self.values()))) if self else 0

    def records(self) -> list[dict]:
        """The rows as plain-Python dicts (JSON-ready)."""
        cols = {k: v.tolist() for k, v in self.items()}
        return [{k: cols[k][i] for k in cols} for i in range(self.nrows)]

    def __repr__(self) -> str:
        return f"Table({self.nrows} rows: {', '.join(self)})"


def _column(values: list) -> np.ndarray:
    """Integers stay int64, floats float64, everything else (text, None) an object array."""
    if values and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        return np.asarray(values, np.int64)
    if values and all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in values):
        return np.asarray(values, np.float64)
    out = np.empty(len(values), object)
    out[:] = values
    return out
