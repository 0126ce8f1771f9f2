"""The record model every source produces and every analysis consumes, and the per-architecture facts.

records.py   Dispatch, Wave, CodeLine and the numpy record layouts (INST_DTYPE, OCCUPANCY_DTYPE)
target.py    Target: one table of what attdec knows about each GPU (`target("gfx950")`)
enums.py     Category, WaveState: the official decoder's enumerations
"""

from attdec.model.enums import Category, WaveState
from attdec.model.records import INST_DTYPE, OCCUPANCY_DTYPE, REALTIME_HZ, CodeLine, Dispatch, Wave, empty_insts
from attdec.model.target import TARGETS, Target, target

__all__ = [
    "INST_DTYPE",
    "OCCUPANCY_DTYPE",
    "REALTIME_HZ",
    "TARGETS",
    "Category",
    "CodeLine",
    "Dispatch",
    "Target",
    "Wave",
    "WaveState",
    "empty_insts",
    "target",
]
