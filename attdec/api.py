"""attdec's public Python API: the pipeline the command line runs, as functions.

    import attdec
    ds = attdec.open("runs/ui_output_agent_*")          # list[Dispatch]; raw captures are decoded
    h = attdec.hotspots(ds)                              # Hotspots: totals, by_type, and .table (numpy columns)
    df = pandas.DataFrame(attdec.instructions(ds))       # every executed instruction record, one row each

See docs/api.md for the whole surface and the stability rules. Everything here is re-exported from
`attdec` itself, imported on first use so that `import attdec` stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attdec.analysis.hotspots import Hotspots
from attdec.errors import AttdecError, read_bytes
from attdec.model import Dispatch, Wave, empty_insts, empty_occupancy
from attdec.model.options import DecodeOptions, InputOptions
from attdec.model.record import Record, field
from attdec.model.records import AMD_NAMES
from attdec.sources.kind import Progress

if TYPE_CHECKING:  # numpy is imported by the functions that make arrays: the commands call this module too
    from attdec.analysis.table import Table
    from attdec.decoders import BlobResult
    from attdec.sources.pipeline import Report
    from attdec.sources.raw import RawBlob, RawDispatch

PathLike = str | Path


def _paths(paths) -> list:
    return [paths] if isinstance(paths, (str, Path)) else list(paths)


def _dispatches(dispatches) -> list[Dispatch]:
    return [dispatches] if isinstance(dispatches, Dispatch) else list(dispatches)


def open(
    paths: PathLike | Iterable[PathLike],
    *,
    input_format: str | None = InputOptions.input_format,
    code: Iterable[str] = InputOptions.code,
    arch: str | None = InputOptions.arch,
    compat: str | None = DecodeOptions.compat,
    jobs: int | None = DecodeOptions.jobs,
    target_cu: int | None = DecodeOptions.target_cu,
    fold: bool | str = DecodeOptions.fold,
    window: int | None = DecodeOptions.window,
    occupancy: bool = DecodeOptions.occupancy,
    progress: Progress | None = None,
) -> list[Dispatch]:
    """Every dispatch the paths name (folders, parents, globs, archives, raw captures; raw ones decoded,
    as the AMD decoder build `compat` does: None or "0.1.6", the default, "0.1.5", "0.1.4" or "rocm-7.13";
    docs/compat.md). The keywords are the fields of `InputOptions` and its `DecodeOptions` (docs/api.md):
    `code` = ["k.co@0x7f0000001000", ...] makes the paths the .att blobs of one dispatch; `jobs=N` decodes
    raw dispatches on N forked processes (None, the default as on the command line: one per idle core;
    1: in this process)."""
    decode = DecodeOptions(compat=compat, jobs=jobs, target_cu=target_cu, fold=fold, window=window, occupancy=occupancy)
    options = InputOptions(input_format=input_format, code=tuple(code), arch=arch, decode=decode)
    return open_inputs(paths, options, progress=progress)


def open_inputs(
    paths: PathLike | Iterable[PathLike],
    options: InputOptions = InputOptions(),
    *,
    progress: Progress | None = None,
    need: Iterable[str] = (),
    report: Report | None = None,
    before_decode: Callable[[list[RawDispatch]], None] | None = None,
) -> list[Dispatch]:
    """`open` with its options as one record, as the command line makes it. `need` names what a folder
    defers that is read now, under `progress` ("waves"); with `report(level, error)` an input or dispatch
    that fails is reported and the others are still read (without: its error is raised);
    `before_decode(raw dispatches)` is called before raw ones are decoded."""
    from attdec.sources.pipeline import open_dispatches

    return open_dispatches(
        _paths(paths), options, progress=progress, need=tuple(need), report=report, before_decode=before_decode
    )


def open_raw(
    paths: PathLike | Iterable[PathLike],
    *,
    input_format: str | None = InputOptions.input_format,
    code: Iterable[str] = InputOptions.code,
    arch: str | None = InputOptions.arch,
    report: Report | None = None,
) -> list[RawDispatch]:
    """The raw, undecoded dispatches the paths name (blobs + code objects), for `decode_dispatch`-level work;
    `report` as for `open_inputs`."""
    from attdec.sources.pipeline import open_raw as read

    return read(_paths(paths), InputOptions(input_format=input_format, code=tuple(code), arch=arch), report)


def open_blobs(
    paths: PathLike | Iterable[PathLike],
    *,
    input_format: str | None = InputOptions.input_format,
    code: Iterable[str] = InputOptions.code,
    arch: str | None = InputOptions.arch,
    se: int | None = None,
    report: Report | None = None,
) -> list[RawDispatch]:
    """What `attdec decode` reads: bare .att blobs of one dispatch (with `code`, or files no input kind
    claims: then without code objects, and the records get no PCs; `se` for a blob whose file name does not
    say), or else the raw dispatches the paths name, `arch` overriding theirs."""
    from attdec.errors import InputError
    from attdec.model.target import target
    from attdec.sources import explicit
    from attdec.sources.pipeline import kind_of

    tgt = target(arch) if arch else None
    names = _paths(paths)
    if code or all(Path(p).is_file() and kind_of(Path(p)) is None for p in names):
        if se is None:
            for p in names:
                if explicit.se_of(str(p)) is None:
                    raise InputError("cannot tell the shader engine from the file name (no se<N>); pass --se", str(p))
        return [explicit.load(names, tuple(code), tgt, se, need_code=False).check()]
    raws = open_raw(names, input_format=input_format, report=report)
    for raw in raws:
        raw.target = tgt or raw.target
    return raws


def decode(
    blob: bytes | PathLike,
    arch: str | None = None,
    *,
    code: Iterable = (),
    se: int = 0,
    compat: str | None = DecodeOptions.compat,
    target_cu: int | None = DecodeOptions.target_cu,
) -> BlobResult:
    """Decode one shader engine's SQTT blob into every record kind AMD's decoder reports (waves,
    occupancy, realtime, other-SIMD, SHADERDATA, PERFEVENT, RT_FREQUENCY, INFO; docs/decode-json.md), as
    its build `compat` does ("0.1.6", the default, "0.1.5", "0.1.4" or "rocm-7.13"). `code`: code objects as
    "file@loadbase" strings or (bytes or path, load base) pairs; without code, records get no PCs and
    `arch` is needed; `target_cu` (gfx9): the CU whose waves get instruction detail.

    Memory: the result keeps ~51 bytes per instruction record (a 41-byte `INST_DTYPE` row plus its share
    of the timeline columns and other record arrays) and decoding peaks at ~158 bytes per record (39 per SQTT
    byte): docs/api.md, "Memory of a decode to memory"."""
    from attdec.model.target import target
    from attdec.sources.explicit import parse_code_spec
    from attdec.sources.raw import RawBlob, RawCodeObject, RawDispatch, decode_blobs, load_code

    data = blob if isinstance(blob, (bytes, bytearray, memoryview)) else read_bytes(blob)
    objs = []
    for i, c in enumerate(code, 1):
        src, base = parse_code_spec(c) if isinstance(c, str) else c
        co = src if isinstance(src, (bytes, bytearray)) else read_bytes(src)
        name = str(src) if isinstance(src, (str, Path)) else f"code object {i}"
        objs.append(RawCodeObject(bytes(co), int(base), name, i))
    raw = RawDispatch("blob", target(arch) if arch else None, objs, [RawBlob(se, bytes(data), "blob")])
    options = DecodeOptions(compat=compat, target_cu=target_cu)
    (_, result, _) = next(decode_blobs(raw, load_code(raw), options))
    return result


def tokens(blob: bytes | PathLike, where: str = ""):
    """Every token of one SQTT blob (bytes or path) as the decoders split it, its format read from the
    blob's header: offset, time, type and named fields (`attdec decode --tokens`), and what stopped it."""
    from attdec.decoders.tokens import list_tokens

    if isinstance(blob, (bytes, bytearray, memoryview)):
        return list_tokens(bytes(blob), where)
    return list_tokens(read_bytes(blob), where or str(blob))


