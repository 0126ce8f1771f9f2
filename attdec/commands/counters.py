"""`attdec counters PATH...`: the performance counters captured with each dispatch."""

from __future__ import annotations

import click

from attdec.analysis import COUNTER_BY
from attdec.commands.common import FORMATS, input_options, open_dispatches


@click.command("counters")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--by",
    type=click.Choice(COUNTER_BY),
    default="total",
    show_default=True,
    help="One row per counter (total, where read, min/mean/max per location), or its value per shader "
    "engine, per CU (gfx9) / WGP (gfx10+), or per block instance (L2 channel).",
)
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
@input_options
def command(paths, by, fmt, input_format, code, arch):
    """Performance counters of each dispatch: per-counter totals, per SE / CU / block instance, and the
    totals across dispatches (tinygrad samples each dispatch once, so that is its "over time").

    Counter samples come from tinygrad PMC captures (profile.pkl with PMC=1, capture folders' .pmc
    files). ui_output folders and rocprofv3 raw output carry none yet (SQTT PERFEVENT records are
    planned).
    """
    import sys

    from attdec.analysis.counters import counter_report
    from attdec.report import counters as rep

    reports = [counter_report(d) for d in open_dispatches(paths, input_format, code, arch)]
    {"table": rep.print_table, "json": rep.print_json, "csv": rep.print_csv}[fmt](reports, by, sys.stdout)
