"""The RDNA per-wave timing model (sqtt-format.md §7.1) computed with numpy for a whole blob at once.

`rdna.decode` uses this when the blob has none of the rare tokens that need the scalar model (traps,
context save/restore, NEW_PC, jumps): then every instruction-level token is a ready, an issue, an
immediate or an end-time update, and the model reduces to prefix operations per wave:

- every record ends at `token time + cycles` (a stall moves its start back and adds as much to its
  duration), so an immediate's start `min(T, previous record's end)` is a shifted array;
- `last_state_cycle` is the running maximum of the state-change times, and the state before a token
  is the one set by the previous state change of the same wave;
- the state timeline is the run-length merge of (previous state, time - running max) over the state
  changes that move time forward.

The scalar model in rdna.py is the reference; tests/test_rdna.py checks both agree on real captures.
"""
from __future__ import annotations

import numpy as np

EMPTY, IDLE, EXEC, WAIT, STALL = range(5)
K_READY, K_ISSUE, K_IMMED, K_NONE, K_END = range(5)
OFF = np.int64(1) << np.int64(44)        # segment offset for per-wave running maxima (times < 2^43)


class NotVectorisable(Exception):
    """The blob has a token order the vectorised model does not cover (e.g. tokens after WAVE_END)."""


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
    for s in np.unique(ev_slot).tolist():
        sel = np.flatnonzero(ev_slot == s)
        wsel = np.flatnonzero(ws_slot == s)
        if not len(wsel):
            continue
        j = np.searchsorted(ws_k[wsel], ev_k[sel], side="right") - 1
        ok = j >= 0
        out[sel[ok]] = wsel[j[ok]]
    return out


def compute(ev, times, ws_k, ws_slot, begin, we_k, we_slot, cat_message, cat_immed):
    """Records and timelines of every wave.

    `ev`: dict of per-event arrays from the blob (k token index, slot, kind, T, cat, cyc, inst flag);
    `times`: every token's time; ws_* / we_*: target WAVE_START / WAVE_END token indices and slots.
    Returns per-wave lists: (time, category, duration, stall) arrays, timeline, end, complete.
    """
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
    keep = w >= 0
    k = np.concatenate([ev["k"][keep], e_k])
    w = np.concatenate([w[keep], e_w])
    kind = np.concatenate([ev["kind"][keep], np.full(len(e_k), K_END, np.int64)])
    T = np.concatenate([ev["T"][keep], times[e_k]])
    cat = np.concatenate([ev["cat"][keep], np.zeros(len(e_k), np.int64)])
    cyc = np.concatenate([ev["cyc"][keep], np.zeros(len(e_k), np.int64)])
    inst = np.concatenate([ev["inst"][keep], np.zeros(len(e_k), bool)])
    order = np.lexsort((k, w))                        # per wave, in stream order (one event per token)
    k, w, kind, T, cat, cyc, inst = (a[order] for a in (k, w, kind, T, cat, cyc, inst))
    del order
    kind = kind.astype(np.int8)
    cat = cat.astype(np.int16)
    cyc = cyc.astype(np.int32)
    end_of = np.full(nw, -1, np.int64)
    end_of[e_w] = e_k
    if len(k) and np.any((end_of[w] >= 0) & (k > end_of[w])):
        raise NotVectorisable("instruction tokens after a wave's end")
    del k, end_of

    n = len(w)

    # --- records: issues and immediates; the end of the previous record of the same wave -------------
    is_rec = (kind == K_ISSUE) | (kind == K_IMMED)
    rec_end = np.where(kind == K_ISSUE, T + cyc, T + 1)
    ridx = np.flatnonzero(is_rec)
    prev_end = np.full(n, np.iinfo(np.int64).min, np.int64)      # end of the previous record, per event
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
    cidx = np.repeat(np.arange(n, dtype=np.int32), ncall)       # event of each call
    second = np.zeros(len(cidx), bool)                          # an immediate's second call (EXEC at T+1)
    imm_ev = np.flatnonzero(kind == K_IMMED)
    second[starts[imm_ev] + 1] = True
    ck = kind[cidx]
    ct = T[cidx]
    ct[second] += 1
    first_imm = (ck == K_IMMED) & ~second
    ct[first_imm] = imm_t0[cidx[first_imm]]
    cs = np.select([ck == K_READY, ck == K_ISSUE, first_imm, ck == K_IMMED],
                   [STALL, EXEC, WAIT, EXEC], EMPTY).astype(np.int8)
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
    rtime = np.where(kind == K_ISSUE, T - stall, imm_t0)
    rdur = np.where(kind == K_ISSUE, cyc + stall, T - imm_t0 + 1)
    rstall = np.where(kind == K_ISSUE, stall, T - imm_t0)
    rcat = np.where(kind == K_ISSUE, cat, cat_immed)

    # timeline entries: (state before the call, t - L) where t > L, merged per run of equal states
    adv = ct > L
    tl_w, tl_s, tl_d = cw[adv], prev_state[adv], (ct - L)[adv]
    del adv, ct, L, cw, prev_state, cs, cfirst, starts, ncall

    # end-of-wave MESSAGE record (the s_endpgm the trace does not report)
    ends = np.flatnonzero(kind == K_END)
    msg = ends[has[ends] & (prev_end[ends] < T[ends])] if len(ends) else ends

    # --- per wave ---------------------------------------------------------------------------------
    out = []
    rec_sel = np.flatnonzero(is_rec)
    r_w = w[rec_sel]
    rb = np.searchsorted(r_w, np.arange(nw + 1))
    mb = np.searchsorted(w[msg], np.arange(nw + 1)) if len(msg) else np.zeros(nw + 1, np.int64)
    tb = np.searchsorted(tl_w, np.arange(nw + 1))
    inst_last = np.full(nw, -1, np.int64)
    ii = np.flatnonzero(inst)
    if len(ii):
        np.maximum.at(inst_last, w[ii], T[ii])
    end_t = np.full(nw, -1, np.int64)
    complete = np.zeros(nw, bool)
    if len(ends):
        end_t[w[ends]] = T[ends]
        complete[w[ends]] = True
    for x in range(nw):
        sl = rec_sel[rb[x]:rb[x + 1]]
        t_, c_, d_, s_ = rtime[sl], rcat[sl], rdur[sl], rstall[sl]
        if mb[x + 1] > mb[x]:
            e = msg[mb[x]]
            t_ = np.append(t_, prev_end[e])
            c_ = np.append(c_, cat_message)
            d_ = np.append(d_, T[e] - prev_end[e])
            s_ = np.append(s_, 0)
        a, b = tb[x], tb[x + 1]
        s, d = tl_s[a:b], tl_d[a:b]
        if len(s):
            brk = np.flatnonzero(np.diff(s)) + 1
            st = np.concatenate([[0], brk])
            timeline = list(zip(s[st].tolist(), np.add.reduceat(d, st).tolist()))
        else:
            timeline = []
        if complete[x]:
            end = int(end_t[x])
        else:
            end = int(max(inst_last[x], begin[x]))
        out.append((t_, c_, d_, s_, timeline, end, bool(complete[x])))
    return out
