"""Numbers the AMDGPU encodings give a meaning to, named once for the decoder and the renderer.

Source-operand values follow shared/docs/isa-decoding.md §1 (9-bit VALU sources and 8-bit scalar
sources share one numbering); the DPP and SDWA dword layouts follow LLVM's SIDefines.h.
"""

from __future__ import annotations

# ---- source operand values ----------------------------------------------------------------------
SGPR_LAST = 127  # 0..127: SGPRs and the special scalar registers (vcc, ttmp, m0, null, exec)
INLINE_ZERO = 128  # 128..192: integers 0..64
INLINE_POS_LAST = 192
INLINE_NEG_LAST = 208  # 193..208: integers -1..-16
SRC_DPP8 = 233  # src0 marker: a DPP8 dword follows (gfx10+)
SRC_DPP8_FI = 234  # ... with fetch-inactive set
SRC_SDWA = 249  # src0 marker: an SDWA dword follows (gfx9)
SRC_DPP = 250  # src0 marker: a DPP16 dword follows
SRC_LITERAL = 255  # a 32-bit literal dword follows
VGPR_BASE = 256  # 256..511: v0..v255 (VALU sources only)
SRC_MASK = 0x1FF  # a 9-bit source field

INLINE_FLOATS = {
    240: "0.5",
    241: "-0.5",
    242: "1.0",
    243: "-1.0",
    244: "2.0",
    245: "-2.0",
    246: "4.0",
    247: "-4.0",
    248: "0.15915494",
}
# The same constants as f16 bit patterns: what LLVM prints for 16-bit integer operands.
INLINE_FLOATS_F16 = {
    240: 0x3800,
    241: 0xB800,
    242: 0x3C00,
    243: 0xBC00,
    244: 0x4000,
    245: 0xC000,
    246: 0x4400,
    247: 0xC400,
    248: 0x3118,
}
SPECIAL_SOURCES = {
    230: "src_flat_scratch_base_lo",  # named by LLVM 22 on every target
    231: "src_flat_scratch_base_hi",
    235: "src_shared_base",
    236: "src_shared_limit",
    237: "src_private_base",
    238: "src_private_limit",
    239: "src_pops_exiting_wave_id",
    251: "src_vccz",
    252: "src_execz",
    253: "src_scc",
    254: "src_lds_direct",
}

# Scalar operand values 0..127 per family: plain SGPRs, register pairs with names (`vcc` = vcc_lo/vcc_hi),
# trap temporaries, m0 and null (which swapped places after gfx9).
SGPR_COUNT = {"gfx9": 102, "gfx11": 106, "gfx12": 106}
NAMED_PAIRS = {
    "gfx9": {102: "flat_scratch", 104: "xnack_mask", 106: "vcc", 126: "exec"},
    "gfx11": {106: "vcc", 126: "exec"},
    "gfx12": {106: "vcc", 126: "exec"},
}
TTMP0, TTMP15 = 108, 123
M0 = {"gfx9": 124, "gfx11": 125, "gfx12": 125}
NULL = {"gfx9": 125, "gfx11": 124, "gfx12": 124}
# A FLAT / GLOBAL / SCRATCH saddr with this value means "no scalar address" (printed `off`).
SADDR_OFF = {"gfx9": 127, "gfx11": NULL["gfx11"], "gfx12": NULL["gfx12"]}


def is_inline_constant(v: int) -> bool:
    return INLINE_ZERO <= v <= INLINE_NEG_LAST or v in INLINE_FLOATS


def is_scalar_source(v: int) -> bool:
    """A scalar register, inline constant or special source: a source value that needs no extra dword."""
    return v <= SGPR_LAST or is_inline_constant(v) or v in SPECIAL_SOURCES


# ---- encoding groups ----------------------------------------------------------------------------
VOP_32 = frozenset(("VOP1", "VOP2", "VOPC"))  # one-dword VALU encodings: DPP / SDWA / DPP8 / literal
SOP_SOURCES = frozenset(("SOP1", "SOP2", "SOPC"))  # SALU encodings whose sources may be a literal
FLAT_SEGMENT_ENCODINGS = frozenset(("FLAT", "GLOBAL", "SCRATCH"))  # gfx9/gfx11 FLAT
VFLAT_SEGMENT_ENCODINGS = frozenset(("VFLAT", "VGLOBAL", "VSCRATCH"))  # gfx12 FLAT

# gfx9 VOP3P shares VOP3's major opcode: VOP3 words with op >= 0x380, i.e. these top nine bits.
GFX9_VOP3P_TOP9 = 0x1A7


# gfx950 v_mfma_scale_*: v_mfma_ld_scale_b32 followed by an f8f6f4 MFMA whose abid (bits 11..14) is 1.
MFMA_LD_SCALE = "v_mfma_ld_scale_b32"
MFMA_ABID_LSB, MFMA_ABID_SCALED = 11, 1


def is_gfx9_vop3p(w0: int) -> bool:
    return w0 >> 23 == GFX9_VOP3P_TOP9


def vop3_sources(w1: int) -> tuple[int, int, int]:
    """src0, src1, src2 of a VOP3 / VOP3P word's second dword."""
    return w1 & SRC_MASK, (w1 >> 9) & SRC_MASK, (w1 >> 18) & SRC_MASK


def sop_sources(w0: int) -> tuple[int, int]:
    """ssrc0, ssrc1 of a SOP1 / SOP2 / SOPC word (SOP1 has no ssrc1)."""
    return w0 & 0xFF, (w0 >> 8) & 0xFF


def vsrc1(w: int) -> int:
    """The 8-bit VGPR source of VOP2 / VOPC (and each VOPD half): bits 9..16."""
    return (w >> 9) & 0xFF


def sext(v: int, bits: int) -> int:
    """`v` as a signed `bits`-bit number."""
    return v - (1 << bits) if (v >> (bits - 1)) & 1 else v


# ---- DPP16 / SDWA dwords (bit positions) --------------------------------------------------------
DPP_CTRL, DPP_FI, DPP_BOUND_CTRL = 8, 18, 19  # dpp_ctrl is 9 bits
DPP_NEG0, DPP_ABS0 = 20, 21  # src1's are 2 bits higher
DPP_BANK_MASK, DPP_ROW_MASK = 24, 28
DPP8_SELECTS = 8  # eight 3-bit lane selects
SDWA_DST_SEL, SDWA_DST_UNUSED, SDWA_CLAMP, SDWA_OMOD = 8, 11, 13, 14
SDWA_VOPC_SDST = 15  # VOPC: bits 8..14 name an SGPR pair written instead of vcc
SDWA_SRC0_SEL, SDWA_SEXT0, SDWA_NEG0, SDWA_ABS0 = 16, 19, 20, 21  # src1's are 8 bits higher
SDWA_SGPR0 = 23  # src0 (bits 0..7 of the SDWA dword) is a scalar source; bit 31: so is vsrc1
SDWA_SEL = ("BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD")  # 3-bit selects
SDWA_UNUSED = ("UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE")  # 2-bit dst_unused


def sdwa_bits(d: int, field: int, src: int = 0, width: int = 1) -> int:
    """An SDWA dword field; `src` 1 shifts a src0 field to its src1 twin."""
    return (d >> (field + 8 * src)) & ((1 << width) - 1)
