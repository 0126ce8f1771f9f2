"""The gfx9 pass with numpy: the same results as the scalar reference model (`scalar.run`, `wave.TracedWave`)
for blobs without the rare tokens (`vectorisable`), and only a short Python loop over the few INST tokens
whose phase step depends on an earlier one. tests/test_gfx9_vectorised.py checks both agree.

The scalar model reduces to prefix operations once three things hold per traced wave (else
`NotVectorisable`, and the scalar model runs): its ISSUE events come at strictly increasing times, its
events never go back in time (nor before its start), and every INST finds an issued placeholder. Then, per wave:

- the m-th INST describes the m-th placeholder (no replay or unknown type deletes one);
- a record can only be cut short by the next one (`_mend`), and an immediate's or a message's start is
  the previous record's end, so every record follows from its neighbours;
- the stall queue an INST pops holds exactly the stalls issued since the previous non-message
  placeholder;
- the state timeline is a run-length merge of (state before, time since the running maximum of state
  changes), with a message's WAIT cut out of the run before it.

The SE-wide `CYCLE_START_PHASE` is a running count of INST tokens whose placeholder starts before the
second-to-last record ends. That test needs the end of the record before, which depends (by 0, 4 or 8
cycles) on the phase at that record's own INST: for most INSTs the answer is the same whatever the
phase, and the rest are settled in stream order by `_phase_steps`.

Everything is a function of the token arrays and a few per-wave values, so the pass could run over a
window of tokens given the state carried per wave (pending placeholders, stalls, the running maximum, the
last timeline run) and the phase count; this module does the whole blob at once.
"""

from __future__ import annotations

import itertools

import numpy as np

from attdec.decoders.common import (
    NOT_FINISHED,
    BlobResult,
    CodeMap,
    NotVectorisable,
    data_lost,
    entry_problem,
    without_code,
)
from attdec.decoders.compat import Rules
from attdec.decoders.gfx9.packets import GFX9, INST_GO_TO_TRAP, INST_PC_TYPE, INST_TYPES, SLOTS, TOKEN_NAMES, MiscKind
from attdec.decoders.gfx9.stitch import Gfx9Walker
from attdec.decoders.gfx9.wave import START_PHASE, Carried, finish_wave, plausible_waves
from attdec.decoders.stitch import note_waves
from attdec.decoders.userdata import USERDATA_2, USERDATA_3, RocProtocol
from attdec.model import INST_DTYPE, OCCUPANCY_DTYPE, SHADERDATA_DTYPE, Category, Timeline, WaveState
from attdec.model.version_shims import bitwise_count

MISC, REG, WAVE_START, WAVE_ALLOC, REG_CS, WAVE_END, INST, INST_PC, SHADERDATA, ISSUE, PERF, REG_CS_PRIV = (
    TOKEN_NAMES.index(name)
    for name in ("MISC", "REG", "WAVE_START", "WAVE_ALLOC", "REG_CS", "WAVE_END", "INST", "INST_PC", "SHADERDATA",
                 "ISSUE", "PERF", "REG_CS_PRIV")
)  # fmt: skip
COMPUTE_PGM_LO, COMPUTE_PGM_HI = 0x0C, 0x0D
ADDR_MASK = np.uint64((1 << 48) - 1)
CONTEXT_COUNT = 64  # a target-CU WAVE_START with a larger count is a context save/restore marker

# per INST type: record category (-1: the scalar model deletes the placeholder) and phase offset
_CAT = np.full(32, -1, np.int16)
_PHASE = np.zeros(32, np.int64)
for _k, _t in INST_TYPES.items():
    _CAT[_k] = -1 if _t.category is None else int(_t.category)
    _PHASE[_k] = _t.phase
# types only the scalar model handles: deleting the placeholder (replays, unknown), PC slots, traps
_SCALAR_TYPES = [*(_CAT < 0).nonzero()[0].tolist(), INST_PC_TYPE, INST_GO_TO_TRAP]
MESSAGE, IMMED = int(Category.MESSAGE), int(Category.IMMED)
IDLE, EXEC, WAIT, STALL, EMPTY = (
    int(s) for s in (WaveState.IDLE, WaveState.EXEC, WaveState.WAIT, WaveState.STALL, WaveState.EMPTY)
)
# event kinds, per traced wave: ISSUE statuses 1..3, then INST and the wave's end
E_STALL, E_PLACE, E_IMMED, E_INST, E_END = 1, 2, 3, 4, 5


def _col(name: str, field: str, v: np.ndarray) -> np.ndarray:
    return GFX9[name][field].column(v).astype(np.int64)


def by_type(types: np.ndarray) -> list[np.ndarray]:
    """The token indices of each token type (16 lists, in stream order), from one radix sort."""
    order = np.argsort(types, kind="stable")
    cuts = np.searchsorted(types[order], np.arange(17)).tolist()
    return [order[cuts[k] : cuts[k + 1]] for k in range(16)]


