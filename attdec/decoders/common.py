"""What every family decoder returns, the PC -> instruction map they walk, and what they share."""

from __future__ import annotations

import numpy as np

from attdec.model import OCCUPANCY_DTYPE, OTHER_SIMD_DTYPE, PERFEVENT_DTYPE, SHADERDATA_DTYPE, DecoderInfo, Wave
from attdec.model.record import Record, field
from attdec.model.target import Target

# gfx9: the category of an ISSUE placeholder no INST token has described yet. Internal (past the official
# categories): the PC walk stops at it, and a finished wave reports it as NONE.
NOT_FINISHED = 14


class NotVectorisable(Exception):
    """The blob has a token order a vectorised model does not cover (e.g. tokens after WAVE_END): the
    family's scalar reference model decodes it instead."""


_EMPTY_OCCUPANCY, _EMPTY_OTHER_SIMD, _EMPTY_SHADERDATA, _EMPTY_PERFEVENTS = (
    np.zeros(0, d) for d in (OCCUPANCY_DTYPE, OTHER_SIMD_DTYPE, SHADERDATA_DTYPE, PERFEVENT_DTYPE)
)


class BlobResult(Record):
    """Records decoded from one shader engine's SQTT stream: every record kind AMD's decoder reports
    (waves, occupancy, realtime, other-SIMD, SHADERDATA, PERFEVENT, RT_FREQUENCY, INFO) and the code
    objects the trace announces, plus attdec's own findings with byte offsets."""

    se: int
    target: Target  # the GPU the blob was decoded as
    waves: list[Wave] = field(default_factory=list)
    occupancy: np.ndarray = field(default_factory=lambda: np.zeros(0, OCCUPANCY_DTYPE))
    realtime: list[tuple[int, int]] = field(default_factory=list)  # (shader clock, reference clock)
    other_simd: np.ndarray = field(default_factory=lambda: np.zeros(0, OTHER_SIMD_DTYPE))
    shaderdata: np.ndarray = field(default_factory=lambda: np.zeros(0, SHADERDATA_DTYPE))
    perfevents: np.ndarray = field(default_factory=lambda: np.zeros(0, PERFEVENT_DTYPE))
    rt_frequency: int | None = None  # Hz, from the ROCm protocol's AGENT_INFO (RT_FREQUENCY record)
    info: list[DecoderInfo] = field(default_factory=list)  # AMD's INFO records, with counts and offsets
    code_objects: list = field(default_factory=list)  # userdata.CodeObjectMarker loads the trace announces
    problems: list[str] = field(default_factory=list)  # damage: lost sync, truncation... with byte offsets
    warnings: list[str] = field(default_factory=list)  # not damage: PC walks that stopped, waves cut
    bytes_decoded: int = 0
    walks: int = 0  # traced waves whose records were walked against the code for their PCs
    walks_stopped: int = 0  # of those, walks that stopped early: their later records have pc 0

    def __init__(
        self,
        se: int,
        target: Target,
        waves: list[Wave] | None = None,
        occupancy: np.ndarray | None = None,
        realtime: list[tuple[int, int]] | None = None,
        other_simd: np.ndarray | None = None,
        shaderdata: np.ndarray | None = None,
        perfevents: np.ndarray | None = None,
        rt_frequency: int | None = None,
        info: list[DecoderInfo] | None = None,
        code_objects: list | None = None,
        problems: list[str] | None = None,
        warnings: list[str] | None = None,
        bytes_decoded: int = 0,
        walks: int = 0,
        walks_stopped: int = 0,
    ) -> None:
        # its own: one is made for every decoded blob, and `Record.__init__` with ten made defaults costs more
        # than a small blob's whole set-up (`None`: a fresh empty list, an empty array: a view of one made
        # once, which has no element to share)
        self.se, self.target, self.rt_frequency = se, target, rt_frequency
        self.waves = [] if waves is None else waves
        self.occupancy = _EMPTY_OCCUPANCY[:] if occupancy is None else occupancy
        self.realtime = [] if realtime is None else realtime
        self.other_simd = _EMPTY_OTHER_SIMD[:] if other_simd is None else other_simd
        self.shaderdata = _EMPTY_SHADERDATA[:] if shaderdata is None else shaderdata
        self.perfevents = _EMPTY_PERFEVENTS[:] if perfevents is None else perfevents
        self.info = [] if info is None else info
        self.code_objects = [] if code_objects is None else code_objects
        self.problems = [] if problems is None else problems
        self.warnings = [] if warnings is None else warnings
        self.bytes_decoded, self.walks, self.walks_stopped = bytes_decoded, walks, walks_stopped

    @property
    def damaged(self) -> bool:
        """Whether the blob is truncated, lost sync or does not fit the code (`decode` exits 3). PC walks
        that stop early (AMD's decoder stops there too) and waves cut by the end of the blob are warnings."""
        return bool(self.problems)

    def code_object_ids(self, pcs: np.ndarray) -> np.ndarray:
        """The id of the code object (announced by the trace's markers) that holds each absolute PC, 0 where
        none does, as AMD's decoder attributes PCs; the latest load of an address range wins."""
        return self.amd_pcs(pcs)[1]

    def amd_pcs(self, pcs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each absolute PC as AMD's decoder reports it (its `pc_t`): (address, code_object_id), the offset
        inside the code object the trace announced that holds it and that object's id, or the absolute PC
        and 0 where none does. attdec keeps PCs absolute so that records from different code objects (or
        from traces without markers) compare directly; this is the form for matching AMD's output."""
        pc = np.asarray(pcs, np.uint64)
        address, ids = pc.copy(), np.zeros(len(pc), np.uint64)
        for m in self.code_objects:
            if not m.unload and m.size:
                inside = (pc >= np.uint64(m.addr)) & (pc < np.uint64(m.addr + m.size))
                ids[inside] = m.id
                address[inside] = pc[inside] - np.uint64(m.addr)
        return address, ids


def data_lost(res: BlobResult, lost_at: list[int]) -> None:
    """DATA_LOST when the trace says packets were lost (after the waves' INFO records, as the official
    decoder raises it once the blob is parsed); damage, so also a problem."""
    if lost_at:
        n, at = len(lost_at), lost_at[0]
        res.info.append(DecoderInfo("DATA_LOST", res.se, n, at, "the trace unit lost packets"))
        res.problems.append(f"the trace unit lost packets {n} time(s), first at byte {at} (DATA_LOST)")


def implausible(times: np.ndarray, begin: int, end: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Records no valid stream gives (none in the captures' undamaged decodes): (starts before its wave
    began or before an earlier record, starts after its ended wave's end), or None when there are none
    (the common case, found with two comparisons so the decode's hot path barely notices)."""
    n = len(times)
    if not n:
        return None
    t = np.ascontiguousarray(times)  # (a field of packed records: copied once, compared aligned, quicker)
    if t[0] >= begin and (not end or t[-1] <= end) and not np.count_nonzero(t[1:] < t[:-1]):  # (quicker than all)
        return None
    early = t < np.maximum.accumulate(np.r_[begin, t[:-1]])
    late = (t > end) & ~early if end else np.zeros(n, bool)
    return early, late


class Implausible:
    """What a blob's plausibility checks left out, for one problem line (a flipped bit or a zeroed run
    makes such records; AMD's decoder reports them as records)."""

    REASONS = ("before its wave or an earlier record", "after its wave ended", "in a wave slot the SIMD lacks")

    def __init__(self) -> None:
        self.counts = [0, 0, 0]
        self.first: Wave | None = None

    def add(self, wave: Wave, *counts: int) -> None:
        if any(counts):
            self.counts = [a + b for a, b in zip(self.counts, counts)]
            self.first = self.first or wave

    def note(self, res: BlobResult) -> None:
        w = self.first
        if w is not None:
            detail = ", ".join(f"{n} {why}" for n, why in zip(self.counts, self.REASONS) if n)
            res.problems.append(
                f"implausible records left out ({detail}; first: se {w.se} cu {w.cu} simd {w.simd} slot {w.slot}, "
                f"begun at {w.begin}): the stream is damaged there"
            )


STALL_BITS = 24  # the C record keeps a stall in the 24 bits above its category byte


def c_record_widths(insts: np.ndarray, timeline: list, span: int) -> list:
    """Durations and stalls as AMD's C records hold them: a record's duration is a signed 32-bit field, its
    stall 24 unsigned bits, a timeline run's duration 32 signed bits. The records are changed in place, the
    timeline returned. Cycle counts that do not fit come from garbage times in damaged streams, or from
    stalls of over 2**24 cycles; a wave's end is taken before (0.1.6 computes it from the full count).
    `span`: the wave's end minus its begin, which bounds its runs."""
    d, s = insts["duration"], insts["stall"]
    if len(d) and not 0 <= int(np.bitwise_or.reduce(d | s)) < 1 << STALL_BITS:
        d[:] = d.astype(np.int32)
        s &= (1 << STALL_BITS) - 1
    if span < 1 << 31:
        return timeline
    return [(state, int(np.int64(n).astype(np.int32))) for state, n in timeline]


def drop_implausible(res: BlobResult, plausible: bool = False) -> None:
    """Leave out the records `implausible` finds, and the waves in a slot their SIMD does not have (RDNA:
    the wave id has 5 bits, the SIMD fewer slots). `plausible`: the records are plausible by construction
    (the caller says why), only the slots are checked."""
    cu = res.target.cu
    slots = cu.wave_slots if cu is not None else 32  # (32: every slot the RDNA field can name)
    found = Implausible()
    keep = []
    for w in res.waves:
        if w.slot >= slots:
            found.add(w, 0, 0, max(len(w.insts), 1))
            continue
        keep.append(w)
        if plausible:
            continue
        bad = implausible(w.insts["time"], w.begin, w.end)
        if bad is not None:
            early, late = bad
            found.add(w, int(early.sum()), int(late.sum()), 0)
            w.insts = w.insts[~(early | late)]
    res.waves = keep
    found.note(res)


def official_order(waves: list[Wave], complete: list[bool]) -> list[Wave]:
    """A blob's waves in the order AMD's decoder (0.1.6) reports them: the waves that ended, by end time
    (stable: waves that end together keep their stitch order), then the waves cut by the end of the blob,
    in the order they were stitched. The PC walk runs in stitch order, which matters for its per-line
    state; only the output is reordered."""
    ended = sorted((w for w, c in zip(waves, complete) if c), key=lambda w: w.end)
    return ended + [w for w, c in zip(waves, complete) if not c]


def without_code(code: CodeMap | None) -> bool:
    """No code to walk: none given, or none loaded (an empty map, as a decode without a code object passes).
    AMD's decoder then fails every ISA query, which changes how it times some records (gfx9 OTHER_MSG)."""
    return code is None or not len(code)


def entry_problem(code: CodeMap, pc: int, byte: int) -> str | None:
    """The first traced wave's entry PC (its WAVE_START at `byte`) must be in the code: else the code
    objects or their load bases are wrong, and no record will get a PC."""
    if code.get(pc) is not None:
        return None
    return (
        f"kernel entry pc {pc:#x} (byte {byte}) is not in any loaded code object: wrong --code or load base? PCs stay 0"
    )


class CodeMap:
    """Absolute PC -> decoded instruction, over every code object loaded for a dispatch.

    The decoders walk this to learn which instruction each trace token stands for. A part's address ->
    instruction table is made once per instruction list (`_by_address`): the dispatches of one kernel load
    the same (cached) disassembly, each at its base.
    """

    def __init__(self) -> None:
        self._tables: list[tuple[dict[int, object], int]] = []  # (address -> instruction, load base), latest first
        self._parts: list[tuple[object, int]] = []  # (instructions, load base) as added
        self._size: int | None = None
        self._key: tuple | None = ()

    def add(self, instructions, load_base: int) -> None:
        """Add `attdec.isa.Instruction`s whose `address` is an ELF vaddr loaded at `load_base` (not changed
        afterwards: see `parts_key`). Where parts overlap, the latest added wins."""
        self._tables.insert(0, (_by_address(instructions), load_base))
        self._parts.append((instructions, load_base))
        self._size = None
        self._key = None

    def parts_key(self) -> tuple:
        """What the map is made of, by identity: maps built from the same (cached) disassembly at the same
        bases have the same key, so the PC walk can share what it learns between them. The map holds its
        parts, so no other object can take their ids while it lives."""
        if self._key is None:
            self._key = tuple((id(ins), base) for ins, base in self._parts)
        return self._key

    def get(self, pc: int):
        for table, base in self._tables:
            ins = table.get(pc - base)
            if ins is not None:
                return ins
        return None

    def __len__(self) -> int:
        """The PCs that have an instruction."""
        if self._size is None:
            tables = self._tables
            one = len(tables) == 1
            self._size = len(tables[0][0]) if one else len({base + a for table, base in tables for a in table})
        return self._size


# address -> instruction tables of the instruction lists added to code maps lately, by identity (each entry
# holds its list, so no other object can take its id while it is here). Bounded like the walk's shared
# state: in entries, and in the instructions they keep alive (a code object too big for sources.raw's
# cache is disassembled afresh for each dispatch).
_BY_ADDRESS: dict[int, tuple[object, dict[int, object]]] = {}
MAX_BY_ADDRESS, MAX_BY_ADDRESS_INSTRUCTIONS = 64, 1 << 20


def _by_address(instructions) -> dict[int, object]:
    hit = _BY_ADDRESS.get(id(instructions))
    if hit is not None and hit[0] is instructions:
        return hit[1]
    table = {ins.address: ins for ins in instructions}
    if isinstance(instructions, (list, tuple)) and len(instructions) <= MAX_BY_ADDRESS_INSTRUCTIONS:
        held = sum(len(t) for _, t in _BY_ADDRESS.values()) + len(table)
        while _BY_ADDRESS and (len(_BY_ADDRESS) >= MAX_BY_ADDRESS or held > MAX_BY_ADDRESS_INSTRUCTIONS):
            held -= len(_BY_ADDRESS.pop(next(iter(_BY_ADDRESS)))[1])  # the oldest
        _BY_ADDRESS[id(instructions)] = (instructions, table)
    return table
