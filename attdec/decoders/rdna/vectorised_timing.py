"""The RDNA per-wave timing model (sqtt-format.md §7.1) computed with numpy for a whole blob at once.

`vectorised.py` uses this when the blob has none of the rare tokens that need the scalar model (traps,
context save/restore; jumps and NEW_PC only move PCs, which `vectorised._branch_pcs` gives the waves):
then every instruction-level token is a ready, an issue, an immediate or an end-time update, and the
model reduces to prefix operations per wave. The events are sorted by wave slot once (a stable radix
sort keeps each slot's in stream order, so each wave's are a run of its slot's), and everything after
works on contiguous per-wave runs:

- every record ends at `token time + cycles` (a stall moves its start back and adds as much to its
  duration), so an immediate's start `min(T, previous record's end)` is a shifted array;
- `last_state_cycle` is the running maximum of the state-change times, and the state before a token
  is the one its wave's previous event set (an immediate's two state changes, WAIT then EXEC at T + 1,
  leave the maximum where its second one does);
- the state timeline is the run-length merge of the previous states over the state changes that move
  time forward (past the running maximum), and a run's cycles telescope: the time of its last change
  minus that of the run before it.

The scalar model (`scalar.py`, `wave.TracedWave`) is the reference; tests/test_rdna.py checks both agree
on real captures.
"""

from __future__ import annotations

from enum import IntEnum
from functools import cache
from itertools import pairwise

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


# plain ints: numpy compares arrays with an IntEnum member several times slower than with an int
K_READY, K_ISSUE, K_IMMED, K_NONE, K_END = (
    int(e) for e in (Event.READY, Event.ISSUE, Event.IMMED, Event.NONE, Event.END)
)
IDLE, EXEC, WAIT, STALL = (int(s) for s in (WaveState.IDLE, WaveState.EXEC, WaveState.WAIT, WaveState.STALL))


class Events:
    """The instruction-level tokens of a blob for the timing model: every event (a token naming a wave
    slot; a mask token names several) sorted by slot, each slot's in stream order, and per token what its
    events do, packed in one int64 (`pack_info`) so that the events take it in one gather."""

    __slots__ = ("bounds", "info", "tok")

    tok: np.ndarray  # per event: index of its token
    bounds: np.ndarray  # where each slot's events begin in `tok`, and len(tok)
    info: np.ndarray  # per token: Event, Category of its record, cycles, events, INST of the traced SIMD

    def slots(self) -> np.ndarray:
        """Per event: its wave slot."""
        return np.repeat(np.arange(len(self.bounds) - 1, dtype=np.int8), np.diff(self.bounds))


# Events.info bits: the Event (3), whether the token is an INST of the traced SIMD (its time is the wave's
# end while it runs), its record's Category (4), its number of events (5), its cycles (from bit 16; 1 for
# an immediate: its record ends a cycle after its token)
INST_BIT, CAT_SHIFT, EVENTS_SHIFT, CYCLES_SHIFT = 3, 4, 8, 16
KIND_MASK = (1 << INST_BIT) - 1  # info & KIND_MASK: the Event
EVENTS_MASK = 31 << EVENTS_SHIFT  # info & EVENTS_MASK: 0 for a token without events
assert max(Event) <= KIND_MASK
assert CAT_SHIFT + 4 == 8  # the Category is the low byte's top 4 bits (compute reads it there)


def pack_info(kind, category, cycles, events, inst: bool = False):
    """`Events.info` of a token (ints, or int64 arrays)."""
    return (
        kind | (int(inst) << INST_BIT) | (category << CAT_SHIFT) | (events << EVENTS_SHIFT) | (cycles << CYCLES_SHIFT)
    )