def vectorisable(types: np.ndarray, vals: np.ndarray, tcu: int, of: list[np.ndarray] | None = None) -> bool:
    """No token the vectorised pass leaves to the scalar model: INST_PC, an INST of a type that deletes
    its placeholder, sets a PC slot or enters a trap, a context save (MISC or a target-CU WAVE_START
    marker), or a wave slot above 9 (the official decoder aborts there). `of`: `by_type(types)`."""
    of = of if of is not None else by_type(types)
    if len(of[INST_PC]) or len(of[PERF]):
        return False
    iv = vals[of[INST]]
    if np.isin(_col("INST", "kind", iv), _SCALAR_TYPES).any() or (_col("INST", "slot", iv) >= SLOTS).any():
        return False
    if (_col("MISC", "kind", vals[of[MISC]]) == MiscKind.SAVE_CONTEXT).any():
        return False
    wv = vals[np.concatenate([of[WAVE_START], of[WAVE_END], of[WAVE_ALLOC], of[SHADERDATA]])]
    if (_col("WAVE_START", "slot", wv) >= SLOTS).any():
        return False
    sv = vals[of[WAVE_START]]
    tgt = (_col("WAVE_START", "cu", sv) == tcu) & (_col("WAVE_START", "sh", sv) == 0)
    return not (tgt & (_col("WAVE_START", "count", sv) > CONTEXT_COUNT)).any()


def run_vectorised(
    res: BlobResult, types, vals, times, offsets, tcu: int, code: CodeMap | None, rules: Rules, of=None, carried=None
) -> None:
    """`scalar.run` for a vectorisable blob; raises NotVectorisable (leaving `res` untouched) when the
    token order is one this model does not cover. `of`: `by_type(types)`; `carried`: a `wave.Carried`."""
    if not (rules.gfx9_message_as_immediate and rules.gfx9_end_at_token):
        raise NotVectorisable("the newest source's OTHER_MSG or WAVE_END timing")
    of = of if of is not None else by_type(types)
    if without_code(code):
        kinds = _col("INST", "kind", vals[of[INST]]).astype(np.intp)
        if np.count_nonzero(_CAT.take(kinds) == MESSAGE):
            raise NotVectorisable("OTHER_MSG without code to walk (the scalar model times it when the wave ends)")
    problems: list[str] = []
    misc = of[MISC]
    lost = misc[_col("MISC", "kind", vals[misc]) == MiscKind.PACKET_LOST]

    life = _Lifecycle(of, types, vals, times, tcu)
    occupancy = _occupancy(life, lost, res.se)
    if life.nw or len(of[INST]):
        ev = _events(of, len(types), vals, times, life)
        phase = carried.phase if carried else [START_PHASE]
        recs, lo, hi, timelines, end, complete, unfinished, phase_end = _timing(ev, life, phase[0])
        del ev
    else:  # no traced wave (most SEs of a capture): no timing model
        recs, lo, hi, timelines, end, complete, unfinished = _NO_WAVES

    walk = Gfx9Walker.for_code(code, rules) if life.nw else None
    if walk is not None:  # the first traced wave's entry must be in the code
        first = int(life.ws_tok[0])
        p = entry_problem(code, int(life.ws_pc[0]), int(offsets[first]))  # type: ignore[arg-type]
        if p:
            problems.append(p)
    realtime, proto = _realtime(of[REG], vals, times)

    # emission order: waves in the order they end, then the ones still running by (simd, slot)
    ended = complete.nonzero()[0]
    ended = ended[np.argsort(life.we_tok[ended], kind="stable")]
    running = (~complete).nonzero()[0]
    running = running[np.argsort(life.ws_simd[running] * SLOTS + life.ws_slot[running], kind="stable")]
    seq: dict[tuple[int, int], int] = {}
    c = carried or Carried()
    stitched, found = c.stitched, c.found
    waves = []
    lo_l, hi_l = lo.tolist(), hi.tolist()
    unf_l = unfinished.tolist()
    ok_l = plausible_waves(recs["time"], lo, hi, life.ws_t, end).tolist()
    simd_l, slot_l, begin_l = life.ws_simd.tolist(), life.ws_slot.tolist(), life.ws_t.tolist()
    end_l, comp_l, pc_l = end.tolist(), complete.tolist(), life.ws_pc.tolist()
    for x in np.concatenate([ended, running]).tolist():
        key = (simd_l[x], slot_l[x])
        seq[key] = seq.get(key, -1) + 1
        rec = recs[lo_l[x] : hi_l[x]]
        pc_infos = [(0, pc_l[x])] if pc_l[x] else []
        waves.append(
            finish_wave(res.se, tcu, *key, begin_l[x], end_l[x], comp_l[x], rec, timelines[x], pc_infos, 0, walk,
                        seq[key], stitched, found, False, unf_l[x], ok_l[x])
        )  # fmt: skip
    res.problems.extend(problems)
    res.waves.extend(waves)
    res.realtime.extend(realtime)
    res.code_objects, res.rt_frequency = proto.markers, proto.rt_frequency
    if carried is None:
        note_waves(res, stitched, rules=rules)
        found.note(res)
        data_lost(res, offsets[lost].tolist())
    elif life.nw or len(of[INST]):
        carried.phase[0] = phase_end
    sd = of[SHADERDATA]
    if len(sd):  # any CU: the official reports them all
        res.shaderdata = np.zeros(len(sd), SHADERDATA_DTYPE)
        res.shaderdata["se"] = res.se
        sv = vals[sd]
        res.shaderdata["time"], res.shaderdata["value"] = times[sd], GFX9["SHADERDATA"]["data"].column(sv)
        res.shaderdata["cu"], res.shaderdata["simd"] = _col("SHADERDATA", "cu", sv), _col("SHADERDATA", "simd", sv)
        res.shaderdata["slot"] = _col("WAVE_START", "slot", sv)  # the same bits in every wave-addressed token
    res.occupancy = occupancy


