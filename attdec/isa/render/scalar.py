"""Scalar encodings: SOP1/SOP2/SOPC/SOPK/SOPP and SMEM, with the symbolic 16-bit immediates
(`s_waitcnt` counters, `s_delay_alu`, depctr fields, `sendmsg(...)`, `hwreg(...)`)."""

from __future__ import annotations

import re

from attdec.isa.categories import DEPCTR, waitcnt_counts
from attdec.isa.encoding import NULL, sext
from attdec.isa.render.operands import Inst, operand_text, scalar_name

SIMM16 = 0xFFFF
INLINE_MAX = 64  # immediates up to here print in decimal, larger ones in hex

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


def waitcnt_text(imm: int, fam: str) -> str:
    """`vmcnt(0) lgkmcnt(1)`: the counters waited on; with none, LLVM prints every field at its maximum."""
    counts = waitcnt_counts(imm, fam)
    out = [f"{c}({v})" for c, (v, mx) in counts.items() if v != mx]
    return " ".join(out) if out else " ".join(f"{c}({v})" for c, (v, _mx) in counts.items())


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
MSG_GS, MSG_GS_DONE = 2, 3
MSG_DEALLOC_VGPRS = 3  # gfx11+: what gfx9 called MSG_GS_DONE
GS_OPS = ("GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT")


def sendmsg_text(imm: int, fam: str) -> str:
    if fam == "gfx9":
        msg, rest = imm & 0xF, imm >> 4
        name = MSG_GFX9.get(msg)
    else:
        msg, rest = imm & 0xFF, imm >> 8
        name = "MSG_DEALLOC_VGPRS" if msg == MSG_DEALLOC_VGPRS else MSG_GFX11.get(msg)
    if name and rest == 0:
        return f"sendmsg({name})"
    if name and msg in (MSG_GS, MSG_GS_DONE) and fam == "gfx9":
        op, stream = rest & 3, (rest >> 4) & 3
        return f"sendmsg({name}, {GS_OPS[op]}, {stream})" if stream else f"sendmsg({name}, {GS_OPS[op]})"
    return f"sendmsg({msg}, {(rest) & 7}, {(rest >> 3) & 3})" if rest else f"sendmsg({msg})"


def sendmsg_rtn_text(v: int, fam: str) -> str:
    name = MSG_RTN.get(v) or ("MSG_DEALLOC_VGPRS" if v == MSG_DEALLOC_VGPRS and fam != "gfx9" else MSG_GFX11.get(v))
    return f"sendmsg({name})" if name else f"sendmsg({v}, 0, 0)"


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


def depctr_text(imm: int, fam: str) -> str:
    fields = DEPCTR if fam == "gfx12" else DEPCTR[1:]
    known = 0
    for _, lsb, nb in fields:
        known |= ((1 << nb) - 1) << lsb
    if imm & ~known & SIMM16:
        return f"0x{imm:x}"
    vals = [(n, (imm >> lsb) & ((1 << nb) - 1), (1 << nb) - 1) for n, lsb, nb in fields]
    out = [f"{n}({v})" for n, v, mx in vals if v != mx]
    return " ".join(out) if out else " ".join(f"{n}({v})" for n, v, mx in vals)


def simm16_text(mnem: str, sig: str, imm: int, fam: str) -> str:
    """A SOPP immediate as LLVM prints it; `sig` is the probed text for an all-zero immediate."""
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
        return str(imm) if imm <= INLINE_MAX else f"0x{imm:x}"
    return sig


# ---- renderers ----------------------------------------------------------------------------------
def sopp(x: Inst) -> str:
    imm = x.ws[0] & SIMM16
    txt = "".join(p for p in x.parts if isinstance(p, str))
    if not txt:  # LLVM shows an immediate the opcode does not use only when it is not zero
        return str(imm) if imm else ""
    return simm16_text(x.mnem, txt, imm, x.fam)


def sop(x: Inst) -> str:
    """SOP1 / SOP2 / SOPC."""
    ops = with_constant_k(x, operand_text(x))
    if x.mnem.startswith("s_sendmsg_rtn"):
        ops = re.sub(r"sendmsg\([^)]*\)", sendmsg_rtn_text(x.ws[0] & 0xFF, x.fam), ops)
    return ops


