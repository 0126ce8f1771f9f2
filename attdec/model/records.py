"""The record model every source produces and every analysis consumes.

A `Dispatch` is what one kernel launch left behind: a code listing with per-instruction totals (the
rows of rocprofv3's code.json) and the traced waves, each with its instructions in a numpy array.
ui_output folders are read straight into it; raw SQTT is decoded into `Wave`s and `Occupancy` rows
and then given a listing. No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attdec.model.target import Target, target

# One executed instruction of one wave (`category` is an attdec.model.Category).
# `pc` is absolute (load base + ELF address), 0 when unknown;
# `line` is the code-listing line id (code.json column 2), -1 when unknown.
INST_DTYPE = np.dtype(
    [("time", "<i8"), ("category", "u1"), ("stall", "<i8"), ("duration", "<i8"), ("pc", "<u8"), ("line", "<i8")]
)

# Wave start/end events of every wave, traced or not (occupancy.json, the decoder's OCCUPANCY records).
OCCUPANCY_DTYPE = np.dtype(
    [("se", "<i4"), ("cu", "<i4"), ("simd", "<i4"), ("wave_id", "<i4"), ("start", "u1"), ("time", "<i8"), ("pc", "<u8")]
)


def empty_insts(n: int = 0) -> np.ndarray:
    a = np.zeros(n, INST_DTYPE)
    a["line"] = -1
    return a


@dataclass
class Wave:
    """One traced wave: where it ran, when, and what it executed."""

    se: int
    cu: int
    simd: int
    slot: int  # hardware wave slot in the SIMD (the decoder's wave_id)
    begin: int
    end: int
    insts: np.ndarray = field(default_factory=empty_insts)  # INST_DTYPE, in time order
    timeline: list[tuple[int, int]] = field(default_factory=list)  # (WaveState, duration), from `begin`
    seq: int = 0  # n-th wave in this (se, simd, slot): the `wv` of the file name
    contexts: int = 0  # context saves during its life
    path: str | None = None  # wave file it was read from, if any

    @property
    def duration(self) -> int:
        return self.end - self.begin

    def __repr__(self) -> str:
        return (
            f"Wave(se={self.se}, cu={self.cu}, simd={self.simd}, slot={self.slot}, seq={self.seq}, "
            f"begin={self.begin}, end={self.end}, {len(self.insts)} instructions)"
        )


@dataclass
class CodeLine:
    """One row of the code listing: an instruction (or a kernel label) and its totals over traced waves."""

    line: int  # line id, referenced by Wave.insts["line"]
    text: str  # instruction text as llvm-objdump prints it, or "; <symbol>" for a label
    source: str = ""  # "file:line", possibly an inline chain "a.py:1 -> b.py:2"; "" if unknown
    codeobj: int = 0
    vaddr: int = 0
    hit: int = 0
    latency: int = 0
    stall: int = 0
    idle: int = 0

    @property
    def is_label(self) -> bool:
        return self.text.startswith(";")


@dataclass
class Dispatch:
    """Everything attdec knows about one traced kernel dispatch."""

    name: str  # folder name or "<kernel>#<tag>"
    target: Target  # the GPU (a name is accepted too); a family-only Target when the input does not name the chip
    kernel: str = ""
    code: list[CodeLine] = field(default_factory=list)
    waves: list[Wave] = field(default_factory=list)
    occupancy: np.ndarray = field(default_factory=lambda: np.zeros(0, OCCUPANCY_DTYPE))
    realtime: list[tuple[int, int]] = field(default_factory=list)  # (shader clock, reference clock)
    # The same samples per shader engine (realtime.json keeps them per SE; SE clocks are not aligned).
    realtime_se: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    path: str | None = None
    problems: list[str] = field(default_factory=list)  # non-fatal: lost sync, truncated blob, missing file

    def __post_init__(self):
        self.target = target(self.target)  # a name is accepted: Dispatch("k", "gfx1100")

    def __repr__(self) -> str:
        return (
            f"Dispatch({self.name!r}, {self.arch!r}, kernel={self.kernel!r}, {len(self.waves)} waves, "
            f"{len(self.code)} listing rows)"
        )

    @property
    def arch(self) -> str:
        """The target as users read it: "gfx950", or "gfx9 (chip unknown)"."""
        return self.target.display
