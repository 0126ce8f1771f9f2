"""Memory encodings: DS, FLAT/GLOBAL/SCRATCH (and gfx12 VFLAT/...), MUBUF, MTBUF, VBUFFER, MIMG,
VIMAGE/VSAMPLE, LDSDIR/VDSDIR: offsets, cache-policy bits (gfx12 `th:`/`scope:`), formats, dmask/dim."""

from __future__ import annotations

import re

from attdec.isa.encoding import SADDR_OFF, sext
from attdec.isa.render.operands import Inst, operand_text, reg_range

GFX9_ACC = (55, 1)  # gfx9 FLAT / MUBUF / MTBUF: the data registers are AGPRs
GFX9_DS_ACC = 25  # the same for DS (read from the raw word)


def _gfx9_acc(x: Inst) -> None:
    if x.fam == "gfx9":
        x.acc = x(*GFX9_ACC)


def _cache_bits(x: Inst, *lsbs: int) -> str:
    """gfx9 cache-policy bits: glc/slc/scc on gfx90a, sc0/nt/sc1 from gfx940 on."""
    names = ("sc0", "nt", "sc1") if x.target.sc_cache_bits else ("glc", "slc", "scc")
    return "".join(f" {n}" * x(lsb, 1) for n, lsb in zip(names, lsbs))


def _glc_slc_dlc(x: Inst, glc: int, slc: int, dlc: int) -> str:
    return " glc" * x(glc, 1) + " slc" * x(slc, 1) + " dlc" * x(dlc, 1)


def _offset(off: int) -> str:
    return f" offset:{off}" if off else ""


TH_LOAD = ("", "TH_LOAD_NT", "TH_LOAD_HT", "TH_LOAD_LU", "TH_LOAD_NT_RT", "TH_LOAD_RT_NT", "TH_LOAD_NT_HT", "0x7")
TH_STORE = (
    "",
    "TH_STORE_NT",
    "TH_STORE_HT",
    "TH_STORE_WB",
    "TH_STORE_NT_RT",
    "TH_STORE_RT_NT",
    "TH_STORE_NT_HT",
    "TH_STORE_NT_WB",
)
TH_ATOMIC = (
    "",
    "TH_ATOMIC_RETURN",
    "TH_ATOMIC_NT",
    "TH_ATOMIC_NT_RETURN",
    "TH_ATOMIC_CASCADE_RT",
    "TH_ATOMIC_0x5",
    "TH_ATOMIC_CASCADE_NT",
    "TH_ATOMIC_0x7",
)
SCOPES = ("", "SCOPE_SE", "SCOPE_DEV", "SCOPE_SYS")
TH_BYPASS, SCOPE_SYS = 3, 3
GFX12_TH, GFX12_SCOPE = (52, 3), (50, 2)  # VBUFFER / VFLAT / VIMAGE


def th_scope(mnem: str, th: int, scope: int) -> str:
    """gfx12 temporal hint and scope; the hint's names depend on load / store / atomic."""
    table = TH_ATOMIC if "_atomic" in mnem else TH_STORE if "_store" in mnem else TH_LOAD
    name = table[th]
    if th == TH_BYPASS and scope == SCOPE_SYS and table is not TH_ATOMIC:
        name = "TH_LOAD_BYPASS" if table is TH_LOAD else "TH_STORE_BYPASS"
    out = f" th:{name}" if th else ""
    return out + (f" scope:{SCOPES[scope]}" if scope else "")


# ---- DS -----------------------------------------------------------------------------------------
def swizzle_text(imm: int) -> str:
    if imm & 0xFF00 == 0x8000:
        return "swizzle(QUAD_PERM," + ",".join(str((imm >> (2 * i)) & 3) for i in range(4)) + ")"
    a, o, x = imm & 0x1F, (imm >> 5) & 0x1F, (imm >> 10) & 0x1F
    if a == 0x1F and o == 0 and x and x & (x - 1) == 0:
        return f"swizzle(SWAP,{x})"
    if a == 0x1F and o == 0 and x and (x + 1) & x == 0:
        return f"swizzle(REVERSE,{x + 1})"
    g = 32 - a
    if imm & 0x8000:
        return str(imm)
    if a and g & (g - 1) == 0 and o < g and x == 0:
        return f"swizzle(BROADCAST,{g},{o})"
    chars = []
    for i in range(4, -1, -1):
        m = 1 << i
        if a & m:
            chars.append("i" if x & m else "p")
        elif x & m:
            chars.append("i" if not o & m else "p")
        else:
            chars.append("1" if o & m else "0")
    return 'swizzle(BITMASK_PERM,"' + "".join(chars) + '")'


def ds(x: Inst) -> str:
    if x.fam == "gfx9":
        x.acc = (x.ws[0] >> GFX9_DS_ACC) & 1
    ops = operand_text(x)
    o0, o1 = x(0, 8), x(8, 8)
    gds = " gds" * x(16 if x.fam == "gfx9" else 17, 1)
    if x.mnem == "ds_swizzle_b32" and (o0 | o1 << 8):
        return ops + " offset:" + swizzle_text(o0 | o1 << 8) + gds
    if re.search(r"2addr|^ds_(read|write|wrxchg)2", x.mnem):  # two 8-bit offsets
        return ops + (f" offset0:{o0}" if o0 else "") + (f" offset1:{o1}" if o1 else "") + gds
    return ops + _offset(o0 | o1 << 8) + gds


