"""The official decoder's enumerations (rocprof-trace-decoder `trace_decoder_types.h`), by value."""

from __future__ import annotations

from enum import IntEnum


class Category(IntEnum):
    """Instruction category of a trace record (`inst_category_t`); it comes from the trace, not the ISA (the
    ISA's categories, the PC walk's line kinds and the stall types map to it: docs/architecture.md)."""

    NONE = 0
    SMEM = 1
    SALU = 2
    VMEM = 3
    FLAT = 4
    LDS = 5
    VALU = 6
    JUMP = 7
    NEXT = 8
    IMMED = 9
    CONTEXT = 10
    MESSAGE = 11
    BVH = 12


class WaveState(IntEnum):
    """State of a wave in its per-wave timeline (`wave_state_t`)."""

    EMPTY = 0
    IDLE = 1
    EXEC = 2
    WAIT = 3
    STALL = 4
