"""The record model every source produces and every analysis consumes, and the per-architecture facts.

records.py   Dispatch, Wave, CodeLine, KernelResources, CounterSamples and the numpy record layouts
target.py    Target: one table of what attdec knows about each GPU (`target("gfx950")`)
enums.py     Category, WaveState: the official decoder's enumerations
"""

from attdec.model.enums import Category, WaveState
from attdec.model.records import (
    COUNTER_DTYPE,
    INFO_KINDS,
    INST_DTYPE,
    NO_PC,
    OCCUPANCY_DTYPE,
    OTHER_SIMD_DTYPE,
    PERFEVENT_DTYPE,
    REALTIME_HZ,
    SHADERDATA_DTYPE,
    SHADERDATA_IMM,
    SHADERDATA_PRIV,
    CodeLine,
    CounterSamples,
    DecoderInfo,
    Dispatch,
    KernelResources,
    Wave,
    empty_insts,
)
from attdec.model.target import TARGETS, ComputeUnit, Target, target

__all__ = [
    "COUNTER_DTYPE",
    "INFO_KINDS",
    "INST_DTYPE",
    "NO_PC",
    "OCCUPANCY_DTYPE",
    "OTHER_SIMD_DTYPE",
    "PERFEVENT_DTYPE",
    "REALTIME_HZ",
    "SHADERDATA_DTYPE",
    "SHADERDATA_IMM",
    "SHADERDATA_PRIV",
    "TARGETS",
    "Category",
    "CodeLine",
    "ComputeUnit",
    "CounterSamples",
    "DecoderInfo",
    "Dispatch",
    "KernelResources",
    "Target",
    "Wave",
    "WaveState",
    "empty_insts",
    "target",
]
