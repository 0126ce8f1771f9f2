"""Radeon GPU Profiler files (.rgp) as raw captures: their SQTT streams and code objects -> RawDispatches.

An .rgp holds per shader engine the same hardware SQTT stream a rocprofv3 `.att` blob does, plus the code
objects and where they were loaded. attdec.sources.rgp.container reads both containers (SQTT file, RDF);
this module turns what they hold into `RawDispatch`es that `attdec.sources.raw.decode_dispatch` decodes:

* **dispatches**: a stream can hold several trace sessions back to back (tinygrad's rgptool concatenates
  one session per dispatch). Each session starts with the stream's own header again (RDNA HEADER token,
  gfx9 software header), so a stream is cut where its first 8 bytes recur at an 8-aligned offset; session
  k of every SE is dispatch k.
* **kernels**: each session's RGP markers name its pipeline (BIND_PIPELINE `api_pso_hash`, through
  PSO_CORRELATION to the loader event's hash); without markers, the kernel entry PC the trace latched
  (COMPUTE_PGM_LO/HI) picks the code object loaded around it.
* **load addresses** come from the loader events, matched to code objects by hash: the container's own
  (RDF), PAL metadata `.internal_pipeline_hash` (Mesa), or the md5 of the object (tinygrad).
* **the GPU** comes from the streams (generation), the HSA code objects (chip), and ASIC info (gfxip level,
  PCI device id); when they disagree that is a problem line, and without a credible chip the target is the
  family alone ("gfx11 (chip unknown)").

Everything the reader repaired or doubts is a problem line on the file's first dispatch, once.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from attdec.errors import AttdecError, FormatError, read_bytes
from attdec.model.record import Record, field
from attdec.model.target import SQTT_VERSIONS, Target, family_target, from_pci_id, from_version
from attdec.sources.kind import Tracker, blob_weight
from attdec.sources.rgp.magic import sniff

if TYPE_CHECKING:  # the container, decoders, ISA and raw model: imported by the functions that read, not by detect
    from attdec.isa.codeobj import CodeObject
    from attdec.sources.raw import RawBlob, RawCodeObject, RawDispatch
    from attdec.sources.rgp.container import RgpFile

ELFOSABI_AMDGPU_HSA = 64  # LLVM code objects name their exact chip; PAL/Mesa ones a family representative


# ---- the input kind (attdec.sources.KINDS) -----------------------------------------------------


def detect(path: Path) -> bool:
    """A file that starts with the SQTT file magic or 'AMD_RDF '."""
    if not path.is_file():
        return False
    with open(path, "rb") as f:
        return sniff(f.read(8)) is not None


def load(path: str | Path, tracker: Tracker | None = None) -> list[RawDispatch]:
    from attdec.sources.rgp.container import read_rgp

    return build(read_rgp(read_bytes(path), str(path)))


def weight(path: Path) -> int:
    return blob_weight(path.stat().st_size)  # the SQTT data is most of the file


# ---- RgpFile -> RawDispatches -----------------------------------------------------------------


class _Placed(Record):
    """One code object of the file, at the address a loader event gives (None: not known)."""

    index: int
    data: bytes
    base: int | None
    co: CodeObject
    keys: set[int] = field(default_factory=set)  # 64-bit hashes that name it

    @property
    def name(self) -> str:
        return f"code_object_{self.index + 1}"

    def holds(self, pc: int) -> bool:
        return self.base is not None and self.base + self.co.text_vaddr <= pc < self.base + self.co.text_end

    def raw(self) -> RawCodeObject:
        from attdec.sources.raw import RawCodeObject

        return RawCodeObject(self.data, self.base, self.name, self.index + 1)


def build(f: RgpFile) -> list[RawDispatch]:
    """The dispatches of a parsed .rgp. AttdecError only when nothing in it can be decoded."""
    from attdec.sources.raw import RawDispatch

    problems = list(f.problems)
    objs = _code_objects(f, problems)
    if not objs:
        why = f" ({problems[-1]})" if problems else ""
        raise AttdecError(f"no readable code object in this RGP file, nothing to map the trace to{why}", f.path)
    tgt = resolve_target(f, objs, problems)
    out = []
    for k, blobs in enumerate(_sessions(f, problems)):
        chosen, kernels, note = _identify(blobs, objs, f.pso)
        raw = RawDispatch(
            name=f"{'+'.join(kernels) or 'dispatch'}#{k + 1}",
            target=tgt,
            code_objects=[p.raw() for p in chosen],
            blobs=sorted(blobs, key=lambda b: (b.se, b.data, b.label)),  # by SE, then bytes
            kernel=kernels[0] if len(kernels) == 1 else "",
            path=f.path,
        )
        if note:
            raw.problems.append(note)
        out.append(raw)
    if not out:
        raise AttdecError("no SQTT data in this RGP file" + (f" ({problems[0]})" if problems else ""), f.path)
    out[0].problems[:0] = problems
    return out


# ------------------------------------------------------------------------------------------ code objects
def _code_objects(f: RgpFile, problems: list[str]) -> list[_Placed]:
    import hashlib

    from attdec.isa import load_code_object

    found = []
    for i, c in enumerate(f.code_objects):
        try:  # FormatError: damaged (compressed) bytes or not a code object; a missing zstandard stops here
            data = c.data()
            co = load_code_object(data, f"code_object_{i + 1}")  # the name raw.load_code gives it too
        except FormatError as err:
            problems.append(f"{c.where}: not a readable code object ({err.message}); left out")
            continue
        keys = {int.from_bytes(hashlib.md5(data).digest()[:8], "little")}  # tinygrad rgptool's hash
        keys.update(c.hash or ())
        pipelines = (co.metadata or {}).get("amdpal.pipelines") or [{}]
        pal = pipelines[0].get(".internal_pipeline_hash") if isinstance(pipelines[0], dict) else None
        if isinstance(pal, list):
            keys.update(v for v in pal if isinstance(v, int))
        found.append(_Placed(i, data, None, co, keys))
    placed, free = [], list(found)
    loads = [e for e in f.loads if not e.unload]
    unmatched = []
    for ev in loads:
        hit = next((p for p in found if set(ev.hash) & p.keys), None)
        if hit is None:
            unmatched.append(ev)
            continue
        placed.append(_Placed(hit.index, hit.data, ev.base, hit.co, hit.keys | set(ev.hash)))
        if hit in free:
            free.remove(hit)
    if unmatched and len(unmatched) == len(free):
        problems.append(
            f"{len(free)} loader event(s) match no code object by hash: paired with the remaining code "
            "object(s) in file order"
        )
        placed += [_Placed(p.index, p.data, e.base, p.co, p.keys | set(e.hash)) for p, e in zip(free, unmatched)]
        free = []
    elif unmatched:
        problems.append(f"{len(unmatched)} loader event(s) match no code object: ignored")
    placed += free  # no load address: decode_dispatch infers it from the kernel entry the trace latched
    return sorted(placed, key=lambda p: (p.index, p.base or 0))


# ------------------------------------------------------------------------------------------ the GPU
def resolve_target(f: RgpFile, objs: list[_Placed], problems: list[str]) -> Target:
    """The target of the file's dispatches: a chip when the evidence names one credibly, else the family."""
    from attdec.decoders import stream_generation

    gens: list[tuple[str, int]] = []  # (evidence, generation)
    for s in f.streams:
        try:
            g = stream_generation(s.data()[:8])
        except AttdecError:  # unreadable here: _sessions says why
            g = None
        if g is not None:
            gens.append(("the SQTT stream headers", g))
            break
    versions = {SQTT_VERSIONS[s.sqtt_version][0] for s in f.streams if s.sqtt_version in SQTT_VERSIONS}
    gens += [("SQTT_DESC's SQTT version", g) for g in sorted(versions)]
    if f.asic and f.asic.gfxip:
        gens.append((f"ASIC info's gfxip level {'.'.join(map(str, f.asic.gfxip))}", f.asic.gfxip[0]))
    if not gens:
        raise AttdecError("cannot tell the GPU: no SQTT stream header, SQTT_DESC or ASIC info", f.path)
    gen = gens[0][1]
    for what, g in gens[1:]:
        if g != gen:
            problems.append(f"{what} says gfx{g}, {gens[0][0]} gfx{gen}: decoded as gfx{gen}")
    chips: list[tuple[str, Target]] = []
    hsa = [p.co.target for p in objs if p.co.target and p.data[7:8] == bytes([ELFOSABI_AMDGPU_HSA])]
    if hsa:
        chips.append(("the code objects", max(set(hsa), key=hsa.count)))
    if f.asic and len(f.asic.gfxip) == 3:  # RDF: major, minor, stepping
        major, minor, step = f.asic.gfxip
        with suppress(AttdecError):  # a level attdec does not know names no chip
            chips.append(
                (f"ASIC info's gfxip level {major}.{minor}.{step}", from_version(major * 10000 + minor * 100 + step))
            )
    if f.asic and f.asic.device_id:
        t = from_pci_id(f.asic.device_id)
        if t is not None:
            chips.append((f"ASIC info's device id 0x{f.asic.device_id:04x}", t))
    chips_same_gen = [(w, t) for w, t in chips if t.generation == gen]
    for what, t in chips:
        if t.generation != gen:
            problems.append(f"{what} names {t.name}, but the trace is gfx{gen}: ignored")
    if not chips_same_gen:
        problems.append(f"the file names no gfx{gen} chip attdec knows: reported as gfx{gen} (chip unknown)")
        return family_target(gen)
    what, chip = chips_same_gen[0]
    for w, t in chips_same_gen[1:]:
        if t is not chip:
            problems.append(f"{w} names {t.name}, {what} {chip.name}: decoded as {chip.name}")
    return chip


