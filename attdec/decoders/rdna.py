"""RDNA3 / RDNA4 (gfx11, gfx12) raw SQTT decoder: token tables, splitter, wave and timing model.

Layering (docs/sqtt-rdna.md has the facts and where they come from):

1. `split()`: the token stream as numpy arrays. The token at each nibble is identified from its low 8
   bits through a 256-entry table built from per-family encodings (data below); the chain of token
   starts is followed with a precomputed "next token" array, and every per-token field (delta, time,
   wave slot, opcode) is extracted vectorised.
2. `decode()`: one pass over the tokens that matter (wave lifecycle, instruction tokens, registers),
   running the official per-wave timing model (sqtt-format.md §7.1). Per-instruction data goes into
   compact arrays; waves are stitched to PCs (attdec.decoders.stitch) when their slot is reused or at
   the end of the blob, so state stays bounded by the number of live wave slots.
"""

from __future__ import annotations

from array import array

import numpy as np

from attdec.decoders.common import BlobResult, CodeMap
from attdec.model import INST_DTYPE, OCCUPANCY_DTYPE, Category, Wave
from attdec.model.target import target

# ----------------------------------------------------------------------------------------------------
# Token types and per-family encodings
# ----------------------------------------------------------------------------------------------------
TOKEN_NAMES = (
    "NOP",
    "TIME",
    "REG",
    "IMM_ONE",
    "ALU_EXEC",
    "VMEM_EXEC",
    "INST",
    "VALU_INST",
    "IMMEDIATE",
    "WAVE_READY",
    "WAVE_START",
    "WAVE_START_EXT",
    "WAVE_ALLOC",
    "WAVE_END",
    "SHADER_DATA",
    "SHADER_DATA_SHORT",
    "EXEC_POPCOUNT1",
    "EXEC_POPCOUNT3",
    "TIMESTAMP",
    "HEADER",
    "NEW_PC",
    "UTIL_COUNTER",
    "MISC",
    "REG_INIT",
    "EVENT",
    "EVENT_SYNC",
    "UNKNOWN",
)
T = {n: i for i, n in enumerate(TOKEN_NAMES)}

# (type, id pattern, pattern bits, token bits, delta first bit, delta bits). Later rows overwrite
# earlier ones in the lookup table, as in the official table builder.
_GFX11 = [
    ("TIME", 0x8, 4, 8, 4, 4),
    ("REG", 0x9, 4, 64, 4, 3),
    ("IMM_ONE", 0xD, 4, 12, 4, 3),
    ("ALU_EXEC", 0xE, 4, 8, 4, 2),
    ("VMEM_EXEC", 0xF, 4, 8, 4, 2),
    ("INST", 0b010, 3, 20, 4, 3),
    ("VALU_INST", 0b011, 3, 12, 3, 3),
    ("IMMEDIATE", 0x04, 5, 24, 5, 3),
    ("WAVE_READY", 0x14, 5, 24, 5, 3),
    ("WAVE_START", 0x0C, 5, 32, 5, 2),
    ("WAVE_START_EXT", 0x1C, 5, 48, 5, 2),
    ("WAVE_ALLOC", 0x05, 5, 20, 5, 3),
    ("WAVE_END", 0x15, 5, 20, 5, 3),
    ("SHADER_DATA", 0x06, 5, 52, 5, 3),
    ("SHADER_DATA_SHORT", 0x16, 5, 28, 5, 3),
    ("TIMESTAMP", 0x01, 7, 48, 0, 0),
    ("HEADER", 0x11, 7, 64, 0, 0),
    ("NEW_PC", 0x21, 7, 64, 8, 3),
    ("UTIL_COUNTER", 0x31, 7, 48, 7, 2),
    ("MISC", 0x51, 7, 24, 7, 9),
    ("REG_INIT", 0x71, 7, 64, 7, 3),
    ("EVENT", 0x61, 8, 24, 8, 3),
    ("EVENT_SYNC", 0xE1, 8, 32, 8, 3),
    ("NOP", 0x0, 4, 4, 0, 0),
]
_GFX12 = [
    *_GFX11,
    ("INST", 2, 3, 20, 3, 3),
    ("SHADER_DATA", 6, 7, 56, 7, 3),
    ("SHADER_DATA_SHORT", 70, 7, 32, 7, 3),
    ("EXEC_POPCOUNT1", 102, 7, 24, 7, 3),
    ("EXEC_POPCOUNT3", 22, 6, 48, 6, 3),
    ("NEW_PC", 33, 7, 72, 8, 3),
    ("WAVE_START_EXT", 28, 5, 40, 5, 2),
    ("WAVE_ALLOC", 5, 5, 24, 5, 3),
    ("TIMESTAMP", 1, 7, 64, 0, 0),
]


class TokenTable:
    """256-entry lookup: low 8 bits of a token -> type, length in nibbles, delta field."""

    def __init__(self, encodings):
        self.type = np.full(256, T["UNKNOWN"], np.uint8)
        self.nibbles = np.ones(256, np.int64)  # unknown ids: skip one nibble (reported as desync)
        self.dshift = np.zeros(len(TOKEN_NAMES), np.uint64)
        self.dmask = np.zeros(len(TOKEN_NAMES), np.uint64)
        v = np.arange(256)
        for name, pat, plen, bits, dlo, dlen in encodings:
            hit = (v & ((1 << plen) - 1)) == pat
            self.type[hit] = T[name]
            self.nibbles[hit] = bits // 4
            self.dshift[T[name]] = dlo
            self.dmask[T[name]] = (1 << dlen) - 1
        # time delta straight from the low 8 bits where the field lies there (TIME counts 4 more);
        # delta_far marks the types whose field lies further (they read the token's window) and TIMESTAMP
        self.delta8 = np.zeros(256, np.int64)
        self.delta_far = np.zeros(len(TOKEN_NAMES), bool)
        for name, _p, _l, _b, dlo, dlen in encodings:
            if dlo + dlen > 8:
                self.delta_far[T[name]] = True
        self.delta_far[T["TIMESTAMP"]] = True
        near = ~self.delta_far[self.type]
        dt = self.type.astype(np.int64)
        self.delta8[near] = (v[near] >> self.dshift[dt[near]].astype(np.int64)) & self.dmask[dt[near]].astype(np.int64)
        self.delta8[self.type == T["TIME"]] += 4
        self.len_by_type = np.zeros(len(TOKEN_NAMES), np.int64)
        for name, _p, _l, bits, _d, _n in encodings:
            self.len_by_type[T[name]] = bits // 4


# ----------------------------------------------------------------------------------------------------
# INST opcodes -> (category, cycles). cycles -1 = dprate, -2 = dprate * derate. OTHER marks other-SIMD.
# ----------------------------------------------------------------------------------------------------
OTHER = 0x100


