"""Raw captures (SQTT blobs + code objects) and how they become a `Dispatch`.

Every raw input kind (tinygrad profile, rocprofv3 raw output folder, explicit blobs) is first turned
into `RawDispatch`es: what one kernel launch left behind before decoding. `decode_dispatch` then
loads the code objects (attdec.isa), runs the family decoder over each shader engine's blob
(attdec.decoders) and gives the result a code listing (attdec.sources.listing), so a raw input ends
up as the same `Dispatch` a ui_output folder gives.

The decoders and numpy are imported by the functions that decode: every input kind names its dispatches
with the types here, and recognising an input must not cost their import.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from attdec.errors import ArchError, AttdecError, FormatError
from attdec.model import CounterSamples, Dispatch, KernelResources, Wave, WaveTable, empty_occupancy
from attdec.model.options import DecodeOptions
from attdec.model.record import Frozen, Record, field
from attdec.model.records import MAX_SE

if TYPE_CHECKING:
    import numpy as np

    from attdec.decoders import CodeMap
    from attdec.model.target import Target


class RawCodeObject(Frozen):
    """A code object's bytes, where it was loaded and its load id (code.json's Codeobj column)."""

    data: bytes
    base: int | None  # load base: absolute PC = base + ELF vaddr; None = infer from the trace
    name: str  # file or program name, for messages (and the label of symbol-less kernels)
    id: int = 1  # rocprofiler code-object id; tinygrad objects are numbered from 1


# Blobs this big are mapped rather than read (errors.read_bytes): `hotspots` and `waves` decode them a
# window at a time (attdec.decoders.rdna.windowed), so that memory does not follow the blob's size.
MAPPED_BLOB = 64 << 20


class RawBlob(Frozen):
    """One shader engine's SQTT stream for one dispatch."""

    se: int
    data: bytes
    label: str  # file name or "<kernel>#<tag> se<N>", for messages
    itrace: bool | None = None  # instruction tracing on for this SE, when the source knows


class RawDispatch(Record):
    """One traced kernel launch, not decoded yet."""

    name: str  # "<kernel>#<tag>", "dispatch_<D>", ...
    target: Target | None  # from the source's device info; None: its code object names it
    code_objects: list[RawCodeObject] = field(default_factory=list)
    blobs: list[RawBlob] = field(default_factory=list)
    kernel: str = ""
    path: str | None = None  # where it came from (pickle, folder)
    agent: int | None = None  # rocprofv3 agent handle and dispatch id, when the source has them
    dispatch_id: int | None = None
    # with no code object: a rocprofv3 code.json whose instruction texts and addresses stand in for the
    # ISA (attdec.sources.listing.listed_code); None and no code object: decoded without PCs
    listing: str | None = None
    counters: list[CounterSamples] = field(default_factory=list)  # performance counters, when captured
    problems: list[str] = field(default_factory=list)  # what the source repaired or doubts (container damage)
    damage: list[str] = field(default_factory=list)  # what the source found damaged: Dispatch.damage

    def check(self) -> RawDispatch:
        """Refuse, before anything is decoded or printed, numbers its source took from file names or
        headers that no record can hold (a `_se1099511627776.att`)."""
        for b in self.blobs:
            if not 0 <= b.se <= MAX_SE:
                raise FormatError(f"shader engine {b.se} is out of range (0..{MAX_SE})", b.label)
        return self


def check_blob_target(blob: RawBlob, tgt: Target) -> None:
    """Refuse a blob whose own header names another generation than the dispatch's code object."""
    from attdec.decoders import stream_generation

    gen = stream_generation(blob.data)
    if gen is not None and gen != tgt.generation:
        raise ArchError(f"blob is a gfx{gen} SQTT stream but the code object is {tgt.name}", blob.label)


class LoadedDispatchCode(Record):
    """Code objects of a dispatch, loaded and disassembled once, shared by the CodeMap and the listing."""

    target: Target
    objects: list  # attdec.sources.listing.LoadedCode
    codemap: CodeMap
    problems: list[str] = field(default_factory=list)


PAGE = 0x1000


def _entry_pcs(raw: RawDispatch) -> list[int]:
    """Kernel entry addresses the trace latched (COMPUTE_PGM_LO/HI), last one of each blob."""
    return _latched(raw)[0]


