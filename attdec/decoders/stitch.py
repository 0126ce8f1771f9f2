"""PC reconstruction ("stitching"): give each instruction record of a wave the PC it executed.

The trace names almost no instruction; the official decoder walks the kernel code from the wave's entry
PC and matches each record to the next code line whose category fits (sqtt-format.md §8; facts and
quirks in docs/sqtt-rdna.md). This module is that walk, shared by the RDNA and gfx9 decoders:
family-specific rules are switched by `family` (9, 11, 12).

Code lines come from a `CodeMap` (absolute PC -> attdec.isa Instruction) and are cached per blob in a
`CodeView`, like the official PCTranslator; the cache carries per-line state (`parsed`, the gfx12
excluded-barrier mark) from one wave to the next, which the official walk depends on.
"""

from __future__ import annotations

import numpy as np

from attdec.decoders.common import CodeMap
from attdec.model import Category

# Record categories as plain ints (the walk compares them millions of times)
R_SMEM, R_SALU, R_VMEM, R_FLAT, R_LDS, R_VALU = (
    int(c) for c in (Category.SMEM, Category.SALU, Category.VMEM, Category.FLAT, Category.LDS, Category.VALU)
)
R_JUMP, R_NEXT, R_IMMED, R_CONTEXT, R_MESSAGE = (
    int(c) for c in (Category.JUMP, Category.NEXT, Category.IMMED, Category.CONTEXT, Category.MESSAGE)
)
R_NOT_FINISHED = 14  # gfx9: an ISSUE no INST token described (internal category); the walk stops there
# Line categories: the record categories a line can be, plus the walk's own kinds.
L_SKIP, L_SMEM, L_SALU, L_VMEM, L_FLAT, L_LDS, L_VALU, L_IMMED, L_BVH = 0, 1, 2, 3, 4, 5, 6, 9, 12
L_DONT_KNOW, L_BRANCH, L_BARRIER_WAIT_EXCLUDED, L_MFMA_SCALE, L_GFX9_BARRIER, L_V_MOV_B64 = range(20, 26)

# Mnemonic prefixes -> line category (official trie). The walk takes the first (shortest) prefix it
# reaches and skips characters that continue no prefix.
PREFIXES = {
    L_IMMED: (
        "s_waitcnt",
        "s_wait_idle",
        "s_wait_kmcnt",
        "s_wait_loadcnt",
        "s_wait_storecnt",
        "s_wait_bvhcnt",
        "s_wait_expcnt",
        "s_wait_dscnt",
        "s_wait_samplecnt",
        "s_wait_event",
        "s_wait_xcnt",
        "s_wait_tensor",
        "s_wait_async",
        "s_nop",
        "s_sleep",
        "s_wakeup",
        "s_sendmsg",
        "s_setprio ",
        "s_set_inst",
        "s_inst_prefetch",
        "s_setkill",
        "s_version",
        "s_trap",
        "s_barrie",
        "s_endpgm",
        "s_icache_inv",
        "s_dcache_inv",
        "s_incperflvl",
        "s_sethalt",
        "s_decperflvl",
        "s_setvskip",
        "s_ttrace",
        "s_clause",
        "s_monitor",
    ),
    L_SKIP: ("s_wait_dep", "s_wait_alu", "buffer_nop", "s_set_vgpr", "s_delay"),
    L_SALU: (
        "s_setprio_inc",
        "s_call",
        "s_cvt",
        "s_getreg",
        "s_setreg",
        "s_add",
        "s_sub",
        "s_and",
        "s_or",
        "s_pack",
        "s_round",
        "s_denorm",
        "s_ctz",
        "s_cls",
        "s_cmp",
        "s_bit",
        "s_mov",
        "s_mul",
        "s_ash",
        "s_bf",
        "s_lsh",
        "s_min",
        "s_max",
        "s_abs",
        "s_cmov",
        "s_not",
        "s_nor",
        "s_wqm",
        "s_quadmask",
        "s_brev",
        "s_bcnt",
        "s_f",
        "s_sext",
        "s_cselect",
        "s_xor",
        "s_xnor",
        "s_nand",
        "s_getpc",
        "s_setpc",
        "s_swappc",
        "s_get_pc",
        "s_set_pc",
        "s_swap_pc",
    ),
    L_SMEM: (
        "s_load",
        "s_buffer",
        "s_atomic",
        "s_atc",
        "s_scratch",
        "s_store",
        "s_dcache",
        "s_memrealtime",
    ),  # no "s_prefetch": the oracle build classifies s_prefetch_* as SALU (see docs)
    L_VMEM: (
        "buffer_l",
        "buffer_s",
        "buffer_a",
        "buffer_g",
        "buffer_i",
        "buffer_w",
        "buffer_p",
        "buffer_d",
        "tbuffer_",
        "global_",
        "scratch_",
        "cluster_",
        "tensor_",
        "dds_",
        "image_l",
        "image_s",
        "image_a",
        "image_m",
        "image_g",
    ),
    L_FLAT: ("flat_",),
    L_LDS: ("ds_", "lds_"),
    L_BVH: ("image_bvh",),
}


