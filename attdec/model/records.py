"""The record model every source produces and every analysis consumes.

A `Dispatch` is what one kernel launch left behind: a code listing with per-instruction totals (the
rows of rocprofv3's code.json) and the traced waves, each with its instructions in a numpy array.
ui_output folders are read straight into it; raw SQTT is decoded into `Wave`s and `Occupancy` rows
and then given a listing. Raw inputs also carry the kernel's `KernelResources` (from its code object)
and any performance-counter samples (`CounterSamples`). No I/O here.

numpy is imported when the first array is made, not with the model: a ui_output folder's report reads
only its listing (code.json), and `attdec hotspots` on it never needs numpy. The record layouts below
(`INST_DTYPE`, `OCCUPANCY_DTYPE`, `COUNTER_DTYPE`, ...) are built on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from attdec.model.record import Record, field
from attdec.model.target import Target, target

if TYPE_CHECKING:
    import numpy as np

# AMD's name for a field its formats (decode JSON, ui_output) spell differently; writers of those formats
# name the field through `amd_name`, readers take AMD's columns by position.
AMD_NAMES = {"slot": "wave_id"}


def amd_name(field_name: str) -> str:
    """The name AMD's formats give a record field."""
    return AMD_NAMES.get(field_name, field_name)


# The record layouts as (field, numpy type) lists; `INST_DTYPE` etc. are the numpy dtypes made from them.
LAYOUTS = {
    # One executed instruction of one wave (`category` is an attdec.model.Category).
    # `pc` is absolute (load base + ELF address), 0 when unknown;
    # `line` is the code-listing line id (code.json column 2), -1 when unknown.
    "INST_DTYPE": [
        ("time", "<i8"),
        ("category", "u1"),
        ("stall", "<i8"),
        ("duration", "<i8"),
        ("pc", "<u8"),
        ("line", "<i8"),
    ],
    # Wave start/end events of every wave, traced or not (occupancy.json, the decoder's OCCUPANCY records).
    "OCCUPANCY_DTYPE": [
        ("se", "<i4"),
        ("cu", "<i4"),
        ("simd", "<i4"),
        ("slot", "<i4"),
        ("start", "u1"),
        ("time", "<i8"),
        ("pc", "<u8"),
    ],
    # Performance-counter samples, whatever their source (tinygrad PMC buffers, SQTT PERFEVENT records):
    # `counter` indexes CounterSamples.names; a location field is -1 where the counter is not split
    # that way (a GL2C channel has no SE, gfx9 SQ counters no CU); `time` is -1 for a whole-dispatch total.
    "COUNTER_DTYPE": [
        ("counter", "<i4"),
        ("xcc", "<i2"),
        ("se", "<i2"),
        ("sa", "<i2"),
        ("cu", "<i2"),  # CU (gfx9) or WGP (gfx10+) within the shader array
        ("inst", "<i2"),  # block instance (L2 channel, ...)
        ("time", "<i8"),
        ("value", "<u8"),
    ],
    # The decoder's other per-SE records, with AMD's field names (trace_decoder_types.h), each with the SE of
    # the blob it came from. SHADERDATA: a value a shader wrote into the trace (`s_ttracedata` from M0,
    # `s_ttracedata_imm`); `cu` is the CU (gfx9) or (sa << 7) | wgp (gfx10+); `flags` SHADERDATA_IMM: the
    # short immediate form, SHADERDATA_PRIV: written by the trap handler.
    "SHADERDATA_DTYPE": [
        ("se", "<i4"),
        ("time", "<i8"),
        ("value", "<u8"),
        ("cu", "u1"),
        ("simd", "u1"),
        ("slot", "u1"),
        ("flags", "u1"),
    ],
    # PERFEVENT (gfx9 PERF tokens, rocprofv3 --att-perfcounters): four 13-bit counter readings of one CU,
    # counters 0-3 (bank 0) or 4-7 (bank 1); all-zero events mark intervals without a reading.
    "PERFEVENT_DTYPE": [
        ("se", "<i4"),
        ("time", "<i8"),
        ("events0", "<u2"),
        ("events1", "<u2"),
        ("events2", "<u2"),
        ("events3", "<u2"),
        ("cu", "u1"),
        ("bank", "u1"),
    ],
    # A folded wave in a `WaveTable`: where and when it ran, how many instruction records it had, their summed
    # duration (`latency`) and stall, and whether it is `fileless` (Wave.fileless).
    "WAVE_SUMMARY_DTYPE": [
        ("se", "<i4"),
        ("cu", "<i4"),
        ("simd", "<i4"),
        ("slot", "<i4"),
        ("seq", "<i8"),
        ("contexts", "<i4"),
        ("fileless", "?"),
        ("begin", "<i8"),
        ("end", "<i8"),
        ("records", "<i8"),
        ("latency", "<i8"),
        ("stall", "<i8"),
    ],
    # INST_OTHER_SIMD (gfx11+): an instruction the traced WGP issued on its other SIMD (no wave record).
    "OTHER_SIMD_DTYPE": [("se", "<i4"), ("time", "<i8"), ("cycles", "<u2"), ("wgp", "u1"), ("category", "u1")],
}

