"""`attdec advise PATH...`: the patterns each kernel shows, where, the cycles at stake and what to try."""

from __future__ import annotations

from attdec.commands.common import (
    attdec_command,
    emit,
    format_option,
    input_options,
    inputs_of,
    open_dispatches,
    output_option,
    paths_argument,
    read_paths,
)
from attdec.model.options import InputOptions
from attdec.report.common import output_stream

ADVISE_FORMATS = ("table", "json", "md")


def run(paths, fmt="table", inputs: InputOptions = InputOptions(), out=None):
    """Findings of the dispatches `paths` name, printed to `out` (default stdout) as `fmt`."""
    import sys

    from attdec import api
    from attdec.report import advise as rep

    dispatches = open_dispatches(paths, inputs, need=("waves",))
    emit([api.advise(d) for d in dispatches], fmt, out or sys.stdout, rep.reporters())


@attdec_command(
    paths_argument(),
    format_option(
        ADVISE_FORMATS,
        help="json: every finding with its evidence, and the rules that did not apply (docs/advise.md).",
    ),
    output_option(),
    input_options,
)
def advise(a) -> None:
    """Name the performance problems each kernel shows: the rule, where (source line, instruction), the
    cycles at stake (an upper bound, from the trace), the evidence and what to try.

    Rules: cross-lane-lgkm, source-mapping, truncated-trace, unrepresentative-cu, nop-padding,
    exposed-load, wait-too-strict, barrier-imbalance, occupancy-limit, lds-bank-conflict, mfma-chain; a
    rule that cannot judge an input says why. Thresholds and reasoning: docs/advise.md.
    """
    with output_stream(a.output, inputs=read_paths(a)) as out:
        run(a.paths, a.fmt, inputs=inputs_of(a), out=out)
