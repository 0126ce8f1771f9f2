"""Table-driven AMDGPU instruction decoder: length, mnemonic, operand text, branch target.

The opcode tables (attdec/isa/tables, generated from LLVM-derived data by tools/makers/gen_isa_tables.py)
say what each opcode of each encoding is; this module knows how to find the encoding of a word and
how long the instruction is (literal / DPP / SDWA / NSA extensions). Operand text is in render.py.
Never raises on bad words: they become `.long 0x...` of 4 bytes, exactly like llvm-objdump.
"""

from __future__ import annotations

import gzip
import json
import struct
from functools import cache
from pathlib import Path

from attdec.errors import ArchError
from attdec.isa.encoding import (
    DPP_NEG0,
    MFMA_ABID_LSB,
    MFMA_ABID_SCALED,
    MFMA_LD_SCALE,
    SDWA_ABS0,
    SDWA_DST_SEL,
    SDWA_DST_UNUSED,
    SDWA_NEG0,
    SDWA_SEL,
    SDWA_SEXT0,
    SDWA_SGPR0,
    SDWA_SRC0_SEL,
    SDWA_UNUSED,
    SOP_SOURCES,
    SRC_DPP,
    SRC_DPP8,
    SRC_DPP8_FI,
    SRC_LITERAL,
    SRC_MASK,
    SRC_SDWA,
    VGPR_BASE,
    VOP_32,
    is_gfx9_vop3p,
    is_scalar_source,
    sdwa_bits,
    sext,
    sop_sources,
    vop3_sources,
    vsrc1,
)
from attdec.isa.render import parse_signature, render
from attdec.isa.render.operands import Signature
from attdec.model.record import Record
from attdec.model.target import TARGETS, target

TABLES = Path(__file__).resolve().parent / "tables"


class Instruction(Record):
    """One decoded instruction. `text` is what llvm-objdump prints (mnemonic + operands)."""

    __slots__ = ("address", "encoding", "inst_class", "mnemonic", "operands", "size", "target", "text", "words")
    address: int  # ELF virtual address
    size: int  # bytes
    mnemonic: str
    operands: str
    text: str
    target: int | None  # direct branch / call target (vaddr), else None
    inst_class: str  # an attdec.isa.categories.InstClass ("" until classed)
    encoding: str  # SOPP, VOP3, ... ("" for an undecodable word)
    words: tuple  # the instruction's dwords

    def __init__(self, address, size, mnemonic, operands, text, target=None, inst_class="", encoding="", words=()):
        # made once per instruction (~10,000 a capture): slots and one store a line (no tuple packing) keep
        # this as cheap as a dataclass's
        self.address = address
        self.size = size
        self.mnemonic = mnemonic
        self.operands = operands
        self.text = text
        self.target = target
        self.inst_class = inst_class
        self.encoding = encoding
        self.words = words

    @property
    def is_unknown(self) -> bool:
        return not self.encoding

    @property
    def flow(self) -> str | None:
        """How the instruction changes control flow (see `flow_of`), None when it falls through."""
        return flow_of(self.mnemonic)


def flow_of(mnemonic: str) -> str | None:
    """'jump' (s_branch), 'branch' (s_cbranch_*: taken or falls through), 'call' (s_call_b64 direct,
    s_swappc_b64 indirect), 'indirect' (s_setpc_b64), 'return' (s_rfe_b64), 'end' (s_endpgm*),
    'trap' (s_trap), 'pc' (s_getpc_b64 reads the PC), or None."""
    if mnemonic == "s_branch":
        return "jump"
    if mnemonic.startswith("s_cbranch_"):
        return "branch"
    return _FLOW.get(mnemonic) or ("end" if mnemonic.startswith("s_endpgm") else None)


_FLOW = {
    "s_call_b64": "call",
    "s_swappc_b64": "call",
    "s_setpc_b64": "indirect",
    "s_rfe_b64": "return",
    "s_trap": "trap",
    "s_getpc_b64": "pc",
}


