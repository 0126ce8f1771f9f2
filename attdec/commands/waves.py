"""`attdec waves PATH...`: one row per traced wave (where, when, how long, how much it stalled, on what)."""

from __future__ import annotations

import click

from attdec.analysis import WAVE_SORT_KEYS
from attdec.commands.common import (
    COUNT,
    FORMATS,
    attdec_command,
    emit,
    format_option,
    input_options,
    inputs_of,
    open_dispatches,
    output_option,
    paths_argument,
    read_paths,
    tell_problems,
    wave_filter,
    wave_filter_options,
)
from attdec.report.common import output_stream


@attdec_command(
    paths_argument(),
    click.option(
        "--sort",
        "sort_key",
        type=click.Choice(WAVE_SORT_KEYS),
        default="position",
        help="position = se/simd/slot/wv order; begin/end/cu ascending; the others largest first.",
    ),
    format_option(
        [*FORMATS, "npz"], help="npz: the rows as numpy columns (docs/api.md, 'Columnar output'), to -o FILE."
    ),
    output_option(),
    click.option("--top", type=COUNT, default=0, help="Only the first N rows after sorting (0 = all)."),
    wave_filter_options,
    input_options,
)
def waves(a) -> None:
    """One row per wave file: se, simd, slot, wave, cu, begin, end, duration, instructions, stall.

    begin/end are the wave's cycles exactly as in filenames.json and the wave file.
    """

    from attdec import api
    from attdec.report import waves as rep

    # a row per wave needs its totals only: a big raw blob is decoded in windows, its waves folded into columns,
    # and none of its occupancy records kept
    output = output_stream(a.output, binary=a.fmt == "npz", inputs=read_paths(a))
    dispatches = open_dispatches(a.paths, inputs_of(a, fold=True, occupancy=False), need=("waves",))
    rows, matched = api.wave_rows(dispatches, wave_filter(a), a.sort_key, a.top)
    with output as out:
        emit(rows, a.fmt, out, rep.reporters(dispatches, matched))
    tell_problems(dispatches)
