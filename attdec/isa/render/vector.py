"""Vector ALU encodings: VOP1/VOP2/VOPC, VOP3 (with gfx9 MFMA and packed math), VOP3P, VINTERP, VOPD,
and the DPP16 / DPP8 / SDWA forms."""

from __future__ import annotations

import re

from attdec.isa.encoding import (
    DPP8_SELECTS,
    DPP_ABS0,
    DPP_BANK_MASK,
    DPP_BOUND_CTRL,
    DPP_CTRL,
    DPP_FI,
    DPP_NEG0,
    DPP_ROW_MASK,
    MFMA_LD_SCALE,
    SDWA_ABS0,
    SDWA_CLAMP,
    SDWA_DST_SEL,
    SDWA_DST_UNUSED,
    SDWA_NEG0,
    SDWA_OMOD,
    SDWA_SEL,
    SDWA_SEXT0,
    SDWA_SGPR0,
    SDWA_SRC0_SEL,
    SDWA_UNUSED,
    SDWA_VOPC_SDST,
    SRC_DPP8_FI,
    SRC_MASK,
    VGPR_BASE,
    is_gfx9_vop3p,
    is_inline_constant,
    sdwa_bits,
    vop3_sources,
    vsrc1,
)
from attdec.isa.render.operands import (
    OPSEL_DST,
    TRUE16_HIGH,
    TYPE,
    VOP3_ABS,
    VOP3_CLAMP,
    VOP3_NEG,
    VOP3_OMOD,
    VOP3_OPSEL,
    Inst,
    bits_list,
    note_text,
    operand_text,
    reg_range,
    scalar_name,
    src_text,
)
from attdec.isa.render.scalar import with_constant_k

MFMA_PREFIXES = ("v_mfma", "v_smfmac")
OMOD = (" mul:2", " mul:4", " div:2")
# VOP3P fields: op_sel (3 bits), op_sel_hi (bits 59, 60 and 14 for src2), neg_lo, neg_hi
VOP3P_OPSEL, VOP3P_OPSEL_HI, VOP3P_OPSEL_HI2, VOP3P_NEG_LO, VOP3P_NEG_HI = (11, 3), (59, 2), (14, 1), (61, 3), (8, 3)
OPSEL_HI_BITS = (14, 59, 60)  # kept even when the probe marks them ignored: they decide op_sel_hi's default
CBSZ, ABID, BLGP = (8, 3), (11, 4), (61, 3)  # MFMA: src0 format / broadcast, src1 format
MFMA_MODIFIERS = (("cbsz", CBSZ), ("abid", ABID), ("blgp", BLGP))
F8F6F4_REGS = {2: 6, 3: 6, 4: 4}  # source VGPRs of fp6/bf6 and fp4 formats (fp8/bf8: the signature's 8)


# ---- VOP1 / VOP2 / VOPC / VOP3 / VOP3P / VINTERP ------------------------------------------------
def vop(x: Inst) -> str:
    """VOP1 / VOP2 / VOPC without DPP or SDWA."""
    return with_constant_k(x, operand_text(x))


def _is_mfma(mnem: str) -> bool:
    return mnem.startswith(MFMA_PREFIXES) and mnem != MFMA_LD_SCALE  # ld_scale is plain VOP3P


def vop3(x: Inst) -> str:
    """VOP3; on gfx9 this encoding also holds VOP3P (packed math and MFMA, op >= 0x380)."""
    gfx9 = x.fam == "gfx9"
    x.mfma = gfx9 and _is_mfma(x.mnem)
    packed = gfx9 and is_gfx9_vop3p(x.ws[0])
    plain = not (x.mfma or packed)
    if plain and not x.has_sdst:
        x.abs_bits = x(*VOP3_ABS)
    if plain:
        x.neg_bits = x(*VOP3_NEG)
    if not (x.mfma or x.has_sdst):
        x.opsel = x(*VOP3_OPSEL)
    if x.mfma:
        return _mfma_operands(x) + _mfma_mods(x, MFMA_MODIFIERS)
    return operand_text(x) + (vop3p_mods(x) if packed else vop3_mods(x))