class Table:
    """One target's opcode tables: encoding -> (op lsb, op mask, {op: (mnemonic, template size)})."""

    def __init__(self, arch: str):
        self.arch = arch
        self.target = target(arch)
        self.family = self.target.family
        self.enc, sig = _table_file(json.loads((TABLES / "index.json").read_text())[arch])
        self.fields = sig["fields"]
        self._sig_raw = sig["ops"]
        self._sig: dict[tuple[str, int], Signature | None] = {}
        # what `decode_one` made of the words it met before: (mnemonic, encoding, extension, words, VOPD Y
        # mnemonic) -> (mnemonic as printed, operand text, text); two thirds of the instructions of the 33
        # code objects of ../shared/captures repeat one met before, and their operand text is half the time
        self.rendered: dict[tuple, tuple[str, str, str]] = {}
        self.classes: dict[str, str] = {}  # mnemonic -> InstClass

    def sig(self, enc: str, op: int) -> Signature | None:
        """What the probe learned about one opcode (None when it has no entry)."""
        try:
            return self._sig[(enc, op)]
        except KeyError:
            hit = self._sig[(enc, op)] = self._load_sig(enc, op)
            return hit

    def _load_sig(self, enc: str, op: int) -> Signature | None:
        raw = self._sig_raw.get(enc, {}).get(str(op))
        if raw is None:
            return None
        parts = parse_signature(raw[1])
        ignored = raw[2] if len(raw) > 2 else ()
        return Signature(
            fixed=tuple((b, (1 << w) - 1, v) for b, w, v in raw[0]),
            parts=parts,
            ignored_fields=tuple((b, ((1 << w) - 1) << b) for b, w, _v in ignored),
            ignored=frozenset(b for b, _w, _v in ignored),
            ignored_mask=sum(((1 << w) - 1) << b for b, w, _v in ignored),
            has_sdst=any(not isinstance(p, str) and p[0] == "sdst" for p in parts),
            notes=raw[3] if len(raw) > 3 else {},
            extensions=raw[4] if len(raw) > 4 else {},
        )


# Targets whose instruction tables attdec carries.
ARCHES = tuple(sorted({t.isa for t in TARGETS.values() if t.isa}, key=lambda a: (len(a), a)))


def tables_for(arch: str, where: str | None = None) -> str:
    """The target whose instruction tables decode `arch` (a close relative's for gfx940, gfx1152, ...)."""
    t = target(arch, where)
    if t.isa is None:
        raise ArchError(f"no instruction tables for {t.display} (attdec disassembles {', '.join(ARCHES)})", where)
    return t.isa


@cache
def table_for(arch: str) -> Table:
    return Table(tables_for(arch))


@cache
def _table_file(name: str) -> tuple[dict, dict]:
    """A tables file's opcodes (encoding -> (op lsb, op mask, ops)) and signatures, read once (slow enough to matter):
    close relatives share one (gfx1200 and gfx1201)."""
    data = json.loads((TABLES / name).read_text())
    enc = {}
    for encoding, e in data["encodings"].items():
        ops = {int(k): (v[0], v[1]) for k, v in e["ops"].items()}
        enc[encoding] = (e["op_lsb"], (1 << e["op_bits"]) - 1, ops)
    sig_path = TABLES / name.replace(".json", ".sig.json.gz")
    sig = json.loads(gzip.decompress(sig_path.read_bytes())) if sig_path.exists() else {"fields": {}, "ops": {}}
    return enc, sig


# ---------------------------------------------------------------------------------------------
# encoding identification from the first dword (shared/docs/isa-decoding.md section 2)
# ---------------------------------------------------------------------------------------------
# Encodings common to all families: VOP1/VOPC/VOP2 (bit 31 clear, named by the top 7 bits) and
# SOP1/SOPC/SOPP (top 9 bits), SOPK (top 4 bits 0xB), else SOP2 (top 2 bits 0b10).
VOP_TOP7 = {0x3F: "VOP1", 0x3E: "VOPC"}
SOP_TOP9 = {0x17D: "SOP1", 0x17E: "SOPC", 0x17F: "SOPP"}
SOPK_TOP4 = 0xB


def _scalar_or_vop(w: int) -> str | None:
    if w >> 31 == 0:
        return VOP_TOP7.get(w >> 25, "VOP2")
    if w >> 30 == 2:
        return SOP_TOP9.get(w >> 23) or ("SOPK" if w >> 28 == SOPK_TOP4 else "SOP2")
    return None


