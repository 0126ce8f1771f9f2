"""`attdec prune-empty ROOT...`: find rocprofv3 dispatch folders with zero waves and remove them.

What is an empty shell, and removing one safely, is `attdec.sources.prune`'s; `attdec.api.prune_empty`
removes them and ranks the folders kept, and `attdec.report.prune` prints that. Dry run by default;
`--yes` deletes, printing every deletion.
"""

from __future__ import annotations

from pathlib import Path

import click

from attdec.commands.common import attdec_command, emit


@attdec_command(
    click.argument("roots", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="ROOTS..."),
    click.option("--yes", is_flag=True, help="Really delete (default: dry run, print what would go)."),
)
def prune_empty(a) -> None:
    """Remove dispatch folders with zero waves (dry run unless --yes).

    Prints what would go, with sizes, then the surviving dispatches ranked by (waves, instructions,
    source-mapped rows) with the best dispatch per kernel marked.
    """
    import sys

    from attdec import api
    from attdec.report.prune import reporters

    pruning = api.prune_empty(a.roots, delete=a.yes)
    emit(pruning, "table", sys.stdout, reporters())
    if pruning.failed is not None:
        raise pruning.failed
