"""`attdec diff BEFORE AFTER`: did it help, where, and is that more than run-to-run noise?"""

from __future__ import annotations

from attdec.analysis import COMPARE_BY, FRAMES, METRICS
from attdec.commands.common import Many, add_input_options, count, echo, inputs, open_dispatches
from attdec.errors import InputError

FORMATS = ("table", "json", "csv", "md")
USAGE = "[OPTIONS] [BEFORE AFTER]"


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


def add_compare_options(p) -> None:
    """--by, --metric, --top, --frame, --format: what `diff` and `noise` rows are and how they print."""
    p.add_argument(
        "--by",
        choices=COMPARE_BY,
        default=None,
        help="Rows per source line (default; instructions when there are no source lines), instruction, "
        "source file or stall type.",
    )
    p.add_argument(
        "--metric",
        choices=METRICS,
        default="cycles",
        help="What rows are ranked by (and diff marks and --fail-above checks): cycles (Latency) or stall.",
    )
    p.add_argument("--top", type=count, default=20, help="Rows per kernel (0 = all).")
    p.add_argument(
        "--frame",
        choices=FRAMES,
        default="inner",
        help="For inlined code: the instruction's own line (inner) or the outermost call site (outer).",
    )
    p.add_argument("--format", dest="fmt", choices=FORMATS, default="table")


def arguments(p) -> None:
    p.add_argument("paths", nargs="*", metavar="[BEFORE AFTER]")
    p.add_argument("-b", "--before", action=Many, metavar="PATH", help="A before input (repeatable; with --after).")
    p.add_argument("-a", "--after", action=Many, metavar="PATH", help="An after input (repeatable; with --before).")
    p.add_argument(
        "--fail-above",
        type=float,
        default=None,
        metavar="PCT",
        help="Exit 1 when a kernel's total --metric grew by more than PCT percent (a CI gate).",
    )
    add_compare_options(p)
    add_input_options(p)


def command(a) -> int:
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

    b, after = sides(a.paths, a.before, a.after)
    result = diff(open_dispatches(b, **inputs(a)), open_dispatches(after, **inputs(a)), a.by, a.frame, a.metric)
    print_diff(result, a.fmt, a.top, sys.stdout)
    if a.fail_above is not None:
        reasons = gate(result, a.fail_above, a.metric)
        for r in reasons:
            echo(f"attdec: diff: --fail-above {a.fail_above:g}: {r}", err=True)
        if reasons:
            return 1
    return 0