_NO_WAVES: tuple = (
    np.zeros(0, INST_DTYPE), np.zeros(0, np.int64), np.zeros(0, np.int64), [], np.zeros(0, np.int64),
    np.zeros(0, bool), np.zeros(0, bool),
)  # fmt: skip


class _Lifecycle:
    """WAVE_START/WAVE_END tokens: entry PCs, the traced waves (target-CU starts on a free slot) and which
    target-CU ends the scalar pass skips (no wave in the slot: no occupancy record either)."""

    def __init__(self, of, types, vals, times, tcu):
        tok = np.sort(np.concatenate([of[WAVE_START], of[WAVE_END]]))
        v = vals[tok]
        self.tok, self.t = tok, times[tok]
        self.is_ws = types[tok] == WAVE_START
        self.cu, self.simd, self.slot = (_col("WAVE_START", f, v) for f in ("cu", "simd", "slot"))
        self.pc = _entry_pcs(of, vals, tok, v, self.is_ws)
        tgt = ((self.cu == tcu) & (_col("WAVE_START", "sh", v) == 0)).nonzero()[0]
        # per (simd, slot), in stream order: a start on a free slot begins a wave, an end on a busy one ends it
        key = self.simd[tgt] * SLOTS + self.slot[tgt]
        o = np.argsort(key, kind="stable")
        st = tgt[o]  # target tokens, sorted by (simd, slot), then stream order
        ks = key[o]
        busy_before = np.zeros(len(st), bool)  # the slot has a wave before this token
        busy_before[1:] = self.is_ws[st[:-1]] & (ks[1:] == ks[:-1])
        begins = self.is_ws[st] & ~busy_before
        ends = ~self.is_ws[st] & busy_before
        self.skipped = np.zeros(len(tok), bool)
        self.skipped[st[~self.is_ws[st] & ~busy_before]] = True
        # waves numbered in stream order of their start
        starts_sorted = st[begins]
        rank = np.empty(len(starts_sorted), np.int64)
        rank[np.argsort(starts_sorted, kind="stable")] = np.arange(len(starts_sorted))
        wave_sorted = np.cumsum(begins) - 1  # the wave each sorted target token belongs to (if any)
        wave_sorted = np.where(wave_sorted >= 0, rank[np.maximum(wave_sorted, 0)], -1)
        self.nw = nw = len(starts_sorted)
        ws = np.sort(starts_sorted)
        self.ws_tok = tok[ws]  # token index of each traced wave's start
        self.ws_t, self.ws_pc = self.t[ws], self.pc[ws]
        self.ws_simd, self.ws_slot = self.simd[ws], self.slot[ws]
        self.we_tok = np.full(nw, -1, np.int64)  # token index of its end, -1 if it never ends
        self.we_tok[wave_sorted[ends]] = tok[st[ends]]
        # the target tokens in stream order, with the wave they leave running in their slot (-1: none)
        back = np.empty(len(st), np.int64)
        back[o] = np.arange(len(st))
        self.tgt_tok = tok[tgt]
        self.tgt_wave = np.where(self.is_ws[st], wave_sorted, -1)[back]
        self.tgt_ends = ends[back]  # the ends of traced waves


def _entry_pcs(of, vals, tok, v, is_ws) -> np.ndarray:
    """Entry PC of each WAVE_START: COMPUTE_PGM_LO/HI of its (me & 1, pipe), latest write before it."""
    cs = np.sort(np.concatenate([of[REG_CS], of[REG_CS_PRIV]]))  # REG_CS_PRIV has REG_CS's layout
    cv = vals[cs]
    ckey = (((_col("REG_CS", "me", cv) + 1) & 1) << 2) | _col("REG_CS", "pipe", cv)  # official ME: (field + 1) & 1
    addr, data = _col("REG_CS", "addr", cv), GFX9["REG_CS"]["data"].column(cv)
    ws = is_ws.nonzero()[0]
    q = (((_col("WAVE_START", "me", v[ws]) & 1) << 2) | _col("WAVE_START", "pipe", v[ws])) << 40 | tok[ws]
    pc = np.zeros(len(tok), np.uint64)
    for reg, shift in ((COMPUTE_PGM_LO, 0), (COMPUTE_PGM_HI, 32)):  # the latest write of its key before it
        w = (addr == reg).nonzero()[0]
        keys = ckey[w] << 40 | cs[w]
        o = np.argsort(keys, kind="stable")
        keys = keys[o]
        j = np.searchsorted(keys, q) - 1
        ok = (j >= 0) & (keys[np.maximum(j, 0)] >> 40 == q >> 40) if len(keys) else np.zeros(len(q), bool)
        pc[ws[ok]] |= data[w[o[j[ok]]]] << np.uint64(shift)
    return (pc << np.uint64(8)) & ADDR_MASK