# ------------------------------------------------------------------------------------------ sessions
def split_sessions(data: bytes) -> list[bytes]:
    """One stream cut where its 8-byte header recurs at an 8-aligned offset (a new trace session)."""
    from attdec.decoders import detect_format

    head = data[:8]
    if detect_format(head) is None:
        return [data]
    cuts, i = [0], data.find(head, 8)
    while i != -1:
        if i % 8 == 0:
            cuts.append(i)
        i = data.find(head, i + 1)
    return [data[a:b] for a, b in zip(cuts, [*cuts[1:], len(data)])]


def _sessions(f: RgpFile, problems: list[str]) -> list[list[RawBlob]]:
    """Blobs of each dispatch: session k of every stream."""
    from attdec.decoders import detect_format
    from attdec.sources.raw import RawBlob

    per_se, streams = [], []
    for s in f.streams:
        try:
            streams.append((s, s.data()))
        except FormatError as e:  # damaged compressed data
            problems.append(f"{s.where} (SE {s.se}): {e.message}; left out")
    formats = [detect_format(data[:8]) for _, data in streams]
    usual = max(set(formats) - {None}, key=formats.count, default=None)
    for (s, data), fmt in zip(streams, formats):
        if fmt != usual or not data:
            what = "no SQTT stream header" if fmt is None else f"a {fmt} stream among {usual} ones"
            problems.append(f"{s.where} (SE {s.se}): {what} (first bytes {data[:8].hex(' ')}); left out")
            continue
        per_se.append((s, split_sessions(data)))
    if not per_se:
        return []
    n = max(len(parts) for _, parts in per_se)
    short = [f"SE {s.se}" for s, parts in per_se if len(parts) != n]
    if short:
        problems.append(f"{', '.join(short)} hold fewer trace sessions than the others ({n}): matched in order")
    ses = [s.se for s, _ in per_se]
    if len(set(ses)) != len(ses):
        problems.append(f"several SQTT streams claim the same SE ({ses}): each decoded on its own")
    return [
        [
            RawBlob(s.se, parts[k], f"{f.path}: {s.where}" + (f" session {k + 1}" if len(parts) > 1 else ""))
            for s, parts in per_se
            if k < len(parts)
        ]
        for k in range(n)
    ]