def _latched(raw: RawDispatch) -> tuple[list[int], dict[int, int]]:
    """What the trace's register writes say about the code: the kernel entry addresses it latched (last one
    of each blob) and the ROCm code-object markers still loaded at the end (id -> load address)."""
    from attdec.decoders import stream_generation
    from attdec.decoders.userdata import scan_userdata

    pcs: list[int] = []
    markers: dict[int, int] = {}
    for b in raw.blobs:
        gen = stream_generation(b.data)
        if gen is not None:
            s = scan_userdata(b.data, gen)
            if s.entry_pcs and s.entry_pcs[-1] not in pcs:
                pcs.append(s.entry_pcs[-1])
            for mk in s.markers:
                if mk.unload:
                    markers.pop(mk.id, None)
                else:
                    markers[mk.id] = mk.addr
    return pcs, markers


def _kernel_entries(obj) -> list[int]:
    out = []
    for k in getattr(obj, "kernels", None) or []:
        e = k[1] if isinstance(k, tuple) else getattr(k, "entry", getattr(k, "vaddr", None))
        if isinstance(e, int):
            out.append(e)
    return out or [obj.text_vaddr]


# A kernel whose arguments the hardware preloads into SGPRs (gfx90a+ kernarg preload) starts 256 bytes past
# its symbol: the first 256 bytes are the preamble that loads them on firmware that cannot.
KERNARG_PRELOAD_SKIP = 0x100


