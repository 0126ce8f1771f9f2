"""Operand text, printed the way llvm-objdump 22 prints it.

Operand order, register widths and which field feeds which operand come from the probed signature
tables (`tables/<target>.sig.json`, made by tools/probe_isa.py); this module formats field values
(register names, inline constants, literals) and each encoding's modifier bits.
"""
from __future__ import annotations

import re

FLOATS = {240: "0.5", 241: "-0.5", 242: "1.0", 243: "-1.0", 244: "2.0", 245: "-2.0", 246: "4.0", 247: "-4.0",
          248: "0.15915494"}
SPECIAL = {235: "src_shared_base", 236: "src_shared_limit", 237: "src_private_base", 238: "src_private_limit",
           239: "src_pops_exiting_wave_id", 251: "src_vccz", 252: "src_execz", 253: "src_scc",
           254: "src_lds_direct"}
PLACEHOLDER = re.compile(r"\{(\w+):([vsa]):(\d+):(\.[lh])?(/\*[^*]*\*/)?\}")


def reg_range(prefix: str, n: int, width: int) -> str:
    return f"{prefix}{n}" if width == 1 else f"{prefix}[{n}:{n + width - 1}]"


def scalar_name(v: int, width: int, fam: str) -> str | None:
    """Names of scalar operand values 0..127 (SGPRs and special registers)."""
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

    __slots__ = ("bits",)

    def __init__(self, ws):
        b = 0
        for i, w in enumerate(ws):
            b |= w << (32 * i)
        self.bits = b

    def __call__(self, lsb: int, width: int) -> int:
        return (self.bits >> lsb) & ((1 << width) - 1)


def _parse_sig(sig: str):
    parts, pos = [], 0
    for m in PLACEHOLDER.finditer(sig):
        if m.start() > pos:
            parts.append(sig[pos:m.start()])
        parts.append((m.group(1), m.group(2), int(m.group(3)), m.group(4) or "", m.group(5) or ""))
        pos = m.end()
    if pos < len(sig):
        parts.append(sig[pos:])
    return parts


# ---------------------------------------------------------------------------------------------
# SOPP / SOPK immediates
# ---------------------------------------------------------------------------------------------
DELAY_ID = ("NO_DEP", "VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4", "TRANS32_DEP_1",
            "TRANS32_DEP_2", "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1", "SALU_CYCLE_1", "SALU_CYCLE_2",
            "SALU_CYCLE_3")
DELAY_SKIP = ("SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4")


def delay_alu_text(imm: int) -> str:
    id0, skip, id1 = imm & 0xF, (imm >> 4) & 7, (imm >> 7) & 0xF
    if id0 >= len(DELAY_ID) or skip >= len(DELAY_SKIP) or id1 >= len(DELAY_ID):
        return f"0x{imm:x}"
    out = []
    if id0:
        out.append(f"instid0({DELAY_ID[id0]})")
    if skip:
        out.append(f"instskip({DELAY_SKIP[skip]})")
    if id1:
        out.append(f"instid1({DELAY_ID[id1]})")
    return " | ".join(out) if out else "0"


def waitcnt_fields(imm: int, family: str) -> dict:
    """Decode an `s_waitcnt` simm16 into {counter: value} (all three counters; max = no wait)."""
    if family == "gfx9":
        return {"vmcnt": (imm & 0xF) | ((imm >> 10) & 0x30), "expcnt": (imm >> 4) & 7, "lgkmcnt": (imm >> 8) & 0xF}
    return {"vmcnt": (imm >> 10) & 0x3F, "expcnt": imm & 7, "lgkmcnt": (imm >> 4) & 0x3F}


WAIT_MAX = {"gfx9": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 15}, "gfx11": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 63},
            "gfx12": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 63}}


