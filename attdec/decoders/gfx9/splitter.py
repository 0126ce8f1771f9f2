"""gfx9 token splitting and time (sqtt-format.md §3.1, §3.2): the token starts of a buffer, their values,
and the time of the tokens the decoder looks at: numpy (chunked), with a short Python walk over the few
multi-word tokens and special (time) tokens of a small blob, where numpy's per-call costs would dominate."""

from __future__ import annotations

from functools import cache

import numpy as np

from attdec.decoders.gfx9.packets import (
    DELTA_CYCLES,
    GFX9,
    OFFICIAL_TIME_BITS,
    TOKEN_NAMES,
    TOKEN_WORDS,
    MiscKind,
)

TYPE_MASK = (1 << GFX9.id_window) - 1  # the type is the low nibble of the token's first word
MISC, TIMESTAMP = TOKEN_NAMES.index("MISC"), TOKEN_NAMES.index("TIMESTAMP")
MISC_KIND = GFX9["MISC"]["kind"]
# every token's delta starts at bit 4 (one bit; MISC: eight), in units of DELTA_CYCLES
DELTA_LO = 4
DELTA_MASK = np.array([GFX9.at(t).delta.mask for t in range(16)], np.uint64)  # type: ignore[union-attr]
assert all(GFX9.at(t).delta.lo == DELTA_LO for t in range(16))  # type: ignore[union-attr]


def _type_bits(names) -> int:
    return sum(1 << TOKEN_NAMES.index(n) for n in names)


# What the time pass delivers (the rest only moves the time on), as bits: by token type, and for MISC by
# subtype. TIMESTAMP and TIME_RESET are never delivered. The state machine looks at MISC only for packet
# loss and context save.
MODEL_SELECTION = (
    _type_bits(("WAVE_START", "WAVE_ALLOC", "WAVE_END", "INST", "INST_PC", "ISSUE", "REG", "REG_CS", "REG_CS_PRIV",
                "SHADERDATA", "PERF")),
    1 << MiscKind.PACKET_LOST | 1 << MiscKind.SAVE_CONTEXT,
)  # fmt: skip
ALL_SELECTION = ((1 << 16) - 1 & ~(1 << MISC | 1 << TIMESTAMP), 0xFF & ~(1 << MiscKind.TIME_RESET))

# Per-word facts from a few bits (shifts of 16-bit constants: far cheaper than a table gather per word):
# a token's length in words is 1 + bit 0 + 2 x bit 1 of (its type's length - 1); MISC's delta has 8 bits.
_LEN_BIT0, _LEN_BIT1 = (sum(((int(n) - 1) >> b & 1) << t for t, n in enumerate(TOKEN_WORDS)) for b in (0, 1))
assert MISC == 0 and set(DELTA_MASK[1:].tolist()) == {1}
_MISC_DELTA = int(DELTA_MASK[MISC])
assert _MISC_DELTA < 256 and MISC_KIND.lo + MISC_KIND.width == 16
# numpy scalars made once: the split and the time pass run for every blob, most of them a few hundred words
_U16_TYPE_MASK, _U16_DELTA_LO, _U16_ONE = (np.uint16(x) for x in (TYPE_MASK, DELTA_LO, 1))
_U16_LEN_BIT0, _U16_LEN_BIT1, _U16_LONGER = (np.uint16(x) for x in (_LEN_BIT0, _LEN_BIT1, _LEN_BIT0 | _LEN_BIT1))
_U8_ONE = np.uint8(1)
_I64_DELTA_CYCLES = np.int64(DELTA_CYCLES)
_TOKEN_WORDS_L = TOKEN_WORDS.tolist()
_VALUE_MASK = np.array([(1 << 16 * int(n)) - 1 for n in TOKEN_WORDS], np.uint64)  # a token's bits, by type
_TIME_RESET = int(MiscKind.TIME_RESET)  # numpy compares with a plain int several times faster than an IntEnum

