"""A kernel's resource use, read from its code object: the NT_AMDGPU_METADATA note and the kernel descriptor.

The metadata note has exact figures; the 64-byte kernel descriptor (KD) is all tinygrad's minimal
containers have, and gives register counts only in allocation blocks ("granulated"), so those come out
rounded up. Field layouts: LLVM AMDGPUUsage ("Code Object V3+ Metadata", "Kernel Descriptor") and
llvm/Support/AMDHSAKernelDescriptor.h; what each field means for occupancy: docs/occupancy.md.
"""

from __future__ import annotations

import math
import struct
from typing import TYPE_CHECKING

from attdec.model import KernelResources

if TYPE_CHECKING:
    from attdec.model.target import Target

# e_flags bits [9:8] and [11:10] in code object V4+ (EI_ABIVERSION >= 2)
FEATURE_SETTING = {0: "unsupported", 1: "any", 2: "off", 3: "on"}

WAVE32 = 1 << 10  # kernel_code_properties: ENABLE_WAVEFRONT_SIZE32 (gfx10+)
DYNAMIC_STACK = 1 << 11  # kernel_code_properties: USES_DYNAMIC_STACK
WGP_MODE = 1 << 29  # compute_pgm_rsrc1 (gfx10+)


def _unified_agprs(tgt: Target | None) -> bool:
    return tgt is not None and tgt.cu is not None and tgt.cu.unified_agprs


def _from_descriptor(kd: bytes, tgt: Target | None) -> dict:
    lds, scratch, kernarg = struct.unpack_from("<III", kd, 0)
    rsrc3, rsrc1 = struct.unpack_from("<II", kd, 44)
    (props,) = struct.unpack_from("<H", kd, 56)
    gen = tgt.generation if tgt is not None else None
    wave_size = 32 if gen is not None and gen >= 10 and props & WAVE32 else 64
    out = {
        "lds_bytes": lds,
        "scratch_bytes": scratch,
        "kernarg_bytes": kernarg,
        "wave_size": wave_size,
        "dynamic_stack": bool(props & DYNAMIC_STACK),
        "wgp_mode": bool(rsrc1 & WGP_MODE) if gen is not None and gen >= 10 else None,
    }
    if tgt is not None:
        out["vgpr"] = ((rsrc1 & 0x3F) + 1) * tgt.vgpr_encoding_granule(wave_size)
        if gen == 9:  # reserved (0) from gfx10 on, where SGPRs are not allocated per wave
            out["sgpr"] = ((rsrc1 >> 6 & 0xF) + 1) * 8
        if _unified_agprs(tgt):
            out["arch_vgpr"] = ((rsrc3 & 0x3F) + 1) * 4  # accum_offset: AGPRs start there
    return out


def _from_metadata(m: dict) -> dict:
    def num(key):  # a count or size: what the note's 32-bit fields hold, else not given
        v = m.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 32 else None

    out = {
        "vgpr": num(".vgpr_count"),
        "agpr": num(".agpr_count"),
        "sgpr": num(".sgpr_count"),
        "lds_bytes": num(".group_segment_fixed_size"),
        "scratch_bytes": num(".private_segment_fixed_size"),
        "kernarg_bytes": num(".kernarg_segment_size"),
        "wave_size": num(".wavefront_size") if m.get(".wavefront_size") in (32, 64) else None,
        "sgpr_spill": num(".sgpr_spill_count"),
        "vgpr_spill": num(".vgpr_spill_count"),
    }
    if isinstance(m.get(".uses_dynamic_stack"), bool):
        out["dynamic_stack"] = m[".uses_dynamic_stack"]
    reqd = m.get(".reqd_workgroup_size")
    if isinstance(reqd, list) and reqd and all(isinstance(x, int) and x > 0 for x in reqd):
        out["workgroup_size"], out["workgroup_size_exact"] = math.prod(reqd), True
    elif num(".max_flat_workgroup_size"):
        out["workgroup_size"] = num(".max_flat_workgroup_size")
    return {k: v for k, v in out.items() if v is not None}


def kernel_resources(
    name: str, metadata: dict, descriptor: bytes | None, tgt: Target | None, e_flags: int = 0, abi_version: int = 0
) -> KernelResources:
    """Resources of one kernel. `tgt` decides how the descriptor reads (granules, wave32 bit); None (a target
    attdec does not know): what does not depend on it."""
    meta = _from_metadata(metadata) if metadata else {}
    kd = _from_descriptor(descriptor, tgt) if descriptor is not None and len(descriptor) >= 64 else {}
    fields = {**kd, **meta}  # the note's exact figures win; the descriptor fills in the rest
    rounded = tuple(f for f in ("vgpr", "sgpr", "arch_vgpr") if f in kd and f not in meta)
    if "vgpr" in fields and "arch_vgpr" not in meta:
        if _unified_agprs(tgt):
            if "agpr" in meta:  # .vgpr_count = arch VGPRs rounded to 4 + AGPRs (LLVM getTotalNumVGPRs)
                fields["arch_vgpr"] = fields["vgpr"] - meta["agpr"] if meta["agpr"] else fields["vgpr"]
                rounded = tuple(f for f in rounded if f != "arch_vgpr")
            elif "arch_vgpr" in kd:
                fields["agpr"] = max(0, fields["vgpr"] - kd["arch_vgpr"])
                rounded += ("agpr",)
        else:
            fields["arch_vgpr"] = fields["vgpr"]
            if "vgpr" in rounded:
                rounded += ("arch_vgpr",)
    if abi_version >= 2 and e_flags:
        fields["xnack"] = FEATURE_SETTING[e_flags >> 8 & 3]
        fields["sramecc"] = FEATURE_SETTING[e_flags >> 10 & 3]
    source = " + ".join(s for s, have in (("metadata note", meta), ("kernel descriptor", kd)) if have)
    arch = tgt.name if tgt is not None else ""
    return KernelResources(name=name, arch=arch, source=source or "nothing", rounded=rounded, **fields)
