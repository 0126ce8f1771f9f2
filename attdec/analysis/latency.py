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

import numpy as np

from attdec.analysis.hotspots import NO_SOURCE, frame_of
from attdec.analysis.stream import line_table
from attdec.analysis.waits import Attribution
from attdec.isa import categories as C
from attdec.isa.categories import InstClass
from attdec.model import OTHER_SIMD_DTYPE, Category, CodeLine, Dispatch
from attdec.model.record import Record, field
from attdec.model.totals import aggregate_lines, distinct, totals_by

UNIT_OF_CATEGORY = {
    InstClass.VMEM_LOAD: "VMEM load",
    InstClass.VMEM_STORE: "VMEM store",
    InstClass.FLAT: "FLAT",
    InstClass.LDS: "LDS",
    InstClass.BARRIER: "LDS",  # ds_gws_barrier
    InstClass.SMEM: "SMEM",
    InstClass.MESSAGE: "message",
    InstClass.EXPORT: "export",
}


class Latency(Record):
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


class HiddenLatency(Record):
    kernel: Latency  # every memory operation of the dispatch
    by_unit: list[Latency]  # VMEM load, LDS, SMEM, ...; most exposed first
    by_instruction: list[Latency]  # most exposed first
    by_line: list[Latency] = field(default_factory=list)


def hidden_latency(attr: Attribution, frame: str = "inner") -> HiddenLatency:
    """Hidden and exposed latency of every memory operation the attribution saw (see module docstring)."""
    d, st = attr.dispatch, attr.stream
    unit_of = {}
    for c in d.code:
        if not c.is_label and C.counters_incremented(c.text, d.target):
            unit_of[c.line] = UNIT_OF_CATEGORY.get(C.class_of(c.text, d.target), "other")
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


# ---- AMD's definition ------------------------------------------------------------------------------
#
# What AMD's decoder package calls hidden latency (rocprof_trace_decoder.analysis.hidden_latency, shown by
# rocprof-compute-viewer's Analyze > Hidden Latency): per executed instruction, the cycles of its idle window
# (from the wave's previous instruction's end), its stall window and its issue window during which a pipe
# was busy - the scope is one SIMD of one shader engine, all its waves, plus the SE's other-SIMD records.
# Which pipe depends on the instruction: a VALU one counts its own pipe's busy cycles in idle and stall only
# (its own issue would hide itself) unless matrix work hid more; a memory one the math pipes (all windows)
# or the memory pipe (idle and stall); a scalar one the vector pipes or the scalar pipe; any other every pipe.

MATRIX_PREFIXES = ("v_mfma", "v_smfma", "v_wmma", "v_swmma")
_VECTOR_MEMORY = (int(Category.LDS), int(Category.VMEM), int(Category.FLAT))
_SCALAR = (int(Category.SALU), int(Category.SMEM))


class AmdHidden(Record):
    """Totals over one instruction, one source line or the whole kernel. `latency` and `idle` are the
    listing's; `hidden` is hidden stall + issue + hidden idle bounded by `idle` (hidden idle is measured
    from the previous instruction's end, the listing's idle from the furthest end reached)."""

    key: str
    hits: int = 0
    latency: int = 0
    idle: int = 0
    hidden_idle: int = 0
    hidden_stall: int = 0
    hidden_issue: int = 0
    hidden: int = 0
    code: CodeLine | None = None

    @property
    def total(self) -> int:
        return self.latency + self.idle

    @property
    def exposed(self) -> int:
        return self.total - self.hidden

    @property
    def share(self) -> float:
        """Fraction of latency + idle that was hidden."""
        return self.hidden / self.total if self.total else 0.0

    def add(self, other: AmdHidden) -> None:
        self.hits += other.hits
        self.latency += other.latency
        self.idle += other.idle
        self.hidden_idle += other.hidden_idle
        self.hidden_stall += other.hidden_stall
        self.hidden_issue += other.hidden_issue
        self.hidden += other.hidden


class AmdHiddenLatency(Record):
    kernel: AmdHidden
    by_instruction: list[AmdHidden]  # most exposed first
    by_line: list[AmdHidden]


