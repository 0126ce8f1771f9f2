"""Rank source lines, instructions or files of one or more dispatches by stall cycles.

Works on the model only: per-instruction totals come from the code listing (code.json's columns) or,
when the waves are restricted, are recomputed from the chosen waves with `aggregate_lines`.

Plain Python over the listing: a ui_output folder's report reads neither its waves nor numpy. numpy
comes in (imported where it is used) only when waves are aggregated: wave filters, `--charge producer`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from attdec.analysis import BY, CHARGES, norm_path
from attdec.analysis.classify import STALL_TYPES, classify
from attdec.analysis.kernel import KernelSummary, kernel_summary
from attdec.model import NO_PC, CodeLine, Dispatch, Wave
from attdec.model.record import Record, field

if TYPE_CHECKING:
    from attdec.analysis.table import Table
    from attdec.model import DecoderInfo
    from attdec.model.target import Target

NO_SOURCE = "(no source line)"
NO_FILE = "(no source file)"


class InstStat(Record):
    """One listing instruction with its totals over the chosen waves; its stall `type` and wait `counters`
    are read off its text (attdec.analysis.classify) when first asked for: most of a big listing never ran."""

    dispatch: str
    code: CodeLine
    hit: int
    latency: int
    stall: int
    idle: int
    target: Target  # the target whose ISA rules classify its text
    by_type: dict[str, int] = field(default_factory=dict)  # stall by type; with --charge producer it holds
    # the wait stall this instruction caused, under the wait's type

    def __init__(self, dispatch, code, hit, latency, stall, idle, target, by_type=None):
        # one per listing instruction (thousands): no generic Record.__init__
        self.dispatch, self.code, self.target = dispatch, code, target
        self.hit, self.latency, self.stall, self.idle = hit, latency, stall, idle
        self.by_type = by_type if by_type else ({self.type: stall} if stall else {})

    @property
    def type(self) -> str:
        return classify(self.code.text, self.target)[0]

    @property
    def counters(self) -> dict[str, int]:
        return classify(self.code.text, self.target)[1]


class Row(Record):
    key: str
    stall: int = 0
    latency: int = 0
    hits: int = 0
    idle: int = 0
    share: float = 0.0
    dominant_type: str | None = None
    by_type: dict[str, int] = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    def __init__(
        self, key, stall=0, latency=0, hits=0, idle=0, share=0.0, dominant_type=None, by_type=None, extra=None
    ):
        # one per ranked row (by instruction: per executed instruction): no generic Record.__init__
        self.key, self.stall, self.latency, self.hits, self.idle = key, stall, latency, hits, idle
        self.share, self.dominant_type = share, dominant_type
        self.by_type = {} if by_type is None else by_type
        self.extra = {} if extra is None else extra


class Hotspots(Record):
    names: list[str]  # dispatches covered (one unless merged)
    kernel: str
    arch: str
    waves: int
    listing: int  # instructions in the listing (labels excluded)
    totals: dict[str, int]  # hits, latency, stall, idle
    by_type: list[tuple[str, int, float]]  # (type, stall, share of stall), largest first
    rows: list[Row]  # all rows, largest stall first
    by: str = "line"
    problems: list[str] = field(default_factory=list)
    stall_measured: bool = True  # False: the input has no stall (rocprofv2); rows are ranked by latency
    charge: str = "wait"
    kernel_summary: KernelSummary | None = None  # resources and occupancy (one dispatch, not merged)
    info: list[DecoderInfo] = field(default_factory=list)  # the decoder's INFO records (raw inputs)

    @property
    def table(self) -> Table:
        """The rows as numpy columns (key, stall, latency, hits, idle, share, dominant_type; by instruction
        also line, vaddr, source, type)."""
        from attdec.analysis.table import Table

        cols = ["key", "stall", "latency", "hits", "idle", "share", "dominant_type"]
        if self.by == "instruction":
            cols += ["line", "vaddr", "source", "type"]
        return Table.from_rows([{**r.extra, **vars(r)} for r in self.rows], cols)


def frames(source: str) -> list[str]:
    """Source chain -> frames, innermost (the instruction's own location) first."""
    return [f.strip() for f in source.split(" -> ") if f.strip()] if source else []


@cache
def frame_of(source: str, frame: str = "inner") -> str:
    """The location a source chain is charged to (remembered: a listing's rows share a few chains)."""
    fs = frames(source)
    if not fs:
        return ""
    return norm_location(fs[0] if frame == "inner" else fs[-1])


@cache
def norm_location(loc: str) -> str:
    """'/a/./b//../k.py:12' -> '/a/k.py:12': one spelling per file, so its lines group and share a prefix."""
    path, sep, line = loc.rpartition(":")
    if not sep:
        path, line = loc, ""
    return f"{norm_path(path)}{sep}{line}" if "/" in path else loc


def file_of(location: str) -> str:
    """'a/b.py:12' -> 'a/b.py' (the part before the last ':')."""
    return location.rsplit(":", 1)[0] if ":" in location else location


def instruction_stats(
    dispatch: Dispatch, waves: list[Wave] | None = None, charge: str = "wait", empty: bool = True
) -> list[InstStat]:
    """Every listing instruction with totals: code.json's, or recomputed over `waves` when given.
    `empty=False` leaves out the instructions whose figures are all 0 (most of a big listing never ran;
    they add nothing to a ranking or a total).

    `charge="producer"` moves each wait's stall to the operations it waited for (attdec.analysis.waits):
    a wait keeps only the stall no producer was named for, a load gains the stall it caused, under the
    wait's stall type. Stall totals are unchanged; latency, hits and idle do not move.
    """
    if charge not in CHARGES:
        raise ValueError(charge)
    tgt = dispatch.target
    totals = None
    if waves is not None:
        from attdec.model.totals import aggregate_lines

        totals = aggregate_lines(waves).as_dict()
    moved_out: dict[int, int] = {}
    moved_in: dict[int, dict[str, int]] = {}
    if charge == "producer":
        from attdec.analysis.waits import attribute, producer_moves

        moved_out, moved_in = producer_moves(attribute(dispatch, waves))
    out, name = [], dispatch.name
    for c in dispatch.code:
        if c.is_label:
            continue
        h, la, s, i = totals.get(c.line, (0, 0, 0, 0)) if totals is not None else (c.hit, c.latency, c.stall, c.idle)
        moved = moved_in.get(c.line) if moved_in else None
        kept = s - moved_out.get(c.line, 0) if moved_out else s
        if not (empty or h or la or kept or i or moved):
            continue
        by: dict[str, int] = {classify(c.text, tgt)[0]: kept} if kept else {}
        if moved:
            for kind, v in moved.items():
                by[kind] = by.get(kind, 0) + v
        out.append(InstStat(name, c, h, la, sum(by.values()) if moved else kept, i, tgt, by))
    return out


def _group(code: CodeLine, by: str, frame: str) -> str:
    """The row (source line or file) an instruction counts in, ranking by line or file."""
    if code.is_no_pc:  # its own row whatever the grouping: it has no source line
        return NO_PC
    loc = frame_of(code.source, frame)
    if by == "file":
        return file_of(loc) if loc else NO_FILE
    return loc or NO_SOURCE


def _instruction_row(st: InstStat, frame: str, merged: bool) -> Row:
    """The row of one instruction, ranking by instruction."""
    extra = {"line": st.code.line, "vaddr": st.code.vaddr, "source": frame_of(st.code.source, frame), "type": st.type}
    if st.counters:
        extra["counters"] = dict(st.counters)  # a copy: classify remembers its answers
    if merged:
        extra["dispatch"] = st.dispatch
    return Row(key=st.code.text, extra=extra)


def rank(
    stats: list[InstStat], by: str = "line", frame: str = "inner", merged: bool = False, measure: str = "stall"
) -> list[Row]:
    """Group instruction stats into rows and sort them by stall (then latency), largest first; `share` is of
    the total stall. With `measure="latency"` (inputs without stall) both are by latency."""
    if by not in BY:
        raise ValueError(by)
    total_stall = sum(getattr(s, measure) for s in stats)
    rows: dict = {}
    for st in stats:
        if st.hit == 0:
            continue
        if by == "instruction":
            ident = (st.dispatch, st.code.line)
            r = rows.get(ident)
            if r is None:
                r = rows[ident] = _instruction_row(st, frame, merged)
        else:
            key = _group(st.code, by, frame)
            r = rows.get(key)
            if r is None:
                r = rows[key] = Row(key=key, extra={"instructions": 0})
            r.extra["instructions"] += 1
        r.stall += st.stall
        r.latency += st.latency
        r.hits += st.hit
        r.idle += st.idle
        for t, v in st.by_type.items():
            r.by_type[t] = r.by_type.get(t, 0) + v
    for r in rows.values():
        r.share = getattr(r, measure) / total_stall if total_stall else 0.0
        if r.stall:
            r.dominant_type = max(r.by_type.items(), key=lambda kv: (kv[1], -STALL_TYPES.index(kv[0])))[0]
    return sorted(rows.values(), key=lambda r: (-getattr(r, measure), -r.stall, -r.latency, -r.hits, r.key))


def by_type(stats: list[InstStat]) -> list[tuple[str, int, float]]:
    acc: dict[str, int] = defaultdict(int)
    for s in stats:
        for t, v in s.by_type.items():
            acc[t] += v
    total = sum(acc.values())
    return sorted(
        ((t, v, v / total if total else 0.0) for t, v in acc.items()), key=lambda x: (-x[1], STALL_TYPES.index(x[0]))
    )


WaveFilter = Callable[[Wave], bool]


def resolve_by(dispatches: list[Dispatch], by: str | None) -> tuple[str, str | None]:
    """`by`, or for None: "line", or "instruction" when no instruction has a source line (with a note why)."""
    if by is not None:
        return by, None
    if any(c.source for d in dispatches for c in d.code if not c.is_label):
        return "line", None
    return "instruction", "no source lines (no DWARF line table, or no listing): ranked by instruction"


def _kernel_summary(dispatches: list[Dispatch]) -> KernelSummary | None:
    """One dispatch's resources and occupancy for the header; the achieved figure only when its records are
    in memory already (decoded raw captures): a folder's occupancy.json would cost more than the report."""
    if len(dispatches) != 1:
        return None
    d = dispatches[0]
    return kernel_summary(d, achieved=d.loaded("occupancy"))


def hotspots(
    dispatches: list[Dispatch],
    by: str | None = None,
    frame: str = "inner",
    wave_filter: WaveFilter | None = None,
    charge: str = "wait",
) -> Hotspots:
    """Hotspots over the given dispatches taken together (pass one dispatch for a per-folder report).

    `charge="producer"` ranks by the stall each instruction caused rather than where it landed (see
    `instruction_stats`).

    `by=None` ranks source lines, or instructions when no instruction has a source line (a code object
    built without debug info): one "(no source line)" row would tell the user nothing.
    """
    stats, nwaves, listing, problems = [], 0, 0, []
    by, note = resolve_by(dispatches, by)
    problems += [note] if note else []
    for d in dispatches:
        waves = None if wave_filter is None else [w for w in d.waves if wave_filter(w)]
        stats += instruction_stats(d, waves, charge, empty=False)
        nwaves += d.wave_count if waves is None else len(waves)
        listing += sum(1 for c in d.code if not c.is_label)
        problems += [f"{d.name}: {p}" if len(dispatches) > 1 else p for p in d.problems]
    totals = {
        "hits": sum(s.hit for s in stats),
        "latency": sum(s.latency for s in stats),
        "stall": sum(s.stall for s in stats),
        "idle": sum(s.idle for s in stats),
    }
    kernels = []
    for d in dispatches:
        if d.kernel and d.kernel not in kernels:
            kernels.append(d.kernel)
    archs = sorted({d.arch for d in dispatches})
    measured = all(d.stall_measured for d in dispatches)
    return Hotspots(
        names=[d.name for d in dispatches],
        kernel=", ".join(kernels),
        arch=", ".join(archs),
        waves=nwaves,
        listing=listing,
        totals=totals,
        by_type=by_type(stats),
        rows=rank(stats, by, frame, merged=len(dispatches) > 1, measure="stall" if measured else "latency"),
        by=by,
        problems=problems,
        stall_measured=measured,
        charge=charge,
        kernel_summary=_kernel_summary(dispatches),
        info=[i for d in dispatches for i in d.info],
    )
