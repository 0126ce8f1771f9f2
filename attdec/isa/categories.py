"""ISA facts per family that the disassembler and the stall classifier share.

* `class_of(mnemonic, tgt)`: the `InstClass` of an instruction (SALU, SMEM, VALU, MFMA, ...), from its
  mnemonic; not the trace record's `Category` (how the two and the stall types relate: docs/architecture.md).
* `counters_incremented(mnemonic, tgt, operands)`: which wait counters the instruction bumps.
* `parse_wait(text, tgt)`: which counters a wait instruction waits on, and down to what count.

`tgt` is the `Target` (attdec.model.target) the code runs on; the rules differ per family: "gfx9" (CDNA:
gfx90a/gfx942/gfx950), "gfx11" (RDNA3/3.5; gfx10 uses the same rules) and "gfx12" (RDNA4). Rules follow
../shared/docs/isa-decoding.md §4-§6 (LLVM SIInsertWaitcnts.cpp and AMDGPUBaseInfo.cpp); they work on
LLVM mnemonics, with or without operands, and with or without `_e32/_e64/_dpp/_sdwa` suffixes.
"""

from __future__ import annotations

import re

from attdec.model.target import Target
from attdec.model.version_shims import StrEnum


class InstClass(StrEnum):
    """What an instruction is, from its mnemonic: the ISA's view, where the trace record's `Category` is the
    hardware's. Members are their names as strings (`InstClass.LDS == "LDS"`)."""

    SALU = "SALU"
    SMEM = "SMEM"
    VALU = "VALU"
    MFMA = "MFMA"
    VMEM_LOAD = "VMEM_LOAD"  # buffer/global/scratch/image reads (and atomics that return data)
    VMEM_STORE = "VMEM_STORE"
    FLAT = "FLAT"  # the flat_* segment (may touch LDS as well as memory)
    LDS = "LDS"  # ds_* (and the LDS parameter / direct loads)
    BRANCH = "BRANCH"
    WAITCNT = "WAITCNT"  # a memory-counter wait
    BARRIER = "BARRIER"
    MESSAGE = "MESSAGE"
    EXPORT = "EXPORT"
    NOP = "NOP"  # dependency waits and hazard padding: no memory counter
    OTHER = "OTHER"


# encoding suffixes a mnemonic may carry; the longest first, so that "_e64_dpp" goes whole
_SUFFIXES = ("_e64_dpp", "_e32", "_e64", "_dpp8", "_dpp", "_sdwa")

# Memory-counter waits (category WAITCNT).
_WAITCNT = {
    "s_waitcnt",
    "s_waitcnt_vscnt",
    "s_waitcnt_vmcnt",
    "s_waitcnt_expcnt",
    "s_waitcnt_lgkmcnt",
    "s_wait_loadcnt",
    "s_wait_storecnt",
    "s_wait_samplecnt",
    "s_wait_bvhcnt",
    "s_wait_expcnt",
    "s_wait_dscnt",
    "s_wait_kmcnt",
    "s_wait_loadcnt_dscnt",
    "s_wait_storecnt_dscnt",
}
# Dependency waits and hazard padding: no memory counter, the wave just waits (category NOP).
_NOP = {
    "s_nop",
    "s_waitcnt_depctr",
    "s_wait_alu",
    "s_delay_alu",
    "s_wait_idle",
    "s_wait_event",
    "s_sleep",
    "s_sleep_var",
}
_BARRIER = {
    "s_barrier",
    "s_barrier_signal",
    "s_barrier_signal_isfirst",
    "s_barrier_wait",
    "s_barrier_init",
    "s_barrier_join",
    "s_barrier_leave",
    "s_get_barrier_state",
    "ds_gws_barrier",
}
_BRANCH = {
    "s_branch",
    "s_call_b64",
    "s_setpc_b64",
    "s_swappc_b64",
    "s_getpc_b64",
    "s_rfe_b64",
    "s_cbranch_i_fork",
    "s_cbranch_g_fork",
    "s_cbranch_join",
    "s_trap",
    "s_endpgm",
    "s_endpgm_saved",
    "s_endpgm_ordered_ps_done",
    "s_code_end",
}
_MESSAGE = {"s_sendmsg", "s_sendmsghalt", "s_sendmsg_rtn_b32", "s_sendmsg_rtn_b64", "s_ttracedata", "s_ttracedata_imm"}
_SMEM_PREFIXES = (
    "s_load_",
    "s_buffer_load_",
    "s_store_",
    "s_buffer_store_",
    "s_scratch_",
    "s_atomic_",
    "s_buffer_atomic_",
    "s_dcache_",
    "s_atc_probe",
    "s_prefetch_",
    "s_buffer_prefetch_",
)
_SMEM_TIMERS = {"s_memtime", "s_memrealtime"}  # SMEM without a prefix of its own
_MFMA_PREFIXES = ("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")
_VMEM_PREFIXES = ("buffer_", "tbuffer_", "global_", "scratch_", "image_")
_LDS_EXTRA = {"lds_param_load", "lds_direct_load"}
_PARAM_LOADS = _LDS_EXTRA | {"ds_param_load", "ds_direct_load"}  # LDS reads counted on expcnt
# Cross-lane moves that run through the LDS crossbar without touching LDS memory: they are DS
# instructions and retire on the LDS counter (lgkmcnt / dscnt) like LDS loads.
CROSS_LANE_PREFIXES = ("ds_bpermute", "ds_permute", "ds_swizzle")
_CACHE_CONTROL = {
    "buffer_wbl2",
    "buffer_inv",
    "buffer_wbinvl1",
    "buffer_wbinvl1_vol",
    "buffer_wbinvl1_sc",
    "buffer_gl0_inv",
    "buffer_gl1_inv",
    "global_wb",
    "global_inv",
    "global_wbinv",
}


