"""`attdec counters PATH...`: the performance counters captured with each dispatch."""

from __future__ import annotations

import click

from attdec.analysis import COUNTER_BY
from attdec.commands.common import (
    attdec_command,
    emit,
    format_option,
    input_options,
    inputs_of,
    open_dispatches,
    paths_argument,
)


@attdec_command(
    paths_argument(),
    click.option(
        "--by",
        type=click.Choice(COUNTER_BY),
        default="total",
        help="One row per counter (total, where read, min/mean/max per location), or its value per shader "
        "engine, per CU (gfx9) / WGP (gfx10+), or per block instance (L2 channel).",
    ),
    format_option(),
    input_options,
)
def counters(a) -> None:
    """Performance counters of each dispatch: per-counter totals, per SE / CU / block instance, and the
    totals across dispatches (tinygrad samples each dispatch once, so that is its "over time").

    Counter samples come from tinygrad PMC captures (profile.pkl with PMC=1, capture folders' .pmc
    files) and SQTT PERFEVENT records in raw traces (rocprofv3 --att --att-perfcounters). ui_output
    folders carry none.
    """
    import sys

    from attdec import api
    from attdec.report import counters as rep

    reports = [api.counters(d) for d in open_dispatches(a.paths, inputs_of(a))]
    emit(reports, a.fmt, sys.stdout, rep.reporters(a.by))
