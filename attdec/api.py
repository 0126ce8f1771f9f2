"""attdec's public Python API: the pipeline the command line runs, as functions.

    import attdec
    ds = attdec.open("runs/ui_output_agent_*")          # list[Dispatch]; raw captures are decoded
    h = attdec.hotspots(ds)                              # Hotspots: totals, by_type, and .table (numpy columns)
    df = pandas.DataFrame(attdec.instructions(ds))       # every executed instruction record, one row each

See docs/api.md for the whole surface and the stability rules. Everything here is re-exported from
`attdec` itself, imported on first use so that `import attdec` stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from attdec.analysis.hotspots import Hotspots
from attdec.errors import read_bytes
from attdec.model import Dispatch, Wave, empty_insts, empty_occupancy
from attdec.sources.kind import Progress

if TYPE_CHECKING:  # numpy is imported by the functions that make arrays: the commands call this module too
    from attdec.analysis.table import Table
    from attdec.decoders import BlobResult
    from attdec.sources.raw import RawDispatch

PathLike = str | Path


def _paths(paths) -> list:
    return [paths] if isinstance(paths, (str, Path)) else list(paths)


def _dispatches(dispatches) -> list[Dispatch]:
    return [dispatches] if isinstance(dispatches, Dispatch) else list(dispatches)


def open(
    paths: PathLike | Iterable[PathLike],
    *,
    input_format: str | None = None,
    code: Iterable[str] = (),
    arch: str | None = None,
    progress: Progress | None = None,
    compat: str | None = None,
    jobs: int | None = None,
    **decode_opts,
) -> list[Dispatch]:
    """Every dispatch the paths name (folders, parents, globs, archives, raw captures; raw ones decoded,
    as the AMD decoder build `compat` does: "0.1.6", the default, "0.1.5", "0.1.4" or "rocm-7.13";
    docs/compat.md).
    `code` = ["k.co@0x7f0000001000", ...] makes the paths the .att blobs of one dispatch. `jobs=N` decodes
    raw dispatches on N forked processes (None, the default as on the command line: one per idle core;
    1: in this process)."""
    from attdec.sources.pipeline import open_dispatches

    return open_dispatches(
        _paths(paths), input_format, tuple(code), arch, progress=progress, compat=compat, jobs=jobs, **decode_opts
    )


def open_raw(
    paths: PathLike | Iterable[PathLike],
    *,
    input_format: str | None = None,
    code: Iterable[str] = (),
    arch: str | None = None,
) -> list[RawDispatch]:
    """The raw, undecoded dispatches the paths name (blobs + code objects), for `decode_dispatch`-level work."""
    from attdec.sources.pipeline import open_raw as read

    return read(_paths(paths), input_format, tuple(code), arch)


def decode(
    blob: bytes | PathLike,
    arch: str | None = None,
    *,
    code: Iterable = (),
    se: int = 0,
    compat: str | None = None,
    **decode_opts,
) -> BlobResult:
    """Decode one shader engine's SQTT blob into every record kind AMD's decoder reports (waves,
    occupancy, realtime, other-SIMD, SHADERDATA, PERFEVENT, RT_FREQUENCY, INFO; docs/decode-json.md), as
    its build `compat` does ("0.1.6", the default, "0.1.5", "0.1.4" or "rocm-7.13"). `code`: code objects as
    "file@loadbase" strings or (bytes or path, load base) pairs; without code, records get no PCs and
    `arch` is needed.

    Memory: the result keeps ~51 bytes per instruction record (a 41-byte `INST_DTYPE` row plus its share
    of the timeline columns and other record arrays) and decoding peaks at ~158 bytes per record (39 per SQTT
    byte): docs/api.md, "Memory of a decode to memory"."""
    from attdec.sources.explicit import parse_code_spec
    from attdec.sources.raw import RawBlob, RawCodeObject, RawDispatch, decode_blobs, load_code

    data = blob if isinstance(blob, (bytes, bytearray, memoryview)) else read_bytes(blob)
    objs = []
    for i, c in enumerate(code, 1):
        src, base = parse_code_spec(c) if isinstance(c, str) else c
        co = src if isinstance(src, (bytes, bytearray)) else read_bytes(src)
        name = str(src) if isinstance(src, (str, Path)) else f"code object {i}"
        objs.append(RawCodeObject(bytes(co), int(base), name, i))
    raw = RawDispatch("blob", arch or "", objs, [RawBlob(se, bytes(data), "blob")])
    (_, result, _) = next(decode_blobs(raw, load_code(raw), compat=compat, **decode_opts))
    return result


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


def waves(dispatches: Dispatch | Iterable[Dispatch], wave_filter=None) -> Table:
    """One row per wave: where and when it ran, its instructions, stall, and dominant stall type."""
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
        "share",
        "dominant_type",
    ]
    return Table.from_rows([{c: getattr(r, c) for c in cols} for r in rows], cols)


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
    """Every wave start/end record, one row each: the dispatch and the record (se, cu, simd, wave_id,
    start, time, pc)."""
    import numpy as np

    from attdec.analysis.table import Table

    ds = _dispatches(dispatches)
    occ = [d.occupancy for d in ds]
    rows = np.concatenate(occ) if occ else empty_occupancy()
    names = np.empty(len(ds), object)
    names[:] = [d.name for d in ds]
    cols: dict[str, np.ndarray] = {"dispatch": np.repeat(names, [len(o) for o in occ])}
    cols.update({f: rows[f] for f in rows.dtype.names or ()})
    return Table(cols)


def save(path: PathLike, **tables) -> None:
    """Tables (`Table`s, or any mapping of column name to array) to one .npz, each column an array named
    "<table>.<column>": `attdec.save("run.npz", waves=attdec.waves(ds), records=attdec.instructions(ds))`.
    The format of `--format npz` (docs/api.md, "Columnar output"): `numpy.load` reads it without pickle."""
    from attdec.report.columns import write_npz
    from attdec.report.output import open_output

    with open_output(path, binary=True) as out:
        write_npz(out, tables)


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


def noise(dispatches: Iterable[Dispatch], by: str | None = None, *, frame: str = "inner", metric: str = "cycles"):
    """Run-to-run spread of repeated runs of the same kernels (list of `KernelNoise`)."""
    from attdec.analysis.compare import noise as run

    return run(list(dispatches), by, frame, metric)


def kernel(dispatch: Dispatch):
    """The kernel's resources (VGPR, AGPR, SGPR, LDS, scratch, wave and workgroup size...), theoretical
    occupancy with its limiting resource, and achieved occupancy (`KernelSummary`)."""
    from attdec.analysis.kernel import kernel_summary

    return kernel_summary(dispatch)


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
    "counters",
    "decode",
    "diff",
    "hidden_latency",
    "hotspots",
    "html_report",
    "instructions",
    "kernel",
    "loops",
    "noise",
    "occupancy",
    "open",
    "open_raw",
    "save",
    "waits",
    "waves",
]
