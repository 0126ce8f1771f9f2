"""`attdec latency PATH...`: how much memory latency the waves hid behind other work."""

from __future__ import annotations

import click

from attdec.analysis import FRAMES
from attdec.commands.common import FORMATS, TOP, input_options, make_wave_filter, open_dispatches, wave_filter_options


def run(
    paths,
    by="line",
    top=20,
    frame="inner",
    fmt="table",
    wave_filter=None,
    input_format=None,
    code=(),
    arch=None,
    out=None,
):
    """Hidden latency of the dispatches `paths` name, printed to `out` (default stdout) as `fmt`."""
    import sys

    from attdec.analysis.latency import hidden_latency
    from attdec.analysis.waits import attribute
    from attdec.report import waits as rep

    reports = []
    for d in open_dispatches(paths, input_format, code, arch):
        waves = d.waves if wave_filter is None else [w for w in d.waves if wave_filter(w)]
        reports.append(rep.LatencyReport(d, len(waves), hidden_latency(attribute(d, waves), frame)))
    out = out or sys.stdout
    if fmt == "json":
        rep.print_latency_json(reports, by, top, out)
    elif fmt == "csv":
        rep.print_latency_csv(reports, by, top, out)
    else:
        rep.print_latency_table(reports, by, top, out)


@click.command("latency")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--by",
    type=click.Choice(["line", "instruction"]),
    default="line",
    show_default=True,
    help="Rank source lines or single memory instructions.",
)
@click.option("--top", type=TOP, default=20, show_default=True, help="Rows to show (0 = all).")
@click.option("--frame", type=click.Choice(FRAMES), default="inner", show_default=True, help="As in hotspots.")
@click.option("--format", "fmt", type=FORMATS, default="table", show_default=True)
@wave_filter_options
@input_options
def command(paths, by, top, frame, fmt, se, simd, slot, wave, cu, input_format, code, arch):
    """Hidden latency: of each memory operation's latency (issue to the wait that retires it), the part
    the wave covered with other work and the part exposed as that wait's stall; per instruction or
    source line, per unit (VMEM load, LDS, SMEM, ...) and for the kernel ("62% of load latency hidden").
    """
    run(paths, by, top, frame, fmt, make_wave_filter(se, simd, slot, wave, cu), input_format, code, arch)