# Per family, after the common SOP/VOP checks: encodings named by the top byte, the FLAT/SCRATCH/GLOBAL
# major opcode 0x37 with the bit position of its segment field (gfx12 has none), then the 6-bit major opcode.
ENCODING_TOP8 = {
    "gfx9": {},
    "gfx11": {0xCC: "VOP3P", 0xCD: "VINTERP", 0xCE: "LDSDIR"},
    "gfx12": {0xCC: "VOP3P", 0xCD: "VINTERP", 0xCE: "VDSDIR", 0xEC: "VFLAT", 0xED: "VSCRATCH", 0xEE: "VGLOBAL"},
}
FLAT_SEGMENT_SHIFT = {"gfx9": 14, "gfx11": 16, "gfx12": None}
ENCODING_TOP6 = {
    "gfx9": {
        0x30: "SMEM",
        0x31: "EXP",
        0x34: "VOP3",
        0x35: "VINTRP",
        0x36: "DS",
        0x38: "MUBUF",
        0x3A: "MTBUF",
        0x3C: "MIMG",
    },  # VOP3P (0xD38...) shares the VOP3 table at op >= 0x380
    "gfx11": {
        0x32: "VOPD",
        0x35: "VOP3",
        0x36: "DS",
        0x38: "MUBUF",
        0x3A: "MTBUF",
        0x3C: "MIMG",
        0x3D: "SMEM",
        0x3E: "EXP",
    },
    "gfx12": {
        0x31: "VBUFFER",
        0x32: "VOPD",
        0x34: "VIMAGE",
        0x35: "VOP3",
        0x36: "DS",
        0x39: "VSAMPLE",
        0x3D: "SMEM",
        0x3E: "VEXPORT",
    },
}
FLAT_SEGMENTS = ("FLAT", "SCRATCH", "GLOBAL", None)


def _identifier(fam: str):
    """The encoding-of-first-dword function of one family, built from the tables above."""
    top8, top6, flat_shift = ENCODING_TOP8[fam], ENCODING_TOP6[fam], FLAT_SEGMENT_SHIFT[fam]

    def encoding(w: int) -> str | None:
        e = _scalar_or_vop(w)
        if e:
            return e
        e = top8.get(w >> 24)
        if e:
            return e
        t6 = w >> 26
        if t6 == 0x37 and flat_shift is not None:
            return FLAT_SEGMENTS[(w >> flat_shift) & 3]
        return top6.get(t6)

    return encoding


ENCODING_OF = {fam: _identifier(fam) for fam in ENCODING_TOP8}

# Base byte length of each encoding (before literal / DPP / SDWA / NSA).
BASE_SIZE = {
    "SOP1": 4,
    "SOP2": 4,
    "SOPC": 4,
    "SOPK": 4,
    "SOPP": 4,
    "VOP1": 4,
    "VOP2": 4,
    "VOPC": 4,
    "LDSDIR": 4,
    "VDSDIR": 4,
    "VINTRP": 4,
    "VBUFFER": 12,
    "VIMAGE": 12,
    "VSAMPLE": 12,
    "VFLAT": 12,
    "VSCRATCH": 12,
    "VGLOBAL": 12,
}

BRANCHES = frozenset(
    (
        "s_branch",
        "s_cbranch_scc0",
        "s_cbranch_scc1",
        "s_cbranch_vccz",
        "s_cbranch_vccnz",
        "s_cbranch_execz",
        "s_cbranch_execnz",
        "s_cbranch_cdbgsys",
        "s_cbranch_cdbguser",
        "s_cbranch_cdbgsys_or_user",
        "s_cbranch_cdbgsys_and_user",
        "s_call_b64",
    )
)


def _sdwa_ok(enc: str, w0: int, d: int) -> bool:
    """SDWA dword fields LLVM accepts: known selects and dst_unused, no sext together with neg/abs, and
    scalar sources (src0, vsrc1 with their SGPR bit) that are registers or inline constants."""
    sels = [sdwa_bits(d, SDWA_SRC0_SEL, src, 3) for src in (0, 1)]
    if enc != "VOPC":
        sels.append(sdwa_bits(d, SDWA_DST_SEL, width=3))
        if sdwa_bits(d, SDWA_DST_UNUSED, width=2) >= len(SDWA_UNUSED):
            return False
    if any(sel >= len(SDWA_SEL) for sel in sels):
        return False
    for src in (0, 1):
        if sdwa_bits(d, SDWA_SEXT0, src) and (sdwa_bits(d, SDWA_NEG0, src) or sdwa_bits(d, SDWA_ABS0, src)):
            return False
    if sdwa_bits(d, SDWA_SGPR0) and not is_scalar_source(d & 0xFF):
        return False
    return enc == "VOP1" or not sdwa_bits(d, SDWA_SGPR0, 1) or is_scalar_source(vsrc1(w0))


