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
    return idle_before(ins["time"], ins["duration"], np.array([wave.begin], np.int64), np.array([len(ins)]))


# `idle_before` lifts each wave's keys above the waves' before it by WAVE_KEY, so that one running maximum
# serves them all; waves whose records end WAVE_KEY cycles or more after their begin (never seen: 9 minutes
# at 2 GHz) are taken one at a time.
WAVE_KEY = 1 << 40


def idle_before(time: np.ndarray, duration: np.ndarray, begin: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Idle cycles before each record of waves laid end to end, `counts[i]` records from `begin[i]` each:
    max(0, time - prev_end), prev_end the wave's begin or, if later, the latest time + duration before it."""
    n = len(time)
    if n == 0:
        return np.zeros(0, np.int64)
    b = np.repeat(begin, counts)
    rel = time + duration
    rel -= b
    np.maximum(rel, 0, out=rel)
    if len(counts) < 1 << 22 and int(rel.max()) < WAVE_KEY:
        lift = np.repeat(np.arange(len(counts), dtype=np.int64) * WAVE_KEY, counts)
        rel += lift
        np.maximum.accumulate(rel, out=rel)
        prev = np.empty(n, np.int64)
        prev[0] = 0
        prev[1:] = rel[:-1]
        np.maximum(prev, lift, out=prev)  # a wave's first record: its begin, not the wave before's end
        prev -= lift
    else:
        prev = np.empty(n, np.int64)
        at = 0
        for k in counts.tolist():
            if k:
                prev[at] = 0
                prev[at + 1 : at + k] = np.maximum.accumulate(rel[at : at + k - 1])
            at += k
    prev += b
    np.subtract(time, prev, out=prev)
    return np.maximum(prev, 0, out=prev)


def distinct(a: np.ndarray) -> np.ndarray:
    """np.unique(a) of a 1-d array: its distinct values, ascending (np.unique itself imports numpy.ma on its
    first plain call, a visible part of a command's start)."""
    s = np.sort(a)
    return s.compress(np.concatenate(([True], s[1:] != s[:-1]))) if len(s) else s


def median(a: np.ndarray) -> float:
    """np.median(a) of a non-empty 1-d array without NaN: the middle value, or the mean of the two middle ones
    (np.median imports numpy.ma on its first call, as np.unique does)."""
    s = np.sort(a)
    k = len(s) // 2
    return float(s[k]) if len(s) % 2 else float((s[k - 1] + s[k]) / 2)


# Keys spanning at most this many values (and a few times as many as there are keys to look up) are found in
# an array indexed by key - min: several times quicker than sorting or searching a million PCs.
TABLE_SPAN = 1 << 20


def table_fits(span: int, n: int) -> bool:
    """Whether `n` lookups of keys spanning `span` values take a table indexed by key - min (`dense_index`,
    attdec.model.records.lines_of_pcs): its 8 bytes a value pay off."""
    return span <= min(TABLE_SPAN, 16 * n + 4096)


def dense_index(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(key, return_inverse=True) of a 1-d integer array: its distinct values, ascending, and
    each key's index among them."""
    if not len(key):
        return key[:0], np.zeros(0, np.intp)
    lo = key.min()
    span = int(key.max()) - int(lo) + 1
    if not table_fits(span, len(key)):
        uniq, inv = np.unique(key, return_inverse=True)
        return uniq, inv.reshape(-1)
    off = (key - lo).astype(np.intp)
    present = np.zeros(span, bool)
    present[off] = True
    index = np.cumsum(present, dtype=np.intp)
    index -= 1
    return present.nonzero()[0].astype(key.dtype) + lo, index.take(off)


def totals_by(
    key: np.ndarray, values: tuple[np.ndarray, ...], index: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct keys, ascending; per key, a row of its count and its sum of each of `values`, int64);
    `index`: `dense_index(key)` when the caller has it. bincount sums in float64: exact below 2**53 cycles,
    far above any trace."""
    uniq, inv = dense_index(key) if index is None else index
    n = len(uniq)
    cols = [np.bincount(inv, minlength=n)] + [np.bincount(inv, v, n).round() for v in values]
    return uniq, np.stack(cols, 1).astype(np.int64).reshape(n, 1 + len(values))


def aggregate_lines(waves: list[Wave]) -> LineTotals:
    """Hit/Latency/Stall/Idle per line id over `waves` (any subset of a dispatch's waves).

    Instructions with an unknown line (-1) are left out, as the writer leaves out unresolved PCs.
    """
    parts = [w.insts for w in waves if len(w.insts)]
    if not parts:
        z = np.zeros(0, np.int64)
        return LineTotals(z, z, z, z, z)
    ins = np.concatenate(parts)
    begins = np.array([w.begin for w in waves if len(w.insts)], np.int64)
    idle = idle_before(ins["time"], ins["duration"], begins, np.array([len(a) for a in parts]))
    keep = ins["line"] >= 0
    ins, idle = ins[keep], idle[keep]
    lines, sums = totals_by(ins["line"], (ins["duration"], ins["stall"], idle))
    hit, latency, stall, idle = sums.T
    return LineTotals(lines.astype(np.int64), hit, latency, stall, idle)


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
