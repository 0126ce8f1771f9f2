"""`attdec report PATH... -o report.html`: everything attdec sees in a trace, on one page that needs only a browser."""

from __future__ import annotations

from pathlib import Path

from attdec.analysis import FRAMES
from attdec.commands.common import (
    Many,
    add_input_options,
    add_output,
    add_paths,
    at_least,
    count,
    echo,
    folder,
    inputs,
    open_dispatches,
    output_stream,
    read_paths,
)
from attdec.report import Limits

MAX_SOURCE_BYTES = 2_000_000  # a source file larger than this is not embedded


def find_sources(dispatches, source_dirs=()) -> dict[str, list[str]]:
    """Text of the source files the listings name that exist on this machine: at the path as written, or
    under a --source-dir by the path's longest tail that exists there (build trees move between machines)."""
    from attdec.analysis.hotspots import file_of, frames

    wanted = {file_of(f) for d in dispatches for c in d.code for f in frames(c.source)}
    out = {}
    for name in sorted(wanted):
        parts = Path(name).parts
        candidates = [Path(name)] if Path(name).is_absolute() else []
        for root in source_dirs:
            candidates += [Path(root).joinpath(*parts[i:]) for i in range(len(parts)) if parts[i:] != ("/",)]
        for c in candidates:
            try:
                if c.is_file() and c.stat().st_size <= MAX_SOURCE_BYTES:
                    out[name] = c.read_text(encoding="utf-8", errors="replace").splitlines()
                    break
            except OSError:
                continue
    return out


def arguments(p) -> None:
    add_paths(p)
    add_output(p, "HTML file to write ('-' for stdout).", required=True)
    p.add_argument(
        "--frame",
        choices=FRAMES,
        default="inner",
        help="Hotspot tables: charge inlined code to its own line (inner) or the outermost call site (outer).",
    )
    p.add_argument(
        "--source-dir",
        dest="source_dirs",
        action=Many,
        type=folder,
        metavar="DIRECTORY",
        help="Where to look for the source files the trace names (repeatable); they are also looked for at the "
        "paths as written.",
    )
    p.add_argument("--title", default=None, help="Page title (default: the kernel names).")
    p.add_argument(
        "--max-insts",
        type=count,
        default=Limits.insts,
        help="Instructions embedded for hovering in the timeline, over all dispatches (whole waves, evenly spread).",
    )
    p.add_argument(
        "--max-runs",
        type=at_least(1),
        default=Limits.runs,
        help="Timeline runs per colouring over all dispatches; past it they are aggregated on a coarser time grid.",
    )
    add_input_options(p)


def command(a) -> None:
    """Write one self-contained HTML page: summary, stall types, sortable hotspot tables, flamegraph,
    source and ISA views, wave timeline and occupancy (several dispatches: a selector).

    The page works offline from file:// (no network access at all) and stays a few MB on big traces:
    what it aggregates or samples to do so is listed at its top.
    """
    from attdec.report.html import write_report

    output = output_stream(a.output, inputs=read_paths(a))
    dispatches = open_dispatches(a.paths, **inputs(a), need=("waves",))
    limits = Limits(insts=a.max_insts, runs=a.max_runs)
    with output as out:
        write_report(
            out,
            dispatches,
            frame=a.frame,
            sources=find_sources(dispatches, a.source_dirs),
            limits=limits,
            title=a.title,
        )
    if a.output != "-":
        size = Path(a.output).stat().st_size
        echo(f"wrote {a.output}: {size / 1e6:.2f} MB, {len(dispatches)} dispatch(es)", err=True)
