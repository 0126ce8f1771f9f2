"""Operand text, printed the way llvm-objdump 22 prints it.

Operand order, register widths and which field feeds which operand come from the probed signature
tables (`tables/<target>.sig.json.gz`, made by tools/probe_isa.py); this module formats field values
(register names, inline constants, literals) and each encoding's modifier bits.
"""

from __future__ import annotations

import re

FLOATS = {
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
SPECIAL = {
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
ALIGN2 = ("gfx90a", "gfx942", "gfx950")  # even-aligned VGPR tuples
PLACEHOLDER = re.compile(r"\{(\w+):([vsa]):(\d+):(\.[lh])?(/\*[^*]*\*/)?\}")


def note_text(note: str) -> str:
    """Expand a table note (tools/probe_isa.py compact_note) back into LLVM's comment."""
    if not note or note.startswith("/*"):
        return note or ""
    if note == "imm":
        return "/*Invalid immediate*/"
    return f"/*Invalid register, operand has '{note}' register class*/"


def reg_range(prefix: str, n: int, width: int) -> str:
    return f"{prefix}{n}" if width == 1 else f"{prefix}[{n}:{n + width - 1}]"


def scalar_name(v: int, width: int, fam: str) -> str | None:
    """Names of scalar operand values 0..127 (SGPRs and special registers)."""
    if width >= 2 and v < 124:  # LLVM decodes a tuple from the aligned register number
        v &= ~1 if width == 2 else ~3
    if v <= 105 and not (fam == "gfx9" and v >= 102):
        return reg_range("s", v, width)
    pairs = {106: "vcc", 126: "exec"}
    if fam == "gfx9":
        pairs.update({102: "flat_scratch", 104: "xnack_mask"})
    if v in pairs or v - 1 in pairs:
        base = v if v in pairs else v - 1
        if width >= 2 and v == base:
            return pairs[base]
        return pairs[base] + ("_lo" if v == base else "_hi")
    if 108 <= v <= 123:
        return reg_range("ttmp", v - 108, width)
    if v == 124:
        return "m0" if fam == "gfx9" else "null"
    if v == 125:
        return "null" if fam == "gfx9" else "m0"
    return None


TYPE = re.compile(r"^[fiub](8|16|32|64)$")


def literal_bits(mnem: str) -> int:
    """Width of a literal constant as LLVM prints it: 16 when the source type is 16-bit."""
    base = re.sub(r"_(e32|e64|dpp|sdwa)$", "", mnem)
    types = [t for t in base.split("_")[1:] if TYPE.match(t)]
    if not types or mnem.startswith(("v_pk_", "v_cvt_pk", "v_dot", "v_wmma", "v_swmmac", "v_mfma")) or "_pk_" in mnem:
        return 32
    if mnem.startswith("s_"):
        return 16 if types[-1] == "f16" and "_hi_" not in mnem else 32
    return 16 if types[-1].endswith("16") and not types[-1].endswith("_16") else 32


F16 = {
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


def int16_operands(mnem: str) -> bool:
    base = re.sub(r"_(e32|e64|dpp|sdwa)$", "", mnem)
    types = [t for t in base.split("_")[1:] if TYPE.match(t)]
    if mnem.startswith("s_"):
        return bool(types) and types[-1] == "f16"
    return bool(types) and types[-1] in ("i16", "u16", "b16") and not mnem.startswith(("v_pk_", "v_dot"))


def src_text(v: int, width: int, fam: str, literal: int | None, kind: str = "v") -> str:
    """A 9-bit source operand (or an 8-bit scalar one)."""
    if v >= 256:
        return reg_range("a" if kind == "a" else "v", v - 256, width)
    if v < 128:
        return scalar_name(v, width, fam) or str(v)
    if v <= 192:
        return str(v - 128)
    if v <= 208:
        return str(192 - v)
    if v in FLOATS:
        return FLOATS[v]
    if v == 255:
        return f"0x{literal:x}" if literal is not None else "0x0"
    return SPECIAL.get(v, str(v))


class Fields:
    """Bit-field access over an instruction's dwords."""

    __slots__ = ("bits", "ignored", "sgpr_opsel", "vdst_v")

    def __init__(self, ws):
        self.ignored = frozenset()
        b = 0
        for i, w in enumerate(ws):
            b |= w << (32 * i)
        self.bits = b

    def __call__(self, lsb: int, width: int) -> int:
        return (self.bits >> lsb) & ((1 << width) - 1)


MODIFIER = re.compile(
    r" (op_sel_hi|op_sel|neg_lo|neg_hi|wait_exp|wait_vdst|wait_va_vdst|wait_vm_vsrc|format|offset|"
    r"dmask|dim|cbsz|abid|blgp)(:\S*)?"
)


def _parse_sig(sig: str):
    """Split a signature into literal text and placeholders; modifier text is dropped (rebuilt from bits)."""
    sig = MODIFIER.sub("", sig)
    parts, pos = [], 0
    for m in PLACEHOLDER.finditer(sig):
        if m.start() > pos:
            parts.append(sig[pos : m.start()])
        parts.append((m.group(1), m.group(2), int(m.group(3)), m.group(4) or "", m.group(5) or ""))
        pos = m.end()
    if pos < len(sig):
        parts.append(sig[pos:])
    return parts


# ---------------------------------------------------------------------------------------------
# SOPP / SOPK immediates
# ---------------------------------------------------------------------------------------------
DELAY_ID = (
    "NO_DEP",
    "VALU_DEP_1",
    "VALU_DEP_2",
    "VALU_DEP_3",
    "VALU_DEP_4",
    "TRANS32_DEP_1",
    "TRANS32_DEP_2",
    "TRANS32_DEP_3",
    "FMA_ACCUM_CYCLE_1",
    "SALU_CYCLE_1",
    "SALU_CYCLE_2",
    "SALU_CYCLE_3",
)
DELAY_SKIP = ("SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4")


def delay_alu_text(imm: int) -> str:
    id0, skip, id1 = imm & 0xF, (imm >> 4) & 7, (imm >> 7) & 0xF
    bad_id, bad_skip = "/* invalid instid value */", "/* invalid instskip value */"
    out = []
    if id0:
        out.append(f"instid0({DELAY_ID[id0] if id0 < len(DELAY_ID) else bad_id})")
    if skip:
        out.append(f"instskip({DELAY_SKIP[skip] if skip < len(DELAY_SKIP) else bad_skip})")
    if id1:
        out.append(f"instid1({DELAY_ID[id1] if id1 < len(DELAY_ID) else bad_id})")
    return " | ".join(out) if out else "0"


def waitcnt_fields(inst, family: str) -> dict:
    """{counter: count} a wait instruction waits for (a counter at its maximum means "no wait").

    `inst` is an Instruction (any wait: s_waitcnt, the gfx10/11 SOPK s_waitcnt_<cnt>, the gfx12
    s_wait_<cnt> family) or a raw `s_waitcnt` simm16. Non-wait instructions give {}.
    """
    if not isinstance(inst, int):
        m, imm = inst.mnemonic, inst.words[0] & 0xFFFF if inst.words else 0
        if m == "s_waitcnt":
            return waitcnt_fields(imm, family)
        if m in ("s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt"):
            return {m[len("s_waitcnt_") :]: imm}
        if m in ("s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt"):
            return {m.split("_")[2]: (imm >> 8) & 0x3F, "dscnt": imm & 0x3F}
        if m.startswith("s_wait_") and m.endswith("cnt"):
            return {m[len("s_wait_") :]: imm}
        return {}
    imm = inst
    if family == "gfx9":
        return {"vmcnt": (imm & 0xF) | ((imm >> 10) & 0x30), "expcnt": (imm >> 4) & 7, "lgkmcnt": (imm >> 8) & 0xF}
    return {"vmcnt": (imm >> 10) & 0x3F, "expcnt": imm & 7, "lgkmcnt": (imm >> 4) & 0x3F}


WAIT_MAX = {
    "gfx9": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 15},
    "gfx11": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 63},
    "gfx12": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 63},
}


