"""`attdec export-ui`: decode a raw capture and write one rocprofv3 ui_output folder per dispatch."""

from __future__ import annotations

import click

from attdec.commands.common import chosen_compat, input_options, open_raw


def folder_name(raw, index: int) -> str:
    """rocprofv3's own name when the source knows agent and dispatch id, else numbered from 1."""
    if raw.dispatch_id is not None:
        return f"ui_output_agent_{raw.agent or 0}_dispatch_{raw.dispatch_id}"
    return f"ui_output_agent_0_dispatch_{index + 1}"


@click.command("export-ui")
@click.argument("inputs", nargs=-1, required=True, type=click.Path())
@click.option(
    "-o",
    "--output",
    "outdir",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder to write ui_output_* folders and stats_*.csv into.",
)
@input_options
def export_ui(inputs, outdir, input_format, code, arch):
    """Decode a raw capture (tinygrad profile.pkl, rocprofv3 raw output, capture folder, or .att blobs with
    --code FILE@LOADBASE) and write it as ui_output folders that rocprof-compute-viewer and `attdec hotspots` open."""
    from attdec.report.common import printable
    from attdec.report.progress import progress_bar
    from attdec.report.ui_output import write_ui_output
    from attdec.sources.kind import Tracker, raw_weight
    from attdec.sources.pipeline import decode

    raws = open_raw(inputs, input_format, code, arch)
    with progress_bar() as progress:
        tracker = Tracker(progress, sum(raw_weight(r) for r in raws))
        for i, raw in enumerate(raws):
            d = decode(raw, tracker, compat=chosen_compat())
            folder = write_ui_output(d, outdir, folder_name(raw, i))
            traced = sum(1 for w in d.waves if len(w.insts))
            click.echo(
                printable(
                    f"{folder}: {raw.name} ({d.arch}), {len(d.waves)} waves, {traced} with instructions, "
                    f"{len(d.code)} listing rows"
                )
            )
            for p in d.problems:
                click.echo(printable(f"attdec: warning: {raw.name}: {p}"), err=True)