def _mfma_operands(x: Inst) -> str:
    """f8f6f4 MFMAs read fewer source VGPRs for 6- and 4-bit formats (cbsz: src0's, blgp: src1's)."""
    if x.mnem.endswith("_f8f6f4"):
        formats = {"src0": x(*CBSZ), "src1": x(*BLGP)}
        x.parts = [
            (p[0], p[1], F8F6F4_REGS.get(formats[p[0]], p[2]), p[3], p[4])
            if not isinstance(p, str) and p[0] in formats
            else p
            for p in x.parts
        ]
    return operand_text(x)


def _mfma_mods(x: Inst, modifiers) -> str:
    out = ""
    for name, field in modifiers:
        v = x(*field)
        out += f" {name}:{v}" if v else ""
    return out


def mfma_scale(ws: tuple, tab) -> str:
    """gfx950 v_mfma_scale_*: the f8f6f4 MFMA in ws[2:4] (whose abid of 1 marks the pair) with the two scale
    sources, op_sel and op_sel_hi of the v_mfma_ld_scale_b32 in ws[0:2]. LLVM ignores the ld half's other bits."""
    lsb, mask, ops = tab.enc["VOP3"]
    op = (ws[2] >> lsb) & mask
    mfma = Inst(ops[op][0], "VOP3", "", ws[2:], tab, tab.sig("VOP3", op))
    mfma.mfma = True
    out = _mfma_operands(mfma)
    ld = ws[0] | ws[1] << 32
    for v in vop3_sources(ws[1])[:2]:  # VGPRs only: anything else gets LLVM's note
        out += ", " + src_text(v, 1, tab.family, None) + ("" if v >= VGPR_BASE else note_text("VGPR_32"))
    sel, hi = (ld >> VOP3_OPSEL[0]) & 3, (ld >> VOP3P_OPSEL_HI[0]) & 3
    out += (" op_sel:" + bits_list(sel, 3) if sel else "") + " op_sel_hi:" + bits_list(hi, 3)
    return out + _mfma_mods(mfma, (("cbsz", CBSZ), ("blgp", BLGP)))


def vop3p(x: Inst) -> str:
    x.opsel = x(*VOP3_OPSEL)
    return operand_text(x) + vop3p_mods(x)


def vinterp(x: Inst) -> str:
    x.neg_bits, x.opsel = x(*VOP3_NEG), x(*VOP3_OPSEL)
    ops = operand_text(x) + " clamp" * x(*VOP3_CLAMP)
    if x.opsel and not x.t16:
        ops += " op_sel:" + bits_list(x.opsel, 4)
    return ops + f" wait_exp:{x(8, 3)}"


def vop3_mods(x: Inst) -> str:
    """op_sel (true16 forms print it only when a constant/SGPR source selects a half), clamp, omod."""
    out = ""
    opsel, nsrc = x.opsel, x.nsrc
    dst_sel = ((opsel >> OPSEL_DST) & 1) << nsrc
    if x.t16 and x.sgpr_opsel:
        vdst_v = any(p[0] == "vdst" and p[1] == "v" for p in x.placeholders())
        bits = (opsel & ((1 << nsrc) - 1)) | (dst_sel if vdst_v else 0)
        out += " op_sel:" + bits_list(bits, nsrc + vdst_v)
    elif x.fam != "gfx9" and opsel and not x.t16:
        out += " op_sel:" + bits_list(opsel & ((1 << nsrc) - 1) | dst_sel, nsrc + 1)
    elif x.fam == "gfx9" and opsel:
        out += " op_sel:" + bits_list(opsel, 4)
    return out + clamp_omod(x)


def clamp_omod(x: Inst) -> str:
    omod = x(*VOP3_OMOD)
    return " clamp" * x(*VOP3_CLAMP) + (OMOD[omod - 1] if omod else "")


