"""Operand values to text, and the walk over an opcode's operand signature that every encoding shares.

An `Inst` carries one instruction through its renderer: field access over its dwords, the signature
from the probed tables, and what the operand walk learns on the way (source count, true16 halves)
that the encoding's modifier printer needs.
"""

from __future__ import annotations

import re
from functools import cache

from attdec.isa.encoding import (
    INLINE_FLOATS,
    INLINE_FLOATS_F16,
    INLINE_NEG_LAST,
    INLINE_POS_LAST,
    INLINE_ZERO,
    M0,
    NAMED_PAIRS,
    NULL,
    SADDR_OFF,
    SGPR_COUNT,
    SGPR_LAST,
    SPECIAL_SOURCES,
    SRC_LITERAL,
    TTMP0,
    TTMP15,
    VGPR_BASE,
    VOP_32,
)
from attdec.model.record import Frozen

PLACEHOLDER = re.compile(r"\{(\w+):([vsa]):(\d+):(\.[lh])?(/\*[^*]*\*/)?\}")
# Modifier text in a signature: dropped, each encoding's printer rebuilds it from the bits.
MODIFIER = re.compile(
    r" (op_sel_hi|op_sel|neg_lo|neg_hi|wait_exp|wait_vdst|wait_va_vdst|wait_vm_vsrc|format|offset|"
    r"dmask|dim|cbsz|abid|blgp)(:\S*)?"
)
TYPE = re.compile(r"^[fiub](8|16|32|64)$")
SOURCES = frozenset(("src0", "src1", "src2", "ssrc0", "ssrc1"))
# VOP3 fields (bit positions in the 64-bit word); VOP3P reuses them for op_sel_hi / neg_lo / neg_hi.
VOP3_ABS, VOP3_OPSEL, VOP3_CLAMP, VOP3_OMOD, VOP3_NEG = (8, 3), (11, 4), (15, 1), (59, 2), (61, 3)
OPSEL_DST = 3  # the op_sel bit of the destination
TRUE16_HIGH = 128  # true16 VOP1/VOP2/VOPC register fields: v128 + n is the high half of vn
MFMA_ACC_CD = (15, 1)  # gfx9 MFMA: vdst and src2 are AGPRs
MFMA_ACC_SRC0 = 59  # gfx9 MFMA: src0 (59) and src1 (60) are AGPRs
# gfx9 memory data registers an `acc` bit turns into AGPRs
ACC_DATA = frozenset(("vdst", "data", "data0", "data1", "vdata"))


class Signature(Frozen):
    """What tools/oracles/probe_isa.py learned from LLVM about one opcode (tables/<target>.sig.json.gz)."""

    fixed: tuple  # (lsb, mask, value): fields LLVM rejects the word for when they differ
    parts: list  # the operand signature: literal text and placeholders (see parse_signature)
    ignored_fields: tuple  # (lsb, mask): modifier fields LLVM accepts but does not print
    ignored: frozenset  # their lsbs
    ignored_mask: int  # all their bits
    has_sdst: bool  # a VOP3 with a scalar destination (no abs / op_sel)
    notes: dict  # operand -> {"odd" | "sgpr" | "const": LLVM's comment}
    extensions: dict  # "dpp" / "sdwa" / ... -> what LLVM does with that form ("ok", "plain")


def parse_signature(sig: str) -> list:
    """Split a signature into literal text and placeholders (name, kind, width, half, comment)."""
    sig = MODIFIER.sub("", sig)
    parts: list = []
    pos = 0
    for m in PLACEHOLDER.finditer(sig):
        if m.start() > pos:
            parts.append(sig[pos : m.start()])
        parts.append((m.group(1), m.group(2), int(m.group(3)), m.group(4) or "", m.group(5) or ""))
        pos = m.end()
    if pos < len(sig):
        parts.append(sig[pos:])
    return parts


def note_text(note: str) -> str:
    """Expand a table note (tools/oracles/probe_isa.py compact_note) back into LLVM's comment."""
    if not note or note.startswith("/*"):
        return note or ""
    if note == "imm":
        return "/*Invalid immediate*/"
    return f"/*Invalid register, operand has '{note}' register class*/"


def reg_range(prefix: str, n: int, width: int) -> str:
    return f"{prefix}{n}" if width == 1 else f"{prefix}[{n}:{n + width - 1}]"


