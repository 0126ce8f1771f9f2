"""A big gfx9 blob decoded in windows, so that memory follows the window and not the blob.

The blob is split a window of words at a time, from the token boundary where the previous window ended
and with the time pass's state there (`splitter.TimeState`; a window never ends between a TIME_RESET and
the token it consumes). The selected tokens are decoded in segments that end where no traced wave is open
(every target-CU slot free), so each segment's waves are whole: what a segment needs from before it is
carried, not decoded again: the SE-wide phase, the stitched waves and implausible records
(`wave.Carried`), and for occupancy the entry-PC registers in force, the waves running on every CU
(synthetic WAVE_START tokens at time -1, whose rows are left out) and whether packets were lost before.
Waves go through `fold` once stitched (waves in the order the whole-blob pass stitches them: a segment's
waves all end in it; None from `fold`: the wave is not kept), and of their `note_waves` entries only those
that can raise a warning are kept (the others counted), so that a blob of short waves holds no per-wave state
whatever its size.
Realtime samples and code-object markers come from the USERDATA REG tokens, kept to the end (a few).
tests/test_windowed.py cuts every gfx950 capture into small windows to check.

Not covered: SHADERDATA and PERFEVENT records stay empty (neither `hotspots` nor `waves` reads them); after
a context save (MISC SAVE_CONTEXT: trap states) segments no longer end, so the rest of such a blob is
decoded as one segment.
"""

from __future__ import annotations

import numpy as np

from attdec.decoders import windowed
from attdec.decoders.common import BlobResult, data_lost
from attdec.decoders.gfx9 import parse_header, run_model, timestamps, truncation
from attdec.decoders.gfx9.packets import GFX9, HEADER_BYTES, SLOTS, TOKEN_NAMES, MiscKind
from attdec.decoders.gfx9.splitter import TYPE_MASK, TimeState, token_lengths, token_starts, token_times, token_values
from attdec.decoders.gfx9.vectorised import (
    COMPUTE_PGM_HI,
    COMPUTE_PGM_LO,
    CONTEXT_COUNT,
    _Lifecycle,
    _realtime,
    by_type,
)
from attdec.decoders.gfx9.wave import Carried
from attdec.decoders.stitch import note_waves
from attdec.decoders.userdata import USERDATA_2, USERDATA_3
from attdec.decoders.windowed import Fold, release_before
from attdec.model import Wave, WaveTable, empty_occupancy
from attdec.model.target import Target

MISC, TIMESTAMP, REG, WAVE_START, WAVE_END, INST, REG_CS, REG_CS_PRIV = (
    TOKEN_NAMES.index(n)
    for n in ("MISC", "TIMESTAMP", "REG", "WAVE_START", "WAVE_END", "INST", "REG_CS", "REG_CS_PRIV")
)
COLUMNS = ("types", "vals", "times", "offsets")
LOOK = 4  # words split past a window's end: its last token ends within them
ADDR_MASK = (1 << 48) - 1
ROW_BLOCK = 1 << 18  # occupancy rows per block kept (8.6 MB)


def _col(packet: str, field: str, v: np.ndarray) -> np.ndarray:
    return GFX9[packet][field].column(v).astype(np.int64)


def _window_end(w: np.ndarray, starts: np.ndarray, b: int) -> int:
    """Where a window of `w` that should end at word `b` ends: after its last token starting before `b`,
    and before a TIME_RESET still waiting for the token it consumes (0: no such place)."""
    s = np.flatnonzero(starts[:b])
    if not len(s):
        return 0
    end = int(s[-1]) + int(token_lengths(w[s[-1] : s[-1] + 1])[0])
    ty = w[s] & np.uint16(TYPE_MASK)
    reset = (ty == MISC) & (w[s] >> np.uint16(GFX9["MISC"]["kind"].lo) == MiscKind.TIME_RESET)
    special = np.flatnonzero((ty == TIMESTAMP) | reset)
    run = 0  # the trailing run of resets among the specials: an odd one leaves its last reset waiting
    while run < len(special) and reset[special[len(special) - 1 - run]]:
        run += 1
    return int(s[special[-1]]) if run % 2 else end