class Records:
    """Every traced wave's records, made in two steps: their categories first (aligned, a byte each: the
    PC walk reads them), then the packed INST_DTYPE array with the PCs the walk found (`write`; pcs
    written into packed records afterwards would be one more pass over them)."""

    __slots__ = ("_columns", "category")

    def __init__(self, category: np.ndarray, columns: tuple | None = None) -> None:
        self.category = category
        # (the records, allocated by compute among its other arrays: one allocated here came out colder, 4 ms
        # slower to write on a big blob; their event indices, and per event T, stall, info; the MESSAGEs' events)
        self._columns = columns

    def write(self, pc: np.ndarray | None = None) -> np.ndarray:
        """The records (pc: per record, or 0; line -1); once."""
        if self._columns is None:
            return np.zeros(0, INST_DTYPE)
        recs, r, T, s, info, messages = self._columns
        self._columns = None
        # in blocks that stay in cache: the records are packed (41 bytes), and each field written over the
        # whole array would be one more pass over memory; every field is copied in from an aligned array (a
        # ufunc or a scalar that writes into a packed field is slower than a copy)
        view, pc_line = _record_view()
        if pc is not None:
            pc_line = pc_line[: len(r)].copy()
        for a in range(0, len(r), RECORD_BLOCK):
            x, rb = recs[a : a + RECORD_BLOCK].view(view), r[a : a + RECORD_BLOCK]
            sb, ib = s.take(rb), info.take(rb)
            x["time"] = T.take(rb) - sb
            x["category"] = self.category[a : a + RECORD_BLOCK]
            x["duration"] = (ib >> CYCLES_SHIFT) + sb
            x["stall"] = sb
            if pc is not None:
                pc_line["pc"][: len(x)] = pc[a : a + RECORD_BLOCK]
            x["pc_line"] = pc_line[: len(x)].view("V16")
        recs["stall"][np.searchsorted(r, messages)] = 0  # a MESSAGE has no stall
        return recs


STALL_LIMIT = (1 << 31) - (1 << 16)  # `compute`: stalls above this may make a duration over 2**31 - 1
END_INFO = pack_info(K_END, int(Category.MESSAGE), 0, 0)
RECORD_BLOCK = 16384  # records written at a time (0.7 MB)
END_TAIL = 16  # compute: a wave's last events where its last INST is looked for first


def _by_slot(ev: Events, ws_k, ws_slot):
    """The events sorted by wave, each wave's in stream order: (token index, wave) of each event and the
    waves in that order (`ws_k` indices). The events are by slot: a slot's waves follow each other, so
    each wave's events are a run of its slot's, from its WAVE_START to the next one of the slot; events
    before their slot's first wave belong to none and are left out."""
    k, sb = ev.tok, ev.bounds  # (where each slot's events begin)
    nslot = len(sb) - 1
    waves = np.lexsort((ws_k, ws_slot))  # by slot, then start
    sw, kw = ws_slot.take(waves), ws_k.take(waves)
    first = np.empty(len(waves), np.intp)  # where each wave's events begin
    cut = np.searchsorted(sw, np.arange(nslot + 1, dtype=sw.dtype)).tolist()  # the waves of each slot
    for sl, (a, b) in enumerate(pairwise(cut)):
        if a < b:
            first[a:b] = sb[sl] + np.searchsorted(k[sb[sl] : sb[sl + 1]], kw[a:b])
    # runs, slot by slot: the slot's events before its first wave (none), then its waves' in order
    start = np.concatenate([sb[:-1], first])
    label = np.concatenate([np.full(nslot, -1), np.arange(len(waves))])
    by = np.lexsort((label, np.concatenate([np.arange(nslot), sw])))
    start, label = start.take(by), label.take(by)
    w: np.ndarray = np.repeat(label.astype(_wave_type(len(waves))), np.diff(start, append=len(k)))
    if np.count_nonzero(w < 0):
        keep = (w >= 0).nonzero()[0]
        w, k = w.take(keep), k.take(keep)
    return k, w, waves


def _wave_type(nw: int) -> type:
    return np.int8 if nw < 2**7 else np.int16 if nw < 2**15 else np.int64


