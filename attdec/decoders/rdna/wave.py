"""One traced RDNA wave while its tokens arrive: the official per-wave timing model (sqtt-format.md §7.1),
and what both RDNA passes (scalar and vectorised) share around it: wave slots, the stitch-and-emit
step, the HEADER family check, the kernel-entry check and the realtime samples."""

from __future__ import annotations

from array import array
from collections.abc import Callable

import numpy as np

from attdec.decoders.common import BlobResult, c_record_widths
from attdec.decoders.compat import Rules
from attdec.decoders.rdna.packets import VERSION_GENERATION, Header, RdnaFormat, T
from attdec.decoders.rdna.splitter import Tokens
from attdec.decoders.stitch import PcWalker, Walk
from attdec.decoders.userdata import USERDATA_2, RocProtocol
from attdec.errors import ArchError
from attdec.model import (
    INST_DTYPE,
    OTHER_SIMD_DTYPE,
    SHADERDATA_DTYPE,
    SHADERDATA_IMM,
    SHADERDATA_PRIV,
    Category,
    Target,
    Wave,
    WaveState,
)

# named once here: the methods below run once per token on the scalar path
EMPTY, IDLE, EXEC, WAIT, STALL = (
    int(s) for s in (WaveState.EMPTY, WaveState.IDLE, WaveState.EXEC, WaveState.WAIT, WaveState.STALL)
)
CONTEXT, IMMED, MESSAGE = int(Category.CONTEXT), int(Category.IMMED), int(Category.MESSAGE)
SLOTS = 32  # wave slots per SIMD (the slot field is 5 bits)


class TracedWave:
    """One traced wave while its tokens arrive (official `wave_t`)."""

    __slots__ = (
        "barrier",
        "begin",
        "cat",
        "complete",
        "contexts",
        "cu",
        "dur",
        "end",
        "insts",
        "last",
        "pc_infos",
        "se",
        "simd",
        "slot",
        "stall",
        "state",
        "t",
        "timeline",
        "trapped",
        "walk",
    )

    def __init__(self, se: int, cu: int, simd: int, slot: int, begin: int, entry_pc: int):
        self.se, self.cu, self.simd, self.slot = se, cu, simd, slot
        self.begin = begin
        self.end = 0  # set by each INST token and by WAVE_END; a wave cut before either reports 0, as AMD's does
        self.t, self.cat, self.dur, self.stall = array("q"), array("b"), array("q"), array("q")
        self.pc_infos = [[0, entry_pc]]
        self.timeline: list = []  # [state, cycles] runs (tuples once the vectorised pass filled them)
        self.state: int = IDLE
        self.last = begin
        self.complete = self.trapped = self.barrier = False
        self.contexts = 0
        self.insts: np.ndarray | None = None  # the vectorised pass's records (a slice of the blob's array)
        self.walk: Walk | None = None  # the vectorised pass's PC walk, when it came before the records (pcs in)

    def set_state(self, new: int, time: int) -> None:
        if time > self.last:
            tl = self.timeline
            if tl and tl[-1][0] == self.state:
                tl[-1][1] += time - self.last
            else:
                tl.append([self.state, time - self.last])
            self.last = time
        self.state = new

    def barrier_ext(self, time: int) -> None:
        """gfx11 s_barrier under `Rules.gfx11_barrier_extension`: the IMMED record becomes a MESSAGE
        covering the whole wait."""
        self.barrier = False
        if self.cat and self.cat[-1] == IMMED:
            self.set_state(WAIT, self.t[-1] + self.dur[-1])
            self.set_state(EXEC, time + 1)
            self.dur[-1] = max(0, time - self.t[-1])
            self.cat[-1] = MESSAGE

    def issue(self, time: int, cat: int, cycles: int) -> None:
        """INST / VALU_INST of a non-immediate category at token time `time`."""
        last, state = self.last, self.state
        if state == STALL and last < time:
            st = time - last
            self.t.append(last)
            self.dur.append(cycles + st)
            self.stall.append(st)
        else:
            self.t.append(time)
            self.dur.append(cycles)
            self.stall.append(0)
        self.cat.append(cat)
        if time > last:  # set_state(EXEC, time), inlined: this runs once per issued instruction
            tl = self.timeline
            if tl and tl[-1][0] == state:
                tl[-1][1] += time - last
            else:
                tl.append([state, time - last])
            self.last = time
        self.state = EXEC

    def immediate(self, time: int) -> None:
        t0 = time
        if self.t:
            t0 = min(time, self.t[-1] + self.dur[-1])
        st = time - t0
        self.t.append(t0)
        self.cat.append(IMMED)
        self.dur.append(st + 1)
        self.stall.append(st)
        self.set_state(WAIT, t0)
        self.set_state(EXEC, time + 1)

    def context(self, time: int) -> None:
        """A trap or context save: a 1-cycle CONTEXT record."""
        self.t.append(time)
        self.cat.append(CONTEXT)
        self.dur.append(1)
        self.stall.append(0)

    def extend_context(self, time: int) -> None:
        """The trap or save ends at `time` (rfe, context restore): the CONTEXT record covers it."""
        if self.cat and self.cat[-1] == CONTEXT:
            self.dur[-1] = max(self.dur[-1], time + 1 - self.t[-1])

    def finish(self, time: int) -> None:
        self.set_state(EMPTY, time)
        self.end = time
        self.complete = True
        if self.t:
            last_end = self.t[-1] + self.dur[-1]
            if last_end < time and not self.trapped:  # s_endpgm leaves no token: a MESSAGE up to the end
                self.t.append(last_end)
                self.cat.append(MESSAGE)
                self.dur.append(time - last_end)
                self.stall.append(0)


