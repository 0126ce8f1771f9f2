"""gfx9 token splitting and time (sqtt-format.md §3.1, §3.2): the token starts of a buffer, their values,
and the time of the tokens the decoder looks at, all numpy (chunked)."""

from __future__ import annotations

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

# Token types the state machine looks at (MISC only for packet loss and context save).
MODEL_TYPES = np.zeros(16, bool)
MODEL_TYPES[
    [
        TOKEN_NAMES.index(n)
        for n in ("MISC", "WAVE_START", "WAVE_ALLOC", "WAVE_END", "INST", "INST_PC", "ISSUE", "REG", "REG_CS",
                  "REG_CS_PRIV", "SHADERDATA", "PERF")
    ]
] = True  # fmt: skip


def official_timestamp(value: int) -> int:
    """A TIMESTAMP token's 48-bit field as the official token keeps it: 46 bits, signed."""
    raw = value & ((1 << OFFICIAL_TIME_BITS) - 1)
    return raw - (1 << OFFICIAL_TIME_BITS) if raw >= 1 << (OFFICIAL_TIME_BITS - 1) else raw


SPLIT_BLOCK = 512  # words per block of the vectorized split
SPLIT_CHUNK = 1 << 20  # words (or tokens) per numpy pass: bounds the scratch arrays


def split_tokens(words: np.ndarray):
    """Token start positions (word index) and types; the index where a token ran past the end, or None.

    Lengths depend only on the type nibble, so finding the starts is a chain of hops. It is vectorized by
    blocks of SPLIT_BLOCK words (see _split_chunk); the result equals the hop-by-hop walk (tested).
    """
    n = len(words)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.uint8), None
    lens = TOKEN_WORDS.astype(np.uint8)[words & TYPE_MASK]
    idx_type = np.int32 if n < (1 << 31) - 8 else np.int64  # 4 bytes a token where it fits
    starts = []
    entry = 0
    for lo in range(0, n, SPLIT_CHUNK):
        hi = min(n, lo + SPLIT_CHUNK)
        if entry >= hi - lo:  # a long token crossed the whole (tiny) remainder
            entry -= hi - lo
            continue
        part, entry = _split_chunk(lens[lo:hi], entry)
        starts.append((part + lo).astype(idx_type))
    s = np.concatenate(starts) if starts else np.zeros(0, idx_type)
    truncated = None
    if len(s) and s[-1] + lens[s[-1]] > n:  # the last token runs past the end: the official reader drops it
        truncated = int(s[-1])
        s = s[:-1]
    return s, (words[s] & TYPE_MASK).astype(np.uint8), truncated


