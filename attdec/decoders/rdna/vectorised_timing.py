"""The RDNA per-wave timing model (sqtt-format.md §7.1) computed with numpy for a whole blob at once.

`vectorised.py` uses this when the blob has none of the rare tokens that need the scalar model (traps,
context save/restore, NEW_PC, jumps): then every instruction-level token is a ready, an issue, an
immediate or an end-time update, and the model reduces to prefix operations per wave:

- every record ends at `token time + cycles` (a stall moves its start back and adds as much to its
  duration), so an immediate's start `min(T, previous record's end)` is a shifted array;
- `last_state_cycle` is the running maximum of the state-change times, and the state before a token
  is the one set by the previous state change of the same wave;
- the state timeline is the run-length merge of (previous state, time - running max) over the state
  changes that move time forward.

The scalar model (`scalar.py`, `wave.TracedWave`) is the reference; tests/test_rdna.py checks both agree
on real captures.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from attdec.decoders.common import NotVectorisable
from attdec.model import INST_DTYPE, Category, Timeline, WaveState


class Event(IntEnum):
    """What an instruction-level token does to a wave (one event per wave it names)."""

    READY = 0  # WAVE_READY: the wave stalls from here
    ISSUE = 1  # INST / VALU_INST: a record of its category and cycles
    IMMED = 2  # IMM_ONE, IMMEDIATE, an IMMED-category INST: an immediate record
    NONE = 3  # an INST of category NONE: only moves the wave's end time
    END = 4  # the wave's WAVE_END


OFF = np.int64(1) << np.int64(44)  # segment offset for per-wave running maxima (times < 2^43)


def _expand_mask(k, mask, nbits=16):
    """(token index, bit) for every set bit of 16-bit wave masks."""
    if not len(k):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    bits = np.unpackbits(mask.astype("<u2").view(np.uint8), bitorder="little").reshape(-1, 16)[:, :nbits]
    r, b = np.nonzero(bits)
    return k[r], b.astype(np.int64)


def _wave_of(ev_k, ev_slot, ws_k, ws_slot):
    """Index of the wave holding `slot` at token `k` (the latest target WAVE_START of that slot at or before
    it), or -1. `ws_k` is in stream order: a table of each slot's latest wave after each start, read at the
    number of starts up to each token."""
    if not len(ws_k) or not len(ev_k):
        return np.full(len(ev_k), -1, np.int64)
    nw, nslot = len(ws_k), int(max(ws_slot.max(), ev_slot.max())) + 1
    latest = np.full((nw + 1, nslot), -1, np.int32)  # [j, slot]: latest wave of the slot among the first j
    latest[np.arange(1, nw + 1), ws_slot] = np.arange(nw, dtype=np.int32)
    np.maximum.accumulate(latest, axis=0, out=latest)
    ntok = max(int(ev_k.max()), int(ws_k.max())) + 1
    if len(ev_k) * 8 < ntok:  # a few tokens: binary search
        at = np.searchsorted(ws_k, ev_k, side="right")
    else:  # most tokens: count the starts up to each token
        started = np.zeros(ntok, np.int32)
        started[ws_k] = 1
        np.cumsum(started, out=started)
        at = started[ev_k].astype(np.int64)
    at *= nslot
    at += ev_slot
    return latest.ravel()[at].astype(np.int64)


def _gather(a, src, nk, at_end, at_end_value):
    """`a` at the events `src`, with `at_end_value` at the wave-end positions."""
    out = a.take(src) if nk else np.zeros(len(src), a.dtype)
    out[at_end] = at_end_value
    return out


def compute(ev, times, ws_k, ws_slot, begin, we_k, we_slot):
    """Records and timelines of every wave.

    `ev`: dict of per-event arrays from the blob, in stream order (k token index, slot, kind, T, cat, cyc,
    inst flag); `times`: every token's time; ws_* / we_*: target WAVE_START / WAVE_END token indices and
    slots. Returns (records, bounds, timelines, end, complete): one INST_DTYPE array with every wave's
    records (wave x's are records[bounds[x]:bounds[x + 1]], time/category/duration/stall filled, line
    -1), per-wave timeline lists and end times, and whether each wave ended.
    """
    # plain ints: numpy compares arrays with an IntEnum member several times slower than with an int
    K_READY, K_ISSUE, K_IMMED, K_NONE, K_END = (
        int(e) for e in (Event.READY, Event.ISSUE, Event.IMMED, Event.NONE, Event.END)
    )
    EMPTY, IDLE, EXEC, WAIT, STALL = (
        int(s) for s in (WaveState.EMPTY, WaveState.IDLE, WaveState.EXEC, WaveState.WAIT, WaveState.STALL)
    )
    nw = len(ws_k)
    # wave end events
    if len(we_k):
        e_w = _wave_of(we_k, we_slot, ws_k, ws_slot)
        keep = e_w >= 0
        e_w, e_k = e_w[keep], we_k[keep]
    else:
        e_w = e_k = np.zeros(0, np.int64)
    if len(e_w) != len(np.unique(e_w)):
        raise NotVectorisable("a wave ends twice")
    w = _wave_of(ev["k"], ev["slot"], ws_k, ws_slot)
    keep = np.flatnonzero(w >= 0)
    w = w[keep]
    end_of = np.full(nw, np.iinfo(np.int64).max, np.int64)
    end_of[e_w] = e_k
    if np.any(ev["k"][keep] > end_of[w]):
        raise NotVectorisable("instruction tokens after a wave's end")
    del end_of
    inst_last = np.full(nw, -1, np.int64)
    ii = keep[ev["inst"][keep]]
    if len(ii):
        np.maximum.at(inst_last, w[ev["inst"][keep]], ev["T"][ii])
    # per wave, in stream order: events are in stream order and a wave's end comes after all of its
    # events, so a stable sort on the wave alone is enough (a radix sort for small wave counts)
    nk = len(keep)
    wk = np.concatenate([w, e_w])
    order = np.argsort(wk.astype(np.int8 if nw < 2**7 else np.int16 if nw < 2**15 else np.int64), kind="stable")
    w = wk[order]
    del wk
    src = keep.take(order, mode="clip") if nk else order  # the event at each position (ends: set below)
    at_end = np.flatnonzero(order >= nk)
    end_src = order[at_end] - nk
    del order, keep

    kind, T, cat, cyc = (
        _gather(ev[name], src, nk, at_end, value)
        for name, value in (("kind", K_END), ("T", times[e_k[end_src]]), ("cat", 0), ("cyc", 0))
    )
    del src, at_end, end_src

    n = len(w)

    # --- records: issues and immediates; the end of the previous record of the same wave -------------
    is_rec = (kind == K_ISSUE) | (kind == K_IMMED)
    rec_end = np.where(kind == K_ISSUE, T + cyc, T + 1)
    ridx = np.flatnonzero(is_rec)
    prev_end = np.full(n, np.iinfo(np.int64).min, np.int64)  # end of the previous record, per event
    if len(ridx):
        # last record index at or before each event (exclusive of itself), within the wave
        last_rec = np.full(n, -1, np.int64)
        last_rec[ridx] = ridx
        last_rec = np.maximum.accumulate(last_rec)
        prev_rec = np.empty(n, np.int64)
        prev_rec[0] = -1
        prev_rec[1:] = last_rec[:-1]
        del last_rec
        has = prev_rec >= 0
        has &= w[np.maximum(prev_rec, 0)] == w
        prev_end[has] = rec_end[prev_rec[has]]
        del prev_rec
    else:
        has = np.zeros(n, bool)
    del rec_end
    imm_t0 = np.where(has, np.minimum(T, prev_end), T)

    # --- state changes (set_state calls), in order: READY->STALL, ISSUE->EXEC, IMMED->WAIT,EXEC, END->EMPTY
    # per event kind: its calls, and the state its (last) call sets
    ncall_of, state_of = np.zeros(len(Event), np.int32), np.zeros(len(Event), np.int8)
    ncall_of[[K_READY, K_ISSUE, K_IMMED, K_NONE, K_END]] = 1, 1, 2, 0, 1
    state_of[[K_READY, K_ISSUE, K_IMMED, K_END]] = STALL, EXEC, EXEC, EMPTY
    ncall = ncall_of[kind]
    starts = np.cumsum(ncall, dtype=np.int64) - ncall
    cidx = np.repeat(np.arange(n, dtype=np.int32), ncall)  # event of each call
    second = np.zeros(len(cidx), bool)  # an immediate's second call (EXEC at T+1)
    imm_ev = np.flatnonzero(kind == K_IMMED)
    second[starts[imm_ev] + 1] = True
    ck = kind[cidx]
    ct = T[cidx]
    ct[second] += 1
    first_imm = (ck == K_IMMED) & ~second
    ct[first_imm] = imm_t0[cidx[first_imm]]
    cs = state_of[ck]
    cs[first_imm] = WAIT
    del ck, first_imm, second
    cw = w[cidx]
    del cidx
    cfirst = np.ones(len(cw), bool)
    cfirst[1:] = cw[1:] != cw[:-1]
    first = np.flatnonzero(cfirst)
    first_begin = begin[cw[first]]
    # running maximum of earlier call times and the wave's begin (taken in at its first call), per wave
    off = cw * OFF
    seg = ct + off
    seg[first] = np.maximum(ct[first], first_begin) + off[first]
    if len(seg):
        np.maximum.accumulate(seg, out=seg)
        seg -= off
    del off
    L = np.empty(len(ct), np.int64)
    if len(ct):
        L[1:] = seg[:-1]
        L[first] = first_begin
    del seg, first, first_begin
    prev_state = np.empty(len(ct), np.int8)
    if len(ct):
        prev_state[1:] = cs[:-1]
        prev_state[cfirst] = IDLE
    # an issue's stall: it was stalled (state STALL) since L < T
    iss = np.flatnonzero(kind == K_ISSUE)
    stall = np.zeros(n, np.int64)
    if len(iss):
        c = starts[iss]
        st = (prev_state[c] == STALL) & (L[c] < T[iss])
        stall[iss[st]] = T[iss[st]] - L[c[st]]

    # timeline entries: (state before the call, t - L) where t > L, merged per run of equal states
    adv = ct > L
    tl_w, tl_s, tl_d = cw[adv], prev_state[adv], (ct - L)[adv]
    del adv, ct, L, cw, prev_state, cs, cfirst, starts, ncall
    if len(tl_s):
        st = np.concatenate([[0], np.flatnonzero((tl_s[1:] != tl_s[:-1]) | (tl_w[1:] != tl_w[:-1])) + 1])
        tl_w, tl_s, tl_d = tl_w[st], tl_s[st], np.add.reduceat(tl_d, st)
    tb = np.searchsorted(tl_w, np.arange(nw + 1)).tolist()
    timelines = [Timeline(tl_s[tb[x] : tb[x + 1]], tl_d[tb[x] : tb[x + 1]]) for x in range(nw)]

    # records: issues, immediates and the end-of-wave MESSAGE (the s_endpgm the trace does not report),
    # which starts where the previous record ended
    ends = np.flatnonzero(kind == K_END)
    msg = ends[has[ends] & (prev_end[ends] < T[ends])]
    is_rec[msg] = True
    r = np.flatnonzero(is_rec)
    kr, Tr, t0, sr = kind[r], T[r], imm_t0[r], stall[r]
    issue, m = kr == K_ISSUE, kr == K_END
    recs = np.zeros(len(r), INST_DTYPE)  # pc 0
    recs["time"] = np.where(issue, Tr - sr, t0)
    recs["category"] = np.where(issue, cat[r], np.where(m, int(Category.MESSAGE), int(Category.IMMED)))
    recs["duration"] = np.where(issue, cyc[r] + sr, Tr - t0 + np.where(m, 0, 1))
    recs["stall"] = np.where(issue, sr, np.where(m, 0, Tr - t0))
    recs["line"] = -1
    bounds = np.searchsorted(w[r], np.arange(nw + 1))

    complete = np.zeros(nw, bool)
    complete[w[ends]] = True
    end = np.maximum(inst_last, 0)  # the last INST token's time; 0 if none (the official wave's initial end)
    end[w[ends]] = T[ends]
    return recs, bounds, timelines, end, complete