# A word's class for the time pass, from its type nibble and MISC subtype bits (`_U16_CLASS_KEY`), as a
# start of a token: the mask of its delta bits above DELTA_LO (low byte), whether it is selected, special
# (TIMESTAMP, TIME_RESET) or a TIME_RESET. One table gather instead of a dozen passes over the words.
_U16_CLASS_KEY = np.uint16(TYPE_MASK | MISC_KIND.mask << MISC_KIND.lo)
_U16_DELTA_BITS = np.uint16(0xFF)
_PICKED, _SPECIAL, _RESET = (np.uint16(1 << b) for b in (8, 9, 10))


@cache
def _word_classes(type_bits: int, misc_bits: int) -> np.ndarray:
    """The class (uint16) of every key `word & _U16_CLASS_KEY` for a selection (`MODEL_SELECTION`...)."""
    key = np.arange(int(_U16_CLASS_KEY) + 1)
    ty, kind = key & TYPE_MASK, key >> MISC_KIND.lo
    misc = ty == MISC
    reset = misc & (kind == _TIME_RESET)
    picked = (type_bits >> ty) & 1 | misc & ((misc_bits >> kind) & 1 != 0)
    cls = DELTA_MASK[ty] | picked.astype(np.uint64) << 8 | (reset | (ty == TIMESTAMP)).astype(np.uint64) << 9
    cls |= reset.astype(np.uint64) << 10
    return cls.astype(np.uint16)


def token_lengths(words: np.ndarray) -> np.ndarray:
    """The length in words (uint8) of a token starting at each word."""
    ty = words & _U16_TYPE_MASK
    n = (_U16_LEN_BIT0 >> ty) & _U16_ONE
    n += ((_U16_LEN_BIT1 >> ty) & _U16_ONE) << _U16_ONE
    n = n.astype(np.uint8)
    n += _U8_ONE
    return n


def official_timestamps(values: np.ndarray) -> np.ndarray:
    """TIMESTAMP tokens' 48-bit fields (uint64) as the official token keeps them: 46 bits, signed (int64)."""
    raw = (values & np.uint64((1 << OFFICIAL_TIME_BITS) - 1)).astype(np.int64)
    return np.where(raw >= 1 << (OFFICIAL_TIME_BITS - 1), raw - (1 << OFFICIAL_TIME_BITS), raw)


SPLIT_BLOCK = 32  # words per block of the vectorized split (a lockstep step per token of a block)
PY_WALK = 2048  # candidates walked hop by hop in Python (fewer numpy calls for small blobs)
PY_SPECIALS = 256  # special tokens (TIME_RESET, TIMESTAMP) corrected one at a time in Python
SPLIT_CHUNK = 1 << 23  # words per numpy pass: bounds the scratch arrays (and 255 * it fits an int32)
GATHER_BLOCK = 1 << 16  # words per table gather: its index copy stays in the cache