def _quiet_end(t: dict[str, np.ndarray], tcu: int) -> int:
    """The end of the longest head of the tokens `t` (which begin with every target-CU slot free) after which
    every slot is free again, and before any context save; 0 if none."""
    ty, v = t["types"], t["vals"]
    is_life = (ty == WAVE_START) | (ty == WAVE_END)
    life = np.flatnonzero(is_life)
    lv = v[life]
    tgt = (_col("WAVE_START", "cu", lv) == tcu) & (_col("WAVE_START", "sh", lv) == 0)
    tgt &= ~((ty[life] == WAVE_START) & (_col("WAVE_START", "count", lv) > CONTEXT_COUNT))  # context markers
    inst = np.flatnonzero(ty == INST)
    iv = v[inst]
    rel = np.concatenate([life[tgt], inst])
    key = np.concatenate(
        [
            _col("WAVE_START", "simd", lv[tgt]) * SLOTS + _col("WAVE_START", "slot", lv[tgt]),
            _col("INST", "simd", iv) * SLOTS + _col("INST", "slot", iv),
        ]
    )
    o = np.argsort(rel, kind="stable")
    rel, key = rel[o], key[o]
    busy = (ty[rel] != WAVE_END).astype(np.int64)  # each slot's state after the token: a start or an INST fills it
    by = np.argsort(key, kind="stable")
    before = np.zeros(len(rel), np.int64)  # the slot's state before the token
    same = key[by][1:] == key[by][:-1]
    before[by[1:]] = np.where(same, busy[by][:-1], 0)
    n_busy = np.cumsum(busy - before)
    limit = len(ty)
    misc = np.flatnonzero(ty == MISC)
    save = misc[_col("MISC", "kind", v[misc]) == MiscKind.SAVE_CONTEXT]
    if len(save):
        limit = int(save[0])
    if not len(rel):
        return limit
    free = rel[n_busy == 0] + 1
    free = free[free <= limit]
    return int(free[-1]) if len(free) else 0


class _Occupancy:
    """What the occupancy records of one segment need from before it: the entry-PC registers in force, the
    waves running (location -> entry PC) and whether the trace lost packets; the rows so far."""

    def __init__(self, tcu: int, rows: bool = True):
        self.tcu, self.rows = tcu, rows  # rows False: the state is followed, no row kept
        self.pgm: dict[tuple[int, int], tuple[int, int]] = {}  # (key, register) -> its last write (type, value)
        self.running: dict[tuple[int, int, int], int] = {}
        self.lost = False
        self.front: list[np.ndarray] = []  # starts at time 0 for ends without a start, placed first
        # the other rows, in blocks of ROW_BLOCK: a big blob's segments leave millions of rows, a few per segment,
        # which as arrays of their own would hold twice their size in allocator overhead
        self.blocks: list[np.ndarray] = []
        self.used = 0  # rows used in the last block

    def keep(self, rows: np.ndarray) -> None:
        while len(rows):
            if not self.blocks or self.used == len(self.blocks[-1]):
                self.blocks.append(np.empty(ROW_BLOCK, rows.dtype))
                self.used = 0
            n = min(len(rows), ROW_BLOCK - self.used)
            self.blocks[-1][self.used : self.used + n] = rows[:n]
            self.used += n
            rows = rows[n:]

    def joined(self) -> np.ndarray:
        """All rows in one array, each part let go once copied (not twice their size at the end of a big blob)."""
        if self.blocks:
            self.blocks[-1] = self.blocks[-1][: self.used]
        parts = (self.front + self.blocks)[::-1]
        self.front, self.blocks = [], []
        out = np.empty(sum(len(p) for p in parts), empty_occupancy().dtype)
        at = 0
        while parts:
            p = parts.pop()
            out[at : at + len(p)] = p
            at += len(p)
        return out

    def prefix(self) -> list[tuple[int, int]]:
        """(type, value) tokens that put a fresh pass where the blob stands: first a WAVE_START per running
        wave (each with its entry PC's registers; a start and an end somewhere when none runs, so that the
        segment's rows always begin with one at time -1), then the registers in force."""
        ws, we, cs = GFX9["WAVE_START"], GFX9["WAVE_END"], GFX9["REG_CS"]
        out = [(MISC, GFX9["MISC"].encode(kind=MiscKind.PACKET_LOST))] if self.lost else []
        for (cu, simd, slot), pc in self.running.items():
            pgm = pc >> 8
            for addr, data in ((COMPUTE_PGM_LO, pgm & 0xFFFFFFFF), (COMPUTE_PGM_HI, pgm >> 32)):
                out.append((REG_CS, cs.encode(me=1, pipe=0, addr=addr, data=data)))  # official ME (1 + 1) & 1 = 0
            out.append((WAVE_START, ws.encode(cu=cu, simd=simd, slot=slot, sh=1)))
        if not self.running:
            out += [(WAVE_START, ws.encode(sh=1)), (WAVE_END, we.encode(sh=1))]
        return out + list(self.pgm.values())

    def update(self, res: BlobResult, types, vals, times) -> None:
        """After a segment: its rows (the synthetic ones left out) and the state where it ends."""
        if self.rows:
            occ = res.occupancy
            first = int(np.flatnonzero(occ["time"] == -1)[0])
            self.front.append(occ[:first].copy())  # a view would keep the segment's every row
            body = occ[first:]
            self.keep(body[body["time"] != -1])
        of = by_type(types)
        life = _Lifecycle(of, types, vals, times, self.tcu)
        keep = np.flatnonzero(~life.skipped)
        loc = (life.cu[keep] << 16) | (life.simd[keep] << 8) | life.slot[keep]
        _, last = np.unique(loc[::-1], return_index=True)
        last = keep[len(keep) - 1 - last]  # each location's last lifecycle token
        self.running = {
            (int(c), int(s), int(w)): int(pc)
            for c, s, w, pc, on in zip(life.cu[last], life.simd[last], life.slot[last], life.pc[last], life.is_ws[last])
            if on
        }
        cs = np.sort(np.concatenate([of[REG_CS], of[REG_CS_PRIV]]))
        cv = vals[cs]
        key = ((_col("REG_CS", "me", cv) + 1) & 1) << 2 | _col("REG_CS", "pipe", cv)
        addr = _col("REG_CS", "addr", cv)
        for i in np.flatnonzero((addr == COMPUTE_PGM_LO) | (addr == COMPUTE_PGM_HI)).tolist():
            self.pgm[(int(key[i]), int(addr[i]))] = (int(types[cs[i]]), int(cv[i]))


