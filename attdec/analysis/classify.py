"""The stall classifier: which of a fixed set of causes each instruction's stall cycles belong to.

A stall is the time an instruction waited to issue. What it waited *for* depends on the instruction:
a memory-counter wait waits for the memory ops that counter tracks, `s_nop` waits out a hazard, an
`s_barrier` waits for the other waves, and any other instruction waits for its own issue port.
Rules (docs/stall-classifier.md), per family through `attdec.isa.categories`:

* memory-counter waits -> `VMEM-wait` (vmcnt, vscnt; gfx12 loadcnt, storecnt, samplecnt, bvhcnt),
  `LGKM-wait` (lgkmcnt; gfx12 dscnt, kmcnt), `EXP-wait` (expcnt). A wait naming several counters goes
  to the counter waited down to the smallest count (the tightest condition, the one most likely still
  outstanding); on a tie VMEM-wait beats LGKM-wait beats EXP-wait (longer-latency unit first).
* every other instruction -> the bucket of its ISA category (table `BUCKET_OF_CATEGORY`).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from attdec.isa import categories as C

if TYPE_CHECKING:
    import numpy as np

    from attdec.model.target import Target

STALL_TYPES = (
    "VMEM-wait",
    "LGKM-wait",
    "EXP-wait",
    "barrier",
    "nop",
    "LDS",
    "VMEM",
    "SMEM",
    "MFMA",
    "VALU",
    "SALU",
    "branch",
    "message",
    "other",
)
TYPE_INDEX = {t: i for i, t in enumerate(STALL_TYPES)}

COUNTER_BUCKET = {
    "vmcnt": "VMEM-wait",
    "vscnt": "VMEM-wait",
    "loadcnt": "VMEM-wait",
    "storecnt": "VMEM-wait",
    "samplecnt": "VMEM-wait",
    "bvhcnt": "VMEM-wait",
    "lgkmcnt": "LGKM-wait",
    "dscnt": "LGKM-wait",
    "kmcnt": "LGKM-wait",
    "expcnt": "EXP-wait",
}
_TIE_ORDER = {"VMEM-wait": 0, "LGKM-wait": 1, "EXP-wait": 2}

BUCKET_OF_CATEGORY = {
    C.BARRIER: "barrier",
    C.NOP: "nop",
    C.LDS: "LDS",
    C.VMEM_LOAD: "VMEM",
    C.VMEM_STORE: "VMEM",
    C.FLAT: "VMEM",
    C.SMEM: "SMEM",
    C.MFMA: "MFMA",
    C.VALU: "VALU",
    C.SALU: "SALU",
    C.BRANCH: "branch",
    C.MESSAGE: "message",
    C.EXPORT: "other",
    C.OTHER: "other",
    C.WAITCNT: "other",  # a wait that names no counter we know
}


@cache
def classify(text: str, tgt: Target) -> tuple[str, dict[str, int]]:
    """(stall type, counters waited on) of one instruction text; counters is {} unless it is a wait.
    Remembered per text: a loop body's instructions come back in every listing. Do not change the dict."""
    cat = C.category_of(text, tgt)
    if cat == C.WAITCNT:
        waits = C.parse_wait(text, tgt)
        buckets = [
            (n, _TIE_ORDER[COUNTER_BUCKET[c]], COUNTER_BUCKET[c]) for c, n in waits.items() if c in COUNTER_BUCKET
        ]
        if buckets:
            return min(buckets)[2], waits
        return "other", waits
    return BUCKET_OF_CATEGORY.get(cat, "other"), {}


def stall_type(text: str, tgt: Target) -> str:
    return classify(text, tgt)[0]


def line_type_table(dispatch) -> np.ndarray:
    """Stall-type index per code line id (index = line id), for vectorised per-wave breakdowns.

    Lines not in the listing get `other`.
    """
    import numpy as np

    tgt = dispatch.target
    size = max((c.line for c in dispatch.code), default=-1) + 1
    table = np.full(max(size, 1), TYPE_INDEX["other"], np.int64)
    for c in dispatch.code:
        if c.line >= 0 and not c.is_label:
            table[c.line] = TYPE_INDEX[stall_type(c.text, tgt)]
    return table