def _occupancy(life: _Lifecycle, lost: np.ndarray, se: int) -> np.ndarray:
    """Occupancy rows: a start where the location (cu, simd, slot) runs nothing, an end where it runs a
    wave (with that wave's latest entry PC), and for an end at a free location before any packet loss a
    start and an end at time 0, the start placed before all other rows."""
    keep = (~life.skipped).nonzero()[0]
    is_ws, t, pc = life.is_ws[keep], life.t[keep], life.pc[keep]
    cu, simd, slot = life.cu[keep], life.simd[keep], life.slot[keep]
    loc = slot | simd << 5 | cu << 7
    o = np.argsort(loc, kind="stable")
    prev = np.full(len(o), -1, np.int64)  # previous token at the same location
    if len(o):
        same = loc[o[1:]] == loc[o[:-1]]
        prev[o[1:][same]] = o[:-1][same]
    running = np.zeros(len(o), bool)
    running[prev >= 0] = is_ws[prev[prev >= 0]]
    lost_before = np.searchsorted(lost, life.tok[keep]) > 0
    row = (is_ws & ~running) | (~is_ws & running) | (~is_ws & ~running & ~lost_before)
    front = (~is_ws & ~running & ~lost_before).nonzero()[0]
    r = row.nonzero()[0]
    occ = np.zeros(len(front) + len(r), OCCUPANCY_DTYPE)
    occ["se"] = se
    for name, col in (("cu", cu), ("simd", simd), ("slot", slot)):
        occ[name][: len(front)] = col[front]
        occ[name][len(front) :] = col[r]
    occ["start"][: len(front)] = 1
    main = occ[len(front) :]
    main["start"] = is_ws[r]
    main["time"] = np.where(running[r] | is_ws[r], t[r], 0)
    main["pc"] = np.where(is_ws[r], pc[r], np.where(running[r], pc[np.maximum(prev[r], 0)], 0))
    return occ


class _Events:
    """Per traced wave, in stream order, what the timing model sees: ISSUE statuses, INSTs, the end. The
    waves are contiguous runs (sorted by (simd, slot); the waves of one slot follow each other)."""

    wave: np.ndarray  # int32
    kind: np.ndarray  # int8, E_*
    t: np.ndarray  # int64
    ie: np.ndarray  # the INST events
    itype: np.ndarray  # their INST type (int8)
    simd: np.ndarray  # their SIMD (int8)
    so: np.ndarray  # positions in `ie` of the INSTs in stream order (the phase count runs in that order)


E_MARK = 6  # a target-CU lifecycle token: sets the wave running in its slot (or none)


