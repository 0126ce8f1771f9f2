"""The gfx9 pass over the tokens that matter (official `MISQTTParser::sqtt_simd_analysis`, sqtt-format.md
§5-§7.2): occupancy for every wave, the ISSUE/INST timing model for the target CU's waves, the kernel
entry from the CS registers, realtime samples from the instrumentation protocol; then the PC walk of
each finished wave."""

from __future__ import annotations

from array import array

import numpy as np

from attdec.decoders.common import (
    BlobResult,
    CodeMap,
    Implausible,
    data_lost,
    entry_problem,
    without_code,
)
from attdec.decoders.compat import Rules
from attdec.decoders.gfx9.packets import GFX9, SLOTS, TOKEN_NAMES, MiscKind
from attdec.decoders.gfx9.stitch import Gfx9Walker
from attdec.decoders.gfx9.wave import CONTEXT, START_PHASE, Carried, TracedWave, TrapStatus, finish_wave
from attdec.decoders.stitch import PcWalker, note_waves
from attdec.decoders.userdata import USERDATA_2, USERDATA_3, RocProtocol
from attdec.model import OCCUPANCY_DTYPE, PERFEVENT_DTYPE, SHADERDATA_DTYPE, Wave, empty_insts

# Compute register offsets (REG_CS regaddr) the decoder latches.
COMPUTE_PGM_LO, COMPUTE_PGM_HI = 0x0C, 0x0D
ADDR_MASK = (1 << 48) - 1
# WAVE_START `count` above this marks a context save/restore on the target CU, not a new wave (§5.3)
CONTEXT_COUNT = 64
MAX_CONTEXTS = 255  # the wave record's `contexts` is a u8


# What the pass reads, looked up once per process (it runs for every blob, most of them small): the token
# types it handles, their layouts, and the fields of the per-token branches as (shift, mask) pairs.
_TYPES = tuple(
    TOKEN_NAMES.index(n)
    for n in ("ISSUE", "INST", "INST_PC", "MISC", "REG", "WAVE_START", "WAVE_END", "REG_CS", "REG_CS_PRIV",
              "WAVE_ALLOC", "SHADERDATA", "PERF")
)  # fmt: skip
SHADERDATA = TOKEN_NAMES.index("SHADERDATA")


def _bits(packet: str, *names: str) -> tuple[int, ...]:
    """(shift, mask, shift, mask, ...) of these fields: unpacked into locals, read with shifts and masks."""
    return tuple(x for k in names for x in (GFX9[packet][k].lo, GFX9[packet][k].mask))


_ISSUE_BITS = _bits("ISSUE", "simd", "status")
_INST_BITS = _bits("INST", "slot", "simd", "kind")
_WAVE_BITS = _bits("WAVE_START", "sh", "cu", "slot", "simd", "me", "pipe", "count")  # WAVE_END: the same
_CS_BITS = _bits("REG_CS", "addr", "data", "me", "pipe")  # REG_CS_PRIV has REG_CS's layout
_REG_BITS = _bits("REG", "enable", "addr", "data")
_PERF_BITS = _bits("PERF", "sh", "cu", "bank", "counter0", "counter1", "counter2", "counter3")
STATUS_BITS = 2  # an ISSUE token's status of each slot


def _slices(*arrays, size: int = 1 << 18):
    """Rows of parallel numpy arrays as Python ints, a slice at a time (bounded list memory)."""
    n = len(arrays[0])
    for lo in range(0, n, size):
        yield from zip(*(a[lo : lo + size].tolist() for a in arrays))