def waitcnt_text(imm: int, fam: str) -> str:
    f = waitcnt_fields(imm, fam)
    mx = WAIT_MAX[fam]
    out = [f"{k}({v})" for k, v in f.items() if v != mx[k]]
    if not out:   # nothing waited on: LLVM prints every field at its maximum
        return " ".join(f"{k}({v})" for k, v in f.items())
    return " ".join(out)


MSG_GFX11 = {1: "MSG_INTERRUPT", 2: "MSG_GS", 3: "MSG_GS_DONE", 4: "MSG_SAVEWAVE", 5: "MSG_STALL_WAVE_GEN",
             6: "MSG_HALT_WAVES", 7: "MSG_ORDERED_PS_DONE", 10: "MSG_GS_ALLOC_REQ", 11: "MSG_GET_DOORBELL",
             12: "MSG_GET_DDID", 3 + 0x100: "", 0x80: "MSG_RTN_GET_DOORBELL", 0x81: "MSG_RTN_GET_DDID",
             0x82: "MSG_RTN_GET_TMA", 0x83: "MSG_RTN_GET_REALTIME", 0x84: "MSG_RTN_SAVE_WAVE",
             0x85: "MSG_RTN_GET_TBA", 0x86: "MSG_RTN_GET_SE_AID_ID"}
MSG_GFX9 = {1: "MSG_INTERRUPT", 2: "MSG_GS", 3: "MSG_GS_DONE", 4: "MSG_SAVEWAVE", 5: "MSG_STALL_WAVE_GEN",
            6: "MSG_HALT_WAVES", 7: "MSG_ORDERED_PS_DONE", 8: "MSG_EARLY_PRIM_DEALLOC", 9: "MSG_GS_ALLOC_REQ",
            10: "MSG_GET_DOORBELL", 11: "MSG_GET_DDID", 15: "MSG_SYSMSG"}


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


HWREG_GFX9 = {1: "HW_REG_MODE", 2: "HW_REG_STATUS", 3: "HW_REG_TRAPSTS", 4: "HW_REG_HW_ID", 5: "HW_REG_GPR_ALLOC",
              6: "HW_REG_LDS_ALLOC", 7: "HW_REG_IB_STS", 15: "HW_REG_SH_MEM_BASES", 16: "HW_REG_TBA_LO",
              17: "HW_REG_TBA_HI", 18: "HW_REG_TMA_LO", 19: "HW_REG_TMA_HI", 20: "HW_REG_FLAT_SCR_LO",
              21: "HW_REG_FLAT_SCR_HI", 22: "HW_REG_XNACK_MASK", 23: "HW_REG_HW_ID1", 24: "HW_REG_HW_ID2",
              25: "HW_REG_POPS_PACKER", 29: "HW_REG_SHADER_CYCLES"}
HWREG_GFX11 = {1: "HW_REG_MODE", 2: "HW_REG_STATUS", 3: "HW_REG_TRAPSTS", 5: "HW_REG_GPR_ALLOC",
               6: "HW_REG_LDS_ALLOC", 7: "HW_REG_IB_STS", 15: "HW_REG_SH_MEM_BASES", 18: "HW_REG_PERF_SNAPSHOT_PC_LO",
               19: "HW_REG_PERF_SNAPSHOT_PC_HI", 20: "HW_REG_FLAT_SCR_LO", 21: "HW_REG_FLAT_SCR_HI",
               23: "HW_REG_HW_ID1", 24: "HW_REG_HW_ID2", 26: "HW_REG_EXCP_FLAG_PRIV", 27: "HW_REG_EXCP_FLAG_USER",
               28: "HW_REG_TRAP_CTRL", 29: "HW_REG_SCRATCH_BASE_LO", 30: "HW_REG_SCRATCH_BASE_HI",
               31: "HW_REG_SHADER_CYCLES"}


def hwreg_text(imm: int, fam: str) -> str:
    rid, off, size = imm & 0x3F, (imm >> 6) & 0x1F, ((imm >> 11) & 0x1F) + 1
    name = (HWREG_GFX9 if fam == "gfx9" else HWREG_GFX11).get(rid, str(rid))
    if off == 0 and size == 32 and not name.isdigit():
        return f"hwreg({name})"
    return f"hwreg({name}, {off}, {size})"


