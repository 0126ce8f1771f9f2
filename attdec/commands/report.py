"""`attdec report PATH... -o report.html`: everything attdec sees in a trace, on one page that needs only a browser."""

from __future__ import annotations

from pathlib import Path

import click

from attdec.analysis import FRAMES
from attdec.commands.common import (
    COUNT,
    FOLDER,
    POSITIVE,
    attdec_command,
    echo,
    input_options,
    inputs_of,
    open_dispatches,
    output_option,
    paths_argument,
    read_paths,
)
from attdec.report import Limits
from attdec.report.common import output_stream
from attdec.report.source_files import find_sources


@attdec_command(
    paths_argument(),
    output_option("HTML file to write ('-' for stdout).", required=True),
    click.option(
        "--frame",
        type=click.Choice(FRAMES),
        default="inner",
        help="Hotspot tables: charge inlined code to its own line (inner) or the outermost call site (outer).",
    ),
    click.option(
        "--source-dir",
        "source_dirs",
        multiple=True,
        type=FOLDER,
        metavar="DIRECTORY",
        help="Where to look for the source files the trace names (repeatable); they are also looked for at the "
        "paths as written.",
    ),
    click.option("--title", default=None, help="Page title (default: the kernel names)."),
    click.option(
        "--max-insts",
        type=COUNT,
        default=Limits.insts,
        help="Instructions embedded for hovering in the timeline, over all dispatches (whole waves, evenly spread).",
    ),
    click.option(
        "--max-runs",
        type=POSITIVE,
        default=Limits.runs,
        help="Timeline runs per colouring over all dispatches; past it they are aggregated on a coarser time grid.",
    ),
    input_options,
)
def report(a) -> None:
    """Write one self-contained HTML page: summary, stall types, sortable hotspot tables, flamegraph,
    source and ISA views, wave timeline and occupancy (several dispatches: a selector).

    The page works offline from file:// (no network access at all) and stays a few MB on big traces:
    what it aggregates or samples to do so is listed at its top.
    """
    from attdec import api

    output = output_stream(a.output, inputs=read_paths(a))
    dispatches = open_dispatches(a.paths, inputs_of(a), need=("waves",))
    limits = Limits(insts=a.max_insts, runs=a.max_runs)
    with output as out:
        api.html_report(
            dispatches,
            out,
            frame=a.frame,
            sources=find_sources(dispatches, a.source_dirs),
            limits=limits,
            title=a.title,
        )
    if a.output != "-":
        size = Path(a.output).stat().st_size
        echo(f"wrote {a.output}: {size / 1e6:.2f} MB, {len(dispatches)} dispatch(es)", err=True)