# ---- FLAT / GLOBAL / SCRATCH --------------------------------------------------------------------
def _with_64bit_address(x: Inst) -> None:
    """FLAT addresses, and GLOBAL ones without saddr, are a VGPR pair (the signature says one VGPR)."""
    if x.enc not in ("FLAT", "VFLAT") and x.field("saddr") != SADDR_OFF[x.fam]:
        return
    x.parts = [
        (p[0], p[1], 2, p[3], p[4]) if not isinstance(p, str) and p[0] in ("addr", "vaddr") and p[2] == 1 else p
        for p in x.parts
    ]


def _returned_data(x: Inst, ops: str, data: str, vdst: tuple[int, int], kind: str = "v") -> str:
    """An atomic with return prints the destination first (the signature has only the data operand)."""
    dw = x.width_of(data)
    dw = max(1, dw // 2) if "cmpswap" in x.mnem else dw
    return reg_range(kind, x(*vdst), dw) + ", " + ops


def flat(x: Inst) -> str:
    """FLAT / GLOBAL / SCRATCH (gfx9, gfx11)."""
    gfx9 = x.fam == "gfx9"
    _gfx9_acc(x)
    if x.enc in ("FLAT", "GLOBAL"):
        _with_64bit_address(x)
    ops = operand_text(x)
    if "_atomic" in x.mnem and x(16 if gfx9 else 14, 1):  # glc / sc0: returns the old value
        ops = _returned_data(x, ops, "data", (56, 8), "a" if x.acc else "v")
    off = x(0, 13)
    off = off & 0xFFF if x.mnem.startswith("flat_") else sext(off, 13)  # global/scratch: signed 13-bit
    ops += _offset(off)
    if not gfx9:
        return ops + _glc_slc_dlc(x, 14, 15, 13)
    return ops + _cache_bits(x, 16, 17, 25) + " lds" * x(13, 1)


def vflat(x: Inst) -> str:
    """gfx12 VFLAT / VGLOBAL / VSCRATCH."""
    if x.enc in ("VFLAT", "VGLOBAL"):
        _with_64bit_address(x)
    ops = operand_text(x)
    if "_atomic" in x.mnem and x(52, 1):  # th bit 0: returns the old value
        ops = _returned_data(x, ops, "vsrc", (32, 8))
    return ops + _offset(sext(x(72, 24), 24)) + th_scope(x.mnem, x(*GFX12_TH), x(*GFX12_SCOPE))


# ---- buffers ------------------------------------------------------------------------------------
def mubuf(x: Inst) -> str:
    _gfx9_acc(x)
    ops = operand_text(x) + _offset(x(0, 12))
    if x.fam != "gfx9":
        return ops + _glc_slc_dlc(x, 14, 12, 13)
    return ops + _cache_bits(x, 14, 17) + (" lds" * x(16, 1) if x.mnem.startswith("buffer") else "")


def mtbuf(x: Inst) -> str:
    _gfx9_acc(x)
    fmt = x(19, 7)
    invalid = " format:[BUF_DATA_FORMAT_INVALID]" if x.fam == "gfx9" else " format:[BUF_FMT_INVALID]"
    ops = operand_text(x) + (f" format:{fmt}" if fmt else invalid) + _offset(x(0, 12))
    if x.fam != "gfx9":
        return ops + _glc_slc_dlc(x, 14, 12, 13)
    return ops + _cache_bits(x, 14, 54)


def vbuffer(x: Inst) -> str:
    """gfx12 VBUFFER (buffer_* and tbuffer_*)."""
    ops = operand_text(x)
    if x.mnem.startswith("tbuffer"):
        fmt = x(55, 7)
        ops += f" format:{fmt}" if fmt else " format:[BUF_FMT_INVALID]"
    ops += " idxen" * x(63, 1) + " offen" * x(62, 1) + _offset(x(72, 24))
    return ops + th_scope(x.mnem, x(*GFX12_TH), x(*GFX12_SCOPE))


# ---- images -------------------------------------------------------------------------------------
DIMS = (
    "SQ_RSRC_IMG_1D",
    "SQ_RSRC_IMG_2D",
    "SQ_RSRC_IMG_3D",
    "SQ_RSRC_IMG_CUBE",
    "SQ_RSRC_IMG_1D_ARRAY",
    "SQ_RSRC_IMG_2D_ARRAY",
    "SQ_RSRC_IMG_2D_MSAA",
    "SQ_RSRC_IMG_2D_MSAA_ARRAY",
)


def _dmask(dmask: int) -> str:
    return f" dmask:0x{dmask:x}" if dmask else ""


def mimg(x: Inst) -> str:
    ops = operand_text(x) + _dmask(x(8, 4))
    return ops + (f" dim:{DIMS[x(2, 3)]}" if x.fam == "gfx11" else "")


def vimage(x: Inst) -> str:
    """gfx12 VIMAGE / VSAMPLE."""
    return operand_text(x) + _dmask(x(22, 4)) + f" dim:{DIMS[x(0, 3)]}"


# ---- LDS direct / parameter loads ---------------------------------------------------------------
def ldsdir(x: Inst) -> str:
    """gfx11 LDSDIR / gfx12 VDSDIR: attribute and channel, wait counts."""
    ops = re.sub(r"attr\d+\.[xyzw]", f"attr{x(10, 6)}.{'xyzw'[x(8, 2)]}", operand_text(x))
    if x.fam == "gfx12":
        return ops + f" wait_va_vdst:{x(16, 4)} wait_vm_vsrc:{x(23, 1)}"
    return ops + f" wait_vdst:{x(16, 4)}"