@cache
def scalar_name(v: int, width: int, fam: str) -> str | None:
    """Names of scalar operand values 0..127 (SGPRs and special registers); None above."""
    if width >= 2 and v <= TTMP15:  # LLVM decodes a tuple from the aligned register number
        v &= ~1 if width == 2 else ~3
    if v < SGPR_COUNT[fam]:
        return reg_range("s", v, width)
    pairs = NAMED_PAIRS[fam]
    base = v if v in pairs else v - 1
    if base in pairs:
        if width >= 2 and v == base:
            return pairs[base]
        return pairs[base] + ("_lo" if v == base else "_hi")
    if TTMP0 <= v <= TTMP15:
        return reg_range("ttmp", v - TTMP0, width)
    if v == M0[fam]:
        return "m0"
    if v == NULL[fam]:
        return "null"
    return None


def src_text(v: int, width: int, fam: str, literal: int | None, kind: str = "v") -> str:
    """A 9-bit source operand (or an 8-bit scalar one)."""
    if v >= VGPR_BASE:
        return reg_range("a" if kind == "a" else "v", v - VGPR_BASE, width)
    if v <= SGPR_LAST:
        return scalar_name(v, width, fam) or str(v)
    if v <= INLINE_POS_LAST:
        return str(v - INLINE_ZERO)
    if v <= INLINE_NEG_LAST:
        return str(INLINE_POS_LAST - v)
    if v in INLINE_FLOATS:
        return INLINE_FLOATS[v]
    if v == SRC_LITERAL:
        return f"0x{literal:x}" if literal is not None else "0x0"
    return SPECIAL_SOURCES.get(v, str(v))


def _types(mnem: str) -> list[str]:
    base = re.sub(r"_(e32|e64|dpp|sdwa)$", "", mnem)
    return [t for t in base.split("_")[1:] if TYPE.match(t)]


@cache
def literal_bits(mnem: str) -> int:
    """Width of a literal constant as LLVM prints it: 16 when the source type is 16-bit."""
    types = _types(mnem)
    if not types or mnem.startswith(("v_pk_", "v_cvt_pk", "v_dot", "v_wmma", "v_swmmac", "v_mfma")) or "_pk_" in mnem:
        return 32
    if mnem.startswith("s_"):
        return 16 if types[-1] == "f16" and "_hi_" not in mnem else 32
    return 16 if types[-1].endswith("16") and not types[-1].endswith("_16") else 32


@cache
def int16_operands(mnem: str) -> bool:
    """16-bit integer operands: float inline constants print as their f16 bit pattern."""
    types = _types(mnem)
    if mnem.startswith("s_"):
        return bool(types) and types[-1] == "f16"
    return bool(types) and types[-1] in ("i16", "u16", "b16") and not mnem.startswith(("v_pk_", "v_dot"))


def bits_list(bits: int, n: int) -> str:
    """`[1,0,1]`: n flags, lowest first (op_sel, neg_lo, ...)."""
    return "[" + ",".join(str((bits >> i) & 1) for i in range(n)) + "]"


class Inst:
    """One instruction on its way to text: fields of its dwords plus its operand signature."""

    # What encoding renderers and the operand walk set on the way (class defaults: most stay unset).
    mfma = False  # a gfx9 MFMA: AGPR bits select register files
    acc = 0  # a gfx9 memory instruction's data registers are AGPRs
    abs_bits = neg_bits = opsel = 0  # VOP3 source modifiers
    nsrc = 0  # sources seen
    t16 = sgpr_opsel = False  # a true16 form; op_sel on a constant or SGPR source

    def __init__(self, mnem: str, enc: str, ext: str, ws: tuple, tab, sig: Signature, keep: tuple = ()):
        self.parts, self.has_sdst, self.notes = sig.parts, sig.has_sdst, sig.notes
        self.mnem, self.enc, self.ext, self.ws = mnem, enc, ext, ws
        self.fam, self.target = tab.family, tab.target
        self.fields = tab.fields.get(enc, {})
        b = ws[0]
        for i in range(1, len(ws)):
            b |= ws[i] << (32 * i)
        if keep:  # fields LLVM does not print for this opcode are cleared, but those starting at `keep`
            b &= ~sum(mask for lsb, mask in sig.ignored_fields if lsb not in keep)
        else:
            b &= ~sig.ignored_mask
        self.bits = b
        self.ignored = sig.ignored
        self.literal = None
        if ext == "literal":
            self.literal = ws[-1] & 0xFFFF if enc.startswith(("VOP", "SOP")) and literal_bits(mnem) == 16 else ws[-1]

    def __call__(self, lsb: int, width: int) -> int:
        return (self.bits >> lsb) & ((1 << width) - 1)

    def field(self, name: str) -> int:
        lsb, width = self.fields[name]
        return (self.bits >> lsb) & ((1 << width) - 1)

    def placeholders(self):
        return (p for p in self.parts if not isinstance(p, str))

    def width_of(self, name: str, default: int = 1) -> int:
        return next((p[2] for p in self.placeholders() if p[0] == name), default)


