"""Per-wave summary: where and when each traced wave ran, how much it executed and stalled, and on what."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

import numpy as np

from attdec.analysis import norm_path
from attdec.analysis.classify import STALL_TYPES, line_type_table
from attdec.model import Dispatch


@dataclass
class WaveRow:
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
    share: float  # stall / duration: fraction of the wave's life spent stalled
    dominant_type: str | None
    by_type: dict[str, int] = field(default_factory=dict)
    path: str | None = None
    kernel: str = ""
    stall_measured: bool = True  # False: the input has no stall (rocprofv2); `stall` is 0, not measured


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


def wave_rows(dispatch: Dispatch, wave_filter=None, label: str | None = None) -> list[WaveRow]:
    """One row per wave of the dispatch (in se/simd/slot/wv order), optionally filtered; `label` names the
    dispatch in the rows (default: its name)."""
    table = line_type_table(dispatch)
    other = STALL_TYPES.index("other")
    out = []
    for w in dispatch.waves:
        if wave_filter is not None and not wave_filter(w):
            continue
        ins = w.insts
        lines = ins["line"]
        ok = (lines >= 0) & (lines < len(table))
        types = np.full(len(ins), other, np.int64)
        types[ok] = table[lines[ok]]
        per = (
            np.bincount(types, weights=ins["stall"], minlength=len(STALL_TYPES))
            if len(ins)
            else np.zeros(len(STALL_TYPES))
        )
        by_type = {STALL_TYPES[i]: round(v) for i, v in enumerate(per) if v}
        stall = int(ins["stall"].sum())
        dom = max(by_type.items(), key=lambda kv: (kv[1], -STALL_TYPES.index(kv[0])))[0] if stall else None
        out.append(
            WaveRow(
                label or dispatch.name,
                w.se,
                w.simd,
                w.slot,
                w.seq,
                w.cu,
                w.begin,
                w.end,
                w.duration,
                w.records,
                int(ins["duration"].sum()),
                stall,
                stall / w.duration if w.duration > 0 else 0.0,
                dom,
                by_type,
                w.path,
                dispatch.kernel,
                dispatch.stall_measured,
            )
        )
    out.sort(key=lambda r: (r.se, r.simd, r.slot, r.wave))
    return out


def sort_rows(rows: list[WaveRow], key: str) -> list[WaveRow]:
    """`position` keeps se/simd/slot/wv order; any other key sorts largest first (begin/end: earliest)."""
    if key == "position":
        return rows
    if key in ("begin", "end", "cu"):
        return sorted(rows, key=lambda r: (getattr(r, key), r.se, r.simd, r.slot, r.wave))
    return sorted(rows, key=lambda r: (-getattr(r, key), r.se, r.simd, r.slot, r.wave))
