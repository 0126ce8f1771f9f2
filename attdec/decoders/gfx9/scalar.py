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
from attdec.decoders.gfx9.wave import CONTEXT, START_PHASE, Carried, TracedWave, TrapStatus, finish_wave
from attdec.decoders.stitch import PcWalker, note_waves, walker
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
_PACKETS = tuple(GFX9[n] for n in ("SHADERDATA", "INST_PC", "WAVE_START"))
_PERF_BITS = tuple(
    x
    for k in ("sh", "cu", "bank", "counter0", "counter1", "counter2", "counter3")
    for x in (GFX9["PERF"][k].lo, GFX9["PERF"][k].mask)
)
_BITS = tuple(
    x
    for p, k in [("ISSUE", "simd"), ("ISSUE", "status"), ("INST", "slot"), ("INST", "simd"), ("INST", "kind")]
    + [("WAVE_START", k) for k in ("sh", "cu", "slot", "simd", "me", "pipe", "count")]
    + [("REG_CS", k) for k in ("addr", "data", "me", "pipe")]
    + [("REG", k) for k in ("enable", "addr", "data")]
    for x in (GFX9[p][k].lo, GFX9[p][k].mask)
)


def _slices(*arrays, size: int = 1 << 18):
    """Rows of parallel numpy arrays as Python ints, a slice at a time (bounded list memory)."""
    n = len(arrays[0])
    for lo in range(0, n, size):
        yield from zip(*(a[lo : lo + size].tolist() for a in arrays))