def run(
    res: BlobResult, types, vals, times, offsets, tcu: int, code: CodeMap | None, rules: Rules, carried=None
) -> None:
    """The state machine over the tokens that matter (numpy arrays in); fills `res`. `carried`: a `Carried`
    (one segment of a blob decoded in segments).

    The loop handles the tokens every blob is full of (ISSUE, INST) itself; the others go to the named
    handlers of `ScalarPass`, which say whether decoding stops there."""
    ISSUE, INST, INST_PC, MISC, REG, WAVE_START, WAVE_END, REG_CS, REG_CS_PRIV, WAVE_ALLOC, SHADERDATA, PERF = _TYPES
    p = ScalarPass(res, tcu, code, rules, carried)
    rare = {
        WAVE_START: p.wave_start,
        WAVE_END: p.wave_end,
        INST_PC: p.inst_pc,
        REG_CS: p.compute_register,
        REG_CS_PRIV: p.compute_register,
        MISC: p.misc,
        REG: p.register,
        WAVE_ALLOC: p.shader_data,
        SHADERDATA: p.shader_data,
        PERF: p.perf_reading,
    }
    is_lo, is_mk, st_lo, st_mk = _ISSUE_BITS
    i_slot_lo, i_slot_mk, i_simd_lo, i_simd_mk, i_kind_lo, i_kind_mk = _INST_BITS
    slots, phase_box, no_code = p.slots, p.phase_box, without_code(code)
    issue_pairs: dict[int, list[tuple[int, int]]] = {}  # ISSUE status field -> [(slot, status)] of non-zero slots

    for ty, v, t, off in _slices(types, vals, times, offsets):
        if ty == ISSUE:
            row = slots[(v >> is_lo) & is_mk]
            field = (v >> st_lo) & st_mk
            pairs = issue_pairs.get(field)
            if pairs is None:
                pairs = issue_pairs[field] = [
                    (i, (field >> STATUS_BITS * i) & 3) for i in range(SLOTS) if (field >> STATUS_BITS * i) & 3
                ]
            for i, st in pairs:
                if row[i]:
                    row[i][-1].issue(st, t)
        elif ty == INST:
            slot, simd, itype = (v >> i_slot_lo) & i_slot_mk, (v >> i_simd_lo) & i_simd_mk, (v >> i_kind_lo) & i_kind_mk
            if slot >= SLOTS:
                p.aborts("INST", slot, off)
                break
            ws = slots[simd][slot]
            if not ws or ws[-1].end:  # an INST for a slot with no live wave: a wave whose start was lost
                ws.append(TracedWave(tcu, simd, slot, t, 0, rules, no_code))
            err = ws[-1].inst(itype, t, simd, phase_box)
            if err:
                res.problems.append(f"{err} at byte offset {off}")
        else:
            handler = rare.get(ty)
            if handler is not None and handler(ty, v, t, off):
                break
    p.finish()


