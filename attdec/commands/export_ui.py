"""`attdec export-ui`: decode a raw capture and write one rocprofv3 ui_output folder per dispatch."""

from __future__ import annotations

import click

from attdec.commands.common import (
    FOLDER,
    attdec_command,
    echo,
    input_options,
    inputs_of,
    lost,
    open_raw,
    paths_argument,
    tune_allocator,
)
from attdec.errors import AttdecError


def folder_name(raw, index: int) -> str:
    """rocprofv3's own name when the source knows agent and dispatch id, else numbered from 1."""
    if raw.dispatch_id is not None:
        return f"ui_output_agent_{raw.agent or 0}_dispatch_{raw.dispatch_id}"
    return f"ui_output_agent_0_dispatch_{index + 1}"


@attdec_command(
    paths_argument("inputs"),
    click.option(
        "-o",
        "--output",
        "outdir",
        required=True,
        type=FOLDER,
        metavar="DIRECTORY",
        help="Folder to write ui_output_* folders and stats_*.csv into.",
    ),
    click.option(
        "--source-dir",
        "source_dirs",
        multiple=True,
        metavar="DIR",
        help="Where to look for the source files the listing names, when not at the path written there "
        "(repeatable); those found are copied into the folder with snapshots.json, as rocprofv3 does.",
    ),
    input_options,
)
def export_ui(a) -> None:
    """Decode a raw capture (tinygrad profile.pkl, rocprofv3 raw output, capture folder, or .att blobs with
    --code FILE@LOADBASE) and write it as ui_output folders that rocprof-compute-viewer and `attdec hotspots` open."""
    from attdec import api
    from attdec.report.progress import progress_bar
    from attdec.report.source_files import find_sources
    from attdec.report.ui_output import write_ui_output

    options = inputs_of(a)
    raws = open_raw(a.inputs, options)
    tune_allocator(raws)
    with progress_bar() as progress:
        decoded = api.decode_raw(raws, options.decode, progress=progress)
        for i, (raw, d) in enumerate(zip(raws, decoded)):
            if isinstance(d, AttdecError):
                if len(raws) == 1:
                    raise d
                lost(d)  # the other dispatches are still written
                continue
            sources = find_sources([d], a.source_dirs or ())
            out = write_ui_output(d, a.outdir, folder_name(raw, i), sources)
            traced = sum(1 for w in d.waves if len(w.insts))
            echo(
                f"{out}: {raw.name} ({d.arch}), {len(d.waves)} waves, {traced} with instructions, "
                f"{len(d.code)} listing rows"
            )
            for p in d.problems:
                echo(f"attdec: warning: {raw.name}: {p}", err=True)