def run(
    res: BlobResult, types, vals, times, offsets, tcu: int, code: CodeMap | None, rules: Rules, carried=None
) -> None:
    """The state machine over the tokens that matter (numpy arrays in); fills `res`. `carried`: a `Carried`
    (one segment of a blob decoded in segments)."""
    ISSUE, INST, INST_PC, MISC, REG, WAVE_START, WAVE_END, REG_CS, REG_CS_PRIV, WAVE_ALLOC, SHADERDATA, PERF = _TYPES
    sd_p, pc_p, ws_p = _PACKETS
    (p_sh_lo, p_sh_mk, p_cu_lo, p_cu_mk, p_bank_lo, p_bank_mk, c0_lo, c0_mk, c1_lo, c1_mk, c2_lo, c2_mk, c3_lo,
     c3_mk) = _PERF_BITS  # fmt: skip
    (is_lo, is_mk, st_lo, st_mk, i_slot_lo, i_slot_mk, i_simd_lo, i_simd_mk, i_kind_lo, i_kind_mk, w_sh_lo, w_sh_mk,
     w_cu_lo, w_cu_mk, w_slot_lo, w_slot_mk, w_simd_lo, w_simd_mk, w_me_lo, w_me_mk, w_pipe_lo, w_pipe_mk,
     w_count_lo, w_count_mk, cs_addr_lo, cs_addr_mk, cs_data_lo, cs_data_mk, cs_me_lo, cs_me_mk, cs_pipe_lo, cs_pipe_mk,
     r_enable_lo, r_enable_mk, r_addr_lo, r_addr_mk, r_data_lo, r_data_mk) = _BITS  # fmt: skip
    slot_f = ws_p["slot"]  # the same bits in every wave-addressed token (WAVE_ALLOC, SHADERDATA too)
    misc_kind = GFX9["MISC"]["kind"]
    status_bits = 2

    slots: list[list[list[TracedWave]]] = [[[] for _ in range(SLOTS)] for _ in range(4)]  # per (simd, slot)
    running: dict[int, int] = {}  # location -> entry pc (occupancy)
    occ = array("q")  # flat (cu, simd, slot, start, time, pc) rows: 48 bytes a row
    occ_front = array("q")  # synthetic starts for ends without a start, placed first
    pgm: dict[tuple[int, int], int] = {}  # (me & 1, pipe) -> PGM address register (>> 8)
    phase_box = carried.phase if carried else [START_PHASE]  # the SE-wide CYCLE_START_PHASE
    packet_lost = False
    done: list[TracedWave] = []  # finished waves, in emission order
    issue_pairs: dict[int, list[tuple[int, int]]] = {}  # ISSUE status field -> [(slot, status)] of non-zero slots
    proto = RocProtocol()
    lost_at: list[int] = []  # byte offsets of MISC PACKET_LOST tokens
    shaderdata: list[tuple[int, int, int, int, int]] = []  # (time, value, cu, simd, slot)
    perf: list[tuple] = []  # PERFEVENT rows (time, events0..3, cu, bank), as the official emits them
    last_perf: dict[tuple[int, int], int] = {}  # (cu, bank) -> time of its latest reading
    no_code = without_code(code)
    entry_checked = no_code

    def aborts(what: str, slot: int, off: int) -> None:
        res.problems.append(
            f"{what} for wave slot {slot} at byte offset {off}; the official decoder aborts here, decoding stopped"
        )

    for ty, v, t, off in _slices(types, vals, times, offsets):
        if ty == ISSUE:
            row = slots[(v >> is_lo) & is_mk]
            field = (v >> st_lo) & st_mk
            pairs = issue_pairs.get(field)
            if pairs is None:
                pairs = issue_pairs[field] = [
                    (i, (field >> status_bits * i) & 3) for i in range(SLOTS) if (field >> status_bits * i) & 3
                ]
            for i, st in pairs:
                if row[i]:
                    row[i][-1].issue(st, t)
        elif ty == INST:
            slot, simd, itype = (v >> i_slot_lo) & i_slot_mk, (v >> i_simd_lo) & i_simd_mk, (v >> i_kind_lo) & i_kind_mk
            if slot >= SLOTS:
                aborts("INST", slot, off)
                break
            ws = slots[simd][slot]
            if not ws or ws[-1].end:  # an INST for a slot with no live wave: a wave whose start was lost
                ws.append(TracedWave(tcu, simd, slot, t, 0, rules, no_code))
            err = ws[-1].inst(itype, t, simd, phase_box)
            if err:
                res.problems.append(f"{err} at byte offset {off}")
        elif ty in (WAVE_START, WAVE_END):
            sh, cu = (v >> w_sh_lo) & w_sh_mk, (v >> w_cu_lo) & w_cu_mk
            slot, simd = (v >> w_slot_lo) & w_slot_mk, (v >> w_simd_lo) & w_simd_mk
            if slot >= SLOTS:
                aborts(TOKEN_NAMES[ty], slot, off)
                break
            me, pipe = (v >> w_me_lo) & w_me_mk, (v >> w_pipe_lo) & w_pipe_mk
            loc = slot | simd << 5 | cu << 7
            if ty == WAVE_START:
                pc = (pgm.get((me & 1, pipe), 0) << 8) & ADDR_MASK
                if cu == tcu and sh == 0:
                    ws = slots[simd][slot]
                    if (v >> w_count_lo) & w_count_mk > CONTEXT_COUNT:  # context save/restore, not a new wave
                        if ws:
                            w = ws[-1]
                            if w.trap == TrapStatus.REQUEST:
                                w.contexts = min(w.contexts + 1, MAX_CONTEXTS)
                                w.trap = TrapStatus.STANDBY
                                w.insts.append([t, CONTEXT, 4, 0, 0])
                                w.trapping = True
                            elif w.trap == TrapStatus.STANDBY:
                                w.trap = TrapStatus.WAIT_FOR_NEW_PC
                        continue
                    if not ws or ws[-1].end:
                        ws.append(TracedWave(tcu, simd, slot, t, pc, rules, no_code))
                        if not entry_checked:
                            entry_checked = True
                            p = entry_problem(code, pc, off)  # type: ignore[arg-type]
                            if p:
                                res.problems.append(p)
                if loc not in running:
                    occ.extend((cu, simd, slot, 1, t, pc))
                running[loc] = pc
            else:
                if cu == tcu and sh == 0:
                    ws = slots[simd][slot]
                    if not ws or ws[-1].trap != TrapStatus.RESTORED:
                        continue  # official: skips the occupancy record too
                    w = ws.pop()
                    w.finish(t)
                    done.append(w)
                if loc in running:
                    occ.extend((cu, simd, slot, 0, t, running.pop(loc)))
                elif not packet_lost:
                    occ_front.extend((cu, simd, slot, 1, 0, 0))
                    occ.extend((cu, simd, slot, 0, 0, 0))
        elif ty == INST_PC:
            slot, simd = pc_p["slot"].get(v), pc_p["simd"].get(v)
            if slot >= SLOTS:
                aborts("INST_PC", slot, off)
                break
            ws = slots[simd][slot]
            if ws:
                ws[-1].new_pc(pc_p["pc_dw"].get(v) << 2)
        elif ty in (REG_CS, REG_CS_PRIV):  # REG_CS_PRIV has REG_CS's layout
            addr, data = (v >> cs_addr_lo) & cs_addr_mk, (v >> cs_data_lo) & cs_data_mk
            key = (
                (((v >> cs_me_lo) & cs_me_mk) + 1) & 1,
                (v >> cs_pipe_lo) & cs_pipe_mk,
            )  # official ME: (field + 1) & 1
            if addr == COMPUTE_PGM_LO:
                pgm[key] = (pgm.get(key, 0) & ~0xFFFFFFFF) | data
            elif addr == COMPUTE_PGM_HI:
                pgm[key] = (pgm.get(key, 0) & 0xFFFFFFFF) | data << 32
        elif ty == MISC:
            sub = misc_kind.get(v)
            if sub == MiscKind.PACKET_LOST:
                packet_lost = True
                lost_at.append(off)
            elif sub == MiscKind.SAVE_CONTEXT:
                for row in slots:
                    for ws in row:
                        if ws and ws[-1].end == 0:
                            ws[-1].trap = TrapStatus.REQUEST
        elif ty == REG:
            if not (v >> r_enable_lo) & r_enable_mk:
                continue  # write not enabled
            addr, data = (v >> r_addr_lo) & r_addr_mk, (v >> r_data_lo) & r_data_mk
            if addr == USERDATA_3:
                sample = proto.userdata3(t, data)
                if sample:
                    res.realtime.append(sample)
            elif addr == USERDATA_2:
                interval = proto.counter_interval
                proto.userdata2(data)
                if proto.counter_interval != interval and perf:
                    perf = _fill_gaps(perf, proto.counter_interval)
        elif ty in (WAVE_ALLOC, SHADERDATA):
            if slot_f.get(v) >= SLOTS:
                aborts(TOKEN_NAMES[ty], slot_f.get(v), off)
                break
            if ty == SHADERDATA:  # any CU: the official reports them all
                shaderdata.append((t, sd_p["data"].get(v), sd_p["cu"].get(v), sd_p["simd"].get(v), slot_f.get(v)))
        elif ty == PERF:
            if not (v >> p_sh_lo) & p_sh_mk:
                cu, bank = (v >> p_cu_lo) & p_cu_mk, (v >> p_bank_lo) & p_bank_mk
                tp = t - 4 * cu  # the official reading time: 4 cycles per CU earlier
                interval = proto.counter_interval
                if interval:  # a gap of more than one interval gets an empty event (at this reading's time)
                    last = last_perf.get((cu, bank), 0)
                    if last > 0 and tp > last + interval:
                        perf.append((tp, 0, 0, 0, 0, cu, bank))
                    last_perf[(cu, bank)] = tp
                e0, e1, e2, e3 = (v >> c0_lo) & c0_mk, (v >> c1_lo) & c1_mk, (v >> c2_lo) & c2_mk, (v >> c3_lo) & c3_mk
                perf.append((tp, e0, e1, e2, e3, cu, bank))

    for row in slots:
        for ws in row:
            done.extend(ws)
    walk = walker(code, 9, rules) if done else None
    seq: dict[tuple[int, int], int] = {}
    c = carried or Carried()
    res.code_objects, res.rt_frequency = proto.markers, proto.rt_frequency
    for w in done:
        res.waves.append(_to_wave(w, res.se, walk, seq, c.stitched, c.found))
    if carried is None:
        note_waves(res, c.stitched, rules=rules)
        c.found.note(res)
        data_lost(res, lost_at)
    if shaderdata:
        a = np.array(shaderdata, np.int64)
        res.shaderdata = np.zeros(len(a), SHADERDATA_DTYPE)
        res.shaderdata["se"] = res.se
        for j, k in enumerate(("time", "value", "cu", "simd", "wave_id")):
            res.shaderdata[k] = a[:, j]
    if proto.counter_interval:  # every CU and bank read: an empty event one interval after its last reading
        perf += [
            (last + proto.counter_interval, 0, 0, 0, 0, cu, bank) for (cu, bank), last in sorted(last_perf.items())
        ]
    if perf:
        a = np.array(perf, np.int64)
        res.perfevents = np.zeros(len(a), PERFEVENT_DTYPE)
        res.perfevents["se"] = res.se
        for j, k in enumerate(("time", "events0", "events1", "events2", "events3", "cu", "bank")):
            res.perfevents[k] = a[:, j]
    a = np.frombuffer(occ_front + occ, np.int64).reshape(-1, 6)
    o = np.zeros(len(a), OCCUPANCY_DTYPE)
    o["se"] = res.se
    o["cu"], o["simd"], o["wave_id"], o["start"], o["time"] = a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4]
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