def token_starts(words: np.ndarray) -> tuple[np.ndarray, int | None]:
    """Which words start a token (bool per word), and the word where a token ran past the end, or None
    (that token is not marked: the official reader drops it).

    Lengths depend only on the type nibble, so finding the starts is a chain of hops. One-word tokens (most
    of a stream: MISC time deltas, INST) move it on by one word, so the chain is walked over the candidates
    alone, the words whose type has more words: from each to the first candidate at or after its token's
    end. Every word not inside a multi-word token of the chain starts a token. The walk is vectorized by
    blocks of SPLIT_BLOCK candidates (see _split_chunk), in Python up to PY_WALK of them; the result equals
    the hop-by-hop walk (tested).
    """
    n = len(words)
    cand = (((_U16_LONGER >> (words & _U16_TYPE_MASK)) & _U16_ONE) != 0).nonzero()[0]
    if len(cand) <= PY_WALK:  # a small blob: hop by hop is quicker than the blocks' numpy set-up
        inner: list[int] = []  # words inside the chain's tokens (up to 3 past the end: cut off below)
        end = 0  # where the latest one ends
        for p, ty in zip(cand.tolist(), (words[cand] & _U16_TYPE_MASK).tolist()):
            if p >= end:
                end = p + _TOKEN_WORDS_L[ty]
                inner.extend(range(p + 1, end))
        mask = np.ones(n + 3, bool)
        mask[inner] = False
        mask = mask[:n]
    else:
        lens = token_lengths(words[cand])
        reach = cand + lens
        hop = np.ones(len(cand), np.uint8)  # to the next candidate on the chain: skip those inside the token
        for k in (1, 2, 3):
            hop[:-k] += cand[k:] < reach[:-k]
        del reach
        on_chain = np.zeros(len(cand), bool)
        entry = 0
        for lo in range(0, len(cand), SPLIT_CHUNK):
            hi = min(len(cand), lo + SPLIT_CHUNK)
            if entry >= hi - lo:  # a long hop crossed the whole (tiny) remainder
                entry -= hi - lo
                continue
            entry = _split_chunk(hop[lo:hi], entry, on_chain[lo:hi])
        mask = np.ones(n, bool)
        taken, inner_n = cand[on_chain], lens[on_chain]
        for k in (1, 2, 3):
            at = taken[inner_n > k] + k
            mask[at[at < n]] = False
        del hop, on_chain, taken, inner_n
    del cand
    truncated = None
    if n:
        last = n - 4 + int(mask[-4:].nonzero()[0][-1]) if n >= 4 else int(mask.nonzero()[0][-1])
        if last + TOKEN_WORDS[int(words[last]) & TYPE_MASK] > n:
            truncated = last
            mask[last] = False
    return mask, truncated


def split_tokens(words: np.ndarray):
    """Token start positions (word index) and types; the word where a token ran past the end, or None."""
    mask, truncated = token_starts(words)
    s = mask.nonzero()[0]
    return s, (words[s] & TYPE_MASK).astype(np.uint8), truncated