def vop3p_mods(x: Inst) -> str:
    """op_sel, op_sel_hi (printed when not the default: all ones, or all zeros for *_mix), neg_lo/hi, clamp."""
    n = x.nsrc
    used = (1 << n) - 1
    out = ""
    sel = x(*VOP3P_OPSEL) & used
    hi = (x(*VOP3P_OPSEL_HI) | x(*VOP3P_OPSEL_HI2) << 2) & used
    if sel:
        out += " op_sel:" + bits_list(sel, n)
    mix = "_mix" in x.mnem
    hi_ignored = set(OPSEL_HI_BITS) <= x.ignored or (n < 3 and set(OPSEL_HI_BITS[1:]) <= x.ignored)
    if not hi_ignored and ((mix and hi) or (not mix and hi != used)):
        out += " op_sel_hi:" + bits_list(hi, n)
    nlo, nhi = x(*VOP3P_NEG_LO) & used, x(*VOP3P_NEG_HI) & used
    if nlo:
        out += " neg_lo:" + bits_list(nlo, n)
    if nhi:
        out += " neg_hi:" + bits_list(nhi, n)
    return out + " clamp" * x(*VOP3_CLAMP)


# ---- DPP16 / DPP8 / SDWA ------------------------------------------------------------------------
ROW_SHIFTS = ((0x100, "row_shl"), (0x110, "row_shr"), (0x120, "row_ror"))  # + 1..15
ROW_MIRROR, ROW_HALF_MIRROR = 0x140, 0x141
ROW_NEWBCAST = ROW_SHARE = 0x150  # + 0..15: gfx9 row_newbcast, gfx10+ row_share
ROW_XMASK = 0x160  # + 0..15, gfx10+
GFX9_ONLY_CTRL = {  # removed in gfx10
    0x130: "wave_shl:1",
    0x134: "wave_rol:1",
    0x138: "wave_shr:1",
    0x13C: "wave_ror:1",
    0x142: "row_bcast:15",
    0x143: "row_bcast:31",
}


def dpp_ctrl_text(c: int, fam: str) -> str | None:
    if c <= 0xFF:
        return "quad_perm:[" + ",".join(str((c >> (2 * i)) & 3) for i in range(4)) + "]"
    for base, name in ROW_SHIFTS:
        if base < c <= base + 0xF:
            return f"{name}:{c - base}"
    if c == ROW_MIRROR:
        return "row_mirror"
    if c == ROW_HALF_MIRROR:
        return "row_half_mirror"
    if fam == "gfx9":
        if c in GFX9_ONLY_CTRL:
            return GFX9_ONLY_CTRL[c]
        return f"row_newbcast:{c - ROW_NEWBCAST}" if ROW_NEWBCAST <= c <= ROW_NEWBCAST + 0xF else None
    if ROW_SHARE <= c <= ROW_SHARE + 0xF:
        return f"row_share:{c - ROW_SHARE}"
    if ROW_XMASK <= c <= ROW_XMASK + 0xF:
        return f"row_xmask:{c - ROW_XMASK}"
    return None


def ext_form(x: Inst) -> tuple[str, str]:
    """VOP1/VOP2/VOPC (and gfx11+ VOP3/VOP3P) with a DPP16, DPP8 or SDWA dword -> (mnemonic, operands)."""
    d = x.ws[-1]
    ops = "".join(p if isinstance(p, str) else _ext_operand(x, d, p) for p in x.parts)
    if x.ext == "sdwa":
        if x.enc == "VOPC" and sdwa_bits(d, SDWA_VOPC_SDST):
            ops = ops.replace("vcc", scalar_name((d >> 8) & 0x7F, 2, x.fam) or "", 1)
        return _ext_mnemonic(x), ops + _sdwa_mods(x, d)
    mods = clamp_omod(x) if x.enc in ("VOP3", "VOP3P") else ""
    if x.ext == "dpp8":
        return _ext_mnemonic(x), ops + mods + _dpp8_mods(x, d)
    return _ext_mnemonic(x), ops + mods + _dpp16_mods(x, d)