def simm16_text(mnem: str, sig: str, imm: int, fam: str) -> str:
    if mnem == "s_waitcnt":
        return waitcnt_text(imm, fam)
    if mnem == "s_delay_alu":
        return delay_alu_text(imm)
    if mnem.startswith("s_sendmsg"):
        return sendmsg_text(imm, fam)
    if mnem == "s_version":
        return sig if imm == 0 else f"0x{imm:x}"
    if "hwreg" in sig:
        return hwreg_text(imm, fam)
    if mnem == "s_barrier_wait":
        return "0" if imm == 0 else f"0x{imm:x}"
    if sig.startswith("0x"):
        return f"0x{imm:x}"
    if sig == "-1" or sig.lstrip("-").isdigit():
        if mnem.startswith(("s_branch", "s_cbranch", "s_call", "s_nop", "s_sleep", "s_setprio", "s_trap")):
            return str(imm)
        return str(imm - 0x10000 if imm & 0x8000 else imm)
    return sig


# ---------------------------------------------------------------------------------------------
def render(mnem, enc, ext, ws, fam, tab, sub, sig_entry=None):
    """-> (mnemonic as printed, operand text)."""
    if sig_entry is None:
        return mnem, ""
    zero, parts = sig_entry
    f = Fields(ws)
    w0 = ws[0]
    if enc == "SOPP":
        txt = "".join(p for p in parts if isinstance(p, str))
        return mnem, simm16_text(mnem, txt, w0 & 0xFFFF, fam) if txt else ""
    fields = tab.fields.get(enc, {})
    literal = None
    nbase = 2 if enc not in ("SOP1", "SOP2", "SOPC", "SOPK", "VOP1", "VOP2", "VOPC") else 1
    if len(ws) > nbase and ext == "":
        literal = ws[-1]
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(p)
            continue
        name, kind, width, half, comment = p
        lsb, nb = fields[name]
        v = f(lsb, nb)
        if name in ("src0", "src1", "src2", "ssrc0", "ssrc1"):
            t = src_text(v, width, fam, literal, kind)
        elif name == "sbase":
            t = scalar_name(2 * v, width, fam) or str(v)
        elif name == "srsrc":
            t = scalar_name(4 * v, width, fam) or str(v)
        elif kind == "s":
            t = (scalar_name(v, width, fam) or src_text(v, width, fam, literal)) if v < 128 else src_text(v, width, fam, literal)
            if name == "saddr" and v in (0x7F, 0x7C) and fam != "gfx12":
                t = "off"
        else:
            t = reg_range(kind, v, width)
        out.append(t + half + comment)
    ops = "".join(out)
    if enc == "SOPK":
        ops = _sopk(mnem, ops, w0 & 0xFFFF, fam, literal)
    return mnem, ops


def _sopk(mnem, ops, imm, fam, literal):
    if "hwreg(" in ops:
        ops = re.sub(r"hwreg\([^)]*\)", hwreg_text(imm, fam), ops)
        if mnem == "s_setreg_imm32_b32":
            ops = re.sub(r", \S+$", f", {literal if literal is not None else 0}", ops) if False else ops.rsplit(", ", 1)[0] + f", {literal:d}" if literal is not None and literal < 65 else ops.rsplit(", ", 1)[0] + f", 0x{literal:x}"
        return ops
    if mnem == "s_version":
        return ops if imm == 0 else f"0x{imm:x}"
    if ops.endswith(", 0x0"):
        return ops[:-3] + f"0x{imm:x}"
    if ops.endswith(", 0"):
        simm = imm - 0x10000 if imm & 0x8000 and not mnem.startswith("s_call") else imm
        return ops[:-1] + str(simm)
    return ops