def decode_raw(
    raws: Iterable[RawDispatch], options: DecodeOptions = DecodeOptions(), *, progress: Progress | None = None
) -> Generator[Dispatch | AttdecError, None, None]:
    """Each raw dispatch decoded into a `Dispatch` with its listing (as `open` decodes them), in order, or the
    error that stopped it; decoded on up to `options.jobs` processes, which end when the iterator does or is
    closed."""
    from attdec.sources.kind import Tracker, raw_weight
    from attdec.sources.parallel import decode_dispatches

    raws = list(raws)
    decoded = decode_dispatches(raws, Tracker(progress, sum(raw_weight(r) for r in raws)), options)
    try:
        for ok, value in decoded:
            if not ok and not isinstance(value, AttdecError):
                raise value
            yield value
    finally:
        decoded.close()


def decode_raw_blobs(
    raws: Iterable[RawDispatch], options: DecodeOptions = DecodeOptions(), reduce: Callable | None = None
) -> Generator[Iterator[tuple[RawBlob, Any, float]], None, None]:
    """Per raw dispatch, its blobs decoded one by one: (blob, BlobResult, seconds), or with `reduce`
    (blob, reduce(BlobResult), seconds), reduced where the blob was decoded (in a worker with `jobs`: only
    what the caller reads travels back); iterating a dispatch raises its error. The workers end when the
    iterator does or is closed."""
    from attdec.sources.parallel import decode_blob_results as run

    decoded = run(list(raws), options, reduce)
    try:
        yield from decoded
    finally:
        decoded.close()