# The reference clock of realtime samples (realtime.json "frequency"): 100 MHz in every known capture
# (the gfx9 AGENT_INFO packet says so, tinygrad assumes it).
REALTIME_HZ = 100_000_000

# The largest shader-engine number a record holds (COUNTER_DTYPE's is int16). Numbers from file names and
# headers are checked against it where they enter (real GPUs have at most a few dozen).
MAX_SE = (1 << 15) - 1


def __getattr__(name: str):
    """`INST_DTYPE`, `OCCUPANCY_DTYPE`, ... (the LAYOUTS): made (and numpy imported) on first use."""
    if name not in LAYOUTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import numpy as np

    value = globals()[name] = np.dtype(LAYOUTS[name])
    return value


def _zeros(layout: str, n: int = 0) -> np.ndarray:
    import numpy as np

    return np.zeros(n, globals().get(layout) or __getattr__(layout))


# INFO records: what a blob's decode lost (AMD's `rocprofiler_thread_trace_decoder_info_t` names).
INFO_KINDS = ("DATA_LOST", "STITCH_INCOMPLETE", "WAVE_INCOMPLETE")
SHADERDATA_IMM, SHADERDATA_PRIV = 1, 2  # SHADERDATA_DTYPE flags


class DecoderInfo(Record):
    """One INFO record of one blob: `count` lost-data marks / waves whose PC walk stopped / waves the blob
    cut, `byte` the offset in the blob it refers to (first packet loss, end of the decoded data)."""

    kind: str  # one of INFO_KINDS
    se: int
    count: int
    byte: int | None = None
    detail: str = ""

    def __str__(self) -> str:
        at = f" at byte {self.byte}" if self.byte is not None else ""
        return f"se {self.se}: {self.kind}{at}: {self.detail}" if self.detail else f"se {self.se}: {self.kind}{at}"


def empty_insts(n: int = 0) -> np.ndarray:
    a = _zeros("INST_DTYPE", n)
    a["line"] = -1
    return a


def empty_occupancy() -> np.ndarray:
    return _zeros("OCCUPANCY_DTYPE")


class Deferred:
    """A `Dispatch` attribute not read yet: `load()` gives it on first access (a ui_output folder's wave
    files and occupancy.json are parsed only when an analysis asks for them). `length` is len() of the
    value when the source knows it without loading (the wave files a folder lists)."""

    __slots__ = ("length", "load")

    def __init__(self, load: Callable[[], Any], length: int | None = None):
        self.load, self.length = load, length


def deferred(load: Callable[[], Any], length: int | None = None) -> Any:
    """A Dispatch field's value to be made by `load()` on first access (a `Deferred`; typed as the value)."""
    return Deferred(load, length)