def _events(of, ntok: int, vals, times, life: _Lifecycle) -> _Events:
    iss, ins = of[ISSUE], of[INST]
    status = GFX9["ISSUE"]["status"].column(vals[iss]).astype(np.uint32)
    cnt = np.zeros(ntok, np.int32)
    cnt[iss] = bitwise_count((status | status >> np.uint32(1)) & np.uint32(0x55555))  # slots with a status
    cnt[ins] = 1
    cnt[life.tgt_tok] = 1
    at = np.cumsum(cnt, dtype=np.int32)  # each token's first event
    n = int(at[-1]) if len(at) else 0
    at -= cnt
    kind = np.empty(n, np.int8)
    key = np.empty(n, np.int8)  # simd * SLOTS + slot
    wave = np.full(n, -1, np.int32)  # markers: the wave they leave running
    itype = np.zeros(n, np.int8)
    # ISSUE: one event per slot with a status, slot by slot
    base, simd_i = at[iss], (_col("ISSUE", "simd", vals[iss]) * SLOTS).astype(np.int8)
    done = np.zeros(len(iss), np.int32)
    for slot in range(SLOTS):
        st = (status >> np.uint32(2 * slot)) & np.uint32(3)
        k = st.nonzero()[0]
        pos = base[k] + done[k]
        kind[pos], key[pos] = st[k], simd_i[k] + slot
        done[k] += 1
    del status, base, simd_i, done, st, k, pos
    iv = vals[ins]
    inst_ev = at[ins]
    kind[inst_ev], itype[inst_ev] = E_INST, _col("INST", "kind", iv)
    key[inst_ev] = _col("INST", "simd", iv) * SLOTS + _col("INST", "slot", iv)
    del iv
    pos = at[life.tgt_tok]
    tl = np.searchsorted(life.tok, life.tgt_tok)
    kind[pos] = np.where(life.tgt_ends, E_END, E_MARK)
    key[pos] = life.simd[tl] * SLOTS + life.slot[tl]
    wave[pos] = life.tgt_wave
    del at, pos, tl
    tok = np.repeat(np.arange(ntok, dtype=np.int32), cnt)
    del cnt
    # per (simd, slot), stream order inside (a radix sort); then each event gets the wave its slot runs
    perm = np.argsort(key, kind="stable")
    kind, key, wave, itype, tok = kind[perm], key[perm], wave[perm], itype[perm], tok[perm]
    ar = np.arange(n, dtype=np.int32)
    slot_first = np.ones(n, bool)
    slot_first[1:] = key[1:] != key[:-1]
    mark = (kind == E_MARK) | (kind == E_END)
    last = np.maximum.accumulate(np.where(mark, ar, -1))  # the last marker so far
    last[last < np.maximum.accumulate(np.where(slot_first, ar, 0))] = -1  # ... of this slot
    runs = np.where(last >= 0, wave[np.maximum(last, 0)], -1)  # the wave running after each event
    del last
    ends = kind == E_END
    wave[1:] = runs[:-1]  # the wave running before each event
    wave[slot_first] = -1
    del runs, slot_first
    wave[mark & ~ends] = -1  # markers go, ends stay: the end of the wave that ran
    del mark, ends
    if (wave[inst_ev_sorted := (kind == E_INST).nonzero()[0]] < 0).any():
        raise NotVectorisable("an INST for a slot with no wave")
    keep = wave >= 0  # ISSUE statuses for slots with no wave are ignored
    del inst_ev_sorted
    where = np.empty(n, np.int32)  # original event -> kept sorted event
    where[perm] = np.cumsum(keep, dtype=np.int32) - 1
    inst_kept = where[inst_ev]  # the INSTs in stream order, as kept events
    del where, perm, inst_ev
    e = _Events()
    e.wave, e.kind, e.t = wave[keep], kind[keep], times[tok[keep]]
    del wave, tok
    e.ie = (e.kind == E_INST).nonzero()[0]
    e.itype, e.simd = itype[keep][e.ie], (key[keep] // SLOTS)[e.ie]
    rank = np.empty(len(e.kind), np.int32)
    rank[e.ie] = np.arange(len(e.ie), dtype=np.int32)
    e.so = rank[inst_kept]
    return e


def _seg_prev(a: np.ndarray, first: np.ndarray, fill) -> np.ndarray:
    """The previous element of `a` within its segment (`first` marks segment starts), `fill` at a start."""
    out = np.empty_like(a)
    if len(a):
        out[1:] = a[:-1]
        out[first] = fill
    return out


def _timing(ev: _Events, life: _Lifecycle, start_phase: int):
    """Records (INST_DTYPE), where each wave's are (`lo`, `hi`), per-wave timelines, end times (0 for a wave
    that never ends), whether each wave ended and whether it has placeholders no INST described."""
    nw = life.nw
    n = len(ev.wave)
    wave, kind, t, ie = ev.wave, ev.kind, ev.t, ev.ie
    first = np.ones(n, bool)  # first event of its wave
    first[1:] = wave[1:] != wave[:-1]
    back = t[1:] < t[:-1]
    back &= ~first[1:]
    if back.any() or (t[first] < life.ws_t[wave[first]]).any():
        raise NotVectorisable("a wave's events go back in time (or before its start)")
    del back
    it = ((kind >= E_STALL) & (kind <= E_IMMED)).nonzero()[0]
    if ((np.diff(t[it]) < 4) & (wave[it[1:]] == wave[it[:-1]])).any():
        raise NotVectorisable("two ISSUE events of a wave less than 4 cycles apart")
    del it

    # --- records: placeholders and immediates, in wave then record order -----------------------------
    is_rec = (kind == E_PLACE) | (kind == E_IMMED)
    rec_ev = is_rec.nonzero()[0]
    nrec = len(rec_ev)
    rw = wave[rec_ev]
    rfirst = np.ones(nrec, bool)  # first record of its wave
    rfirst[1:] = rw[1:] != rw[:-1]
    r_t = t[rec_ev]
    r_imm = kind[rec_ev] == E_IMMED
    # the m-th INST of a wave describes its m-th placeholder
    place = (~r_imm).nonzero()[0]  # record index of each placeholder
    pw = rw[place]
    p_lo = np.zeros(nw, np.int64)  # each wave's first placeholder
    pf = np.ones(len(pw), bool)
    pf[1:] = pw[1:] != pw[:-1]
    p_lo[pw[pf]] = pf.nonzero()[0]
    iw = wave[ie]
    k = np.arange(len(ie))
    f = np.ones(len(ie), bool)
    f[1:] = iw[1:] != iw[:-1]
    ph = p_lo[iw] + k - np.maximum.accumulate(np.where(f, k, 0))
    del pf, p_lo, k, f
    ok = ph < len(place)
    ph = np.minimum(ph, max(len(place) - 1, 0))
    ok &= (pw[ph] == iw) & (rec_ev[place[ph]] < ie)
    if not ok.all():
        raise NotVectorisable("an INST with no issued placeholder")
    inst_rec = place[ph]  # the record each INST describes
    del place, pw, iw, ph, ok
    r_inst_ev = np.full(nrec, -1, np.int64)  # the INST event describing each record (-1: none)
    r_inst_ev[inst_rec] = ie
    described = r_inst_ev >= 0
    r_T = np.zeros(nrec, np.int64)
    r_T[inst_rec] = t[ie]
    r_type = np.zeros(nrec, np.int8)
    r_type[inst_rec] = ev.itype
    r_cat = np.where(described, _CAT[r_type], NOT_FINISHED).astype(np.uint8)
    r_cat[r_imm] = IMMED
    r_msg = described & (r_cat == MESSAGE)
    if (r_msg & rfirst).any():
        raise NotVectorisable("a message with no record before it (0.1.6 drops it, shifting the placeholders)")
    r_issued = described & ~r_msg  # timed by the phase formula

    # --- the phase: INSTs whose placeholder p starts before the second-to-last record q ends -----------
    q = np.cumsum(is_rec, dtype=np.int32)[ie] - 2  # insts[-2]: its record, when in p's wave
    del is_rec
    step = q > inst_rec  # q issued after p: a placeholder (ends at its issue) or an immediate
    qrec = np.maximum(inst_rec - 1, 0)  # q when it is the record just before p
    cand = (q == inst_rec - 1) & ~rfirst[inst_rec] & r_issued[qrec]  # q described: ends at max(T - 4k, t) + 4
    del q
    D = r_T[qrec] - r_t[inst_rec] + 4  # p starts before q ends <=> 4 * k_q < D
    q_off = _PHASE[r_type[qrec]]
    step |= cand & (4 * ((q_off + 3) // 4) < D)
    amb = cand & (4 * (q_off // 4) < D) & (4 * ((q_off + 3) // 4) >= D)
    so = ev.so  # INSTs in stream order
    step_s = step[so].astype(np.int64)
    amb_s = amb[so].nonzero()[0]
    del step, cand, amb
    if len(amb_s):
        rank = np.empty(len(ie), np.int64)
        rank[so] = np.arange(len(ie))
        a = so[amb_s]
        q_s = rank[np.searchsorted(ie, r_inst_ev[qrec[a]])]  # stream INST index of q's INST
        step_s[amb_s] = _phase_steps(step_s, amb_s, q_s, ev.simd[a], q_off[a], D[a], start_phase)
        del rank, a, q_s
    del qrec, D, q_off
    r_k = np.zeros(nrec, np.int64)
    r_k[inst_rec[so]] = ((start_phase + np.cumsum(step_s) + ev.simd[so]) % 4 + _PHASE[ev.itype[so]]) // 4
    phase_end = start_phase + int(step_s.sum())
    del step_s, amb_s, inst_rec

    # --- record values --------------------------------------------------------------------------------
    # end of each record before the next one cuts it: placeholders by the phase formula (a stall moves
    # the start back, never the end), immediates and messages 4 cycles after their issue
    E = np.where(r_issued, np.maximum(r_T - 4 * r_k, r_t) + 4, np.where(described | r_imm, r_t + 4, r_t))
    del r_T, r_k
    pv = np.maximum(np.arange(-1, nrec - 1), 0)  # the previous record (when not rfirst)
    nx = np.minimum(np.arange(1, nrec + 1), max(nrec - 1, 0))  # the next record (when it exists)
    has_next = np.zeros(nrec, bool)
    has_next[:-1] = ~rfirst[1:]
    # the next record cuts an issued one: a described placeholder or message always (at its INST), an
    # immediate if this one was described before the immediate was issued
    cut = has_next & r_issued & np.where(r_imm[nx], r_inst_ev < rec_ev[nx], described[nx])
    E_cut = np.where(cut, np.minimum(E, r_t[nx]), E)
    del cut, has_next, nx
    # the previous record's end as a record described after it sees it (cut to this one's issue)...
    prev_end = np.where(rfirst, 0, np.where(r_issued[pv], np.minimum(E[pv], r_t), E[pv]))
    # ... and as an immediate sees it at its issue: a placeholder not described yet does not count
    prev_known = ~rfirst & (r_imm[pv] | ((r_inst_ev[pv] >= 0) & (r_inst_ev[pv] < rec_ev)))
    time = np.where(r_imm, np.where(prev_known, np.minimum(prev_end, r_t), r_t), r_t)
    del prev_known, E
    time[r_msg] = np.where(rfirst, r_t, prev_end)[r_msg]
    # stalls: an issued record starts at the latest stall issued since the previous issued record (if
    # any, in its wave), or at the previous record's end if later
    stalls = (kind == E_STALL).nonzero()[0]
    iss_rec = r_issued.nonzero()[0]
    e = rec_ev[iss_rec]
    j = np.searchsorted(stalls, e) - 1
    stall_ev = stalls[np.maximum(j, 0)] if len(stalls) else np.full(len(e), -1)
    r_ar = np.arange(nrec)
    pi = np.maximum.accumulate(np.where(r_issued, r_ar, -1))[np.maximum(iss_rec - 1, 0)]  # previous issued
    pi[iss_rec == 0] = -1
    same_wave = pi >= np.maximum.accumulate(np.where(rfirst, r_ar, 0))[iss_rec]
    floor = np.where(same_wave, rec_ev[np.maximum(pi, 0)], -1)
    stalled = (j >= 0) & (stall_ev > floor) & (wave[stall_ev] == rw[iss_rec])
    ss = iss_rec[stalled]
    time[ss] = np.maximum(t[stall_ev[stalled]], prev_end[ss])
    del stalls, iss_rec, e, j, stall_ev, r_ar, pi, same_wave, floor, stalled, ss, prev_end, pv
    dur = np.where(r_issued, E_cut - time, np.where(described | r_imm, r_t + 4 - time, 0))
    stall = np.where(r_issued, np.minimum(r_t - time, dur), np.where(r_imm, dur, 0))
    del E_cut, described
    recs = np.zeros(nrec, INST_DTYPE)  # pc 0
    recs["time"], recs["category"], recs["duration"], recs["stall"], recs["line"] = time, r_cat, dur, stall, -1
    unfinished = np.bincount(rw[r_cat == NOT_FINISHED], minlength=nw) > 0
    lo = np.zeros(nw, np.int64)
    hi = np.zeros(nw, np.int64)
    starts = rfirst.nonzero()[0]
    lo[rw[starts]] = starts
    hi[rw[starts]] = np.append(starts[1:], nrec)
    del dur, stall, r_cat, rw, rfirst, r_issued, starts

    timelines = _timelines(ev, first, life, rec_ev, r_imm, r_msg, r_inst_ev, time, r_t, nw)
    complete = life.we_tok >= 0
    end = np.zeros(nw, np.int64)
    end[complete] = life.t[np.searchsorted(life.tok, life.we_tok[complete])]
    return recs, lo, hi, timelines, end, complete, unfinished, phase_end


def _phase_steps(step_s, amb_s, q_s, simd, q_off, D, start_phase: int) -> list[int]:
    """Settle, in stream order, the INSTs whose phase step depends on the phase at the INST of the record
    before them (stream INST index q_s): the step is taken when 4 * k there is below D, k = (phase + simd)
    % 4 + q_off) // 4. Every other step is known, so only these few are walked in Python."""
    base = (start_phase + np.cumsum(step_s)[q_s] + simd).tolist()  # phase at q's INST, without these steps
    before_q = np.searchsorted(amb_s, q_s, side="right").tolist()  # of these, how many come up to q's INST
    # bit r of mask: the step is taken when the phase there is r (mod 4)
    mask = sum(((4 * ((r + q_off) // 4) < D).astype(np.int64) << r) for r in range(4)).tolist()
    settled = [0]  # settled[i]: steps taken among the first i of these
    add = settled.append
    taken = 0
    for b, c, m in zip(base, before_q, mask):
        taken += (m >> ((b + settled[c]) & 3)) & 1
        add(taken)
    return np.diff(settled).tolist()


def _timelines(ev, first, life, rec_ev, r_imm, r_msg, r_inst_ev, time, r_t, nw):
    """Per wave, the state runs (`TracedWave.issue`, `_as_message`, `finish`): at each ISSUE and at the end,
    (state before, time since the running maximum of the state changes), merged into an equal run before
    (not at the end); a WAIT run for each immediate and message, a message's cut out of the run before."""
    kind = ev.kind
    # the operations that change the state: ISSUE events, message INSTs, the end (a wave's first event
    # is one: an INST needs a placeholder before it)
    is_op = kind != E_INST
    msg_ev = r_inst_ev[r_msg]
    is_op[msg_ev] = True
    op = is_op.nonzero()[0]
    del is_op
    ok, ot, ow, ofirst = kind[op], ev.t[op], ev.wave[op], first[op]
    imm = ok == E_IMMED
    omsg = np.zeros(len(op), bool)
    at_msg = np.searchsorted(op, msg_ev)
    omsg[at_msg] = True
    # a WAIT run (B) from each immediate's and each message's record start to its issue + 4
    b_op = (imm | omsg).nonzero()[0]
    b_start = np.empty(len(op), np.int64)
    b_start[np.searchsorted(op, rec_ev[r_imm])] = time[r_imm]
    b_start[at_msg] = time[r_msg]
    issue_t = ot.copy()
    issue_t[at_msg] = r_t[r_msg]  # a message's time is its record's issue
    del at_msg, msg_ev
    # the running maximum each op leaves (state_start) and the state it sets
    val = np.where(imm | omsg, issue_t + 4, ot)
    np.maximum(val, life.ws_t[ow], out=val)
    end = ok == E_END
    new_state = np.where(ok == E_STALL, STALL, np.where(end, EMPTY, EXEC)).astype(np.int8)
    new_state[omsg] = IDLE  # 0.1.6: the wave is IDLE after a message
    prev_state = _seg_prev(new_state, ofirst, IDLE)
    del new_state
    L = _seg_prev(_seg_cummax(val, ofirst), ofirst, 0)
    L[ofirst] = life.ws_t[ow[ofirst]]
    del val
    # the run up to each op (A; an immediate's: up to its start), not at a message
    a_x = np.where(imm, b_start, ot)
    has_a = ~omsg & (a_x > L)
    a_op = has_a.nonzero()[0]
    a_dur = (a_x - L)[a_op]
    del a_x, L, ot
    b_dur = (issue_t + 4 - b_start)[b_op]
    b_cut = np.where(omsg, issue_t - b_start, 0)[b_op]  # a message's cut of the run before its WAIT
    del issue_t, b_start
    # A and B in op order, A first at the same op
    per_op = has_a.view(np.int8) + (imm | omsg).view(np.int8)
    at = np.cumsum(per_op, dtype=np.int64) - per_op  # each op's first entry
    a_at, b_at = at[a_op], at[b_op] + has_a[b_op]
    ne = len(a_op) + len(b_op)
    del per_op, at, has_a
    e_state = np.empty(ne, np.int8)
    e_state[a_at], e_state[b_at] = prev_state[a_op], WAIT
    e_dur = np.empty(ne, np.int64)
    e_dur[a_at], e_dur[b_at] = a_dur, b_dur
    e_merge = np.zeros(ne, bool)
    e_merge[a_at] = ~end[a_op]
    e_wave = np.empty(ne, np.int32)
    e_wave[a_at], e_wave[b_at] = ow[a_op], ow[b_op]
    del prev_state, a_dur, b_dur, end, ow, ok, ofirst, a_op, b_op, imm, omsg
    efirst = np.ones(ne, bool)
    efirst[1:] = e_wave[1:] != e_wave[:-1]
    new_run = efirst | ~e_merge
    new_run[1:] |= e_state[1:] != e_state[:-1]
    del e_merge
    runs = new_run.nonzero()[0]
    r_dur = np.add.reduceat(e_dur, runs) if len(runs) else np.zeros(0, np.int64)
    cutting = (b_cut > 0) & ~efirst[b_at]
    if cutting.any():
        target = np.cumsum(new_run)[b_at[cutting] - 1] - 1  # the run the WAIT follows
        back = b_cut[cutting]
        fits = r_dur[target] >= back
        r_dur[target[fits]] -= back[fits]
    live = r_dur > 0  # a run cut to nothing is dropped
    r_state, r_dur, r_wave = e_state[runs][live], r_dur[live], e_wave[runs][live]
    del e_state, e_dur, e_wave, efirst, new_run, runs, live
    o = np.argsort(r_wave, kind="stable")
    r_wave = r_wave[o]
    tb = np.searchsorted(r_wave, np.arange(nw + 1)).tolist()
    r_state, r_dur = r_state[o], r_dur[o]
    return [Timeline(r_state[tb[x] : tb[x + 1]], r_dur[tb[x] : tb[x + 1]]) for x in range(nw)]


def _seg_cummax(a: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Running maximum of `a` restarting at each segment start (`first`)."""
    if not len(a):
        return a.copy()
    seg = np.cumsum(first) - 1
    lo = int(a.min())
    span = int(a.max()) - lo + 1
    if span * (int(seg[-1]) + 1) < 1 << 62:  # segments lifted above each other: one accumulate
        lifted = (a - lo) + seg * span
        return np.maximum.accumulate(lifted) - seg * span + lo
    out = a.copy()
    bounds = np.append(first.nonzero()[0], len(a)).tolist()
    for x, y in itertools.pairwise(bounds):
        np.maximum.accumulate(out[x:y], out=out[x:y])
    return out


def _realtime(reg, vals, times) -> tuple[list[tuple[int, int]], RocProtocol]:
    """Realtime samples of the ROCm instrumentation protocol (USERDATA_2/3 writes at REG tokens `reg`), in
    Python: they are few; and the protocol's state after them (markers, frequency)."""
    rv = vals[reg]
    addr = _col("REG", "addr", rv)
    use = (GFX9["REG"]["enable"].column(rv).astype(bool) & ((addr == USERDATA_2) | (addr == USERDATA_3))).nonzero()[0]
    out: list[tuple[int, int]] = []
    proto = RocProtocol()
    if not len(use):
        return out, proto
    data = GFX9["REG"]["data"].column(rv[use]).tolist()
    for a, d, t in zip(addr[use].tolist(), data, times[reg[use]].tolist()):
        if a == USERDATA_3:
            sample = proto.userdata3(t, d)
            if sample:
                out.append(sample)
        else:
            proto.userdata2(d)
    return out, proto


__all__ = ["by_type", "run_vectorised", "vectorisable"]
