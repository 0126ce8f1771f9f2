"""A progress bar on stderr when it is a terminal, nothing at all when piped or captured."""

from __future__ import annotations

import sys
from contextlib import contextmanager


class _Null:
    def advance(self, n: int = 1) -> None:
        pass

    def add(self, total: int) -> None:
        pass


class _Bar:
    def __init__(self, progress, task):
        self._p, self._t = progress, task

    def advance(self, n: int = 1) -> None:
        self._p.advance(self._t, n)

    def add(self, total: int) -> None:
        """Grow the total (e.g. once an archive's file count is known)."""
        self._p.update(self._t, total=(self._p.tasks[0].total or 0) + total)


@contextmanager
def progress(total: int, label: str, minimum: int = 50):
    """Yield an object with `.advance(n)`; shows a bar only on a terminal and for `minimum`+ steps."""
    if total < minimum or not sys.stderr.isatty():
        yield _Null()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as p:
        yield _Bar(p, p.add_task(label, total=total))


NULL = _Null()