def with_constant_k(x: Inst, ops: str) -> str:
    """s_/v_ fmamk, fmaak, madmk, madak: the constant K prints as the whole literal dword."""
    if x.literal is not None and re.search(r"_(fmamk|fmaak|madmk|madak)_", x.mnem + "_"):
        return re.sub(r"(?<=, )0x0(?=,|$)", f"0x{x.ws[-1]:x}", ops, count=1)
    return ops


def sopk(x: Inst) -> str:
    ops = operand_text(x)
    mnem, imm, literal = x.mnem, x.ws[0] & SIMM16, x.literal
    if "hwreg(" in ops:
        ops = re.sub(r"hwreg\([^)]*\)", hwreg_text(imm, x.fam), ops)
        if mnem == "s_setreg_imm32_b32" and literal is not None:
            ops = ops.rsplit(", ", 1)[0] + ", " + (str(literal) if literal <= INLINE_MAX else f"0x{literal:x}")
        return ops
    if mnem == "s_version":
        return ops if imm == 0 else f"0x{imm:x}"
    if ops.endswith(", 0x0"):
        return ops[:-3] + f"0x{imm:x}"
    if ops.endswith(", 0"):
        simm = imm if mnem.startswith("s_call") else sext(imm, 16)
        return ops[:-1] + str(simm)
    return ops


def smem(x: Inst) -> str:
    parts, fam = x.parts, x.fam
    if not any(not isinstance(p, str) for p in parts) and "".join(parts).strip() == "":
        return ""
    if fam == "gfx9" and not any(p[0] == "sbase" for p in x.placeholders()):
        return ", ".join(scalar_name(x.field(p[0]), p[2], fam) or "" for p in x.placeholders())
    regs = []
    for name, _kind, width, _half, _comment in x.placeholders():
        v = x.field(name)
        regs.append(scalar_name(2 * v, width, fam) if name == "sbase" else scalar_name(v, width, fam) or str(v))
    if fam == "gfx9":
        return _smem_gfx9(x, regs)
    return _smem_gfx11(x, regs)


def _smem_gfx9(x: Inst, regs: list) -> str:
    imm, soe = x(17, 1), x(14, 1)
    off = x(32, 21)
    if soe:
        so = scalar_name(x(57, 7), 1, x.fam) or ""
        tail = f"{so} offset:0x{off:x}" if imm and off else so
    elif imm:
        tail = f"0x{off:x}"
    else:
        tail = scalar_name(off & 0x7F, 1, x.fam) or str(off)
    return ", ".join([*regs, tail]) + " glc" * x(16, 1) + " nv" * x(15, 1)


def _smem_gfx11(x: Inst, regs: list) -> str:
    """gfx11 / gfx12 SMEM: signed offset (21 / 24 bits), soffset (null = none), cache bits or th/scope."""
    from attdec.isa.render.memory import th_scope

    fam, mnem = x.fam, x.mnem
    nb = 21 if fam == "gfx11" else 24
    off = sext(x(32, nb), nb)
    so = x(57, 7)
    offs = f"0x{off:x}" if off >= 0 else f"-0x{-off:x}"
    if so == NULL[fam]:
        tail = "null" if off == 0 and fam == "gfx11" else offs
    else:
        tail = (scalar_name(so, 1, fam) or "") + (f" offset:{offs}" if off else "")
    if mnem.startswith("s_atc_probe"):
        regs = [str(x(6, 7)), *regs[1:]]
    if mnem.startswith(("s_prefetch", "s_buffer_prefetch")):
        regs = [r for p, r in zip(x.placeholders(), regs) if p[0] != "sdata"]
        return ", ".join([*regs, offs, scalar_name(so, 1, fam) or str(so), str(x(6, 7))])
    if fam == "gfx11":
        mods = " glc" * x(14, 1) + " dlc" * x(13, 1)
    else:
        mods = th_scope(mnem, x(23, 2), x(21, 2))
    return ", ".join([*regs, tail]) + mods
