"""`attdec timeline PATH... -o trace.json`: the waves on a time axis, for Perfetto UI or chrome://tracing."""

from __future__ import annotations

import click

from attdec.commands.common import input_options, open_dispatches, output_stream
from attdec.report import TRACE_CLOCKS, TRACE_GRANULARITIES


@click.command("timeline")
@click.argument("paths", nargs=-1, required=True)
@click.option("-o", "--output", required=True, metavar="FILE", help="Trace file to write ('-' for stdout).")
@click.option(
    "--granularity",
    type=click.Choice(TRACE_GRANULARITIES),
    default="state",
    show_default=True,
    help="Slices under each wave: one per instruction, per wave-state run (exec, wait, stall, idle), or none.",
)
@click.option(
    "--clock",
    type=click.Choice(TRACE_CLOCKS),
    default="cycles",
    show_default=True,
    help="cycles: 1 us in the viewer = 1 shader cycle; realtime: real microseconds from the trace's realtime "
    "samples (SEs and dispatches aligned).",
)
@click.option(
    "--max-events",
    type=click.IntRange(min=1),
    default=500_000,
    show_default=True,
    help="Cap on trace events; past it, instruction/state slices are written for the waves that began first "
    "(and the trace says so).",
)
@input_options
def command(paths, output, granularity, clock, max_events, input_format, code, arch):
    """Write Chrome trace-event JSON that Perfetto UI (ui.perfetto.dev) and chrome://tracing open.

    A process per shader engine, a thread per CU / SIMD / wave slot, a slice per wave with its
    instructions or wave-state runs below it, and a counter track of resident waves per SE.
    """
    from attdec.report.trace_events import write_trace

    dispatches = open_dispatches(paths, input_format, code, arch)
    with output_stream(output) as out:
        s = write_trace(out, dispatches, granularity, clock, max_events)
    if output != "-":
        click.echo(f"wrote {output}: {s.events:,} events, {s.waves:,} waves", err=True)
        for n in s.notes:
            click.echo(f"note: {n}", err=True)