# where a windowed decode takes the traced waves: (wave, the HEADER's exclude_barrier_wait when it left its slot)
Emit = Callable[["TracedWave", bool], object]


class Slots:
    """The traced SIMD's wave slots, each holding its latest wave. Waves leave through `emit` in the
    official stitch order: a complete wave when its slot gets a new WAVE_START, the others (and every
    wave still in a slot) at the end of the blob (`flush`), slot by slot."""

    def __init__(self, emit: Callable[[TracedWave], object]):
        self.now: list[TracedWave | None] = [None] * SLOTS
        self.pending: dict[int, list[TracedWave]] = {}  # by slot (a few slots have any)
        self.emit = emit

    def take(self, slot: int, wv: TracedWave) -> None:
        old = self.now[slot]
        if old is not None:
            if old.complete:
                self.emit(old)
            else:
                self.pending.setdefault(slot, []).append(old)
        self.now[slot] = wv

    def flush(self) -> None:
        for slot, wv_now in enumerate(self.now):
            for wv in self.pending.get(slot, ()):
                self.emit(wv)
            if wv_now is not None:
                self.emit(wv_now)


def start_result(tk: Tokens, data: bytes, tgt: Target, se: int) -> BlobResult:
    res = BlobResult(se=se, target=tgt)
    res.problems.extend(tk.problems)
    res.realtime = realtime_pairs(tk.realtime)
    res.bytes_decoded = len(data)
    return res


def side_records(res: BlobResult, tk: Tokens, fmt: RdnaFormat) -> None:
    """The records besides waves and occupancy, from the tokens both passes keep: SHADERDATA (SHADER_DATA
    and SHADER_DATA_SHORT, fields read with the family's layout as the official handler does; gfx11 drops
    the `invalid` ones, gfx12's `sdt` marks trap-handler data), the ROCm protocol in USERDATA_2 writes
    (code-object markers, RT_FREQUENCY)."""
    table, typ = fmt.table, tk.type
    types = typ.tobytes()  # (whether there is shader data at all: a bytes search)
    if T["SHADER_DATA"] in types or T["SHADER_DATA_SHORT"] in types:
        is_short = typ == T["SHADER_DATA_SHORT"]
        sel = ((typ == T["SHADER_DATA"]) | is_short).nonzero()[0]
        long_p, short_p, sw, short = table["SHADER_DATA"], table["SHADER_DATA_SHORT"], tk.words(sel), is_short[sel]

        def col(name: str) -> np.ndarray:
            return np.where(short, short_p[name].column(sw), long_p[name].column(sw))

        keep = col("invalid") == 0 if "invalid" in long_p else np.ones(len(sel), bool)
        sd = np.zeros(int(keep.sum()), SHADERDATA_DTYPE)
        sd["se"], sd["time"], sd["value"] = res.se, tk.time[sel][keep], col("data")[keep]
        sd["cu"] = ((col("sa") << np.uint64(7)) | col("wgp"))[keep]
        sd["simd"], sd["slot"] = col("simd")[keep], col("slot")[keep]
        flags = short.astype(np.uint8) * SHADERDATA_IMM
        if "sdt" in long_p:
            flags |= (col("sdt") != 0).astype(np.uint8) * SHADERDATA_PRIV
        sd["flags"] = flags[keep]
        res.shaderdata = sd
    reg = table["REG"]
    rw = tk.words((typ == T["REG"]).nonzero()[0])
    user = reg["addr"].column(rw) == USERDATA_2
    if fmt.generation > 10:  # gfx10 carries user data in compute-state writes too
        user &= reg["cs"].column(rw) == 0
    if np.count_nonzero(user):
        proto = RocProtocol()
        for v in reg["data"].column(rw[user]).tolist():
            proto.userdata2(v)
        res.code_objects, res.rt_frequency = proto.markers, proto.rt_frequency


def other_simd_records(se: int, time, cycles, wgp, category) -> np.ndarray:
    """INST_OTHER_SIMD records from parallel arrays (the `wgp` is the traced one, as the official says)."""
    out = np.zeros(len(time), OTHER_SIMD_DTYPE)
    out["se"], out["time"], out["cycles"], out["wgp"], out["category"] = se, time, cycles, wgp, category
    return out


