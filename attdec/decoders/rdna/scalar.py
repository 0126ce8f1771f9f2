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
from attdec.decoders.stitch import note_waves, walker
from attdec.model import OCCUPANCY_DTYPE, Category, Wave, WaveState

# WAVE_START `count` 66..89 marks a context save or restore, not a new wave (sqtt-format.md §5.3); bit k
# of these masks says which count 66 + k is.
CONTEXT_COUNTS = range(66, 90)
CONTEXT_SAVE, CONTEXT_RESTORE = 0b0000110011, 0b1111001100


def decode_scalar(
    tk: Tokens,
    fmt: RdnaFormat,
    data: bytes,
    arch: str,
    code: CodeMap | None,
    se: int,
    where: str,
    rules: Rules,
    emit: Emit | None = None,
) -> BlobResult:
    """Waves, occupancy, other-SIMD records and realtime of one blob, token by token. With `emit`, the
    traced waves go to it unstitched as they leave their slots, and the result has none (windowed.py)."""
    res = start_result(tk, data, arch, se)
    side_records(res, tk, fmt)
    table = fmt.table
    inst_f, valu_f = table["INST"], table["VALU_INST"]
    imm_wid, mask_f = table["IMM_ONE"]["wid"], table["IMMEDIATE"]["mask"]  # WAVE_READY's mask is IMMEDIATE's
    io_lo, io_mk, mask_lo, mask_mk = imm_wid.lo, imm_wid.mask, mask_f.lo, mask_f.mask
    ws_p, we_p, npc_p, reg_p = table["WAVE_START"], table["WAVE_END"], table["NEW_PC"], table["REG"]
    # scalar field reads: (shift, mask) pairs, precomputed
    ws = {k: (ws_p[k].lo, ws_p[k].mask) for k in ("sa", "simd", "wgp", "wid", "me", "pipe", "count")}
    we = {k: (we_p[k].lo, we_p[k].mask) for k in ("sa", "simd", "wgp", "wid")}
    npc_wid, npc_pc = npc_p.word_field("wid"), npc_p.word_field("pc_dw")
    reg_cs, reg_me, reg_pipe = reg_p["cs"], reg_p["me"], reg_p["pipe"]
    reg_addr, reg_data = reg_p["addr"], reg_p["data"]
    save_ctx = table["MISC"]["save_context"]
    cat_col, cyc_col, other_col = op_columns(fmt.generation, rules)
    op_cat, op_cyc, op_other = cat_col.tolist(), cyc_col.tolist(), other_col.tolist()
    # plain ints: they meet numpy arrays below, and numpy is slow with IntEnum members
    IMMED, NONE, VALU, STALL = (int(x) for x in (Category.IMMED, Category.NONE, Category.VALU, WaveState.STALL))

    hdr: Header = NO_HEADER
    regs: dict[tuple[int, int], dict[int, int]] = {}  # (me & 1, pipe) -> CS register -> value
    running: dict[int, int] = {}  # location -> entry pc of the wave running there (occupancy)
    saved: dict[int, int] = {}  # location -> entry pc of a context-saved wave
    occ_rows: list[tuple] = []
    occ_front: list[tuple] = []  # starts at time 0 for ends that had no start, placed first
    other: list[tuple[int, int, int, int]] = []  # (time, cycles, wgp, category)
    # the walk state is shared with other blobs unless the barrier-wait flag changes within this one
    flags = {Header.read(int(w), table).exclude_barrier_wait for w in tk.word[tk.type == T["HEADER"]].tolist()}
    if not len(tk.type) or tk.type[0] != T["HEADER"]:
        flags.add(NO_HEADER.exclude_barrier_wait)
    walk = walker(code, fmt.generation, rules, shared=len(flags) <= 1)
    entry_checked = walk is None
    waves: list[Wave] = []
    stitched: list = []
    # a wave is stitched when it leaves its slot, under the HEADER in force then
    if emit is not None:
        slots = Slots(lambda wv: emit(wv, hdr.exclude_barrier_wait))
    else:
        slots = Slots(lambda wv: waves.append(to_wave(wv, walk, hdr.exclude_barrier_wait, stitched)))
    now = slots.now

    def kernel_entry(me: int, pipe: int) -> int:
        r = regs.get((me & 1, pipe))
        return entry_pc(r.get(COMPUTE_PGM_LO, 0), r.get(COMPUTE_PGM_HI, 0)) if r else 0

    tI, tV, tIO, tIM, tWR = T["INST"], T["VALU_INST"], T["IMM_ONE"], T["IMMEDIATE"], T["WAVE_READY"]
    tWS, tWE, tNPC, tREG, tHDR, tMISC = (
        T["WAVE_START"], T["WAVE_END"], T["NEW_PC"], T["REG"], T["HEADER"], T["MISC"]
    )  # fmt: skip
    # Per-token fields, vectorised: wave slot, and for plain issues (VALU_INST, an INST with a category,
    # fixed cycles and no trap/jump meaning) the record's category and cycles, so the loop only looks them up.
    tw = tk.word
    is_i = tk.type == tI
    is_v = tk.type == tV
    wid_a = np.where(is_i, inst_f["wid"].column(tw), valu_f["wid"].column(tw))
    op_a = inst_f["op"].column(tw).astype(np.int64)
    cat_a = np.where(is_v, VALU, cat_col[op_a])
    cyc_a = np.where(is_v, 1, cyc_col[op_a])
    plain = is_v | (
        is_i
        & (cat_a != NONE)
        & ~other_col[op_a]
        & (cat_a != IMMED)
        & (cyc_a > 0)
        & ~np.isin(op_a, [OP_JUMP, OP_TRAP, OP_RFE])
    )
    types, times, words, lost = tk.type.tolist(), tk.time.tolist(), tk.word.tolist(), tk.lost.tolist()
    plain_l, wid_l, op_l, cat_l, cyc_l = plain.tolist(), wid_a.tolist(), op_a.tolist(), cat_a.tolist(), cyc_a.tolist()
    del wid_a, op_a, cat_a, cyc_a, plain, is_i, is_v

    for i in range(len(types)):
        ty = types[i]
        tm = times[i]
        if plain_l[i]:  # the common case: one issued instruction (official apply_inst)
            wv = now[wid_l[i]]
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
            continue
        w = words[i]
        if ty == tI:
            op = op_l[i]
            cat = op_cat[op]
            if op_other[op]:
                other.append((tm, op_cyc[op], hdr.target_cu, cat))
                continue
            wv = now[wid_l[i]]
            if wv is None or wv.complete:
                continue
            if wv.barrier:
                wv.barrier_ext(tm)
            if op == OP_RFE:  # return from trap: a fresh PC slot, and the trap's record ends here
                wv.pc_infos.append([len(wv.t), 0])
                wv.trapped = False
                wv.extend_context(tm)
                continue
            if op == OP_TRAP:
                wv.context(tm)
                wv.trapped = True
            if wv.trapped:
                continue
            wv.end = tm
            if cat == IMMED and op == OP_BARRIER and hdr.version <= 3 and not rules.gfx11_barrier_from_last_instruction:
                wv.issue(tm, IMMED, 1)
                continue
            if cat == IMMED:
                wv.immediate(tm)
                wv.barrier = rules.gfx11_barrier_extension and hdr.version <= 3
                continue
            if cat == NONE:
                continue
            cyc = op_cyc[op]
            if cyc < 0:
                cyc = hdr.dprate if cyc == DPRATE else hdr.dprate * hdr.derate
            wv.issue(tm, cat, cyc)
            if op == OP_JUMP:  # the next record's PC comes from a NEW_PC token
                wv.pc_infos.append([len(wv.t), 0])
        elif ty == tV:
            wv = now[wid_l[i]]
            if wv is None or wv.complete:
                continue
            if wv.barrier:
                wv.barrier_ext(tm)
            if not wv.trapped:
                wv.issue(tm, VALU, 1)
        elif ty == tWR:
            m = (w >> mask_lo) & mask_mk
            while m:
                b = m & -m
                wv = now[b.bit_length() - 1]
                m ^= b
                if wv is not None and not wv.complete:
                    if wv.barrier:
                        wv.barrier_ext(tm - 1)
                    wv.set_state(STALL, tm)
        elif ty in (tIO, tIM):
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
        elif ty == tWS:  # (a WAVE_START_EXT starts no wave in AMD's decoder: `_STARTS` in vectorised.py)
            sa, simd, wgp, wid = [(w >> lo) & mk for lo, mk in (ws["sa"], ws["simd"], ws["wgp"], ws["wid"])]
            me, pipe, count = [(w >> lo) & mk for lo, mk in (ws["me"], ws["pipe"], ws["count"])]
            cu = (sa << 7) | wgp
            loc = (cu << 7) | (simd << 5) | wid
            is_target = cu == hdr.target_cu and simd == hdr.target_simd
            if count in CONTEXT_COUNTS:
                k = count - CONTEXT_COUNTS.start
                is_save, is_restore = (CONTEXT_SAVE >> k) & 1, (CONTEXT_RESTORE >> k) & 1
                if is_target:
                    wv = now[wid]
                    if is_save and wv is not None:  # the running wave goes to standby
                        wv.trapped = True
                        wv.contexts += 1
                        wv.context(tm)
                    if is_restore:  # may start a wave that was saved before the trace began
                        if wv is None or wv.complete:
                            wv = TracedWave(se, cu, simd, wid, tm, 0)
                            slots.take(wid, wv)
                        wv.extend_context(tm)
                        wv.trapped = True
                        wv.contexts += 1
                if is_save:
                    if loc in running:
                        occ_rows.append((se, cu, simd, wid, 0, tm, running[loc]))
                        saved[loc] = running[loc]
                elif is_restore:
                    addr = saved.pop(loc, 0)
                    running[loc] = addr
                    occ_rows.append((se, cu, simd, wid, 1, tm, addr))
                continue
            pc = kernel_entry(me, pipe)
            if lost[i] and loc in running:  # packets were lost: the wave there ended unseen
                occ_rows.append((se, cu, simd, wid, 0, tm - 1, 0))
            running[loc] = pc
            occ_rows.append((se, cu, simd, wid, 1, tm, pc))
            if is_target:
                if not entry_checked:
                    entry_checked = True
                    p = entry_problem(code, pc, int(tk.pos[i]) // 2)  # type: ignore[arg-type]
                    if p:
                        res.problems.append(p)
                slots.take(wid, TracedWave(se, cu, simd, wid, tm, pc))
        elif ty == tWE:
            sa, simd, wgp, wid = [(w >> lo) & mk for lo, mk in (we["sa"], we["simd"], we["wgp"], we["wid"])]
            cu = (sa << 7) | wgp
            loc = (cu << 7) | (simd << 5) | wid
            is_target = cu == hdr.target_cu and simd == hdr.target_simd
            if is_target and loc not in running:
                continue  # an end with no wave running there on the traced SIMD: 0.1.6 ignores it
            if is_target and now[wid] is not None:
                now[wid].finish(tm)
            if loc in running:
                pc = running.pop(loc)
            else:
                pc = 0
                occ_front.append((se, cu, simd, wid, 1, 0, 0))
            occ_rows.append((se, cu, simd, wid, 0, tm, pc))
        elif ty == tNPC:
            wv = now[npc_wid.get(w)]
            if wv is not None:
                if wv.barrier:
                    wv.barrier_ext(tm)
                if wv.pc_infos and not wv.trapped:  # fill the oldest PC slot still unknown, or open one
                    infos = wv.pc_infos
                    k = len(infos)
                    while k > 1 and not infos[k - 1][1]:  # (never the start's: `_branch_pcs`)
                        k -= 1
                    if k == len(infos):
                        infos.append([len(wv.t), 0])
                    infos[k][1] = npc_pc.get(w) << 2
        elif ty == tREG:
            if reg_cs.get(w):  # compute-state register write
                regs.setdefault((reg_me.get(w) & 1, reg_pipe.get(w)), {})[reg_addr.get(w)] = reg_data.get(w)
        elif ty == tHDR:
            hdr = Header.read(w, table)
            check_header(hdr, fmt.generation, arch, where)
        elif ty == tMISC:
            if save_ctx.get(w):  # save context: running waves go to standby
                for wv in now:
                    if wv is not None:
                        wv.trapped = True

    slots.flush()
    if emit is not None:
        return res
    note_waves(res, stitched, rules=rules)
    data_lost(res, tk.lost_at.tolist())
    res.waves = official_order(waves, [x[1] for x in stitched]) if rules.end_time_order else waves
    drop_implausible(res)
    rows = occ_front + occ_rows
    occ = np.zeros(len(rows), OCCUPANCY_DTYPE)
    if rows:
        a = np.array(rows, dtype=np.int64)
        for j, name in enumerate(("se", "cu", "simd", "wave_id", "start", "time", "pc")):
            occ[name] = a[:, j]
    res.occupancy = occ
    if other:
        t_, c_, w_, g_ = (np.array(x, np.int64) for x in zip(*other))
        res.other_simd = other_simd_records(se, t_, c_, w_, g_)
    return res