def waitcnt_text(imm: int, fam: str) -> str:
    f = waitcnt_fields(imm, fam)
    mx = WAIT_MAX[fam]
    out = [f"{k}({v})" for k, v in f.items() if v != mx[k]]
    if not out:  # nothing waited on: LLVM prints every field at its maximum
        return " ".join(f"{k}({v})" for k, v in f.items())
    return " ".join(out)


MSG_GFX11 = {
    1: "MSG_INTERRUPT",
    2: "MSG_GS",
    3: "MSG_GS_DONE",
    4: "MSG_SAVEWAVE",
    5: "MSG_STALL_WAVE_GEN",
    6: "MSG_HALT_WAVES",
    7: "MSG_ORDERED_PS_DONE",
    10: "MSG_GS_ALLOC_REQ",
    11: "MSG_GET_DOORBELL",
    12: "MSG_GET_DDID",
    3 + 0x100: "",
    0x80: "MSG_RTN_GET_DOORBELL",
    0x81: "MSG_RTN_GET_DDID",
    0x82: "MSG_RTN_GET_TMA",
    0x83: "MSG_RTN_GET_REALTIME",
    0x84: "MSG_RTN_SAVE_WAVE",
    0x85: "MSG_RTN_GET_TBA",
    0x86: "MSG_RTN_GET_SE_AID_ID",
}
MSG_GFX9 = {
    1: "MSG_INTERRUPT",
    2: "MSG_GS",
    3: "MSG_GS_DONE",
    4: "MSG_SAVEWAVE",
    5: "MSG_STALL_WAVE_GEN",
    6: "MSG_HALT_WAVES",
    7: "MSG_ORDERED_PS_DONE",
    8: "MSG_EARLY_PRIM_DEALLOC",
    9: "MSG_GS_ALLOC_REQ",
    10: "MSG_GET_DOORBELL",
    11: "MSG_GET_DDID",
    15: "MSG_SYSMSG",
}


MSG_RTN = {
    128: "MSG_RTN_GET_DOORBELL",
    129: "MSG_RTN_GET_DDID",
    130: "MSG_RTN_GET_TMA",
    131: "MSG_RTN_GET_REALTIME",
    132: "MSG_RTN_SAVE_WAVE",
    133: "MSG_RTN_GET_TBA",
    134: "MSG_RTN_GET_TBA_TO_PC",
    135: "MSG_RTN_GET_SE_AID_ID",
}


def sendmsg_text(imm: int, fam: str) -> str:
    if fam == "gfx9":
        msg, rest = imm & 0xF, imm >> 4
        name = MSG_GFX9.get(msg)
    else:
        msg, rest = imm & 0xFF, imm >> 8
        name = "MSG_DEALLOC_VGPRS" if msg == 3 else MSG_GFX11.get(msg)
    if name and rest == 0:
        return f"sendmsg({name})"
    if name and msg in (2, 3) and fam == "gfx9":
        op, stream = rest & 3, (rest >> 4) & 3
        ops = ("GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT")
        return f"sendmsg({name}, {ops[op]}, {stream})" if stream else f"sendmsg({name}, {ops[op]})"
    return f"sendmsg({msg}, {(rest) & 7}, {(rest >> 3) & 3})" if rest else f"sendmsg({msg})"