def _unknown(addr: int, w0: int) -> Instruction:
    t = f".long 0x{w0:08x}"
    return Instruction(addr, 4, ".long", f"0x{w0:08x}", t, None, "", "", (w0,))


def _opcode(enc: str, words, i: int, n: int, tab: Table):
    """(mnemonic, template size, opcode, VOPD Y mnemonic) of the instruction at words[i], or None."""
    w0 = words[i]
    if enc != "VOPD":
        entry = tab.enc.get(enc)
        if entry is None:
            return None
        lsb, mask, ops = entry
        op = (w0 >> lsb) & mask
        hit = ops.get(op)
        return None if hit is None else (hit[0], hit[1], op, None)
    lsbx, mx, opsx = tab.enc["VOPD_X"]
    lsby, my, opsy = tab.enc["VOPD_Y"]
    x = opsx.get((w0 >> lsbx) & mx)
    y = opsy.get((w0 >> lsby) & my)
    if x is None or y is None:
        return None
    w1 = words[i + 1] if i + 1 < n else 0
    # a v_dual_mov_b32 half has no vsrc1: LLVM rejects the word unless that field is zero
    if (x[0] == "v_dual_mov_b32" and vsrc1(w0)) or (y[0] == "v_dual_mov_b32" and vsrc1(w1)):
        return None
    return x[0], max(x[1], y[1]), None, y[0]


# src0 markers of an extension dword, per family
EXT_MARKERS = {
    "gfx9": {SRC_DPP: "dpp", SRC_SDWA: "sdwa"},
    "gfx11": {SRC_DPP: "dpp", SRC_DPP8: "dpp8", SRC_DPP8_FI: "dpp8"},
    "gfx12": {SRC_DPP: "dpp", SRC_DPP8: "dpp8", SRC_DPP8_FI: "dpp8"},
}


def _scaled_mfma(tab: Table, w: int, w1: int) -> str | None:
    """The MFMA that (w, w1) is when it is the second half of a gfx950 v_mfma_scale_*, else None. LLVM decodes
    the pair as one 16-byte instruction when this is an f8f6f4 MFMA with abid 1 whose sources all decode."""
    if not is_gfx9_vop3p(w) or (w >> MFMA_ABID_LSB) & 0xF != MFMA_ABID_SCALED:
        return None
    if not all(v >= VGPR_BASE or is_scalar_source(v) for v in vop3_sources(w1)):
        return None
    lsb, mask, ops = tab.enc["VOP3"]
    hit = ops.get((w >> lsb) & mask)
    return hit[0] if hit and hit[0].startswith("v_mfma_") and hit[0].endswith("_f8f6f4") else None


def _extension(enc: str, words, i: int, n: int, tab: Table, mnem: str, tsize: int) -> tuple[int, str]:
    """(byte length, what follows the encoding's base dwords): "" (nothing), "literal", "dpp", "dpp8",
    "sdwa", "nsa" (gfx11 MIMG address dword) or "scale" (gfx950 v_mfma_ld_scale_b32 + MFMA)."""
    w0, fam = words[i], tab.family
    base = BASE_SIZE.get(enc, 8)
    size = max(tsize, base)
    literal = "literal" if tsize > base else ""  # an always-literal opcode (template longer than the encoding)
    more = i + 1 < n
    if mnem == MFMA_LD_SCALE and i + 3 < n and _scaled_mfma(tab, words[i + 2], words[i + 3]):
        return 16, "scale"
    if enc in VOP_32:
        ext = EXT_MARKERS[fam].get(w0 & SRC_MASK)
        if ext:
            return 8, ext
        if w0 & SRC_MASK == SRC_LITERAL and not literal:
            return size + 4, "literal"
    elif enc in SOP_SOURCES:
        ssrc0, ssrc1 = sop_sources(w0)
        if not literal and (ssrc0 == SRC_LITERAL or (enc != "SOP1" and ssrc1 == SRC_LITERAL)):
            return size + 4, "literal"
    elif enc in ("VOP3", "VOP3P") and tab.target.vop3_literal and more:
        sources = vop3_sources(words[i + 1])
        if sources[0] == SRC_DPP:
            return 12, "dpp"
        if sources[0] in (SRC_DPP8, SRC_DPP8_FI):
            return 12, "dpp8"
        if SRC_LITERAL in sources and not literal:
            return size + 4, "literal"
    elif enc == "VOPD" and more:
        if not literal and SRC_LITERAL in (w0 & SRC_MASK, words[i + 1] & SRC_MASK):
            return size + 4, "literal"
    elif enc == "MIMG" and fam == "gfx11" and w0 & 1:
        return size + 4, "nsa"
    return size, literal


