"""Per source line figures for a source view: own cycles, cycles of everything inlined there, and the chains.

A source line is the innermost frame of some instructions (their own location: `own` figures) and an
outer frame of others (a call site whose inlined callee's instructions land elsewhere). `total_stall`
counts every instruction whose chain holds the line once, so a call site shows what its inlined code
cost; `chains` lists the multi-frame chains through the line, with their stall.
"""

from __future__ import annotations

from attdec.analysis.classify import STALL_TYPES
from attdec.analysis.hotspots import InstStat, file_of, frames
from attdec.model.record import Record, field


class SourceLine(Record):
    location: str  # "file:line" as the listing writes it
    file: str
    line: int | None  # None when the location has no line number
    hits: int = 0
    latency: int = 0
    stall: int = 0
    idle: int = 0
    total_stall: int = 0  # stall of every instruction whose chain holds this line
    total_latency: int = 0
    by_type: dict[str, int] = field(default_factory=dict)  # own stall by type
    chains: dict[str, int] = field(default_factory=dict)  # multi-frame chain -> stall

    @property
    def dominant_type(self) -> str | None:
        if not self.stall:
            return None
        return max(self.by_type.items(), key=lambda kv: (kv[1], -STALL_TYPES.index(kv[0])))[0]


def _line_no(location: str) -> int | None:
    tail = location.rsplit(":", 1)[-1] if ":" in location else ""
    return int(tail) if tail.isdigit() else None


def source_lines(stats: list[InstStat]) -> list[SourceLine]:
    """One SourceLine per location that executed, sorted by file then line."""
    out: dict[str, SourceLine] = {}

    def get(loc: str) -> SourceLine:
        s = out.get(loc)
        if s is None:
            s = out[loc] = SourceLine(loc, file_of(loc), _line_no(loc))
        return s

    for st in stats:
        fs = frames(st.code.source)
        if not fs or not st.hit:
            continue
        own = get(fs[0])
        own.hits += st.hit
        own.latency += st.latency
        own.stall += st.stall
        own.idle += st.idle
        for t, v in st.by_type.items():
            own.by_type[t] = own.by_type.get(t, 0) + v
        for loc in dict.fromkeys(fs):  # each line once, even if the chain passes it twice
            s = get(loc)
            s.total_stall += st.stall
            s.total_latency += st.latency
            if len(fs) > 1:
                s.chains[st.code.source] = s.chains.get(st.code.source, 0) + st.stall
    return sorted(out.values(), key=lambda s: (s.file, s.line if s.line is not None else -1, s.location))