def _opcodes(gfx12: bool) -> dict[int, tuple[int, int]]:
    t = {
        0: (Category.SALU, 1),
        1: (Category.SMEM, 1),
        2: (Category.SMEM, 1),
        3: (Category.JUMP, 1),
        4: (Category.NEXT, 1),
        5: (Category.SALU, 1),
        6: (Category.CONTEXT, 1),
        7: (Category.SALU, 1),
        8: (Category.CONTEXT, 1),
        9: (Category.MESSAGE, 1),
        11: (Category.VALU, 4),
        12: (Category.VALU, 1),
        13: (Category.VALU, 2),
        14: (Category.VALU, 4),
        18: (Category.VALU, 1),
        19: (Category.IMMED, 1),
        28: (Category.FLAT, 2),
    }
    t.update({29 + i: (Category.FLAT, 3 + i) for i in range(4)})  # flat_wr_3..6
    t.update({33: (Category.VMEM, 1), 34: (Category.VMEM, 2)})  # sgmem_rd_1/2
    t.update({35 + i: (Category.VMEM, 1 + i) for i in range(6)})  # sgmem_wr_1..6
    t.update({41: (Category.LDS, 1)})
    t.update({42 + i: (Category.LDS, 1 + i) for i in range(5)})  # lds_wr_1..5
    t.update({47: (Category.VMEM, 1), 48: (Category.VMEM, 2)})
    t.update({49 + i: (Category.VMEM, 1 + i) for i in range(6)})  # buf_wr_1..6
    t.update({55 + i: (Category.VMEM, 1 + i) for i in range(12)})  # img_sample_1..12
    t.update({68 + i: (Category.VMEM, 1 + i) for i in range(4)})  # img_rd_1..4
    t.update({72 + i: (Category.VMEM, 2 + i) for i in range(7)})  # img_wr_2..8
    t.update({80 + i: (OTHER | Category.LDS, 1 + i) for i in range(5)})  # lds_other_simd_1..5
    t.update({85 + i: (OTHER | Category.FLAT, 2 + i) for i in range(5)})  # flat_other_simd_2..6
    t.update({103: (Category.BVH, 8), 104: (Category.BVH, 9), 105: (Category.BVH, 11), 106: (Category.BVH, 12)})
    t.update(
        {
            110: (Category.LDS, 1),
            111: (Category.LDS, 1),
            114: (Category.SALU, 1),
            115: (Category.VALU, 1),
            116: (Category.VALU, 2),
            117: (Category.SALU, 1),
            119: (OTHER | Category.LDS, 6),
        }
    )
    if not gfx12:
        t.update(
            {
                10: (Category.VALU, -1),
                15: (Category.VALU, 16),
                16: (Category.VALU, 1),
                17: (Category.VALU, 1),
                112: (Category.SALU, 1),
                113: (Category.SALU, 1),
                118: (Category.LDS, 6),
            }
        )
        t.update({90 + i: (OTHER | Category.VMEM, 1 + i) for i in range(12)})  # vmem_other_simd_1..12
    else:
        t.update(
            {
                10: (Category.VALU, 1),
                15: (Category.VALU, 16),
                118: (Category.BVH, 6),
                120: (OTHER | Category.LDS, 10),
                121: (Category.BVH, 10),
                122: (Category.MESSAGE, 1),
                135: (Category.SALU, 1),
                136: (Category.SALU, 1),
                137: (Category.SALU, 1),
                138: (Category.MESSAGE, 1),
                140: (Category.VALU, 8),
                141: (Category.VALU, 16),
                142: (Category.VALU, 32),
                143: (Category.VALU, 64),
                146: (Category.VALU, -1),
                147: (Category.VALU, -2),
                150: (Category.SMEM, 1),
                151: (Category.SMEM, 1),
                152: (Category.SALU, 3),
                153: (Category.VALU, 1),
                155: (Category.SALU, 2),
                156: (Category.SALU, 5),
            }
        )
        t.update({op: (OTHER | Category.VMEM, op - 187) for op in range(188, 222)})
        t.update({op: (Category.VMEM, op - 221) for op in range(222, 256)})
    return t


OP_JUMP, OP_TRAP, OP_RFE = 5, 6, 117
BARRIER_EXTENSION = False


class Family:
    """Everything that differs between gfx11 and gfx12, as data."""

    def __init__(self, name: str, version: int, encodings, gfx12: bool):
        self.name, self.version, self.gfx12 = name, version, gfx12
        self.table = TokenTable(encodings)
        # the chain walk's step by low 8 bits; 0 = gfx12 WAVE_START_EXT, whose length depends on what follows
        self.walk_len = self.table.nibbles.copy()
        if gfx12:
            self.walk_len[self.table.type == T["WAVE_START_EXT"]] = 0
        self.walk_mark = np.where(self.table.type == T["NOP"], 0x100, 0x100 | np.arange(256)).astype(np.uint16)
        ops = _opcodes(gfx12)
        self.op_cat = np.zeros(256, np.int64)
        self.op_cycles = np.zeros(256, np.int64)
        for op, (cat, cyc) in ops.items():
            self.op_cat[op], self.op_cycles[op] = cat, cyc
        # field positions (first bit, width)
        if gfx12:
            self.inst_wid, self.inst_op = (7, 5), (12, 8)
            self.ws = {
                "sa": (7, 1),
                "simd": (8, 2),
                "wgp": (10, 4),
                "wid": (15, 5),
                "pipe": (20, 2),
                "me": (22, 1),
                "count": (25, 7),
            }
            self.we = {"sa": (8, 1), "simd": (9, 2), "wgp": (11, 4), "wid": (15, 5)}
        else:
            self.inst_wid, self.inst_op = (8, 5), (13, 7)
            self.ws = {
                "sa": (7, 1),
                "simd": (8, 2),
                "wgp": (10, 3),
                "wid": (13, 5),
                "pipe": (21, 2),
                "me": (23, 1),
                "count": (25, 7),
            }
            self.we = {"sa": (8, 1), "simd": (9, 2), "wgp": (11, 3), "wid": (15, 5)}


FAMILIES = {11: Family("gfx11", 3, _GFX11, False), 12: Family("gfx12", 4, _GFX12, True)}
HEADER_VERSION_FAMILY = {3: 11, 4: 12}
LINE_BYTES = 32  # real SE buffers are whole 32-byte lines (all 250 RDNA blobs of the captures)


# ----------------------------------------------------------------------------------------------------
# 1. Token splitting (vectorised)
# ----------------------------------------------------------------------------------------------------
class Tokens:
    """The tokens of one blob that the wave model needs, as parallel numpy arrays in stream order."""

    __slots__ = ("lost", "nibbles_used", "pos", "problems", "realtime", "time", "type", "word")


CHAIN_CHUNK = 1024  # nibbles per chunk of the parallel chain walk
CHAIN_WARMUP = 48  # nibbles each chunk's chain is walked before its chunk


def _u64_view(buf: np.ndarray) -> np.ndarray:
    """The 8 bytes starting at every byte offset, as little-endian uint64 (an unaligned, copy-free view)."""
    return np.ndarray((len(buf) - 7,), "<u8", buf, 0, (1,))


