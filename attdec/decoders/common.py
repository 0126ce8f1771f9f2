"""What every family decoder returns, the PC -> instruction map they walk, and what they share."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attdec.model import OCCUPANCY_DTYPE, Wave

# gfx9: the category of an ISSUE placeholder no INST token has described yet. Internal (past the official
# categories): the PC walk stops at it, and a finished wave reports it as NONE.
NOT_FINISHED = 14


class NotVectorisable(Exception):
    """The blob has a token order a vectorised model does not cover (e.g. tokens after WAVE_END): the
    family's scalar reference model decodes it instead."""


@dataclass
class BlobResult:
    """Records decoded from one shader engine's SQTT stream."""

    se: int
    arch: str
    waves: list[Wave] = field(default_factory=list)
    occupancy: np.ndarray = field(default_factory=lambda: np.zeros(0, OCCUPANCY_DTYPE))
    realtime: list[tuple[int, int]] = field(default_factory=list)  # (shader clock, reference clock)
    other_simd: list[tuple[int, int, int]] = field(default_factory=list)  # (time, cycles, category)
    problems: list[str] = field(default_factory=list)  # lost sync, truncation... with byte offsets
    bytes_decoded: int = 0
    walks: int = 0  # traced waves whose records were walked against the code for their PCs
    walks_stopped: int = 0  # of those, walks that stopped early: their later records have pc 0

    @property
    def damaged(self) -> bool:
        """Whether the blob is truncated, lost sync or does not fit the code: any problem but the one line
        that sums up PC walks that stopped early (AMD's decoder stops there too; the records are exact)."""
        return len(self.problems) > (1 if self.walks_stopped else 0)


def entry_problem(code: CodeMap, pc: int, byte: int) -> str | None:
    """The first traced wave's entry PC (its WAVE_START at `byte`) must be in the code: else the code
    objects or their load bases are wrong, and no record will get a PC."""
    if code.get(pc) is not None:
        return None
    return (
        f"kernel entry pc {pc:#x} (byte {byte}) is not in any loaded code object: wrong --code or load base? PCs stay 0"
    )


class CodeMap:
    """Absolute PC -> decoded instruction, over every code object loaded for a dispatch.

    The decoders walk this to learn which instruction each trace token stands for.
    """

    def __init__(self) -> None:
        self._by_pc: dict[int, object] = {}

    def add(self, instructions, load_base: int) -> None:
        """Add `attdec.isa.Instruction`s whose `address` is an ELF vaddr loaded at `load_base`."""
        for ins in instructions:
            self._by_pc[load_base + ins.address] = ins

    def get(self, pc: int):
        return self._by_pc.get(pc)

    def __len__(self) -> int:
        return len(self._by_pc)
