"""PC reconstruction ("stitching"): give each instruction record of a wave the PC it executed.

The trace names almost no instruction; the official decoder walks the kernel code from the wave's entry
PC and matches each record to the next code line whose category fits (sqtt-format.md §8; facts and
quirks in docs/sqtt-rdna.md). This module is that walk, one walker per family: `Gfx9Walker`,
`Gfx11Walker` and `Gfx12Walker` (gfx11 plus its own line kinds and the barrier-wait rule); `walker()`
picks one. Each `stitch` call walks one wave and returns what it did as a `Walk`.

Code lines come from a `CodeMap` (absolute PC -> attdec.isa Instruction) and are cached in a `CodeView`,
like the official PCTranslator. The official walk also carries per-line state from one wave of a blob to
the next (whether a line was matched, the gfx12 excluded-barrier mark): each walker keeps that state for
its blob, while the lines and the memoised walks that depend on no such state are shared by every blob
walked against the same code objects (`_Shared`).
"""

from __future__ import annotations

from enum import IntEnum
from functools import cache

import numpy as np

from attdec.decoders.common import NOT_FINISHED, BlobResult, CodeMap
from attdec.decoders.compat import DEFAULT, Rules
from attdec.model import Category, DecoderInfo, Wave, WaveState
from attdec.model.record import Record


class LineKind(IntEnum):
    """What a code line is to the walk: the record category it can take, or one of the walk's own kinds."""

    SKIP = 0  # never matched, stepped over (s_delay_alu, s_wait_alu, ...)
    SMEM = Category.SMEM
    SALU = Category.SALU
    VMEM = Category.VMEM
    FLAT = Category.FLAT
    LDS = Category.LDS
    VALU = Category.VALU
    IMMED = Category.IMMED
    BVH = Category.BVH
    DONT_KNOW = 20  # not an instruction the walk knows (`.long`): stepped over
    BRANCH = 21
    BARRIER_WAIT_EXCLUDED = 22  # gfx12: an s_barrier_wait that left no token (header bit 59)
    MFMA_SCALE = 23  # gfx9 v_mfma_scale_*: widened by 4 cycles
    GFX9_BARRIER = 24  # gfx9 s_barrier: entry (MESSAGE) and exit (IMMED) records share its PC
    V_MOV_B64 = 25  # gfx12 v_mov_b64: widened to stall + 2