class Timeline(Sequence):
    """A wave's state timeline as two columns (`state` WaveState codes, `duration` cycles) that reads as the
    list of (state, duration) tuples other sources give: a decoder makes a million runs without making a
    million tuples, and `np.asarray(timeline)` is its (n, 2) array."""

    __slots__ = ("duration", "state")

    def __init__(self, state: np.ndarray, duration: np.ndarray):
        self.state, self.duration = state, duration

    def __len__(self) -> int:
        return len(self.state)

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return zip(self.state.tolist(), self.duration.tolist())

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(zip(self.state[i].tolist(), self.duration[i].tolist()))
        return int(self.state[i]), int(self.duration[i])

    def __eq__(self, other) -> bool:
        if isinstance(other, Timeline | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __array__(self, dtype=None, copy=None):
        import numpy as np

        return np.stack([self.state.astype(np.int64), self.duration.astype(np.int64)], 1).astype(dtype or np.int64)

    def __repr__(self) -> str:
        return f"Timeline({list(self)!r})"


class Wave(Record):
    """One traced wave: where it ran, when, and what it executed."""

    se: int
    cu: int
    simd: int
    slot: int  # hardware wave slot in the SIMD (AMD's wave_id)
    begin: int
    end: int
    insts: np.ndarray = field(default_factory=empty_insts)  # INST_DTYPE, in time order
    timeline: Sequence[tuple[int, int]] = field(default_factory=list)  # (WaveState, duration) from `begin`
    seq: int = 0  # n-th wave in this (se, simd, slot): the `wv` of the file name
    contexts: int = 0  # context saves during its life
    path: str | None = None  # wave file it was read from, if any
    # Not None: the wave was folded (a big blob decoded in windows for `waves`): `insts` holds one row per PC
    # it stalled on (stall and duration summed, time the first; the first PC's row also holds the duration of
    # the PCs it did not stall on), `timeline` nothing (its first 3 runs if it has no records: whether it is
    # `fileless`), and this is how many records it had.
    folded: int | None = None

    def __init__(
        self, se, cu, simd, slot, begin, end, insts=None, timeline=None, seq=0, contexts=0, path=None, folded=None
    ):  # made once per wave (thousands per blob): the generic Record.__init__ is 5x slower
        self.se, self.cu, self.simd, self.slot, self.begin, self.end = se, cu, simd, slot, begin, end
        self.insts = empty_insts() if insts is None else insts
        self.timeline = [] if timeline is None else timeline
        self.seq, self.contexts, self.path, self.folded = seq, contexts, path, folded

    @property
    def records(self) -> int:
        """How many instruction records it has (a folded wave's `insts` has one row per PC)."""
        return len(self.insts) if self.folded is None else self.folded

    @property
    def duration(self) -> int:
        return self.end - self.begin

    @property
    def fileless(self) -> bool:
        """No records and under 3 timeline runs: rocprofv3 writes no wave file for it, so sources leave it out."""
        return not len(self.insts) and len(self.timeline) < 3

    def __repr__(self) -> str:
        return (
            f"Wave(se={self.se}, cu={self.cu}, simd={self.simd}, slot={self.slot}, seq={self.seq}, "
            f"begin={self.begin}, end={self.end}, {len(self.insts)} instructions)"
        )


def lines_of_pcs(pc: np.ndarray, pcs: np.ndarray, lines: np.ndarray, no_pc_line: int = -1) -> np.ndarray:
    """The listing line of each PC in `pc`: `lines[k]` where it is `pcs[k]` (`pcs` sorted, no 0 among them),
    `no_pc_line` for PC 0 (a record without a PC), else -1. Where the listed PCs span little (a kernel's
    code) and there are many to find, from a table indexed by PC - the first (several times quicker than a
    search per record; the few rows of one wave of a WaveTable are searched for)."""
    import numpy as np

    from attdec.model.totals import table_fits

    span = int(pcs[-1]) - int(pcs[0]) + 1 if len(pcs) else 0
    if len(pcs) and table_fits(span, len(pc)):
        table = np.full(span + 1, -1, np.int64)  # the last: every PC outside the listed ones' span
        table[(pcs - pcs[0]).astype(np.intp)] = lines
        off = pc - pcs[0]  # (below the first: wraps around to far above)
        out = table.take(np.minimum(off, np.uint64(span)).astype(np.intp))
    else:
        out = np.full(len(pc), -1, np.int64)
        if len(pcs):
            j = np.minimum(np.searchsorted(pcs, pc), len(pcs) - 1)
            ok = (pcs[j] == pc) & (pc != 0)
            out[ok] = lines[j[ok]]
    if no_pc_line >= 0:
        out[pc == 0] = no_pc_line
    return out


class WaveTable(Sequence):
    """Folded waves as columns (a big blob decoded in windows for `waves`): a million waves as a few arrays,
    not a million objects. `waves` holds a WAVE_SUMMARY_DTYPE row per wave; the PCs wave i stalled on are
    rows first[i]:first[i + 1] of `pc` and `stall`; `line_map` (pcs, their lines, the no-PC line) is set with
    the listing. It reads as a sequence of folded `Wave`s made on access, for code that looks at a few:
    their `insts` a row per stalled PC (the first also holding the latency), their timeline none (three empty
    runs standing for a wave that is not `fileless`)."""

    def __init__(self, waves=None, first=None, pc=None, stall=None, line=None, paths=None):
        import numpy as np

        self.waves = _zeros("WAVE_SUMMARY_DTYPE") if waves is None else waves
        self.first = np.zeros(len(self.waves) + 1, np.int64) if first is None else first
        self.pc = np.zeros(0, np.uint64) if pc is None else pc
        self.stall = np.zeros(0, np.int64) if stall is None else stall
        self.line_map: tuple[np.ndarray, np.ndarray, int] | None = None
        self.line: np.ndarray | None = line  # the rows' lines as the waves had them (`of(keep_lines=True)`)
        self.paths: list[str | None] | None = paths  # the waves' files, when they were read from files

    @classmethod
    def of(cls, waves: Sequence[Wave], keep_lines: bool = False, by_pc: bool = False) -> WaveTable:
        """The table of `waves` (folded ones, whose rows are per PC, or whole ones: rows per record), with
        their files and, with `keep_lines`, the lines their records have (a source that reads them). With
        `by_pc`, whole waves are folded here: a row per PC a wave stalled on, its stalls summed (what
        attdec.sources.listing.Folder makes of one wave, for many at once; no lines)."""
        import numpy as np

        n = len(waves)
        t = _zeros("WAVE_SUMMARY_DTYPE", n)
        for name in ("se", "cu", "simd", "slot", "seq", "contexts", "begin", "end", "records", "fileless"):
            t[name] = [getattr(w, name) for w in waves]
        parts = [w.insts for w in waves] or [empty_insts()]
        stall, duration, pc = (np.concatenate([a[f] for a in parts]) for f in ("stall", "duration", "pc"))
        counts = np.fromiter((len(w.insts) for w in waves), np.int64, n)
        at = np.cumsum(counts) - counts
        has = counts > 0
        if has.any():
            t["latency"][has] = np.add.reduceat(duration, at[has])
            t["stall"][has] = np.add.reduceat(stall, at[has])
        stalled = (stall != 0).nonzero()[0]
        wave_of = np.repeat(np.arange(n), counts).take(stalled)
        pc, stall = pc.take(stalled), stall.take(stalled)
        line = np.concatenate([a["line"] for a in parts]).take(stalled) if keep_lines and not by_pc else None
        if by_pc:  # (wave, PC) pairs, ascending: a wave's rows in PC order
            from attdec.model.totals import dense_index, totals_by

            pcs, pc_index = dense_index(pc)
            pairs, sums = totals_by(wave_of * max(1, len(pcs)) + pc_index, (stall,))
            kept = (sums[:, 1] != 0).nonzero()[0]
            pairs, stall = pairs.take(kept), sums[:, 1].take(kept)
            wave_of, at_pc = np.divmod(pairs, max(1, len(pcs)))
            pc = pcs.take(at_pc)
        first = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(wave_of, minlength=n), out=first[1:])
        paths = [w.path for w in waves]
        return cls(t, first, pc, stall, line, paths if any(paths) else None)

    @classmethod
    def join(cls, parts: list[WaveTable]) -> WaveTable:
        """One table of `parts` (waves decoded: no files, lines from the listing), in order; the list is
        emptied as they are copied (not held twice)."""
        import numpy as np

        if len(parts) == 1:
            return parts.pop()
        n, m = sum(len(p) for p in parts), sum(len(p.pc) for p in parts)
        out = cls(_zeros("WAVE_SUMMARY_DTYPE", n), np.zeros(n + 1, np.int64), np.empty(m, np.uint64))
        out.stall = np.empty(m, np.int64)
        a = b = 0
        parts.reverse()
        while parts:
            p = parts.pop()
            k, r = len(p), len(p.pc)
            out.waves[a : a + k] = p.waves
            out.first[a + 1 : a + k + 1] = p.first[1:] + b
            out.pc[b : b + r], out.stall[b : b + r] = p.pc, p.stall
            a, b = a + k, b + r
        return out

    def select(self, keep: np.ndarray) -> WaveTable:
        """The waves where `keep` (a bool per wave) is True."""
        import numpy as np

        counts = np.diff(self.first)
        rows = np.repeat(keep, counts)
        first = np.zeros(int(keep.sum()) + 1, np.int64)
        np.cumsum(counts[keep], out=first[1:])
        line = None if self.line is None else self.line[rows]
        paths = None if self.paths is None else [p for p, k in zip(self.paths, keep.tolist()) if k]
        out = WaveTable(self.waves[keep], first, self.pc[rows], self.stall[rows], line, paths)
        out.line_map = self.line_map
        return out

    def filter(self, keep: Callable[[Wave], bool]) -> WaveTable:
        """The waves `keep` accepts: a `WaveSelection` tests the columns; any other predicate sees each wave
        made from its row."""
        import numpy as np

        if isinstance(keep, WaveSelection):
            return self.select(keep.mask(self.waves))
        return self.select(np.fromiter((bool(keep(w)) for w in self), bool, len(self)))

    def numbered(self, seq: dict[tuple[int, int, int], int]) -> WaveTable:
        """Its waves without the fileless ones, each numbered (`seq`) on from `seq`: (se, simd, slot) -> the
        next number there, updated (as sources.raw.merge_results numbers a blob's waves)."""
        import numpy as np

        t = self.select(~self.waves["fileless"]) if self.waves["fileless"].any() else self
        w = t.waves
        if not len(w):
            return t
        keys, inv = np.unique(np.stack([w["se"], w["simd"], w["slot"]], 1), axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        o = np.argsort(inv, kind="stable")
        counts = np.bincount(inv, minlength=len(keys))
        start = np.cumsum(counts) - counts
        base = np.array([seq.get(k, 0) for k in map(tuple, keys.tolist())], np.int64)
        rank = np.empty(len(w), np.int64)
        rank[o] = np.arange(len(w)) - start[inv[o]]
        w["seq"] = base[inv] + rank
        for k, b, c in zip(map(tuple, keys.tolist()), base.tolist(), counts.tolist()):
            seq[k] = b + c
        return t

    @property
    def records(self) -> int:
        """Instruction records of all its waves."""
        return int(self.waves["records"].sum())

    def lines(self, rows=slice(None)) -> np.ndarray:
        """The listing line of stall rows `rows` (a slice or indices; -1 for all before the listing set
        `line_map`)."""
        import numpy as np

        pc = self.pc[rows]
        if self.line_map is not None:
            return lines_of_pcs(pc, *self.line_map)
        return self.line[rows] if self.line is not None else np.full(len(pc), -1, np.int64)

    def __len__(self) -> int:
        return len(self.waves)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        i = i + n if i < 0 else i
        if not 0 <= i < n:
            raise IndexError(i)
        r = self.waves[i].tolist()
        se, cu, simd, slot, seq, contexts, fileless, begin, end, records, latency, _ = r
        a, b = int(self.first[i]), int(self.first[i + 1])
        ins = empty_insts(b - a)
        ins["pc"], ins["stall"], ins["line"] = self.pc[a:b], self.stall[a:b], self.lines(slice(a, b))
        if b > a:
            ins["duration"][0] = latency
        timeline = [] if fileless else [(0, 0)] * 3
        path = None if self.paths is None else self.paths[i]
        return Wave(se, cu, simd, slot, begin, end, ins, timeline, seq, contexts, path, records)

    def __iter__(self) -> Iterator[Wave]:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"WaveTable({len(self)} waves, {len(self.pc)} stall rows)"


class WaveSelection:
    """The waves whose se, simd, slot, seq (the wv<N> of the file name) and cu are among the values asked for
    (a field not asked for: any): a Wave -> bool predicate that also tests a WaveTable's columns (`mask`),
    so that a million folded waves are filtered without a Wave made per row."""

    FIELDS = ("se", "simd", "slot", "seq", "cu")

    def __init__(self, se=(), simd=(), slot=(), seq=(), cu=()):
        asked = zip(self.FIELDS, (se, simd, slot, seq, cu))
        self.wanted = {name: frozenset(values) for name, values in asked if values}

    def __bool__(self) -> bool:
        return bool(self.wanted)

    def __call__(self, w: Wave) -> bool:
        return all(getattr(w, name) in values for name, values in self.wanted.items())

    def mask(self, waves: np.ndarray) -> np.ndarray:
        """Per row of `waves` (WAVE_SUMMARY_DTYPE, or any array with the FIELDS): whether it is selected."""
        import numpy as np

        keep = np.ones(len(waves), bool)
        for name, values in self.wanted.items():
            keep &= np.isin(waves[name], list(values))
        return keep

    def __repr__(self) -> str:
        return f"WaveSelection({', '.join(f'{k}={sorted(v)}' for k, v in self.wanted.items())})"


class CodeLine(Record):
    """One row of the code listing: an instruction (or a kernel label) and its totals over traced waves."""

    line: int  # line id, referenced by Wave.insts["line"]
    text: str  # instruction text as llvm-objdump prints it, or "; <symbol>" for a label
    source: str = ""  # "file:line", possibly an inline chain "a.py:1 -> b.py:2"; "" if unknown
    codeobj: int = 0
    vaddr: int = 0
    hit: int = 0
    latency: int = 0
    stall: int = 0
    idle: int = 0

    def __init__(self, line, text, source="", codeobj=0, vaddr=0, hit=0, latency=0, stall=0, idle=0):
        # made once per listing row (thousands per folder): the generic Record.__init__ is 3x slower
        self.line, self.text, self.source, self.codeobj, self.vaddr = line, text, source, codeobj, vaddr
        self.hit, self.latency, self.stall, self.idle = hit, latency, stall, idle

    @property
    def is_label(self) -> bool:
        return self.text.startswith(";")

    @property
    def is_no_pc(self) -> bool:
        """The row that totals the records the decoder could give no PC (raw inputs; rocprofv3's code.json
        has none, its writer leaves such records out)."""
        return self.text == NO_PC


NO_PC = "(no PC)"


class KernelResources(Record):
    """What a kernel asks of a compute unit, from its code object. Values come from the metadata note
    when there is one, else from the kernel descriptor (register counts then rounded up to the
    descriptor's granule, named in `rounded`). None: the code object does not say."""

    name: str
    arch: str = ""  # the code object's target ("" when it does not name one)
    vgpr: int | None = None  # VGPRs counted against the file; gfx90a+: arch VGPRs rounded to 4, plus AGPRs
    agpr: int | None = None  # accumulation registers (gfx908, gfx90a+)
    arch_vgpr: int | None = None  # architectural VGPRs (v0..): gfx90a+ accum_offset, else = vgpr
    sgpr: int | None = None  # with VCC, flat scratch and XNACK (what limits gfx9)
    lds_bytes: int | None = None  # static LDS (group segment); dynamic LDS is added at launch
    scratch_bytes: int | None = None  # private segment per work-item
    wave_size: int | None = None
    workgroup_size: int | None = None  # .reqd_workgroup_size product, else .max_flat_workgroup_size
    workgroup_size_exact: bool = False  # False: only the largest size the kernel allows
    kernarg_bytes: int | None = None
    sgpr_spill: int | None = None
    vgpr_spill: int | None = None
    dynamic_stack: bool | None = None
    wgp_mode: bool | None = None  # gfx10+: workgroup-processor mode (True) or CU mode
    xnack: str | None = None  # "on", "off", "any", "unsupported" (ELF e_flags)
    sramecc: str | None = None
    source: str = ""  # "metadata note + kernel descriptor", "kernel descriptor", ...
    rounded: tuple[str, ...] = ()  # fields known only rounded up to a granule


class CounterSamples(Record):
    """One source's performance-counter samples for a dispatch."""

    source: str  # "tinygrad PMC"; a second source (SQTT PERFEVENT) adds its own CounterSamples
    names: list[str]  # counter i of a sample is names[i]
    blocks: list[str]  # hardware block of each counter ("SQ", "GRBM", "GL2C", "TCC", ...)
    samples: np.ndarray = field(default_factory=lambda: _zeros("COUNTER_DTYPE"))
    problems: list[str] = field(default_factory=list)


class Dispatch(Record):
    """Everything attdec knows about one traced kernel dispatch.

    `waves` and `occupancy` may be given as `deferred(load)`: they are then loaded on first access, in
    bulk (reading them is most of a big folder's cost, and the default hotspots report needs neither).
    """

    name: str  # folder name or "<kernel>#<tag>"
    target: Target  # the GPU (a name is accepted too); a family-only Target when the input does not name the chip
    kernel: str = ""
    code: list[CodeLine] = field(default_factory=list)
    # a WaveTable where folded waves came as columns (`waves` of a raw capture: sources.raw, fold=True)
    waves: list[Wave] = field(default_factory=list)
    occupancy: np.ndarray = field(default_factory=empty_occupancy)
    realtime: list[tuple[int, int]] = field(default_factory=list)  # (shader clock, reference clock)
    # The same samples per shader engine (realtime.json keeps them per SE; SE clocks are not aligned).
    realtime_se: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    path: str | None = None
    problems: list[str] = field(default_factory=list)  # non-fatal: lost sync, truncated blob, missing file
    # What the source found damaged or inconsistent (a blob whose size or hash is not the one recorded, a
    # code.json of another kernel than the wave files', a figure past what the GPU can do): the command warns
    # of each on stderr and exits 3, "decoded with damage", whatever it printed. Each is "<where>: <what>".
    damage: list[str] = field(default_factory=list)
    # False when the input has no stall figures at all (rocprofv2 folders): stall totals are 0, not measured.
    stall_measured: bool = True
    resources: KernelResources | None = None  # from the code object (raw inputs); None for ui_output
    counters: list[CounterSamples] = field(default_factory=list)
    # Raw inputs only: the decoder's INFO records, SHADERDATA records (SHADERDATA_DTYPE) and the realtime
    # clock's frequency as the trace announces it (Hz; None: not announced, REALTIME_HZ is assumed).
    info: list[DecoderInfo] = field(default_factory=list)
    shaderdata: np.ndarray | None = None  # SHADERDATA_DTYPE rows; None: none (the model needs no numpy)
    other_simd: np.ndarray | None = None  # OTHER_SIMD_DTYPE rows (gfx11+); None: none
    rt_frequency: int | None = None
    # Waves decoded and counted but not kept in `waves` (a big blob decoded in windows for a report that reads
    # totals only: attdec.sources.listing.Folder); `wave_count` includes them.
    waves_not_kept: int = 0

    def __post_init__(self):
        self.target = target(self.target)  # a name is accepted: Dispatch("k", "gfx1100")
        pending = {k: v for k, v in self.__dict__.items() if isinstance(v, Deferred)}
        if pending:
            for k in pending:
                del self.__dict__[k]  # so that reading it reaches __getattr__
            self.__dict__["_deferred"] = pending

    def __getattr__(self, name: str):
        """Reached only for attributes not set: a deferred one is loaded now and kept."""
        pending = self.__dict__.get("_deferred")
        if not pending or name not in pending:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = pending[name].load()
        del pending[name]
        self.__dict__[name] = value
        return value

    def __setattr__(self, name: str, value) -> None:
        pending = self.__dict__.get("_deferred")
        if pending:
            pending.pop(name, None)  # assigned before it was ever read: the loader is not needed
        super().__setattr__(name, value)

    def __getstate__(self):
        """A pickled (or copied) Dispatch holds its data, not loaders that read files."""
        for name in list(self.__dict__.get("_deferred", ())):
            getattr(self, name)
        return {k: v for k, v in self.__dict__.items() if k != "_deferred"}

    def loaded(self, name: str) -> bool:
        """Whether attribute `name` is in memory (False while it is deferred: reading it would load it)."""
        return name not in self.__dict__.get("_deferred", ())

    @property
    def wave_count(self) -> int:
        """len(waves), without loading them when the source knows the count (a folder's wave files)."""
        pending = self.__dict__.get("_deferred", {}).get("waves")
        kept = pending.length if pending is not None and pending.length is not None else len(self.waves)
        return kept + self.waves_not_kept

    def __repr__(self) -> str:
        return (
            f"Dispatch({self.name!r}, {self.arch!r}, kernel={self.kernel!r}, {self.wave_count} waves, "
            f"{len(self.code)} listing rows)"
        )

    @property
    def arch(self) -> str:
        """The target as users read it: "gfx950", or "gfx9 (chip unknown)"."""
        return self.target.display