def realtime_pairs(samples: np.ndarray) -> list[tuple[int, int]]:
    """(shader clock, reference clock) pairs from (n, 2) samples; a sample where either clock does not
    increase is averaged into the previous one (official realtime helper; e.g. two samples at the same
    shader clock)."""
    rows = list(zip(*samples.T.tolist()))
    not_up = samples[1:] <= samples[:-1]
    if not np.count_nonzero(not_up):  # the usual case: nothing to average
        return rows
    # the rows that do not increase over the row before them: only those, and the rows after an average,
    # are compared one by one (after a row kept as it is, the rows up to the next such one follow it)
    late = [*(not_up.any(axis=1).nonzero()[0] + 1).tolist(), len(rows)]
    out: list[tuple[int, int]] = []
    i, j, exact = 0, 0, True
    while i < len(rows):
        if exact:  # out[-1] is rows[i - 1] as it was
            while late[j] < i:
                j += 1
            out += rows[i : late[j]]
            i = late[j]
            if i == len(rows):
                break
        sc, rc = rows[i]
        if out and (sc <= out[-1][0] or rc <= out[-1][1]):
            out[-1] = ((out[-1][0] + sc) // 2, (out[-1][1] + rc) // 2)
            exact = False
        else:
            out.append(rows[i])
            exact = True
        i += 1
    return out


def reported_cu(cu, rules: Rules):
    """A `cu` as the decoder version reports it: the WGP plus the shader array times
    2 ** `Rules.rdna_cu_sa_shift` (the models keep the shader array at bit 7)."""
    shift = rules.rdna_cu_sa_shift
    return cu if shift == 7 else ((cu >> 7) << shift) + (cu & 0x7F)


def as_reported(res: BlobResult, rules: Rules, waves: bool = True) -> BlobResult:
    """The records of a decoded blob as the decoder version reports them: the `cu` of every record kind
    (`reported_cu`; of the waves too unless `waves` is False) and, where the version has no such record
    (0.1.4), no INST_OTHER_SIMD."""
    if not rules.other_simd_records:
        res.other_simd = res.other_simd[:0]
    if rules.rdna_cu_sa_shift != 7:
        for records in (res.occupancy, res.shaderdata):
            records["cu"] = reported_cu(records["cu"], rules)
        for w in res.waves if waves else ():
            w.cu = reported_cu(w.cu, rules)
    return res


def check_header(hdr: Header, generation: int, tgt: Target, where: str) -> None:
    """A HEADER of another RDNA family in the blob: the user named the wrong architecture."""
    gen = VERSION_GENERATION.get(hdr.version)
    if gen is not None and gen != generation and hdr.version >= 3:
        raise ArchError(f"the trace is gfx{gen} (header version {hdr.version}), not {tgt.name}", where or None)


def to_wave(wv: TracedWave, walker: PcWalker | None, exclude_barrier_wait: bool, stitched: list) -> Wave:
    """A finished wave as a model Wave, its records stitched to PCs when there is code; (wave, ended,
    trapping, walk, entry pc) goes to `stitched` (`stitch.note_waves`)."""
    if wv.insts is not None:
        insts, timeline = wv.insts, wv.timeline
    else:
        n = len(wv.t)
        insts = np.zeros(n, INST_DTYPE)
        insts["line"] = -1
        if n:
            insts["time"] = np.frombuffer(wv.t, np.int64)
            insts["category"] = np.frombuffer(wv.cat, np.int8)
            insts["duration"] = np.frombuffer(wv.dur, np.int64)
            insts["stall"] = np.frombuffer(wv.stall, np.int64)
        timeline = [(s, d) for s, d in wv.timeline]
    walk = wv.walk  # (the vectorised pass walked before writing the records: their pcs are in)
    if walk is not None and walker is not None:
        if walk.widened or walk.barriers:
            insts, timeline = walker.apply(insts, walk, timeline, wv.begin)
    elif walker is not None and len(insts):
        insts, timeline, walk = walker.stitch(
            insts, wv.pc_infos, timeline, wv.begin, exclude_barrier_wait=exclude_barrier_wait
        )
    end = wv.end
    if not wv.complete and len(insts):
        end = max(end, int((insts["time"] + insts["duration"] + 4).max()))
    timeline = c_record_widths(insts, timeline, end - wv.begin)
    wave = Wave(
        se=wv.se,
        cu=wv.cu,
        simd=wv.simd,
        slot=wv.slot,
        begin=wv.begin,
        end=end,
        insts=insts,
        timeline=timeline,
        contexts=wv.contexts,
    )
    stitched.append((wave, wv.complete, False, walk, wv.pc_infos[0][1] if wv.pc_infos else 0))
    return wave
