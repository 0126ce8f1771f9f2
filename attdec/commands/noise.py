"""`attdec noise RUN...`: how repeatable is this measurement, per kernel and per line?"""

from __future__ import annotations

import click

from attdec.analysis import COMPARE_BY, FRAMES, METRICS
from attdec.commands.common import input_options, open_dispatches
from attdec.commands.diff import FORMATS


@click.command("noise")
@click.argument("runs", nargs=-1, required=True)
@click.option(
    "--by",
    type=click.Choice(COMPARE_BY),
    default=None,
    help="Rows per source line (default; instructions when there are no source lines), instruction, "
    "source file or stall type.",
)
@click.option(
    "--metric",
    type=click.Choice(METRICS),
    default="cycles",
    show_default=True,
    help="What rows show and are ranked by: cycles (Latency) or stall.",
)
@click.option("--top", type=int, default=20, show_default=True, help="Rows per kernel (0 = all).")
@click.option(
    "--frame",
    type=click.Choice(FRAMES),
    default="inner",
    show_default=True,
    help="For inlined code: the instruction's own line (inner) or the outermost call site (outer).",
)
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
@input_options
def command(runs, by, metric, top, frame, fmt, input_format, code, arch):
    """Run-to-run spread of repeated runs: median, MAD and min-max per kernel total, stall type and row.

    RUNS are anything attdec reads; dispatches with the same kernel name are runs of that kernel. The
    header says how large a change `attdec diff` would need to call it significant against such runs.
    """
    import sys

    from attdec.analysis.compare import noise
    from attdec.report.compare import print_noise

    print_noise(noise(open_dispatches(runs, input_format, code, arch), by, frame, metric), fmt, top, sys.stdout)
