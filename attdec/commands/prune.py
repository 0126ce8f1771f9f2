"""`attdec prune-empty ROOT...`: find rocprofv3 dispatch folders with zero waves and remove them.

What is an empty shell, and removing one safely, is `attdec.sources.prune`'s; this prints the verdicts
and ranks the folders kept. Dry run by default; `--yes` deletes, printing every deletion.
"""

from __future__ import annotations

from pathlib import Path

import click

from attdec.commands.common import attdec_command
from attdec.errors import AttdecError
from attdec.report.common import Col, common_dir, console, draw_table, strip_dir
from attdec.sources.prune import judge_roots, remove
from attdec.sources.ui_output import read_folder


def _kb(n: int) -> str:
    return f"{n / 1024:,.1f} KB"


@attdec_command(
    click.argument("roots", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="ROOTS..."),
    click.option("--yes", is_flag=True, help="Really delete (default: dry run, print what would go)."),
)
def prune_empty(a) -> None:
    """Remove dispatch folders with zero waves (dry run unless --yes).

    Prints what would go, with sizes, then the surviving dispatches ranked by (waves, instructions,
    source-mapped rows) with the best dispatch per kernel marked.
    """
    roots, yes = a.roots, a.yes
    con = console()

    def say(text: str, style: str | None = None) -> None:
        con.print(text, style=style)

    verdicts = judge_roots(roots)
    empty = [v for v in verdicts if v.empty]
    kept = [v for v in verdicts if not v.empty]

    verb = "removed" if yes else "would remove"
    gone = []
    for v in empty:
        why = remove(v) if yes else None
        if why is not None:
            say(f"{v.path}: {why}")
            continue
        gone.append(v)
        say(f"{verb} {v.path}  ({_kb(v.size)}, {v.reason})")
        if v.stats_csv:
            say(f"{verb} {v.stats_csv}  (its stats CSV, without hits)")
    empty = gone
    total = sum(v.size for v in empty)
    say(
        f"{len(empty)} empty dispatch folder(s), {_kb(total)}"
        + ("" if yes or not empty else "; run again with --yes to delete them"),
        style="bold",
    )

    ranked = []
    for v in kept:
        if v.reason != "has wave files":
            say(f"kept {v.path} ({v.reason})")
            continue
        try:
            d = read_folder(v.path)
        except AttdecError as e:
            say(f"kept {v.path} (unreadable: {e})")
            continue
        mapped = sum(1 for c in d.code if not c.is_label and c.source)
        ranked.append((len(d.waves), sum(len(w.insts) for w in d.waves), mapped, d))
    if not ranked:
        return
    ranked.sort(key=lambda t: (-t[0], -t[1], -t[2], t[3].name))
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