def _rules(tgt: Target) -> str:
    """The rule family of a target: gfx9, gfx11 (also for gfx10) or gfx12."""
    return "gfx11" if tgt.family == "gfx10" else tgt.family


def mnemonic_of(text: str) -> str:
    """The bare LLVM mnemonic of an instruction text ('v_add_f32_e32 v0, v1, v2' -> 'v_add_f32')."""
    t = text.strip().split(None, 1)
    if not t:
        return ""
    m = t[0].lower()
    if m.endswith(_SUFFIXES):
        return m[: -len(next(s for s in _SUFFIXES if m.endswith(s)))]
    return m


def is_cross_lane(text: str) -> bool:
    """Whether an instruction (text or mnemonic) is a DS cross-lane move (ds_bpermute, ds_swizzle, ...)."""
    return mnemonic_of(text).startswith(CROSS_LANE_PREFIXES)


def _is_store(m: str) -> bool:
    return "_store" in m


def _is_atomic(m: str) -> bool:
    return "_atomic" in m


def _atomic_returns(operands: str, family: str) -> bool:
    """An atomic returns data (and counts as a load) with glc/sc0 (gfx9/gfx11) or th:*RETURN (gfx12)."""
    ops = operands.lower()
    if family == "gfx12":
        return "return" in ops
    return bool(re.search(r"\b(glc|sc0)\b", ops))


def _split(mnemonic: str, operands: str) -> tuple[str, str]:
    """(bare mnemonic, operands): `mnemonic` may be the whole instruction text."""
    text = mnemonic.strip()
    if not operands and " " in text:
        operands = text.split(None, 1)[1]
    return mnemonic_of(text), operands


def class_of(mnemonic: str, tgt: Target, operands: str = "") -> InstClass:
    """The `InstClass` of an instruction; `mnemonic` may be the whole instruction text.

    `operands` only matters for atomics (with return = load, without = store); when the mnemonic is
    the full text, the operands are taken from it.
    """
    family = _rules(tgt)
    m, operands = _split(mnemonic, operands)
    if not m or m.startswith(";"):
        return InstClass.OTHER
    if m in _WAITCNT:
        return InstClass.WAITCNT
    if m in _NOP:
        return InstClass.NOP
    if m in _BARRIER:
        return InstClass.BARRIER
    if m in _BRANCH or m.startswith("s_cbranch_"):
        return InstClass.BRANCH
    if m in _MESSAGE:
        return InstClass.MESSAGE
    if m in _SMEM_TIMERS or m.startswith(_SMEM_PREFIXES):
        return InstClass.SMEM
    if m.startswith("s_"):
        return InstClass.SALU
    if m.startswith(_MFMA_PREFIXES):
        return InstClass.MFMA
    if m.startswith("v_"):
        return InstClass.VALU
    if m.startswith("ds_") or m in _LDS_EXTRA:
        return InstClass.LDS
    if m.startswith("flat_"):
        return InstClass.FLAT
    if m in _CACHE_CONTROL:
        return InstClass.VMEM_STORE if m in ("buffer_wbl2", "global_wb", "global_wbinv") else InstClass.OTHER
    if m.startswith(_VMEM_PREFIXES):
        if _is_atomic(m):
            return InstClass.VMEM_LOAD if _atomic_returns(operands, family) else InstClass.VMEM_STORE
        return InstClass.VMEM_STORE if _is_store(m) else InstClass.VMEM_LOAD
    if m in ("exp", "export") or m.startswith("exp_"):
        return InstClass.EXPORT
    return InstClass.OTHER


