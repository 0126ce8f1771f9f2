"""`attdec noise RUN...`: how repeatable is this measurement, per kernel and per line?"""

from __future__ import annotations

import click

from attdec.commands.common import input_options, open_dispatches
from attdec.commands.diff import compare_options


@click.command("noise")
@click.argument("runs", nargs=-1, required=True)
@compare_options
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