def _build_trie():
    root: dict = {}
    for cat, prefixes in PREFIXES.items():
        for p in prefixes:
            node = root
            for ch in p:
                node = node.setdefault(ch, {})
            node[None] = cat
    return root


_TRIE = _build_trie()


def line_category(text: str, family: int) -> int:
    """Category of a code line from its text, as the official decoder derives it."""
    if "branch" in text:
        return L_BRANCH
    if text.startswith("v_"):
        if family == 9 and text.startswith("v_mfma_scale_"):
            return L_MFMA_SCALE
        if family == 12 and text.startswith("v_mov_b64"):
            return L_V_MOV_B64
        return L_VALU
    cat = None
    node = _TRIE
    for ch in text:
        node = node.get(ch, node)
        cat = node.get(None)
        if cat is not None:
            break
    if cat is None:
        cat = L_SALU if text.startswith("s_") else L_DONT_KNOW
    if family == 9 and cat == L_IMMED and text.startswith("s_barrier"):
        return L_GFX9_BARRIER
    if family == 12 and cat == L_LDS and text.startswith("ds_bvh"):
        return L_BVH
    return cat


def _trivial(rec: int, line: int) -> bool:
    if line == rec:
        return True
    if line == L_BRANCH:
        return rec == R_NEXT
    if rec == R_MESSAGE:
        return line == L_IMMED
    if rec == R_FLAT:
        return line == L_VMEM
    return False


def _skippable(line: int) -> bool:
    return line != L_SALU and line <= L_IMMED


def _elaborate(rec: int, line: int) -> bool:
    if _trivial(rec, line):
        return True
    if line == L_BRANCH:
        return rec == R_JUMP
    if rec == R_IMMED:
        return _skippable(line)
    return False


class Line:
    """One code line as the walk sees it (official `assemblyLine`)."""

    __slots__ = ("addr", "cat", "next", "parsed", "target", "text")

    def __init__(self, addr, text, cat, nxt, target):
        self.addr, self.text, self.cat, self.next, self.target = addr, text, cat, nxt, target
        self.parsed = False