def window_size(nbytes: int, window: int | None = None) -> int | None:
    """The window a blob of `nbytes` is decoded in (whole 16-bit words), None: whole."""
    return windowed.window_size(nbytes, window, 2)


def decode_windowed(
    data, tgt: Target, code, se, where, rules, fold: Fold, window, progress=None, occupancy=True, target_cu=None
) -> BlobResult:
    """Decode one gfx9 SE blob (bytes, or an mmap whose pages are released as windows pass) `window` bytes at
    a time, as rdna.windowed.decode_windowed does an RDNA one (the same arguments); `target_cu` as gfx9.decode's."""
    hdr = parse_header(data, where)
    tcu = hdr["target_cu"] if target_cu is None else int(target_cu)
    return _decode(data, tgt, code, se, rules, fold, window, tcu, progress, occupancy)


def _decode(data, tgt, code, se, rules, fold, window, tcu, progress, occupancy=True) -> BlobResult:
    res = BlobResult(se=se, target=tgt)
    res.bytes_decoded = len(data)
    nbody = len(data) - HEADER_BYTES
    words = np.frombuffer(data, "<u2", count=nbody // 2, offset=HEADER_BYTES)
    n = len(words)
    clock = TimeState()
    carried = Carried()
    occ = _Occupancy(tcu, occupancy)
    seq: dict[tuple[int, int], int] = {}
    problems: list[str] = []
    entry_checked = False
    lost_at: list[int] = []
    regs: list[tuple[np.ndarray, np.ndarray]] = []  # (values, times) of the USERDATA REG tokens (realtime, markers)
    pending: dict[str, np.ndarray] | None = None
    stopped = False
    quiet = [0, 0]  # stitched waves that can raise nothing (ended, walk complete or no records) and their walks
    folded: list[Wave] = []  # what `fold` kept of the waves, until they go into `tables`
    tables: list[WaveTable] = []

    def segment(t: dict[str, np.ndarray]) -> None:
        nonlocal entry_checked, stopped
        pre = occ.prefix()
        types = np.concatenate([np.array([p[0] for p in pre], np.uint8), t["types"]])
        vals = np.concatenate([np.array([p[1] for p in pre], np.uint64), t["vals"]])
        times = np.concatenate([np.full(len(pre), -1, np.int64), t["times"]])
        offsets = np.concatenate([np.full(len(pre), -1, np.int64), t["offsets"]])
        seg = BlobResult(se=se, target=tgt)
        seg.bytes_decoded = len(data)
        base = len(carried.stitched)
        run_model(seg, types, vals, times, offsets, tcu, code, rules, carried=carried)
        for p in seg.problems:
            if p.startswith("kernel entry pc"):  # the blob's first traced wave only
                if not entry_checked:
                    problems.append(p)
            else:
                problems.append(p)
                stopped = stopped or "decoding stopped" in p
        entry_checked = entry_checked or bool(seg.waves)
        before = dict(seq)  # waves per (simd, slot) in the segments before: a segment numbers its own from 0
        raising = []  # the segment's stitched entries note_waves may report on; the others are only counted
        for i, w in enumerate(seg.waves):
            key = (w.simd, w.slot)
            w.seq += before.get(key, 0)
            seq[key] = w.seq + 1
            kept = fold(w)
            if kept is not None:
                folded.append(kept)
            _, ended, trapping, walk, entry = carried.stitched[base + i]
            if (ended or trapping) and (walk.complete if walk is not None else not w.records):
                quiet[0] += 1
                quiet[1] += walk is not None
            else:  # (a stub keeps the record count: records without code to walk are STITCH_INCOMPLETE)
                stub = kept if kept is not None else Wave(w.se, w.cu, w.simd, w.slot, w.begin, w.end, folded=w.records)
                raising.append((stub, ended, trapping, walk, entry))
        carried.stitched[base:] = raising
        if len(folded) >= windowed.FOLDED_BLOCK and folded[0].folded is not None:  # as columns: no object per wave
            tables.append(WaveTable.of(folded))
            folded.clear()
        occ.update(seg, types, vals, times)
        misc = t["types"] == MISC
        occ.lost = occ.lost or bool((_col("MISC", "kind", t["vals"][misc]) == MiscKind.PACKET_LOST).any())

    a = 0  # the word where the next window's first token starts
    b = window // 2  # words a window should hold
    while a < n and not stopped:
        last = a + b + LOOK >= n
        if last:
            w = words[a:]
            starts, truncated = token_starts(w)
            partial = truncated is not None or nbody % 2
            if truncated is not None:
                problems.insert(0, truncation(int(w[truncated]), a + truncated, nbody))
            if partial:  # as gfx9.decode: read on as if zero bytes followed
                w = np.frombuffer(bytes(data[HEADER_BYTES + 2 * a :]) + bytes(8 + nbody % 2), "<u2")
                starts, _ = token_starts(w)
            end = len(w)
        else:
            w = words[a : a + b + LOOK]
            starts, _ = token_starts(w)
            partial = False
            end = _window_end(w, starts, b)
            if not end:  # no place to end it: a longer window
                b *= 2
                continue
        at, times = token_times(w[:end], starts[:end], timestamps(w), bool(partial), state=clock)
        types = (w[at] & TYPE_MASK).astype(np.uint8)
        new = {
            "types": types,
            "vals": token_values(w, at, types),
            "times": times,
            "offsets": 2 * (at + a) + HEADER_BYTES,
        }
        del w, starts, at, times, types
        misc = np.flatnonzero(new["types"] == MISC)
        lost = misc[_col("MISC", "kind", new["vals"][misc]) == MiscKind.PACKET_LOST]
        lost_at += new["offsets"][lost].tolist()
        reg = (new["types"] == REG).nonzero()[0]  # those `_realtime` reads: millions of REG tokens in 1 GB
        reg = reg[np.isin(_col("REG", "addr", new["vals"][reg]), (USERDATA_2, USERDATA_3))]
        regs.append((new["vals"][reg], new["times"][reg]))
        pending = {k: np.concatenate([pending[k], new[k]]) for k in COLUMNS} if pending else new
        cut = len(pending["types"]) if last else _quiet_end(pending, tcu)
        if cut or last:
            segment({k: v[:cut] for k, v in pending.items()})
            pending = {k: v[cut:] for k, v in pending.items()}
        a += end
        b = window // 2
        if last:
            break
        release_before(data, HEADER_BYTES + 2 * a)
        if progress is not None:
            progress(HEADER_BYTES + 2 * a)

    res.waves = windowed.wave_table(tables, folded)  # type: ignore[assignment]  # folded: a WaveTable
    res.occupancy = occ.joined()
    rv = np.concatenate([v for v, _ in regs]) if regs else np.zeros(0, np.uint64)
    rt = np.concatenate([t for _, t in regs]) if regs else np.zeros(0, np.int64)
    realtime, proto = _realtime(np.arange(len(rv)), rv, rt)
    res.realtime.extend(realtime)
    res.code_objects, res.rt_frequency = proto.markers, proto.rt_frequency
    res.problems = problems
    note_waves(res, carried.stitched, (quiet[0], quiet[1]), rules)
    carried.found.note(res)
    data_lost(res, lost_at)
    return res