def hotspots(
    dispatches: Dispatch | Iterable[Dispatch],
    by: str | None = None,
    *,
    frame: str = "inner",
    wave_filter=None,
    charge: str = "wait",
) -> Hotspots:
    """Lines (`by="line"`), instructions or files ranked by stall over the dispatches taken together;
    `by=None` ranks lines, or instructions when no instruction has a source line, as the command line
    does (one "(no source line)" row would say nothing). `.table` holds the rows as numpy columns,
    `.totals` and `.by_type` the header figures, `.by` what was ranked. `charge="producer"` moves each
    wait's stall to the operations it waited for (as `hotspots --charge producer`)."""
    from attdec.analysis.hotspots import hotspots as run

    return run(_dispatches(dispatches), by=by, frame=frame, wave_filter=wave_filter, charge=charge)


def stall_stacks(dispatches: Iterable[Dispatch], by: str | None = None, wave_filter=None, charge: str = "wait"):
    """Stall by inline call chain, kernel first, as folded stacks (`hotspots --format folded`): a list of
    (frames, stall) over every chain, dispatches of one kernel merged."""
    from attdec.analysis.flame import stall_stacks as run

    return run(list(dispatches), by, wave_filter, charge)


def waves(dispatches: Dispatch | Iterable[Dispatch], wave_filter=None) -> Table:
    """One row per wave: where and when it ran, its instructions, stall, and dominant stall type."""
    from attdec.analysis import RENAMED_COLUMNS
    from attdec.analysis.table import Table
    from attdec.analysis.waves import wave_rows

    rows = [r for d in _dispatches(dispatches) for r in wave_rows(d, wave_filter)]
    cols = [
        "dispatch",
        "se",
        "simd",
        "slot",
        "wave",
        "cu",
        "begin",
        "end",
        "duration",
        "instructions",
        "latency",
        "stall",
        "stall_share",
        "dominant_type",
    ]
    return Table.from_rows([{c: getattr(r, c) for c in cols} for r in rows], cols, RENAMED_COLUMNS)


def instructions(dispatches: Dispatch | Iterable[Dispatch]) -> Table:
    """Every executed instruction record of every wave, one row each: the wave's place (dispatch, se, cu,
    simd, slot, wave) and the record (time, category, stall, duration, pc, line)."""
    import numpy as np

    from attdec.analysis.table import Table

    parts: list[tuple[Dispatch, Wave]] = [(d, w) for d in _dispatches(dispatches) for w in d.waves]
    n = [len(w.insts) for _, w in parts]
    insts = np.concatenate([w.insts for _, w in parts]) if parts else empty_insts()
    cols: dict[str, np.ndarray] = {}
    names = np.empty(len(parts), object)
    names[:] = [d.name for d, _ in parts]
    cols["dispatch"] = np.repeat(names, n)
    for f in ("se", "cu", "simd", "slot"):
        cols[f] = np.repeat(np.array([getattr(w, f) for _, w in parts], np.int64), n)
    cols["wave"] = np.repeat(np.array([w.seq for _, w in parts], np.int64), n)
    for f in insts.dtype.names or ():
        cols[f] = insts[f]
    return Table(cols)