def _split_chunk(lens: np.ndarray, entry: int):
    """Token starts in one chunk entered at word `entry` (< 4), and the entry offset into the next chunk.

    Every block is walked from its first word, all blocks at once. The real chain enters a block at one of
    its first 4 words and almost always lands on that walk within a token or two; the few words before it
    merges are walked in Python.
    """
    n = len(lens)
    B = SPLIT_BLOCK
    nb = (n + B - 1) // B
    idx = np.arange(n, dtype=np.int64)
    hop = idx + lens.astype(np.int64)
    block_end = np.minimum((idx // B + 1) * B, n)
    out = hop >= block_end
    hop[out] = n + (hop[out] - block_end[out])  # leaving the block: park at sink n + exit offset
    hop = np.concatenate([hop, np.arange(n, n + 4, dtype=np.int64)])  # sinks stay put
    visit = np.zeros(n + 4, bool)
    pos = np.arange(nb, dtype=np.int64) * B
    while True:
        visit[pos] = True
        new = hop[pos]
        if np.array_equal(new, pos):
            break
        pos = new
    exits = (pos - n).tolist()  # exit offset of each block's own walk
    seen = visit
    merge = np.empty(nb, np.int64)  # from here on, the block's own walk is the chain
    extra = []  # chain words before it merges
    e = entry
    for k in range(nb):
        p = k * B + e
        end = min(p - e + B, n)
        while p < end and not seen[p]:
            extra.append(p)
            p += int(lens[p])
        merge[k] = p
        e = exits[k] if p < end else p - end
    on = seen[:n] & (idx >= np.repeat(merge, B)[:n])
    if extra:
        on[np.asarray(extra, np.int64)] = True
    return np.flatnonzero(on), e


def token_values(words: np.ndarray, starts: np.ndarray, types: np.ndarray) -> np.ndarray:
    """Full little-endian values (up to 64 bits, uint64) of the tokens at `starts`."""
    padded = np.concatenate([words, np.zeros(3, words.dtype)])
    nw = TOKEN_WORDS[types]
    val = padded[starts].astype(np.uint64)
    for k in (1, 2, 3):
        part = padded[starts + k].astype(np.uint64) << np.uint64(16 * k)
        val |= np.where(nw > k, part, np.uint64(0))
    return val


def model_tokens(f: np.ndarray) -> np.ndarray:
    """Tokens (by first word) the state machine looks at; MISC only for packet loss and context save."""
    ty = f & TYPE_MASK
    sub = MISC_KIND.column(f)
    return MODEL_TYPES[ty] & ((ty != MISC) | (sub == MiscKind.PACKET_LOST) | (sub == MiscKind.SAVE_CONTEXT))


def token_times(first: np.ndarray, ts_of, ended_partial: bool, select=model_tokens):
    """Indices of the selected tokens and their times (int64), from the tokens' first words.

    Mirrors MITokenGenerator::next/patch_time: each token adds 4*delta (MISC: bits [4..11], others: bit 4).
    A TIME_RESET scans ahead for the next TIMESTAMP (consumed, its own delta never added) and re-anchors the
    time on it; a second TIME_RESET met during that scan stops it and is dropped unseen. When the scan runs
    into a truncated last token, the official reader hands it a zero timestamp. TIMESTAMP and TIME_RESET
    are never delivered, so never selected. `ts_of(i)` gives the (46-bit signed, as in the official token)
    timestamp of TIMESTAMP token i; only those few are read.

    Two chunked passes (specials and selection, then running sums) keep memory to the selected tokens.
    """
    n = len(first)
    C = SPLIT_CHUNK
    resets, specials, sels = [], [], []
    for lo in range(0, n, C):
        f = first[lo : lo + C]
        ty = f & TYPE_MASK
        is_reset = (ty == MISC) & (MISC_KIND.column(f) == MiscKind.TIME_RESET)
        is_special = is_reset | (ty == TIMESTAMP)
        resets.append(np.flatnonzero(is_reset) + lo)
        specials.append(np.flatnonzero(is_special) + lo)
        sels.append(np.flatnonzero(select(f) & ~is_special) + lo)
    reset_at = set(np.concatenate(resets).tolist()) if n else set()
    sp = np.concatenate(specials).tolist() if n else []
    sel = np.concatenate(sels) if n else np.zeros(0, np.int64)

    resyncs = []  # (reset index, timestamp value)
    silenced = []  # tokens whose delta is never added
    k = 0
    while k < len(sp):
        r = sp[k]
        k += 1
        if r not in reset_at:
            continue  # a TIMESTAMP in normal flow: only its delta counts
        if k < len(sp):
            s = sp[k]
            k += 1
            silenced.append(s)  # consumed by the scan (TIMESTAMP) or dropped unseen (TIME_RESET)
            if s not in reset_at:
                resyncs.append((r, ts_of(s)))
        elif ended_partial:
            resyncs.append((r, 0))
    silenced_at = np.asarray(silenced, np.int64)
    at_reset = np.asarray([r for r, _ in resyncs], np.int64)

    # running time (before resync offsets) at the selected tokens and at the resync resets
    t_sel = np.empty(len(sel), np.int64)
    t_reset = np.empty(len(at_reset), np.int64)
    carry = 0
    for lo in range(0, n, C):
        f = first[lo : lo + C]
        inc = ((f >> DELTA_LO) & DELTA_MASK.astype(f.dtype)[f & TYPE_MASK]).astype(np.int64)
        a, b = np.searchsorted(silenced_at, [lo, lo + len(f)])
        inc[silenced_at[a:b] - lo] = 0
        cs = np.cumsum(inc, out=inc)
        cs *= DELTA_CYCLES
        cs += carry
        carry = int(cs[-1])
        a, b = np.searchsorted(sel, [lo, lo + len(f)])
        t_sel[a:b] = cs[sel[a:b] - lo]
        a, b = np.searchsorted(at_reset, [lo, lo + len(f)])
        t_reset[a:b] = cs[at_reset[a:b] - lo]

    offs = [0]  # offset in force after each resync, from the running times
    off, base = 0, 0
    for (_r, t), g0 in zip(resyncs, t_reset.tolist()):
        g = g0 + off
        if base == 0:
            base = t - g + 4
        if t > base:
            g = (t - base) & ~3
        off = g - g0
        offs.append(off)
    if resyncs:
        t_sel += np.asarray(offs, np.int64)[np.searchsorted(at_reset, sel, side="left")]
    return sel, t_sel