def _placements(pc: int, entries: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(object, load base) of each (object, kernel entry vaddr) that, put on a page-aligned base, lands on
    the latched entry `pc`: at its entry, or else past a kernarg-preload preamble."""
    for skip in (0, KERNARG_PRELOAD_SKIP):
        hits = [(i, pc - e - skip) for i, e in entries if pc >= e + skip and (pc - e - skip) % PAGE == 0]
        if hits:
            return hits
    return []


def _infer_bases(raw: RawDispatch, loaded: Sequence[tuple[RawCodeObject, object]]) -> dict[int, int]:
    """Load bases for code objects the source could not place: the one whose kernel entry, put on a
    page-aligned base, lands on the entry PC the trace latched. Ambiguous or no match: not placed."""
    entries = [(i, e) for i, (co, obj) in enumerate(loaded) if co.base is None for e in _kernel_entries(obj)]
    out: dict[int, int] = {}
    for pc in _entry_pcs(raw):
        cands = _placements(pc, entries)
        if len({i for i, _ in cands}) == 1:
            out[cands[0][0]] = cands[0][1]
    return out


@contextlib.contextmanager
def no_gc():
    """Making many small objects that do not refer back to each other (ISA tables read from JSON, listing
    rows and waves rebuilt from columns) in a process holding a big heap: with the collector on, it runs
    a full collection every few thousand of them (0.09 s of the 59 captures' serial decode went to
    collections while the ISA tables loaded). Reference counting frees what is dropped."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def load_code(raw: RawDispatch) -> LoadedDispatchCode:
    """Load and disassemble every code object of a dispatch; check each against the dispatch arch."""
    with no_gc():
        return _load_code(raw)


def _load_code(raw: RawDispatch) -> LoadedDispatchCode:
    from attdec.decoders import CodeMap
    from attdec.sources.listing import LoadedCode

    loaded = [(co, _code_object(co.data, _co_where(raw, co))) for co in raw.code_objects]
    tgt = raw.target
    for co, obj in loaded:
        named = obj.target
        if tgt is None:
            tgt = named
        elif named is not None and named.generation != tgt.generation:
            raise ArchError(f"code object is {named.name}, but the trace is {tgt.name}", _co_where(raw, co))
    if tgt is None:
        raise ArchError("neither the capture nor its code object names the GPU: pass --arch", _where(raw))
    if not loaded and raw.listing:
        return _listed_code(raw, tgt)
    if not loaded:  # blobs decoded without code (attdec decode, a raw folder that kept none): records get no PCs
        return LoadedDispatchCode(tgt, [], CodeMap(), [])
    inferred = _infer_bases(raw, loaded) if any(co.base is None for co, _ in loaded) else {}
    codemap = CodeMap()
    objects, problems, unplaced = [], [], []
    for i, (co, obj) in enumerate(loaded):
        base = co.base if co.base is not None else inferred.get(i)
        if base is None:
            unplaced.append(co.name)
            continue
        if co.base is None:
            problems.append(f"{co.name}: load base 0x{base:x} inferred from the kernel entry PC in the trace")
        insts, walked = _disassembled(obj.text, obj.arch or tgt.name, obj.text_vaddr)
        codemap.add(walked, base)
        objects.append(LoadedCode(id=co.id, base=base, name=co.name, co=obj, insts=insts))
    if not objects:
        raise AttdecError(
            "no load address for its code object(s): no code-object markers in the trace, no "
            "rocprofv3 results file, and the kernel entry PC matches none of them",
            _where(raw),
        )
    if unplaced:
        problems.append(f"{len(unplaced)} code object(s) with unknown load address left out: {', '.join(unplaced[:3])}")
    return LoadedDispatchCode(tgt, objects, codemap, problems)


def _listed_code(raw: RawDispatch, tgt: Target) -> LoadedDispatchCode:
    """The code of a dispatch from a code.json listing (`raw.listing`). code.json gives addresses inside
    each code object, not where it was loaded: each object is placed at its code-object marker in the trace,
    else as `_infer_bases` places code objects, by the kernel entry PC the trace latched; one neither
    places is left out, with a note (none placed: the dispatch is decoded without PCs, with a note)."""
    from attdec.decoders import CodeMap
    from attdec.errors import read_json
    from attdec.sources.listing import LoadedCode, listed_code
    from attdec.sources.ui_output import parse_code

    assert raw.listing is not None
    rows = parse_code(read_json(raw.listing), raw.listing).rows
    objects = listed_code(rows, tgt)
    if not objects:
        raise AttdecError("code.json lists no instruction to map the trace's PCs to", raw.listing)
    pcs, markers = _latched(raw)
    bases = {i: markers[co_id] for i, (co_id, _, _) in enumerate(objects) if co_id in markers}
    entries = [
        (i, e)
        for i, (_, lc, _) in enumerate(objects)
        if i not in bases
        for _, e, _ in lc.kernels or [("", lc.text_vaddr, None)]
    ]
    for pc in pcs:
        cands = _placements(pc, entries)
        if len({i for i, _ in cands}) == 1:
            bases[cands[0][0]] = cands[0][1]
    codemap = CodeMap()
    placed = []
    for i, (co_id, lc, insts) in enumerate(objects):
        if i in bases:
            codemap.add(insts, bases[i])
            placed.append(LoadedCode(id=co_id, base=bases[i], name=raw.listing, co=lc, insts=insts))
    if not placed:
        why = (
            f"{raw.listing}: no code-object marker in the trace and no kernel of it starts where the trace's "
            "waves did (page-aligned): decoded without PCs (per-line figures unknown, totals kept)"
        )
        return LoadedDispatchCode(tgt, [], CodeMap(), [why])
    problems = [f"no code object: instructions and source lines from {raw.listing}"]
    if len(placed) < len(objects):
        left = len(objects) - len(placed)
        problems.append(f"{left} code object(s) of code.json with unknown load address left out")
    return LoadedDispatchCode(tgt, placed, codemap, problems)


# Code objects up to CACHED_CODE_BYTES are parsed and disassembled once per process (keyed by their bytes
# and by the attdec.isa function that reads them): the dispatches of one kernel, and their blobs, share them.
CACHED_CODE_BYTES = 1 << 20
CACHED_CODE_OBJECTS = 128


def _code_object(data: bytes, name: str):
    from attdec.isa import load_code_object

    if len(data) > CACHED_CODE_BYTES:
        return load_code_object(data, name)
    return _cached_code_object(load_code_object, data, name)


@lru_cache(maxsize=CACHED_CODE_OBJECTS)
def _cached_code_object(load_code_object, data: bytes, name: str):
    return load_code_object(data, name)


def _disassembled(text: bytes, arch: str, vaddr: int) -> tuple[list, list]:
    """(what users read, as LLVM prints it; what the PC walk reads, lenient: attdec.isa.decoder.readings)."""
    from attdec.isa import readings

    if len(text) > CACHED_CODE_BYTES:
        return readings(text, arch, vaddr)
    return _cached_readings(readings, text, arch, vaddr)


@lru_cache(maxsize=CACHED_CODE_OBJECTS)
def _cached_readings(readings, text: bytes, arch: str, vaddr: int) -> tuple[list, list]:
    return readings(text, arch, vaddr)


def _where(raw: RawDispatch) -> str:
    return f"{raw.path}: {raw.name}" if raw.path else raw.name


def _co_where(raw: RawDispatch, co: RawCodeObject) -> str:
    """Where a code object's errors are: its file, or the file it is inside (a profile's program)."""
    import os

    return co.name if not raw.path or co.name == raw.path or os.path.isfile(co.name) else f"{raw.path}: {co.name}"


def decode_blobs(
    raw: RawDispatch,
    code: LoadedDispatchCode | None = None,
    options: DecodeOptions = DecodeOptions(),
    fold: Callable[[Wave], object] | None = None,
    progress: Callable[[int], None] | None = None,
):
    """Yield (blob, BlobResult, seconds) for each blob of `raw`, decoded on its own against its code
    objects as `options` say; `fold` and `progress` go to attdec.decoders.decode_blob for a blob decoded in
    windows (what `decode_dispatch` makes of `options.fold`)."""
    from attdec.decoders import decode_blob

    code = code or load_code(raw)
    for b in raw.blobs:
        check_blob_target(b, code.target)
    for b in raw.blobs:
        t0 = time.perf_counter()
        res = decode_blob(
            b.data,
            code.target,
            code.codemap,
            b.se,
            where=b.label,
            compat=options.compat,
            target_cu=options.target_cu,
            fold=fold,
            window=options.window,
            progress=progress,
            # occupancy=False spares no blob traced without instructions: its occupancy is all there is of it
            occupancy=options.occupancy or b.itrace is False,
        )
        yield b, res, time.perf_counter() - t0


def decode_dispatch(
    raw: RawDispatch,
    on_blob: Callable[[RawBlob], None] | None = None,
    options: DecodeOptions = DecodeOptions(),
    on_bytes: Callable[[RawBlob, int], None] | None = None,
) -> Dispatch:
    """Decode every blob of `raw` against its code objects into one `Dispatch` with a code listing;
    `on_blob(blob)` is called after each blob (progress). With `options.fold` (what `hotspots` and `waves`
    read), a big blob is decoded `options.window` bytes at a time (default: the family's windowed.WINDOW)
    and its waves are folded (`Wave.folded`; every blob's, into one WaveTable), or with fold="totals" (a
    report of totals only) counted and not kept (`Dispatch.waves_not_kept`): memory follows the window, not
    the blob; `on_bytes(blob, n)` is told after each window that n bytes of it are decoded (progress within a
    big blob)."""
    from attdec.sources.listing import Folder, build_listing

    code = load_code(raw)
    folder = Folder(keep_waves=options.fold != "totals") if options.fold else None
    progress = None
    if folder is not None and on_bytes is not None:  # blobs are decoded in order: the one under way is the next
        progress = lambda n: on_bytes(raw.blobs[len(results)], n)
    results: list = []
    for blob, res, _ in decode_blobs(raw, code, options, folder, progress):
        if folder is not None and folder.keep_waves and not isinstance(res.waves, WaveTable):
            res.waves = folder.table(res.waves)  # a whole blob's waves folded too
        results.append(res)
        if on_blob is not None:
            on_blob(blob)
    d = merge_results(raw, results, code.target)
    d.problems[:0] = raw.problems + code.problems
    d.damage[:0] = raw.damage
    d.resources = dispatched_kernel_resources(code, raw.kernel, d.occupancy)
    if folder is not None:
        d.waves_not_kept = folder.dropped
    folded = folder is not None and (folder.dropped or any(w.folded is not None for w in d.waves))
    d.code = build_listing(d, code.objects, folder if folded else None)
    if not d.kernel:  # sources without kernel names (rocprofv3 raw without results): the listed kernel
        d.kernel = next((c.text[2:] for c in d.code if c.is_label), "")
    return d


def dispatched_kernel_resources(code: LoadedDispatchCode, kernel: str, occ: np.ndarray) -> KernelResources | None:
    """The resources of the kernel this dispatch ran: the one of that name, else the one whose entry the
    waves started at (occupancy records carry the entry PC), else the only kernel there is."""
    from attdec.model.totals import distinct

    kernels = [(obj, k) for obj in code.objects for k in obj.co.kernels if hasattr(k, "entry")]
    entries: set[int] = set()
    for at in range(0, len(occ), 1 << 20):  # a step at a time: a big blob has millions of rows, a few PCs
        entries.update(distinct(occ["pc"][at : at + (1 << 20)]).tolist())
    entries.discard(0)
    pick = next((ok for ok in kernels if kernel and ok[1].name == kernel), None)
    pick = pick or next((ok for ok in kernels if ok[0].base + ok[1].entry in entries), None)
    if pick is None and len(kernels) == 1:
        pick = kernels[0]
    return pick[0].co.resources(pick[1], code.target) if pick else None


def merge_results(raw: RawDispatch, results, tgt: Target) -> Dispatch:
    """BlobResults of one dispatch -> one Dispatch (waves numbered per (se, simd, slot) like rocprofv3;
    INFO, SHADERDATA, other-SIMD and PERFEVENT records of every blob; problems and warnings prefixed with the blob)."""
    import numpy as np

    d = Dispatch(name=raw.name, target=tgt, kernel=raw.kernel, path=raw.path, counters=list(raw.counters))
    seq: dict[tuple[int, int, int], int] = {}
    occ, shaderdata, perf, other_simd = [], [], [], []
    waves: list[Wave] = []
    tables: list[WaveTable] = []  # blobs whose folded waves came as columns (`waves` of a raw capture)
    untraced: dict[int, int] = {}  # SE -> waves started where instruction tracing was off
    for blob, r in zip(raw.blobs, results):
        label = blob.label
        if blob.itrace is False and len(r.occupancy):
            untraced[blob.se] = untraced.get(blob.se, 0) + int(r.occupancy["start"].sum())
        if isinstance(r.waves, WaveTable):
            tables.append(r.waves.numbered(seq))
        else:
            for w in r.waves:
                if w.fileless:
                    continue  # keep raw and ui_output views equal
                key = (w.se, w.simd, w.slot)
                w.seq = seq.get(key, 0)
                seq[key] = w.seq + 1
                waves.append(w)
        if len(r.occupancy):
            occ.append(r.occupancy)
        if r.realtime:
            d.realtime_se.setdefault(r.se, []).extend(r.realtime)
        d.problems.extend(f"{label}: {p}" for p in r.problems + r.warnings)
        if r.damaged:
            more = f" (and {len(r.problems) - 1} more)" if len(r.problems) > 1 else ""
            d.damage.append(f"{label}: decoded with damage: {r.problems[0]}{more}")
        d.info += r.info
        shaderdata.append(r.shaderdata)
        other_simd.append(r.other_simd)
        perf.append(r.perfevents)
        d.rt_frequency = d.rt_frequency or r.rt_frequency
    d.waves = WaveTable.join(([WaveTable.of(waves)] if waves else []) + tables) if tables else waves  # type: ignore[assignment]
    # one blob's rows as they are: a copy would double what a big blob's occupancy holds
    d.occupancy = (np.concatenate(occ) if len(occ) > 1 else occ[0]) if occ else empty_occupancy()
    if sum(untraced.values()):
        ses = [se for se, n in sorted(untraced.items()) if n]
        where = f"se{ses[0]}" if len(ses) == 1 else f"{len(ses)} SEs"
        d.problems.append(
            f"{sum(untraced.values()):,} wave(s) ran on {where} with instruction tracing off: in occupancy only"
        )
    if sum(len(s) for s in shaderdata):
        d.shaderdata = np.concatenate(shaderdata)
    if sum(len(o) for o in other_simd):
        d.other_simd = np.concatenate(other_simd)
    if perf and sum(len(p) for p in perf):
        d.counters.append(perfevent_samples(np.concatenate(perf)))
    if d.realtime_se:  # the flat list holds one SE's samples: clocks of different SEs do not mix
        d.realtime = list(d.realtime_se[min(d.realtime_se)])
    return d


PERF_COUNTERS = 8  # a PERF token carries counters 0-3 (bank 0) or 4-7 (bank 1)


def perfevent_samples(pe: np.ndarray) -> CounterSamples:
    """PERFEVENT records (PERFEVENT_DTYPE) as counter samples: one per record and counter, counter k of
    bank b named "perfcounter <4b + k>" (the trace does not name them: they are the counters given to
    rocprofv3 --att-perfcounters, in that order), located at its SE and CU, timed."""
    import numpy as np

    from attdec.model import COUNTER_DTYPE

    n = len(pe)
    s = np.zeros(4 * n, COUNTER_DTYPE)
    s["counter"] = (pe["bank"].astype(np.int32)[:, None] * 4 + np.arange(4)).reshape(-1)
    s["se"] = np.repeat(pe["se"], 4)
    s["cu"] = np.repeat(pe["cu"], 4)
    s["xcc"], s["sa"], s["inst"] = 0, 0, -1  # PERF tokens are read on shader array 0 only
    s["time"] = np.repeat(pe["time"], 4)
    s["value"] = np.stack([pe[f"events{k}"] for k in range(4)], 1).reshape(-1)
    names = [f"perfcounter {k}" for k in range(PERF_COUNTERS)]
    note = "the trace does not name its counters: perfcounter k is the k-th counter given to --att-perfcounters"
    return CounterSamples("SQTT PERFEVENT", names, ["SQ"] * PERF_COUNTERS, s, [note])
