"""`attdec waves PATH...`: one row per traced wave (where, when, how long, how much it stalled, on what)."""

from __future__ import annotations

import click

from attdec.analysis import WAVE_SORT_KEYS
from attdec.commands.common import FORMATS, TOP, input_options, make_wave_filter, open_dispatches, wave_filter_options


@click.command("waves")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--sort",
    "sort_key",
    type=click.Choice(WAVE_SORT_KEYS),
    default="position",
    show_default=True,
    help="position = se/simd/slot/wv order; begin/end/cu ascending; the others largest first.",
)
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
@click.option("--top", type=TOP, default=0, show_default=True, help="Only the first N rows after sorting (0 = all).")
@wave_filter_options
@input_options
def command(paths, sort_key, fmt, top, se, simd, slot, wave, cu, input_format, code, arch):
    """One row per wave file: se, simd, slot, wave, cu, begin, end, duration, instructions, stall.

    begin/end are the wave's cycles exactly as in filenames.json and the wave file.
    """
    import sys

    from attdec.analysis.waves import dispatch_labels, sort_rows, wave_rows
    from attdec.report import waves as rep

    dispatches = open_dispatches(paths, input_format, code, arch)
    flt = make_wave_filter(se, simd, slot, wave, cu)
    rows = []
    for d, label in zip(dispatches, dispatch_labels(dispatches)):
        rows += sort_rows(wave_rows(d, flt, label), sort_key)
    if len(dispatches) > 1 and sort_key != "position":
        rows = sort_rows(rows, sort_key)
    matched = len(rows)
    if top:
        rows = rows[:top]
    if fmt == "json":
        rep.print_json(rows, sys.stdout, dispatches)
    elif fmt == "csv":
        rep.print_csv(rows, sys.stdout)
    else:
        rep.print_table(rows, dispatches, matched, sys.stdout)