class ScalarPass:
    """What the pass keeps while it reads one blob (the traced CU's wave slots, the waves running at each
    location, the kernel entry registers, realtime, shader data and counter readings) and what the tokens
    other than ISSUE and INST do to it, one handler a token kind. A handler returns True where the official
    decoder aborts (decoding stops there)."""

    def __init__(self, res: BlobResult, tcu: int, code: CodeMap | None, rules: Rules, carried: Carried | None):
        self.res, self.tcu, self.code, self.rules, self.carried = res, tcu, code, rules, carried
        self.slots: list[list[list[TracedWave]]] = [[[] for _ in range(SLOTS)] for _ in range(4)]  # (simd, slot)
        self.running: dict[int, int] = {}  # location -> entry pc (occupancy)
        self.occ = array("q")  # flat (cu, simd, slot, start, time, pc) rows: 48 bytes a row
        self.occ_front = array("q")  # synthetic starts for ends without a start, placed first
        self.pgm: dict[tuple[int, int], int] = {}  # (me & 1, pipe) -> PGM address register (>> 8)
        self.phase_box = carried.phase if carried else [START_PHASE]  # the SE-wide CYCLE_START_PHASE
        self.packet_lost = False
        self.done: list[TracedWave] = []  # finished waves, in emission order
        self.proto = RocProtocol()
        self.lost_at: list[int] = []  # byte offsets of MISC PACKET_LOST tokens
        self.shaderdata: list[tuple[int, int, int, int, int]] = []  # (time, value, cu, simd, slot)
        self.perf: list[tuple] = []  # PERFEVENT rows (time, events0..3, cu, bank), as the official emits them
        self.last_perf: dict[tuple[int, int], int] = {}  # (cu, bank) -> time of its latest reading
        self.entry_checked = without_code(code)

    def aborts(self, what: str, slot: int, off: int) -> bool:
        """A token naming a wave slot that does not exist: the official decoder aborts, so does the pass."""
        self.res.problems.append(
            f"{what} for wave slot {slot} at byte offset {off}; the official decoder aborts here, decoding stopped"
        )
        return True

    def wave_start(self, ty: int, v: int, t: int, off: int) -> bool:
        """WAVE_START: a wave's occupancy begins; on the target CU a traced wave begins, or (count above
        CONTEXT_COUNT) the wave in the slot is context-saved or restored."""
        sh_lo, sh_mk, cu_lo, cu_mk, slot_lo, slot_mk, simd_lo, simd_mk, me_lo, me_mk, pipe_lo, pipe_mk, n_lo, n_mk = (
            _WAVE_BITS
        )
        sh, cu, slot, simd = (
            (v >> sh_lo) & sh_mk,
            (v >> cu_lo) & cu_mk,
            (v >> slot_lo) & slot_mk,
            (v >> simd_lo) & simd_mk,
        )
        me, pipe, count = (v >> me_lo) & me_mk, (v >> pipe_lo) & pipe_mk, (v >> n_lo) & n_mk
        if slot >= SLOTS:
            return self.aborts("WAVE_START", slot, off)
        loc = slot | simd << 5 | cu << 7
        pc = (self.pgm.get((me & 1, pipe), 0) << 8) & ADDR_MASK
        if cu == self.tcu and sh == 0:
            ws = self.slots[simd][slot]
            if count > CONTEXT_COUNT:  # context save/restore, not a new wave
                if ws:
                    self.context_switch(ws[-1], t)
                return False
            if not ws or ws[-1].end:
                ws.append(TracedWave(self.tcu, simd, slot, t, pc, self.rules, without_code(self.code)))
                if not self.entry_checked:
                    self.entry_checked = True
                    p = entry_problem(self.code, pc, off)  # type: ignore[arg-type]
                    if p:
                        self.res.problems.append(p)
        if loc not in self.running:
            self.occ.extend((cu, simd, slot, 1, t, pc))
        self.running[loc] = pc
        return False

    @staticmethod
    def context_switch(w: TracedWave, t: int) -> None:
        """A context save or restore of a traced wave: a wave asked to save (MISC SAVE_CONTEXT) goes to
        standby with a CONTEXT record; a wave in standby waits for its new PC."""
        if w.trap == TrapStatus.REQUEST:
            w.contexts = min(w.contexts + 1, MAX_CONTEXTS)
            w.trap = TrapStatus.STANDBY
            w.insts.append([t, CONTEXT, 4, 0, 0])
            w.trapping = True
        elif w.trap == TrapStatus.STANDBY:
            w.trap = TrapStatus.WAIT_FOR_NEW_PC

    def wave_end(self, ty: int, v: int, t: int, off: int) -> bool:
        """WAVE_END: a wave's occupancy ends (an end without a start gets one at time 0 unless packets were
        lost); on the target CU the traced wave finishes."""
        sh_lo, sh_mk, cu_lo, cu_mk, slot_lo, slot_mk, simd_lo, simd_mk, *_ = _WAVE_BITS
        sh, cu, slot, simd = (
            (v >> sh_lo) & sh_mk,
            (v >> cu_lo) & cu_mk,
            (v >> slot_lo) & slot_mk,
            (v >> simd_lo) & simd_mk,
        )
        if slot >= SLOTS:
            return self.aborts("WAVE_END", slot, off)
        loc = slot | simd << 5 | cu << 7
        if cu == self.tcu and sh == 0:
            ws = self.slots[simd][slot]
            if not ws or ws[-1].trap != TrapStatus.RESTORED:
                return False  # official: skips the occupancy record too
            w = ws.pop()
            w.finish(t)
            self.done.append(w)
        if loc in self.running:
            self.occ.extend((cu, simd, slot, 0, t, self.running.pop(loc)))
        elif not self.packet_lost:
            self.occ_front.extend((cu, simd, slot, 1, 0, 0))
            self.occ.extend((cu, simd, slot, 0, 0, 0))
        return False

    def inst_pc(self, ty: int, v: int, t: int, off: int) -> bool:
        """INST_PC: the PC of the slot's wave's next record."""
        pc_p = GFX9["INST_PC"]
        slot, simd = pc_p["slot"].get(v), pc_p["simd"].get(v)
        if slot >= SLOTS:
            return self.aborts("INST_PC", slot, off)
        ws = self.slots[simd][slot]
        if ws:
            ws[-1].new_pc(pc_p["pc_dw"].get(v) << 2)
        return False

    def compute_register(self, ty: int, v: int, t: int, off: int) -> bool:
        """REG_CS / REG_CS_PRIV: COMPUTE_PGM_LO/HI are latched (the kernel entry of the next WAVE_STARTs)."""
        addr_lo, addr_mk, data_lo, data_mk, me_lo, me_mk, pipe_lo, pipe_mk = _CS_BITS
        addr, data = (v >> addr_lo) & addr_mk, (v >> data_lo) & data_mk
        me, pipe = (v >> me_lo) & me_mk, (v >> pipe_lo) & pipe_mk
        key = ((me + 1) & 1, pipe)  # official ME: (field + 1) & 1
        if addr == COMPUTE_PGM_LO:
            self.pgm[key] = (self.pgm.get(key, 0) & ~0xFFFFFFFF) | data
        elif addr == COMPUTE_PGM_HI:
            self.pgm[key] = (self.pgm.get(key, 0) & 0xFFFFFFFF) | data << 32
        return False

    def misc(self, ty: int, v: int, t: int, off: int) -> bool:
        """MISC: PACKET_LOST is noted; SAVE_CONTEXT asks every live traced wave to save."""
        sub = GFX9["MISC"]["kind"].get(v)
        if sub == MiscKind.PACKET_LOST:
            self.packet_lost = True
            self.lost_at.append(off)
        elif sub == MiscKind.SAVE_CONTEXT:
            for row in self.slots:
                for ws in row:
                    if ws and ws[-1].end == 0:
                        ws[-1].trap = TrapStatus.REQUEST
        return False

    def register(self, ty: int, v: int, t: int, off: int) -> bool:
        """REG: USERDATA_2/3 writes carry the ROCm instrumentation protocol (realtime samples, markers,
        the counter interval)."""
        enable_lo, enable_mk, addr_lo, addr_mk, data_lo, data_mk = _REG_BITS
        enable, addr, data = (v >> enable_lo) & enable_mk, (v >> addr_lo) & addr_mk, (v >> data_lo) & data_mk
        if not enable:
            return False  # write not enabled
        proto = self.proto
        if addr == USERDATA_3:
            sample = proto.userdata3(t, data)
            if sample:
                self.res.realtime.append(sample)
        elif addr == USERDATA_2:
            interval = proto.counter_interval
            proto.userdata2(data)
            if proto.counter_interval != interval and self.perf:
                self.perf = _fill_gaps(self.perf, proto.counter_interval)
        return False

    def shader_data(self, ty: int, v: int, t: int, off: int) -> bool:
        """WAVE_ALLOC and SHADERDATA (any CU: the official reports them all)."""
        slot_f = GFX9["WAVE_START"]["slot"]  # the same bits in every wave-addressed token
        if slot_f.get(v) >= SLOTS:
            return self.aborts(TOKEN_NAMES[ty], slot_f.get(v), off)
        if ty == SHADERDATA:
            sd_p = GFX9["SHADERDATA"]
            self.shaderdata.append((t, sd_p["data"].get(v), sd_p["cu"].get(v), sd_p["simd"].get(v), slot_f.get(v)))
        return False

    def perf_reading(self, ty: int, v: int, t: int, off: int) -> bool:
        """PERF: one CU's counter reading, 4 cycles per CU earlier than its token; a gap of more than one
        counter interval gets an empty event (at this reading's time)."""
        b = _PERF_BITS
        sh, cu, bank = (v >> b[0]) & b[1], (v >> b[2]) & b[3], (v >> b[4]) & b[5]
        e0, e1, e2, e3 = (v >> b[6]) & b[7], (v >> b[8]) & b[9], (v >> b[10]) & b[11], (v >> b[12]) & b[13]
        if sh:
            return False
        tp = t - 4 * cu
        interval = self.proto.counter_interval
        if interval:
            last = self.last_perf.get((cu, bank), 0)
            if last > 0 and tp > last + interval:
                self.perf.append((tp, 0, 0, 0, 0, cu, bank))
            self.last_perf[(cu, bank)] = tp
        self.perf.append((tp, e0, e1, e2, e3, cu, bank))
        return False

    def finish(self) -> None:
        """The blob's result once every token is read: the waves walked and summed up, shader data,
        counter readings and occupancy as records."""
        res, rules, proto, perf = self.res, self.rules, self.proto, self.perf
        done = self.done
        for row in self.slots:
            for ws in row:
                done.extend(ws)
        walk = Gfx9Walker.for_code(self.code, rules) if done else None
        seq: dict[tuple[int, int], int] = {}
        c = self.carried or Carried()
        res.code_objects, res.rt_frequency = proto.markers, proto.rt_frequency
        for w in done:
            res.waves.append(_to_wave(w, res.se, walk, seq, c.stitched, c.found))
        if self.carried is None:
            note_waves(res, c.stitched, rules=rules)
            c.found.note(res)
            data_lost(res, self.lost_at)
        if self.shaderdata:
            a = np.array(self.shaderdata, np.int64)
            res.shaderdata = np.zeros(len(a), SHADERDATA_DTYPE)
            res.shaderdata["se"] = res.se
            for j, k in enumerate(("time", "value", "cu", "simd", "slot")):
                res.shaderdata[k] = a[:, j]
        if proto.counter_interval:  # every CU and bank read: an empty event one interval after its last reading
            perf += [
                (last + proto.counter_interval, 0, 0, 0, 0, cu, bank)
                for (cu, bank), last in sorted(self.last_perf.items())
            ]
        if perf:
            a = np.array(perf, np.int64)
            res.perfevents = np.zeros(len(a), PERFEVENT_DTYPE)
            res.perfevents["se"] = res.se
            for j, k in enumerate(("time", "events0", "events1", "events2", "events3", "cu", "bank")):
                res.perfevents[k] = a[:, j]
        a = np.frombuffer(self.occ_front + self.occ, np.int64).reshape(-1, 6)
        o = np.zeros(len(a), OCCUPANCY_DTYPE)
        o["se"] = res.se
        o["cu"], o["simd"], o["slot"], o["start"], o["time"] = a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4]
        o["pc"] = a[:, 5].astype(np.uint64)
        res.occupancy = o