# The counter each kind of memory work bumps, per rule family (isa-decoding.md §5).
_COUNTER = {
    "gfx9": {
        "load": "vmcnt",
        "store": "vmcnt",
        "sample": "vmcnt",
        "bvh": "vmcnt",
        "lds": "lgkmcnt",
        "scalar": "lgkmcnt",
    },
    "gfx11": {
        "load": "vmcnt",
        "store": "vscnt",
        "sample": "vmcnt",
        "bvh": "vmcnt",
        "lds": "lgkmcnt",
        "scalar": "lgkmcnt",
    },
    "gfx12": {
        "load": "loadcnt",
        "store": "storecnt",
        "sample": "samplecnt",
        "bvh": "bvhcnt",
        "lds": "dscnt",
        "scalar": "kmcnt",
    },
}
_GFX12_BARRIER_KM = {"s_barrier_signal_isfirst", "s_get_barrier_state", "s_barrier_leave"}  # wait on kmcnt


def counters_incremented(mnemonic: str, tgt: Target, operands: str = "") -> tuple[str, ...]:
    """The wait counters an instruction increments when issued (empty for most ALU work).

    Follows the table in isa-decoding.md §5: gfx9 has one vmcnt for loads and stores; gfx10/11 count
    stores on vscnt; gfx12 splits loads/stores/samples/BVH and separates LDS (dscnt) from SMEM and
    messages (kmcnt). FLAT bumps the VM counter and the LDS counter; GDS/GWS also bump expcnt.
    """
    family = _rules(tgt)
    m, operands = _split(mnemonic, operands)
    ops = operands.lower()
    counter = _COUNTER[family]
    cat = class_of(m, tgt, operands)
    if cat == InstClass.LDS or m == "ds_gws_barrier":
        if m in _PARAM_LOADS:
            return ("expcnt",)
        if m.startswith("ds_gws_") or m == "ds_ordered_count" or re.search(r"\bgds\b", ops):  # GDS work
            return (counter["lds"], "expcnt")
        return (counter["lds"],)
    if cat == InstClass.SMEM:
        return () if family == "gfx12" and m in _SMEM_TIMERS else (counter["scalar"],)
    if cat == InstClass.MESSAGE and m.startswith("s_sendmsg"):
        return (counter["scalar"],)
    if family == "gfx12" and m in _GFX12_BARRIER_KM:
        return ("kmcnt",)
    if cat == InstClass.FLAT:
        store = _is_store(m) or (_is_atomic(m) and not _atomic_returns(ops, family))
        return (counter["store" if store else "load"], counter["lds"])
    if cat in (InstClass.VMEM_LOAD, InstClass.VMEM_STORE):
        if m in _CACHE_CONTROL:
            return ()
        if m.startswith("image_bvh"):
            return (counter["bvh"],)
        if m.startswith(("image_sample", "image_gather")):
            return (counter["sample"],)
        # LDS DMA (buffer_load ... lds, global_load_lds_*) counts as a load even though it writes LDS.
        return (counter["store" if cat == InstClass.VMEM_STORE else "load"],)
    if cat == InstClass.EXPORT:
        return ("expcnt",)
    return ()


# ---- wait instructions -------------------------------------------------------------------------

# s_waitcnt simm16 bit fields per family: counter -> (lsb, width) pieces, low bits first (LLVM
# AMDGPUBaseInfo). A counter at its maximum means "no wait". gfx12 still decodes s_waitcnt with gfx11's layout.
WAITCNT_FIELDS: dict[str, dict[str, tuple[tuple[int, int], ...]]] = {
    "gfx9": {"vmcnt": ((0, 4), (14, 2)), "expcnt": ((4, 3),), "lgkmcnt": ((8, 4),)},
    "gfx10": {"vmcnt": ((0, 4), (14, 2)), "expcnt": ((4, 3),), "lgkmcnt": ((8, 6),)},
    "gfx11": {"vmcnt": ((10, 6),), "expcnt": ((0, 3),), "lgkmcnt": ((4, 6),)},
}
WAITCNT_FIELDS["gfx12"] = WAITCNT_FIELDS["gfx11"]
# s_waitcnt_depctr / s_wait_alu fields: (name, lsb, width); depctr_hold_cnt is gfx12 only.
DEPCTR = (
    ("depctr_hold_cnt", 7, 1),
    ("depctr_sa_sdst", 0, 1),
    ("depctr_va_vdst", 12, 4),
    ("depctr_va_sdst", 9, 3),
    ("depctr_va_ssrc", 8, 1),
    ("depctr_va_vcc", 1, 1),
    ("depctr_vm_vsrc", 2, 3),
)

