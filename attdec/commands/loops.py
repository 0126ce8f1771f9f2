"""`attdec loops PATH...`: each loop's iterations per wave: count, first iteration, steady state, outliers."""

from __future__ import annotations

import click

from attdec.commands.common import (
    COUNT,
    attdec_command,
    emit,
    format_option,
    input_options,
    inputs_of,
    open_dispatches,
    paths_argument,
    wave_filter,
    wave_filter_options,
)
from attdec.model.options import InputOptions


def run(
    paths,
    top=16,
    fmt="table",
    wave_filter=None,
    inputs: InputOptions = InputOptions(),
    out=None,
):
    """Loop timings of the dispatches `paths` name, printed to `out` (default stdout) as `fmt`."""
    import sys

    from attdec import api
    from attdec.report import cfg as rep

    rs = api.control_flow(open_dispatches(paths, inputs, need=("waves",)), wave_filter)
    emit(rs, fmt, out or sys.stdout, rep.loop_reporters(top))


@attdec_command(
    paths_argument(),
    click.option("--top", type=COUNT, default=16, help="Waves listed per loop in the table (0 = all)."),
    format_option(("table", "json")),
    wave_filter_options,
    input_options,
)
def loops(a) -> None:
    """Loops (back edges of the control-flow graph) and their iterations in every wave.

    Per loop: header, depth, iterations per wave, the first iteration of each entry versus the steady
    state (p50, p95), and iterations beyond 3 MADs of the steady median; per wave the same, and in JSON
    every iteration's cycles. Iterations run from one execution of the header to the next or to the
    first instruction outside the loop, so a dropped or repeated branch record cannot shift the rest.
    """
    run(a.paths, a.top, a.fmt, wave_filter(a), inputs=inputs_of(a))