def _ext_mnemonic(x: Inst) -> str:
    base = x.mnem[:-4] if x.mnem.endswith("_e32") else x.mnem
    if x.enc in ("VOP3", "VOP3P") and not base.endswith("_e64"):
        base += "_e64"
    if x.enc == "VOPC" and x.fam != "gfx9" and x.ext != "sdwa":
        return base  # LLVM prints gfx11+ VOPC DPP without the _dpp suffix
    return base + ("_sdwa" if x.ext == "sdwa" else "_dpp")


def _ext_operand(x: Inst, d: int, p) -> str:
    name, kind, width, half, _comment = p
    vop3 = x.enc in ("VOP3", "VOP3P")
    sdwa = x.ext == "sdwa"
    v = x.field(name)
    const = False  # an inline constant (SDWA scalar sources)
    if name == "src0":  # the register is in the extension dword
        v = d & 0xFF
        if sdwa and sdwa_bits(d, SDWA_SGPR0):
            t, const = src_text(v, width, x.fam, None), is_inline_constant(v)
        else:
            t = reg_range("v", v, width)
    elif name in ("src1", "src2") and vop3:
        t = src_text(v, width, x.fam, None)
    elif name == "vsrc1" and sdwa and sdwa_bits(d, SDWA_SGPR0, 1):
        t, const = src_text(v, width, x.fam, None), is_inline_constant(v)
    elif kind == "s":
        t = scalar_name(v, width, x.fam) or str(v)
    else:
        t = reg_range(kind, v, width)
    if t.startswith("v[") and (int(t[2 : t.index(":")]) & 1) and x.target.gfx90a_insts:
        t += note_text(f"VReg_{32 * width}_Align2")
    if half:
        if vop3:
            idx = OPSEL_DST if name == "vdst" else int(name[-1]) if name[-1].isdigit() else 0
            half = ".h" if (x(*VOP3_OPSEL) >> idx) & 1 else ".l"
        elif kind == "v" and name != "src0" and v >= TRUE16_HIGH:
            t, half = reg_range("v", v - TRUE16_HIGH, width), ".h"
        else:
            half = ".l"
        if t.startswith("v"):
            t += half
    if x.enc == "VOP3" and name in ("src0", "src1", "src2"):
        i = int(name[-1])
        if x(VOP3_ABS[0] + i, 1):
            t = f"|{t}|"
        if x(VOP3_NEG[0] + i, 1):
            t = f"neg({t})" if re.match(r"-?\d+$|0x", t) else "-" + t
    if name in ("src0", "vsrc1", "src1") and not vop3:
        t = _ext_source_mods(x, d, t, 0 if name == "src0" else 1, const)
    return t


def _ext_source_mods(x: Inst, d: int, t: str, i: int, const: bool) -> str:
    """sext / neg / abs of a VOP1/VOP2/VOPC source, from the SDWA or DPP16 dword."""
    if x.ext == "sdwa":
        if sdwa_bits(d, SDWA_SEXT0, i):
            t = f"sext({t})"
        neg, ab = sdwa_bits(d, SDWA_NEG0, i), sdwa_bits(d, SDWA_ABS0, i)
    elif x.ext == "dpp":
        neg, ab = (d >> (DPP_NEG0 + 2 * i)) & 1, (d >> (DPP_ABS0 + 2 * i)) & 1
        base = x.mnem[:-4] if x.mnem.endswith("_e32") else x.mnem
        types = [ty for ty in base.split("_")[1:] if TYPE.match(ty)]
        if types and not types[-1].startswith("f"):  # integer ops accept but do not show them
            neg = ab = 0
    else:
        neg = ab = 0
    if ab:
        t = f"|{t}|"
    if neg:
        return f"neg({t})" if const and not ab else "-" + t
    return t