def occupancy(dispatches: Dispatch | Iterable[Dispatch]) -> Table:
    """Every wave start/end record, one row each: the dispatch and the record (se, cu, simd, slot,
    start, time, pc); AMD's names for a column (`wave_id`) still read it."""
    import numpy as np

    from attdec.analysis.table import Table

    ds = _dispatches(dispatches)
    occ = [d.occupancy for d in ds]
    rows = np.concatenate(occ) if occ else empty_occupancy()
    names = np.empty(len(ds), object)
    names[:] = [d.name for d in ds]
    cols: dict[str, np.ndarray] = {"dispatch": np.repeat(names, [len(o) for o in occ])}
    cols.update({f: rows[f] for f in rows.dtype.names or ()})
    return Table(cols, {amd: ours for ours, amd in AMD_NAMES.items()})


def save(path: PathLike, **tables) -> None:
    """Tables (`Table`s, or any mapping of column name to array) to one .npz, each column an array named
    "<table>.<column>": `attdec.save("run.npz", waves=attdec.waves(ds), records=attdec.instructions(ds))`.
    The format of `--format npz` (docs/api.md, "Columnar output"): `numpy.load` reads it without pickle."""
    from attdec.report.columns import write_npz
    from attdec.report.output import open_output

    with open_output(path, binary=True) as out:
        write_npz(out, tables)


def wave_rows(dispatches: Iterable[Dispatch], wave_filter=None, sort: str = "position", top: int = 0):
    """(rows, matched): the `WaveRows` of `attdec waves` (a row per wave the filter keeps, labelled by
    dispatch, sorted by `sort` and the first `top` kept; 0: all) and how many waves matched before `top`."""
    from attdec.analysis.waves import WaveRows, dispatch_labels, wave_columns

    ds = list(dispatches)
    rows = WaveRows.concat([wave_columns(d, wave_filter, label) for d, label in zip(ds, dispatch_labels(ds))])
    rows = rows.sorted(sort)
    return (rows.head(top) if top else rows), len(rows)


def describe(paths: PathLike | Iterable[PathLike], input_format: str | None = InputOptions.input_format) -> list[dict]:
    """What each input is, before anything is decoded (`attdec info`): its kind, the dispatches it holds
    (arch, shader engines, code objects and load bases) and, for an .rgp, its chunks and repairs."""
    from attdec.sources.pipeline import describe as run

    return run(_paths(paths), input_format)


def disassemble(path: PathLike, arch: str | None = None, kernel: str | None = None):
    """(code object, instructions, labels {address: name}) of an AMDGPU code object's whole .text or one
    kernel (`attdec disasm`); `arch` for a container that does not name its target, or to override it."""
    from attdec.errors import ArchError, InputError
    from attdec.isa import disassemble as run
    from attdec.isa import load_code_object, tables_for

    path = str(path)
    co = load_code_object(read_bytes(path), path, arch=arch)
    if not co.arch:
        raise ArchError("the code object does not name its target (tinygrad minimal container): pass --arch", path)
    tables_for(co.arch, path)
    start, end = co.text_vaddr, co.text_end
    if kernel is not None:
        k = co.kernel(kernel)
        if k is None:
            names = ", ".join(k.name for k in co.kernels) or "none"
            raise InputError(f"no kernel {kernel!r} (kernels: {names})", path)
        start = k.entry
        later = sorted(s.vaddr for s in co.symbols if s.kind == "func" and s.vaddr > k.entry)
        end = k.entry + k.size if k.size else (later[0] if later else co.text_end)
    code = co.text[start - co.text_vaddr : end - co.text_vaddr]
    insts = run(code, co.arch, start)
    labels = {s.vaddr: s.name for s in co.symbols if s.kind == "func" and start <= s.vaddr < end}
    for k in co.kernels:
        if start <= k.entry < end:
            labels.setdefault(k.entry, k.name)
    for i in insts:
        if i.target is not None and start <= i.target < end and i.target not in labels:
            labels[i.target] = f".LBB_{i.target:x}"
    return co, insts, labels