class CodeView:
    """Absolute PC -> Line, cached; None where the code map has no instruction."""

    # s_endpgm answers a memory size of 0 to the official walk (its ISA callback does, and so does the
    # listing the oracle was made with), so the line after it is itself.
    ZERO_SIZE = ("s_endpgm",)

    def __init__(self, code: CodeMap, family: int):
        self.code, self.family = code, family
        self.lines: dict[int, Line | None] = {}
        self.jumps: dict[int, Line | None] = {}

    def get(self, pc: int) -> Line | None:
        try:
            return self.lines[pc]
        except KeyError:
            pass
        line = None
        ins = self.code.get(pc) if pc else None
        if ins is not None:
            text = getattr(ins, "text", "") or ""
            mnem = getattr(ins, "mnemonic", "") or text.split(" ", 1)[0]
            size = 0 if mnem in self.ZERO_SIZE else int(getattr(ins, "size", 4) or 0)
            cat = line_category(text, self.family)
            target = None
            if cat == L_BRANCH:
                target = self._branch_target(pc, ins, text)
            line = Line(pc, text, cat, pc + size, target)
        self.lines[pc] = line
        return line

    @staticmethod
    def _branch_target(pc, ins, text):
        """PC + 4 + 4*simm16 from the last operand as printed; the ISA's own target when not a number."""
        last = text.split(" ")[-1] if text else ""
        try:
            delta = int(last)
        except ValueError:
            tgt = getattr(ins, "target", None)
            if tgt is not None:
                return pc + (tgt - ins.address)
            delta = 0
        if delta >= 32768:
            delta -= 65536
        return pc + 4 + 4 * delta

    def jump(self, line: Line) -> Line | None:
        try:
            return self.jumps[line.addr]
        except KeyError:
            tgt = self.get(line.target) if line.target is not None else None
            self.jumps[line.addr] = tgt
            return tgt