def operand_text(x: Inst) -> str:
    """The signature with every placeholder replaced by its field's value as LLVM prints it."""
    out = []
    fields, bits = x.fields, x.bits
    for p in x.parts:
        if isinstance(p, str):
            out.append(p)
            continue
        name, kind, width, half, comment = p
        lsb, nb = fields[name]
        v = (bits >> lsb) & ((1 << nb) - 1)
        if name in SOURCES:
            out.append(_source(x, name, kind, width, half, comment, v))
        elif name == "sbase":
            out.append((scalar_name(2 * v, width, x.fam) or str(v)) + half + comment)
        elif name == "srsrc":
            out.append((scalar_name(4 * v, width, x.fam) or str(v)) + half + comment)
        elif kind == "s":
            t = "off" if name == "saddr" and v == SADDR_OFF[x.fam] else src_text(v, width, x.fam, x.literal)
            out.append(t + half + comment)
        else:
            out.append(_vector(x, name, kind, width, half, comment, v))
    return "".join(out)


def _source(x: Inst, name, kind, width, half, comment, v) -> str:
    """A VALU / SALU source: register, inline constant or literal, with true16 half, abs/neg, LLVM's notes."""
    k = kind
    if x.mfma and name in ("src0", "src1"):
        k = "a" if x(MFMA_ACC_SRC0 + (name == "src1"), 1) else "v"
    elif x.mfma and name == "src2":
        k = "a" if x(*MFMA_ACC_CD) else "v"
    t = src_text(v, width, x.fam, x.literal, k)
    if v in INLINE_FLOATS_F16 and int16_operands(x.mnem):
        t = f"0x{INLINE_FLOATS_F16[v]:x}"
    if half:
        x.t16 = True
    is_vgpr = v >= VGPR_BASE
    if is_vgpr and width >= 2 and (v & 1) and x.target.gfx90a_insts and not comment:
        comment = note_text((x.notes.get(name) or {}).get("odd", ""))
    if half and is_vgpr:
        if x.enc in VOP_32:
            n = v - VGPR_BASE
            half = ".h" if n >= TRUE16_HIGH else ".l"
            t = f"v{n % TRUE16_HIGH}"
        else:
            half = ".h" if (x.opsel >> int(name[-1])) & 1 else ".l"
    elif half:
        half = ""
    if not is_vgpr:
        note = x.notes.get(name)
        comment = note_text(note.get("sgpr" if v <= SGPR_LAST else "const", "")) if note else ""
        if x.mnem.startswith("v_readfirstlane_b32") and v > SGPR_LAST and v not in SPECIAL_SOURCES:
            comment = "/*Invalid immediate*/"
    if not name.startswith("src"):
        return t + half + comment
    i = int(name[-1])
    x.nsrc = max(x.nsrc, i + 1)
    t = t + half + comment
    if (x.abs_bits >> i) & 1:
        t = f"|{t}|"
    if (x.neg_bits >> i) & 1:
        t = f"neg({t})" if INLINE_ZERO <= v <= SRC_LITERAL and not (x.abs_bits >> i) & 1 else "-" + t
    if x.t16 and not is_vgpr and (x.opsel >> i) & 1:
        x.sgpr_opsel = True
    return t


def _vector(x: Inst, name, kind, width, half, comment, v) -> str:
    """A VGPR / AGPR operand (destination, address, data)."""
    k = kind
    if x.mfma and name == "vdst":
        k = "a" if x(*MFMA_ACC_CD) else "v"
    elif x.acc and name in ACC_DATA:
        k = "a"
    if half and k == "v":
        if x.enc in VOP_32:
            half = ".h" if v >= TRUE16_HIGH else ".l"
            v %= TRUE16_HIGH
        else:
            half = ".h" if (x.opsel >> OPSEL_DST) & 1 else ".l"
        x.t16 = True
    t = reg_range(k, v, width)
    if width >= 2 and (v & 1) and x.target.gfx90a_insts and not comment:
        comment = note_text((x.notes.get(name) or {}).get("odd", ""))
        if k == "a":
            comment = comment.replace("'VReg_", "'AReg_")
    return t + half + comment