def _extension_key(enc: str, ext: str, d: int | None) -> str:
    """The probe's name for this extension form: plain, or with neg/abs (or SDWA sext) bits set."""
    if enc not in VOP_32 or ext == "dpp8" or d is None:
        return ext
    if ext == "dpp" and (d >> DPP_NEG0) & 0xF:  # neg/abs of src0 and src1
        return "dpp_negabs"
    if ext == "sdwa" and any(sdwa_bits(d, SDWA_NEG0, src, 2) for src in (0, 1)):
        return "sdwa_negabs"
    if ext == "sdwa" and any(sdwa_bits(d, SDWA_SEXT0, src) for src in (0, 1)):
        return "sdwa_sext"
    return ext


def decode_one(words, i: int, n: int, addr: int, tab: Table, lenient: bool = False) -> Instruction:
    """Decode the instruction whose first dword is words[i] (n = number of dwords available).
    `lenient` drops the "unused operand fields must be zero" rule (see disassemble)."""
    w0 = words[i]
    enc = ENCODING_OF[tab.family](w0)
    hit = _opcode(enc, words, i, n, tab) if enc is not None else None
    if hit is None:
        return _unknown(addr, w0)
    mnem, tsize, op, sub = hit
    size, ext = _extension(enc, words, i, n, tab, mnem, tsize)
    if ext == "scale":
        mnem = "v_mfma_scale_" + (_scaled_mfma(tab, words[i + 2], words[i + 3]) or "")[len("v_mfma_") :]
    sig = tab.sig(enc, op) if sub is None else None
    if lenient and sig is not None:
        sig = sig.replace(fixed=())
    if ext in ("dpp", "sdwa", "dpp8") and sig is not None:
        d = words[i + 1] if i + 1 < n else None
        how = sig.extensions.get(_extension_key(enc, ext, d))  # what LLVM does with this opcode + extension
        if how is None:
            return _unknown(addr, w0)
        if how == "plain":  # LLVM ignores the marker
            base = BASE_SIZE.get(enc, 8)
            size, ext = max(tsize, base), "literal" if tsize > base else ""
        elif ext == "sdwa" and d is not None and not _sdwa_ok(enc, w0, d):
            return _unknown(addr, w0)
    nw = size // 4
    if i + nw > n:
        return _unknown(addr, w0)
    ws = tuple(words[i : i + nw])
    if sig is not None and sig.fixed and ext != "scale":
        bits = ws[0] | (ws[1] << 32 if nw > 1 else 0) | (ws[2] << 64 if nw > 2 else 0)
        for lsb, mask, value in sig.fixed:  # LLVM rejects words whose unused fields differ from the default
            if (bits >> lsb) & mask != value:
                return _unknown(addr, w0)
    target = addr + 4 + 4 * sext(w0 & 0xFFFF, 16) if mnem in BRANCHES else None
    key = (mnem, enc, ext, ws, sub)  # (the signature follows from the words, and its `fixed` prints nothing)
    hit = tab.rendered.get(key)
    if hit is None:
        if len(tab.rendered) >= RENDERED_MAX:
            tab.rendered.clear()
        printed, operands = render(mnem, enc, ext, ws, tab, sub, sig)
        operands = operands.strip()
        hit = tab.rendered[key] = (printed, operands, f"{printed} {operands}" if operands else printed)
    return Instruction(addr, size, *hit, target, "", enc, ws)


