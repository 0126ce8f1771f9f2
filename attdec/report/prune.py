"""Print `attdec prune-empty`: each empty shell removed (or that would be), the folders kept and why, and
the dispatches kept ranked by (waves, instructions, source-mapped rows), the best of each kernel marked."""

from __future__ import annotations

from attdec.report.base import Reporters, Writer
from attdec.report.common import Col, common_dir, console, draw_table, strip_dir


def _kb(n: int) -> str:
    return f"{n / 1024:,.1f} KB"


def print_pruning(pruning, out) -> None:
    """`pruning`: what attdec.api.prune_empty returns. When a removal failed, the removals before it are
    printed and nothing more (the command then reports the failure)."""
    con = console(out)

    def say(text: str, style: str | None = None) -> None:
        con.print(text, style=style)

    verb = "removed" if pruning.delete else "would remove"
    gone = []
    for v, why in pruning.removals:
        if why is not None:
            say(f"{v.path}: {why}")
            continue
        gone.append(v)
        say(f"{verb} {v.path}  ({_kb(v.size)}, {v.reason})")
        if v.stats_csv:
            say(f"{verb} {v.stats_csv}  (its stats CSV, without hits)")
    if pruning.failed is not None:
        return
    say(
        f"{len(gone)} empty dispatch folder(s), {_kb(sum(v.size for v in gone))}"
        + ("" if pruning.delete or not gone else "; run again with --yes to delete them"),
        style="bold",
    )
    for v, why in pruning.kept:
        say(f"kept {v.path} ({why})")
    ranked = pruning.ranked
    if not ranked:
        return
    best: dict[str, object] = {}
    for t in ranked:
        best.setdefault(t[3].kernel, t[3])  # the dispatch itself: copies in two parents share a folder name
    prefix = common_dir([str(t[3].path) for t in ranked])
    cols = [
        Col("", justify="left"),
        Col("waves"),
        Col("instructions", short="instrs"),
        Col("mapped rows", short="mapped"),
        Col("kernel", "text", "left", min=12),
        Col("dispatch folder", "text", "left", min=16),
    ]
    rows = [
        ["*" if best[d.kernel] is d else "", str(n), f"{insts:,}", str(mapped), d.kernel or "?", where]
        for n, insts, mapped, d in ranked
        for where in [strip_dir(str(d.path), prefix) or "."]
    ]
    say(
        f"{len(ranked)} dispatch(es) with waves kept (* = best of its kernel)"
        + (f", under {prefix}/:" if prefix else ":"),
        style="bold",
    )
    draw_table(con, cols, rows)


def reporters() -> Reporters:
    return {"table": Writer(print_pruning)}
