"""Producer attribution: which earlier operations each executed wait waited for, and what its stall cost them.

A wait's stall lands on the wait's own line, but it was caused by memory (or ALU) operations issued
earlier, often on other source lines. For every wave, every counter of the family is replayed over the
wave's executed instructions (attdec.isa.waitcnt: what each instruction adds to which counter, what each
wait waits down to) with the counters' retirement rules (docs/wait-attribution.md):

* operations of one kind on one counter retire in issue order, so a wait down to N names every
  outstanding operation but the N youngest;
* a counter holding scalar-memory or FLAT operations, or two kinds at once, retires in an unknown order:
  only a wait down to 0 names its operations (a wait to N > 0 names none and keeps its stall);
* a counter that saturates (expcnt, the ALU dependency counters) never holds more than its capacity, so
  operations older than that have retired.

The result is a list of (wait record, producer record) pairs. Each executed wait's stall is split
evenly over the operations it named, in whole cycles (the first `stall % n` get one more), so charging
stall to producers moves cycles and never creates or loses any.

Everything is whole-array numpy over the concatenated records of all waves (attdec.analysis.stream):
per counter, the retirement point after each wait is a running maximum, and the in-order condition,
which depends on that point, is settled by a short fixed-point iteration (`_retire`); `_retire_loop` is
the plain sequential definition it must agree with.
"""

from __future__ import annotations

import numpy as np

from attdec.analysis.classify import classify
from attdec.analysis.stream import Stream, group_quantiles, line_table, stream_of
from attdec.isa import waitcnt as W
from attdec.model import CodeLine, Dispatch, Wave
from attdec.model.record import Record, field
from attdec.model.totals import distinct


def counters_of(dispatch: Dispatch) -> tuple[str, ...]:
    """The counters replayed for a dispatch: the family's memory counters, then (gfx10+) the ALU
    dependency counters of s_waitcnt_depctr / s_wait_alu."""
    t = dispatch.target
    return tuple(t.counters) + (() if t.family == "gfx9" else tuple(W.DEPENDENCY))


class Attribution(Record):
    """Producer attribution over one dispatch's waves (see the module docstring).

    Per pair (sorted by wait record, then producer record): `wait`, `producer` (record indices into
    `stream`), `mask` (bit i set: named through `counters[i]`), `charge` (stall cycles charged to the
    producer; per wait they sum to the wait's stall). Per record: `is_wait` (a wait on a counter
    replayed). `waits`: listing line -> the counters its wait instruction waits on.
    """

    dispatch: Dispatch
    stream: Stream
    counters: tuple[str, ...]
    wait: np.ndarray
    producer: np.ndarray
    mask: np.ndarray
    charge: np.ndarray
    is_wait: np.ndarray
    waits: dict[int, dict[str, int]] = field(default_factory=dict)  # line id -> counters waited on

    @property
    def memory_mask(self) -> int:
        """Bits of the memory counters (the family's, not the ALU dependency counters)."""
        return sum(1 << i for i, c in enumerate(self.counters) if c in self.dispatch.target.counters)


def _retire_loop(floor, target, count, K):
    """Sequential definition of `_retire`: per wait, the retirement point before and after it."""
    n = len(target)
    before = np.zeros(n, np.int64)
    after = np.zeros(n, np.int64)
    lb = None
    for i in range(n):
        b = int(floor[i]) if lb is None else max(lb, int(floor[i]))
        if count[i] == 0 or b >= K[i]:
            lb = max(b, int(target[i]))
        else:
            lb = b
        before[i], after[i] = b, lb
    return before, after


