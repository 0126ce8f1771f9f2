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
from attdec.model import INST_DTYPE, Category, WaveState


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
    bits = (mask[:, None] >> np.arange(nbits, dtype=np.uint64)[None, :]) & np.uint64(1)
    r, b = np.nonzero(bits)
    return k[r], b.astype(np.int64)


def _wave_of(ev_k, ev_slot, ws_k, ws_slot):
    """Index of the wave holding `slot` at token `k` (the latest target WAVE_START of that slot), or -1."""
    out = np.full(len(ev_k), -1, np.int64)
    if not len(ws_k) or not len(ev_k):
        return out
    key = (ws_slot << 32) | ws_k
    o = np.argsort(key, kind="stable")
    key = key[o]
    j = np.searchsorted(key, (ev_slot << 32) | ev_k, side="right") - 1
    ok = j >= 0
    ok[ok] = ws_slot[o[j[ok]]] == ev_slot[ok]
    out[ok] = o[j[ok]]
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
    order = np.argsort(np.concatenate([w, e_w]).astype(np.int16 if nw < 2**15 else np.int64), kind="stable")
    ne = len(e_w)

    def pick(name, at_end):
        a = ev[name]
        tail = np.full(ne, at_end, a.dtype) if np.isscalar(at_end) else at_end
        return np.concatenate([a[keep], tail])[order]  # noqa: F821 - called before `del order, keep`

    w = np.concatenate([w, e_w])[order]
    kind, T, cat, cyc = pick("kind", K_END), pick("T", times[e_k]), pick("cat", 0), pick("cyc", 0)
    del order, keep

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
    ncall = np.select([kind == K_IMMED, kind == K_NONE], [2, 0], 1).astype(np.int32)
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
    cs = np.select([ck == K_READY, ck == K_ISSUE, first_imm, ck == K_IMMED], [STALL, EXEC, WAIT, EXEC], EMPTY).astype(
        np.int8
    )
    del ck, first_imm, second
    cw = w[cidx]
    del cidx
    cfirst = np.ones(len(cw), bool)
    cfirst[1:] = cw[1:] != cw[:-1]
    cb = begin[cw] if len(cw) else np.zeros(0, np.int64)
    # running maximum of earlier call times (and the wave's begin), per wave
    seg = np.maximum(ct, cb) + cw * OFF
    if len(seg):
        np.maximum.accumulate(seg, out=seg)
        seg -= cw * OFF
    L = np.empty(len(ct), np.int64)
    if len(ct):
        L[1:] = seg[:-1]
        L[cfirst] = cb[cfirst]
    del seg, cb
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
    entries = list(zip(tl_s.tolist(), tl_d.tolist()))
    timelines = [entries[tb[x] : tb[x + 1]] for x in range(nw)]
    del entries

    # records: issues, immediates and the end-of-wave MESSAGE (the s_endpgm the trace does not report),
    # which starts where the previous record ended
    ends = np.flatnonzero(kind == K_END)
    msg = ends[has[ends] & (prev_end[ends] < T[ends])]
    is_rec[msg] = True
    r = np.flatnonzero(is_rec)
    kr, Tr, t0, sr = kind[r], T[r], imm_t0[r], stall[r]
    issue, m = kr == K_ISSUE, kr == K_END
    recs = np.empty(len(r), INST_DTYPE)
    recs["time"] = np.where(issue, Tr - sr, t0)
    recs["category"] = np.where(issue, cat[r], np.where(m, int(Category.MESSAGE), int(Category.IMMED)))
    recs["duration"] = np.where(issue, cyc[r] + sr, Tr - t0 + np.where(m, 0, 1))
    recs["stall"] = np.where(issue, sr, np.where(m, 0, Tr - t0))
    recs["pc"] = 0
    recs["line"] = -1
    bounds = np.searchsorted(w[r], np.arange(nw + 1))

    complete = np.zeros(nw, bool)
    complete[w[ends]] = True
    end = np.maximum(inst_last, 0)  # the last INST token's time; 0 if none (the official wave's initial end)
    end[w[ends]] = T[ends]
    return recs, bounds, timelines, end, complete
