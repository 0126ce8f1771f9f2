"""The record model every source produces and every analysis consumes, and the per-architecture facts.

records.py   Dispatch, Wave, CodeLine, KernelResources, CounterSamples and the numpy record layouts
target.py    Target: one table of what attdec knows about each GPU (`target("gfx950")`)
enums.py     Category, WaveState: the official decoder's enumerations

Importing the model does not import numpy: the record layouts (`INST_DTYPE`, ...) are made on first use,
like the enumerations.
"""

from attdec.model import records
from attdec.model.records import (
    INFO_KINDS,
    NO_PC,
    REALTIME_HZ,
    SHADERDATA_IMM,
    SHADERDATA_PRIV,
    CodeLine,
    CounterSamples,
    DecoderInfo,
    Deferred,
    Dispatch,
    KernelResources,
    Timeline,
    Wave,
    WaveSelection,
    WaveTable,
    deferred,
    empty_insts,
    empty_occupancy,
    lines_of_pcs,
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
    "WAVE_SUMMARY_DTYPE",
    "Category",
    "CodeLine",
    "ComputeUnit",
    "CounterSamples",
    "DecoderInfo",
    "Deferred",
    "Dispatch",
    "KernelResources",
    "Target",
    "Timeline",
    "Wave",
    "WaveSelection",
    "WaveState",
    "WaveTable",
    "deferred",
    "empty_insts",
    "empty_occupancy",
    "lines_of_pcs",
    "target",
]


def __getattr__(name: str):
    """The numpy record layouts (attdec.model.records) and the enumerations (attdec.model.enums), made on
    first use: a ui_output report needs neither."""
    if name in records.LAYOUTS:
        return getattr(records, name)
    if name in ("Category", "WaveState"):
        from attdec.model import enums

        return getattr(enums, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