def _busy(start: np.ndarray, cycles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A pipe's busy intervals (starts, ends) from its instructions' (start, cycles), coalesced as AMD's
    package does: an interval starting at or before the running group's start + the cycles summed so far
    joins it and adds its full cycles (overlaps are not clipped)."""
    if not len(start):
        return start, start
    start, cycles = _by_start(start, cycles)
    before = np.concatenate(([0], np.cumsum(cycles)[:-1]))
    key = start - before  # a group starts where this exceeds every earlier one
    new = np.concatenate(([True], key[1:] > np.maximum.accumulate(key)[:-1]))
    firsts = np.flatnonzero(new)
    starts = start[firsts]
    return starts, starts + np.add.reduceat(cycles, firsts)


CYCLE_BITS = 20  # (start, cycles) pairs sorted as one integer when cycles fit these bits and start the rest


def _by_start(start: np.ndarray, cycles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ordered by start, then cycles: one plain sort of both packed in an integer where they fit
    (several times quicker than a sort on two keys)."""
    if (
        start.min() >= 0
        and int(start.max()) < 1 << (63 - CYCLE_BITS)
        and 0 <= cycles.min() <= cycles.max() < 1 << CYCLE_BITS
    ):
        packed = np.sort((start << CYCLE_BITS) | cycles)
        return packed >> CYCLE_BITS, packed & ((1 << CYCLE_BITS) - 1)
    order = np.lexsort((cycles, start))
    return start[order], cycles[order]


def _union(*pipes: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals (empty ones left out; touching ones merge)."""
    s = np.concatenate([p[0] for p in pipes])
    e = np.concatenate([p[1] for p in pipes])
    keep = e > s
    s, e = s[keep], e[keep]
    if not len(s):
        return s, e
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    new = np.concatenate(([True], s[1:] > np.maximum.accumulate(e)[:-1]))
    return s[new], np.maximum.reduceat(e, np.flatnonzero(new))


# A pipe's busy cycles are counted from a table with a running count per cycle when the clocks asked about span
# at most this many cycles per record asked about (a few passes over the span against a binary search per
# clock), else by a binary search over the intervals.
TABLE_CYCLES_PER_RECORD = 4
TABLE_MAX_CYCLES = 1 << 30  # (int32 counts)


class _Covered:
    """Busy cycles of disjoint sorted intervals before a clock, counted from a fixed origin: only
    differences between two clocks mean anything. `lo`..`hi`: the clocks that will be asked about; with
    `table`, a running count per cycle of that range, else a binary search per clock."""

    def __init__(self, pipe: tuple[np.ndarray, np.ndarray], lo: int, hi: int, table: bool):
        starts, ends = pipe
        self.empty = not len(ends)
        self.lo = lo
        self.table = None
        if table and not self.empty:
            inside = (ends > lo) & (starts < hi) & (ends > starts)
            # busy[k] = 1 while cycle lo + k - 1 is busy: its running sum is the busy cycles in [lo, lo + k)
            counts = np.zeros(hi - lo + 2, np.int32)
            counts[np.maximum(starts[inside], lo) - (lo - 1)] = 1
            counts[np.minimum(ends[inside], hi) - (lo - 1)] -= 1
            np.cumsum(counts, out=counts)
            self.table = np.cumsum(counts, out=counts)
        else:
            self.starts, self.ends = starts, ends
            self.prefix = np.concatenate(([0], np.cumsum(ends - starts)))

    def __call__(self, clock: np.ndarray) -> np.ndarray:
        if self.table is not None:
            return self.table.take(clock - self.lo)
        done = np.searchsorted(self.ends, clock, "right")
        out = self.prefix[done]
        part = done < len(self.ends)
        j = done[part]
        c = clock[part]
        out[part] += np.where(c > self.starts[j], np.minimum(c, self.ends[j]) - self.starts[j], 0)
        return out

    def windows(self, last, clock, stall, cycles, issue: bool = True) -> list:
        """Hidden idle, stall and issue cycles (one array each) of windows [last, clock), [clock, clock +
        stall), [clock + stall, clock + cycles); issue 0 when not `issue`."""
        at_clock, at_issue = self(clock), self(clock + stall)
        idle = np.where(clock > last, at_clock - self(last), 0)
        stalled = np.where(stall > 0, at_issue - at_clock, 0)
        issued = np.where(cycles > stall, self(clock + cycles) - at_issue, 0) if issue else 0
        return [idle, stalled, issued]


def _scope_hidden(waves: list, other: np.ndarray, matrix_lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per record of `waves` (one SIMD's, laid end to end): its line and (3, n) hidden idle/stall/issue."""
    counts = np.array([len(w.insts) for w in waves])
    # each field laid end to end as a column of its own: a record's fields lie apart (and unaligned), which
    # would slow every pass over them
    clock, stall, duration, line, cat = (
        np.concatenate([w.insts[f] for w in waves]) for f in ("time", "stall", "duration", "line", "category")
    )
    cycles = np.maximum(stall, duration)
    matrix = np.isin(line, matrix_lines) & (line >= 0)
    valu = ~matrix & (cat == int(Category.VALU))
    vmem = ~matrix & np.isin(cat, _VECTOR_MEMORY)
    scal = ~matrix & np.isin(cat, _SCALAR)
    busy_start, busy = clock + stall, cycles - stall
    wmma_pipe = _busy(busy_start[matrix], busy[matrix])
    valu_pipe = _busy(
        np.concatenate((busy_start[matrix], busy_start[valu])), np.concatenate((3 * busy[matrix] // 4, busy[valu]))
    )
    other_busy = other[other["cycles"] > 0]
    vmem_pipe = _busy(
        np.concatenate((busy_start[vmem], other_busy["time"])),
        np.concatenate((busy[vmem], other_busy["cycles"].astype(np.int64))),
    )
    scal_pipe = _busy(busy_start[scal], busy[scal])
    math_pipe = _union(valu_pipe, wmma_pipe)
    vector_pipe = _union(math_pipe, vmem_pipe)
    all_pipe = _union(vector_pipe, scal_pipe)

    ends = clock + cycles
    last = np.concatenate(([0], ends[:-1]))
    firsts = np.cumsum(counts) - counts
    last[firsts] = [w.begin for w in waves]
    hidden = np.zeros((3, len(clock)), np.int64)
    if not len(clock):
        return line, hidden
    lo, hi = int(min(last.min(), clock.min())), int(ends.max())
    table = hi - lo < min(TABLE_CYCLES_PER_RECORD * len(clock), TABLE_MAX_CYCLES)
    covered: dict[int, _Covered] = {}

    def windows(pipe, clocks, issue):
        if id(pipe) not in covered:  # each pipe's table built once, for whichever kinds ask about it
            covered[id(pipe)] = _Covered(pipe, lo, hi, table)
        return covered[id(pipe)].windows(*clocks, issue)

    never = (clock[:0], clock[:0])  # a pipe without busy intervals
    # rows, then the two (pipe, issue window counted) whose windows hid the more cycles count for them
    kinds = (
        (matrix, (valu_pipe, False), (wmma_pipe, False)),
        (valu, (valu_pipe, False), (wmma_pipe, True)),
        (vmem, (math_pipe, True), (vmem_pipe, False)),
        (scal, (vector_pipe, True), (scal_pipe, False)),
        (~(matrix | valu | vmem | scal), (all_pipe, True), (never, False)),
    )
    for rows, (pipe_a, issue_a), (pipe_b, issue_b) in kinds:
        at = np.flatnonzero(rows)
        if not len(at):
            continue
        clocks = (last.take(at), clock.take(at), stall.take(at), cycles.take(at))
        # a pipe never busy hides nothing (its windows are all 0): the other's windows are the answer
        if not len(pipe_b[0]):
            picked = windows(pipe_a, clocks, issue_a) if len(pipe_a[0]) else [0, 0, 0]
        elif not len(pipe_a[0]):
            picked = windows(pipe_b, clocks, issue_b)
        else:
            a, b = windows(pipe_a, clocks, issue_a), windows(pipe_b, clocks, issue_b)
            a_wins = a[0] + a[1] + a[2] > b[0] + b[1] + b[2]
            picked = [np.where(a_wins, x, y) for x, y in zip(a, b)]
        for k in range(3):
            hidden[k, at] = picked[k]
    return line, hidden


def amd_hidden_latency(d: Dispatch, waves: list | None = None, frame: str = "inner") -> AmdHiddenLatency:
    """AMD's hidden latency of dispatch `d` over `waves` (default all; see the comment above), per
    instruction, per source line and for the kernel. The listing's latency and idle are recomputed over
    `waves` when they are a subset."""
    waves = list(d.waves if waves is None else waves)
    matrix_lines = np.array([c.line for c in d.code if c.text.startswith(MATRIX_PREFIXES)], np.int64)
    other = d.other_simd if d.other_simd is not None else np.zeros(0, OTHER_SIMD_DTYPE)
    scopes: dict[tuple[int, int], list] = {}
    for w in waves:
        if len(w.insts):
            scopes.setdefault((w.se, w.simd), []).append(w)
    lines, hidden = [np.zeros(0, np.int64)], [np.zeros((3, 0), np.int64)]
    for (se, _), ws in sorted(scopes.items()):
        ln, h = _scope_hidden(ws, other[other["se"] == se], matrix_lines)
        lines.append(ln)
        hidden.append(h)
    line, h = np.concatenate(lines), np.concatenate(hidden, axis=1)
    if (line < 0).any():
        keep = line >= 0
        line, h = line[keep], h[:, keep]
    per_line, sums = totals_by(line, tuple(h))
    found = dict(zip(per_line.tolist(), sums[:, 1:].tolist()))
    subset = waves is not d.waves and len(waves) != d.wave_count
    totals = aggregate_lines(waves).as_dict() if subset else None
    rows = []
    for c in d.code:
        if c.is_label or c.is_no_pc:  # AMD's package leaves records without a PC out
            continue
        listed = (c.hit, c.latency, 0, c.idle)
        hits, latency, _, idle = totals.get(c.line, (0, 0, 0, 0)) if totals is not None else listed
        hi, hs, hx = found.get(c.line, (0, 0, 0))
        if not (latency + idle or hi + hs + hx):
            continue
        rows.append(AmdHidden(c.text, hits, latency, idle, hi, hs, hx, hs + hx + min(hi, idle), c))
    kernel = AmdHidden(d.kernel or d.name)
    per_source: dict[str, AmdHidden] = {}
    for r in rows:
        kernel.add(r)
        key = frame_of(r.code.source if r.code else "", frame) or NO_SOURCE
        per_source.setdefault(key, AmdHidden(key)).add(r)

    def most_exposed(xs):
        return sorted(xs, key=lambda r: (-r.exposed, -r.total, -r.hits, r.key))

    return AmdHiddenLatency(kernel, most_exposed(rows), most_exposed(per_source.values()))
