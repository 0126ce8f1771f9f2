"""`attdec diff BEFORE AFTER`: did it help, where, and is that more than run-to-run noise?"""

from __future__ import annotations

import click

from attdec.analysis import COMPARE_BY, FRAMES, METRICS
from attdec.commands.common import TOP, input_options, open_dispatches
from attdec.errors import InputError

FORMATS = click.Choice(["table", "json", "csv", "md"])


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


def gate(result, pct: float, metric: str) -> list[str]:
    """Why the CI gate fails: one line per kernel whose total `metric` grew by more than `pct` percent."""
    if not result.kernels:
        return ["no kernel name appears on both sides: nothing was compared"]
    out = []
    for kd in result.kernels:
        grew, after = kd.grew(metric), kd.total.after[metric].median
        if (grew is None and after > 0) or (grew is not None and grew > pct):
            how = "from 0" if grew is None else f"{grew:+.1f}%"
            sig = kd.total.significant(metric)
            note = "" if sig is None else " (significant)" if sig else " (within run-to-run noise)"
            out.append(f"{kd.kernel}: total {metric} grew {how} > {pct:g}%{note}")
    return out


def compare_options(f):
    """--by, --metric, --top, --frame, --format: what `diff` and `noise` rows are and how they print."""
    opts = [
        click.option(
            "--by",
            type=click.Choice(COMPARE_BY),
            default=None,
            help="Rows per source line (default; instructions when there are no source lines), instruction, "
            "source file or stall type.",
        ),
        click.option(
            "--metric",
            type=click.Choice(METRICS),
            default="cycles",
            show_default=True,
            help="What rows are ranked by (and diff marks and --fail-above checks): cycles (Latency) or stall.",
        ),
        click.option("--top", type=TOP, default=20, show_default=True, help="Rows per kernel (0 = all)."),
        click.option(
            "--frame",
            type=click.Choice(FRAMES),
            default="inner",
            show_default=True,
            help="For inlined code: the instruction's own line (inner) or the outermost call site (outer).",
        ),
        click.option("--format", "fmt", type=FORMATS, default="table", show_default=True),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


@click.command("diff")
@click.argument("paths", nargs=-1, metavar="[BEFORE AFTER]")
@click.option("-b", "--before", multiple=True, metavar="PATH", help="A before input (repeatable; with --after).")
@click.option("-a", "--after", multiple=True, metavar="PATH", help="An after input (repeatable; with --before).")
@click.option(
    "--fail-above",
    type=float,
    default=None,
    metavar="PCT",
    help="Exit 1 when a kernel's total --metric grew by more than PCT percent (a CI gate).",
)
@compare_options
@input_options
@click.pass_context
def command(ctx, paths, before, after, by, metric, fail_above, top, frame, fmt, input_format, code, arch):
    """Compare two sets of runs kernel by kernel: before, after, delta and delta % per row.

    BEFORE and AFTER are anything attdec reads (ui_output folders, parents holding many, quoted globs,
    archives, raw captures, tinygrad profiles); for several paths per side use --before P --before Q
    --after R. Dispatches of one kernel name on a side are repeated runs of it: with 2 or more, each
    delta is marked significant or within run-to-run noise. Kernels are matched by name; the others are
    listed. Changed code is aligned by source line, then by mnemonic sequence (docs/diff.md).
    """
    import sys

    from attdec.analysis.compare import diff
    from attdec.report.compare import print_diff

    b, a = sides(paths, before, after)
    result = diff(
        open_dispatches(b, input_format, code, arch), open_dispatches(a, input_format, code, arch), by, frame, metric
    )
    print_diff(result, fmt, top, sys.stdout)
    if fail_above is not None:
        reasons = gate(result, fail_above, metric)
        for r in reasons:
            click.echo(f"attdec: diff: --fail-above {fail_above:g}: {r}", err=True)
        if reasons:
            ctx.exit(1)