class Stitcher:
    """Per-blob walker; `stitch` fills the pc column of one wave's records (official `stitchWave`)."""

    MAX_FAILED = 1000

    def __init__(self, code: CodeMap, family: int):
        self.view = CodeView(code, family)
        self.family = family
        self.incomplete = 0  # waves whose records did not all get a PC
        self.memo: dict = {}  # (next line pc, skipped immediates, record category) -> outcome
        self.wave_memo: dict = {}  # (record categories, PC slots, barrier flag) -> pcs of a whole wave
        self.widened: list = []
        self.cacheable = True

    def stitch(
        self, insts: np.ndarray, pc_infos, timeline, begin: int, exclude_barrier_wait: bool = False, end: int = 0
    ):
        """Fill insts["pc"] (and apply the walk's timing tweaks); returns (insts, timeline).

        `exclude_barrier_wait`: gfx12 only. `end`: the wave's end time so far (gfx9 v_mfma_scale widening
        looks at it)."""
        if self.family == 9:
            return self._stitch_gfx9(insts, pc_infos, timeline, begin, end)
        # Waves of one kernel usually repeat the same record categories; when a walk touched no
        # stateful line (gfx12 barrier waits) its outcome depends only on that sequence and the PC
        # slots, so it is reused.
        key = (insts["category"].tobytes(), tuple(map(tuple, pc_infos)), exclude_barrier_wait)
        hit = self.wave_memo.get(key)
        if hit is not None:
            pcs_a, widen, done = hit
            insts["pc"] = pcs_a
            if len(widen):
                d, st = insts["duration"], insts["stall"]
                insts["duration"][widen] = np.maximum(d[widen], st[widen] + 2)
            if done < len(insts):
                self.incomplete += 1
            return insts, timeline
        cats = insts["category"].tolist()
        pcs = [0] * len(cats)
        durs = insts["duration"].tolist() if self.family == 12 else None
        stalls = insts["stall"].tolist() if self.family == 12 else None
        self.widened = []
        self.cacheable = True
        done, barriers, dur_changed = self._walk(cats, pcs, durs, stalls, pc_infos, exclude_barrier_wait)
        if done < len(cats):
            self.incomplete += 1
        insts["pc"] = np.array(pcs, np.uint64)
        if self.cacheable and not barriers:
            self.wave_memo[key] = (insts["pc"].copy(), np.array(self.widened, np.int64), done)
        if dur_changed:
            insts["duration"] = np.array(durs, np.int64)
        if self.family == 12 and barriers and exclude_barrier_wait:
            insts, timeline = _insert_barrier_waits(insts, timeline, barriers, begin)
        return insts, timeline

    def _stitch_gfx9(self, insts, pc_infos, timeline, begin, end):
        cats = insts["category"].tolist()
        g9 = _Gfx9Walk(insts, begin, end)
        pcs = [0] * len(cats)
        if self._walk_gfx9(cats, pcs, pc_infos, g9) < len(cats):
            self.incomplete += 1
        insts = g9.result()
        insts["pc"] = np.array(pcs, np.uint64)
        return insts, timeline

    def _known(self, cats, pcs, pc_infos, i, pii, nxt):
        """Step over the records the walk does not match, shared by both walks: PC slots from the trace
        (a PC outside the code skips to the next slot), CONTEXT records, and records that already have a
        PC (SKIP lines after it are stepped over; the line after it, or its branch target on a JUMP, is
        the next to match; on gfx9 a barrier's PC goes to the record after it too).

        Callers test for such a record first, so a record to match costs no call. Returns
        (i, pii, nxt, end): `end` is the walk's result when it must stop here, else None."""
        view = self.view
        get = view.get
        n, npi = len(cats), len(pc_infos)
        while i < n:
            while pii < npi and pc_infos[pii][0] <= i:
                if pc_infos[pii][0] == i:
                    pc = pc_infos[pii][1]
                    if get(pc) is not None:
                        pcs[i] = pc
                    elif pii + 1 < npi:
                        i = pc_infos[pii + 1][0]
                        if i >= n:
                            return i, pii, nxt, i
                pii += 1
            rec = cats[i]
            if rec == R_CONTEXT:
                i += 1
                continue
            if not pcs[i]:
                break
            cur = i
            i += 1
            nxt = None
            line = get(pcs[cur])
            if line is None:
                return i, pii, nxt, 0
            while line.cat == L_SKIP and line.next:
                pcs[cur] = line.next
                line = get(line.next)
                if line is None:  # the official lookup throws here: no next line
                    break
            if line is None:
                continue
            if line.cat == L_GFX9_BARRIER and i < n:
                pcs[i] = pcs[cur]
                i += 1
            if line.cat == L_BRANCH and rec == R_JUMP:
                nxt = view.jump(line)
            else:
                nxt = get(line.next)
        return i, pii, nxt, None

    def _walk_gfx9(self, cats, pcs, pc_infos, g9):
        """The walk one line at a time, with the gfx9 rules of §8.4 (records may be swapped or widened,
        so nothing is memoised); returns the records walked."""
        view = self.view
        get = view.get
        n, npi = len(cats), len(pc_infos)
        i = pii = 0
        failed = 0
        nxt = None
        while i < n and failed < self.MAX_FAILED:
            if (pii < npi and pc_infos[pii][0] <= i) or pcs[i] or cats[i] == R_CONTEXT:
                i, pii, nxt, end = self._known(cats, pcs, pc_infos, i, pii, nxt)
                if end is not None:
                    return end
                continue
            rec = cats[i]
            line, nxt = nxt, None
            if line is None or not line.text or rec == R_NOT_FINISHED:
                break
            nxt = get(line.next)
            lc = line.cat
            if lc in (L_DONT_KNOW, L_SKIP):
                continue
            matched = True
            if _trivial(rec, lc):
                pass
            elif lc == L_BRANCH:
                if rec != R_JUMP:
                    break
                nxt = view.jump(line)
            elif lc == L_MFMA_SCALE and rec == R_VALU:
                g9.mfma_scale(i)
            elif lc == L_GFX9_BARRIER:
                if rec == R_MESSAGE:  # barrier entry (MESSAGE) and exit (IMMED) share the PC
                    pcs[i] = line.addr
                    if i + 1 < n and cats[i + 1] == R_IMMED:
                        pcs[i + 1] = line.addr
                    i += 2
                    failed = 0
                    continue
                matched = rec == R_IMMED
            else:
                matched = False
                if i + 1 < n and g9.swapped_match(cats, i, line, get):
                    g9.swap(cats, pcs, i)
                    nxt = line
                elif (line.text.startswith("s_waitcnt") or "_load_" in line.text) and "scratch_" not in line.text:
                    break  # no skipped immediates on gfx9 to pay an s_waitcnt for
            if matched:
                pcs[i] = line.addr
                i += 1
                failed = 0
            else:
                failed += 1
        return i

    def _walk(self, cats, pcs, durs, stalls, pc_infos, excl_bw):
        """Assign pcs[i] for each record; returns (records walked, excluded barrier waits, durations changed).

        Records without PC information are matched by `_match`; its outcome depends only on (next line,
        skipped-immediate count, record category) unless it touched a gfx12 barrier-wait line, so it is
        memoised per blob: waves of the same kernel repeat the same transitions.
        """
        fam = self.family
        get = self.view.get
        memo = self.memo
        n, npi = len(cats), len(pc_infos)
        i = pii = 0
        skipped = 0
        nxt = None
        barriers = []
        dur_changed = False
        while i < n:
            if (pii < npi and pc_infos[pii][0] <= i) or pcs[i] or cats[i] == R_CONTEXT:
                i, pii, nxt, end = self._known(cats, pcs, pc_infos, i, pii, nxt)
                if end is not None:
                    return end, barriers, dur_changed
                continue
            rec = cats[i]
            if fam >= 12 and i == 0:
                return 0, barriers, dur_changed
            if nxt is None:
                break
            key = (nxt.addr, skipped, rec)
            hit = memo.get(key)
            if hit is None:
                hit = self._match(cats, i, nxt, skipped, excl_bw, barriers)
                if hit[4]:
                    memo[key] = hit
                else:
                    self.cacheable = False
            pc, nxt_addr, skipped, widen, _ = hit
            if not pc:
                break
            if widen:
                self.widened.append(i)
                if durs[i] < stalls[i] + 2:
                    durs[i] = stalls[i] + 2
                    dur_changed = True
            pcs[i] = pc
            i += 1
            nxt = get(nxt_addr) if nxt_addr else None
        return i, barriers, dur_changed

    def _match(self, cats, i, nxt, skipped, excl_bw, barriers):
        """Walk lines from `nxt` until record i matches one (official stitchWave, one record).

        Returns (pc or 0 to stop, next line's pc or 0, skipped immediates, v_mov_b64 widening, cacheable).
        """
        view, fam = self.view, self.family
        get = view.get
        rec = cats[i]
        n = len(cats)
        failed = 0
        cacheable = True
        while failed < self.MAX_FAILED:
            line, nxt = nxt, None
            if line is None or not line.text:
                return 0, 0, skipped, False, cacheable
            nxt = get(line.next)
            lc = line.cat
            if lc in (L_DONT_KNOW, L_SKIP):
                continue
            if excl_bw and (
                lc == L_BARRIER_WAIT_EXCLUDED or (lc == L_IMMED and line.text.startswith("s_barrier_wait"))
            ):
                cacheable = False
                if lc == L_BARRIER_WAIT_EXCLUDED or not line.parsed:
                    add = True
                    if rec == R_IMMED:
                        kind = 0
                        look = nxt
                        idx = i
                        while idx < n and add and look is not None:
                            l2, r2 = look.cat, cats[idx]
                            look = view.jump(look) if (l2 == L_BRANCH and r2 == R_JUMP) else get(look.next)
                            if l2 in (L_DONT_KNOW, L_SKIP):
                                idx += 1
                                continue
                            add = _elaborate(r2, l2)
                            if r2 != R_IMMED and l2 != L_VALU:
                                if kind != 0 and kind != l2:
                                    break
                                kind = l2
                            idx += 2
                    if add:
                        barriers.append((i, line.addr))
                        line.cat = L_BARRIER_WAIT_EXCLUDED
                        continue
            matched = True
            widen = False
            if _trivial(rec, lc):
                pass
            elif lc == L_BRANCH:
                if rec != R_JUMP:
                    return 0, 0, skipped, False, cacheable
                nxt = view.jump(line)
            elif fam == 12 and lc == L_V_MOV_B64 and rec == R_VALU:
                widen = True
            else:
                matched = False
                if rec == R_IMMED and _skippable(lc):
                    matched = True
                    skipped += 1
                elif line.text.startswith("s_waitcnt") or "_load_" in line.text:
                    if skipped > 0 and line.text.startswith("s_waitcnt"):
                        matched = True
                        skipped -= 1
                    elif "scratch_" not in line.text:
                        return 0, 0, skipped, False, cacheable
            if matched:
                line.parsed = True
                return line.addr, (nxt.addr if nxt is not None else 0), skipped, widen, cacheable
            failed += 1
        return 0, 0, skipped, False, False


