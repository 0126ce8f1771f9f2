"""PC reconstruction ("stitching"): give each instruction record of a wave the PC it executed.

The trace names almost no instruction; the official decoder walks the kernel code from the wave's entry
PC and matches each record to the next code line whose category fits (sqtt-format.md §8; facts and
quirks in docs/sqtt-rdna.md). This module holds what every family's walk shares: the line kinds, the code
lines, the `Walk` a wave's walk returns, the `PcWalker` base and the summary of a blob's walks. Each family
package has its walker: `gfx9.stitch.Gfx9Walker`, `rdna.stitch.Gfx11Walker` and `Gfx12Walker`.

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

from attdec.decoders.common import BlobResult, CodeMap
from attdec.decoders.compat import DEFAULT, Rules
from attdec.model import Category, DecoderInfo, Wave
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


def common_kind(text: str, rules: Rules) -> LineKind:
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


def matches_trivially(rec: int, line: int) -> bool:
    if line == rec:
        return True
    if line == LineKind.BRANCH:
        return rec == Category.NEXT
    if rec == Category.MESSAGE:
        return line == LineKind.IMMED
    if rec == Category.FLAT:
        return line == LineKind.VMEM
    return False


def skippable(line: int) -> bool:
    """Whether an IMMED record may stand for this line (a skipped immediate): not SALU, nor SMEM (0.1.6 on
    synthetic streams: at an `s_load_*` line an IMMED stops the walk, at another SMEM line it fails)."""
    return LineKind.SALU < line <= LineKind.IMMED


def matches_elaborately(rec: int, line: int) -> bool:
    if matches_trivially(rec, line):
        return True
    if line == LineKind.BRANCH:
        return rec == Category.JUMP
    if rec == Category.IMMED:
        return skippable(line)
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


def last_pc(pcs: list[int], walked: int) -> int:
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
        return common_kind(text, rules)

    @classmethod
    def for_code(cls, code: CodeMap | None, rules: Rules = DEFAULT, shared: bool = True) -> PcWalker | None:
        """The walker of one blob, or None when there is no code to walk."""
        if code is None or not len(code):
            return None
        return cls(code, rules, shared)

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