def _retire(stream: Stream, ops, op_kind, waits, count, cap: int | None, ooo: np.ndarray):
    """One counter over the whole stream.

    `ops` = records (ascending) that add to the counter, `op_kind` = the event kind each adds, `waits` =
    records (ascending) that wait on it, `count` = the count each waits down to, `ooo` = kind codes that
    retire out of order. Returns (before, after) per wait: the operations ops[before[i]:after[i]] are
    the ones wait i names.
    """
    if not len(waits) or not len(ops):
        return np.zeros(len(waits), np.int64), np.zeros(len(waits), np.int64)
    n = len(ops)
    idx = np.arange(n, dtype=np.int64)
    change = np.zeros(n, np.int64)
    change[1:] = np.where(op_kind[1:] != op_kind[:-1], idx[1:], 0)
    last_change = np.maximum.accumulate(change)  # latest op whose kind differs from the op before it
    last_ooo = np.maximum.accumulate(np.where(np.isin(op_kind, ooo), idx, -1))

    ub = np.searchsorted(ops, waits)  # operations issued before each wait
    N = count.astype(np.int64)
    base = np.searchsorted(ops, stream.starts[stream.wave[waits]])  # first operation of the wait's wave
    # retired for sure: other waves' operations, and those beyond the counter's capacity
    floor = base if cap is None else np.maximum(base, ub - cap)
    target = ub - N
    prev = np.maximum(ub - 1, 0)
    # The pending range [before, ub) retires in order iff no kind change and no out-of-order op inside it,
    # i.e. iff before >= K.
    K = np.where(ub > base, np.maximum(last_change[prev], last_ooo[prev] + 1), 0)
    allowed = np.ones(len(waits), bool)
    for _ in range(32):
        after = np.maximum.accumulate(np.maximum(floor, np.where(allowed, target, floor)))
        before = floor.copy()
        before[1:] = np.maximum(floor[1:], after[:-1])
        ok = allowed & ((N == 0) | (before >= K) | (target <= before))
        if np.array_equal(ok, allowed):
            break
        allowed = ok
    else:  # never seen; the sequential definition gives the same answer, slowly
        before, after = _retire_loop(floor, target, N, K)
    return before, after


def attribute(dispatch: Dispatch, waves: list[Wave] | None = None) -> Attribution:
    """Which operations each executed wait of `waves` (default: all of the dispatch's) waited for."""
    waves = dispatch.waves if waves is None else waves
    st = stream_of(waves)
    tgt = dispatch.target
    counters = counters_of(dispatch)
    info = {c.line: (W.waits_of(c.text, tgt), W.events_of(c.text, tgt)) for c in dispatch.code if not c.is_label}
    kinds = sorted({k for _w, ev in info.values() for k in ev.values()})
    code_of = {k: i for i, k in enumerate(kinds)}
    ooo = np.array([code_of[k] for k in kinds if k in W.OUT_OF_ORDER], np.int64)

    # Only counters some executed wait waits on, and only records that count or wait on those, matter:
    # the per-line tables are looked up for those records alone (on gfx10+ nearly every ALU instruction
    # counts on a dependency counter, while s_wait_alu is rarely executed, or traced).
    wait_t = line_table(dispatch.code, lambda c: bool(info[c.line][0]), False, bool)
    executed = distinct(st.lines[st.by_line(wait_t, False)])
    active = {k for ln in executed.tolist() for k in info[ln][0]} & set(counters)
    relevant_t = line_table(
        dispatch.code, lambda c: bool(active & (info[c.line][0].keys() | info[c.line][1].keys())), False, bool
    )
    rel = np.flatnonzero(st.by_line(relevant_t, False))
    rel_lines = st.lines[rel]
    pw, pp, pm = [], [], []
    is_wait = np.zeros(len(st), bool)
    for bit, counter in enumerate(counters):
        if counter not in active:
            continue
        count_t = line_table(dispatch.code, lambda c, k=counter: info[c.line][0].get(k, -1), -1, np.int64)
        kind_t = line_table(
            dispatch.code, lambda c, k=counter: code_of.get(info[c.line][1].get(k, ""), -1), -1, np.int64
        )
        if count_t.max() < 0 or kind_t.max() < 0:  # nothing waits on this counter, or nothing counts on it
            continue
        count, kind = count_t[rel_lines], kind_t[rel_lines]
        is_op, is_w = kind >= 0, count >= 0
        ops, waits = rel[is_op], rel[is_w]
        is_wait[waits] = True
        before, after = _retire(st, ops, kind[is_op], waits, count[is_w], W.capacity(counter), ooo)
        n = np.maximum(after - before, 0)
        if not n.sum():
            continue
        first = np.repeat(before, n)
        offset = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
        pw.append(np.repeat(waits, n))
        pp.append(ops[first + offset])
        pm.append(np.full(int(n.sum()), 1 << bit, np.int64))
    if len(pw) == 1:  # one counter: pairs are already unique and sorted by wait, then producer
        w, p, mask = pw[0], pp[0], pm[0]
    elif pw:  # a FLAT operation can be named through two counters of one wait: keep the pair once
        w, p, m = np.concatenate(pw), np.concatenate(pp), np.concatenate(pm)
        key, inv = np.unique(w * max(len(st), 1) + p, return_inverse=True)
        mask = np.zeros(len(key), np.int64)
        np.bitwise_or.at(mask, inv, m)
        w, p = key // max(len(st), 1), key % max(len(st), 1)
    else:
        w = p = mask = np.zeros(0, np.int64)
    charge = _split(st.col("stall")[w], w)
    waits_by_line = {ln: wt for ln, (wt, _e) in info.items() if wt and any(c in wt for c in counters)}
    return Attribution(dispatch, st, counters, w, p, mask, charge, is_wait, waits_by_line)


