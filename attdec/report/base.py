"""The one contract every report writer meets: a `Reporter` writes a command's result to the stream it is
given, whatever the format. A command names its reporters (a mapping format -> Reporter, built by the report
module from the view options such as --top) and `commands.common.emit` looks the format up once, so no
command dispatches on --format itself."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import IO, Any, Protocol, runtime_checkable


@runtime_checkable
class Reporter(Protocol):
    def write(self, result: Any, out: IO[Any]) -> None:
        """Write `result` (what the command's use case returned) to `out`."""


class Writer:
    """A report function as a Reporter: `fn(result, out=out, **view)`. The view options (--top, --by ...)
    are bound when the reporter is made, so every reporter is then called the same way."""

    def __init__(self, fn: Callable[..., Any], **view: Any):
        self.fn = fn
        self.view = view

    def write(self, result: Any, out: IO[Any]) -> None:
        self.fn(result, out=out, **self.view)

    def __repr__(self) -> str:
        return f"Writer({self.fn.__module__}.{self.fn.__qualname__})"


Reporters = Mapping[str, Reporter]  # format name (the --format choice) -> its reporter
