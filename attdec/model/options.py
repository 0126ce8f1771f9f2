"""What the user asked of reading and decoding, as two frozen records made where their words arrive (the
click options, the API's keyword parameters) and passed down whole, so that every layer reads the same
named fields and a misspelt option is a `TypeError` at that edge instead of a setting silently ignored.

The defaults here are the only ones: the API's signatures and the command line's options take theirs from
these classes.
"""

from __future__ import annotations

from attdec.model.record import Frozen


class DecodeOptions(Frozen):
    """How raw SQTT captures are decoded (decoded inputs ignore it)."""

    compat: str | None = None  # the AMD decoder build reproduced (a name of decoders.compat.COMPAT; None: its default)
    jobs: int | None = None  # processes decoding raw dispatches: None one per idle core, 1 this process alone
    target_cu: int | None = None  # gfx9: the CU whose waves get instruction detail (None: the trace's own)
    fold: bool | str = False  # big blobs in windows, waves folded to stall per PC (True) or only counted ("totals")
    window: int | None = None  # bytes per window when folding (None: the decoder's own size)
    occupancy: bool = True  # False: a blob decoded in windows keeps no occupancy records

    def __post_init__(self) -> None:
        if self.fold not in (False, True, "totals"):
            raise ValueError(f"fold must be False, True or 'totals', not {self.fold!r}")
        if self.jobs is not None and self.jobs < 1:
            raise ValueError(f"jobs must be 1 or more (or None: one per idle core), not {self.jobs!r}")


class InputOptions(Frozen):
    """Which inputs the paths are and how to decode the raw ones."""

    input_format: str | None = None  # a kind of sources.KINDS (None: detected per path)
    code: tuple[str, ...] = ()  # "FILE@LOADBASE" code objects: the paths are then the SQTT blobs of one dispatch
    arch: str | None = None  # the GPU, for blobs whose code object does not say
    decode: DecodeOptions = DecodeOptions()

    def __post_init__(self) -> None:
        if isinstance(self.code, str):
            raise TypeError("code is a sequence of 'FILE@LOADBASE' strings, not one string")
        self.__dict__["code"] = tuple(self.code)  # a list given by a script: kept hashable like the rest