_SPLIT_WAIT = {  # gfx12 / gfx10-11 SOPK single-counter waits: mnemonic -> counter (simm16 = count)
    "s_wait_loadcnt": "loadcnt",
    "s_wait_storecnt": "storecnt",
    "s_wait_samplecnt": "samplecnt",
    "s_wait_bvhcnt": "bvhcnt",
    "s_wait_expcnt": "expcnt",
    "s_wait_dscnt": "dscnt",
    "s_wait_kmcnt": "kmcnt",
    "s_waitcnt_vscnt": "vscnt",
    "s_waitcnt_vmcnt": "vmcnt",
    "s_waitcnt_expcnt": "expcnt",
    "s_waitcnt_lgkmcnt": "lgkmcnt",
}
# gfx12 two-counter waits: simm16 [13:8] is the first counter, [5:0] dscnt; 0x3f = no wait.
_PAIR_WAIT = {"s_wait_loadcnt_dscnt": ("loadcnt", "dscnt"), "s_wait_storecnt_dscnt": ("storecnt", "dscnt")}
_PAIR_FIELDS, _PAIR_MAX = (8, 0), 0x3F
_NAMED = re.compile(r"([a-z]+cnt)\s*\(\s*(\d{1,10})\s*\)")  # text from code.json can hold any digits


def _int(tok: str) -> int | None:
    if len(tok) > 20:  # no immediate is longer; Python refuses to parse thousands of digits
        return None
    try:
        return int(tok, 0)
    except ValueError:
        return None


def waitcnt_counts(imm: int, family: str) -> dict[str, tuple[int, int]]:
    """{counter: (count, maximum)} of an s_waitcnt simm16 in the layout of `family` (a `Target.family`;
    count == maximum: no wait)."""
    out = {}
    for counter, pieces in WAITCNT_FIELDS[family].items():
        value = shift = 0
        for lo, w in pieces:
            value |= ((imm >> lo) & ((1 << w) - 1)) << shift
            shift += w
        out[counter] = (value, (1 << shift) - 1)
    return out


def _pair_counts(mnemonic: str, imm: int) -> dict[str, int]:
    return {c: (imm >> lsb) & _PAIR_MAX for c, lsb in zip(_PAIR_WAIT[mnemonic], _PAIR_FIELDS)}


def waitcnt_fields(inst, tgt: Target) -> dict[str, int]:
    """{counter: count} a wait instruction waits for (a counter at its maximum means "no wait").

    `inst` is an Instruction (any wait: s_waitcnt, the gfx10/11 SOPK s_waitcnt_<cnt>, the gfx12
    s_wait_<cnt> family) or a raw `s_waitcnt` simm16. Non-wait instructions give {}.
    """
    if isinstance(inst, int):
        return {c: v for c, (v, _max) in waitcnt_counts(inst, tgt.family).items()}
    m, imm = inst.mnemonic, inst.words[0] & 0xFFFF if inst.words else 0
    if m == "s_waitcnt":
        return waitcnt_fields(imm, tgt)
    if m in _PAIR_WAIT:
        return _pair_counts(m, imm)
    if m in _SPLIT_WAIT:
        return {_SPLIT_WAIT[m]: imm}
    return {}


def parse_wait(text: str, tgt: Target) -> dict[str, int]:
    """Counters a memory-wait instruction waits on -> the count it waits down to.

    `s_waitcnt vmcnt(0) lgkmcnt(1)` -> {'vmcnt': 0, 'lgkmcnt': 1}; `s_wait_loadcnt 0x0` -> {'loadcnt': 0};
    `s_waitcnt_vscnt null, 0x0` -> {'vscnt': 0}; `s_wait_loadcnt_dscnt 0x102` -> {'loadcnt': 1,
    'dscnt': 2}; a raw `s_waitcnt 0xc07f` is decoded with the family's bit layout. Anything that is not
    a memory-counter wait gives {}. Counters keep the order they were written in.
    """
    m = mnemonic_of(text)
    if m != "s_waitcnt" and m not in _SPLIT_WAIT and m not in _PAIR_WAIT:
        return {}
    parts = text.strip().split(None, 1)
    ops = parts[1].strip().lower() if len(parts) > 1 else ""
    named = {c: int(n) for c, n in _NAMED.findall(ops)}
    if named:
        return named
    imm = _int(ops.split(",")[-1].strip()) if ops else None
    if imm is None:
        return {}
    if m == "s_waitcnt":
        return {c: v for c, (v, mx) in waitcnt_counts(imm, tgt.family).items() if v != mx}
    if m in _SPLIT_WAIT:
        return {_SPLIT_WAIT[m]: imm}
    return {c: v for c, v in _pair_counts(m, imm).items() if v != _PAIR_MAX}
