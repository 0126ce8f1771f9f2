"""RDNA token splitting: one SE stream -> numpy arrays of tokens with their times (sqtt-format.md §2.3-2.5).

The token at each nibble is identified from its low 8 bits through 256-entry lookups built from the
packet table (`Lookup`); the chain of token starts is followed in parallel (`chain_marks`), and the
per-token values the decoders need (time delta, the 64-bit word at the token) are extracted vectorised.
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np

from attdec.decoders.packets import Field
from attdec.decoders.rdna.packets import TOKEN_NAMES, RdnaFormat, T

WORDS_AT_ONCE = 65536  # Tokens.words: up to this many tokens, every word is made on the first read
NIBBLE_PAD = 16  # nibble_bytes past the blob: a field read 8 nibbles into a 64-bit token at its end
LINE_BYTES = 32  # real SE buffers are whole 32-byte lines (all 250 RDNA blobs of the captures)
# AMD's gfx10/11 reader (0.1.6) reads the tokens that start this many nibbles or fewer before the end of a
# blob with its end-of-buffer loop, which empties its WAVE_READY queue on entry (`ready_reorder`)
END_READS = 32
# Nibbles per chunk of the parallel chain walk: a lock-step costs a fixed overhead plus a little per chunk,
# and a chunk's tokens set the number of lock-steps, so the best size grows as the root of the blob size
# (about 180 nibbles for a 40 kB blob, 1250 for 2 MB).
CHAIN_CHUNK_SCALE = 0.4
CHAIN_CHUNK_MIN, CHAIN_CHUNK_MAX = 64, 2048
UNASSIGNED_NIBBLES = 2  # the length of a token with an unassigned id (`Lookup`)
CHAIN_WARMUP = 48  # nibbles each chunk's chain is walked before its chunk
# below this many nibbles a Python loop over the tokens (runs of NOPs skipped) beats the lock-steps' fixed costs
SCALAR_WALK_NIBBLES = 32_000
_NOT_ZERO = re.compile(b"[^\x00]")

# Tokens the wave model looks at (the decoders keep only these).
MODEL_TOKENS = (
    "REG", "IMM_ONE", "INST", "VALU_INST", "IMMEDIATE", "WAVE_READY", "WAVE_START", "WAVE_START_EXT",
    "WAVE_END", "HEADER", "NEW_PC", "MISC", "SHADER_DATA", "SHADER_DATA_SHORT", "REG_INIT", "EVENT",
)  # fmt: skip


class Lookup:
    """The packet table as 256-entry arrays indexed by a token's low 8 bits."""

    def __init__(self, fmt: RdnaFormat, time_extra: int = 0):
        table = fmt.table
        self.fmt = fmt
        self.type = np.full(256, T["UNKNOWN"], np.uint8)
        # unassigned ids: AMD's decoder 0.1.6 reads them as 8-bit tokens without a time delta, so its walk
        # resumes 2 nibbles on (reported as lost sync)
        self.nibbles = np.full(256, UNASSIGNED_NIBBLES, np.int64)
        self.delta8 = np.zeros(256, np.int64)  # the time delta, where the field lies in the low 8 bits
        self.far = np.zeros(256, bool)  # the delta lies further (read from the token's word), or TIMESTAMP
        self.delta_lo = np.zeros(256, np.uint64)
        self.delta_mask = np.zeros(256, np.uint64)
        # token types whose word the decoders read from further in: (type, nibbles from the token start)
        self.windowed: list[tuple[int, int]] = []
        for low in range(256):
            p = table.at(low)
            if p is None:
                continue
            self.type[low] = T[p.name]
            self.nibbles[low] = p.bits // 4
            if p.window and (T[p.name], p.window // 4) not in self.windowed:
                self.windowed.append((T[p.name], p.window // 4))
            d = p.delta
            if p.name == "TIMESTAMP":
                self.far[low] = True
            elif d is not None and d.lo + d.width > 8:
                self.far[low] = True
                self.delta_lo[low], self.delta_mask[low] = d.lo, d.mask
            elif d is not None:
                self.delta8[low] = d.get(low) + p.delta_bias + (time_extra if p.delta_bias else 0)
        # the chain walk marks a token start with its low 8 bits, and only a NOP's low nibble is 0
        if (self.type[::16] != T["NOP"]).any() or (self.nibbles[::16] != 1).any():
            raise ValueError(f"{fmt.name}: a token other than a 1-nibble NOP has low nibble 0 (the walk needs it)")
        # The chain walk's step; 0 = gfx12 WAVE_START_EXT, whose length depends on what follows. A NOP's low
        # 8 bits hold the next token's low nibble: where every id with that low nibble has one length, the
        # walk steps over both at once (a quarter of a big blob's steps are NOPs) and the NOP's mark stands
        # for the token after it (`token_starts`); two NOPs are one step.
        length = self.nibbles.copy()
        if fmt.ext_bytes:
            length[self.type == T["WAVE_START_EXT"]] = 0
        by_low = length.reshape(16, 16)  # [high nibble, low nibble]
        known = (by_low == by_low[0]).all(axis=0) & (by_low[0] > 0)
        self.walk = length.copy()
        self.walk[::16] = np.where(known, 1 + by_low[0], 1)


@cache
def lookup(fmt: RdnaFormat, time_extra: int = 0) -> Lookup:
    """The packet table's lookup; `time_extra`: cycles a TIME token adds beyond its field + 4
    (`compat.Rules.rdna_time_token_extra`)."""
    return Lookup(fmt, time_extra)


class Tokens:
    """The tokens of one blob the caller asked for, as parallel numpy arrays in stream order.

    The 64-bit word the decoders read from each token (from its start, or from its `window`) is made on
    first use of `word`: the vectorised decode reads the fields of its many instruction tokens from the
    8 bits at their nibbles instead (`field`), and the words of the few others (`words`)."""

    __slots__ = (
        "_word", "at_nibble", "buf", "cut_at", "end_reads", "lost", "lost_at", "nibbles_used", "pos", "problems",
        "realtime", "time", "type", "windowed",
    )  # fmt: skip

    pos: np.ndarray  # nibble offset of each token
    type: np.ndarray  # index into TOKEN_NAMES
    time: np.ndarray  # time after the token's own delta
    lost: np.ndarray  # the hardware lost packets just before this token (gfx11/12 TIMESTAMP pl flag)
    lost_at: np.ndarray  # byte offset of every TIMESTAMP that says packets were lost
    realtime: np.ndarray  # (shader clock, reference clock) samples, shape (n, 2)
    problems: list[str]
    nibbles_used: int
    cut_at: int | None  # byte offset of the token the blob's end cuts, when its size is not whole lines
    # where the words come from: the padded blob, the 8 bits from every nibble on (`nibble_bytes`), and
    # the token types whose word starts further in ((type, nibbles) pairs, `Lookup.windowed`)
    buf: np.ndarray | None
    at_nibble: np.ndarray | None
    windowed: list[tuple[int, int]]
    # gfx10/11: the tokens AMD's reader reads in its end-of-buffer loop, every kind its WAVE_READY queue
    # takes, not only the kept ones, as (pos, type, time) arrays (`end_reads`); None: not known
    end_reads: tuple[np.ndarray, np.ndarray, np.ndarray] | None

    def __init__(self) -> None:
        self._word: np.ndarray | None = None
        self.buf = self.at_nibble = None
        self.windowed = []
        self.end_reads = None

    @property
    def word(self) -> np.ndarray:
        """Every token's 64-bit word (made on first use)."""
        if self._word is None:
            self._word = self.words()
        return self._word

    @word.setter
    def word(self, value: np.ndarray) -> None:
        self._word = value

    def words(self, sel: np.ndarray | None = None) -> np.ndarray:
        """The 64-bit words of the tokens at indices `sel` (all: None); of a blob of at most WORDS_AT_ONCE
        tokens, all are made at once (cheaper than a read per selection)."""
        if self._word is None and sel is not None and len(self.pos) <= WORDS_AT_ONCE:
            self._word = self.words()
        if self._word is not None:
            return self._word if sel is None else self._word.take(sel)
        assert self.buf is not None
        pos, typ = (self.pos, self.type) if sel is None else (self.pos.take(sel), self.type.take(sel))
        w = windows(self.buf, pos)
        for t, nibbles in self.windowed:  # gfx12 NEW_PC: read 8 bits in, past its id, as the official reader does
            at = (typ == t).nonzero()[0]
            if len(at):
                w[at] = windows(self.buf, pos.take(at) + nibbles)
        return w

    def field(self, f: Field, sel: np.ndarray | None = None) -> np.ndarray:
        """Field `f` (from the token start: not of a type with a `window`) of the tokens at indices `sel`
        (all: None): one byte read (uint8) where it lies within the 8 bits from one nibble, else from their
        words (uint64)."""
        nib, shift = divmod(f.lo, 4)
        if self.at_nibble is None or shift + f.width > 8:
            return f.column(self.words(sel))
        b = self.at_nibble[nib:].take(self.pos if sel is None else self.pos.take(sel))
        if shift:
            b >>= np.uint8(shift)
        return b & np.uint8(f.mask)


def truncation_problem(n_bytes: int, cut_at: int | None, whole_window: bool) -> str:
    """The problem of a blob of `n_bytes` that is not a whole number of trace lines (`split`; the windowed
    decode says it of the whole blob)."""
    where = "no token cut"
    if cut_at is not None:
        where = f"token at byte {cut_at} cut, " + ("left out" if whole_window else "read with its missing bits 0")
    return (
        f"truncated: {n_bytes} bytes is not a whole number of {LINE_BYTES}-byte trace lines "
        f"({where}); decoded what comes before"
    )


def lost_sync_problem(count: int, first_at: int) -> str:
    return f"lost sync: {count} unknown token ids, first at byte {first_at}"


def nibble_bytes(buf: np.ndarray, nn: int) -> np.ndarray:
    """The 8 bits from every nibble of the `padded` blob on (uint8; NIBBLE_PAD more past its `nn` nibbles,
    so that a field is read past a token at the end), so that a step of the chain walk, or a field that
    fits in 8 bits, is one read: per byte k, one 16-bit little-endian word of byte k (the even nibble's)
    and bits 4..11 of bytes k, k+1 (the odd nibble's)."""
    nb = (nn + NIBBLE_PAD) // 2
    at = np.ndarray((nb,), "<u2", buf, 0, (1,)) >> np.uint16(4)
    at <<= np.uint16(8)
    at |= buf[:nb]
    return at.astype("<u2", copy=False).view(np.uint8)


def _ext_end(low, nn: int, p: int) -> int:
    """Where the gfx12 WAVE_START_EXT at nibble p ends: from its tenth nibble on, while bit 0 of the next
    non-NOP nibble is 1, that byte is a VGPR/LDS extension byte and is skipped (NOPs in between do not end
    the token). `low`: the blob's `nibble_bytes` (bytes in the one-token-at-a-time walk, where it is read
    most), one nibble's low 8 bits per index."""
    q = p + 10
    while q < nn:
        n = low[q] & 15
        if n & 1:
            q += 2
        elif n:
            break
        else:
            q += 1
    return min(q, nn)


def chain_marks(low8: np.ndarray, nn: int, walk: np.ndarray) -> np.ndarray:
    """Per nibble (uint8): the low 8 bits at every position the walk visits, else 0 (`token_starts` reads
    them). Two NOPs read as not visited: at worst a chunk is re-walked for them.

    Walking a big blob one token at a time in Python would be the splitter's main cost, so the walk runs
    in parallel (a blob of at most SCALAR_WALK_NIBBLES is walked one token at a time): every chunk's chain
    is followed in numpy lock-step, marking the token starts it visits (each chain starts CHAIN_WARMUP
    nibbles before its chunk and marks nothing until it enters). A chain started anywhere falls into step
    with the true one within a few tokens (the format is self-synchronising), and from a shared position
    on two chains are identical. So if the true chain enters chunk k at a marked position, chunk k's marks
    from there on are right and only the marks before it are cleared; the rare chunk whose own chain
    synchronises later than that is re-walked one token at a time from the true entry. `low8` is the
    blob's `nibble_bytes`; `walk` gives the step in nibbles by low 8 bits (`Lookup.walk`), 0 for a
    variable-length token (stepped by `_ext_end`).
    """
    if 0 < nn <= SCALAR_WALK_NIBBLES:  # a few thousand tokens: one at a time is quicker than the lock-steps
        # every step of 0 leaves the hot loop: two zero nibbles (a run of NOPs, half the tokens of a small
        # blob, skipped at once), a variable-length token, the zeros past the end; the marks go straight
        # into a bytearray
        low, step_of = low8[:nn].tobytes() + bytes(int(walk.max())), walk.tolist()
        step_of[0] = 0
        marks = bytearray(len(low))
        p = 0
        while True:
            v = low[p]
            step = step_of[v]
            if step:
                marks[p] = v
                p += step
            elif p >= nn:
                break
            elif not v:
                m = _NOT_ZERO.search(low, p, nn)
                p = m.start() if m else nn
            else:
                marks[p] = v
                p = _ext_end(low, nn, p)
        return np.frombuffer(marks, np.uint8)[:nn]
    mark = np.zeros(nn + 1, np.uint8)
    if nn == 0:
        return mark[:nn]
    chunk = int(min(CHAIN_CHUNK_MAX, max(CHAIN_CHUNK_MIN, (nn * CHAIN_CHUNK_SCALE) ** 0.5)))
    nch = -(-nn // chunk)
    starts = np.arange(nch, dtype=np.int64) * chunk
    ends = np.minimum(starts + chunk, nn)
    step_of = walk.tolist()
    # the lock-steps' step: a variable-length token (0 in `walk`) sends its chain past every stop, so that
    # the stop check every step makes anyway finds it; it is then stepped by `_ext_end`
    past = 1 << 62
    jump = np.where(walk == 0, past, walk)

    def follow(c: np.ndarray, stop: np.ndarray, marking: bool) -> np.ndarray:
        """Walk every chain in lock-step until it reaches its `stop`; returns where each got to."""
        out = np.empty_like(c)
        # the walking chains' positions, stops and indices in one array: one compress drops the done chains
        state = np.stack((c, stop, np.arange(len(c))))
        c, stop = state[0], state[1]
        while True:
            done = c >= stop
            if np.count_nonzero(done):  # (cheaper than .any() on the short arrays of a small blob)
                gone = state.compress(done, axis=1)
                if gone[0].max() >= past:
                    for j in (c >= past).nonzero()[0].tolist():
                        c[j] = _ext_end(low8, nn, int(c[j] - past))
                    continue
                out[gone[2]] = gone[0]
                state = state.compress(~done, axis=1)
                c, stop = state[0], state[1]
                if not len(c):
                    return out
            v = low8.take(c)
            if marking:
                mark[c] = v
            c += jump.take(v)

    # warm-up: each chain starts CHAIN_WARMUP nibbles before its chunk, unmarked, so that it is usually in
    # step with the true chain by the time it enters the chunk
    exits = follow(follow(np.maximum(starts - CHAIN_WARMUP, 0), starts, False), ends, True)
    # splice: the true chain enters chunk k where it leaves chunk k-1
    entry = np.empty(nch, np.int64)
    entry[0] = 0
    entry[1:] = exits[:-1]
    ok = entry < ends
    ok[ok] = mark[entry[ok]] != 0
    bad = (~ok).nonzero()[0].tolist()  # chunks to re-walk, in order (a re-walk may add the next one)
    b, k = 0, -1
    while True:
        if k >= 0 and k + 1 < nch and not ok[k + 1]:
            k += 1
        else:
            while b < len(bad) and (bad[b] <= k or ok[bad[b]]):
                b += 1
            if b == len(bad):
                break
            k = bad[b]
        x, end = int(entry[k]), int(ends[k])
        walked = []
        while x < end and not mark[x]:
            v = int(low8[x])
            if not v:  # a run of zero bytes: NOPs, all unmarked (to its last zero nibble)
                nz = low8[x:end].nonzero()[0]
                x = x + int(nz[0]) if len(nz) else end
                continue
            walked.append((x, v))
            x = x + step if (step := step_of[v]) else _ext_end(low8, nn, x)
        meet = min(x, end)
        mark[int(starts[k]) : meet] = 0
        for q, v in walked:
            mark[q] = v
        entry[k] = starts[k]  # nothing more to clear
        new_exit = x if x >= end else int(exits[k])
        ok[k] = True
        if k + 1 < nch and new_exit != entry[k + 1]:
            exits[k] = new_exit
            entry[k + 1] = new_exit
            ok[k + 1] = bool(new_exit < ends[k + 1] and mark[new_exit])
    # each chunk's marks before the true chain's entry are its own chain's, not the stream's
    late = np.maximum(entry - starts, 0)
    n_late = int(late.sum())
    if n_late:
        first = np.cumsum(late) - late
        mark[np.repeat(starts - first, late) + np.arange(n_late)] = 0
    return mark[:nn]


def token_starts(mark: np.ndarray) -> np.ndarray:
    """Per nibble (bool, in place of `chain_marks`' marks): a token but a NOP starts there. A mark with a
    nonzero low nibble is a token; one with low nibble 0 is a NOP, and its high nibble, the next token's
    low nibble, is nonzero: a token starts at the next nibble (the walk may have stepped over it)."""
    after_nop = mark > 15
    np.bitwise_and(mark, 15, out=mark)
    start = np.not_equal(mark, 0, out=mark.view(bool))
    np.greater(after_nop, start, out=after_nop)  # (bool: high nibble and not low)
    start[1:] |= after_nop[:-1]
    return start


def windows(buf: np.ndarray, nib_pos: np.ndarray) -> np.ndarray:
    """64-bit little-endian word starting at each nibble position (zero past the end), from the aligned
    64-bit words of `padded` around it (a gather through an unaligned view is several times slower)."""
    words = buf.view("<u8")
    q = nib_pos >> 4
    s = nib_pos & 15
    s <<= 2
    s = s.view(np.uint64)  # bit offset in words[q]
    w = words.take(q)
    w >>= s
    q += 1
    hi = words.take(q)
    hi <<= np.uint64(1)  # two shifts: a shift by 64 is not 0 in numpy
    s ^= np.uint64(63)  # 63 - s
    hi <<= s
    w |= hi
    return w


def padded(data: bytes) -> np.ndarray:
    """The blob as uint8 with zero bytes after it, a whole number of 64-bit words long, so that every 64-bit
    word read from a token fits."""
    buf = np.zeros((len(data) + 31) // 8 * 8, np.uint8)
    buf[: len(data)] = np.frombuffer(data, np.uint8)
    return buf


WANTED, FAR, UNKNOWN, TYPE_SHIFT = 1, 2, 4, 3  # `_classes` bits (the delta from bit 8)
assert len(TOKEN_NAMES) <= 1 << (8 - TYPE_SHIFT)


@cache
def _classes(fmt: RdnaFormat, keep: tuple[str, ...] | None, time_extra: int = 0) -> np.ndarray:
    """By low 8 bits, what `split` asks of a token: WANTED (of a type in `keep`; None: all), FAR (its delta
    is read from its word), UNKNOWN (an unassigned id), its type (from bit TYPE_SHIFT), and from bit 8 its
    time delta where that lies in the low 8 bits: one lookup (int64) for the class byte and the delta."""
    lk = lookup(fmt, time_extra)
    want = np.ones(len(TOKEN_NAMES), bool)
    if keep is not None:
        want[:] = False
        want[[T[k] for k in keep]] = True
    cls = want.take(lk.type) * WANTED + lk.far * FAR + (lk.type == T["UNKNOWN"]) * UNKNOWN
    return cls + (lk.type.astype(np.int64) << TYPE_SHIFT) + (lk.delta8 << 8)


def split(
    data: bytes,
    fmt: RdnaFormat,
    keep: tuple[str, ...] | None = MODEL_TOKENS,
    whole_window: bool = False,
    time_extra: int = 0,
    end_stop: bool = False,
) -> Tokens:
    """Split one SE stream into tokens, give every token its time (sqtt-format.md §2), and return the
    tokens of the types in `keep` (None: every token but NOPs, unknown ids included) in stream order.

    End of the blob: a token cut by it is decoded with its missing bits 0, as if zero bytes followed the
    blob (AMD's decoder 0.1.6, every family); with `whole_window` (the newest gfx12 reader,
    `compat.Rules.gfx12_end_window`) only tokens whose whole 64-bit word lies in the blob are decoded.
    `time_extra`: cycles each TIME token adds beyond its field + 4 (`compat.Rules.rdna_time_token_extra`).
    `end_stop` (gfx10/11, `compat.Rules.rdna_end_zero_window_stops`): no token is read after a NOP that
    starts AMD's end-of-buffer reads (`Tokens.end_reads`) and is followed by 15 more zero nibbles: the
    reader stops when its reorder queue is next empty and the 16 nibbles it last looked at are all zero."""
    n = len(data)
    nbits = 8 * n
    buf = padded(data)
    nn = 2 * n
    lk = lookup(fmt, time_extra)
    ts_packet = fmt.table["TIMESTAMP"]
    at_nibble = nibble_bytes(buf, nn)
    mark = chain_marks(at_nibble, nn, lk.walk)
    pos = token_starts(mark).nonzero()[0]  # (nonzero on a bool is quick)
    del mark
    # (take: several times faster than [] for a gather). `time` holds the class and delta, then the deltas,
    # then their sum: each fresh array of a big blob costs its pages (~2 ms per 10 MB), so one array is
    # reused (a take that clips reads its indices in place)
    low8 = at_nibble.take(pos)
    end_from = len(pos)
    if fmt.ready_early:
        end_from, stop = _end_loop_start(pos, lk.nibbles.take(low8), nn)
        if stop and end_stop:
            pos, low8 = pos[:end_from], low8[:end_from]
    time = low8.astype(np.intp)
    _classes(fmt, keep, time_extra).take(time, out=time, mode="clip")
    cls = time.astype(np.uint8)
    time >>= 8
    problems, cut_at = [], None
    # end of buffer: only the last few tokens can be cut by it
    t0 = int(np.searchsorted(pos, max(nn - 24, 0)))
    tp = pos[t0:]
    cut = (tp + lk.nibbles.take(low8[t0:])) * 4 > nbits
    if n % LINE_BYTES:
        # The trace unit writes whole 32-byte lines and its last line ends inside a token; a size that is
        # not a whole number of lines means the file was cut.
        if cut.any():
            cut_at = int(tp[cut.nonzero()[0][0]]) // 2
        problems.append(truncation_problem(n, cut_at, whole_window))
    if (cls & UNKNOWN).any():
        unk = (cls & UNKNOWN).nonzero()[0]
        problems.append(lost_sync_problem(len(unk), int(pos[unk[0]]) // 2))
    if whole_window:  # the tokens whose word does not fit are the last few: the others are a prefix
        kept = t0 + int(np.count_nonzero(tp * 4 + 64 <= nbits))
        pos, cls, low8, time = pos[:kept], cls[:kept], low8[:kept], time[:kept]
    # time deltas: from the low 8 bits where the field lies there (`_classes`), else from the token's word
    far = ((cls & FAR) != 0).nonzero()[0]
    wf = windows(buf, pos.take(far))
    lf = low8.take(far)
    time[far] = ((wf >> lk.delta_lo.take(lf)) & lk.delta_mask.take(lf)).astype(np.int64)
    tsel = lk.type.take(lf) == T["TIMESTAMP"]
    ts, tw = far[tsel], wf[tsel]
    val = ts_packet["value"].column(tw).astype(np.int64)
    if "rt" in ts_packet:  # gfx11/12: rt = realtime sample, pl = packets lost; otherwise a time delta
        rt = ts_packet["rt"].column(tw).astype(bool)
        pl = ts_packet["pl"].column(tw).astype(bool)
        is_delta, is_sample, lost_ts = ~rt, rt & ~pl, ts[pl & ~rt]
    else:  # gfx10: kind 1 = time delta, kind 2 = realtime sample
        kind = ts_packet["kind"].column(tw)
        is_delta, is_sample, lost_ts = kind == 1, kind == 2, ts[:0]
    time[ts[is_delta]] = val[is_delta]
    np.cumsum(time, out=time)
    realtime = np.empty((np.count_nonzero(is_sample), 2), np.int64)  # (np.stack: ~10 us more per blob)
    realtime[:, 0] = time.take(ts.compress(is_sample))
    realtime[:, 1] = val.compress(is_sample)
    cand = (cls & WANTED).view(bool).nonzero()[0]  # (0 or 1: a valid bool)
    tk = Tokens()
    tk.pos = pos.take(cand)
    tk.type = cls.take(cand)
    tk.type >>= np.uint8(TYPE_SHIFT)
    tk.time = time.take(cand)
    tk.buf, tk.at_nibble, tk.windowed = buf, at_nibble, lk.windowed
    tk.lost = np.zeros(len(cand), bool)
    tk.lost_at = pos[lost_ts] // 2
    if len(lost_ts):
        # the packet-lost flag is consumed by the next delivered token
        nxt_sel = np.searchsorted(cand, lost_ts, side="right")
        tk.lost[nxt_sel[nxt_sel < len(cand)]] = True
    tk.realtime, tk.problems, tk.nibbles_used = realtime, problems, int(pos[-1]) if len(pos) else 0
    tk.cut_at = cut_at
    if fmt.ready_early:
        types = lk.type.take(low8[end_from:])
        queued = (types != T["TIME"]) & (types != T["TIMESTAMP"])
        tk.end_reads = pos[end_from:][queued], types[queued], time[end_from:][queued]
    return tk


def _end_loop_start(pos: np.ndarray, nibbles: np.ndarray, nn: int) -> tuple[int, bool]:
    """Where AMD's gfx10/11 reader starts its end-of-buffer loop: the index of the first token it reads
    there (the tokens after the first item, a token or a NOP nibble, that starts END_READS nibbles or fewer
    before the end), and whether that item is a NOP followed by 15 more zero nibbles (`split`'s
    `end_stop`). `pos`: every token's start but NOPs'; `nibbles`: their lengths; `nn`: the blob's nibbles."""
    p = max(nn - END_READS, 0)
    i = int(np.searchsorted(pos, p))
    nop = max(int(pos[i - 1] + nibbles[i - 1]) if i else 0, p)  # the first NOP nibble at or after p
    if i < len(pos) and nop >= pos[i]:
        return i + 1, False  # no NOP nibble between p and token i: token i is that first item
    return i, nop < nn and (int(pos[i]) if i < len(pos) else nn) >= nop + 16


def ready_reorder(tk: Tokens, end_reads: bool = True) -> None:
    """gfx10/11: WAVE_READY is stamped one cycle early and moved ahead of same-cycle tokens (§2.5 item 6).

    With `end_reads` (`compat.Rules.ready_queue_end_reads`), the tokens of `Tokens.end_reads` go through
    AMD's queue as its end-of-buffer loop runs it: the loop starts with the queue emptied, so a WAVE_READY
    read there does not move ahead of same-cycle tokens read before it."""
    r = tk.type == T["WAVE_READY"]
    if not r.any():
        return
    tk.time = tk.time.copy()
    tk.time[r] -= 1
    # only same-cycle neighbours move: a stable sort on time does exactly that for a monotonic stream
    order = np.argsort(tk.time, kind="stable")
    tail = tk.end_reads
    if end_reads and tail is not None and len(tail[0]):
        k = int(np.searchsorted(tk.pos, tail[0][0]))
        if r[k:].any():
            released = np.array(_end_loop_order(*tail), np.int64)  # every kind: keep the tokens of `tk`
            at = np.searchsorted(tk.pos[k:], released).clip(max=len(tk.pos) - k - 1)
            kept = k + at[tk.pos[k:].take(at) == released]
            order = np.concatenate([np.argsort(tk.time[:k], kind="stable"), kept])
    for name in ("type", "time", "pos", "lost"):
        setattr(tk, name, getattr(tk, name)[order])
    if tk._word is not None:
        tk.word = tk.word[order]


def _end_loop_order(pos: np.ndarray, types: np.ndarray, time: np.ndarray) -> list[int]:
    """The starts of the end-of-buffer loop's tokens in the order AMD's queue releases them: a token with a
    time below the queue's last goes to its front (a WAVE_READY's time is one cycle early), and once the
    front's time is below the last's, the whole queue is released (the loop returns the front; each later
    call finds the queue not empty and returns its front at once)."""
    ready = T["WAVE_READY"]
    out: list[int] = []
    q: list[tuple[int, int]] = []  # (time, pos)
    for p, ty, t in zip(pos.tolist(), types.tolist(), time.tolist()):
        if ty == ready:
            t -= 1
        if q and t < q[-1][0]:
            q.insert(0, (t, p))
        else:
            q.append((t, p))
        if q[0][0] < q[-1][0]:
            out += [x[1] for x in q]
            q.clear()
    return out + [x[1] for x in q]


__all__ = ["LINE_BYTES", "MODEL_TOKENS", "TOKEN_NAMES", "Lookup", "Tokens", "chain_marks", "lookup", "split"]
