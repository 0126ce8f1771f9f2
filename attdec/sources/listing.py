"""The code listing of a decoded dispatch, built the way rocprofv3's writer builds code.json.

ui-output-format.md §5: every kernel a traced wave touched is listed whole (one `"; <symbol>"` label
row, then each instruction, Hit 0 for those never executed), line ids run in listing order (a label
takes the id just before its kernel's first instruction), and per-instruction totals are

  Hit     = executions over all traced waves
  Latency = sum of duration
  Stall   = sum of stall
  Idle    = sum of max(0, time - prev_end), prev_end = wave begin, then max(prev_end, time + duration)

Instructions with pc 0 (not resolved by the decoder) do not count in any instruction's row and do not
move prev_end there, as the writer skips PC (0, 0) records (an assumption: the samples cannot tell, none
of them has such records). They are totalled in one "(no PC)" row after all others (Idle with prev_end
over all of a wave's records), so that totals are over every decoded record; the ui_output writer leaves
that row out.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from attdec.isa import CodeObject
from attdec.model import NO_PC, CodeLine, Dispatch, WaveTable, lines_of_pcs
from attdec.model.record import Record, field
from attdec.model.target import Target


class LoadedCode(Record):
    """A code object as loaded for one dispatch: load id, base, the CodeObject and its disassembly."""

    id: int
    base: int
    name: str
    co: CodeObject | ListedCode
    insts: list = field(default_factory=list)  # attdec.isa.Instruction, in address order


class ListedCode(Record):
    """A code object known only from a code.json listing (rocprofv3 kept no `.out`): what `LoadedCode.co`
    offers the listing, from the rows of one Codeobj. Each instruction's text and address are listed; the
    next address gives its size, which is all the PC walk asks of the ISA besides the text."""

    name: str
    text_vaddr: int
    text: bytes  # zeros, as long as the listed instructions span: only its length is read
    kernels: list[tuple[str, int, int | None]]  # (symbol, entry vaddr, size) from the label rows
    sources: dict[int, str]  # vaddr -> "file:line" as listed
    arch: str = ""

    def source_of(self, vaddr: int) -> str:
        return self.sources.get(vaddr, "")


def listed_code(rows: list[CodeLine], tgt: Target) -> list[tuple[int, ListedCode, list]]:
    """(code-object id, ListedCode, its attdec.isa Instructions in address order) for each Codeobj of a
    code.json listing (Codeobj 0, PCs outside every code object, is left out). A listed instruction's size
    is the distance to the next listed address (4 for the last one)."""
    from attdec.isa import Instruction
    from attdec.isa.categories import class_of

    by_object: dict[int, list[CodeLine]] = {}
    for r in rows:
        if r.codeobj and not r.is_no_pc:
            by_object.setdefault(r.codeobj, []).append(r)
    out = []
    for co_id, obj_rows in sorted(by_object.items()):
        labels = [r for r in obj_rows if r.is_label]
        insts_rows = sorted({r.vaddr: r for r in obj_rows if not r.is_label}.values(), key=lambda r: r.vaddr)
        insts = []
        for i, r in enumerate(insts_rows):
            size = insts_rows[i + 1].vaddr - r.vaddr if i + 1 < len(insts_rows) else 4
            mnemonic, _, operands = r.text.strip().partition(" ")
            cat = class_of(mnemonic, tgt)
            insts.append(Instruction(r.vaddr, size, mnemonic, operands.strip(), r.text, None, cat, "code.json"))
        if not insts:
            continue
        lo, hi = insts[0].address, insts[-1].address + insts[-1].size
        kernels: list[tuple[str, int, int | None]] = [
            (r.text[1:].strip(), r.vaddr, None) for r in labels if lo <= r.vaddr < hi
        ]
        sources = {r.vaddr: r.source for r in insts_rows if r.source}
        out.append((co_id, ListedCode(f"code object {co_id}", lo, bytes(hi - lo), kernels, sources), insts))
    return out


def _kernel_ranges(lc: LoadedCode) -> list[tuple[int, int, str]]:
    """(start vaddr, end vaddr, symbol) of each kernel of a code object, in address order.

    A kernel runs to its symbol size when known, else to the next kernel or the end of .text. A code
    object without kernel symbols (tinygrad's minimal containers) is one kernel named after the object.
    """
    text_lo = lc.co.text_vaddr
    text_hi = text_lo + len(lc.co.text)
    ks = []
    for k in getattr(lc.co, "kernels", None) or []:
        if isinstance(k, tuple):
            name, entry, size = ((*k, None))[:3]
        else:
            name = k.name
            entry = getattr(k, "entry", None)
            if entry is None:
                entry = getattr(k, "vaddr", None)
            size = getattr(k, "size", None)
        if entry is not None and text_lo <= entry < text_hi:
            ks.append((entry, size, name))
    if not ks:
        return [(text_lo, text_hi, lc.name)]
    ks.sort()
    out = []
    for i, (entry, size, name) in enumerate(ks):
        nxt = ks[i + 1][0] if i + 1 < len(ks) else text_hi
        end = min(entry + size, nxt) if size else nxt
        out.append((entry, end, name))
    return out


def _no_pc_totals(waves) -> tuple[int, int, int, int]:
    """(hit, latency, stall, idle) of the records without a PC; idle with prev_end over all records."""
    from attdec.model.totals import wave_idle

    h = la = st = idle = 0
    for w in waves:
        nopc = w.insts["pc"] == 0
        if nopc.any():
            a = w.insts[nopc]
            h += len(a)
            la += int(a["duration"].sum())
            st += int(a["stall"].sum())
            idle += int(wave_idle(w)[nopc].sum())
    return h, la, st, idle


# A whole decode's records are summed this many at a time, a few waves' worth: the work arrays stay small,
# in cache and reused from one group to the next, where arrays of every record would each be paged in fresh.
GROUP_RECORDS = 1 << 16


class _PcSums:
    """Per-PC totals over all waves (pc 0 skipped: left out before the idle gaps are measured too): `pcs`
    ascending and their (hit, latency, stall, idle) `sums` rows, summed a group of waves at a time; then
    `set_lines` gives every record its listing line from a table indexed by PC (the PCs of a kernel span
    little). PCs spanning too much for a table are summed at once and looked up (`lines_of_pcs`)."""

    def __init__(self, waves) -> None:
        from attdec.model.totals import table_fits

        self.waves = [w for w in waves if len(w.insts)]
        self.groups: list[list] = []
        group: list = []
        size = 0
        for w in self.waves:
            if group and size + len(w.insts) > GROUP_RECORDS:
                self.groups.append(group)
                group, size = [], 0
            group.append(w)
            size += len(w.insts)
        if group:
            self.groups.append(group)
        lo, hi = int(np.iinfo(np.uint64).max), 0
        self.without_pc = 0  # records without a PC
        for g in self.groups:
            pc = _column(g, "pc")
            has_pc = pc != 0
            self.without_pc += len(pc) - int(np.count_nonzero(has_pc))
            lo, hi = min(lo, int(pc.min(initial=lo, where=has_pc))), max(hi, int(pc.max()))
        self.lo, self.span = (lo, hi - lo + 1) if hi >= lo else (0, 0)
        records = sum(len(w.insts) for w in self.waves)
        if not self.span:  # no record with a PC
            self.pcs, self.sums = np.zeros(0, np.uint64), np.zeros((0, 4), np.int64)
        elif table_fits(self.span, records):
            self._sum_groups()
        else:
            self.pcs, self.sums = _sums_at_once(self.waves)

    def _sum_groups(self) -> None:
        from attdec.model.totals import idle_before

        present = np.zeros(self.span, bool)
        for g in self.groups:
            pc = _column(g, "pc")
            present[self._offsets(pc[pc != 0])] = True
        row_at = np.cumsum(present, dtype=np.intp)  # a PC's row among the distinct ones, + 1
        row_at -= 1
        n = int(row_at[-1]) + 1
        self.pcs = present.nonzero()[0].astype(np.uint64) + np.uint64(self.lo)
        sums = np.zeros((4, n), np.int64)
        for g in self.groups:
            pc, t, du, st = (_column(g, f) for f in ("pc", "time", "duration", "stall"))
            counts = np.array([len(w.insts) for w in g])
            keep = pc != 0
            if not keep.all():
                counts = np.add.reduceat(keep, np.cumsum(counts) - counts, dtype=np.intp)
                pc, t, du, st = (a.compress(keep) for a in (pc, t, du, st))
            row = row_at.take(self._offsets(pc))
            idle = idle_before(t, du, np.array([w.begin for w in g], np.int64), counts)
            sums[0] += np.bincount(row, minlength=n)
            for k, v in enumerate((du, st, idle), 1):
                sums[k] += np.bincount(row, v, n).round().astype(np.int64)
        self.sums = np.ascontiguousarray(sums.T)

    def _offsets(self, pc: np.ndarray) -> np.ndarray:
        return (pc - np.uint64(self.lo)).view(np.int64)

    def totals(self) -> dict[int, tuple[int, int, int, int]]:
        """pc -> (hit, latency, stall, idle)."""
        return {pc: (h, la, s, i) for pc, (h, la, s, i) in zip(self.pcs.tolist(), self.sums.tolist())}

    def set_lines(self, pcs: np.ndarray, lines: np.ndarray, no_pc_line: int) -> None:
        """Every record's `line`: `lines[k]` where its PC is `pcs[k]` (sorted), `no_pc_line` for a record
        without a PC, else -1."""
        from attdec.model.totals import table_fits

        if not self.waves:
            return
        if not table_fits(self.span, sum(len(w.insts) for w in self.waves)):
            found = lines_of_pcs(_column(self.waves, "pc"), pcs, lines, no_pc_line)
            self._spread(self.waves, found)
            return
        line_at = np.full(self.span + 1, -1, np.int64)  # the last: every PC outside the span
        inside = (pcs >= np.uint64(self.lo)) & (pcs < np.uint64(self.lo + self.span))
        line_at[self._offsets(pcs[inside])] = lines[inside]
        for g in self.groups:
            pc = _column(g, "pc")
            found = line_at.take(np.minimum(pc - np.uint64(self.lo), np.uint64(self.span)).view(np.int64))
            found[pc == 0] = no_pc_line
            self._spread(g, found)

    @staticmethod
    def _spread(waves, found: np.ndarray) -> None:
        at = 0
        for w in waves:
            w.insts["line"] = found[at : at + len(w.insts)]
            at += len(w.insts)


def _column(waves, field: str) -> np.ndarray:
    """One field of the waves' records, laid end to end."""
    return np.concatenate([w.insts[field] for w in waves])


def _sums_at_once(waves) -> tuple[np.ndarray, np.ndarray]:
    """(PCs, their (hit, latency, stall, idle) rows) over all `waves` (pc 0 skipped), PCs ascending."""
    from attdec.model.totals import idle_before, totals_by

    parts = [w.insts for w in waves if len(w.insts)]
    if not parts:
        return np.zeros(0, np.uint64), np.zeros((0, 4), np.int64)
    pc = np.concatenate([a["pc"] for a in parts])
    keep = pc != 0
    lens = np.array([len(a) for a in parts])
    counts = np.add.reduceat(keep, np.cumsum(lens) - lens, dtype=np.intp)
    t, du, st = (np.concatenate([a[f] for a in parts]).compress(keep) for f in ("time", "duration", "stall"))
    begins = np.array([w.begin for w in waves if len(w.insts)], np.int64)
    return totals_by(pc.compress(keep), (du, st, idle_before(t, du, begins, counts)))


class Folder:
    """What the listing needs of waves that are dropped once decoded (a big blob decoded in windows for
    `hotspots`/`waves`: attdec.decoders.rdna.windowed, gfx9.windowed): their totals per PC, kept as they come.
    Each wave is folded to a row per PC it stalled on (`Wave.folded`: `waves` reads a row per wave), or with
    `keep_waves=False` (a report of totals only) counted and not kept at all: the decoders get None."""

    MERGE = 256  # waves between merges of the per-PC sums

    def __init__(self, keep_waves: bool = True) -> None:
        self.keep_waves = keep_waves
        self.pcs: list[np.ndarray] = []
        self.sums: list[np.ndarray] = []
        self.no_pc: tuple[int, ...] = (0, 0, 0, 0)  # (hit, latency, stall, idle) of the records without a PC
        self.dropped = 0  # waves counted, not kept (keep_waves=False; fileless ones aside, as the sources do)
        self.dropped_records = 0

    def add(self, waves) -> None:
        """Add the waves' records to the totals."""
        upc, sums = _sums_at_once(waves)
        self.pcs.append(upc)
        self.sums.append(sums)
        if len(self.pcs) >= self.MERGE:
            self._merge()
        self.no_pc = tuple(a + b for a, b in zip(self.no_pc, _no_pc_totals(waves)))

    def table(self, waves) -> WaveTable:
        """Whole waves (a blob's) added to the totals and folded into a table of them at once, as `self(wave)`
        folds one (keep_waves)."""
        self.add(waves)
        return WaveTable.of(waves, by_pc=True)

    def __call__(self, wave):
        from attdec.model import Wave

        self.add([wave])
        if not self.keep_waves:
            if not wave.fileless:
                self.dropped += 1
                self.dropped_records += len(wave.insts)
            return None
        ins = wave.insts
        pcs, first, inv = np.unique(ins["pc"], return_index=True, return_inverse=True)
        stall = np.bincount(inv, ins["stall"], len(pcs)).round()
        duration = np.bincount(inv, ins["duration"], len(pcs)).round()
        keep = stall != 0
        keep[:1] = True  # the first PC's row also holds the others' duration
        rows = ins[first[keep]]
        rows["stall"] = stall[keep]
        rows["duration"] = duration[keep]
        rows["duration"][:1] += int(duration[~keep].sum())
        return Wave(
            wave.se, wave.cu, wave.simd, wave.slot, wave.begin, wave.end, rows,
            () if len(ins) else list(wave.timeline[:3]), wave.seq, wave.contexts, wave.path, len(ins),
        )  # fmt: skip

    def _merge(self) -> None:
        if len(self.pcs) > 1:
            pcs = np.concatenate(self.pcs)
            upc, inv = np.unique(pcs, return_inverse=True)
            sums = np.zeros((len(upc), 4), np.int64)
            np.add.at(sums, inv, np.concatenate(self.sums))
            self.pcs, self.sums = [upc], [sums]

    def totals(self) -> dict[int, tuple[int, int, int, int]]:
        self._merge()
        if not self.pcs:
            return {}
        return {pc: (h, la, s, i) for pc, (h, la, s, i) in zip(self.pcs[0].tolist(), self.sums[0].tolist())}


def build_listing(dispatch: Dispatch, code_objects: list[LoadedCode], folder: Folder | None = None) -> list[CodeLine]:
    """Rows of code.json for `dispatch`'s waves; also sets every wave's `insts["line"]`.

    PCs inside no code object (or no kernel) get one row each after the kernels, with Codeobj 0 and
    the raw address as Vaddr, as the C++ writer does; `dispatch.problems` says how many. With `folder`,
    the totals are those it kept of the waves it folded (and of the others).
    """
    table = dispatch.waves if isinstance(dispatch.waves, WaveTable) else None
    pc_sums = None
    if folder is not None:
        if table is None:  # (a table's waves are all folded)
            folder.add([w for w in dispatch.waves if w.folded is None])
        totals = folder.totals()
    else:
        pc_sums = _PcSums(dispatch.waves)
        totals = pc_sums.totals()
    # Which kernels are touched: (codeobj index, kernel index) per PC.
    spans = []  # (abs start, abs end, object index, kernel range)
    for oi, lc in enumerate(code_objects):
        for kr in _kernel_ranges(lc):
            spans.append((lc.base + kr[0], lc.base + kr[1], oi, kr))
    spans.sort(key=lambda s: s[0])
    starts = [s[0] for s in spans]
    touched: set[int] = set()
    unknown: list[int] = []
    for pc in sorted(totals):
        i = bisect_right(starts, pc) - 1
        if i >= 0 and pc < spans[i][1]:
            touched.add(i)
        else:
            unknown.append(pc)

    rows: list[CodeLine] = []
    line_of_pc: dict[int, int] = {}
    order = sorted(touched, key=lambda i: (code_objects[spans[i][2]].id, spans[i][3][0]))
    for i in order:
        _lo, _hi, oi, (klo, khi, sym) = spans[i]
        lc = code_objects[oi]
        rows.append(CodeLine(line=len(rows), text=f"; {sym}", source="", codeobj=lc.id, vaddr=klo))
        for ins in lc.insts:
            if not klo <= ins.address < khi:
                continue
            pc = lc.base + ins.address
            hit, lat, stall, idle = totals.get(pc, (0, 0, 0, 0))
            line = len(rows)
            line_of_pc[pc] = line
            rows.append(
                CodeLine(
                    line=line,
                    text=ins.text,
                    source=_source(lc.co, ins.address),
                    codeobj=lc.id,
                    vaddr=ins.address,
                    hit=hit,
                    latency=lat,
                    stall=stall,
                    idle=idle,
                )
            )
    for pc in unknown:
        hit, lat, stall, idle = totals[pc]
        line_of_pc[pc] = len(rows)
        rows.append(
            CodeLine(
                line=len(rows),
                text=f"<pc 0x{pc:x} outside the code objects>",
                codeobj=0,
                vaddr=pc,
                hit=hit,
                latency=lat,
                stall=stall,
                idle=idle,
            )
        )
    no_pc_line = -1
    if folder is not None:
        hit, lat, stall, idle = folder.no_pc
    elif pc_sums is not None and not pc_sums.without_pc:
        hit = lat = stall = idle = 0
    else:
        hit, lat, stall, idle = _no_pc_totals(dispatch.waves)
    if hit:
        no_pc_line = len(rows)
        rows.append(
            CodeLine(line=no_pc_line, text=NO_PC, codeobj=0, vaddr=0, hit=hit, latency=lat, stall=stall, idle=idle)
        )
        n = table.records if table is not None else sum(w.records for w in dispatch.waves)
        n += folder.dropped_records if folder is not None else 0
        dispatch.problems.append(
            f"{hit:,} of {n:,} instruction records have no PC (their PC walk stopped early, or no code was "
            f"given): counted in the {NO_PC} row, so totals are over every decoded record"
        )
    missing = [pc for pc in totals if pc not in line_of_pc]
    if unknown:
        dispatch.problems.append(f"{len(unknown)} traced PC(s) outside every loaded kernel, first 0x{unknown[0]:x}")
    if missing:
        dispatch.problems.append(f"{len(missing)} traced PC(s) fall between instructions, first 0x{missing[0]:x}")

    pcs = np.fromiter(line_of_pc.keys(), np.uint64, len(line_of_pc))
    lines = np.fromiter(line_of_pc.values(), np.int64, len(line_of_pc))
    srt = np.argsort(pcs)
    pcs, lines = pcs[srt], lines[srt]
    if table is not None:
        table.line_map = (pcs, lines, no_pc_line)
        return rows
    if pc_sums is not None:
        pc_sums.set_lines(pcs, lines, no_pc_line)
        return rows
    parts = [w.insts for w in dispatch.waves if len(w.insts)]
    if parts:  # one lookup for every wave's records
        found = lines_of_pcs(np.concatenate([a["pc"] for a in parts]), pcs, lines, no_pc_line)
        at = 0
        for a in parts:
            a["line"] = found[at : at + len(a)]
            at += len(a)
    return rows


def _source(co, vaddr: int) -> str:
    f = getattr(co, "source_of", None)
    return (f(vaddr) or "") if f else ""
