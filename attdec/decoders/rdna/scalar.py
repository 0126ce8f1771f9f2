"""The RDNA reference model: one pass over the tokens in Python (lifecycle, registers, occupancy, and the
per-wave timing model of `wave.TracedWave`), as the official `sqtt_simd_analysis` runs it.

It handles every token the format has (traps, rfe, context save/restore, NEW_PC, several HEADERs);
`vectorised.py` gives the same results with numpy for the blobs that have none of the rarest ones.
"""

from __future__ import annotations

import numpy as np

from attdec.decoders.common import BlobResult, CodeMap, data_lost, drop_implausible, entry_problem, official_order
from attdec.decoders.compat import Rules
from attdec.decoders.rdna.packets import (
    COMPUTE_PGM_HI,
    COMPUTE_PGM_LO,
    DPRATE,
    NO_HEADER,
    OP_BARRIER,
    OP_JUMP,
    OP_RFE,
    OP_TRAP,
    Header,
    RdnaFormat,
    T,
    entry_pc,
    op_columns,
)
from attdec.decoders.rdna.splitter import Tokens
from attdec.decoders.rdna.stitch import walker
from attdec.decoders.rdna.wave import (
    Emit,
    Slots,
    TracedWave,
    check_header,
    other_simd_records,
    side_records,
    start_result,
    to_wave,
)
from attdec.decoders.stitch import note_waves
from attdec.model import OCCUPANCY_DTYPE, Category, Target, Wave, WaveState

# WAVE_START `count` 66..89 marks a context save or restore, not a new wave (sqtt-format.md §5.3); bit k
# of these masks says which count 66 + k is.
CONTEXT_COUNTS = range(66, 90)
CONTEXT_SAVE, CONTEXT_RESTORE = 0b0000110011, 0b1111001100


def decode_scalar(
    tk: Tokens,
    fmt: RdnaFormat,
    data: bytes,
    tgt: Target,
    code: CodeMap | None,
    se: int,
    where: str,
    rules: Rules,
    emit: Emit | None = None,
) -> BlobResult:
    """Waves, occupancy, other-SIMD records and realtime of one blob, token by token. With `emit`, the
    traced waves go to it unstitched as they leave their slots, and the result has none (windowed.py).

    The loop handles the tokens every blob is full of (instructions, WAVE_READY, immediates) itself; the
    others go to the named handlers of `ScalarPass`."""
    p = ScalarPass(tk, fmt, data, tgt, code, se, where, rules, emit)
    IMMED, NONE, VALU = int(Category.IMMED), int(Category.NONE), int(Category.VALU)  # plain ints: numpy is slow
    STALL = int(WaveState.STALL)  # with IntEnum members
    table = fmt.table
    inst_f, valu_f = table["INST"], table["VALU_INST"]
    imm_slot, mask_f = table["IMM_ONE"]["slot"], table["IMMEDIATE"]["mask"]  # WAVE_READY's mask is IMMEDIATE's
    io_lo, io_mk, mask_lo, mask_mk = imm_slot.lo, imm_slot.mask, mask_f.lo, mask_f.mask
    tI, tV, tIO, tIM, tWR = T["INST"], T["VALU_INST"], T["IMM_ONE"], T["IMMEDIATE"], T["WAVE_READY"]
    rare = {
        T["WAVE_START"]: p.wave_start,
        # (no WAVE_START_EXT: it starts no wave in AMD's decoder, `_STARTS` in vectorised.py)
        T["WAVE_END"]: p.wave_end,
        T["NEW_PC"]: p.new_pc,
        T["REG"]: p.register,
        T["HEADER"]: p.header,
        T["MISC"]: p.misc,
    }
    # Per-token fields, vectorised: wave slot, and for plain issues (VALU_INST, an INST with a category,
    # fixed cycles and no trap/jump meaning) the record's category and cycles, so the loop only looks them up.
    tw = tk.word
    is_i = tk.type == tI
    is_v = tk.type == tV
    slot_a = np.where(is_i, inst_f["slot"].column(tw), valu_f["slot"].column(tw))
    op_a = inst_f["op"].column(tw).astype(np.int64)
    cat_a = np.where(is_v, VALU, p.cat_col[op_a])
    cyc_a = np.where(is_v, 1, p.cyc_col[op_a])
    plain = is_v | (
        is_i
        & (cat_a != NONE)
        & ~p.other_col[op_a]
        & (cat_a != IMMED)
        & (cyc_a > 0)
        & ~np.isin(op_a, [OP_JUMP, OP_TRAP, OP_RFE])
    )
    other_l = (is_i & p.other_col[op_a]).tolist()  # an instruction of the traced WGP's other SIMD
    types, times, words = tk.type.tolist(), tk.time.tolist(), tk.word.tolist()
    plain_l, slot_l, op_l, cat_l, cyc_l = plain.tolist(), slot_a.tolist(), op_a.tolist(), cat_a.tolist(), cyc_a.tolist()
    del slot_a, op_a, cat_a, cyc_a, plain, is_i, is_v
    now, other = p.slots.now, p.other

    for i in range(len(types)):
        ty = types[i]
        tm = times[i]
        if plain_l[i]:  # the common case: one issued instruction (official apply_inst)
            wv = now[slot_l[i]]
            # an instruction, immediate or ready token in a slot whose wave has ended (a damaged stream; no
            # capture has one) belongs to no wave (0.1.6)
            if wv is None or wv.complete:
                continue
            if wv.barrier:
                wv.barrier_ext(tm)
            if wv.trapped:
                continue
            if ty == tI:
                wv.end = tm
            wv.issue(tm, cat_l[i], cyc_l[i])
        elif other_l[i]:  # as common as the plain ones in some kernels: no record of a wave
            other.append((tm, cyc_l[i], p.hdr.target_cu, cat_l[i]))
        elif ty == tI:
            p.instruction(slot_l[i], op_l[i], tm)
        elif ty == tWR:
            m = (words[i] >> mask_lo) & mask_mk
            while m:
                b = m & -m
                wv = now[b.bit_length() - 1]
                m ^= b
                if wv is not None and not wv.complete:
                    if wv.barrier:
                        wv.barrier_ext(tm - 1)
                    wv.set_state(STALL, tm)
        elif ty in (tIO, tIM):
            w = words[i]
            m = 1 << ((w >> io_lo) & io_mk) if ty == tIO else (w >> mask_lo) & mask_mk
            while m:
                b = m & -m
                wv = now[b.bit_length() - 1]
                m ^= b
                if wv is not None and not wv.complete:
                    if wv.barrier:
                        wv.barrier_ext(tm)
                    if not wv.trapped:
                        wv.immediate(tm)
        else:
            handler = rare.get(ty)
            if handler is not None:
                handler(i, words[i], tm)
    return p.finish()


