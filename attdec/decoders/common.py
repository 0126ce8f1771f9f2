"""What every family decoder returns, and the PC -> instruction map they walk."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attdec.model import OCCUPANCY_DTYPE, Wave


@dataclass
class BlobResult:
    """Records decoded from one shader engine's SQTT stream."""

    se: int
    arch: str
    waves: list[Wave] = field(default_factory=list)
    occupancy: np.ndarray = field(default_factory=lambda: np.zeros(0, OCCUPANCY_DTYPE))
    realtime: list[tuple[int, int]] = field(default_factory=list)  # (shader clock, reference clock)
    other_simd: list[tuple[int, int, int]] = field(default_factory=list)  # (time, cycles, category)
    problems: list[str] = field(default_factory=list)  # lost sync / truncation, with byte offsets
    bytes_decoded: int = 0


class CodeMap:
    """Absolute PC -> decoded instruction, over every code object loaded for a dispatch.

    The decoders walk this to learn which instruction each trace token stands for.
    """

    def __init__(self):
        self._by_pc: dict[int, object] = {}

    def add(self, instructions, load_base: int) -> None:
        """Add `attdec.isa.Instruction`s whose `address` is an ELF vaddr loaded at `load_base`."""
        for ins in instructions:
            self._by_pc[load_base + ins.address] = ins

    def get(self, pc: int):
        return self._by_pc.get(pc)

    def __len__(self) -> int:
        return len(self._by_pc)
