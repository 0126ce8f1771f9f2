"""`attdec timeline PATH... -o trace.json`: the waves on a time axis, for Perfetto UI or chrome://tracing."""

from __future__ import annotations

import click

from attdec.commands.common import (
    POSITIVE,
    attdec_command,
    echo,
    input_options,
    inputs_of,
    open_dispatches,
    output_option,
    paths_argument,
    read_paths,
)
from attdec.report import TRACE_CLOCKS, TRACE_GRANULARITIES
from attdec.report.common import output_stream


@attdec_command(
    paths_argument(),
    output_option("Trace file to write ('-' for stdout).", required=True),
    click.option(
        "--granularity",
        type=click.Choice(TRACE_GRANULARITIES),
        default="state",
        help="Slices under each wave: one per instruction, per wave-state run (exec, wait, stall, idle), or none.",
    ),
    click.option(
        "--clock",
        type=click.Choice(TRACE_CLOCKS),
        default="cycles",
        help="cycles: 1 us in the viewer = 1 shader cycle; realtime: real microseconds from the trace's realtime "
        "samples (SEs and dispatches aligned).",
    ),
    click.option(
        "--max-events",
        type=POSITIVE,
        default=500_000,
        help="Cap on trace events; past it, instruction/state slices are written for the waves that began first "
        "(and the trace says so).",
    ),
    input_options,
)
def timeline(a) -> None:
    """Write Chrome trace-event JSON that Perfetto UI (ui.perfetto.dev) and chrome://tracing open.

    A process per shader engine, a thread per CU / SIMD / wave slot, a slice per wave with its
    instructions or wave-state runs below it, and a counter track of resident waves per SE.
    """
    from attdec.report.trace_events import write_trace

    output = output_stream(a.output, inputs=read_paths(a))
    dispatches = open_dispatches(a.paths, inputs_of(a), need=("waves",))
    with output as out:
        s = write_trace(out, dispatches, a.granularity, a.clock, a.max_events)
    if a.output != "-":
        echo(f"wrote {a.output}: {s.events:,} events, {s.waves:,} waves", err=True)
        for n in s.notes:
            echo(f"note: {n}", err=True)