class _Gfx9Walk:
    """gfx9 extras of the walk (sqtt-format.md §8.4, official `stitchWave` with gfxip 9): adjacent records
    swapped when that makes both match, and v_mfma_scale records widened by 4 cycles. Keeps the record
    order and the times it changes; `result` applies them."""

    def __init__(self, insts, begin, end):
        self.insts, self.begin, self.end = insts, begin, end
        self.durs = insts["duration"].tolist()
        self.times = insts["time"].tolist()
        self.order = list(range(len(insts)))

    @staticmethod
    def swapped_match(cats, i, line, get):
        nxt = get(line.next)
        return nxt is not None and cats[i + 1] == line.cat and cats[i] == nxt.cat

    def swap(self, cats, pcs, i):
        for a in (cats, pcs, self.times, self.durs, self.order):
            a[i], a[i + 1] = a[i + 1], a[i]

    def mfma_scale(self, i):
        """The scale load starts 4 cycles earlier and ends with the MFMA, if the neighbours leave room."""
        t, d = self.times, self.durs
        prev_end = t[i - 1] + d[i - 1] if i > 0 else self.begin
        next_start = t[i + 1] if i < len(t) - 1 else self.end
        d[i] += 4
        if t[i] > prev_end:
            t[i] -= 4
            if t[i] + d[i] < next_start:
                d[i] += 4
        elif t[i] + d[i] > next_start:
            d[i] -= 4

    def result(self):
        out = self.insts[np.array(self.order, np.int64)] if len(self.order) else self.insts
        out["time"] = self.times
        out["duration"] = self.durs
        return out


