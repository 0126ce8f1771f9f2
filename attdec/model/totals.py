"""Per-instruction totals recomputed from wave instructions (ui-output-format.md §5.1).

For every executed instruction: Hit += 1, Latency += duration, Stall += stall, and
Idle += max(0, time - prev_end), where prev_end starts at the wave's `begin` and becomes
max(prev_end, time + duration) after each instruction. These are exactly the code.json columns when
all waves are used, so the same function gives per-SE / per-SIMD / per-wave hotspots, and it is what a
decoder producing `Wave`s (raw SQTT) calls to fill its code listing.
"""

from __future__ import annotations

import numpy as np

from attdec.model import Category, CodeLine, Dispatch, Wave, empty_insts
from attdec.model.record import Record


class LineTotals(Record):
    """Totals per code-listing line id, as parallel arrays sorted by line id."""

    line: np.ndarray
    hit: np.ndarray
    latency: np.ndarray
    stall: np.ndarray
    idle: np.ndarray

    def as_dict(self) -> dict[int, tuple[int, int, int, int]]:
        return {
            int(ln): (int(h), int(la), int(s), int(i))
            for ln, h, la, s, i in zip(self.line, self.hit, self.latency, self.stall, self.idle)
        }


def wave_idle(wave: Wave) -> np.ndarray:
    """Idle cycles before each instruction of one wave (gap since the wave's previous activity ended)."""
    ins = wave.insts
    if len(ins) == 0:
        return np.zeros(0, np.int64)
    ends = ins["time"] + ins["duration"]
    prev = np.empty(len(ins), np.int64)
    prev[0] = wave.begin
    if len(ins) > 1:
        prev[1:] = np.maximum(np.maximum.accumulate(ends[:-1]), wave.begin)
    return np.maximum(ins["time"] - prev, 0)


def aggregate_lines(waves: list[Wave]) -> LineTotals:
    """Hit/Latency/Stall/Idle per line id over `waves` (any subset of a dispatch's waves).

    Instructions with an unknown line (-1) are left out, as the writer leaves out unresolved PCs.
    """
    parts = [w.insts for w in waves if len(w.insts)]
    if not parts:
        z = np.zeros(0, np.int64)
        return LineTotals(z, z, z, z, z)
    ins = np.concatenate(parts)
    idle = np.concatenate([wave_idle(w) for w in waves if len(w.insts)])
    keep = ins["line"] >= 0
    lines, inv = np.unique(ins["line"][keep], return_inverse=True)
    n = len(lines)

    def total(values):
        return (
            np.bincount(inv, weights=values[keep], minlength=n).round().astype(np.int64) if n else np.zeros(0, np.int64)
        )

    # bincount sums in float64: exact below 2**53 cycles, far above any trace.
    hit = np.bincount(inv, minlength=n).astype(np.int64)
    return LineTotals(lines.astype(np.int64), hit, total(ins["duration"]), total(ins["stall"]), total(idle))


TOTALS = ("hit", "latency", "stall", "idle")


def fill_code_totals(dispatch: Dispatch, waves: list[Wave] | None = None, columns: tuple[str, ...] = TOTALS) -> None:
    """Overwrite `columns` of each CodeLine (default all four totals) with the totals over `waves` (default: all)."""
    totals = aggregate_lines(dispatch.waves if waves is None else waves).as_dict()
    pick = [TOTALS.index(c) for c in columns]
    for c in dispatch.code:
        t = totals.get(c.line, (0, 0, 0, 0))
        for i in pick:
            setattr(c, TOTALS[i], t[i])


def listing_from_waves(waves: list[Wave]) -> list[CodeLine]:
    """A listing when the input has none (code.json null, [] or absent): one row per line id the waves
    executed, with its totals; the text says the line id and the trace's instruction category."""
    t = aggregate_lines(waves)
    ins = np.concatenate([w.insts for w in waves if len(w.insts)] or [empty_insts()])
    ins = ins[ins["line"] >= 0]
    lines, first = np.unique(ins["line"], return_index=True)
    cats = dict(zip(lines.tolist(), ins["category"][first].tolist()))
    out = []
    for ln, h, la, s, i in zip(t.line.tolist(), t.hit.tolist(), t.latency.tolist(), t.stall.tolist(), t.idle.tolist()):
        cat = Category(cats[ln]).name if cats[ln] in Category._value2member_map_ else str(cats[ln])
        out.append(CodeLine(ln, f"<line {ln}: {cat}>", hit=h, latency=la, stall=s, idle=i))
    return out