HWREG_GFX9 = {
    1: "HW_REG_MODE",
    2: "HW_REG_STATUS",
    3: "HW_REG_TRAPSTS",
    4: "HW_REG_HW_ID",
    5: "HW_REG_GPR_ALLOC",
    6: "HW_REG_LDS_ALLOC",
    7: "HW_REG_IB_STS",
    15: "HW_REG_SH_MEM_BASES",
    16: "HW_REG_TBA_LO",
    17: "HW_REG_TBA_HI",
    18: "HW_REG_TMA_LO",
    19: "HW_REG_TMA_HI",
    20: "HW_REG_FLAT_SCR_LO",
    21: "HW_REG_FLAT_SCR_HI",
    22: "HW_REG_XNACK_MASK",
    23: "HW_REG_HW_ID1",
    24: "HW_REG_HW_ID2",
    25: "HW_REG_POPS_PACKER",
    29: "HW_REG_SHADER_CYCLES",
}
HWREG_GFX11 = {
    1: "HW_REG_MODE",
    2: "HW_REG_STATUS",
    3: "HW_REG_TRAPSTS",
    5: "HW_REG_GPR_ALLOC",
    6: "HW_REG_LDS_ALLOC",
    7: "HW_REG_IB_STS",
    15: "HW_REG_SH_MEM_BASES",
    18: "HW_REG_PERF_SNAPSHOT_PC_LO",
    19: "HW_REG_PERF_SNAPSHOT_PC_HI",
    20: "HW_REG_FLAT_SCR_LO",
    21: "HW_REG_FLAT_SCR_HI",
    23: "HW_REG_HW_ID1",
    24: "HW_REG_HW_ID2",
    26: "HW_REG_EXCP_FLAG_PRIV",
    27: "HW_REG_EXCP_FLAG_USER",
    28: "HW_REG_TRAP_CTRL",
    29: "HW_REG_SCRATCH_BASE_LO",
    30: "HW_REG_SCRATCH_BASE_HI",
    31: "HW_REG_SHADER_CYCLES",
}


def hwreg_text(imm: int, fam: str) -> str:
    rid, off, size = imm & 0x3F, (imm >> 6) & 0x1F, ((imm >> 11) & 0x1F) + 1
    name = (HWREG_GFX9 if fam == "gfx9" else HWREG_GFX11).get(rid, str(rid))
    if off == 0 and size == 32 and not name.isdigit():
        return f"hwreg({name})"
    return f"hwreg({name}, {off}, {size})"


def simm16_text(mnem: str, sig: str, imm: int, fam: str) -> str:
    if mnem == "s_waitcnt":
        return waitcnt_text(imm, fam)
    if mnem in ("s_wait_alu", "s_waitcnt_depctr"):
        return depctr_text(imm, fam)
    if mnem == "s_delay_alu":
        return delay_alu_text(imm)
    if mnem.startswith("s_sendmsg"):
        return sendmsg_text(imm, fam)
    if mnem == "s_version":
        return sig if imm == 0 else f"0x{imm:x}"
    if "hwreg" in sig:
        return hwreg_text(imm, fam)
    if sig.startswith("0x"):
        return f"0x{imm:x}"
    if sig == "-1" or sig.lstrip("-").isdigit():
        if mnem.startswith(("s_branch", "s_cbranch", "s_call")):
            return str(imm)
        return str(imm) if imm <= 64 else f"0x{imm:x}"  # inline-constant range in decimal, else hex
    return sig


