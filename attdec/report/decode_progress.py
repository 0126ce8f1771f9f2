"""Progress of raw decodes (per dispatch, per blob): a rich bar on a terminal, nothing when stderr is piped."""

from __future__ import annotations

from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


@contextmanager
def decode_progress(n_dispatches: int):
    """Yields `step(dispatch_index, dispatch_name)` -> per-blob callback `(label, done, total)`."""
    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda i, name: None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        outer = bar.add_task("dispatches", total=n_dispatches)
        inner = bar.add_task("blobs", total=1)

        def step(i: int, name: str):
            bar.update(outer, completed=i, description=f"dispatch {name}")

            def blob(label: str, done: int, total: int):
                bar.update(inner, completed=done, total=max(total, 1), description=f"  {label[-48:]}")
                if done >= total:
                    bar.update(outer, completed=i + 1)

            return blob

        yield step