def _sel(v: int, names: tuple) -> str:
    return names[v] if v < len(names) else str(v)


def _sdwa_mods(x: Inst, d: int) -> str:
    out = ""
    if x.enc != "VOPC":
        omod = sdwa_bits(d, SDWA_OMOD, width=2)
        out += " clamp" * sdwa_bits(d, SDWA_CLAMP) + (OMOD[omod - 1] if omod else "")
        dst_sel, dst_unused = sdwa_bits(d, SDWA_DST_SEL, width=3), sdwa_bits(d, SDWA_DST_UNUSED, width=2)
        out += f" dst_sel:{_sel(dst_sel, SDWA_SEL)} dst_unused:{_sel(dst_unused, SDWA_UNUSED)}"
    out += f" src0_sel:{_sel(sdwa_bits(d, SDWA_SRC0_SEL, width=3), SDWA_SEL)}"
    if x.enc != "VOP1":
        out += f" src1_sel:{_sel(sdwa_bits(d, SDWA_SRC0_SEL, 1, width=3), SDWA_SEL)}"
    return out


def _dpp8_mods(x: Inst, d: int) -> str:
    sel = ",".join(str((d >> (DPP8_SELECTS + 3 * i)) & 7) for i in range(8))
    src0 = x.ws[1 if x.enc in ("VOP3", "VOP3P") else 0] & SRC_MASK
    return f" dpp8:[{sel}]" + (" fi:1" if src0 == SRC_DPP8_FI else "")


def _dpp16_mods(x: Inst, d: int) -> str:
    c = (d >> DPP_CTRL) & 0x1FF
    ctrl = dpp_ctrl_text(c, x.fam)
    if x.target.gfx90a_insts and "_f64" in x.mnem and not (ctrl or "").startswith("row_newbcast"):
        ctrl = "/* DP ALU dpp only supports row_newbcast */"
    if ctrl is None and x.fam != "gfx9" and c in GFX9_ONLY_CTRL:
        ctrl = f"/* {GFX9_ONLY_CTRL[c].split(':')[0]} is not supported starting from GFX10 */"
    if ctrl is None:
        return f" /* invalid dpp_ctrl 0x{c:x} */"
    out = f" {ctrl} row_mask:0x{d >> DPP_ROW_MASK:x} bank_mask:0x{(d >> DPP_BANK_MASK) & 0xF:x}"
    out += " bound_ctrl:1" * ((d >> DPP_BOUND_CTRL) & 1)
    if x.fam != "gfx9":
        out += " fi:1" * ((d >> DPP_FI) & 1)
    return out


# ---- VOPD ---------------------------------------------------------------------------------------
def vopd_text(xm: str, ym: str, ws, fam: str) -> str:
    """`v_dual_X ... :: v_dual_Y ...` (the X mnemonic is returned as the instruction's mnemonic)."""
    w0, w1 = ws[0], ws[1]
    literal = ws[2] if len(ws) > 2 else None
    vdx = w1 >> 24
    vdy = (((w1 >> 17) & 0x7F) << 1) | ((vdx & 1) ^ 1)

    def half(m, vd, s0, vs1):
        a = src_text(s0, 1, fam, literal)
        b = f"v{vs1}"
        if m == "v_dual_mov_b32":
            return f"{m} v{vd}, {a}"
        if m == "v_dual_fmaak_f32":
            return f"{m} v{vd}, {a}, {b}, 0x{literal:x}"
        if m == "v_dual_fmamk_f32":
            return f"{m} v{vd}, {a}, 0x{literal:x}, {b}"
        return f"{m} v{vd}, {a}, {b}"

    x = half(xm, vdx, w0 & SRC_MASK, vsrc1(w0))
    y = half(ym, vdy, w1 & SRC_MASK, vsrc1(w1))
    return x.split(" ", 1)[1] + " :: " + y