class Pruning(Record):
    """What `prune_empty` did: each empty shell with None when it went (or, without `delete`, would go) or
    why it was kept; the other folders kept, with why, that are not ranked; the dispatches ranked as
    (waves, instructions, source-mapped rows, Dispatch), best first; `failed`: the error that stopped the
    removals (then nothing after it was done)."""

    delete: bool
    removals: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    ranked: list = field(default_factory=list)
    failed: AttdecError | None = None


def prune_empty(roots: Iterable[PathLike], delete: bool = False) -> Pruning:
    """The rocprofv3 dispatch folders with zero waves below `roots` (attdec.sources.prune says what an empty
    shell is), removed with `delete=True`, and the dispatches kept, ranked (`attdec prune-empty`)."""
    from attdec.sources.prune import judge_roots, remove
    from attdec.sources.ui_output import read_folder

    verdicts = judge_roots([Path(r) for r in roots])
    out = Pruning(delete)
    for v in verdicts:
        if v.empty:
            try:
                out.removals.append((v, remove(v) if delete else None))
            except AttdecError as e:
                out.failed = e
                return out
    for v in verdicts:
        if v.empty:
            continue
        if v.reason != "has wave files":
            out.kept.append((v, v.reason))
            continue
        try:
            d = read_folder(v.path)
        except AttdecError as e:
            out.kept.append((v, f"unreadable: {e}"))
            continue
        mapped = sum(1 for c in d.code if not c.is_label and c.source)
        out.ranked.append((len(d.waves), sum(len(w.insts) for w in d.waves), mapped, d))
    out.ranked.sort(key=lambda t: (-t[0], -t[1], -t[2], t[3].name))
    return out


# ---- the "why" analyses, comparisons, resources (docs/wait-attribution.md, cfg-loops.md, diff.md, occupancy.md)


def _selected(dispatch: Dispatch, wave_filter) -> list[Wave]:
    return dispatch.waves if wave_filter is None else [w for w in dispatch.waves if wave_filter(w)]


def waits(dispatch: Dispatch, wave_filter=None):
    """Per wait site: the memory operations each wait waited for (producers with their share of the
    stall), hits, stall per hit, issue-to-wait distance, over the waves `wave_filter` keeps (default all).
    Returns a list of `WaitSite`."""
    from attdec.analysis.waits import attribute, wait_sites

    return wait_sites(attribute(dispatch, _selected(dispatch, wave_filter)))


def hidden_latency(dispatch: Dispatch, frame: str = "inner", definition: str = "amd", wave_filter=None):
    """Hidden latency per instruction, line and kernel. "amd" (AMD's, what rocprof-compute-viewer shows):
    cycles of each instruction's idle/stall/issue windows while other pipes or waves of its SIMD were busy
    (`AmdHiddenLatency`); "issue-to-wait": how much of each memory operation's latency, issue to its
    retiring wait, the wave covered with other work (`HiddenLatency`). Over the waves `wave_filter` keeps
    (default all)."""
    from attdec.analysis.latency import amd_hidden_latency
    from attdec.analysis.latency import hidden_latency as run
    from attdec.analysis.waits import attribute

    waves = _selected(dispatch, wave_filter)
    if definition == "amd":
        return amd_hidden_latency(dispatch, waves, frame=frame)
    if definition != "issue-to-wait":
        raise ValueError(f"definition must be 'amd' or 'issue-to-wait', not {definition!r}")
    return run(attribute(dispatch, waves), frame)


def cfg(dispatch: Dispatch):
    """Basic blocks and control-flow graph of each kernel of the listing, with per-block hits, cycles,
    stall and dominant stall type, and natural loops (list of `Cfg`)."""
    from attdec.analysis.cfg import dispatch_cfgs

    return dispatch_cfgs(dispatch)


def loops(dispatch: Dispatch):
    """Every loop with its iterations per wave (count, first vs steady, p50/p95, outliers)."""
    from attdec.analysis.loops import loop_timings

    return loop_timings(dispatch)