def _split(stall: np.ndarray, wait: np.ndarray) -> np.ndarray:
    """Whole-cycle even split of each wait's stall over its pairs (`wait` sorted; the first get the remainder)."""
    if not len(wait):
        return np.zeros(0, np.int64)
    start = np.flatnonzero(np.r_[True, wait[1:] != wait[:-1]])
    size = np.diff(np.r_[start, len(wait)])
    n = np.repeat(size, size)
    pos = np.arange(len(wait)) - np.repeat(start, size)
    stall = stall.astype(np.int64)
    return stall // n + (pos < stall % n)


def wait_pairs_by_wave(attr: Attribution) -> dict[str, np.ndarray]:
    """The pairs of each wave apart, by listing line: what `attdec waits` shows for that wave alone.

    Columns, sorted by wave, wait line, producer line: `wave` (index into the attributed waves), `wait`
    and `producer` (listing lines), `executions` (pairs of executions), `stall` (cycles charged).
    """
    st = attr.stream
    cols = ("wave", "wait", "producer", "executions", "stall")
    if not len(attr.wait):
        return {c: np.zeros(0, np.int64) for c in cols}
    wl, pl = st.lines[attr.wait].astype(np.int64), st.lines[attr.producer].astype(np.int64)
    span = int(max(wl.max(), pl.max())) + 1
    key, inv = np.unique((st.wave[attr.wait].astype(np.int64) * span + wl) * span + pl, return_inverse=True)
    executions = np.bincount(inv, minlength=len(key))
    stall = np.bincount(inv, weights=attr.charge, minlength=len(key)).round().astype(np.int64)
    return dict(zip(cols, (key // (span * span), key // span % span, key % span, executions, stall)))


# ---- wait sites -----------------------------------------------------------------------------------


class Producer(Record):
    """One listing instruction a wait site waited for, over all executions."""

    code: CodeLine
    executions: int  # (wait execution, producer execution) pairs
    stall: int  # stall cycles charged to it
    share: float  # of the site's stall (of its pairs when the site never stalled)
    distance_instructions: float  # mean instructions executed from the producer to the wait
    distance_cycles: float  # mean cycles from the producer's issue to the wait's arrival


class WaitSite(Record):
    """One wait instruction of the listing with what it waited for."""

    code: CodeLine
    counters: dict[str, int]
    type: str  # stall bucket (attdec.analysis.classify)
    hits: int
    stall: int
    stall_mean: float
    stall_p50: float
    stall_p95: float
    attributed: int  # stall charged to producers; the rest had no named producer
    producers: list[Producer]  # largest charged stall first
    distance_instructions: float | None  # mean over executions, from the youngest producer
    distance_cycles: float | None


def wait_sites(attr: Attribution) -> list[WaitSite]:
    """One row per wait instruction that executed, largest stall first."""
    d, st = attr.dispatch, attr.stream
    code = {c.line: c for c in d.code if not c.is_label}
    rec = np.flatnonzero(attr.is_wait)
    if not len(rec):
        return []
    lines = st.lines[rec]
    stall = st.col("stall")[rec].astype(np.int64)
    ulines, inv = np.unique(lines, return_inverse=True)
    hits = np.bincount(inv, minlength=len(ulines))
    stall_sum = np.bincount(inv, weights=stall, minlength=len(ulines))
    order = np.lexsort((stall, inv))
    q50, q95 = group_quantiles(stall[order].astype(np.float64), hits, (0.5, 0.95))

    time, stalls = st.col("time"), st.col("stall")
    wl = st.lines[attr.wait]
    pl = st.lines[attr.producer]
    issue = time[attr.producer] + stalls[attr.producer]
    dist_i = (attr.wait - attr.producer).astype(np.float64)
    dist_c = (time[attr.wait] - issue).astype(np.float64)
    site_of_pair = np.searchsorted(ulines, wl)
    attributed = np.bincount(site_of_pair, weights=attr.charge, minlength=len(ulines))

    # distance from the youngest producer of each wait execution (pairs sorted by wait, then producer)
    last = np.flatnonzero(np.r_[attr.wait[1:] != attr.wait[:-1], True]) if len(attr.wait) else np.zeros(0, int)
    ysite = site_of_pair[last]
    ycount = np.bincount(ysite, minlength=len(ulines))
    ydi = np.bincount(ysite, weights=dist_i[last], minlength=len(ulines))
    ydc = np.bincount(ysite, weights=dist_c[last], minlength=len(ulines))

    producers: dict[int, list[Producer]] = {}
    if len(wl):
        span = int(max(wl.max(), pl.max())) + 1
        pk, pinv = np.unique(wl * span + pl, return_inverse=True)
        pkey = np.stack([pk // span, pk % span], axis=1)
        n = np.bincount(pinv, minlength=len(pkey))
        ch = np.bincount(pinv, weights=attr.charge, minlength=len(pkey))
        di = np.bincount(pinv, weights=dist_i, minlength=len(pkey))
        dc = np.bincount(pinv, weights=dist_c, minlength=len(pkey))
        pairs_per_site = np.bincount(site_of_pair, minlength=len(ulines))
        for k, (wline, pline) in enumerate(pkey.tolist()):
            s = int(np.searchsorted(ulines, wline))
            site_stall = stall_sum[s]
            share = ch[k] / site_stall if site_stall else n[k] / pairs_per_site[s]
            producers.setdefault(wline, []).append(
                Producer(
                    code.get(pline, CodeLine(pline, "?")),
                    int(n[k]),
                    round(ch[k]),
                    float(share),
                    float(di[k] / n[k]),
                    float(dc[k] / n[k]),
                )
            )
    out = []
    for s, line in enumerate(ulines.tolist()):
        c = code.get(line)
        if c is None:
            continue
        t, _ = classify(c.text, d.target)
        ps = sorted(producers.get(line, []), key=lambda p: (-p.stall, -p.executions, p.code.line))
        out.append(
            WaitSite(
                c,
                dict(attr.waits.get(line, {})),
                t,
                int(hits[s]),
                round(stall_sum[s]),
                float(stall_sum[s] / hits[s]),
                float(q50[s]),
                float(q95[s]),
                round(attributed[s]),
                ps,
                float(ydi[s] / ycount[s]) if ycount[s] else None,
                float(ydc[s] / ycount[s]) if ycount[s] else None,
            )
        )
    out.sort(key=lambda w: (-w.stall, -w.hits, w.code.line))
    return out


# ---- charging stall to producers ----------------------------------------------------------------


def producer_moves(attr: Attribution) -> tuple[dict[int, int], dict[int, dict[str, int]]]:
    """Per listing line: stall cycles charged away from it (its waits) and charged to it (by stall type).

    `hotspots --charge producer` applies these to the per-line totals: the sum of what leaves equals the
    sum of what arrives, so totals are unchanged.
    """
    st = attr.stream
    if not len(attr.wait):
        return {}, {}
    wl = st.lines[attr.wait]
    pl = st.lines[attr.producer]
    out_lines, inv = np.unique(wl, return_inverse=True)
    leaving = np.bincount(inv, weights=attr.charge, minlength=len(out_lines))
    moved_out = {int(ln): round(v) for ln, v in zip(out_lines, leaving) if v}
    tgt = attr.dispatch.target
    text = {c.line: c.text for c in attr.dispatch.code}
    span = int(max(wl.max(), pl.max())) + 1
    k, kinv = np.unique(pl * span + wl, return_inverse=True)
    key = np.stack([k // span, k % span], axis=1)
    arriving = np.bincount(kinv, weights=attr.charge, minlength=len(key))
    moved_in: dict[int, dict[str, int]] = {}
    for (pline, wline), v in zip(key.tolist(), arriving):
        if v:
            t = classify(text.get(wline, ""), tgt)[0]
            acc = moved_in.setdefault(pline, {})
            acc[t] = acc.get(t, 0) + round(v)
    return moved_out, moved_in
