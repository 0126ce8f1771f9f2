"""The record model every source produces and every analysis consumes, and the per-architecture facts.

records.py   Dispatch, Wave, CodeLine, KernelResources, CounterSamples and the numpy record layouts
target.py    Target: one table of what attdec knows about each GPU (`target("gfx950")`)
enums.py     Category, WaveState: the official decoder's enumerations
"""

from attdec.model.enums import Category, WaveState
from attdec.model.records import (
    COUNTER_DTYPE,
    INST_DTYPE,
    OCCUPANCY_DTYPE,
    REALTIME_HZ,
    CodeLine,
    CounterSamples,
    Dispatch,
    KernelResources,
    Wave,
    empty_insts,
)
from attdec.model.target import TARGETS, ComputeUnit, Target, target

__all__ = [
    "COUNTER_DTYPE",
    "INST_DTYPE",
    "OCCUPANCY_DTYPE",
    "REALTIME_HZ",
    "TARGETS",
    "Category",
    "CodeLine",
    "ComputeUnit",
    "CounterSamples",
    "Dispatch",
    "KernelResources",
    "Target",
    "Wave",
    "WaveState",
    "empty_insts",
    "target",
]