def compute(ev: Events, times, ws_k, ws_slot, begin):
    """Records and timelines of every wave.

    `ev`: the blob's events (`Events`), the target WAVE_ENDs of running waves among them (END events);
    `times`: every token's time; ws_*: target WAVE_START token indices and slots, in stream order, and
    `begin` their times. Returns (records, (start, stop), timelines, end, complete) per wave of ws_k: every
    wave's records (`Records`; wave x's are rows start[x]:stop[x]), per-wave timelines and end times, and
    whether each wave ended.

    The records are plausible by construction (`common.implausible` finds none: the decoder skips it):
    token times never go back, a record starts at or after its wave's begin and the record before it (an
    issue at its token or at the wave's latest state change, an immediate or MESSAGE at the previous
    record's end or its token), durations are cycles (never negative) plus a stall, and no event follows
    a wave's end (refused below).
    """
    nw = len(ws_k)
    end = np.zeros(nw, np.int64)
    complete = np.zeros(nw, bool)
    if not nw:
        return Records(np.zeros(0, np.uint8)), (np.zeros(0, np.intp), np.zeros(0, np.intp)), [], end, complete
    k, w, waves = _by_slot(ev, ws_k, ws_slot)
    begin = begin.take(waves)  # from here on, wave x is ws_k[waves[x]]
    # (take: several times faster than [] for a gather)
    info = ev.info.take(k)
    low = info.astype(np.uint8)  # Event, INST bit, Category: a byte per event (the comparisons below read less)
    kind = low & KIND_MASK
    at_end = (kind == K_END).nonzero()[0]
    after = np.minimum(at_end + 1, len(w) - 1)  # a wave's end is its last event
    if np.any((after > at_end) & (w.take(after) == w.take(at_end))):
        raise NotVectorisable("instruction tokens after a wave's end (or a second end)")
    # times never go back in the stream (the splitter's deltas are never negative), so each wave's T is
    # sorted: a running maximum over a wave is its latest value
    T = times.take(k)
    del k
    ended, ended_at = w.take(at_end), T.take(at_end)
    # the wave's end while it runs: its last INST token's time (0 if none: the official wave's initial end),
    # looked for among each wave's last END_TAIL events first (rarely further back), then in the whole wave
    if len(w):
        wb = _wave_bounds(w, nw)
        lo, hi = wb[:-1], wb[1:]
        tail = hi[:, None] - 1 - np.arange(END_TAIL)  # latest first
        inside = tail >= lo[:, None]
        tail = np.maximum(tail, 0)
        is_inst = ((info.take(tail) & (1 << INST_BIT)) != 0) & inside
        found = is_inst.any(axis=1)
        end[found] = np.maximum(T.take(tail[found, is_inst[found].argmax(axis=1)]), 0)
        for x in (~found & (hi - lo > END_TAIL)).nonzero()[0].tolist():
            at = (info[lo[x] : hi[x]] & (1 << INST_BIT)).nonzero()[0]
            if len(at):
                end[x] = max(int(T[lo[x] + at[-1]]), 0)
    calls = kind != K_NONE  # NONE events change no state
    if not calls.all():
        keep = calls.nonzero()[0]
        w, info, low, T = w.take(keep), info.take(keep), low.take(keep), T.take(keep)
        kind = low & KIND_MASK
        at_end = (kind == K_END).nonzero()[0]
    del calls
    n = len(w)
    if not n:
        none = [Timeline(*_none()) for _ in range(nw)]
        return _in_order(waves, Records(np.zeros(0, np.uint8)), np.zeros(nw + 1, np.intp), none, end, complete)

    # --- D: how far each event's first state change moves time forward: past the latest earlier change of
    # the wave (its begin for its first event). An immediate's last state change is at T + 1, every other
    # event's at T; with T sorted per wave, the latest change up to event i is T_i + 1 if an immediate of the
    # wave at time T_i came up to it (it is "late"), else T_i: D is T's step, one less after a late event
    first = np.empty(n, bool)
    first[0] = True
    np.not_equal(w[1:], w[:-1], out=first[1:])
    fi = first.nonzero()[0]
    del first
    is_imm = kind == K_IMMED
    ie = is_imm.nonzero()[0]
    D = np.empty(n, np.int64)
    D[0] = 0
    np.subtract(T[1:], T[:-1], out=D[1:])
    after = [ie + 1]  # the events right after a late one
    while True:  # late too: those at its time (rarely), of its wave, not immediates (those start their own)
        at = after[-1]
        at = at[: np.searchsorted(at, n)]  # (sorted: only the last can be past the end)
        at = at.compress(D.take(at) == 0)
        at = at.compress((w.take(at) == w.take(at - 1)) & ~is_imm.take(at))
        if not len(at):
            break
        after.append(at + 1)
    for at in after:
        D[at[: np.searchsorted(at, n)]] -= 1  # (no index twice: the late events are distinct)
    del after, at
    D[fi] = T.take(fi) - begin.take(w.take(fi))
    # the state before each event: set by the wave's previous event, STALL after a READY, else EXEC (an END
    # is its wave's last event: the next one is a wave's first, IDLE)
    # (built as int16 pairs (state before the event, WAIT): little-endian, their bytes are the timeline's
    # state-change entries below, interleaved, without two strided writes)
    ready = kind == K_READY
    states = np.empty(n, "<i2")
    states[1:] = ready[:-1]
    states *= STALL - EXEC
    states += EXEC | WAIT << 8
    states[0] = IDLE | WAIT << 8
    states[fi] = IDLE | WAIT << 8

    # --- immediates and wave ends: the end of the previous record (not READY) of the same wave -------------
    # an immediate starts at min(T, previous record's end); the end-of-wave MESSAGE record (the s_endpgm
    # the trace does not report) runs from the previous record's end to the wave's end, if later
    wb = _wave_bounds(w, nw)  # where each wave's events begin
    gap = _gap(ie, T, info, w, ready)
    gap_e = _gap(at_end, T, info, w, ready)
    msg = gap_e > 0
    messages = at_end.compress(msg)

    # --- the state changes: entry 2i is event i's first (state before it, at T; an immediate's WAIT at its
    # start t0 = T - gap), entry 2i + 1 an immediate's second (WAIT, EXEC at T + 1); an entry moves time
    # forward when its time is past the latest earlier change L = T - D, and only those make the timeline:
    # an immediate's first by D - gap, its second when D >= 0 (it is past t0 too, as gap >= 0)
    Di = D.take(ie)
    D[ie] = Di - gap
    ahead = D > 0
    fwd = ahead.astype("<u2").view(bool)  # (interleaved with False in one pass, ahead kept aligned)
    fwd[2 * ie + 1] = Di >= 0
    del Di
    # per event: how far its record starts before its token: an issue's stall (stalled since L < T), an
    # immediate's gap, the MESSAGE's gap
    stalled = states == STALL | WAIT << 8
    stalled &= ahead
    stalled &= kind == K_ISSUE
    s = np.multiply(D, stalled, out=D)  # (in D's place: D is not needed after)
    s[ie] = gap
    s[messages] = gap_e.compress(msg)
    del gap, ahead
    # a record of over 2**31 cycles (garbage time deltas): AMD's decoder wraps its duration to 32 bits before
    # the next immediate and the end start from it (`wave.c_int`), which these prefix operations do not follow
    if len(s) and int(s.max()) > STALL_LIMIT:
        raise NotVectorisable("a record of over 2**31 cycles")

    # --- timeline: the forward entries' states, merged into runs per wave; a run's cycles telescope to the
    # time of its last change minus that of the run before it (the wave's begin for its first run)
    f = fwd.nonzero()[0]
    del fwd
    tl_s = states.view(np.int8).take(f)
    del states
    tb = np.searchsorted(f, 2 * wb)  # where each wave's forward entries begin
    d = np.zeros(0, np.int64)
    if len(f):
        # each run's last entry: the entry before a run's first (a wave's first, a change of state) or the last
        first = np.empty(len(f) + 1, bool)
        first[0] = first[-1] = True
        np.not_equal(tl_s[1:], tl_s[:-1], out=first[1:-1])
        first[tb] = True
        run = first[1:].nonzero()[0]
        del first
        tl_s = tl_s.take(run)
        tb = np.searchsorted(run, tb)  # (a wave's runs: those that end at or after its first entry)
        p = f.take(run)
        del f, run
        e = p >> 1
        second = p & 1
        # the time of each run's last change: T, T + 1 for a second, t0 = T - gap for an immediate's first
        c = T.take(e) + second
        at_t0 = is_imm.take(e)
        at_t0 &= second == 0
        at_t0 = at_t0.nonzero()[0]
        c[at_t0] = c.take(at_t0) - s.take(e.take(at_t0))
        d = np.empty_like(c)
        d[0] = c[0]
        np.subtract(c[1:], c[:-1], out=d[1:])
        has = tb[:-1] < tb[1:]
        wf = tb[:-1].compress(has)
        d[wf] = c.take(wf) - begin.compress(has)
        del c, e, p, second
    tb = tb.tolist()
    timelines = [Timeline(tl_s[tb[x] : tb[x + 1]], d[tb[x] : tb[x + 1]]) for x in range(nw)]

    # --- the records: issues and immediates, and the MESSAGE of the ends that have one --------------------
    rec = ~ready
    rec[at_end.compress(~msg)] = False
    r = rec.nonzero()[0]
    del rec
    category = low.take(r)  # (see Records)
    category >>= CAT_SHIFT
    bounds = np.searchsorted(r, wb)

    complete[ended] = True
    end[ended] = ended_at
    return _in_order(
        waves,
        Records(category, (np.empty(len(r), INST_DTYPE), r, T, s, info, messages)),
        bounds,
        timelines,
        end,
        complete,
    )