def control_flow(dispatches: Dispatch | Iterable[Dispatch], wave_filter=None):
    """Per dispatch, a `CfgReport`: its control-flow graphs, block statistics of the waves `wave_filter`
    keeps (default all) and loop timings (what `attdec cfg` and `attdec loops` print)."""
    from attdec.report.cfg import cfg_reports

    return cfg_reports(_dispatches(dispatches), wave_filter)


def diff(
    before: Iterable[Dispatch],
    after: Iterable[Dispatch],
    by: str | None = None,
    *,
    frame: str = "inner",
    metric: str = "cycles",
):
    """Kernels matched by name, before vs after, per line / instruction / file / stall type, with run-to-run
    noise marks when a side has repeated runs. Returns a `Diff` (`.kernels`, `.unmatched`)."""
    from attdec.analysis.compare import diff as run

    return run(list(before), list(after), by, frame, metric)


def regressions(result, pct: float, metric: str = "cycles") -> list[str]:
    """Why a CI gate on a `diff` result fails (`diff --fail-above`): one line per kernel whose total `metric`
    grew by more than `pct` percent; none: it passes."""
    from attdec.analysis.compare import regressions as run

    return run(result, pct, metric)


def noise(dispatches: Iterable[Dispatch], by: str | None = None, *, frame: str = "inner", metric: str = "cycles"):
    """Run-to-run spread of repeated runs of the same kernels (list of `KernelNoise`)."""
    from attdec.analysis.compare import noise as run

    return run(list(dispatches), by, frame, metric)


def kernel(dispatch: Dispatch):
    """The kernel's resources (VGPR, AGPR, SGPR, LDS, scratch, wave and workgroup size...), theoretical
    occupancy with its limiting resource, and achieved occupancy (`KernelSummary`)."""
    from attdec.analysis.kernel import kernel_summary

    return kernel_summary(dispatch)


def code_object_kernels(path: PathLike, arch: str | None = None):
    """The `KernelSummary` of every kernel in `path` when it is a bare code object (an AMDGPU ELF, or with
    `arch` any file no input kind claims, such as tinygrad's minimal containers); else None."""
    from attdec.analysis.kernel import code_object_summaries
    from attdec.errors import FormatError
    from attdec.isa import load_code_object
    from attdec.sources.pipeline import kind_of

    p = Path(path)
    if not p.is_file():
        return None
    with p.open("rb") as f:
        head = f.read(20)
    elf = head[:4] == b"\x7fELF" and head[18:20] == b"\xe0\x00"
    if not elf and kind_of(p) is not None:
        return None
    try:
        co = load_code_object(read_bytes(p), str(path), arch=arch)
    except FormatError:
        if elf or arch:
            raise
        return None
    return code_object_summaries(co)


def advise(dispatch: Dispatch):
    """The performance problems the dispatch shows (`Advice`: findings with where, cycles at stake, evidence
    and what to try, and the rules that could not judge it; docs/advise.md)."""
    from attdec.analysis.advise import advise as run

    return run(dispatch)


def counters(dispatch: Dispatch):
    """Performance-counter samples of the dispatch (tinygrad PMC, SQTT PERFEVENT): totals, per SE/CU, over
    time (`CounterReport`)."""
    from attdec.analysis.counters import counter_report

    return counter_report(dispatch)


def html_report(dispatches: Dispatch | Iterable[Dispatch], out, **options) -> None:
    """Write the self-contained HTML report (docs/report.md) of the dispatches to the text stream `out`."""
    from attdec.report.html import write_report

    write_report(out, _dispatches(dispatches), **options)


__all__ = [
    "advise",
    "cfg",
    "code_object_kernels",
    "control_flow",
    "counters",
    "decode",
    "decode_raw",
    "decode_raw_blobs",
    "describe",
    "diff",
    "disassemble",
    "hidden_latency",
    "hotspots",
    "html_report",
    "instructions",
    "kernel",
    "loops",
    "noise",
    "occupancy",
    "open",
    "open_blobs",
    "open_inputs",
    "open_raw",
    "prune_empty",
    "regressions",
    "save",
    "stall_stacks",
    "tokens",
    "waits",
    "wave_rows",
    "waves",
]
