"""A big RDNA blob decoded in windows, so that memory follows the window and not the blob.

Traced waves are independent once their tokens are known, so the blob is split a window of bytes at a
time, from the token boundary and with the time the previous window ended at (`_Splitter`), and each
window's tokens are decoded after the tokens carried from before it: the HEADER and the compute-state
registers in force, and every token of the waves still open in their slots. The waves that left their
slots are stitched to PCs (one walker for the whole blob, in the whole blob's stitch order) and handed to
`fold`, which keeps what the caller needs of them (aggregates); the open ones are decoded again with the
next window. Occupancy, code-object markers and the kernel-entry check come from one decode of the blob's
lifecycle, register and HEADER tokens at the end (a few per wave). The result is the whole-blob decode's,
its waves as `fold` returned them; tests/test_windowed.py cuts every capture into small windows to check.

Not covered: a blob's realtime samples, SHADERDATA and other-SIMD records (none of `hotspots` and `waves`
reads them) stay empty.
"""

from __future__ import annotations

import numpy as np

from attdec.decoders import windowed
from attdec.decoders.common import (
    BlobResult,
    CodeMap,
    Implausible,
    NotVectorisable,
    data_lost,
    implausible,
    official_order,
)
from attdec.decoders.compat import Rules
from attdec.decoders.rdna.packets import COMPUTE_PGM_HI, COMPUTE_PGM_LO, FORMATS, RdnaFormat, T
from attdec.decoders.rdna.scalar import decode_scalar
from attdec.decoders.rdna.splitter import (
    LINE_BYTES,
    MODEL_TOKENS,
    Tokens,
    lost_sync_problem,
    ready_reorder,
    split,
    truncation_problem,
)
from attdec.decoders.rdna.stitch import walker
from attdec.decoders.rdna.vectorised import decode_vectorised, vectorisable
from attdec.decoders.rdna.wave import SLOTS, TracedWave, as_reported, reported_cu, to_wave
from attdec.decoders.stitch import note_waves
from attdec.decoders.windowed import Fold, Progress, release_before
from attdec.model import Wave
from attdec.model.target import Target

LOOKAHEAD = 64  # bytes split past a window's end (whole trace lines), where its last token ends and the next begins

COLUMNS = ("pos", "type", "time", "word", "lost")
LIFECYCLE = ("WAVE_START", "WAVE_END")  # (no WAVE_START_EXT: it starts no wave, vectorised._STARTS)
# what the occupancy decode reads: lifecycle tokens, registers (entry PCs, code-object markers), HEADERs, MISC
OCCUPANCY_TOKENS = (*LIFECYCLE, "REG", "HEADER", "MISC")


def window_size(nbytes: int, window: int | None = None) -> int | None:
    """The window a blob of `nbytes` is decoded in (whole trace lines), None: whole."""
    return windowed.window_size(nbytes, window, LINE_BYTES)


def _tokens(cols: dict[str, np.ndarray]) -> Tokens:
    tk = Tokens()
    for k in COLUMNS:
        setattr(tk, k, cols[k])
    tk.lost_at = np.zeros(0, np.int64)
    tk.realtime = np.zeros((0, 2), np.int64)
    tk.problems, tk.nibbles_used, tk.cut_at = [], 0, None
    return tk


def _take(tk: Tokens, sel) -> dict[str, np.ndarray]:
    return {k: getattr(tk, k)[sel] for k in COLUMNS}


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([p[k] for p in parts]) for k in COLUMNS}


def _decode(tk: Tokens, fmt: RdnaFormat, tgt: Target, code, se: int, where: str, rules: Rules, emit=None) -> BlobResult:
    """rdna.decode's choice of model, on tokens already split (the vectorised model emits nothing before
    it is sure it covers the tokens)."""
    if insts := vectorisable(tk, fmt, rules):
        try:
            return decode_vectorised(tk, fmt, b"", tgt, code, se, where, rules, emit, insts)
        except NotVectorisable:
            pass
    return decode_scalar(tk, fmt, b"", tgt, code, se, where, rules, emit)