@cache
def _record_view() -> tuple[np.dtype, np.ndarray]:
    """INST_DTYPE with its adjacent pc and line as one 16-byte field, and RECORD_BLOCK of them (pc 0, line
    -1; read only): one copy writes both (each field written is a pass over the packed records)."""
    f = INST_DTYPE.fields
    assert f is not None and f["line"][1] == f["pc"][1] + 8
    names = ["time", "category", "stall", "duration"]
    view = np.dtype(
        {
            "names": [*names, "pc_line"],
            "formats": [f[k][0] for k in names] + ["V16"],
            "offsets": [f[k][1] for k in names] + [f["pc"][1]],
            "itemsize": INST_DTYPE.itemsize,
        }
    )
    pc_line = np.zeros(RECORD_BLOCK, [("pc", f["pc"][0]), ("line", f["line"][0])])
    pc_line["line"] = -1
    pc_line.flags.writeable = False
    return view, pc_line


def _gap(at, T, info, w, ready):
    """Per event at `at`: how far its time lies after the end (T + cycles) of its wave's previous record
    (event not READY), 0 if not after or if it has none."""
    p = at - 1
    pc = np.maximum(p, 0)
    p[(p < 0) | (w.take(pc) != w.take(at))] = -1  # the wave's first event: none before it
    back = (ready.take(pc) & (p >= 0)).nonzero()[0]
    while len(back):  # back over READY events (rarely more than one)
        q = p.take(back) - 1
        qc = np.maximum(q, 0)
        same = (q >= 0) & (w.take(qc) == w.take(at.take(back)))
        p[back] = np.where(same, q, -1)
        back = back.compress(same & ready.take(qc))
    pc = np.maximum(p, 0)
    gap = T.take(at) - T.take(pc) - (info.take(pc) >> CYCLES_SHIFT)
    gap[(p < 0) | (gap < 0)] = 0
    return gap


def _in_order(waves, recs, bounds, timelines, end, complete):
    """`compute`'s results per wave of ws_k, from those per wave in `_by_slot` order."""
    nw = len(waves)
    at = np.empty((2, nw), np.intp)
    at[:, waves] = bounds[:-1], bounds[1:]
    tl: list = [None] * nw
    for x, t in zip(waves.tolist(), timelines):
        tl[x] = t
    out_end, out_complete = np.empty_like(end), np.empty_like(complete)
    out_end[waves], out_complete[waves] = end, complete
    return recs, at, tl, out_end, out_complete


def _wave_bounds(w: np.ndarray, nw: int) -> np.ndarray:
    """Where each of waves 0..nw-1 begins in the wave-sorted `w`, and len(w): searched with values of
    w's own narrow type, so that numpy does not widen the long array to compare."""
    out = np.empty(nw + 1, np.int64)
    out[:nw] = np.searchsorted(w, np.arange(nw, dtype=w.dtype))
    out[nw] = len(w)
    return out


def _none():
    return np.zeros(0, np.int8), np.zeros(0, np.int64)