def _insert_barrier_waits(insts: np.ndarray, timeline, barriers, begin: int):
    """gfx12 with excluded barrier waits: an `s_barrier_wait` that left no token gets a synthetic IMMED
    record from the previous record's end to the next record's start (official
    `insert_gfx12_barrier_wait`), and the state timeline a matching WAIT."""
    if not len(insts) or not barriers:
        return insts, timeline
    t = insts["time"].tolist()
    d = insts["duration"].tolist()
    out_idx = []  # (source index or -1 for synthetic, time, duration, pc)
    synth = []
    wst = []
    tl = [list(x) for x in timeline]
    prev = 0
    tli = 0
    cur_time = begin
    for index, pc in barriers:
        if index <= prev:
            continue
        out_idx.extend(range(prev, index))
        it = t[index - 1] + d[index - 1]
        if t[index] == it and d[index] > 1:
            t[index] += 1
            d[index] -= 1
        idur = t[index] - it
        while cur_time <= it and tli < len(tl):
            cur_time += tl[tli][1]
            wst.append(list(tl[tli]))
            tli += 1
        if wst and wst[-1][1] >= cur_time - it and cur_time >= t[index]:
            wst[-1][1] -= cur_time - it
            typ = wst[-1][0]
            wst.append([3, idur])
            wst.append([typ, cur_time - it - idur])
        out_idx.append(-1 - len(synth))
        synth.append((it, idur, pc))
        prev = index
    out_idx.extend(range(prev, len(t)))
    wst.extend(list(x) for x in tl[tli:])
    new = np.zeros(len(out_idx), insts.dtype)
    new["line"] = -1
    src = np.array(list(out_idx), np.int64)
    real = src >= 0
    base = insts.copy()
    base["time"] = t
    base["duration"] = d
    new[real] = base[src[real]]
    for j in np.flatnonzero(~real):
        it, idur, pc = synth[-1 - src[j]]
        new["time"][j], new["duration"][j], new["stall"][j] = it, idur, 0
        new["category"][j], new["pc"][j] = R_IMMED, pc
    return new, [tuple(x) for x in wst]