class _Splitter:
    """The blob's model tokens window by window, each window starting at the token boundary and time where
    the previous one ended; lost-packet flags, lost sync and truncation as `split` gives them for the whole
    blob (byte offsets in the blob)."""

    def __init__(self, data, fmt: RdnaFormat, whole_window: bool, window: int, time_extra: int = 0):
        self.data, self.fmt, self.whole_window, self.window = data, fmt, whole_window, window
        self.time_extra = time_extra
        self.start = 0  # nibble where the next window's first token starts
        self.t0 = 0  # the time before it
        self.lost_pending = False  # a TIMESTAMP said packets were lost, and no model token followed it yet
        self.lost_at: list[int] = []
        self.unknown, self.unknown_at = 0, -1
        self.problems: list[str] = []
        self.done = False
        self.keep = np.zeros(len(T), bool)
        self.keep[[T[k] for k in MODEL_TOKENS]] = True

    def next(self) -> dict[str, np.ndarray]:
        data, n = self.data, len(self.data)
        a = (self.start // 2) // LINE_BYTES * LINE_BYTES  # whole trace lines, as the blob has them
        end = a + self.window
        look = LOOKAHEAD
        while True:
            last = end + look >= n
            chunk = bytearray(data[a : n if last else end + look])
            skip = self.start - 2 * a  # nibbles before the window's first token: NOPs (zero nibbles) now
            chunk[: skip // 2] = bytes(skip // 2)
            if skip & 1:
                chunk[skip // 2] &= 0xF0
            tk = split(
                chunk,  # type: ignore[arg-type]
                self.fmt,
                keep=None,
                whole_window=self.whole_window,
                time_extra=self.time_extra,
            )
            pos, time = tk.pos + 2 * a, tk.time
            if last:
                cut = len(pos)
                break
            # the next window starts at a token whose time is above the one before it, so that no WAVE_READY
            # moves across the cut (ready_reorder), and whose whole token lies in this split
            k = max(int(np.searchsorted(pos, 2 * end)), 1)
            ok = np.flatnonzero(time[k:] > time[k - 1 : -1]) + k if k < len(pos) else np.zeros(0, np.int64)
            ok = ok[pos[ok] + 32 <= 2 * (end + look)]
            if len(ok):
                cut = int(ok[0])
                break
            look *= 2
        typ = tk.type[:cut]
        unk = np.flatnonzero(typ == T["UNKNOWN"])
        if len(unk):
            self.unknown_at = self.unknown_at if self.unknown else int(pos[unk[0]]) // 2
            self.unknown += len(unk)
        sel = np.flatnonzero(self.keep[typ])
        out = {"pos": pos[sel], "type": typ[sel], "time": time[sel] + self.t0, "word": tk.word[sel]}
        lost = np.zeros(len(sel), bool)
        ts = np.searchsorted(tk.pos, 2 * tk.lost_at)  # the TIMESTAMPs that say packets were lost
        ts = ts[ts < cut]
        self.lost_at += (tk.lost_at[: len(ts)] + a).tolist()
        if self.lost_pending and len(sel):
            lost[0], self.lost_pending = True, False
        nxt = np.searchsorted(sel, ts, side="right")  # the flag goes to the next model token
        lost[nxt[nxt < len(sel)]] = True
        self.lost_pending = self.lost_pending or bool((nxt >= len(sel)).any())
        out["lost"] = lost
        if last:
            self.done = True
            # as `split` says them of the whole blob (the last window starts on a whole line: same remainder)
            if n % LINE_BYTES:
                cut_at = None if tk.cut_at is None else tk.cut_at + a
                self.problems.append(truncation_problem(n, cut_at, self.whole_window))
            if self.unknown:
                self.problems.append(lost_sync_problem(self.unknown, self.unknown_at))
        else:
            self.start, self.t0 = int(pos[cut]), self.t0 + int(time[cut - 1])
            release_before(data, a)  # the bytes before this window are not read again
        return out


class _Carry:
    """Which tokens of a window's decode the next window decodes again."""

    def __init__(self, fmt: RdnaFormat):
        tb = fmt.table
        self.tb = tb
        self.slot_fields = [
            (T["INST"], tb["INST"]["slot"]),
            (T["VALU_INST"], tb["VALU_INST"]["slot"]),
            (T["IMM_ONE"], tb["IMM_ONE"]["slot"]),
            (T["NEW_PC"], tb["NEW_PC"].word_field("slot")),
        ]
        self.life = [T[k] for k in LIFECYCLE]

    def __call__(self, tk: Tokens, open_waves: list[TracedWave]) -> dict[str, np.ndarray]:
        tb, typ, w = self.tb, tk.type, tk.word
        n = len(typ)
        keep = np.zeros(n, bool)
        # lifecycle tokens: where each open wave began (its last WAVE_START at its place, at its begin time)
        li = np.flatnonzero(np.isin(typ, self.life))
        lw, is_ws = w[li], typ[li] != T["WAVE_END"]
        ws_p, we_p = tb["WAVE_START"], tb["WAVE_END"]

        def field(name: str) -> np.ndarray:
            return np.where(is_ws, ws_p[name].column(lw), we_p[name].column(lw)).astype(np.int64)

        cu, simd, slot = (field("sa") << 7) | field("wgp"), field("simd"), field("slot")
        start = np.full(SLOTS, n, np.int64)  # per slot, the first token carried
        for wv in open_waves:
            here = (cu == wv.cu) & (simd == wv.simd) & (slot == wv.slot)
            began = np.flatnonzero(here & is_ws & (tk.time[li] == wv.begin))
            starts = began if len(began) else np.flatnonzero(here & is_ws)
            s = int(li[starts[-1]]) if len(starts) else 0
            start[wv.slot] = s
            keep[li[here & (li >= s)]] = True
        first = int(start.min())
        # the open waves' instruction tokens: by their slot field, or by a bit of their mask
        for t, f in self.slot_fields:
            at = np.flatnonzero(typ == t)
            keep[at] = at >= start[f.column(w[at]).astype(np.int64) & (SLOTS - 1)]
        at = np.flatnonzero((typ == T["IMMEDIATE"]) | (typ == T["WAVE_READY"]))
        mask = tb["IMMEDIATE"]["mask"].column(w[at]).astype(np.int64)
        for b in np.flatnonzero(start < n).tolist():
            keep[at] |= (((mask >> b) & 1) != 0) & (at >= start[b])
        misc = np.flatnonzero(typ == T["MISC"])
        keep[misc[misc >= first]] = True
        # the HEADER and the compute-state registers in force where the carried tokens begin, and later ones
        hdr = np.flatnonzero(typ == T["HEADER"])
        keep[hdr[hdr >= first]] = True
        if len(hdr[hdr < first]):
            keep[hdr[hdr < first][-1]] = True
        reg = np.flatnonzero(typ == T["REG"])
        rp = tb["REG"]
        rw = w[reg]
        cs = rp["cs"].column(rw).astype(bool)
        addr = rp["addr"].column(rw)
        pgm = cs & ((addr == COMPUTE_PGM_LO) | (addr == COMPUTE_PGM_HI))
        reg, rw, addr = reg[pgm], rw[pgm], addr[pgm]
        keep[reg[reg >= first]] = True
        before = reg < first
        if before.any():
            key = ((rp["me"].column(rw) & np.uint64(1)) << np.uint64(40)) | (rp["pipe"].column(rw) << np.uint64(32))
            rev = (key | addr)[before][::-1]
            _, last = np.unique(rev, return_index=True)  # the last write of each (me & 1, pipe, register)
            keep[reg[before][len(rev) - 1 - last]] = True
        return _take(tk, keep)


def decode_windowed(
    data,
    tgt: Target,
    code: CodeMap | None,
    se: int,
    where: str,
    rules: Rules,
    fold: Fold,
    window: int,
    progress: Progress | None = None,
    occupancy: bool = True,
) -> BlobResult:
    """Decode one RDNA SE blob (bytes, or an mmap whose pages are released as windows pass) `window` bytes at
    a time; each traced wave goes through `fold` once stitched, and the result's waves are what it returned.
    `progress` is told the bytes split so far after each window but the last; `occupancy` False: no
    occupancy records kept."""
    fmt = FORMATS[tgt.generation]
    whole_window = fmt.whole_window and rules.gfx12_end_window
    splitter = _Splitter(data, fmt, whole_window, window, rules.rdna_time_token_extra)
    carry = _Carry(fmt)
    res = BlobResult(se=se, target=tgt)
    res.bytes_decoded = len(data)
    walk = walker(code, fmt.generation, rules)
    cu = tgt.cu
    slots = cu.wave_slots if cu is not None else 32
    stitched: list = []  # (wave, ended, trapping, walk, entry pc) for note_waves, waves as folded
    done: list[tuple[Wave, bool, tuple[int, int, int], bool]] = []  # (wave, ended, implausible, kept), stitch order
    deferred: dict[int, list[tuple[TracedWave, bool]]] = {}  # slot -> waves cut, stitched at the end

    def finish(wv: TracedWave, excl: bool) -> None:
        """Stitch a wave that left its slot, leave out what drop_implausible would, and fold it."""
        wave = to_wave(wv, walk, excl, stitched)
        wave.cu = reported_cu(wave.cu, rules)
        counts = (0, 0, 0)
        kept: Wave | None
        if wave.slot >= slots:  # a slot the SIMD lacks: the wave is left out
            counts = (0, 0, max(len(wave.insts), 1))
            kept = Wave(wave.se, wave.cu, wave.simd, wave.slot, wave.begin, wave.end)
        else:
            bad = implausible(wave.insts["time"], wave.begin, wave.end)
            if bad is not None:
                early, late = bad
                counts = (int(early.sum()), int(late.sum()), 0)
                wave.insts = wave.insts[~(early | late)]
            kept = fold(wave)
        listed = kept is not None and wave.slot < slots  # None: counted by `fold`, not kept
        if kept is None:  # (a stub keeps the record count: records without code to walk are STITCH_INCOMPLETE)
            kept = Wave(wave.se, wave.cu, wave.simd, wave.slot, wave.begin, wave.end, folded=wave.records)
        stitched[-1] = (kept, *stitched[-1][1:])
        done.append((kept, wv.complete, counts, listed))

    carried: dict[str, np.ndarray] | None = None
    occ_parts = []
    occ_keep = np.zeros(len(T), bool)
    occ_keep[[T[k] for k in OCCUPANCY_TOKENS]] = True
    emitted: list[tuple[TracedWave, bool]] = []

    def emit(wv: TracedWave, excl: bool) -> None:
        emitted.append((wv, excl))

    while not splitter.done:
        new = _tokens(splitter.next())
        if fmt.ready_early:
            ready_reorder(new)
        occ_parts.append(_take(new, occ_keep[new.type]))
        tk = _tokens(_concat([carried, _take(new, slice(None))]) if carried else _take(new, slice(None)))
        del new
        emitted.clear()
        _decode(tk, fmt, tgt, None, se, where, rules, emit)
        last_of = {wv.slot: i for i, (wv, _) in enumerate(emitted)}
        flush: dict[int, list[tuple[TracedWave, bool]]] = {}
        open_waves = []
        for i, (wv, excl) in enumerate(emitted):
            if wv.complete and last_of[wv.slot] != i:  # left its slot for a new wave: final
                finish(wv, excl)
            elif not splitter.done:
                if last_of[wv.slot] == i:
                    open_waves.append(wv)
                else:  # cut, and its slot has a new wave: final, stitched with the end of the blob's
                    if wv.insts is not None:
                        wv.insts = wv.insts.copy()  # not a view of the window's records
                    deferred.setdefault(wv.slot, []).append((wv, excl))
            else:
                flush.setdefault(wv.slot, []).append((wv, excl))
        if splitter.done:  # the end of the blob: what `Slots.flush` emits, slot by slot, under the last HEADER
            excl_end = next(iter(flush.values()))[0][1] if flush else None
            for slot in range(SLOTS):
                for wv, excl in deferred.get(slot, []) + flush.get(slot, []):
                    finish(wv, excl if excl_end is None else excl_end)
        else:
            carried = carry(tk, open_waves)
        del tk
        emitted.clear()
        if progress is not None and not splitter.done:
            progress(splitter.start // 2)

    # occupancy, code-object markers, the kernel-entry check: one decode of the lifecycle tokens
    occ = _decode(_tokens(_concat(occ_parts)), fmt, tgt, code, se, where, rules)
    res.code_objects, res.rt_frequency = occ.code_objects, occ.rt_frequency
    if occupancy:
        res.occupancy = occ.occupancy
    res.problems = splitter.problems + [p for p in occ.problems if p.startswith("kernel entry pc")]
    note_waves(res, stitched, rules=rules)
    data_lost(res, splitter.lost_at)
    waves = [w for w, *_ in done]
    order = official_order(waves, [c for _, c, *_ in done]) if rules.end_time_order else waves
    found = {id(w): (cnt, ok) for w, _, cnt, ok in done}
    dropped = Implausible()
    kept = []
    for w in order:
        cnt, ok = found[id(w)]
        dropped.add(w, *cnt)
        if ok:
            kept.append(w)
    dropped.note(res)
    res.waves = windowed.wave_table([], kept)  # type: ignore[assignment]  # folded: a WaveTable
    return as_reported(res, rules, waves=False)  # (the folded waves' cu is reported already)
