"""The RDNA decode without a pass over the tokens in Python, for blobs that have none of the rare tokens
(`vectorisable`); same results as the scalar reference model (tests/test_rdna.py checks it).

Occupancy is a per-location lookup (a wave runs at a location when the previous lifecycle token there
was a WAVE_START), entry PCs come from the latest COMPUTE_PGM_LO/HI writes before each WAVE_START, the
timing model is `vectorised_timing.compute`; only the traced waves' own starts and ends are walked one
by one, to keep the official stitch order.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np

from attdec.decoders.common import BlobResult, CodeMap, data_lost, drop_implausible, entry_problem, official_order
from attdec.decoders.compat import Rules
from attdec.decoders.rdna import vectorised_timing as timing
from attdec.decoders.rdna.packets import (
    COMPUTE_PGM_HI,
    COMPUTE_PGM_LO,
    DPRATE,
    DPRATE_DERATE,
    NO_HEADER,
    OP_BARRIER,
    OP_JUMP,
    OP_RFE,
    OP_TRAP,
    TOKEN_NAMES,
    Header,
    RdnaFormat,
    T,
    entry_pc,
    op_columns,
)
from attdec.decoders.rdna.scalar import CONTEXT_COUNTS
from attdec.decoders.rdna.splitter import Tokens
from attdec.decoders.rdna.stitch import walker
from attdec.decoders.rdna.wave import (
    SLOTS,
    STALL,
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
from attdec.model import OCCUPANCY_DTYPE, Category, Target
from attdec.model.version_shims import bitwise_count

u64 = np.uint64


class Insts:
    """A blob's INST tokens: their indices and opcodes, read once (`vectorisable`, the events and the jump
    search all need them; a big blob has hundreds of thousands)."""

    __slots__ = ("at", "op")

    def __init__(self, tk: Tokens, table, any_inst: bool = True) -> None:
        if not any_inst:  # (most small blobs have none: no numpy steps for them)
            self.at = self.op = _NO_INDEX
            return
        self.at = (tk.type == T["INST"]).nonzero()[0]
        self.op = tk.field(table["INST"]["op"], self.at).astype(np.intp)  # (an index into by-opcode tables)


_NO_INDEX = np.zeros(0, np.intp)
_NO_INDEX.flags.writeable = False


def vectorisable(tk: Tokens, fmt: RdnaFormat, rules: Rules) -> Insts | None:
    """The blob's `Insts` when it has no token that needs the scalar model (trap/rfe, context save/restore,
    MISC save, a gfx11 barrier the 0.1.6 rules do not time, HEADERs that differ), else None."""
    typ, table = tk.type, fmt.table
    types = typ.tobytes()  # (whether a type is there at all: one bytes search; the rare ones usually are not)

    def words(name: str) -> np.ndarray:
        return tk.words((typ == T[name]).nonzero()[0])

    insts = Insts(tk, table, T["INST"] in types)
    barrier = rules.gfx11_barrier_extension or not rules.gfx11_barrier_from_last_instruction
    if len(insts.op) and np.count_nonzero(_refused_ops(fmt.generation == 11 and barrier).take(insts.op)):
        return None
    if T["WAVE_START"] in types:
        count = table["WAVE_START"]["count"].column(tk.words(_of_types(typ, _STARTS)))
        if np.count_nonzero((count >= CONTEXT_COUNTS.start) & (count < CONTEXT_COUNTS.stop)):
            return None
    if T["MISC"] in types and np.count_nonzero(table["MISC"]["save_context"].column(words("MISC"))):
        return None
    if types.count(T["HEADER"]) < 2:
        return insts
    hw = words("HEADER")
    return insts if (hw == hw[:1]).all() else None


@lru_cache(64)
def _header(word: int, table) -> Header:
    """`Header.read`, once per HEADER word (a capture's blobs share a few; a read is several µs)."""
    return Header.read(word, table)


@cache
def _refused_ops(barrier: bool) -> np.ndarray:
    """By INST opcode, whether the vectorised model refuses it: traps and rfe, s_barrier when not timed
    as 0.1.6 does."""
    refused = np.zeros(256, bool)
    refused[[OP_TRAP, OP_RFE, *([OP_BARRIER] if barrier else [])]] = True
    return refused


# AMD's decoder (0.1.4 to 0.1.6) reads a WAVE_START_EXT token and does nothing with it: no wave starts,
# the location's end later is one without a start. No capture has one; a bit flip in a WAVE_START makes one.
_STARTS = (T["WAVE_START"],)


def _of_types(typ: np.ndarray, types: tuple[int, ...]) -> np.ndarray:
    """Indices of the tokens of these types: a comparison per type (a by-type table's take would first
    convert the one-byte types to intp: several times slower)."""
    hit = typ == types[0]
    for t in types[1:]:
        hit |= typ == t
    return hit.nonzero()[0]


def decode_vectorised(
    tk: Tokens,
    fmt: RdnaFormat,
    data: bytes,
    tgt: Target,
    code: CodeMap | None,
    se: int,
    where: str,
    rules: Rules,
    emit: Emit | None = None,
    insts: Insts | None = None,
) -> BlobResult:
    """The scalar model's results for a vectorisable blob (`insts`: what `vectorisable` gave). Raises
    timing.NotVectorisable when the token order is one the vectorised timing model does not cover. With
    `emit`, the traced waves go to it unstitched, in stitch order, and the result has none (a windowed
    decode stitches them: windowed.py)."""
    if insts is None:
        insts = Insts(tk, fmt.table)
    res = start_result(tk, data, tgt, se)
    side_records(res, tk, fmt)
    table = fmt.table
    typ, times = tk.type, tk.time

    # header: target WGP/SIMD, rates, barrier-wait flag (all HEADER tokens are equal here); tokens before
    # the first header see NO_HEADER, as in the scalar pass
    hdr, first_hdr = NO_HEADER, len(typ)
    at_hdr = (typ == T["HEADER"]).nonzero()[0]
    if len(at_hdr):
        hdr = _header(int(tk.words(at_hdr[:1])[0]), table)
        check_header(hdr, fmt.generation, tgt, where)
        first_hdr = int(at_hdr[0])

    # lifecycle tokens: occupancy rows, and the traced SIMD's starts and ends
    life = _of_types(typ, _LIFE)
    lifecycle = _lifecycle_py if len(life) <= PY_LIFE else _lifecycle_np
    res.occupancy, traced = lifecycle(tk, table, se, life, hdr.target_cu, hdr.target_simd, first_hdr)

    # the traced waves, in stream order (slots and the official stitch order)
    walk = walker(code, fmt.generation, rules) if traced else None  # (a blob without traced waves walks nothing)
    emitted: list[TracedWave] = []
    slots = Slots(emitted.append)
    ws_k, ws_slot, ws_waves, we_k, we_slot = [], [], [], [], []
    entry_checked = walk is None
    for k, start, c_, s_, w_, t_, p_ in traced:
        if start:
            if not entry_checked:
                entry_checked = True
                p = entry_problem(code, p_, int(tk.pos[k]) // 2)  # type: ignore[arg-type]
                if p:
                    res.problems.append(p)
            wv = TracedWave(se, c_, s_, w_, t_, p_)
            ws_k.append(k)
            ws_slot.append(w_)
            ws_waves.append(wv)
            slots.take(w_, wv)
        elif (running := slots.now[w_]) is not None:
            running.complete = True
            we_k.append(k)
            we_slot.append(w_)
    if ws_waves:
        slots.flush()

    # the other SIMD's instructions; instruction-level tokens and the traced waves' ends -> events of the
    # timing model (a blob without traced waves, most small ones, needs none)
    by_op = _by_op(fmt.generation, rules, hdr.dprate, hdr.derate)
    oth, oth_cyc, oth_cat = _other_simd(insts, by_op)
    wgp = hdr.target_cu if not len(oth) or oth[0] >= first_hdr else np.where(oth < first_hdr, 0, hdr.target_cu)
    res.other_simd = other_simd_records(se, times[oth], oth_cyc, wgp, oth_cat)
    del oth, oth_cyc, oth_cat
    if ws_waves:
        ev = _events(tk, insts, table, by_op, we_k, we_slot)
        if emit is None and ev.bounds[-1] <= REPLAY_EVENTS:
            # a few events: each wave's played through its TracedWave (the scalar model), stitched by `to_wave`
            _replay(ev, times, ws_k, ws_slot, ws_waves)
            _branch_pcs(tk, insts, table, ev, ws_k, ws_slot, ws_waves, we_k, we_slot)
        else:
            _model(ev, times, tk, insts, table, hdr, walk, emit, emitted, ws_k, ws_slot, ws_waves, we_k, we_slot)
    if emit is not None:
        for wv in emitted:
            emit(wv, hdr.exclude_barrier_wait)
        return res
    stitched: list = []
    waves = [to_wave(wv, walk, hdr.exclude_barrier_wait, stitched) for wv in emitted]
    # the model's records are plausible by construction (`timing.compute`, and the same model played one event
    # at a time: `_replay`), unless a walk inserted some (gfx12 barrier waits)
    plausible = not any(walk is not None and walk.barriers for _, _, _, walk, _ in stitched)
    note_waves(res, stitched, rules=rules)
    data_lost(res, tk.lost_at.tolist())
    res.waves = official_order(waves, [wv.complete for wv in emitted]) if rules.end_time_order else waves
    drop_implausible(res, plausible)
    return res


def _model(ev, times, tk, insts, table, hdr, walk, emit, emitted, ws_k, ws_slot, ws_waves, we_k, we_slot) -> None:
    """The traced waves' records, timelines and ends from `timing.compute`, their PCs walked in stitch order
    (without `emit`) before the records are written."""

    def i64(x):
        return np.array(x, np.int64)

    begin = i64([wv.begin for wv in ws_waves])
    recs, (lo, hi), timelines, end, complete = timing.compute(ev, times, i64(ws_k), i64(ws_slot), begin)
    for wv, tl, e_, c_ in zip(ws_waves, timelines, end.tolist(), complete.tolist()):
        wv.timeline, wv.end, wv.complete = tl, e_, c_
    _branch_pcs(tk, insts, table, ev, ws_k, ws_slot, ws_waves, we_k, we_slot)
    bounds = list(zip(lo.tolist(), hi.tolist()))
    pc = None
    if walk is not None and emit is None:  # the PC walk first, in stitch order: records written with their pcs
        at = {id(wv): x for x, wv in enumerate(ws_waves)}
        pc = np.empty(len(recs.category), np.uint64)  # (every record is a wave's)
        for wv in emitted:
            a, b = bounds[at[id(wv)]]
            if a < b:
                pc[a:b], wv.walk = walk.walk_pcs(recs.category[a:b].tobytes(), wv.pc_infos, hdr.exclude_barrier_wait)
    records = recs.write(pc)
    for wv, (a, b) in zip(ws_waves, bounds):
        wv.insts = records[a:b]


# lifecycle tokens by token type
_LIFE = (*_STARTS, T["WAVE_END"])
# up to this many lifecycle tokens (a small blob has a few dozen at most) `_lifecycle_py` is quicker
PY_LIFE = 64
# a lifecycle token of the traced SIMD: (token index, is a start, cu, simd, wave slot, time, entry pc or 0)
Traced = tuple[int, bool, int, int, int, int, int]


def _pgm_writes(tk: Tokens, reg_p) -> tuple[np.ndarray, np.ndarray]:
    """The COMPUTE_PGM_LO/HI writes: (token indices, words)."""
    reg = (tk.type == T["REG"]).nonzero()[0]
    rw = tk.words(reg)
    raddr = reg_p["addr"].column(rw)
    pgm = (((raddr == COMPUTE_PGM_LO) | (raddr == COMPUTE_PGM_HI)) & (reg_p["cs"].column(rw) != 0)).nonzero()[0]
    return reg.take(pgm), rw.take(pgm)


def _lifecycle_np(
    tk: Tokens, table, se: int, life: np.ndarray, target_cu: int, target_simd: int, first_hdr: int
) -> tuple[np.ndarray, list[Traced]]:
    """Occupancy rows of the lifecycle tokens at indices `life`, and the traced SIMD's (`Traced`, in stream
    order; tokens before the first HEADER, at `first_hdr`, are traced when at cu 0, simd 0)."""
    lw, lt = tk.words(life), tk.time.take(life)
    is_ws = tk.type.take(life) != T["WAVE_END"]
    ws_p, we_p = table["WAVE_START"], table["WAVE_END"]

    def field(name: str) -> np.ndarray:
        return np.where(is_ws, ws_p[name].column(lw), we_p[name].column(lw)).astype(np.int64)

    sa, simd, wgp, slot = field("sa"), field("simd"), field("wgp"), field("slot")
    cu = (sa << 7) | wgp
    loc = (cu << 7) | (simd << 5) | slot
    before = life < first_hdr
    traced = (cu == np.where(before, 0, target_cu)) & (simd == np.where(before, 0, target_simd))
    prev = _previous_at_location(loc)
    running = (prev >= 0) & is_ws.take(np.maximum(prev, 0))  # a wave runs there just before the token
    orphan = traced & ~is_ws & ~running
    if orphan.any():  # an end of the traced SIMD with no wave there: 0.1.6 ignores it (damaged streams)
        return _lifecycle_np(tk, table, se, life.compress(~orphan), target_cu, target_simd, first_hdr)
    pc = _entry_pcs(tk, table, life, lw, is_ws)
    occupancy = _occupancy(tk, life, lt, is_ws, se, cu, simd, slot, pc, prev, running)
    ti = traced.nonzero()[0]
    cols = (life, is_ws, cu, simd, slot, lt, pc)
    return occupancy, list(zip(*(c.take(ti).tolist() for c in cols)))


def _lifecycle_py(
    tk: Tokens, table, se: int, life: np.ndarray, target_cu: int, target_simd: int, first_hdr: int
) -> tuple[np.ndarray, list[Traced]]:
    """`_lifecycle_np` one token at a time: a few dozen tokens cost less than its many numpy calls
    (`PY_LIFE`)."""
    if not len(life):
        return np.zeros(0, OCCUPANCY_DTYPE), []
    ws_p, we_p, reg_p = table["WAVE_START"], table["WAVE_END"], table["REG"]
    r_addr, r_me, r_pipe, r_data = reg_p["addr"], reg_p["me"], reg_p["pipe"], reg_p["data"]
    reg, rw = _pgm_writes(tk, reg_p)
    writes = list(zip(reg.tolist(), rw.tolist()))
    writes.append((len(tk.type), 0))  # (a sentinel past every token)
    fields = {start: tuple(p[n] for n in ("sa", "wgp", "simd", "slot")) for start, p in ((True, ws_p), (False, we_p))}
    me, pipe = ws_p["me"], ws_p["pipe"]
    wave_end = T["WAVE_END"]
    latest: dict[tuple[int, int], int] = {}  # (register, me & 1, pipe) -> its latest write
    running: dict[int, int | None] = {}  # location -> the entry pc of its wave (None: the last token was an end)
    front: list[tuple] = []  # an end with no start: a start at time 0, before every other row
    rows: list[tuple] = []
    traced: list[Traced] = []
    j = 0
    cols = (life.tolist(), tk.type.take(life).tolist(), tk.words(life).tolist(), tk.time.take(life).tolist())
    for k, ty, w, t, lost in zip(*cols, tk.lost.take(life).tolist()):
        start = ty != wave_end
        f_sa, f_wgp, f_simd, f_slot = fields[start]
        cu = (((w >> f_sa.lo) & f_sa.mask) << 7) | ((w >> f_wgp.lo) & f_wgp.mask)
        simd, slot = (w >> f_simd.lo) & f_simd.mask, (w >> f_slot.lo) & f_slot.mask
        loc = (cu << 7) | (simd << 5) | slot
        prev = running.get(loc)
        on_target = cu == target_cu and simd == target_simd if k >= first_hdr else cu == 0 and simd == 0
        if not start and prev is None and on_target:
            continue  # an orphan end of the traced SIMD (`_lifecycle_np`)
        if start:
            while writes[j][0] < k:
                v = writes[j][1]
                key = (r_addr.get(v), (r_me.get(v) & 1) << 2 | r_pipe.get(v))
                latest[key] = r_data.get(v)
                j += 1
            key = me.get(w) << 2 | pipe.get(w)
            pc = entry_pc(latest.get((COMPUTE_PGM_LO, key), 0), latest.get((COMPUTE_PGM_HI, key), 0))
            if lost and prev is not None:  # a start at a running location ends it first
                rows.append((se, cu, simd, slot, 0, t - 1, 0))
            rows.append((se, cu, simd, slot, 1, t, pc))
            running[loc] = pc
        else:
            if prev is None:
                front.append((se, cu, simd, slot, 1, 0, 0))
            rows.append((se, cu, simd, slot, 0, t, prev or 0))
            running[loc] = pc = None
        if on_target:
            traced.append((k, start, cu, simd, slot, t, pc or 0))
    return np.array(front + rows, OCCUPANCY_DTYPE), traced


PGM_GROUP = 1 << 16  # _entry_pcs: (register, key) groups; the keys are a few bits
POS_BITS = 40  # _entry_pcs: token indices below 2**40


def _entry_pcs(tk: Tokens, table, life, lw, is_ws) -> np.ndarray:
    """Entry PC of each WAVE_START: COMPUTE_PGM_LO/HI of its (me & 1, pipe), latest write before it.

    One search for both registers and every (me, pipe): the writes sorted by (register, key, position),
    each lifecycle token looked up with its own (register, key, position)."""
    ws_p, reg_p = table["WAVE_START"], table["REG"]
    starts = is_ws.nonzero()[0]  # (the ends have none)
    life, lw = life.take(starts), lw.take(starts)
    key = ((ws_p["me"].column(lw) << u64(2)) | ws_p["pipe"].column(lw)).astype(np.int64)
    reg, rw = _pgm_writes(tk, reg_p)
    rkey = (((reg_p["me"].column(rw) & u64(1)) << u64(2)) | reg_p["pipe"].column(rw)).astype(np.int64)
    group = np.where(reg_p["addr"].column(rw) == COMPUTE_PGM_HI, PGM_GROUP, 0) + rkey  # (register, key)
    at = (group << POS_BITS) | reg
    order = np.argsort(at)
    at = at.take(order)
    rdata = reg_p["data"].column(rw).take(order)
    want = np.concatenate([key, key + PGM_GROUP])  # the LO write, then the HI write, of every token
    j = np.searchsorted(at, (want << POS_BITS) | np.concatenate([life, life])) - 1
    jc = np.maximum(j, 0)
    found = (j >= 0) & ((at.take(jc) >> POS_BITS) == want) if len(at) else np.zeros(len(want), bool)
    val = np.where(found, rdata.take(jc), u64(0)) if len(at) else np.zeros(len(want), np.uint64)
    n = len(life)
    pc = np.zeros(len(is_ws), np.uint64)
    pc[starts] = entry_pc(val[:n], val[n:])
    return pc


def _previous_at_location(loc: np.ndarray) -> np.ndarray:
    """The index of the lifecycle token before each one at its location (-1: none)."""
    key = loc.astype(np.uint16) if loc.max(initial=0) < 1 << 16 else loc  # (16 bits: a radix sort, 2x quicker)
    order = np.argsort(key, kind="stable")
    sl = loc[order]
    prev = np.full(len(loc), -1, np.int64)
    if len(order):
        same = (sl[1:] == sl[:-1]).nonzero()[0]
        prev[order[same + 1]] = order[same]
    return prev


def _occupancy(tk: Tokens, life, lt, is_ws, se, cu, simd, slot, pc, prev, running) -> np.ndarray:
    """Occupancy rows: a location runs a wave when its previous lifecycle token (`prev`) was a WAVE_START."""
    run_pc = np.where(running, pc.take(np.maximum(prev, 0)), np.uint64(0)) if len(prev) else pc
    lost_end = is_ws & tk.lost[life] & running  # a start at a running location ends it first
    nrow = 1 + lost_end
    first = np.cumsum(nrow) - nrow
    front = (~is_ws & ~running).nonzero()[0]  # an end with no start: a start at time 0 first
    nf = len(front)
    occ = np.zeros(nf + int(nrow.sum()), OCCUPANCY_DTYPE)
    extra = nf + first[lost_end]
    # the row of each token's own start/end (a slice in the usual stream: no rows before or between)
    main = nf + first + lost_end if nf or len(extra) else slice(None)
    for name, col in (("se", se), ("cu", cu), ("simd", simd), ("slot", slot)):
        occ[name][main] = col
        if nf:
            occ[name][:nf] = col if np.isscalar(col) else col[front]
        if len(extra):
            occ[name][extra] = col if np.isscalar(col) else col[lost_end]
    occ["start"][:nf] = 1
    occ["start"][main] = is_ws
    occ["time"][main] = lt
    occ["time"][extra] = lt[lost_end] - 1
    occ["pc"][main] = np.where(is_ws, pc, run_pc)
    return occ


SLOT_SHIFT = 40  # _branch_pcs: (slot, token index) keys; token indices below 2**40


def _branch_pcs(tk: Tokens, insts: Insts, table, ev: timing.Events, ws_k, ws_slot, ws_waves, we_k, we_slot) -> None:
    """The PC slots jumps and NEW_PCs give the traced waves (`TracedWave.pc_infos`), as the scalar pass
    does: an issued jump opens one after its record, a NEW_PC fills the oldest one still open or opens
    one; what the scalar pass reads there as the wave's record count is its record events up to the token.
    Raises timing.NotVectorisable for a NEW_PC after its wave's end (the wave's last record is not an
    event's)."""
    typ = tk.type
    jumps = insts.at.compress(insts.op == OP_JUMP)
    npc = (typ == T["NEW_PC"]).nonzero()[0]
    if not len(jumps) and not len(npc):
        return
    branch = np.concatenate([jumps, npc])
    order = np.argsort(branch, kind="stable")
    branch = branch.take(order)
    is_jump = (order < len(jumps)).tolist()
    bw = tk.words(branch).tolist()
    inst_slot, npc_slot = table["INST"]["slot"], table["NEW_PC"].word_field("slot")
    slot = np.array([(inst_slot if j else npc_slot).get(w) for j, w in zip(is_jump, bw)], np.int64)

    def keys(slots, toks) -> np.ndarray:
        return (np.asarray(slots, np.int64) << SLOT_SHIFT) | np.asarray(toks, np.int64)

    q = keys(slot, branch)
    # each token's wave: the latest traced start in its slot before it
    ws_key = keys(ws_slot, ws_k)
    by_key = np.argsort(ws_key)
    ws_sorted = ws_key.take(by_key)
    at = np.searchsorted(ws_sorted, q) - 1
    atc = np.maximum(at, 0)
    has = (at >= 0) & ((ws_sorted.take(atc) >> SLOT_SHIFT) == slot) if len(ws_sorted) else np.zeros(len(q), bool)
    since = np.where(has, ws_sorted.take(atc) if len(ws_sorted) else 0, 0)  # the wave's start key
    wave = by_key.take(atc) if len(ws_sorted) else atc
    # the wave's record events (ISSUE, IMMED) up to the token; ended waves: none may follow
    kind = ev.info.take(ev.tok) & timing.KIND_MASK
    rec = ((kind == K_ISSUE) | (kind == K_IMMED)).nonzero()[0]
    rec_key = keys(ev.slots().take(rec), ev.tok.take(rec))  # (sorted: the events are by slot, then token)
    nrec = np.searchsorted(rec_key, q, "right") - np.searchsorted(rec_key, since, "right")
    we_key = np.sort(keys(we_slot, we_k))
    ended = np.searchsorted(we_key, q) > np.searchsorted(we_key, since, "right")
    issued = (ev.info.take(branch) & timing.KIND_MASK) == K_ISSUE  # not an other-SIMD one (and not of category NONE)
    npc_pc = table["NEW_PC"].word_field("pc_dw")
    for j, k, w, h, x, n, e, iss in zip(
        is_jump, branch.tolist(), bw, has.tolist(), wave.tolist(), nrec.tolist(), ended.tolist(), issued.tolist()
    ):
        if not h:  # no wave in the slot
            continue
        infos = ws_waves[x].pc_infos
        if j:  # (a jump after its wave's end: `timing.compute` refused the blob)
            if iss:
                infos.append([n, 0])
            continue
        if e:
            raise timing.NotVectorisable(f"NEW_PC at token {k} after its wave's end")
        m = len(infos)
        # never the wave start's slot: a start without a PC (no COMPUTE_PGM write before it) keeps none, and
        # 0.1.6 walks no record of such a wave (`PcWalker._known`), NEW_PCs after it or not
        while m > 1 and not infos[m - 1][1]:
            m -= 1
        if m == len(infos):
            infos.append([n, 0])
        infos[m][1] = npc_pc.get(w) << 2


# up to this many events the waves' events are played one at a time (`_replay`): `timing.compute`'s numpy
# steps have a fixed cost worth a few hundred of them
REPLAY_EVENTS = 512


def _replay(ev: timing.Events, times: np.ndarray, ws_k: list[int], ws_slot: list[int], ws_waves) -> None:
    """`timing.compute`'s model one event at a time: each traced wave's events, in stream order, through its
    TracedWave (the scalar pass's model; its records and timeline, end and completion). Raises
    timing.NotVectorisable where `compute` does (an event after its wave's end)."""
    tok = ev.tok.tolist()
    info = ev.info.take(ev.tok).tolist()
    at = times.take(ev.tok).tolist()
    bounds = ev.bounds.tolist()
    starts: dict[int, tuple[list[int], list[TracedWave]]] = {}  # by slot: WAVE_START tokens and waves, in order
    for k, sl, wv in zip(ws_k, ws_slot, ws_waves):
        ks, wvs = starts.setdefault(sl, ([], []))
        ks.append(k)
        wvs.append(wv)
    inst_bit, cat_shift, cycles_shift = 1 << timing.INST_BIT, timing.CAT_SHIFT, timing.CYCLES_SHIFT
    for sl, (ks, wvs) in starts.items():
        ks.append(len(times))  # (past every token)
        x, wv, next_k, ended = 0, wvs[0], ks[1], False
        for e in range(bounds[sl], bounds[sl + 1]):
            k = tok[e]
            if k < ks[0]:  # before the slot's first wave: no wave's
                continue
            while k > next_k:
                x += 1
                wv, next_k, ended = wvs[x], ks[x + 1], False
            if ended:
                raise timing.NotVectorisable("instruction tokens after a wave's end (or a second end)")
            i, t = info[e], at[e]
            kind = i & timing.KIND_MASK
            if i & inst_bit:
                wv.end = t if t > 0 else 0
            if kind == K_ISSUE:
                wv.issue(t, (i >> cat_shift) & 15, i >> cycles_shift)
            elif kind == K_IMMED:
                wv.immediate(t)
            elif kind == K_READY:
                wv.set_state(STALL, t)
            elif kind == K_END:
                wv.finish(t)
                ended = True


# plain ints: numpy compares arrays with an IntEnum member many times slower than with an int
IMMED, NONE = int(Category.IMMED), int(Category.NONE)
K_IMMED, K_NONE, K_ISSUE, K_READY, K_END = timing.K_IMMED, timing.K_NONE, timing.K_ISSUE, timing.K_READY, timing.K_END
pack = timing.pack_info


@cache
def _by_type() -> np.ndarray:
    """By token type (INST: by opcode in `_events`), `Events.info`: event kind, category, cycles, events
    (mask tokens' events are counted from their masks)."""
    by_type = np.full(len(TOKEN_NAMES), pack(K_NONE, 0, 0, 0), np.int64)
    for name, k, c, y, e in (
        ("VALU_INST", K_ISSUE, int(Category.VALU), 1, 1),
        ("IMM_ONE", K_IMMED, IMMED, 1, 1),
        ("IMMEDIATE", K_IMMED, IMMED, 1, 0),
        ("WAVE_READY", K_READY, 0, 0, 0),
    ):
        by_type[T[name]] = pack(k, c, y, e)
    return by_type


# `_by_op`: per INST opcode, `Events.info` of a traced wave's INST, and an other-SIMD INST's flag, cycles
# and category
ByOp = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@cache
def _by_op(generation: int, rules: Rules, dprate: int, derate: int) -> ByOp:
    """INST by opcode under a HEADER's rates (`op_columns` with its DPRATE placeholders filled): `Events.info`
    of a traced wave's INST (an immediate's record lasts 1 cycle; an other-SIMD INST has no event), whether
    it is an other-SIMD one, and cycles and category (an other-SIMD INST's record)."""
    cat, cyc, other = op_columns(generation, rules)
    cyc = np.where(cyc == DPRATE, dprate, np.where(cyc == DPRATE_DERATE, dprate * derate, cyc))
    kind = np.where(cat == IMMED, K_IMMED, np.where(cat == NONE, K_NONE, K_ISSUE))
    info = pack(kind, cat, np.where(kind == K_IMMED, 1, cyc), 1, inst=True)
    return np.where(other, pack(K_NONE, 0, 0, 0), info), other, cyc, cat


def _other_simd(insts: Insts, by_op: ByOp) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The other-SIMD INSTs: (token index, cycles, category)."""
    _, other, cyc, cat = by_op
    at = other.take(insts.op)
    op = insts.op.compress(at)
    return insts.at.compress(at), cyc.take(op), cat.take(op)


def _events(tk: Tokens, insts: Insts, table, by_op: ByOp, we_k: list[int], we_slot: list[int]) -> timing.Events:
    """Instruction-level tokens as events of the timing model, by wave slot and each slot's in stream
    order: one per INST (not other-SIMD), VALU_INST and IMM_ONE token, one per set bit of IMMEDIATE and
    WAVE_READY masks, one per traced wave's WAVE_END (`we_k`, in slots `we_slot`)."""
    typ = tk.type
    n = len(typ)
    ev = timing.Events()
    ev.info = info = _by_type().take(typ.astype(np.intp))  # (a take converts other indices first)
    # INST: by opcode
    ii = insts.at
    info[ii] = by_op[0].take(insts.op)
    multi = _of_types(typ, (T["IMMEDIATE"], T["WAVE_READY"]))
    mask = table["IMMEDIATE"]["mask"].column(tk.words(multi))  # the same field in WAVE_READY
    bits = bitwise_count(mask).astype(np.intp)
    info[multi] += bits << timing.EVENTS_SHIFT
    # the wave slot of each token's first event: the field where VALU_INST keeps it unless the token's own
    # lies elsewhere, a mask token's lowest set bit
    valu_slot = table["VALU_INST"]["slot"]
    slot = tk.field(valu_slot).astype(np.int8)
    for name, sel in (("INST", ii), ("IMM_ONE", None)):
        f = table[name]["slot"]
        if (f.lo, f.mask) != (valu_slot.lo, valu_slot.mask):
            sel = (typ == T[name]).nonzero()[0] if sel is None else sel
            slot[sel] = tk.field(f, sel)
    slot[multi] = _lowest_bit(mask)  # (a mask without bits has no event)
    info[we_k] = timing.END_INFO | (1 << timing.EVENTS_SHIFT)
    slot[we_k] = we_slot
    slot |= ((info & timing.EVENTS_MASK) == 0).view(np.int8) * NO_EVENT  # (after every slot)
    # the further events of the tokens with several bits (a few), as extra entries to sort: (token, slot)
    more = (bits > 1).nonzero()[0]
    extra_tok, extra_slot = [], []
    at, m = multi.take(more), mask.take(more)
    while len(at):
        m &= m - u64(1)  # the next bit
        left = (m != 0).nonzero()[0]
        at, m = at.take(left), m.take(left)
        extra_tok.append(at)
        extra_slot.append(_lowest_bit(m))
    # the events by slot, each slot's in stream order: a stable sort (a radix sort of int8) of the tokens by
    # their first event's slot, with the extra entries after every token; each extra entry sorts in after
    # its slot's others, so the slots that have any are sorted again by token (nearly sorted: quick)
    slots = np.concatenate([slot, *extra_slot])
    order = np.argsort(slots, kind="stable")
    ev.bounds = np.searchsorted(slots, np.arange(SLOTS + 1, dtype=np.int8), sorter=order)
    ev.tok = tok = order[: ev.bounds[-1]]
    if extra_tok:
        extra, bounds = np.concatenate(extra_tok), ev.bounds.tolist()
        per_slot = np.bincount(slots[n:], minlength=SLOTS).tolist()
        for sl, x in enumerate(per_slot):
            if x:
                a, b = bounds[sl], bounds[sl + 1]
                tail = tok[b - x : b]
                tail[:] = extra.take(tail - n)
                tok[a:b].sort(kind="stable")
    return ev


def _lowest_bit(mask: np.ndarray) -> np.ndarray:
    """The index of the lowest set bit of each uint64 (of 0: 64)."""
    return bitwise_count((mask & (~mask + u64(1))) - u64(1)).astype(np.int8)


NO_EVENT = 127  # `_events`: the slot of a token without events (sorts after every slot)