# Mnemonic prefixes -> line category (official trie). The walk takes the first (shortest) prefix it
# reaches and skips characters that continue no prefix.
PREFIXES: dict[LineKind, tuple[str, ...]] = {
    LineKind.IMMED: (
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
    LineKind.SKIP: ("s_wait_dep", "s_wait_alu", "buffer_nop", "s_set_vgpr", "s_delay"),
    LineKind.SALU: (
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
    LineKind.SMEM: (
        "s_load",
        "s_buffer",
        "s_atomic",
        "s_atc",
        "s_scratch",
        "s_store",
        "s_dcache",
        "s_memrealtime",
    ),  # "s_prefetch" only under Rules.prefetch_is_smem (0.1.6 has no such prefix: SALU)
    LineKind.VMEM: (
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
    LineKind.FLAT: ("flat_",),
    LineKind.LDS: ("ds_", "lds_"),
    LineKind.BVH: ("image_bvh",),
}


@cache
def _trie(prefetch_is_smem: bool) -> dict:
    root: dict = {}
    prefixes = dict(PREFIXES)
    if prefetch_is_smem:
        prefixes[LineKind.SMEM] = (*prefixes[LineKind.SMEM], "s_prefetch")
    for kind, words in prefixes.items():
        for p in words:
            node = root
            for ch in p:
                node = node.setdefault(ch, {})
            node[None] = kind
    return root


def _common_kind(text: str, rules: Rules) -> LineKind:
    """The kind every family gives a line, from its text as the official ISA callback prints it."""
    if "branch" in text:
        return LineKind.BRANCH
    if text.startswith("v_"):
        return LineKind.VALU
    node = _trie(rules.prefetch_is_smem)
    for ch in text:
        node = node.get(ch, node)
        kind = node.get(None)
        if kind is not None:
            return kind
    return LineKind.SALU if text.startswith("s_") else LineKind.DONT_KNOW


def _trivial(rec: int, line: int) -> bool:
    if line == rec:
        return True
    if line == LineKind.BRANCH:
        return rec == Category.NEXT
    if rec == Category.MESSAGE:
        return line == LineKind.IMMED
    if rec == Category.FLAT:
        return line == LineKind.VMEM
    return False


def _skippable(line: int) -> bool:
    """Whether an IMMED record may stand for this line (a skipped immediate): not SALU, nor SMEM (0.1.6 on
    synthetic streams: at an `s_load_*` line an IMMED stops the walk, at another SMEM line it fails)."""
    return LineKind.SALU < line <= LineKind.IMMED


def _elaborate(rec: int, line: int) -> bool:
    if _trivial(rec, line):
        return True
    if line == LineKind.BRANCH:
        return rec == Category.JUMP
    if rec == Category.IMMED:
        return _skippable(line)
    return False


class Line:
    """One code line as the walk sees it (official `assemblyLine`, without its per-blob state)."""

    __slots__ = ("addr", "cat", "next", "target", "text")

    def __init__(self, addr: int, text: str, cat: LineKind, nxt: int, target: int | None):
        self.addr, self.text, self.cat, self.next, self.target = addr, text, cat, nxt, target


class CodeView:
    """Absolute PC -> Line, cached; None where the code map has no instruction."""

    # s_endpgm answers a memory size of 0 to the official walk (its ISA callback does, and so does the
    # listing the oracle was made with), so the line after it is itself.
    ZERO_SIZE = ("s_endpgm",)

    def __init__(self, code: CodeMap, kind_of):
        self.code, self.kind_of = code, kind_of
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
            cat = self.kind_of(text)
            target = None
            if cat == LineKind.BRANCH:
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


class Walk(Record):
    """What the walk did with one wave: how far it got, and the timing changes it asks for."""

    __slots__ = ("barriers", "cacheable", "last_pc", "records", "walked", "widened")
    records: int
    walked: int  # records it got through; fewer than `records`: it stopped early, the rest keep pc 0
    last_pc: int  # PC of the last record it walked that got one (0: none)
    widened: list[int]  # gfx12 v_mov_b64 records: duration >= stall + 2
    barriers: list[tuple[int, int]]  # gfx12 (record, pc) of token-less waits
    cacheable: bool  # touched no line with per-blob state: an identical wave walks the same

    def __init__(self, records, walked, last_pc=0, widened=None, barriers=None, cacheable=True):
        # made once per wave: slots and this __init__ keep that as cheap as a dataclass's
        self.records = records
        self.walked = walked
        self.last_pc = last_pc
        self.widened = [] if widened is None else widened
        self.barriers = [] if barriers is None else barriers
        self.cacheable = cacheable

    @property
    def complete(self) -> bool:
        return self.walked >= self.records


def note_waves(
    res: BlobResult,
    stitched: list[tuple[Wave, bool, bool, Walk | None, int]],
    quiet: tuple[int, int] = (0, 0),
    rules: Rules = DEFAULT,
) -> None:
    """Sum up a blob's stitched waves: `stitched` holds (wave, ended, trapping, walk or None, entry pc) in
    stitch order; `quiet` (waves, their walks) counts those left out of it as they raise nothing (ended or
    trapping, walk complete or none: a big blob decoded in windows). Counts the PC walks, notes in `warnings`
    the waves whose walk stopped early and the waves the blob cut, and adds AMD's INFO records in the order
    its stitch raises them (one of each kind per blob): WAVE_INCOMPLETE for a wave that never ended (trapping
    waves aside), else STITCH_INCOMPLETE for a wave whose records did not all get a PC (a walk that stopped
    early, or no code to walk) and whose entry PC lies in a code object the trace announced (the official test;
    without markers 0.1.5 on stay silent, attdec's warning does not; `Rules.stitch_incomplete_without_marker`)."""
    walks = [(w, k) for w, _, _, k, _ in stitched if k is not None]
    stopped = [(w, k) for w, k in walks if not k.complete]
    res.walks, res.walks_stopped = len(walks) + quiet[1], len(stopped)
    if res.code_objects:
        entries = res.code_object_ids(np.array([e for *_, e in stitched], np.uint64)).tolist()
    else:  # no markers: no entry lies in an announced code object
        entries = [0] * len(stitched)
    cut, marked, order = [], [], []
    for (w, ended, trapping, k, _), co in zip(stitched, entries):
        if not ended and not trapping:
            cut.append(w)
            kind = "WAVE_INCOMPLETE"
        elif (not k.complete if k is not None else w.records > 0) and (co or rules.stitch_incomplete_without_marker):
            marked.append(w)
            kind = "STITCH_INCOMPLETE"
        else:
            continue
        if kind not in order:
            order.append(kind)
    for kind in order:
        if kind == "WAVE_INCOMPLETE":
            w = cut[0]
            where = f"first: cu {w.cu} simd {w.simd} slot {w.slot}, begun at {w.begin}"
            res.info.append(DecoderInfo(kind, res.se, len(cut), res.bytes_decoded, f"waves cut ({where})"))
        else:
            res.info.append(DecoderInfo(kind, res.se, len(marked), None, "PC walks stopped early"))
    if cut:
        w = cut[0]
        res.warnings.append(
            f"{len(cut)} of {len(stitched) + quiet[0]} traced waves cut by the end of the blob at byte "
            f"{res.bytes_decoded}, "
            f"their later records are missing (WAVE_INCOMPLETE; first: se {w.se} cu {w.cu} simd {w.simd} "
            f"slot {w.slot}, begun at {w.begin})"
        )
    if stopped:
        w, k = stopped[0]
        after = f"after pc {k.last_pc:#x}" if k.last_pc else "before any record got a pc"
        res.warnings.append(
            f"PC walk stopped early in {len(stopped)} of {res.walks} traced waves, their later records have pc 0 "
            f"(first: se {w.se} cu {w.cu} simd {w.simd} slot {w.slot} at record {k.walked} of {k.records}, {after})"
        )


def _last_pc(pcs: list[int], walked: int) -> int:
    """PC of the last record before `walked` that got one (CONTEXT records get none)."""
    return next((pc for pc in reversed(pcs[:walked]) if pc), 0)


# The kind of a line's text, per walker family and rules: the same for every blob, so it is worked out once
# per process.
_LINE_KINDS: dict[tuple[type, Rules], dict[str, LineKind]] = {}


class _Shared:
    """What the walk learns about one set of code objects that holds for every blob walked against it: the
    code lines, and the memoised walks that touched no per-blob line state (keyed by everything they
    depend on, the gfx12 barrier-wait flag included). The dispatches of one kernel share it, and so do
    their blobs. `size` counts what its memos hold, in records (a wave's walk: its records; a match: 20,
    about its bytes / 10)."""

    def __init__(self, code: CodeMap, family: type[PcWalker], rules: Rules):
        self.code = code  # holds the code objects whose identity keys this state (see `_shared`)
        self.rules = rules  # and the rules, keyed by identity too (hashing a Rules hashes all its fields)
        kinds = _LINE_KINDS.setdefault((family, rules), {})
        if len(kinds) > 100_000:
            kinds.clear()

        def kind_of(text: str) -> LineKind:
            kind = kinds.get(text)
            if kind is None:
                kind = kinds[text] = family.line_kind(text, rules)
            return kind

        self.view = CodeView(code, kind_of)
        self.memo: dict = {}
        self.wave_memo: dict = {}
        self.size = 0

    def grow(self, records: int) -> None:
        """Count what a memo entry holds, here and in all states' total (checked at each `_shared`)."""
        global _MEMO_RECORDS
        self.size += records
        _MEMO_RECORDS += records


# The shared states kept, the most recently made last. Bounds on memory: how many, the instructions their
# code maps hold (the state keeps its code objects alive, and code objects over 1 MB are not cached by
# sources.raw: each dispatch of such a kernel has its own), and what all memos hold (~10 bytes a record).
_SHARED: dict[tuple, _Shared] = {}
MAX_SHARED = 64
MAX_SHARED_INSTRUCTIONS = 1 << 22
MAX_MEMO_RECORDS = 1 << 23
_MEMO_RECORDS = 0  # what all memos hold (of evicted states too, while their walkers last: cleared early at worst)


def _shared(code: CodeMap, family: type[PcWalker], rules: Rules) -> _Shared:
    global _MEMO_RECORDS
    key = (code.parts_key(), family, id(rules))
    state = _SHARED.get(key)
    if state is None:
        held = sum(len(s.code) for s in _SHARED.values())
        while _SHARED and (len(_SHARED) >= MAX_SHARED or held + len(code) > MAX_SHARED_INSTRUCTIONS):
            old = _SHARED.pop(next(iter(_SHARED)))  # the oldest
            held -= len(old.code)
            _MEMO_RECORDS -= old.size
        state = _SHARED[key] = _Shared(code, family, rules)
    if _MEMO_RECORDS > MAX_MEMO_RECORDS:
        for s in _SHARED.values():
            s.memo.clear()
            s.wave_memo.clear()
            s.size = 0
        _MEMO_RECORDS = 0
    return state


class PcWalker:
    """The PC walk over one blob's waves (official `stitchWave`); one subclass per family.

    `stitch` fills the pc column of one wave's records, applies the walk's timing changes and returns
    (records, timeline, Walk). The walker lives as long as its blob and keeps the per-line state the
    official walk carries from one wave to the next (in the order the decoder stitches them): which lines
    were matched (`parsed`), which s_barrier_wait lines left no token (`excluded`). With `shared`, its
    lines and memos are those of every blob walked against the same code objects (`_Shared`): exact as
    long as the blob's gfx12 barrier-wait flag does not change from one wave to the next (decoders pass
    shared=False for a blob whose HEADERs disagree)."""

    MAX_FAILED = 1000

    def __init__(self, code: CodeMap, rules: Rules = DEFAULT, shared: bool = True):
        self.rules = rules
        self.state = _shared(code, type(self), rules) if shared else _Shared(code, type(self), rules)
        self.view, self.memo, self.wave_memo = self.state.view, self.state.memo, self.state.wave_memo
        self.parsed: set[int] = set()
        self.excluded: set[int] = set()

    @classmethod
    def line_kind(cls, text: str, rules: Rules = DEFAULT) -> LineKind:
        """The kind of a code line from its text, as this family's official decoder derives it."""
        return _common_kind(text, rules)

    def stitch(
        self, insts: np.ndarray, pc_infos, timeline, begin: int, *, exclude_barrier_wait: bool = False, end: int = 0
    ) -> tuple[np.ndarray, list, Walk]:
        raise NotImplementedError

    def walk_pcs(self, categories: bytes, pc_infos, exclude_barrier_wait: bool = False) -> tuple[np.ndarray, Walk]:
        """RDNA: `stitch`'s walk without the records (Gfx11Walker)."""
        raise NotImplementedError

    @staticmethod
    def apply(insts: np.ndarray, walk: Walk, timeline, begin: int) -> tuple[np.ndarray, list]:
        """RDNA: `stitch`'s timing changes after `walk_pcs` (Gfx11Walker)."""
        raise NotImplementedError

    def _known(self, cats, pcs, pc_infos, i, pii, nxt):
        """Step over the records the walk does not match, shared by every family: PC slots from the trace
        (a PC outside the code skips to the next slot), CONTEXT records, and records that already have a
        PC (SKIP lines after it are stepped over; the line after it, or its branch target on a JUMP, is
        the next to match; on gfx9 a barrier's PC goes to the record after it too).

        Callers test for such a record first, so a record to match costs no call. Returns
        (i, pii, nxt, end): `end` is the walk's result when it must stop here, else None."""
        view = self.view
        get = view.get
        context, jump = Category.CONTEXT, Category.JUMP
        skip, branch, gfx9_barrier = LineKind.SKIP, LineKind.BRANCH, LineKind.GFX9_BARRIER
        n, npi = len(cats), len(pc_infos)
        while i < n:
            while pii < npi and pc_infos[pii][0] <= i:
                if pc_infos[pii][0] == i:
                    pc = pc_infos[pii][1]
                    if get(pc) is not None:
                        pcs[i] = pc
                    elif (pc or pii) and pii + 1 < npi:  # (a start without a PC: no walk, 0.1.6)
                        i = pc_infos[pii + 1][0]
                        if i >= n:
                            return i, pii, nxt, i
                pii += 1
            rec = cats[i]
            if rec == context:
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
            while line.cat == skip and line.next:
                pcs[cur] = line.next
                line = get(line.next)
                if line is None:  # the official lookup throws here: no next line
                    break
            if line is None:
                continue
            if line.cat == gfx9_barrier and i < n:
                pcs[i] = pcs[cur]
                i += 1
            if line.cat == branch and rec == jump:
                nxt = view.jump(line)
            else:
                nxt = get(line.next)
        return i, pii, nxt, None


class Gfx9Walker(PcWalker):
    """gfx9 (sqtt-format.md §8.4, official `stitchWave` with gfxip 9): one line at a time, adjacent
    records swapped when that makes both match, s_barrier entry/exit sharing a PC, v_mfma_scale records
    widened. The walk's decisions depend only on the record categories and the PC slots (no line keeps
    state from one wave to the next), so a wave's walk is memoised as its PCs and the swaps and widenings
    it made, which are replayed on the next wave with the same records."""

    # memo: (record categories, PC slots) -> (pcs, Walk, timing operations)

    @classmethod
    def line_kind(cls, text: str, rules: Rules = DEFAULT) -> LineKind:
        kind = _common_kind(text, rules)
        if kind == LineKind.VALU and text.startswith("v_mfma_scale_"):
            return LineKind.MFMA_SCALE
        if kind == LineKind.IMMED and text.startswith("s_barrier"):
            return LineKind.GFX9_BARRIER
        return kind

    def stitch(self, insts, pc_infos, timeline, begin, *, exclude_barrier_wait=False, end=0):
        """`end`: the wave's end time so far (the v_mfma_scale widening looks at it)."""
        key = (insts["category"].tobytes(), tuple(map(tuple, pc_infos)))
        hit = self.memo.get(key)
        if hit is None:
            cats = insts["category"].tolist()
            ops: list[tuple[int, int]] = []
            pcs = [0] * len(cats)
            walked = min(self._walk(cats, pcs, pc_infos, ops), len(cats))
            hit = self.memo[key] = (np.array(pcs, np.uint64), Walk(len(cats), walked, _last_pc(pcs, walked)), ops)
            self.state.grow(len(cats))
        pcs_a, walk, ops = hit
        if ops:
            insts = _gfx9_timing(insts, ops, begin, end)
        insts["pc"] = pcs_a
        merges = [i for op, i in ops if op == BARRIER_MERGE]
        if merges:
            insts, timeline = _merge_barriers(insts, merges, timeline, begin)
        return insts, timeline, walk

    def _walk(self, cats, pcs, pc_infos, ops) -> int:
        """Assign pcs[i] for each record; returns the records walked. The timing changes it asks for go to
        `ops` as (SWAP or MFMA_SCALE, record index), in order."""
        view = self.view
        get = view.get
        context, jump, valu, message, immed = (
            Category.CONTEXT, Category.JUMP, Category.VALU, Category.MESSAGE, Category.IMMED
        )  # fmt: skip
        n, npi = len(cats), len(pc_infos)
        i = pii = 0
        failed = 0
        nxt = None
        while i < n and failed < self.MAX_FAILED:
            if (pii < npi and pc_infos[pii][0] <= i) or pcs[i] or cats[i] == context:
                i, pii, nxt, end = self._known(cats, pcs, pc_infos, i, pii, nxt)
                if end is not None:
                    return end
                continue
            rec = cats[i]
            line, nxt = nxt, None
            if line is None or not line.text or rec == NOT_FINISHED:
                break
            nxt = get(line.next)
            lc = line.cat
            if lc in (LineKind.DONT_KNOW, LineKind.SKIP):
                continue
            matched = True
            if _trivial(rec, lc):
                pass
            elif lc == LineKind.BRANCH:
                if rec != jump:
                    break
                nxt = view.jump(line)
            elif lc == LineKind.MFMA_SCALE and rec == valu:
                ops.append((MFMA_SCALE, i))
            elif lc == LineKind.GFX9_BARRIER:
                if rec == message:  # barrier entry (MESSAGE) and exit (IMMED) share the PC
                    pcs[i] = line.addr
                    if i + 1 < n and cats[i + 1] == immed:
                        pcs[i + 1] = line.addr
                        if self.rules.gfx9_barrier_one_record:
                            ops.append((BARRIER_MERGE, i))
                    i += 2
                    failed = 0
                    continue
                matched = rec == immed
            else:
                matched = False
                if i + 1 < n and _swapped_match(cats, i, line, get):
                    cats[i], cats[i + 1] = cats[i + 1], cats[i]
                    pcs[i], pcs[i + 1] = pcs[i + 1], pcs[i]
                    ops.append((SWAP, i))
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


class Gfx11Walker(PcWalker):
    """RDNA: records without PC information are matched by `_match`; its outcome depends only on (next
    line, skipped-immediate count, record category) unless it touched a gfx12 barrier-wait line, so it is
    memoised per blob, and so is a whole wave's walk (waves of one kernel repeat the same records)."""

    # gfx12: a wave whose first record has no PC from the trace is not walked at all
    needs_first_pc = False
    # memo: (barrier flag, next line pc, skipped immediates, record category) -> outcome
    # wave_memo: (record categories, PC slots, barrier flag) -> (pcs, Walk) of a wave; a walk that touched
    # barrier-wait lines: (..., excluded lines, matched lines before) -> (pcs, Walk, excluded, matched after)

    def stitch(self, insts, pc_infos, timeline, begin, *, exclude_barrier_wait=False, end=0):
        """`exclude_barrier_wait`: the gfx12 header bit 59 (s_barrier_wait may leave no token)."""
        pcs, walk = self.walk_pcs(insts["category"].tobytes(), pc_infos, exclude_barrier_wait)
        insts["pc"] = pcs
        insts, timeline = self.apply(insts, walk, timeline, begin)
        return insts, timeline, walk

    def walk_pcs(self, categories: bytes, pc_infos, exclude_barrier_wait: bool = False) -> tuple[np.ndarray, Walk]:
        """`stitch`'s walk alone, from the records' categories (a byte each): the records' PCs (read only: a
        memo's) and the Walk; `apply` then makes its timing changes. For a caller that writes the records
        after the walk, PCs and all (writing the pc field afterwards is one more pass over them)."""
        key = (categories, tuple(map(tuple, pc_infos)), exclude_barrier_wait)
        hit = self.wave_memo.get(key)
        line_key = None
        if hit is None and exclude_barrier_wait:
            # a walk that touched barrier-wait lines depends on the blob's line state before it, and changes it
            line_key = (*key, frozenset(self.excluded), frozenset(self.parsed))
            hit = self.wave_memo.get(line_key)
        if hit is not None:
            pcs_a, walk, *after = hit
            if after:
                self.excluded, self.parsed = set(after[0]), set(after[1])
            return pcs_a, walk
        cats = list(categories)
        pcs = [0] * len(cats)
        walk = self._walk(cats, pcs, pc_infos, exclude_barrier_wait)
        walk.last_pc = _last_pc(pcs, walk.walked)
        pcs_a = np.array(pcs, np.uint64)
        pcs_a.flags.writeable = False  # (a memo's, shared by every wave that walks the same)
        if walk.cacheable and not walk.barriers:
            self.wave_memo[key] = (pcs_a, walk)
            self.state.grow(len(cats))
        elif line_key is not None:
            after = (frozenset(self.excluded), frozenset(self.parsed))
            self.wave_memo[line_key] = (pcs_a, walk, *after)
            self.state.grow(len(cats) + len(after[1]))
        return pcs_a, walk

    @staticmethod
    def apply(insts, walk: Walk, timeline, begin: int):
        """A walk's changes to the records' timing (v_mov_b64 widening, gfx12 barrier waits): (records,
        timeline)."""
        if walk.widened:
            w = np.array(walk.widened, np.int64)
            insts["duration"][w] = np.maximum(insts["duration"][w], insts["stall"][w] + 2)
        if walk.barriers:
            insts, timeline = _insert_barrier_waits(insts, timeline, walk.barriers, begin)
        return insts, timeline

    def _walk(self, cats, pcs, pc_infos, excl_bw) -> Walk:
        get = self.view.get
        memo = self.memo
        context = Category.CONTEXT
        n, npi = len(cats), len(pc_infos)
        i = pii = 0
        skipped = 0
        nxt = None
        barriers: list[tuple[int, int]] = []
        widened: list[int] = []
        cacheable = True
        while i < n:
            if (pii < npi and pc_infos[pii][0] <= i) or pcs[i] or cats[i] == context:
                i, pii, nxt, end = self._known(cats, pcs, pc_infos, i, pii, nxt)
                if end is not None:
                    i = end
                    break
                continue
            rec = cats[i]
            if self.needs_first_pc and i == 0:
                break
            if nxt is None:
                break
            key = (excl_bw, nxt.addr, skipped, rec)
            hit = memo.get(key)
            if hit is None:
                hit = self._match(cats, i, nxt, skipped, excl_bw, barriers)
                if hit[4]:
                    memo[key] = hit
                    self.state.grow(20)
                else:
                    cacheable = False
            pc, nxt_addr, skipped, widen, _ = hit
            if not pc:
                break
            if widen:
                widened.append(i)
            pcs[i] = pc
            i += 1
            nxt = get(nxt_addr) if nxt_addr else None
        return Walk(n, min(i, n), widened=widened, barriers=barriers, cacheable=cacheable)

    def _match(self, cats, i, nxt, skipped, excl_bw, barriers):
        """Walk lines from `nxt` until record i matches one (official stitchWave, one record).

        Returns (pc or 0 to stop, next line's pc or 0, skipped immediates, v_mov_b64 widening, cacheable).
        """
        view = self.view
        get = view.get
        excluded = self.excluded
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
            if excluded and line.addr in excluded:
                lc = LineKind.BARRIER_WAIT_EXCLUDED
            if lc in (LineKind.DONT_KNOW, LineKind.SKIP):
                continue
            if excl_bw and (
                lc == LineKind.BARRIER_WAIT_EXCLUDED
                or (lc == LineKind.IMMED and line.text.startswith("s_barrier_wait"))
            ):
                cacheable = False
                if lc == LineKind.BARRIER_WAIT_EXCLUDED or line.addr not in self.parsed:
                    add = True
                    if rec == Category.IMMED:
                        kind = 0
                        look = nxt
                        idx = i
                        while idx < n and add and look is not None:
                            l2, r2 = look.cat, cats[idx]
                            if excluded and look.addr in excluded:
                                l2 = LineKind.BARRIER_WAIT_EXCLUDED
                            jumps = l2 == LineKind.BRANCH and r2 == Category.JUMP
                            look = view.jump(look) if jumps else get(look.next)
                            if l2 in (LineKind.DONT_KNOW, LineKind.SKIP):
                                idx += 1
                                continue
                            add = _elaborate(r2, l2)
                            if r2 != Category.IMMED and l2 != LineKind.VALU:
                                if kind != 0 and kind != l2:
                                    break
                                kind = l2
                            idx += 2  # the official look-ahead advances twice per matched line
                    if add:
                        barriers.append((i, line.addr))
                        excluded.add(line.addr)
                        continue
            matched = True
            widen = False
            if _trivial(rec, lc):
                pass
            elif lc == LineKind.BRANCH:
                if rec != Category.JUMP:
                    return 0, 0, skipped, False, cacheable
                nxt = view.jump(line)
            elif lc == LineKind.V_MOV_B64 and rec == Category.VALU:
                widen = True
            else:
                matched = False
                if rec == Category.IMMED and _skippable(lc):
                    matched = True
                    skipped += 1
                elif line.text.startswith("s_waitcnt") or "_load_" in line.text:
                    if skipped > 0 and line.text.startswith("s_waitcnt"):
                        matched = True
                        skipped -= 1
                    elif "scratch_" not in line.text:
                        return 0, 0, skipped, False, cacheable
            if matched:
                self.parsed.add(line.addr)
                return line.addr, (nxt.addr if nxt is not None else 0), skipped, widen, cacheable
            failed += 1
        return 0, 0, skipped, False, cacheable  # gave up: as deterministic as a match


class Gfx12Walker(Gfx11Walker):
    """gfx11's walk with gfx12's line kinds (v_mov_b64 widening, ds_bvh) and the first-record rule; the
    barrier-wait exclusion runs when the header asks for it."""

    needs_first_pc = True

    @classmethod
    def line_kind(cls, text: str, rules: Rules = DEFAULT) -> LineKind:
        kind = _common_kind(text, rules)
        if kind == LineKind.VALU and text.startswith("v_mov_b64"):
            return LineKind.V_MOV_B64
        if kind == LineKind.LDS and rules.gfx12_ds_bvh_is_bvh and text.startswith("ds_bvh"):
            return LineKind.BVH
        return kind


WALKERS: dict[int, type[PcWalker]] = {9: Gfx9Walker, 11: Gfx11Walker, 12: Gfx12Walker}


def walker(code: CodeMap | None, generation: int, rules: Rules = DEFAULT, shared: bool = True) -> PcWalker | None:
    """The PC walker of a blob of this generation, or None when there is no code to walk; `shared`: see
    PcWalker."""
    if code is None or not len(code):
        return None
    return WALKERS[generation](code, rules, shared)


def line_category(text: str, family: int, rules: Rules = DEFAULT) -> LineKind:
    """Kind of a code line of family `family` (9, 11, 12), as the official walk derives it."""
    return WALKERS[family].line_kind(text, rules)


SWAP, MFMA_SCALE, BARRIER_MERGE = 0, 1, 2  # the gfx9 walk's timing operations


def _swapped_match(cats, i, line, get) -> bool:
    """Records i and i + 1 match `line` and the line after it the other way round."""
    nxt = get(line.next)
    return nxt is not None and cats[i + 1] == line.cat and cats[i] == nxt.cat


def _gfx9_timing(insts: np.ndarray, ops, begin: int, end: int) -> np.ndarray:
    """The gfx9 walk's changes to a wave's records (sqtt-format.md §8.4), in the order it made them:
    SWAP i (records i and i + 1 trade places, all fields) and MFMA_SCALE i (a v_mfma_scale record: its
    scale load starts 4 cycles earlier and ends with the MFMA, if the neighbours leave room)."""
    t, d = insts["time"].tolist(), insts["duration"].tolist()
    order = list(range(len(t)))
    for op, i in ops:
        if op == BARRIER_MERGE:
            continue  # after the PCs are set: `_merge_barriers`
        if op == SWAP:
            for a in (t, d, order):
                a[i], a[i + 1] = a[i + 1], a[i]
            continue
        prev_end = t[i - 1] + d[i - 1] if i > 0 else begin
        next_start = t[i + 1] if i < len(t) - 1 else end
        d[i] += 4
        if t[i] > prev_end:
            t[i] -= 4
            if t[i] + d[i] < next_start:
                d[i] += 4
        elif t[i] + d[i] > next_start:
            d[i] -= 4
    out = insts[np.array(order, np.int64)]
    out["time"] = t
    out["duration"] = d
    return out


def _merge_barriers(insts: np.ndarray, entries: list[int], timeline, begin: int):
    """gfx9 s_barrier as AMD's 0.1.6 reports it: one IMMED record from the barrier's entry (the MESSAGE
    record at each index of `entries`, dropped) to its exit (the IMMED record after it), stalled for the
    whole wait, and one WAIT run in the state timeline where the entry's and the exit's met. Inferred from
    a rocprofv3 session's wave files (the source keeps both records); docs/sqtt-gfx9.md."""
    at = np.array(entries, np.int64)
    exits = set(insts["time"][at + 1].tolist())
    keep = np.ones(len(insts), bool)
    keep[at] = False
    out = insts.copy()
    gap = out["time"][at + 1] - out["time"][at]
    out["stall"][at + 1] += gap
    out["duration"][at + 1] += gap
    out["time"][at + 1] = out["time"][at]
    runs: list = []
    t = begin
    wait = int(WaveState.WAIT)
    for state, cycles in timeline:
        if runs and t in exits and state == wait and runs[-1][0] == wait:
            runs[-1] = (wait, runs[-1][1] + cycles)
        else:
            runs.append((state, cycles))
        t += cycles
    return out[keep], runs


def _insert_barrier_waits(insts: np.ndarray, timeline, barriers, begin: int):
    """gfx12 with excluded barrier waits: an `s_barrier_wait` that left no token gets a synthetic IMMED
    record from the previous record's end to the next record's start (official
    `insert_gfx12_barrier_wait`), and the state timeline a matching WAIT."""
    if not len(insts) or not barriers:
        return insts, timeline
    t = insts["time"].tolist()
    d = insts["duration"].tolist()
    rows: list[int] = []  # source record of each output record (a synthetic one: the record before it)
    t_out: list[int] = []
    d_out: list[int] = []
    added: list[int] = []  # output positions of the synthetic records
    added_pc: list[int] = []
    wst = []
    tl = [list(x) for x in timeline]
    prev = 0
    tli = 0
    cur_time = begin
    for index, pc in barriers:
        if index <= prev:
            continue
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
            wst.append([int(WaveState.WAIT), idur])
            wst.append([typ, cur_time - it - idur])
        rows.extend(range(prev, index))
        t_out += t[prev:index]
        d_out += d[prev:index]
        added.append(len(rows))
        added_pc.append(pc)
        rows.append(index - 1)
        t_out.append(it)
        d_out.append(idur)
        prev = index
    rows.extend(range(prev, len(t)))
    t_out += t[prev:]
    d_out += d[prev:]
    wst.extend(list(x) for x in tl[tli:])
    new = insts[rows]
    new["time"], new["duration"] = t_out, d_out
    if added:
        new["stall"][added], new["pc"][added], new["line"][added] = 0, added_pc, -1
        new["category"][added] = Category.IMMED
    return new, [tuple(x) for x in wst]
