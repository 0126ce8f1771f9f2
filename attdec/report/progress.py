"""Progress on stderr: a bar when stderr is a terminal and there is much to do, nothing when piped."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from attdec.report.common import printable

if TYPE_CHECKING:
    from attdec.sources.kind import Progress

REDRAW = 0.1  # seconds between redraws of the bar (rich's own rate)


@contextmanager
def progress_bar(minimum: int = 50) -> Iterator[Progress | None]:
    """Yield a `Progress` callback (label, done, total) that draws a transient rich bar once the total
    reaches `minimum` units; None when stderr is not a terminal (nothing to draw, nothing to pay).
    The bar is redrawn by the callback, at most every REDRAW seconds, never by rich's refresh thread:
    decoding forks workers (attdec.sources.parallel), and a fork while a thread runs (it may hold
    stderr's lock) can deadlock the child (Python 3.12+ warns of it)."""
    if not sys.stderr.isatty():
        yield None
        return
    bar, task, drawn = None, None, 0.0

    def update(label: str, done: int, total: int) -> None:
        nonlocal bar, task, drawn
        if total < minimum:
            return
        if bar is None:  # rich is imported once there is a bar to draw
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
                auto_refresh=False,
            )
            bar.start()
            task = bar.add_task("reading", total=total)
        bar.update(task, completed=done, total=total, description=printable(label[-48:]) or "reading")
        if time.monotonic() - drawn >= REDRAW or done >= total:
            bar.refresh()
            drawn = time.monotonic()

    try:
        yield update
    finally:
        if bar is not None:
            bar.stop()
