"""Types every input kind shares: what a loader returns, and the progress counter it advances."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from attdec.model import Dispatch
    from attdec.sources.raw import RawDispatch

# What a kind's loader returns: dispatches read as they are (ui_output) or raw ones still to decode.
Loaded: TypeAlias = "list[Dispatch | RawDispatch]"
# A progress callback: (what is being done, units done, units in all).
Progress = Callable[[str, int, int], None]


class Tracker:
    """Counts units of work done against a total and reports them to a `Progress` callback."""

    def __init__(self, progress: Progress | None = None, total: int = 0):
        self.progress, self.total, self.done, self.label = progress, total, 0, ""
        self.blob_units = 0  # units of the blob being decoded counted so far (`blob_bytes`)

    def grow(self, n: int) -> None:
        """More work than announced (an archive's members are known only once it is read)."""
        self.total += n

    def advance(self, n: int = 1, label: str | None = None) -> None:
        self.done += n
        if label is not None:
            self.label = label
        if self.progress is not None:
            self.progress(self.label, self.done, max(self.total, self.done))

    def blob_bytes(self, label: str, done: int, n_bytes: int) -> None:
        """`done` bytes of a blob of `n_bytes` decoded: as its windows pass (a big blob's bar moves), then
        all of them; the blob counts `blob_weight(n_bytes)` units in all."""
        units = blob_weight(n_bytes) if done >= n_bytes else done // UNIT
        if units > self.blob_units:
            self.advance(units - self.blob_units, label)
        self.blob_units = 0 if done >= n_bytes else max(units, self.blob_units)


# raw inputs count work (progress, parallel hand-out) in 8 KiB of SQTT plus one unit per blob: a blob's fixed
# cost is about that of decoding 8 KiB (benchmarks/RESULTS.md), so 32 tiny blobs weigh as little as they take
UNIT = 1 << 13


def blob_weight(n_bytes: int) -> int:
    return 1 + n_bytes // UNIT


def raw_weight(raw: RawDispatch) -> int:
    return sum(blob_weight(len(b.data)) for b in raw.blobs)