def _identify(blobs: list[RawBlob], objs: list[_Placed], pso: dict) -> tuple[list[_Placed], list[str], str]:
    """(code objects, kernel names, note) of one dispatch, from its first stream that says."""
    from attdec.decoders import stream_generation
    from attdec.decoders.userdata import RGP_BIND_PIPELINE, RGP_EVENT, rgp_markers, scan_userdata

    bound, entry, events = [], None, 0
    for b in blobs:
        gen = stream_generation(b.data)
        if gen is None:
            continue
        scan = scan_userdata(b.data, gen)
        markers = rgp_markers(scan.userdata)
        events = sum(m.kind == RGP_EVENT for m in markers)
        for m in markers:
            if m.kind == RGP_BIND_PIPELINE:
                h = m.dwords[2] << 32 | m.dwords[1]
                names = {h, *pso.get(h, ())}
                p = next((p for p in objs if p.keys & names), None)
                if p is not None and p not in bound:
                    bound.append(p)
        if scan.entry_pcs:
            entry = scan.entry_pcs[-1]
        if bound or entry is not None:
            break
    chosen = bound or [p for p in objs if entry is not None and p.holds(entry)][:1]
    note = ""
    if not chosen:
        chosen = objs
        if len(objs) > 1:
            note = (
                "kernel not identified (no pipeline marker, no entry PC inside a loaded code object): "
                f"all {len(objs)} code objects listed"
            )
    elif events > 1:
        note = f"this trace session holds {events} dispatches (RGP EVENT markers): reported as one"
    return chosen, [k.name for p in chosen for k in p.co.kernels[:1]], note


# ---- `attdec info` ------------------------------------------------------------------------------


def describe(path: Path) -> dict:
    """The container, its chunks, the GPU and the dispatches of an .rgp, and what the reader repaired."""
    from attdec.sources.rgp.container import read_rgp

    data = read_bytes(path)
    f = read_rgp(data, str(path))
    info = {"container": f.container, "bytes": len(data), "chunks": [vars(c) for c in f.chunks], "dispatches": []}
    try:
        raws = build(f)
        info["dispatches"] = raws
        info["problems"] = raws[0].problems + [p for r in raws[1:] for p in r.problems]
    except AttdecError as e:
        info["problems"] = [*f.problems, e.message]
    return info
