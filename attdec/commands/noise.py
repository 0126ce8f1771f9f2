"""`attdec noise RUN...`: how repeatable is this measurement, per kernel and per line?"""

from __future__ import annotations

from attdec.commands.common import (
    attdec_command,
    compare_options,
    emit,
    input_options,
    inputs_of,
    open_dispatches,
    paths_argument,
)


@attdec_command(paths_argument("runs"), *compare_options, input_options)
def noise(a) -> None:
    """Run-to-run spread of repeated runs: median, MAD and min-max per kernel total, stall type and row.

    RUNS are anything attdec reads; dispatches with the same kernel name are runs of that kernel. The
    header says how large a change `attdec diff` would need to call it significant against such runs.
    """
    import sys

    from attdec import api
    from attdec.report.compare import noise_reporters

    result = api.noise(open_dispatches(a.runs, inputs=inputs_of(a)), a.by, frame=a.frame, metric=a.metric)
    emit(result, a.fmt, sys.stdout, noise_reporters(a.top))
