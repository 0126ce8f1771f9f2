"""Columnar output for scripts (`--format npz`): numpy's .npz, one array per column.

Every array is named "<table>.<column>" (`records.time`, `waves.begin`, `rows.stall`); the tables and their
columns are listed in docs/api.md ("Columnar output"). Rows of one table line up across its columns, and
a column named after another table (`records.wave`, `waves.dispatch`) holds row numbers into that table.
Text columns are fixed-width unicode arrays, never pickled objects, so `numpy.load(path)` opens the file
with its default allow_pickle=False; a missing value is "" in text, -1 in a whole-number column and NaN in
a fractional one.

    d = numpy.load("out.npz")
    first = d["waves.first"][3]; rows = slice(first, first + d["waves.records"][3])
    stall_of_wave_3 = d["records.stall"][rows].sum()
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO

import numpy as np

Tables = Mapping[str, Mapping[str, np.ndarray]]


def plain(values) -> np.ndarray:
    """A column as numpy stores it without pickling: numbers as they are, text (and None) as unicode."""
    a = np.asarray(values)
    if a.dtype != object:
        return a
    items = a.tolist()
    if items and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in items):
        if all(v is None or isinstance(v, int) for v in items):
            return np.array([-1 if v is None else v for v in items], np.int64)
        return np.array([np.nan if v is None else v for v in items], np.float64)
    return np.array(["" if v is None else str(v) for v in items], dtype=str)


def write_npz(out: IO[bytes], tables: Tables) -> None:
    """The tables to a binary stream as one .npz (uncompressed: written and read at memory speed)."""
    arrays = {f"{t}.{c}": plain(v) for t, cols in tables.items() for c, v in cols.items()}
    np.savez(out, **arrays)  # type: ignore[arg-type]
