"""Hidden latency: how much of each memory operation's latency the wave covered with other work.

A memory operation is in flight from its issue until the wait that retires it lets the wave go on
(attdec.analysis.waits names that wait: the first one whose counters name the operation). That window
splits into

* hidden: issue -> the wait's arrival; the wave kept issuing other instructions (or waited on other
  things: `stalled_elsewhere` says how much of it was other instructions' stall);
* exposed: the retiring wait's stall, during which the wave sat still with the operation possibly in
  flight.

The operation's real latency is at most hidden + exposed; when the wait did not stall, it returned
somewhere inside the hidden part. Operations no wait names (stores never waited for, loads retired by
an out-of-order wait to N > 0 and never by a later wait to 0) are counted as `unretired`.
Shares are hidden / (hidden + exposed), summed per instruction, per source line, per unit and per kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attdec.analysis.hotspots import NO_SOURCE, frame_of
from attdec.analysis.stream import line_table
from attdec.analysis.waits import Attribution
from attdec.isa import categories as C
from attdec.model import CodeLine
from attdec.model.totals import distinct

UNIT_OF_CATEGORY = {
    C.VMEM_LOAD: "VMEM load",
    C.VMEM_STORE: "VMEM store",
    C.FLAT: "FLAT",
    C.LDS: "LDS",
    C.BARRIER: "LDS",  # ds_gws_barrier
    C.SMEM: "SMEM",
    C.MESSAGE: "message",
    C.EXPORT: "export",
}


@dataclass
class Latency:
    """Totals over the executions of one instruction, one source line, one unit or the whole kernel."""

    key: str
    executions: int = 0  # issued
    retired: int = 0  # named by a wait
    hidden: int = 0
    exposed: int = 0
    stalled_elsewhere: int = 0  # part of `hidden` spent in other instructions' stall
    unit: str = ""
    code: CodeLine | None = None  # for per-instruction rows

    @property
    def unretired(self) -> int:
        return self.executions - self.retired

    @property
    def share(self) -> float:
        """Fraction of the observed latency that was hidden."""
        total = self.hidden + self.exposed
        return self.hidden / total if total else 0.0

    def add(self, other: Latency) -> None:
        self.executions += other.executions
        self.retired += other.retired
        self.hidden += other.hidden
        self.exposed += other.exposed
        self.stalled_elsewhere += other.stalled_elsewhere


@dataclass
class HiddenLatency:
    kernel: Latency  # every memory operation of the dispatch
    by_unit: list[Latency]  # VMEM load, LDS, SMEM, ...; most exposed first
    by_instruction: list[Latency]  # most exposed first
    by_line: list[Latency] = field(default_factory=list)


def hidden_latency(attr: Attribution, frame: str = "inner") -> HiddenLatency:
    """Hidden and exposed latency of every memory operation the attribution saw (see module docstring)."""
    d, st = attr.dispatch, attr.stream
    fam = d.target.family
    unit_of = {}
    for c in d.code:
        if not c.is_label and C.counters_incremented(c.text, fam):
            unit_of[c.line] = UNIT_OF_CATEGORY.get(C.category_of(c.text, fam), "other")
    units = sorted(set(unit_of.values()))
    unit_t = line_table(d.code, lambda c: units.index(unit_of[c.line]) if c.line in unit_of else -1, -1)
    unit = st.by_line(unit_t)
    ops = np.flatnonzero(unit >= 0)

    # first memory-counter wait naming each operation (pairs are sorted by wait, so the first pair of a
    # producer after a stable sort by producer is its earliest wait)
    mem = (attr.mask & attr.memory_mask) != 0
    w, p = attr.wait[mem], attr.producer[mem]
    order = np.argsort(p, kind="stable")
    w, p = w[order], p[order]
    first = np.r_[True, p[1:] != p[:-1]] if len(p) else np.zeros(0, bool)
    w, p = w[first], p[first]

    time, stall = st.col("time"), st.col("stall")
    issue = time[p] + stall[p]
    hidden = np.maximum(time[w] - issue, 0)
    exposed = stall[w].astype(np.int64)
    cum = np.concatenate(([0], np.cumsum(stall, dtype=np.int64)))
    elsewhere = np.minimum(np.maximum(cum[w] - cum[p + 1], 0), hidden)  # stall of records strictly between

    lines_all = st.lines[ops]
    lines_ret = st.lines[p]
    ul = distinct(lines_all)
    n_exec = np.bincount(np.searchsorted(ul, lines_all), minlength=len(ul))
    idx = np.searchsorted(ul, lines_ret)
    n_ret = np.bincount(idx, minlength=len(ul))
    h = np.bincount(idx, weights=hidden, minlength=len(ul))
    e = np.bincount(idx, weights=exposed, minlength=len(ul))
    o = np.bincount(idx, weights=elsewhere, minlength=len(ul))

    code = {c.line: c for c in d.code}
    rows = []
    for i, ln in enumerate(ul.tolist()):
        row = code.get(ln)
        if row is not None:
            counts = int(n_exec[i]), int(n_ret[i]), round(h[i]), round(e[i]), round(o[i])
            rows.append(Latency(row.text, *counts, unit_of[ln], row))
    kernel = Latency(d.kernel or d.name)
    per_unit: dict[str, Latency] = {}
    per_line: dict[str, Latency] = {}
    for r in rows:
        kernel.add(r)
        per_unit.setdefault(r.unit, Latency(r.unit, unit=r.unit)).add(r)
        key = frame_of(r.code.source if r.code else "", frame) or NO_SOURCE
        per_line.setdefault(key, Latency(key)).add(r)

    def most_exposed(xs):
        return sorted(xs, key=lambda r: (-r.exposed, -r.hidden, r.key))

    return HiddenLatency(kernel, most_exposed(per_unit.values()), most_exposed(rows), most_exposed(per_line.values()))
