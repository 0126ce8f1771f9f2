"""The stall classifier: which of a fixed set of causes each instruction's stall cycles belong to.

A stall is the time an instruction waited to issue. What it waited *for* depends on the instruction:
a memory-counter wait waits for the memory ops that counter tracks, `s_nop` waits out a hazard, an
`s_barrier` waits for the other waves, and any other instruction waits for its own issue port.
Rules (docs/stall-classifier.md), per family through `attdec.isa.categories`:

* memory-counter waits -> `VMEM-wait` (vmcnt, vscnt; gfx12 loadcnt, storecnt, samplecnt, bvhcnt),
  `LGKM-wait` (lgkmcnt; gfx12 dscnt, kmcnt), `EXP-wait` (expcnt). A wait naming several counters goes
  to the counter waited down to the smallest count (the tightest condition, the one most likely still
  outstanding); on a tie VMEM-wait beats LGKM-wait beats EXP-wait (longer-latency unit first).
* every other instruction -> the stall type of its `InstClass` (table `STALL_TYPE_OF_CLASS`).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from attdec.isa import categories as C
from attdec.isa.categories import InstClass
from attdec.model.version_shims import StrEnum

if TYPE_CHECKING:
    import numpy as np

    from attdec.model.target import Target


class StallType(StrEnum):
    """What a stall waited for; the members are the names every output prints (`StallType.LGKM_WAIT ==
    "LGKM-wait"`), in the order of the tables' columns. A wait's stall goes to the counter it waited on; any
    other instruction's to its `InstClass`: `LDS` is the stall of an LDS instruction waiting to issue, not a
    wait for LDS results (that is `LGKM_WAIT`)."""

    VMEM_WAIT = "VMEM-wait"
    LGKM_WAIT = "LGKM-wait"
    EXP_WAIT = "EXP-wait"
    BARRIER = "barrier"
    NOP = "nop"
    LDS = "LDS"
    VMEM = "VMEM"
    SMEM = "SMEM"
    MFMA = "MFMA"
    VALU = "VALU"
    SALU = "SALU"
    BRANCH = "branch"
    MESSAGE = "message"
    OTHER = "other"


STALL_TYPES = tuple(StallType)
TYPE_INDEX = {t: i for i, t in enumerate(STALL_TYPES)}

STALL_TYPE_OF_COUNTER = {
    "vmcnt": StallType.VMEM_WAIT,
    "vscnt": StallType.VMEM_WAIT,
    "loadcnt": StallType.VMEM_WAIT,
    "storecnt": StallType.VMEM_WAIT,
    "samplecnt": StallType.VMEM_WAIT,
    "bvhcnt": StallType.VMEM_WAIT,
    "lgkmcnt": StallType.LGKM_WAIT,
    "dscnt": StallType.LGKM_WAIT,
    "kmcnt": StallType.LGKM_WAIT,
    "expcnt": StallType.EXP_WAIT,
}
_TIE_ORDER = {StallType.VMEM_WAIT: 0, StallType.LGKM_WAIT: 1, StallType.EXP_WAIT: 2}

STALL_TYPE_OF_CLASS = {
    InstClass.BARRIER: StallType.BARRIER,
    InstClass.NOP: StallType.NOP,
    InstClass.LDS: StallType.LDS,
    InstClass.VMEM_LOAD: StallType.VMEM,
    InstClass.VMEM_STORE: StallType.VMEM,
    InstClass.FLAT: StallType.VMEM,
    InstClass.SMEM: StallType.SMEM,
    InstClass.MFMA: StallType.MFMA,
    InstClass.VALU: StallType.VALU,
    InstClass.SALU: StallType.SALU,
    InstClass.BRANCH: StallType.BRANCH,
    InstClass.MESSAGE: StallType.MESSAGE,
    InstClass.EXPORT: StallType.OTHER,
    InstClass.OTHER: StallType.OTHER,
    InstClass.WAITCNT: StallType.OTHER,  # a wait that names no counter we know
}


@cache
def classify(text: str, tgt: Target) -> tuple[StallType, dict[str, int]]:
    """(stall type, counters waited on) of one instruction text; counters is {} unless it is a wait.
    Remembered per text: a loop body's instructions come back in every listing. Do not change the dict."""
    cls = C.class_of(text, tgt)
    if cls == InstClass.WAITCNT:
        waits = C.parse_wait(text, tgt)
        buckets = [
            (n, _TIE_ORDER[STALL_TYPE_OF_COUNTER[c]], STALL_TYPE_OF_COUNTER[c])
            for c, n in waits.items()
            if c in STALL_TYPE_OF_COUNTER
        ]
        if buckets:
            return min(buckets)[2], waits
        return StallType.OTHER, waits
    return STALL_TYPE_OF_CLASS.get(cls, StallType.OTHER), {}


def stall_type(text: str, tgt: Target) -> StallType:
    return classify(text, tgt)[0]


def line_type_table(dispatch) -> np.ndarray:
    """Stall-type index per code line id (index = line id), for vectorised per-wave breakdowns.

    Lines not in the listing get `other`.
    """
    import numpy as np

    tgt = dispatch.target
    size = max((c.line for c in dispatch.code), default=-1) + 1
    table = np.full(max(size, 1), TYPE_INDEX[StallType.OTHER], np.int64)
    for c in dispatch.code:
        if c.line >= 0 and not c.is_label:
            table[c.line] = TYPE_INDEX[stall_type(c.text, tgt)]
    return table
