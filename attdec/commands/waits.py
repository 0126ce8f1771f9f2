"""`attdec waits PATH...`: every wait instruction, what it waited for, and what that cost."""

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
    top=20,
    producers=4,
    fmt="table",
    wave_filter=None,
    inputs: InputOptions = InputOptions(),
    out=None,
):
    """Wait sites of the dispatches `paths` name, printed to `out` (default stdout) as `fmt`."""
    import sys

    from attdec import api
    from attdec.report import waits as rep

    reports = []
    for d in open_dispatches(paths, inputs, need=("waves",)):
        waves = d.waves if wave_filter is None else [w for w in d.waves if wave_filter(w)]
        reports.append(rep.WaitReport(d, len(waves), api.waits(d, wave_filter)))
    emit(reports, fmt, out or sys.stdout, rep.wait_reporters(top, producers))


@attdec_command(
    paths_argument(),
    click.option("--top", type=COUNT, default=20, help="Wait sites to show (0 = all)."),
    click.option("--producers", type=int, default=4, help="Producers listed per wait in the table."),
    format_option(),
    wave_filter_options,
    input_options,
)
def waits(a) -> None:
    """Which loads (stores, LDS and scalar reads, exports, ALU results) each wait instruction waited for.

    One row per wait site, largest stall first: its counters, hits, stall (total, mean, p50, p95 per
    hit), issue-to-wait distance, and the earlier instructions it waited for with their share of its
    stall, found by replaying every wave's wait counters (docs/wait-attribution.md). `attdec hotspots
    --charge producer` ranks source lines by the stall they caused this way.
    """
    run(a.paths, a.top, a.producers, a.fmt, wave_filter(a), inputs=inputs_of(a))