def _split_chunk(lens: np.ndarray, entry: int, out: np.ndarray) -> int:
    """Mark in `out` the chain of one chunk of hops (`lens`, 1 to 4 positions; "words" below) entered at
    word `entry` (< 4); returns the entry offset into the next chunk.

    Every block is walked from its first word, all blocks in lockstep (one hop per block per step, in a
    table whose rows are the blocks, with 4 columns of zero-length hops after each row to park a walk that
    left its block). The real chain enters a block at one of its first 4 words and almost always lands on
    that block's walk within a token or two; those few hops are walked in lockstep too. A chain that
    leaves a block before landing on its walk (rare) sends the rest through the plain per-block loop.
    """
    n = len(lens)
    B = SPLIT_BLOCK
    nb = -(-n // B)
    W = B + 4
    table = np.zeros((nb, W), np.uint8)  # hop length at each word; 0 = parked (past the block or the chunk)
    full = n // B
    table[:full, :B] = lens[: full * B].reshape(full, B)
    if n > full * B:
        table[full, : n - full * B] = lens[full * B :]
    hops = table.ravel()
    visit = np.zeros(nb * W, bool)
    row = np.arange(nb, dtype=np.int64) * W
    pos = row.copy()
    while True:
        visit[pos] = True
        step = hops[pos]
        if not step.any():
            break
        pos += step
    row_len = np.full(nb, B, np.int64)
    row_len[-1] = n - (nb - 1) * B
    exits = pos - row - row_len  # where each block's own walk leaves it, relative to the next block

    # the real chain: block 0 entered at `entry`, block k at block k-1's exit (if that block's chain
    # landed on its walk, its exit is the walk's)
    enter = np.empty(nb, np.int64)
    enter[0] = entry
    enter[1:] = exits[:-1]
    merge = np.zeros(nb, np.int64)  # offset in the block from which its walk is the chain
    extra = []  # chain words before it lands on the walk
    todo = (enter > 0).nonzero()[0]
    p = row[todo] + enter[todo]
    while len(todo):
        on = visit[p]
        merge[todo[on]] = (p - row[todo])[on]
        todo, p = todo[~on], p[~on]
        step = hops[p]
        if not step.all():  # left its block (or the chunk) before landing on the walk
            return _split_chunk_loop(lens, entry, visit.reshape(nb, W)[:, :B].ravel()[:n], exits, out)
        extra.append(p)
        p = p + step
    keep = visit.reshape(nb, W)
    keep &= np.arange(W) >= merge[:, None]
    for e in extra:
        keep.ravel()[e] = True
    out[:] = keep[:, :B].ravel()[:n]
    return int(exits[-1])


def _split_chunk_loop(lens, entry, seen, exits, out) -> int:
    """`_split_chunk` finished block by block in Python, for a chain that does not land on a block's walk
    within that block: `seen` holds the blocks' own walks."""
    n = len(lens)
    B = SPLIT_BLOCK
    merge = np.empty(len(exits), np.int64)
    extra = []
    e = entry
    for k in range(len(exits)):
        p = k * B + e
        end = min(p - e + B, n)
        while p < end and not seen[p]:
            extra.append(p)
            p += int(lens[p])
        merge[k] = p
        e = int(exits[k]) if p < end else p - end
    out[:] = seen & (np.arange(n) >= np.repeat(merge, B)[:n])
    if extra:
        out[np.asarray(extra, np.int64)] = True
    return e


def token_values(words: np.ndarray, starts: np.ndarray, types: np.ndarray) -> np.ndarray:
    """Full little-endian values (up to 64 bits, uint64) of the tokens at `starts` (complete tokens, in
    stream order): the 4 words from each start read as one uint64 (an overlapping view of `words`), cut
    to the token's length; the last 3 words' tokens, whose 4 words pass the end, one at a time."""
    n = len(words)
    lo = max(n - 3, 0)
    whole = int(np.searchsorted(starts, lo))  # tokens with 4 words from their start in `words`
    val = np.empty(len(starts), np.uint64)
    if whole:
        words = np.ascontiguousarray(words)
        val[:whole] = np.ndarray((lo,), "<u8", words, 0, (2,)).take(starts[:whole])
    tail = words[lo:].tolist()
    for i, p in enumerate(starts[whole:].tolist(), whole):
        val[i] = sum(w << 16 * k for k, w in enumerate(tail[p - lo :]))
    val &= _VALUE_MASK.take(types)
    return val


class TimeState:
    """Where the time pass stands at the end of a window of a blob (gfx9.windowed, which ends a window only
    where no TIME_RESET waits for the token it consumes): the running time, the deltas of the tokens consumed
    so far, the resync offset in force and the resync base (0: not set yet)."""

    def __init__(self) -> None:
        self.carry = self.consumed = self.off = self.base = 0


def token_times(words: np.ndarray, mask: np.ndarray, ts_of, ended_partial: bool, selection=MODEL_SELECTION, state=None):
    """Word positions of the selected tokens (`mask`: token starts; `selection`: MODEL_SELECTION or
    ALL_SELECTION) and their times (int64).

    Mirrors MITokenGenerator::next/patch_time: each token adds 4*delta (MISC: bits [4..11], others: bit 4).
    A TIME_RESET scans ahead for the next TIMESTAMP (consumed, its own delta never added) and re-anchors the
    time on it; a second TIME_RESET met during that scan stops it and is dropped unseen. When the scan runs
    into a truncated last token, the official reader hands it a zero timestamp. TIMESTAMP and TIME_RESET
    are never delivered, so never selected. `ts_of(positions)` gives the (46-bit signed, as in the official
    token) timestamps of the TIMESTAMP tokens at those word positions (int64 array); only those few are read.

    One chunked pass: running sums of the deltas, read at the selected and the special tokens; then the
    few consumed tokens' deltas and the resync offsets are taken out of / added to those times. `state`: a
    `TimeState` to start from and to leave where the words end (a window of a blob).
    """
    st = state or TimeState()
    n = len(words)
    if not n:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    sels, t_sels, sps, resets, t_sps, d_sps = [], [], [], [], [], []
    classes = _word_classes(*selection)
    carry = st.carry
    for lo in range(0, n, SPLIT_CHUNK):  # SPLIT_CHUNK * 255 fits the int32 running sum
        w, m = words[lo : lo + SPLIT_CHUNK], mask[lo : lo + SPLIT_CHUNK]
        key = w & _U16_CLASS_KEY
        cls = np.empty(len(w), np.uint16)
        for a in range(0, len(w), GATHER_BLOCK):  # (take makes an intp copy of its indices first)
            classes.take(key[a : a + GATHER_BLOCK], out=cls[a : a + GATHER_BLOCK])
        cls *= m  # words inside a token are nothing
        sel = (cls & _PICKED).nonzero()[0]
        sp = (cls & _SPECIAL).nonzero()[0]
        delta = w >> _U16_DELTA_LO
        delta &= cls
        delta &= _U16_DELTA_BITS
        cs = delta.cumsum(dtype=np.int32)
        sels.append(sel + lo if lo else sel)
        t_sels.append(cs[sel] * _I64_DELTA_CYCLES + carry)
        sps.append(sp + lo if lo else sp)
        resets.append((cls.take(sp) & _RESET) != 0)
        t_sps.append(cs[sp] * _I64_DELTA_CYCLES + carry)
        d_sps.append(delta.take(sp).astype(np.int64) * DELTA_CYCLES)
        carry += int(cs[-1]) * DELTA_CYCLES
    st.carry = carry
    if len(sels) == 1:  # one chunk (every blob under 16 MB): no copies
        sel, t_sel, sp, is_r, t_sp, d_sp = sels[0], t_sels[0], sps[0], resets[0], t_sps[0], d_sps[0]
    else:
        sel, t_sel = np.concatenate(sels), np.concatenate(t_sels)
        sp, is_r, t_sp, d_sp = np.concatenate(sps), np.concatenate(resets), np.concatenate(t_sps), np.concatenate(d_sps)
    del sels, t_sels, sps, resets, t_sps, d_sps
    before = st.off - st.consumed  # the correction in force before the first special
    if not len(sp):
        if before:
            t_sel += before
        return sel, t_sel

    if len(sp) <= PY_SPECIALS:
        corr = _corrections_by_token(is_r, t_sp, d_sp, sp, ts_of, ended_partial, st)
    else:
        corr = _corrections(is_r, t_sp, d_sp, sp, ts_of, ended_partial, st)
    t_sel += corr[np.searchsorted(sp, sel)]
    return sel, t_sel


def _corrections(is_r, t_sp, d_sp, sp, ts_of, ended_partial, st: TimeState) -> np.ndarray:
    """`token_times`'s corrections: before the first special token (resets and TIMESTAMPs at word positions
    `sp`; `is_r`: which are resets; `t_sp`, `d_sp`: their running times and deltas) and after each, the
    offset in force less the consumed deltas so far; leaves `st` where the specials end."""
    before = st.off - st.consumed
    # A TIME_RESET that is not itself consumed consumes the next special token. In a run of consecutive
    # resets, the first consumes the second, the third the fourth... (usually every reset is followed by
    # its TIMESTAMP: each reset consumes)
    twice = is_r[1:] & is_r[:-1]
    if twice.any():
        k = np.arange(len(sp))
        run_start = np.ones(len(sp), bool)
        run_start[1:] = ~twice
        consumer = is_r & ((k - np.maximum.accumulate(np.where(run_start, k, 0))) % 2 == 0)
    else:
        consumer = is_r
    consumed = np.zeros(len(sp), bool)
    consumed[1:] = consumer[:-1]
    resync = consumer.copy()
    resync[:-1] &= ~is_r[1:]  # a reset that consumed another reset re-anchors nothing
    if consumer[-1] and not ended_partial:
        resync[-1] = False  # the scan ran off the end of a complete buffer
    # times without the consumed tokens' deltas
    gone = np.where(consumed, d_sp, 0)
    gone_so_far = gone.cumsum()
    gone_so_far += st.consumed  # consumed in the windows before
    t_sp -= gone_so_far - gone
    r = resync.nonzero()[0]
    ts = np.zeros(len(r), np.int64)  # the last one stays 0 if it ran into a truncated token
    has_ts = r + 1 < len(sp)
    ts[has_ts] = ts_of(sp[r[has_ts] + 1])
    offs, st.base = _resync_offsets(ts, t_sp[r], st.off, st.base)
    # one step function over the special tokens: minus the consumed deltas so far, plus the offset in force
    # (resyncs up to and including each special); the selected tokens after a special take its correction
    corr = np.empty(len(sp) + 1, np.int64)
    corr[0] = before
    np.subtract(offs[resync.cumsum()], gone_so_far, out=corr[1:])
    st.consumed, st.off = int(gone_so_far[-1]), int(offs[-1])
    return corr


def _corrections_by_token(is_r, t_sp, d_sp, sp, ts_of, ended_partial, st: TimeState) -> np.ndarray:
    """`_corrections` one special token at a time: a small blob has a few dozen, for which numpy's steps
    cost more (tests check both agree)."""
    resets, t_l, d_l = is_r.tolist(), t_sp.tolist(), d_sp.tolist()
    n = len(resets)
    consumed = [False] * n
    anchored: list[int] = []  # resets that re-anchor on the TIMESTAMP after them
    k = 0
    while k < n:  # a reset consumes the next special, and re-anchors on it if that is a TIMESTAMP
        if not resets[k]:
            k += 1
            continue
        if k + 1 < n:
            consumed[k + 1] = True
            if not resets[k + 1]:
                anchored.append(k)
        elif ended_partial:
            anchored.append(k)  # its scan ran into the cut token: timestamp 0
        k += 2
    stamp = dict.fromkeys(anchored, 0)
    if anchored:
        at = [r + 1 for r in anchored if r + 1 < n]
        stamp.update(zip(anchored, ts_of(sp[at]).tolist()))
    off, base, gone = st.off, st.base, st.consumed
    corr = [off - gone]
    for k in range(n):
        if consumed[k]:
            gone += d_l[k]
        elif k in stamp:  # as `_resync_offsets`
            ts, g0 = stamp[k], t_l[k] - gone
            if base == 0:
                g = g0 + off
                base = ts - g + 4
                if ts > base:
                    g = (ts - base) & ~3
                off = g - g0
            elif ts > base:
                off = ((ts - base) & ~3) - g0
        corr.append(off - gone)
    st.consumed, st.off, st.base = gone, off, base
    return np.array(corr, np.int64)


def _resync_offsets(ts: np.ndarray, t_reset: np.ndarray, off: int = 0, base: int = 0) -> tuple[np.ndarray, int]:
    """Offset in force after each resync (offs[0] = `off` before the first), from the timestamps and the
    running times at the resets, and the base after them. The first resync sets `base` (0 = not set yet, so
    computed again at the next); once it is set, a resync either re-anchors (`ts > base`: the offset no
    longer depends on earlier ones) or keeps the offset in force."""
    offs = np.zeros(len(ts) + 1, np.int64)
    offs[0] = off
    ts_l, g_l = ts.tolist(), t_reset.tolist()
    k = 0
    while k < len(ts_l) and base == 0:  # usually one step
        g = g_l[k] + off
        base = ts_l[k] - g + 4
        if ts_l[k] > base:
            g = (ts_l[k] - base) & ~3
        off = g - g_l[k]
        k += 1
        offs[k] = off
    if k < len(ts_l):
        t, g0 = ts[k:], t_reset[k:]
        anchored = t > base
        own = np.where(anchored, ((t - base) & ~3) - g0, 0)
        last = np.maximum.accumulate(np.where(anchored, np.arange(len(t)), -1))
        offs[k + 1 :] = np.where(last >= 0, own[np.maximum(last, 0)], off)
    return offs, base