class ScalarPass:
    """What the pass keeps while it reads one blob (the HEADER in force, compute registers, the waves
    running at each location, occupancy rows, the traced SIMD's slots) and what the tokens other than the
    plain instructions, WAVE_READY and immediates do to it, one handler a token kind."""

    IMMED, NONE = int(Category.IMMED), int(Category.NONE)

    def __init__(
        self,
        tk: Tokens,
        fmt: RdnaFormat,
        data: bytes,
        tgt: Target,
        code: CodeMap | None,
        se: int,
        where: str,
        rules: Rules,
        emit: Emit | None,
    ):
        self.tk, self.fmt, self.tgt, self.code, self.se, self.where, self.rules = tk, fmt, tgt, code, se, where, rules
        self.res = start_result(tk, data, tgt, se)
        side_records(self.res, tk, fmt)
        table = fmt.table
        ws_p, we_p, npc_p, reg_p = table["WAVE_START"], table["WAVE_END"], table["NEW_PC"], table["REG"]
        # scalar field reads: (shift, mask) pairs, precomputed
        self.ws = tuple(
            x for k in ("sa", "simd", "wgp", "slot", "me", "pipe", "count") for x in (ws_p[k].lo, ws_p[k].mask)
        )
        self.we = tuple(x for k in ("sa", "simd", "wgp", "slot") for x in (we_p[k].lo, we_p[k].mask))
        self.npc_slot, self.npc_pc = npc_p.word_field("slot"), npc_p.word_field("pc_dw")
        self.reg_cs, self.reg_me, self.reg_pipe = reg_p["cs"], reg_p["me"], reg_p["pipe"]
        self.reg_addr, self.reg_data = reg_p["addr"], reg_p["data"]
        self.save_ctx = table["MISC"]["save_context"]
        self.cat_col, self.cyc_col, self.other_col = op_columns(fmt.generation, rules)
        self.op_cat, self.op_cyc = self.cat_col.tolist(), self.cyc_col.tolist()
        self.lost = tk.lost.tolist()

        self.hdr: Header = NO_HEADER
        self.regs: dict[tuple[int, int], dict[int, int]] = {}  # (me & 1, pipe) -> CS register -> value
        self.running: dict[int, int] = {}  # location -> entry pc of the wave running there (occupancy)
        self.saved: dict[int, int] = {}  # location -> entry pc of a context-saved wave
        self.occ_rows: list[tuple] = []
        self.occ_front: list[tuple] = []  # starts at time 0 for ends that had no start, placed first
        self.other: list[tuple[int, int, int, int]] = []  # (time, cycles, wgp, category)
        # the walk state is shared with other blobs unless the barrier-wait flag changes within this one
        flags = {Header.read(int(w), table).exclude_barrier_wait for w in tk.word[tk.type == T["HEADER"]].tolist()}
        if not len(tk.type) or tk.type[0] != T["HEADER"]:
            flags.add(NO_HEADER.exclude_barrier_wait)
        self.walk = walker(code, fmt.generation, rules, shared=len(flags) <= 1)
        self.entry_checked = self.walk is None
        self.waves: list[Wave] = []
        self.stitched: list = []
        self.emit = emit
        # a wave is stitched when it leaves its slot, under the HEADER in force then
        if emit is not None:
            self.slots = Slots(lambda wv: emit(wv, self.hdr.exclude_barrier_wait))
        else:
            self.slots = Slots(
                lambda wv: self.waves.append(to_wave(wv, self.walk, self.hdr.exclude_barrier_wait, self.stitched))
            )

    def kernel_entry(self, me: int, pipe: int) -> int:
        """The entry PC the compute registers of (me, pipe) hold, 0 before both were written."""
        r = self.regs.get((me & 1, pipe))
        return entry_pc(r.get(COMPUTE_PGM_LO, 0), r.get(COMPUTE_PGM_HI, 0)) if r else 0

    def instruction(self, slot: int, op: int, tm: int) -> None:
        """An INST of the traced SIMD the plain arm does not take: immediates and barriers, traps and rfe,
        jumps, issues whose cycles the HEADER's rates give."""
        rules, hdr = self.rules, self.hdr
        cat = self.op_cat[op]
        wv = self.slots.now[slot]
        if wv is None or wv.complete:
            return
        if wv.barrier:
            wv.barrier_ext(tm)
        if op == OP_RFE:  # return from trap: a fresh PC slot, and the trap's record ends here
            wv.pc_infos.append([len(wv.t), 0])
            wv.trapped = False
            wv.extend_context(tm)
            return
        if op == OP_TRAP:
            wv.context(tm)
            wv.trapped = True
        if wv.trapped:
            return
        wv.end = tm
        immed = self.IMMED
        if cat == immed and op == OP_BARRIER and hdr.version <= 3 and not rules.gfx11_barrier_from_last_instruction:
            wv.issue(tm, immed, 1)
            return
        if cat == immed:
            wv.immediate(tm)
            wv.barrier = rules.gfx11_barrier_extension and hdr.version <= 3
            return
        if cat == self.NONE:
            return
        cyc = self.op_cyc[op]
        if cyc < 0:
            cyc = hdr.dprate if cyc == DPRATE else hdr.dprate * hdr.derate
        wv.issue(tm, cat, cyc)
        if op == OP_JUMP:  # the next record's PC comes from a NEW_PC token
            wv.pc_infos.append([len(wv.t), 0])

    def wave_start(self, i: int, w: int, tm: int) -> None:
        """WAVE_START (and _EXT): a wave begins, or (count 66..89) one is context-saved or restored."""
        sa_lo, sa_mk, simd_lo, simd_mk, wgp_lo, wgp_mk, slot_lo, slot_mk, me_lo, me_mk, pipe_lo, pipe_mk, n_lo, n_mk = (
            self.ws
        )
        sa, simd, wgp, slot = (
            (w >> sa_lo) & sa_mk,
            (w >> simd_lo) & simd_mk,
            (w >> wgp_lo) & wgp_mk,
            (w >> slot_lo) & slot_mk,
        )
        me, pipe, count = (w >> me_lo) & me_mk, (w >> pipe_lo) & pipe_mk, (w >> n_lo) & n_mk
        cu = (sa << 7) | wgp
        loc = (cu << 7) | (simd << 5) | slot
        is_target = cu == self.hdr.target_cu and simd == self.hdr.target_simd
        if count in CONTEXT_COUNTS:
            self.context_switch(count - CONTEXT_COUNTS.start, cu, simd, slot, loc, is_target, tm)
            return
        se, running = self.se, self.running
        pc = self.kernel_entry(me, pipe)
        if self.lost[i] and loc in running:  # packets were lost: the wave there ended unseen
            self.occ_rows.append((se, cu, simd, slot, 0, tm - 1, 0))
        running[loc] = pc
        self.occ_rows.append((se, cu, simd, slot, 1, tm, pc))
        if is_target:
            if not self.entry_checked:
                self.entry_checked = True
                p = entry_problem(self.code, pc, int(self.tk.pos[i]) // 2)  # type: ignore[arg-type]
                if p:
                    self.res.problems.append(p)
            self.slots.take(slot, TracedWave(se, cu, simd, slot, tm, pc))

    def context_switch(self, k: int, cu: int, simd: int, slot: int, loc: int, is_target: bool, tm: int) -> None:
        """WAVE_START count 66 + k: the wave at `loc` is saved (it goes to standby, its occupancy ends) or
        restored (a restored wave may be one saved before the trace began)."""
        is_save, is_restore = (CONTEXT_SAVE >> k) & 1, (CONTEXT_RESTORE >> k) & 1
        if is_target:
            wv = self.slots.now[slot]
            if is_save and wv is not None:  # the running wave goes to standby
                wv.trapped = True
                wv.contexts += 1
                wv.context(tm)
            if is_restore:
                if wv is None or wv.complete:
                    wv = TracedWave(self.se, cu, simd, slot, tm, 0)
                    self.slots.take(slot, wv)
                wv.extend_context(tm)
                wv.trapped = True
                wv.contexts += 1
        if is_save:
            if loc in self.running:
                self.occ_rows.append((self.se, cu, simd, slot, 0, tm, self.running[loc]))
                self.saved[loc] = self.running[loc]
        elif is_restore:
            addr = self.saved.pop(loc, 0)
            self.running[loc] = addr
            self.occ_rows.append((self.se, cu, simd, slot, 1, tm, addr))

    def wave_end(self, i: int, w: int, tm: int) -> None:
        """WAVE_END: the wave at its location ends (an end without a start gets a start at time 0)."""
        sa_lo, sa_mk, simd_lo, simd_mk, wgp_lo, wgp_mk, slot_lo, slot_mk = self.we
        sa, simd, wgp, slot = (
            (w >> sa_lo) & sa_mk,
            (w >> simd_lo) & simd_mk,
            (w >> wgp_lo) & wgp_mk,
            (w >> slot_lo) & slot_mk,
        )
        cu = (sa << 7) | wgp
        loc = (cu << 7) | (simd << 5) | slot
        is_target = cu == self.hdr.target_cu and simd == self.hdr.target_simd
        if is_target and loc not in self.running:
            return  # an end with no wave running there on the traced SIMD: 0.1.6 ignores it
        wv = self.slots.now[slot]
        if is_target and wv is not None:
            wv.finish(tm)
        if loc in self.running:
            pc = self.running.pop(loc)
        else:
            pc = 0
            self.occ_front.append((self.se, cu, simd, slot, 1, 0, 0))
        self.occ_rows.append((self.se, cu, simd, slot, 0, tm, pc))

    def new_pc(self, i: int, w: int, tm: int) -> None:
        """NEW_PC: fills the oldest PC slot of the wave still unknown, or opens one."""
        wv = self.slots.now[self.npc_slot.get(w)]
        if wv is None:
            return
        if wv.barrier:
            wv.barrier_ext(tm)
        if wv.pc_infos and not wv.trapped:
            infos = wv.pc_infos
            k = len(infos)
            while k > 1 and not infos[k - 1][1]:  # (never the start's: `_branch_pcs`)
                k -= 1
            if k == len(infos):
                infos.append([len(wv.t), 0])
            infos[k][1] = self.npc_pc.get(w) << 2

    def register(self, i: int, w: int, tm: int) -> None:
        """REG: a compute-state write is latched (the kernel entry PC of the next WAVE_STARTs)."""
        if self.reg_cs.get(w):
            key = (self.reg_me.get(w) & 1, self.reg_pipe.get(w))
            self.regs.setdefault(key, {})[self.reg_addr.get(w)] = self.reg_data.get(w)

    def header(self, i: int, w: int, tm: int) -> None:
        """HEADER: the traced CU and SIMD, rates and flags from here on."""
        self.hdr = Header.read(w, self.fmt.table)
        check_header(self.hdr, self.fmt.generation, self.tgt, self.where)

    def misc(self, i: int, w: int, tm: int) -> None:
        """MISC save context: every running wave goes to standby."""
        if self.save_ctx.get(w):
            for wv in self.slots.now:
                if wv is not None:
                    wv.trapped = True

    def finish(self) -> BlobResult:
        """The blob's result once every token is read: the waves left in their slots, the PC walks'
        summary, occupancy and other-SIMD records."""
        self.slots.flush()
        del self.slots  # its emitter refers to the pass: no reference cycle outlives the decode
        res, rules = self.res, self.rules
        if self.emit is not None:
            return res
        note_waves(res, self.stitched, rules=rules)
        data_lost(res, self.tk.lost_at.tolist())
        waves = self.waves
        res.waves = official_order(waves, [x[1] for x in self.stitched]) if rules.end_time_order else waves
        drop_implausible(res)
        rows = self.occ_front + self.occ_rows
        occ = np.zeros(len(rows), OCCUPANCY_DTYPE)
        if rows:
            a = np.array(rows, dtype=np.int64)
            for j, name in enumerate(("se", "cu", "simd", "slot", "start", "time", "pc")):
                occ[name] = a[:, j]
        res.occupancy = occ
        if self.other:
            t_, c_, w_, g_ = (np.array(x, np.int64) for x in zip(*self.other))
            res.other_simd = other_simd_records(self.se, t_, c_, w_, g_)
        return res
