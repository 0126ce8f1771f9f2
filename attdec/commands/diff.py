"""`attdec diff BEFORE AFTER`: did it help, where, and is that more than run-to-run noise?"""

from __future__ import annotations

import click

from attdec.commands.common import (
    attdec_command,
    compare_options,
    echo,
    emit,
    input_options,
    inputs_of,
    open_dispatches,
)
from attdec.errors import ExitCode, InputError


def sides(paths, before, after) -> tuple[list[str], list[str]]:
    """(before paths, after paths) from `BEFORE AFTER` or from repeated --before/--after, not both."""
    if before or after:
        if paths:
            raise InputError("give BEFORE AFTER, or --before/--after, not both", "diff")
        if not (before and after):
            raise InputError("--before and --after are both needed", "diff")
        return list(before), list(after)
    if len(paths) != 2:
        raise InputError(
            f"expected 2 paths (BEFORE AFTER), got {len(paths)}; quote globs ('runs0/*') or repeat "
            "--before/--after for several paths per side",
            "diff",
        )
    return [paths[0]], [paths[1]]


@attdec_command(
    click.argument("paths", nargs=-1, metavar="[BEFORE AFTER]"),
    click.option("-b", "--before", multiple=True, metavar="PATH", help="A before input (repeatable; with --after)."),
    click.option("-a", "--after", multiple=True, metavar="PATH", help="An after input (repeatable; with --before)."),
    click.option(
        "--fail-above",
        type=float,
        default=None,
        metavar="PCT",
        help=f"Exit {int(ExitCode.REGRESSION)} when a kernel's total --metric grew by more than PCT percent "
        "(a CI gate).",
    ),
    *compare_options,
    input_options,
)
def diff(a) -> int:
    """Compare two sets of runs kernel by kernel: before, after, delta and delta % per row.

    BEFORE and AFTER are anything attdec reads (ui_output folders, parents holding many, quoted globs,
    archives, raw captures, tinygrad profiles); for several paths per side use --before P --before Q
    --after R. Dispatches of one kernel name on a side are repeated runs of it: with 2 or more, each
    delta is marked significant or within run-to-run noise. Kernels are matched by name; the others are
    listed. Changed code is aligned by source line, then by mnemonic sequence (docs/diff.md).
    """
    import sys

    from attdec import api
    from attdec.report.compare import diff_reporters

    b, after = sides(a.paths, a.before, a.after)
    before = open_dispatches(b, inputs=inputs_of(a))
    result = api.diff(before, open_dispatches(after, inputs=inputs_of(a)), a.by, frame=a.frame, metric=a.metric)
    emit(result, a.fmt, sys.stdout, diff_reporters(a.top))
    if a.fail_above is None:
        return ExitCode.OK
    if not result.kernels:  # the gate cannot judge: that is not a slower kernel
        echo("attdec: error: diff --fail-above: no kernel name appears on both sides: nothing was compared", err=True)
        return ExitCode.INPUT_ERROR
    reasons = api.regressions(result, a.fail_above, a.metric)
    for r in reasons:
        echo(f"attdec: diff: --fail-above {a.fail_above:g}: {r}", err=True)
    return ExitCode.REGRESSION if reasons else ExitCode.OK
