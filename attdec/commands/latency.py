"""`attdec latency PATH...`: how much memory latency the waves hid behind other work."""

from __future__ import annotations

import click

from attdec.analysis import FRAMES
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

DEFINITIONS = ("amd", "issue-to-wait")


def run(
    paths,
    by="line",
    top=20,
    frame="inner",
    fmt="table",
    definition="amd",
    wave_filter=None,
    inputs: InputOptions = InputOptions(),
    out=None,
):
    """Hidden latency of the dispatches `paths` name, printed to `out` (default stdout) as `fmt`."""
    import sys

    from attdec import api
    from attdec.report import waits as rep

    report = rep.AmdLatencyReport if definition == "amd" else rep.LatencyReport
    reports: list = []
    for d in open_dispatches(paths, inputs, need=("waves",)):
        waves = d.waves if wave_filter is None else [w for w in d.waves if wave_filter(w)]
        reports.append(report(d, len(waves), api.hidden_latency(d, frame, definition, wave_filter)))
    emit(reports, fmt, out or sys.stdout, rep.latency_reporters(by, top, definition))


@attdec_command(
    paths_argument(),
    click.option(
        "--by",
        type=click.Choice(("line", "instruction")),
        default="line",
        help="Rank source lines or single instructions.",
    ),
    click.option(
        "--definition",
        type=click.Choice(DEFINITIONS),
        default="amd",
        help="amd: AMD's hidden latency, the one rocprof-compute-viewer's Analyze > Hidden Latency shows (per "
        "instruction, cycles of its idle/stall/issue windows while other pipes or other waves of the same SIMD "
        "were busy); issue-to-wait: attdec's, per memory operation, issue to the wait that retires it.",
    ),
    click.option("--top", type=COUNT, default=20, help="Rows to show (0 = all)."),
    click.option("--frame", type=click.Choice(FRAMES), default="inner", help="As in hotspots."),
    format_option(),
    wave_filter_options,
    input_options,
)
def latency(a) -> None:
    """Hidden latency, as AMD defines it (--definition amd, the default, what rocprof-compute-viewer shows):
    per instruction, the cycles of its idle, stall and issue windows during which other pipes or other
    waves of the same SIMD were busy, and their share of latency + idle. Or attdec's (--definition
    issue-to-wait): of each memory operation's latency (issue to the wait that retires it), the part the
    wave covered with other work and the part exposed as that wait's stall, per unit (VMEM load, LDS, ...).
    """
    run(a.paths, a.by, a.top, a.frame, a.fmt, a.definition, wave_filter(a), inputs=inputs_of(a))