def _fill_gaps(perf: list[tuple], interval: int) -> list[tuple]:
    """PERFEVENT rows when the counter interval becomes known after some readings (official
    `convertPerfEventsTs`): an empty event one interval after each reading followed by a longer gap, then
    all rows stably sorted by time."""
    last: dict[tuple[int, int], int] = {}
    extra = []
    for row in perf:
        key = (row[5], row[6])
        t = last.get(key, 0)
        if t > 0 and row[0] > t + interval:
            extra.append((t + interval, 0, 0, 0, 0, *key))
        last[key] = row[0]
    return sorted(perf + extra, key=lambda r: r[0]) if extra else perf


def _to_wave(w: TracedWave, se: int, walk: PcWalker | None, seq: dict, stitched: list, found: Implausible) -> Wave:
    """A finished wave's records as INST_DTYPE, then `finish_wave`."""
    a = empty_insts(len(w.insts))
    if w.insts:
        arr = np.asarray(w.insts, dtype=np.int64)
        a["time"], a["category"], a["duration"], a["stall"] = arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]
    key = (w.simd, w.slot)
    seq[key] = seq.get(key, -1) + 1
    timeline = [(s, d) for s, d in w.timeline]
    pc_infos = [tuple(x) for x in w.pc_infos]
    return finish_wave(
        se, w.cu, w.simd, w.slot, w.begin, w.end, w.complete, a, timeline, pc_infos, w.contexts, walk, seq[key],
        stitched, found, w.trapping,
    )  # fmt: skip


__all__ = ["run"]