def _nibble(buf: np.ndarray, q: int) -> int:
    return (int(buf[q >> 1]) >> ((q & 1) << 2)) & 15


def _step(buf: np.ndarray, nn: int, walk_len: np.ndarray, p: int) -> tuple[int, int]:
    """(low 8 bits of the token at nibble p, start of the next token): the scalar walk of the rare paths."""
    v = ((int(buf[p >> 1]) | (int(buf[(p >> 1) + 1]) << 8)) >> ((p & 1) << 2)) & 0xFF
    step = int(walk_len[v])
    if step:
        return v, p + step
    # gfx12 WAVE_START_EXT: while bit 0 of the next non-NOP nibble is 1, that byte is a VGPR/LDS extension
    # byte and is skipped (NOPs in between do not end the token).
    q = p + 10
    while True:
        while q < nn and _nibble(buf, q) == 0:
            q += 1
        if q < nn and _nibble(buf, q) & 1:
            q += 2
            continue
        return v, min(q, nn)


def chain_marks(buf: np.ndarray, nn: int, walk_len: np.ndarray, walk_mark: np.ndarray) -> np.ndarray:
    """Per nibble (uint16): 0x100 at every NOP of the stream, 0x100 | low 8 bits at every other token
    start, else 0.

    Walking one token at a time in Python would be the splitter's main cost, so the walk runs in parallel:
    every CHAIN_CHUNK-nibble chunk's chain is followed in numpy lock-step, marking the token starts it
    visits (each chain starts CHAIN_WARMUP nibbles before its chunk and marks nothing until it enters).
    A chain started anywhere falls into step with the true one within a few tokens (the format is
    self-synchronising), and from a shared position on two chains are
    identical. So if the true chain enters chunk k at a marked position, chunk k's marks from there on are
    right and only the marks before it are cleared; the rare chunk whose own chain synchronises later
    than that is re-walked one token at a time from the true entry. `walk_len` gives the token length in
    nibbles by low 8 bits, 0 for a variable-length token (stepped by `_step`); `walk_mark` the mark.
    """
    mark = np.zeros(nn + 1, np.uint16)
    if nn == 0:
        return mark[:nn]
    w16 = np.ndarray((len(buf) - 1,), "<u2", buf, 0, (1,))
    nch = -(-nn // CHAIN_CHUNK)
    starts = np.arange(nch, dtype=np.int64) * CHAIN_CHUNK
    ends = np.minimum(starts + CHAIN_CHUNK, nn)
    exits = np.empty(nch, np.int64)
    ids = np.arange(nch)
    variable = not walk_len.all()

    def advance(c, v):
        step = walk_len[v]
        if variable and not step.all():
            for j in np.flatnonzero(step == 0).tolist():
                step[j] = _step(buf, nn, walk_len, int(c[j]))[1] - c[j]
        c += step

    # warm-up: each chain starts CHAIN_WARMUP nibbles before its chunk, unmarked, so that it is usually in
    # step with the true chain by the time it enters the chunk
    c = np.maximum(starts - CHAIN_WARMUP, 0)
    while True:
        early = np.flatnonzero(c < starts)
        if not len(early):
            break
        ce = c[early]
        advance(ce, (w16[ce >> 1] >> ((ce & 1) << 2)) & 0xFF)
        c[early] = ce
    e = ends.copy()
    while True:
        done = c >= e
        if done.any():
            exits[ids[done]] = c[done]
            keep = ~done
            c, e, ids = c[keep], e[keep], ids[keep]
            if not len(c):
                break
        v = (w16[c >> 1] >> ((c & 1) << 2)) & 0xFF
        mark[c] = walk_mark[v]
        advance(c, v)
    # splice: the true chain enters chunk k where it leaves chunk k-1
    entry = np.empty(nch, np.int64)
    entry[0] = 0
    entry[1:] = exits[:-1]
    ok = entry < ends
    ok[ok] = mark[entry[ok]] != 0
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        while k < nch:
            if ok[k]:
                k += 1
                continue
            x, end = int(entry[k]), int(ends[k])
            walked = []
            while x < end and not mark[x]:
                v, nx = _step(buf, nn, walk_len, x)
                walked.append((x, v))
                x = nx
            meet = min(x, end)
            mark[int(starts[k]) : meet] = 0
            for q, v in walked:
                mark[q] = walk_mark[v]
            entry[k] = starts[k]  # nothing more to clear
            new_exit = x if x >= end else int(exits[k])
            ok[k] = True
            if k + 1 < nch and new_exit != entry[k + 1]:
                exits[k] = new_exit
                entry[k + 1] = new_exit
                ok[k + 1] = bool(new_exit < ends[k + 1] and mark[new_exit])
            k += 1
    for k in np.flatnonzero(entry > starts).tolist():
        mark[k * CHAIN_CHUNK : int(entry[k])] = 0
    return mark[:nn]


def _windows(buf: np.ndarray, nib_pos: np.ndarray) -> np.ndarray:
    """64-bit little-endian window starting at each nibble position (zero past the end)."""
    b = nib_pos >> 1
    odd = (nib_pos & 1).astype(bool)
    w = _u64_view(buf)[b]
    if odd.any():
        w[odd] = (w[odd] >> np.uint64(4)) | (buf[b[odd] + 8].astype(np.uint64) << np.uint64(60))
    return w


def _field(w, lo: int, width: int):
    return (w >> np.uint64(lo)) & np.uint64((1 << width) - 1)


USEFUL = np.zeros(len(TOKEN_NAMES), bool)  # tokens the wave model looks at
for _name in (
    "REG",
    "IMM_ONE",
    "INST",
    "VALU_INST",
    "IMMEDIATE",
    "WAVE_READY",
    "WAVE_START",
    "WAVE_START_EXT",
    "WAVE_END",
    "HEADER",
    "NEW_PC",
    "MISC",
    "SHADER_DATA",
    "SHADER_DATA_SHORT",
    "REG_INIT",
    "EVENT",
):
    USEFUL[T[_name]] = True


def split(data: bytes, fam: Family) -> Tokens:
    """Split one SE stream into tokens and give every token its time (sqtt-format.md §2)."""
    n = len(data)
    nbits = 8 * n
    buf = np.zeros(n + 24, np.uint8)
    buf[:n] = np.frombuffer(data, np.uint8)
    nn = 2 * n
    tab = fam.table
    mark = chain_marks(buf, nn, fam.walk_len, fam.walk_mark)
    pos = np.flatnonzero(mark > 0x100)  # token starts without the NOPs
    low8 = mark[pos] & 0xFF
    del mark
    typ = tab.type[low8]
    problems = []
    # end of buffer: a token must fit in the data (gfx12 also needs a whole 64-bit window, as the
    # official reader does); a token cut by the end is truncation. Only the last few tokens can be.
    t0 = int(np.searchsorted(pos, max(nn - 24, 0)))
    tp, tt = pos[t0:], typ[t0:]
    tok_end = tp * 4 + tab.len_by_type[tt] * 4
    if fam.gfx12:
        keep = tp * 4 + 64 <= nbits
        cut = (~keep) & (tok_end > nbits)
    else:
        keep = tok_end <= nbits
        cut = ~keep
    if n % LINE_BYTES:
        # The trace unit writes whole 32-byte lines and its last line ends inside a token; a size that is
        # not a whole number of lines means the file was cut.
        where = f"token at byte {int(tp[np.flatnonzero(cut)[0]]) // 2} cut" if cut.any() else "no token cut"
        problems.append(
            f"truncated: {n} bytes is not a whole number of {LINE_BYTES}-byte trace lines "
            f"({where}); decoded what comes before"
        )
    unk = np.flatnonzero(typ == T["UNKNOWN"])
    if len(unk):
        problems.append(f"lost sync: {len(unk)} unknown token ids, first at byte {int(pos[unk[0]]) // 2}")
    if not keep.all():
        kept = np.concatenate([np.ones(t0, bool), keep])
        pos, typ, low8 = pos[kept], typ[kept], low8[kept]
    # time deltas: from the low 8 bits where the field lies there, else from the token's window
    delta = tab.delta8[low8]
    far = np.flatnonzero(tab.delta_far[typ])
    wf = _windows(buf, pos[far])
    tf = typ[far]
    delta[far] = ((wf >> tab.dshift[tf]) & tab.dmask[tf]).astype(np.int64)
    tsel = tf == T["TIMESTAMP"]
    ts, tw = far[tsel], wf[tsel]
    if fam.gfx12:
        rt, pl, val = _field(tw, 7, 1), _field(tw, 8, 1), tw >> np.uint64(12)
    else:
        rt, pl, val = _field(tw, 9, 1), _field(tw, 8, 1), _field(tw, 12, 36)
    rt, pl, val = rt.astype(bool), pl.astype(bool), val.astype(np.int64)
    delta[ts[~rt]] = val[~rt]
    time = np.cumsum(delta)
    del delta
    rtk = rt & ~pl
    realtime = np.stack([time[ts[rtk]], val[rtk]], 1) if rtk.any() else np.zeros((0, 2), np.int64)
    lost_ts = ts[pl & ~rt]
    # keep only tokens the wave model looks at
    cand = np.flatnonzero(USEFUL[typ])
    tk = Tokens()
    tk.pos = pos[cand]
    tk.type = typ[cand]
    tk.time = time[cand]
    tk.word = _windows(buf, tk.pos)
    # gfx12 NEW_PC: the official reader decodes it from the window 8 bits into the token
    if fam.gfx12:
        npc = np.flatnonzero(tk.type == T["NEW_PC"])
        if len(npc):
            tk.word[npc] = _windows(buf, tk.pos[npc] + 2)
    tk.lost = np.zeros(len(cand), bool)
    if len(lost_ts):
        # the packet-lost flag is consumed by the next delivered token
        nxt_sel = np.searchsorted(cand, lost_ts, side="right")
        tk.lost[nxt_sel[nxt_sel < len(cand)]] = True
    tk.realtime, tk.problems, tk.nibbles_used = realtime, problems, int(pos[-1]) if len(pos) else 0
    if not fam.gfx12:
        _ready_reorder(tk)
    return tk


def _ready_reorder(tk: Tokens) -> None:
    """gfx11: WAVE_READY is stamped one cycle early and moved ahead of same-cycle tokens (§2.5 item 6)."""
    r = tk.type == T["WAVE_READY"]
    if not r.any():
        return
    tk.time = tk.time.copy()
    tk.time[r] -= 1
    order = np.argsort(tk.time, kind="stable")
    # only same-cycle neighbours move: a stable sort on time does exactly that for a monotonic stream
    for name in ("type", "time", "word", "pos", "lost"):
        setattr(tk, name, getattr(tk, name)[order])


# ----------------------------------------------------------------------------------------------------
# 2. Wave model
# ----------------------------------------------------------------------------------------------------
EMPTY, IDLE, EXEC, WAIT, STALL = range(5)
CAT_CONTEXT, CAT_IMMED, CAT_MESSAGE, CAT_VALU = Category.CONTEXT, Category.IMMED, Category.MESSAGE, Category.VALU


class WaveState:
    """One traced wave while its tokens arrive (official `wave_t`)."""

    __slots__ = (
        "barrier",
        "begin",
        "cat",
        "complete",
        "contexts",
        "cu",
        "dur",
        "end",
        "insts",
        "last",
        "pc_infos",
        "se",
        "simd",
        "stall",
        "state",
        "t",
        "timeline",
        "trapped",
        "wid",
    )

    def __init__(self, se, cu, simd, wid, begin, entry_pc):
        self.se, self.cu, self.simd, self.wid = se, cu, simd, wid
        self.begin = self.end = begin
        self.t, self.cat, self.dur, self.stall = array("q"), array("b"), array("q"), array("q")
        self.pc_infos = [[0, entry_pc]]
        self.timeline = []
        self.state, self.last = IDLE, begin
        self.complete = self.trapped = self.barrier = False
        self.contexts = 0
        self.insts = None  # the vectorised model's records (a slice of the blob's record array)

    def set_state(self, new, time):
        if time > self.last:
            tl = self.timeline
            if tl and tl[-1][0] == self.state:
                tl[-1][1] += time - self.last
            else:
                tl.append([self.state, time - self.last])
            self.last = time
        self.state = new

    def barrier_ext(self, time):
        """gfx11 s_barrier: the IMMED record becomes a MESSAGE covering the whole wait."""
        self.barrier = False
        if self.cat and self.cat[-1] == CAT_IMMED:
            self.set_state(WAIT, self.t[-1] + self.dur[-1])
            self.set_state(EXEC, time + 1)
            self.dur[-1] = max(0, time - self.t[-1])
            self.cat[-1] = CAT_MESSAGE

    def issue(self, time, cat, cycles):
        """INST / VALU_INST of a non-immediate category at token time `time`."""
        if self.state == STALL and self.last < time:
            st = time - self.last
            self.t.append(self.last)
            self.dur.append(cycles + st)
            self.stall.append(st)
        else:
            self.t.append(time)
            self.dur.append(cycles)
            self.stall.append(0)
        self.cat.append(cat)
        self.set_state(EXEC, time)

    def immediate(self, time):
        t0 = time
        if self.t:
            t0 = min(time, self.t[-1] + self.dur[-1])
        st = time - t0
        self.t.append(t0)
        self.cat.append(CAT_IMMED)
        self.dur.append(st + 1)
        self.stall.append(st)
        self.set_state(WAIT, t0)
        self.set_state(EXEC, time + 1)

    def finish(self, time):
        self.set_state(EMPTY, time)
        self.end = time
        self.complete = True
        if self.t:
            last_end = self.t[-1] + self.dur[-1]
            if last_end < time and not self.trapped:
                self.t.append(last_end)
                self.cat.append(CAT_MESSAGE)
                self.dur.append(time - last_end)
                self.stall.append(0)


def _realtime_pairs(samples) -> list[tuple[int, int]]:
    """(shader clock, reference clock) pairs; a sample where either clock does not increase is averaged
    into the previous one (official realtime helper; e.g. two samples at the same shader clock)."""
    out: list[list[int]] = []
    for sc, rc in samples:
        if out and (sc <= out[-1][0] or rc <= out[-1][1]):
            out[-1] = [(out[-1][0] + sc) // 2, (out[-1][1] + rc) // 2]
        else:
            out.append([sc, rc])
    return [tuple(x) for x in out]


def _header(word: int):
    version = (word >> 7) & 0x3F
    dsimd, dwgp, dsa = (word >> 13) & 3, (word >> 15) & 7, (word >> 19) & 1
    mask = 0xF if version < 3 else 7
    dpr = ((word >> 28) & 0xF) & mask
    dprate = (1 << (dpr - 1)) if dpr else 1
    derate = 1 << ((word >> 33) & 7)
    exclude_bw = bool((word >> 59) & 1) if version == 4 else False
    return version, (dsa << 7) | dwgp, dsimd, dprate, derate, exclude_bw


def _f(word: int, spec) -> int:
    lo, width = spec
    return (word >> lo) & ((1 << width) - 1)


def decode(
    data: bytes, arch: str, code: CodeMap | None, se: int, where: str = "", vectorised: bool = True, **_opts
) -> BlobResult:
    """Decode one RDNA SE blob into waves (stitched to PCs when `code` is given), occupancy, realtime.

    With `vectorised`, blobs without traps, context switches, jumps or NEW_PC run the timing model in
    numpy (rdna_vec); otherwise, and whenever that model declines, the scalar model below runs.
    """
    from attdec.decoders import rdna_vec

    fam_no = target(arch).generation
    fam = FAMILIES[fam_no]
    tk = split(data, fam)
    if vectorised and _vectorisable(tk, fam):
        try:
            return _decode_fast(tk, fam, fam_no, data, arch, code, se, where)
        except rdna_vec.NotVectorisable:
            pass
    return _decode(tk, fam, fam_no, data, arch, code, se, where)


def _vectorisable(tk: Tokens, fam: Family) -> bool:
    """No token that needs the scalar model: NEW_PC, jump/trap/rfe, context save/restore, MISC save."""
    typ, w = tk.type, tk.word
    if (typ == T["NEW_PC"]).any():
        return False
    inst = w[typ == T["INST"]]
    op = (inst >> np.uint64(fam.inst_op[0])) & np.uint64((1 << fam.inst_op[1]) - 1)
    if np.isin(op, [OP_JUMP, OP_TRAP, OP_RFE]).any():
        return False
    if BARRIER_EXTENSION and not fam.gfx12 and (op == 19).any():
        return False
    ws = w[(typ == T["WAVE_START"]) | (typ == T["WAVE_START_EXT"])]
    count = (ws >> np.uint64(25)) & np.uint64(127)
    if ((count >= 66) & (count < 90)).any():
        return False
    misc = w[typ == T["MISC"]]
    if ((misc >> np.uint64(19)) & np.uint64(1)).any():
        return False
    return len(np.unique(w[typ == T["HEADER"]])) <= 1


def _decode(tk, fam, fam_no, data, arch, code, se, where):
    """The scalar pass over the tokens (the reference model): lifecycle, registers, occupancy and the
    per-wave timing model, token by token."""
    from attdec.decoders import stitch as stitch_mod

    res = BlobResult(se=se, arch=arch)
    res.problems.extend(tk.problems)
    res.realtime = _realtime_pairs(tk.realtime.tolist())
    res.bytes_decoded = len(data)

    # per-family field specs
    ws, we = fam.ws, fam.we
    iw_lo, _iw_w = fam.inst_wid
    io_lo, io_w = fam.inst_op
    op_cat = fam.op_cat.tolist()
    op_cyc = fam.op_cycles.tolist()

    target_cu, target_simd, dprate, derate, version, excl_bw = 0, 0, 1, 1, fam.version, False
    regs: dict[tuple[int, int], dict[int, int]] = {}
    running: dict[int, int] = {}
    saved: dict[int, int] = {}
    occ_rows: list[tuple] = []
    occ_front: list[tuple] = []
    slots: list[WaveState | None] = [None] * 32
    pending: list[list[WaveState]] = [[] for _ in range(32)]
    waves: list[Wave] = []
    other = []

    stitcher = stitch_mod.Stitcher(code, family=fam_no) if code is not None and len(code) else None
    entry_checked = False

    def emit(wv: WaveState):
        waves.append(_finish_wave(wv, stitcher, excl_bw))

    def entry_pc(me, pipe):
        r = regs.get((me & 1, pipe))
        if not r:
            return 0
        return (((r.get(0x0D, 0) << 32) | r.get(0x0C, 0)) << 8) & ((1 << 48) - 1)

    tI, tV, tIO, tIM, tWR = T["INST"], T["VALU_INST"], T["IMM_ONE"], T["IMMEDIATE"], T["WAVE_READY"]
    tWS, tWSX, tWE, tNPC, tREG, tHDR, tMISC = (
        T["WAVE_START"],
        T["WAVE_START_EXT"],
        T["WAVE_END"],
        T["NEW_PC"],
        T["REG"],
        T["HEADER"],
        T["MISC"],
    )
    # Per-token fields, vectorised: wave slot, and for plain issues (VALU_INST, ordinary INST) the
    # record category and cycles, so the loop below only looks them up.
    tw = tk.word
    is_i = tk.type == tI
    is_v = tk.type == tV
    wid_a = np.where(is_i, (tw >> np.uint64(iw_lo)) & np.uint64(31), (tw >> np.uint64(7)) & np.uint64(31))
    op_a = ((tw >> np.uint64(io_lo)) & np.uint64((1 << io_w) - 1)).astype(np.int64)
    cat_a = np.where(is_v, CAT_VALU, fam.op_cat[op_a])
    cyc_a = np.where(is_v, 1, fam.op_cycles[op_a])
    plain = is_v | (
        is_i
        & (cat_a > 0)
        & (cat_a < OTHER)
        & (cat_a != CAT_IMMED)
        & (cyc_a > 0)
        & (op_a != OP_JUMP)
        & (op_a != OP_TRAP)
        & (op_a != OP_RFE)
    )
    types, times, words, lost = tk.type.tolist(), tk.time.tolist(), tk.word.tolist(), tk.lost.tolist()
    plain_l, wid_l, cat_l, cyc_l = plain.tolist(), wid_a.tolist(), cat_a.tolist(), cyc_a.tolist()
    del wid_a, op_a, cat_a, cyc_a, plain, is_i, is_v

    for i in range(len(types)):
        ty = types[i]
        tm = times[i]
        if plain_l[i]:  # the hot path: one issued instruction (official apply_inst)
            wv = slots[wid_l[i]]
            if wv is None:
                continue
            if wv.barrier:
                wv.barrier_ext(tm)
            if wv.trapped:
                continue
            if ty == tI:
                wv.end = tm
            cyc = cyc_l[i]
            last = wv.last
            state = wv.state
            if state == STALL and last < tm:
                st = tm - last
                wv.t.append(last)
                wv.dur.append(cyc + st)
                wv.stall.append(st)
            else:
                wv.t.append(tm)
                wv.dur.append(cyc)
                wv.stall.append(0)
            wv.cat.append(cat_l[i])
            if tm > last:  # set_state(EXEC, tm), inlined
                tl = wv.timeline
                if tl and tl[-1][0] == state:
                    tl[-1][1] += tm - last
                else:
                    tl.append([state, tm - last])
                wv.last = tm
            wv.state = EXEC
            continue
        w = words[i]
        if ty == tI:
            op = (w >> io_lo) & ((1 << io_w) - 1)
            cat = op_cat[op]
            wv = slots[(w >> iw_lo) & 31]
            if cat & OTHER:
                cyc = op_cyc[op]
                other.append((tm, cyc, target_cu, cat & 0xFF))
                continue
            if wv is None:
                continue
            if wv.barrier:
                wv.barrier_ext(tm)
            if op == OP_RFE:
                wv.pc_infos.append([len(wv.t), 0])
                wv.trapped = False
                if wv.cat and wv.cat[-1] == CAT_CONTEXT:
                    wv.dur[-1] = max(wv.dur[-1], tm + 1 - wv.t[-1])
                continue
            if op == OP_TRAP:
                wv.t.append(tm)
                wv.cat.append(CAT_CONTEXT)
                wv.dur.append(1)
                wv.stall.append(0)
                wv.trapped = True
            if wv.trapped:
                continue
            wv.end = tm
            if cat == CAT_IMMED:
                wv.immediate(tm)
                wv.barrier = BARRIER_EXTENSION and version <= 3
                continue
            if cat == 0:
                continue
            cyc = op_cyc[op]
            if cyc < 0:
                cyc = dprate if cyc == -1 else dprate * derate
            wv.issue(tm, cat, cyc)
            if op == OP_JUMP:
                wv.pc_infos.append([len(wv.t), 0])
        elif ty == tV:
            wv = slots[(w >> 7) & 31]
            if wv is None:
                continue
            if wv.barrier:
                wv.barrier_ext(tm)
            if not wv.trapped:
                wv.issue(tm, CAT_VALU, 1)
        elif ty == tWR:
            m = (w >> 8) & 0xFFFF
            while m:
                b = m & -m
                wv = slots[b.bit_length() - 1]
                m ^= b
                if wv is not None:
                    if wv.barrier:
                        wv.barrier_ext(tm - 1)
                    wv.set_state(STALL, tm)
        elif ty in (tIO, tIM):
            if ty == tIO:
                m = 1 << ((w >> 7) & 31)
            else:
                m = (w >> 8) & 0xFFFF
            while m:
                b = m & -m
                wv = slots[b.bit_length() - 1]
                m ^= b
                if wv is not None:
                    if wv.barrier:
                        wv.barrier_ext(tm)
                    if not wv.trapped:
                        wv.immediate(tm)
        elif ty in (tWS, tWSX):
            sa, simd, wgp, wid = _f(w, ws["sa"]), _f(w, ws["simd"]), _f(w, ws["wgp"]), _f(w, ws["wid"])
            me, pipe, count = _f(w, ws["me"]), _f(w, ws["pipe"]), _f(w, ws["count"])
            cu = (sa << 7) | wgp
            loc = (cu << 7) | (simd << 5) | wid
            pc = entry_pc(me, pipe)
            is_target = cu == target_cu and simd == target_simd
            if 66 <= count < 90:
                k = count - 66
                is_save, is_restore = (0b0000110011 >> k) & 1, (0b1111001100 >> k) & 1
                if is_target:
                    wv = slots[wid]
                    if is_save and wv is not None:
                        wv.trapped = True
                        wv.contexts += 1
                        wv.t.append(tm)
                        wv.cat.append(CAT_CONTEXT)
                        wv.dur.append(1)
                        wv.stall.append(0)
                    if is_restore:
                        if wv is None or wv.complete:
                            wv = WaveState(se, cu, simd, wid, tm, 0)
                            _push(slots, pending, wid, wv, emit)
                        if wv.cat and wv.cat[-1] == CAT_CONTEXT:
                            wv.dur[-1] = max(wv.dur[-1], tm + 1 - wv.t[-1])
                        wv.trapped = True
                        wv.contexts += 1
                if is_save:
                    if loc in running:
                        occ_rows.append((se, cu, simd, wid, 0, tm, running[loc]))
                        saved[loc] = running[loc]
                elif is_restore:
                    addr = saved.pop(loc, 0)
                    running[loc] = addr
                    occ_rows.append((se, cu, simd, wid, 1, tm, addr))
                continue
            if lost[i] and loc in running:
                occ_rows.append((se, cu, simd, wid, 0, tm - 1, 0))
            running[loc] = pc
            occ_rows.append((se, cu, simd, wid, 1, tm, pc))
            if is_target:
                if stitcher is not None and not entry_checked:
                    entry_checked = True
                    if code.get(pc) is None:
                        res.problems.append(
                            f"kernel entry pc {pc:#x} (byte {int(tk.pos[i]) // 2}) is not in any "
                            f"loaded code object: wrong --code or load base? PCs stay 0"
                        )
                wv = WaveState(se, cu, simd, wid, tm, pc)
                _push(slots, pending, wid, wv, emit)
        elif ty == tWE:
            sa, simd, wgp, wid = _f(w, we["sa"]), _f(w, we["simd"]), _f(w, we["wgp"]), _f(w, we["wid"])
            cu = (sa << 7) | wgp
            loc = (cu << 7) | (simd << 5) | wid
            if cu == target_cu and simd == target_simd and slots[wid] is not None:
                slots[wid].finish(tm)
            if loc in running:
                pc = running.pop(loc)
            else:
                pc = 0
                occ_front.append((se, cu, simd, wid, 1, 0, 0))
            occ_rows.append((se, cu, simd, wid, 0, tm, pc))
        elif ty == tNPC:
            wid = (w >> 11) & 31 if not fam.gfx12 else (w >> 3) & 31
            pcv = ((w >> 16) & ((1 << 46) - 1)) if not fam.gfx12 else ((w >> 8) & ((1 << 55) - 1))
            wv = slots[wid]
            if wv is not None:
                if wv.barrier:
                    wv.barrier_ext(tm)
                if wv.pc_infos and not wv.trapped:
                    infos = wv.pc_infos
                    k = len(infos)
                    while k > 0 and not infos[k - 1][1]:
                        k -= 1
                    if k == len(infos):
                        infos.append([len(wv.t), 0])
                    infos[k][1] = pcv << 2
        elif ty == tREG:
            if (w >> 15) & 1:  # CS register write
                me, pipe, addr, val = (w >> 9) & 3, (w >> 7) & 3, (w >> 16) & 0xFFFF, w >> 32
                regs.setdefault((me & 1, pipe), {})[addr] = val
        elif ty == tHDR:
            v, target_cu, target_simd, dprate, derate, excl_bw = _header(w)
            if v in HEADER_VERSION_FAMILY and HEADER_VERSION_FAMILY[v] != fam_no:
                from attdec.errors import ArchError

                raise ArchError(
                    f"the trace is gfx{HEADER_VERSION_FAMILY[v]} (header version {v}), not {arch}",
                    where or None,
                )
            version = v
        elif ty == tMISC:
            if (w >> 19) & 1:  # save context: running waves go to standby
                for wv in slots:
                    if wv is not None and not wv.trapped:
                        wv.trapped = True

    for wid in range(32):
        for wv in pending[wid]:
            emit(wv)
        if slots[wid] is not None:
            emit(slots[wid])
    res.waves = waves
    rows = occ_front + occ_rows
    occ = np.zeros(len(rows), OCCUPANCY_DTYPE)
    if rows:
        a = np.array(rows, dtype=np.int64)
        for j, name in enumerate(("se", "cu", "simd", "wave_id", "start", "time", "pc")):
            occ[name] = a[:, j]
    res.occupancy = occ
    res.other_simd = [(t, c, g) for (t, c, _w, g) in other]
    return res


def _decode_fast(tk, fam, fam_no, data, arch, code, se, where):
    """`_decode` for a vectorisable blob, without a pass over the tokens in Python.

    Occupancy is a per-location lookup (a wave runs at a location when the previous lifecycle token
    there was a WAVE_START), entry PCs come from the latest COMPUTE_PGM_LO/HI register writes before each
    WAVE_START, the timing model is rdna_vec's; only the traced waves' own starts and ends are walked
    one by one (to keep the official stitch order). Same results as the scalar pass."""
    from attdec.decoders import rdna_vec
    from attdec.decoders import stitch as stitch_mod

    res = BlobResult(se=se, arch=arch)
    res.problems.extend(tk.problems)
    res.realtime = _realtime_pairs(tk.realtime.tolist())
    res.bytes_decoded = len(data)
    typ, tw, times = tk.type, tk.word, tk.time
    u = np.uint64

    # header: target WGP/SIMD, dprate, barrier-wait flag (all HEADER tokens are equal here); tokens
    # before the first header see target 0/0, as in the scalar pass
    target_cu = target_simd = 0
    dprate, derate, excl_bw, first_hdr = 1, 1, False, len(typ)
    hdr = np.flatnonzero(typ == T["HEADER"])
    if len(hdr):
        v, target_cu, target_simd, dprate, derate, excl_bw = _header(int(tw[hdr[0]]))
        if v in HEADER_VERSION_FAMILY and HEADER_VERSION_FAMILY[v] != fam_no:
            from attdec.errors import ArchError

            raise ArchError(
                f"the trace is gfx{HEADER_VERSION_FAMILY[v]} (header version {v}), not {arch}", where or None
            )
        first_hdr = int(hdr[0])

    # instruction-level tokens -> events of the vectorised model
    iw_lo, _ = fam.inst_wid
    io_lo, io_w = fam.inst_op
    is_i = typ == T["INST"]
    is_v = typ == T["VALU_INST"]
    wid_a = np.where(is_i, (tw >> u(iw_lo)) & u(31), (tw >> u(7)) & u(31))
    op_a = ((tw >> u(io_lo)) & u((1 << io_w) - 1)).astype(np.int64)
    cat_a = np.where(is_v, CAT_VALU, fam.op_cat[op_a])
    cyc_a = np.where(is_v, 1, fam.op_cycles[op_a])
    cyc_a = np.where(cyc_a == -1, dprate, np.where(cyc_a == -2, dprate * derate, cyc_a))
    ev = _vector_events(tk, is_i, is_v, wid_a, cat_a, cyc_a)
    oth = np.flatnonzero(is_i & (cat_a >= OTHER))
    res.other_simd = list(zip(times[oth].tolist(), cyc_a[oth].tolist(), (cat_a[oth] & 0xFF).tolist()))
    del is_i, is_v, wid_a, op_a, cat_a, cyc_a

    # lifecycle tokens, vectorised
    life = np.flatnonzero((typ == T["WAVE_START"]) | (typ == T["WAVE_START_EXT"]) | (typ == T["WAVE_END"]))
    lw, lt = tw[life], times[life]
    is_ws = typ[life] != T["WAVE_END"]

    def field(name):
        (a, wa), (b, wb) = fam.ws[name], fam.we[name]
        return np.where(is_ws, (lw >> u(a)) & u((1 << wa) - 1), (lw >> u(b)) & u((1 << wb) - 1)).astype(np.int64)

    sa, simd, wgp, wid = field("sa"), field("simd"), field("wgp"), field("wid")
    cu = (sa << 7) | wgp
    loc = (cu << 7) | (simd << 5) | wid
    # entry PC of each WAVE_START: COMPUTE_PGM_LO/HI (0x0C/0x0D) of its (me & 1, pipe), latest write before
    (a, wa), (b, wb) = fam.ws["me"], fam.ws["pipe"]
    key = (((lw >> u(a)) & u((1 << wa) - 1)) << u(2)) | ((lw >> u(b)) & u((1 << wb) - 1))
    reg = np.flatnonzero(typ == T["REG"])
    rw = tw[reg]
    cs = ((rw >> u(15)) & u(1)).astype(bool)
    reg, rw = reg[cs], rw[cs]
    rkey = (((rw >> u(9)) & u(1)) << u(2)) | ((rw >> u(7)) & u(3))
    raddr = (rw >> u(16)) & u(0xFFFF)
    lo = np.zeros(len(life), np.uint64)
    hi = np.zeros(len(life), np.uint64)
    for addr, dst in ((0x0C, lo), (0x0D, hi)):
        for kv in np.unique(rkey[raddr == addr]).tolist():
            wsel = np.flatnonzero((raddr == addr) & (rkey == kv))
            lsel = np.flatnonzero(key == kv)
            j = np.searchsorted(reg[wsel], life[lsel]) - 1
            ok = j >= 0
            dst[lsel[ok]] = rw[wsel[j[ok]]] >> u(32)
    pc = (((hi << u(32)) | lo) << u(8)) & u((1 << 48) - 1)
    pc[~is_ws] = 0
    del lo, hi, key
    # occupancy: a location runs a wave when its previous lifecycle token was a WAVE_START
    order = np.argsort(loc, kind="stable")
    sl = loc[order]
    has_prev = np.zeros(len(order), bool)
    has_prev[1:] = sl[1:] == sl[:-1]
    prev = np.empty(len(order), np.int64)
    if len(order):
        prev[0] = 0
        prev[1:] = order[:-1]
    running = np.zeros(len(life), bool)
    running[order] = has_prev & is_ws[prev]
    run_pc = np.zeros(len(life), np.uint64)
    run_pc[order] = pc[prev]
    run_pc[~running] = 0
    del order, sl, has_prev, prev
    lost_end = is_ws & tk.lost[life] & running  # a start at a running location ends it first
    nrow = 1 + lost_end
    first = np.cumsum(nrow) - nrow
    front = np.flatnonzero(~is_ws & ~running)  # an end with no start: a start at time 0 first
    nf = len(front)
    occ = np.zeros(nf + int(nrow.sum()), OCCUPANCY_DTYPE)
    main = nf + first + lost_end  # the row of each token's own start/end
    extra = nf + first[lost_end]
    for name, col in (("se", se), ("cu", cu), ("simd", simd), ("wave_id", wid)):
        occ[name][:nf] = col if np.isscalar(col) else col[front]
        occ[name][main] = col
        occ[name][extra] = col if np.isscalar(col) else col[lost_end]
    occ["start"][:nf] = 1
    occ["start"][main] = is_ws
    occ["time"][main] = lt
    occ["time"][extra] = lt[lost_end] - 1
    occ["pc"][main] = np.where(is_ws, pc, run_pc)
    res.occupancy = occ

    # the traced waves, in stream order (WaveState slots and the official stitch order)
    before = life < first_hdr
    tgt = (cu == np.where(before, 0, target_cu)) & (simd == np.where(before, 0, target_simd))
    stitcher = stitch_mod.Stitcher(code, family=fam_no) if code is not None and len(code) else None
    slots: list[WaveState | None] = [None] * 32
    pending: list[list[WaveState]] = [[] for _ in range(32)]
    emitted: list[WaveState] = []
    ws_k, ws_slot, ws_waves, we_k, we_slot = [], [], [], [], []
    entry_checked = stitcher is None
    ti = np.flatnonzero(tgt)
    for k, start, c_, s_, w_, t_, p_ in zip(
        life[ti].tolist(),
        is_ws[ti].tolist(),
        cu[ti].tolist(),
        simd[ti].tolist(),
        wid[ti].tolist(),
        lt[ti].tolist(),
        pc[ti].tolist(),
    ):
        if start:
            if not entry_checked:
                entry_checked = True
                if code.get(p_) is None:
                    res.problems.append(
                        f"kernel entry pc {p_:#x} (byte {int(tk.pos[k]) // 2}) is not in any "
                        f"loaded code object: wrong --code or load base? PCs stay 0"
                    )
            wv = WaveState(se, c_, s_, w_, t_, p_)
            ws_k.append(k)
            ws_slot.append(w_)
            ws_waves.append(wv)
            _push(slots, pending, w_, wv, emitted.append)
        elif slots[w_] is not None:
            slots[w_].complete = True
            we_k.append(k)
            we_slot.append(w_)
    for w_ in range(32):
        emitted.extend(pending[w_])
        if slots[w_] is not None:
            emitted.append(slots[w_])

    i64 = lambda x: np.array(x, np.int64)
    begin = i64([wv.begin for wv in ws_waves])
    recs, bounds, timelines, end, complete = rdna_vec.compute(
        ev, times, i64(ws_k), i64(ws_slot), begin, i64(we_k), i64(we_slot), CAT_MESSAGE, CAT_IMMED
    )
    bounds = bounds.tolist()
    for x, (wv, tl, e_, c_) in enumerate(zip(ws_waves, timelines, end.tolist(), complete.tolist())):
        wv.insts = recs[bounds[x] : bounds[x + 1]]
        wv.timeline, wv.end, wv.complete = tl, e_, c_
    res.waves = [_finish_wave(wv, stitcher, excl_bw) for wv in emitted]
    return res


def _vector_events(tk, is_i, is_v, wid_a, cat_a, cyc_a):
    """Instruction-level tokens as per-wave-slot events for rdna_vec, in stream order: one per INST (not
    other-SIMD), VALU_INST and IMM_ONE token, one per set bit of IMMEDIATE and WAVE_READY masks."""
    from attdec.decoders import rdna_vec as V

    typ, tw = tk.type, tk.word
    is_io = typ == T["IMM_ONE"]
    multi = np.flatnonzero((typ == T["IMMEDIATE"]) | (typ == T["WAVE_READY"]))
    mask = (tw[multi] >> np.uint64(8)) & np.uint64(0xFFFF)
    cnt = ((is_i & (cat_a < OTHER)) | is_v | is_io).astype(np.int64)
    cnt[multi] = np.bitwise_count(mask)
    tok = np.repeat(np.arange(len(typ), dtype=np.int64), cnt)  # event -> token
    # per token: kind, slot (INST/VALU_INST/IMM_ONE), category and cycles (INST/VALU_INST)
    kind = np.where(cat_a == CAT_IMMED, V.K_IMMED, np.where(cat_a == 0, V.K_NONE, V.K_ISSUE)).astype(np.int8)
    kind[is_io] = V.K_IMMED
    kind[multi] = np.where(typ[multi] == T["IMMEDIATE"], V.K_IMMED, V.K_READY)
    iv = is_i | is_v
    slot = wid_a.astype(np.int64)[tok]
    _k, bit = V._expand_mask(multi, mask)
    is_multi = np.zeros(len(typ), bool)
    is_multi[multi] = True
    slot[is_multi[tok]] = bit
    return {
        "k": tok,
        "slot": slot,
        "kind": kind[tok],
        "T": tk.time[tok],
        "cat": np.where(iv, cat_a, 0).astype(np.int16)[tok],
        "cyc": np.where(iv, cyc_a, 0).astype(np.int32)[tok],
        "inst": is_i[tok],
    }


def _push(slots, pending, wid, wv, emit):
    """A new wave takes slot `wid`; completed waves there are finished (the official stitch point)."""
    old = slots[wid]
    if old is not None:
        if old.complete:
            emit(old)
        else:
            pending[wid].append(old)
    slots[wid] = wv


def _finish_wave(wv: WaveState, stitcher, excl_bw: bool) -> Wave:
    if wv.insts is not None:
        insts, timeline = wv.insts, wv.timeline
    else:
        n = len(wv.t)
        insts = np.zeros(n, INST_DTYPE)
        insts["line"] = -1
        if n:
            insts["time"] = np.frombuffer(wv.t, np.int64)
            insts["category"] = np.frombuffer(wv.cat, np.int8)
            insts["duration"] = np.frombuffer(wv.dur, np.int64)
            insts["stall"] = np.frombuffer(wv.stall, np.int64)
        timeline = [tuple(x) for x in wv.timeline]
    if stitcher is not None and len(insts):
        insts, timeline = stitcher.stitch(insts, wv.pc_infos, timeline, wv.begin, excl_bw)
    end = wv.end
    if not wv.complete and len(insts):
        end = max(end, int((insts["time"] + insts["duration"] + 4).max()))
    return Wave(
        se=wv.se,
        cu=wv.cu,
        simd=wv.simd,
        slot=wv.wid,
        begin=wv.begin,
        end=end,
        insts=insts,
        timeline=timeline,
        contexts=wv.contexts,
    )