RENDERED_MAX = 1 << 14  # Table.rendered entries (a few hundred bytes each) before it starts again


# Lenient reading (disassemble(lenient=True)): what the official decoder's ISA source made of words that
# LLVM refuses. A known opcode whose unused operand fields are not zero keeps its mnemonic and length;
# an unknown opcode becomes `<class>_unknown` with its encoding's base length. The PC walk over trace
# tokens needs both (line kind and next PC) to follow kernels full of such words (tinygrad's
# discover_ops), where llvm-objdump prints 4-byte `.long`s and loses the instruction boundaries.
UNKNOWN_NAME = {
    "SOP1": "s_unknown",
    "SOP2": "s_unknown",
    "SOPC": "s_unknown",
    "SOPK": "s_unknown",
    "SOPP": "s_unknown",
    "SMEM": "s_unknown",
    "VOP1": "v_unknown",
    "VOP2": "v_unknown",
    "VOPC": "v_unknown",
    "VOP3": "v_unknown",
    "VOP3P": "v_unknown",
    "VOPD": "v_unknown",
    "VINTERP": "v_unknown",
    "VINTRP": "v_unknown",
    "DS": "ds_unknown",
    "FLAT": "flat_unknown",
    "GLOBAL": "global_unknown",
    "SCRATCH": "scratch_unknown",
    "VFLAT": "flat_unknown",
    "VGLOBAL": "global_unknown",
    "VSCRATCH": "scratch_unknown",
    "MUBUF": "buffer_unknown",
    "MTBUF": "tbuffer_unknown",
    "VBUFFER": "buffer_unknown",
    "MIMG": "image_unknown",
    "VIMAGE": "image_unknown",
    "VSAMPLE": "image_unknown",
    "EXP": "exp_unknown",
    "VEXPORT": "exp_unknown",
    "LDSDIR": "lds_unknown",
    "VDSDIR": "ds_unknown",
}


def disassemble(code: bytes, arch: str, vaddr: int = 0, lenient: bool = False) -> list[Instruction]:
    """Decode every instruction of `code` (loaded at `vaddr`) for target `arch`; never raises on bad words.

    lenient=False prints exactly what llvm-objdump prints; lenient=True is the reading above.
    """
    return _disassemble(code, arch, vaddr, lenient, {})


def readings(code: bytes, arch: str, vaddr: int = 0) -> tuple[list[Instruction], list[Instruction]]:
    """`disassemble(...)` and `disassemble(..., lenient=True)`: the lenient reading is the strict one
    wherever that knows the word (it reads strictly first), so only where the strict one has an unknown
    word is anything read again; without one, both are the same list."""
    strict = disassemble(code, arch, vaddr)
    if not any(ins.is_unknown for ins in strict):
        return strict, strict
    known = {ins.address: ins for ins in strict if not ins.is_unknown}
    return strict, _disassemble(code, arch, vaddr, True, known)


def _disassemble(code: bytes, arch: str, vaddr: int, lenient: bool, known: dict[int, Instruction]) -> list:
    from attdec.isa.categories import class_of

    tab = table_for(arch)
    n = len(code) // 4
    words = struct.unpack_from(f"<{n}I", code, 0)
    out = []
    i = 0
    fam = tab.family
    classes = tab.classes
    while i < n:
        addr = vaddr + 4 * i
        ins = known.get(addr)
        if ins is not None:  # read before (`readings`)
            out.append(ins)
            i += max(ins.size, 4) // 4
            continue
        ins = decode_one(words, i, n, addr, tab)
        if lenient and ins.is_unknown:
            enc = ENCODING_OF[fam](words[i])
            if enc is not None:
                ins = decode_one(words, i, n, addr, tab, lenient=True)
                if ins.is_unknown:
                    size = min(BASE_SIZE.get(enc, 8), 4 * (n - i))
                    name = UNKNOWN_NAME.get(enc, "unknown")
                    ins = Instruction(addr, size, name, "", name, None, "", enc, tuple(words[i : i + size // 4]))
        cls = classes.get(ins.mnemonic)
        if cls is None:
            cls = classes[ins.mnemonic] = class_of(ins.mnemonic, tab.target)
        ins.inst_class = cls
        out.append(ins)
        i += max(ins.size, 4) // 4
    return out