# ---------------------------------------------------------------------------------------------
def render(mnem, enc, ext, ws, fam, tab, sub, sig_entry=None):
    """-> (mnemonic as printed, operand text)."""
    if enc == "VOPD":
        return mnem, vopd_text(mnem, sub, ws, fam)
    if sig_entry is None:
        return mnem, ""
    _zero, parts, ignored, has_sdst, notes, _exts = sig_entry
    f = Fields(ws)
    keep = (14, 59, 60) if enc == "VOP3P" or (fam == "gfx9" and (ws[0] >> 23) == 0x1A7) else ()
    for b, mask in ignored:  # fields LLVM does not print for this opcode
        if b not in keep:
            f.bits &= ~mask
    f.ignored = frozenset(b for b, _ in ignored)
    w0 = ws[0]
    if enc == "SOPP":
        txt = "".join(p for p in parts if isinstance(p, str))
        if not txt:  # LLVM shows an immediate the opcode does not use only when it is not zero
            return mnem, str(w0 & 0xFFFF) if w0 & 0xFFFF else ""
        return mnem, simm16_text(mnem, txt, w0 & 0xFFFF, fam)
    fields = tab.fields.get(enc, {})
    literal = None
    nbase = 1 if enc in ("SOP1", "SOP2", "SOPC", "SOPK", "VOP1", "VOP2", "VOPC") else 2
    if len(ws) > nbase and ext == "":
        literal = ws[-1]
        if enc.startswith(("VOP", "SOP")) and literal_bits(mnem) == 16:
            literal &= 0xFFFF
    vop3 = enc in ("VOP3", "VOP3P", "VINTERP")
    mfma = fam == "gfx9" and enc == "VOP3" and mnem.startswith(("v_mfma", "v_smfmac"))
    packed = fam == "gfx9" and enc == "VOP3" and (w0 >> 23) == 0x1A7 and not mfma
    sd = enc == "VOP3" and has_sdst
    abs_bits = f(8, 3) if vop3 and enc == "VOP3" and not packed and not mfma and not sd else 0
    neg_bits = f(61, 3) if vop3 and not mfma and not packed and enc != "VOP3P" else 0
    opsel = f(11, 4) if vop3 and not mfma and not sd else 0
    if enc == "SMEM":
        return mnem, smem_text(mnem, parts, f, fam, fields)
    if ext in ("dpp", "dpp8", "sdwa"):
        return ext_text(mnem, enc, ext, ws, fam, tab, parts, f, fields)
    acc = 0
    if (fam == "gfx9" and enc in ("DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF") and tab.arch != "gfx90a") or (
        tab.arch == "gfx90a" and enc in ("DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF")
    ):
        acc = (w0 >> 25) & 1 if enc == "DS" else f(55, 1)
    out, nsrc, t16, sgpr_opsel = [], 0, False, False
    for p in parts:
        if isinstance(p, str):
            out.append(p)
            continue
        name, kind, width, half, comment = p
        lsb, nb = fields[name]
        v = f(lsb, nb)
        if name == "ssrc0" and mnem.startswith("s_sendmsg_rtn"):
            out.append(f"sendmsg({MSG_RTN[v]})" if v in MSG_RTN else f"sendmsg({v}, 0, 0)")
            continue
        if name in ("src0", "src1", "src2", "ssrc0", "ssrc1"):
            k = kind
            if mfma and name in ("src0", "src1"):
                k = "a" if f(59 + (name == "src1"), 1) else "v"
            elif mfma and name == "src2":
                k = "a" if f(15, 1) else "v"
            t = src_text(v, width, fam, literal, k)
            if v in F16 and int16_operands(mnem):
                t = f"0x{F16[v]:x}"
            if half:
                t16 = True
            if v >= 256 and width >= 2 and (v & 1) and tab.arch in ALIGN2 and not comment:
                comment = note_text((notes.get(name) or {}).get("odd", ""))
            if half and v >= 256:
                if enc in ("VOP1", "VOP2", "VOPC"):
                    n = v - 256
                    half = ".h" if n >= 128 else ".l"
                    t = f"v{n & 127}"
                else:
                    idx = int(name[-1])
                    half = ".h" if (opsel >> idx) & 1 else ".l"
                t16 = True
            elif half:
                half = ""
            if comment and v < 256:
                comment = ""
            note = notes.get(name)
            if note and v < 256:
                comment = note_text(note.get("sgpr" if v < 128 else "const", ""))
            if mnem.startswith("v_readfirstlane_b32") and 128 <= v < 256 and v not in SPECIAL:
                comment = "/*Invalid immediate*/"
            if name.startswith("src"):
                i = int(name[-1])
                nsrc = max(nsrc, i + 1)
                if comment or half:
                    t, comment, half = t + half + comment, "", ""
                if (abs_bits >> i) & 1:
                    t = f"|{t}|"
                if (neg_bits >> i) & 1:
                    t = f"neg({t})" if 128 <= v <= 255 and not (abs_bits >> i) & 1 else "-" + t
                if t16 and v < 256 and (opsel >> i) & 1:
                    sgpr_opsel = True
        elif name == "sbase":
            t = scalar_name(2 * v, width, fam) or str(v)
        elif name == "srsrc":
            t = scalar_name(4 * v, width, fam) or str(v)
        elif kind == "s":
            t = (
                (scalar_name(v, width, fam) or src_text(v, width, fam, literal))
                if v < 128
                else src_text(v, width, fam, literal)
            )
            if name == "saddr" and v == (0x7F if fam == "gfx9" else 0x7C):
                t = "off"
        else:
            if name in ("addr", "vaddr") and enc in ("FLAT", "GLOBAL", "VFLAT", "VGLOBAL") and width == 1:
                sv = f(*fields["saddr"])
                if sv == (0x7F if fam == "gfx9" else 0x7C) or enc in ("FLAT", "VFLAT"):
                    width = 2
            k = kind
            if mfma and name == "vdst":
                k = "a" if f(15, 1) else "v"
            elif acc and name in ("vdst", "data", "data0", "data1", "vdata"):
                k = "a"
            if half and k == "v":
                if enc in ("VOP1", "VOP2", "VOPC"):
                    half = ".h" if v >= 128 else ".l"
                    v &= 127
                else:
                    half = ".h" if (opsel >> 3) & 1 else ".l"
                t16 = True
            t = reg_range(k, v, width)
            if width >= 2 and (v & 1) and tab.arch in ALIGN2 and not comment:
                comment = note_text((notes.get(name) or {}).get("odd", ""))
                if k == "a":
                    comment = comment.replace("'VReg_", "'AReg_")
        out.append(t + half + comment)
    ops = "".join(out)
    if enc in ("LDSDIR", "VDSDIR"):
        ops = re.sub(r"attr\d+\.[xyzw]", f"attr{f(10, 6)}.{'xyzw'[f(8, 2)]}", ops)
    if mnem.startswith("s_sendmsg_rtn"):
        v = w0 & 0xFF
        name = MSG_RTN.get(v) or ("MSG_DEALLOC_VGPRS" if v == 3 and fam != "gfx9" else MSG_GFX11.get(v))
        ops = re.sub(r"sendmsg\([^)]*\)", f"sendmsg({name})" if name else f"sendmsg({v}, 0, 0)", ops)
    if literal is not None and re.search(r"_(fmamk|fmaak|madmk|madak)_", mnem + "_"):
        ops = re.sub(r"(?<=, )0x0(?=,|$)", f"0x{ws[-1]:x}", ops, count=1)  # K prints as the whole dword
    if enc in ("VFLAT", "VGLOBAL", "VSCRATCH") and "_atomic" in mnem and f(52, 1):
        dw = next((p[2] for p in parts if not isinstance(p, str) and p[0] == "vsrc"), 1)
        dw = max(1, dw // 2) if "cmpswap" in mnem else dw
        ops = reg_range("v", f(32, 8), dw) + ", " + ops
    if enc in ("FLAT", "GLOBAL", "SCRATCH") and "_atomic" in mnem and f(16 if fam == "gfx9" else 14, 1):
        dw = next((p[2] for p in parts if not isinstance(p, str) and p[0] == "data"), 1)
        dw = max(1, dw // 2) if "cmpswap" in mnem else dw
        ops = reg_range("a" if acc else "v", f(56, 8), dw) + ", " + ops
    if enc == "SOPK":
        ops = _sopk(mnem, ops, w0 & 0xFFFF, fam, literal)
    f.sgpr_opsel = sgpr_opsel
    f.vdst_v = any(not isinstance(p, str) and p[0] == "vdst" and p[1] == "v" for p in parts)
    mods = MODS.get(enc)
    if enc == "VOP3":
        mods = mods_gfx9_vop3 if fam == "gfx9" else mods_vop3
    if mods:
        ops += mods(mnem, f, fam, nsrc, t16, opsel, tab)
    if mfma:
        ops += "".join(f" {n}:{v}" for n, v in (("cbsz", f(8, 3)), ("abid", f(11, 4)), ("blgp", f(61, 3))) if v)
    return mnem, ops


def _sopk(mnem, ops, imm, fam, literal):
    if "hwreg(" in ops:
        ops = re.sub(r"hwreg\([^)]*\)", hwreg_text(imm, fam), ops)
        if mnem == "s_setreg_imm32_b32" and literal is not None:
            ops = ops.rsplit(", ", 1)[0] + ", " + (str(literal) if literal <= 64 else f"0x{literal:x}")
        return ops
    if mnem == "s_version":
        return ops if imm == 0 else f"0x{imm:x}"
    if ops.endswith(", 0x0"):
        return ops[:-3] + f"0x{imm:x}"
    if ops.endswith(", 0"):
        simm = imm - 0x10000 if imm & 0x8000 and not mnem.startswith("s_call") else imm
        return ops[:-1] + str(simm)
    return ops


def _bits_list(bits: int, n: int) -> str:
    return "[" + ",".join(str((bits >> i) & 1) for i in range(n)) + "]"


def mods_vop3(mnem, f, fam, nsrc, t16, opsel, tab):
    out = ""
    if t16 and getattr(f, "sgpr_opsel", False):
        n = nsrc + (1 if f.vdst_v else 0)
        bits = (opsel & ((1 << nsrc) - 1)) | (((opsel >> 3) & 1) << nsrc if f.vdst_v else 0)
        out += " op_sel:" + _bits_list(bits, n)
    elif fam != "gfx9" and opsel and not t16:
        out += " op_sel:" + _bits_list(opsel & ((1 << nsrc) - 1) | ((opsel >> 3) & 1) << nsrc, nsrc + 1)
    elif fam == "gfx9" and opsel:
        out += " op_sel:" + _bits_list(opsel, 4)
    if f(15, 1):
        out += " clamp"
    omod = f(59, 2)
    if omod:
        out += (" mul:2", " mul:4", " div:2")[omod - 1]
    return out


def mods_vop3p(mnem, f, fam, nsrc, t16, opsel, tab):
    out = ""
    n = nsrc
    sel = f(11, 3) & ((1 << n) - 1)
    hi = (f(59, 2) | f(14, 1) << 2) & ((1 << n) - 1)
    if sel:
        out += " op_sel:" + _bits_list(sel, n)
    mix = "_mix" in mnem
    if {14, 59, 60} <= f.ignored or (n < 3 and {59, 60} <= f.ignored):
        pass
    elif (mix and hi) or (not mix and hi != (1 << n) - 1):  # mix ops default to [0,0,0], others to all 1s
        out += " op_sel_hi:" + _bits_list(hi, n)
    nlo, nhi = f(61, 3) & ((1 << n) - 1), f(8, 3) & ((1 << n) - 1)
    if nlo:
        out += " neg_lo:" + _bits_list(nlo, n)
    if nhi:
        out += " neg_hi:" + _bits_list(nhi, n)
    if f(15, 1):
        out += " clamp"
    return out


def mods_gfx9_vop3(mnem, f, fam, nsrc, t16, opsel, tab):
    if (f(0, 32) >> 23) == 0x1A7:
        return mods_vop3p(mnem, f, fam, nsrc, t16, opsel, tab) if not mnem.startswith(("v_mfma", "v_smfmac")) else ""
    return mods_vop3(mnem, f, fam, nsrc, t16, opsel, tab)


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
        else:
            chars.append("1" if o & m else "0") if not x & m else chars.append("i" if not o & m else "p")
    return 'swizzle(BITMASK_PERM,"' + "".join(chars) + '")'


def mods_ds(mnem, f, fam, nsrc, t16, opsel, tab):
    o0, o1 = f(0, 8), f(8, 8)
    out = ""
    if mnem == "ds_swizzle_b32" and (o0 | o1 << 8):
        return " offset:" + swizzle_text(o0 | o1 << 8) + (" gds" if f(16 if fam == "gfx9" else 17, 1) else "")
    if re.search(r"2addr|^ds_(read|write|wrxchg)2", mnem):
        if o0:
            out += f" offset0:{o0}"
        if o1:
            out += f" offset1:{o1}"
    elif o0 | o1 << 8:
        out += f" offset:{o0 | o1 << 8}"
    gds_bit = 16 if fam == "gfx9" else 17
    if f(gds_bit, 1):
        out += " gds"
    return out


def mods_flat(mnem, f, fam, nsrc, t16, opsel, tab):
    off = f(0, 13)
    if not mnem.startswith("flat_"):
        off = off - 0x2000 if off & 0x1000 else off  # global/scratch: signed 13-bit offset
    else:
        off &= 0xFFF
    out = f" offset:{off}" if off else ""
    if fam != "gfx9":
        return out + " glc" * f(14, 1) + " slc" * f(15, 1) + " dlc" * f(13, 1)
    if tab.arch == "gfx90a":
        out += " glc" * f(16, 1) + " slc" * f(17, 1) + " scc" * f(25, 1)
    else:
        out += " sc0" * f(16, 1) + " nt" * f(17, 1) + " sc1" * f(25, 1)
    return out + " lds" * f(13, 1)


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


def _th_scope(mnem, th, scope):
    table = TH_ATOMIC if "_atomic" in mnem else TH_STORE if "_store" in mnem else TH_LOAD
    name = table[th]
    if th == 3 and scope == 3 and table is not TH_ATOMIC:
        name = "TH_LOAD_BYPASS" if table is TH_LOAD else "TH_STORE_BYPASS"
    out = f" th:{name}" if th else ""
    return out + (f" scope:{SCOPES[scope]}" if scope else "")


def mods_vflat(mnem, f, fam, nsrc, t16, opsel, tab):
    off = f(72, 24)
    off = off - (1 << 24) if off & (1 << 23) else off
    out = f" offset:{off}" if off else ""
    return out + _th_scope(mnem, f(52, 3), f(50, 2))


def mods_vinterp(mnem, f, fam, nsrc, t16, opsel, tab):
    out = " clamp" * f(15, 1)
    if opsel and not t16:
        out += " op_sel:" + _bits_list(opsel, 4)
    return out + f" wait_exp:{f(8, 3)}"


def smem_text(mnem, parts, f, fam, fields):
    if not any(not isinstance(p, str) for p in parts) and "".join(parts).strip() == "":
        return ""
    regs = []
    if fam == "gfx9" and not any(not isinstance(p, str) and p[0] == "sbase" for p in parts):
        for p in parts:
            if not isinstance(p, str):
                regs.append(scalar_name(f(*fields[p[0]]), p[2], fam))
        return ", ".join(regs)
    for p in parts:
        if isinstance(p, str):
            continue
        name, _kind, width, _half, _comment = p
        v = f(*fields[name])
        regs.append(scalar_name(2 * v, width, fam) if name == "sbase" else scalar_name(v, width, fam) or str(v))
    if fam == "gfx9":
        imm, soe = f(17, 1), f(14, 1)
        off = f(32, 21)
        if soe:
            so = scalar_name(f(57, 7), 1, fam)
            tail = f"{so} offset:0x{off:x}" if imm and off else so
        elif imm:
            tail = f"0x{off:x}"
        else:
            tail = scalar_name(off & 0x7F, 1, fam) or str(off)
        mods = " glc" * f(16, 1) + " nv" * f(15, 1)
    else:
        nb = 21 if fam == "gfx11" else 24
        off = f(32, nb)
        off = off - (1 << nb) if off >> (nb - 1) else off
        so = f(57, 7)
        offs = f"0x{off:x}" if off >= 0 else f"-0x{-off:x}"
        if so == 0x7C:
            tail = "null" if off == 0 and fam == "gfx11" else offs
        else:
            tail = scalar_name(so, 1, fam) + (f" offset:{offs}" if off else "")
        if mnem.startswith("s_atc_probe"):
            regs = [str(f(6, 7)), *regs[1:]]
        if mnem.startswith(("s_prefetch", "s_buffer_prefetch")):
            regs = [r for p, r in zip([p for p in parts if not isinstance(p, str)], regs) if p[0] != "sdata"]
            return ", ".join([*regs, offs, scalar_name(so, 1, fam) or str(so), str(f(6, 7))])
        if fam == "gfx11":
            mods = " glc" * f(14, 1) + " dlc" * f(13, 1)
        else:
            mods = _th_scope(mnem, f(23, 2), f(21, 2))
    return ", ".join([*regs, tail]) + mods


DEPCTR = (
    ("depctr_hold_cnt", 7, 1),
    ("depctr_sa_sdst", 0, 1),
    ("depctr_va_vdst", 12, 4),
    ("depctr_va_sdst", 9, 3),
    ("depctr_va_ssrc", 8, 1),
    ("depctr_va_vcc", 1, 1),
    ("depctr_vm_vsrc", 2, 3),
)


def depctr_text(imm: int, fam: str) -> str:
    fields = DEPCTR if fam == "gfx12" else DEPCTR[1:]
    known = 0
    for _, lsb, nb in fields:
        known |= ((1 << nb) - 1) << lsb
    if imm & ~known & 0xFFFF:
        return f"0x{imm:x}"
    vals = [(n, (imm >> lsb) & ((1 << nb) - 1), (1 << nb) - 1) for n, lsb, nb in fields]
    out = [f"{n}({v})" for n, v, mx in vals if v != mx]
    return " ".join(out) if out else " ".join(f"{n}({v})" for n, v, mx in vals)


def mods_mubuf(mnem, f, fam, nsrc, t16, opsel, tab):
    off = f(0, 12)
    out = f" offset:{off}" if off else ""
    if fam == "gfx9":
        cache = (
            (" glc" * f(14, 1) + " slc" * f(17, 1)) if tab.arch == "gfx90a" else (" sc0" * f(14, 1) + " nt" * f(17, 1))
        )
        out += cache + (" lds" * f(16, 1) if mnem.startswith("buffer") else "")
    else:
        out += " glc" * f(14, 1) + " slc" * f(12, 1) + " dlc" * f(13, 1)
    return out


def mods_mtbuf(mnem, f, fam, nsrc, t16, opsel, tab):
    fmt = f(19, 7)
    if fmt == 0:
        out = " format:[BUF_DATA_FORMAT_INVALID]" if fam == "gfx9" else " format:[BUF_FMT_INVALID]"
    else:
        out = f" format:{fmt}"
    off = f(0, 12)
    out += f" offset:{off}" if off else ""
    if fam == "gfx9":
        out += (
            (" glc" * f(14, 1) + " slc" * f(54, 1)) if tab.arch == "gfx90a" else (" sc0" * f(14, 1) + " nt" * f(54, 1))
        )
    else:
        out += " glc" * f(14, 1) + " slc" * f(12, 1) + " dlc" * f(13, 1)
    return out


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


def mods_mimg(mnem, f, fam, nsrc, t16, opsel, tab):
    dmask = f(8, 4)
    out = f" dmask:0x{dmask:x}" if dmask else ""
    if fam == "gfx11":
        out += f" dim:{DIMS[f(2, 3)]}"
    return out


def mods_vimage(mnem, f, fam, nsrc, t16, opsel, tab):
    dmask = f(22, 4)
    out = f" dmask:0x{dmask:x}" if dmask else ""
    return out + f" dim:{DIMS[f(0, 3)]}"


def mods_ldsdir(mnem, f, fam, nsrc, t16, opsel, tab):
    if fam == "gfx12":
        return f" wait_va_vdst:{f(16, 4)} wait_vm_vsrc:{f(23, 1)}"
    return f" wait_vdst:{f(16, 4)}"


def mods_vbuffer(mnem, f, fam, nsrc, t16, opsel, tab):
    out = ""
    if mnem.startswith("tbuffer"):
        fmt = f(55, 7)
        out += " format:[BUF_FMT_INVALID]" if fmt == 0 else f" format:{fmt}"
    out += " idxen" * f(63, 1) + " offen" * f(62, 1)
    off = f(72, 24)
    out += f" offset:{off}" if off else ""
    return out + _th_scope(mnem, f(52, 3), f(50, 2))


MODS = {
    "VBUFFER": mods_vbuffer,
    "LDSDIR": mods_ldsdir,
    "VDSDIR": mods_ldsdir,
    "MUBUF": mods_mubuf,
    "MTBUF": mods_mtbuf,
    "MIMG": mods_mimg,
    "VIMAGE": mods_vimage,
    "VSAMPLE": mods_vimage,
    "VOP3": None,
    "VINTERP": mods_vinterp,
    "VOP3P": mods_vop3p,
    "DS": mods_ds,
    "FLAT": mods_flat,
    "GLOBAL": mods_flat,
    "SCRATCH": mods_flat,
    "VFLAT": mods_vflat,
    "VGLOBAL": mods_vflat,
    "VSCRATCH": mods_vflat,
}


# ---------------------------------------------------------------------------------------------
# DPP16 / DPP8 / SDWA forms
SDWA_SEL = ("BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD")
SDWA_UNUSED = ("UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE")


def dpp_ctrl_text(c: int, fam: str, arch: str) -> str | None:
    if c <= 0xFF:
        return "quad_perm:[" + ",".join(str((c >> (2 * i)) & 3) for i in range(4)) + "]"
    for base, name in ((0x100, "row_shl"), (0x110, "row_shr"), (0x120, "row_ror")):
        if base < c <= base + 0xF:
            return f"{name}:{c - base}"
    if c == 0x140:
        return "row_mirror"
    if c == 0x141:
        return "row_half_mirror"
    if fam == "gfx9":
        named = {
            0x130: "wave_shl:1",
            0x134: "wave_rol:1",
            0x138: "wave_shr:1",
            0x13C: "wave_ror:1",
            0x142: "row_bcast:15",
            0x143: "row_bcast:31",
        }
        if c in named:
            return named[c]
        if arch != "gfx942" and arch != "gfx950" and 0x150 <= c <= 0x15F:
            return f"row_newbcast:{c - 0x150}"
        if arch in ("gfx942", "gfx950") and 0x150 <= c <= 0x15F:
            return f"row_newbcast:{c - 0x150}"
        return None
    if 0x150 <= c <= 0x15F:
        return f"row_share:{c - 0x150}"
    if 0x160 <= c <= 0x16F:
        return f"row_xmask:{c - 0x160}"
    return None


def ext_text(mnem, enc, ext, ws, fam, tab, parts, f, fields):
    """VOP1/VOP2/VOPC (and gfx11+ VOP3) with a DPP16, DPP8 or SDWA dword."""
    d = ws[-1]
    vop3 = enc in ("VOP3", "VOP3P")
    base = mnem[:-4] if mnem.endswith("_e32") else mnem
    if vop3 and not base.endswith("_e64"):
        base += "_e64"
    out_m = base + ("_sdwa" if ext == "sdwa" else "_dpp")
    if enc == "VOPC" and fam != "gfx9" and ext != "sdwa":
        out_m = base  # LLVM prints gfx11+ VOPC DPP without the _dpp suffix
    src0_reg = d & 0xFF
    sdwa_sgpr = ext == "sdwa" and (d >> 23) & 1
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(p)
            continue
        name, kind, width, half, _comment = p
        v = f(*fields[name])
        if name == "src0":
            t = scalar_name(src0_reg, width, fam) if sdwa_sgpr else reg_range("v", src0_reg, width)
        elif name in ("src1", "src2") and vop3:
            t = src_text(v, width, fam, None)
        elif name == "vsrc1" and ext == "sdwa" and (d >> 31) & 1:
            t = scalar_name(v, width, fam)
        elif kind == "s":
            t = scalar_name(v, width, fam) or str(v)
        else:
            t = reg_range(kind, v, width)
        if t.startswith("v[") and (int(t[2 : t.index(":")]) & 1) and tab.arch in ALIGN2:
            t += f"/*Invalid register, operand has 'VReg_{32 * width}_Align2' register class*/"
        if half:
            if vop3:
                idx = 3 if name == "vdst" else int(name[-1]) if name[-1].isdigit() else 0
                half = ".h" if (f(11, 4) >> idx) & 1 else ".l"
            elif kind == "v" and name != "src0" and v >= 128:
                t, half = reg_range("v", v - 128, width), ".h"
            else:
                half = ".l"
            if not t.startswith("v"):
                half = ""
            t, half = t + half, ""
        if vop3 and name in ("src0", "src1", "src2") and enc == "VOP3":
            i = int(name[-1])
            if f(8 + i, 1):
                t = f"|{t}|"
            if f(61 + i, 1):
                t = f"neg({t})" if re.match(r"-?\d+$|0x", t) else "-" + t
        if name in ("src0", "vsrc1", "src1") and not vop3:
            i = 0 if name == "src0" else 1
            if ext == "sdwa":
                if (d >> (19 + 8 * i)) & 1:
                    t = f"sext({t})"
                neg, ab = (d >> (20 + 8 * i)) & 1, (d >> (21 + 8 * i)) & 1
            elif ext == "dpp":
                neg, ab = (d >> (20 + 2 * i)) & 1, (d >> (21 + 2 * i)) & 1
                types = [x for x in base.split("_")[1:] if TYPE.match(x)]
                if types and not types[-1].startswith("f"):  # integer ops accept but do not show them
                    neg = ab = 0
            else:
                neg = ab = 0
            if ab:
                t = f"|{t}|"
            if neg:
                t = "-" + t
        out.append(t)
    ops = "".join(out)
    if ext == "sdwa" and enc == "VOPC" and (d >> 15) & 1:
        ops = ops.replace("vcc", scalar_name((d >> 8) & 0x7F, 2, fam), 1)
    mods = ""
    if ext == "sdwa":
        if (d >> 13) & 1 and enc != "VOPC":
            mods += " clamp"
        omod = (d >> 14) & 3
        if omod and enc != "VOPC":
            mods += (" mul:2", " mul:4", " div:2")[omod - 1]
        if enc != "VOPC":
            ds, du = (d >> 8) & 7, (d >> 11) & 3
            mods += f" dst_sel:{SDWA_SEL[ds] if ds < 7 else ds} dst_unused:{SDWA_UNUSED[du] if du < 3 else du}"
        s0 = (d >> 16) & 7
        mods += f" src0_sel:{SDWA_SEL[s0] if s0 < 7 else s0}"
        if enc != "VOP1":
            s1 = (d >> 24) & 7
            mods += f" src1_sel:{SDWA_SEL[s1] if s1 < 7 else s1}"
        return out_m, ops + mods
    if vop3:
        mods = MODS_VOP3_EXT(mnem, f, fam)
    if ext == "dpp8":
        sel = ",".join(str((d >> (8 + 3 * i)) & 7) for i in range(8))
        fi = (ws[0] & 0x1FF if not vop3 else (ws[1] & 0x1FF)) == 234
        return out_m, ops + mods + f" dpp8:[{sel}]" + (" fi:1" if fi else "")
    ctrl = dpp_ctrl_text((d >> 8) & 0x1FF, fam, tab.arch)
    if tab.arch in ALIGN2 and "_f64" in mnem and not (ctrl or "").startswith("row_newbcast"):
        ctrl = "/* DP ALU dpp only supports row_newbcast */"
    gone = {
        0x130: "wave_shl",
        0x134: "wave_rol",
        0x138: "wave_shr",
        0x13C: "wave_ror",
        0x142: "row_bcast",
        0x143: "row_bcast",
    }
    if ctrl is None and fam != "gfx9" and (d >> 8) & 0x1FF in gone:
        ctrl = f"/* {gone[(d >> 8) & 0x1FF]} is not supported starting from GFX10 */"
    if ctrl is None:
        return out_m, ops + mods + f" /* invalid dpp_ctrl 0x{(d >> 8) & 0x1FF:x} */"
    txt = f" {ctrl} row_mask:0x{d >> 28:x} bank_mask:0x{(d >> 24) & 0xF:x}"
    if (d >> 19) & 1:
        txt += " bound_ctrl:1"
    if fam != "gfx9" and (d >> 18) & 1:
        txt += " fi:1"
    return out_m, ops + mods + txt


def MODS_VOP3_EXT(mnem, f, fam):
    out = " clamp" * f(15, 1)
    omod = f(59, 2)
    return out + ((" mul:2", " mul:4", " div:2")[omod - 1] if omod else "")


def vopd_text(xm, ym, ws, fam):
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

    x = half(xm, vdx, w0 & 0x1FF, (w0 >> 9) & 0xFF)
    y = half(ym, vdy, w1 & 0x1FF, (w1 >> 9) & 0xFF)
    return x.split(" ", 1)[1] + " :: " + y
