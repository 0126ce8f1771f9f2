"""What a wait instruction waits for: the counters each instruction adds to, and how each counter retires.

A wave's wait counters count operations it issued that have not finished. A wait (`s_waitcnt vmcnt(1)`,
`s_wait_loadcnt 0x0`, `s_wait_alu 0xfffd`) blocks until a counter is at or below a count; *which*
operations it waited for follows from the counter's ordering rule (docs/wait-attribution.md, with
sources):

* `waits_of(text, tgt)`: counter -> count of a wait instruction: the memory counters
  (`categories.parse_wait`), gfx12 `s_wait_idle` (every counter to 0), and the ALU dependency
  counters of gfx10+ `s_waitcnt_depctr` / gfx12 `s_wait_alu` (`va_vdst`, `va_sdst`, `va_ssrc`,
  `va_vcc`, `vm_vsrc`, `sa_sdst`).
* `events_of(text, tgt)`: counter -> event kind an instruction adds to that counter when it
  issues. Operations of one kind retire in issue order; a counter holding two kinds, or any kind in
  `OUT_OF_ORDER`, retires in an unknown order, and only a wait down to 0 then names its operations
  (LLVM SIInsertWaitcnts `counterOutOfOrder`).
* `capacity(counter)`: most operations a counter can hold, where that bounds what a wait names.
* `vector_registers(text)`, `destination_registers(text)`, `load_destination(text, tgt)`: the
  VGPRs/AGPRs an instruction names, those of its first operand, and those a VMEM load writes.

Pure functions of the instruction text, like the rest of attdec.isa.
"""

from __future__ import annotations

import re

from attdec.isa import categories as C
from attdec.isa.categories import DEPCTR, WAITCNT_FIELDS, InstClass
from attdec.model.target import Target

# Kinds whose operations retire out of issue order even among themselves: scalar memory returns out of
# order, and a FLAT access may be served by LDS or by memory, so it can overtake either.
OUT_OF_ORDER = frozenset({"smem", "flat"})

# The ALU dependency counters of s_waitcnt_depctr / s_wait_alu (isa-decoding.md §4.3), field -> width.
DEPENDENCY = {name.removeprefix("depctr_"): width for name, _lsb, width in DEPCTR if name != "depctr_hold_cnt"}
_DEPCTR_FIELDS = [(name.removeprefix("depctr_"), lsb, width) for name, lsb, width in DEPCTR]
_NAMED = re.compile(r"(?:depctr_)?([a-z_]+)\s*\(\s*(\d{1,10})\s*\)")  # text from code.json: any digits
_SGPR = re.compile(r"^(s\d|s\[|vcc|exec|ttmp|m0|flat_scratch|xnack)")
_VCC = re.compile(r"^vcc(_lo|_hi)?$")


def _operands(text: str) -> list[str]:
    parts = text.strip().split(None, 1)
    return [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []


def _depctr(text: str) -> dict[str, int]:
    """Dependency counters an `s_waitcnt_depctr` / `s_wait_alu` waits on (a field at its maximum: no wait)."""
    ops = text.strip().split(None, 1)
    arg = ops[1].strip().lower() if len(ops) > 1 else ""
    named = {n: int(v) for n, v in _NAMED.findall(arg) if n in DEPENDENCY}
    if named:
        return {n: v for n, v in named.items() if v < (1 << DEPENDENCY[n]) - 1}
    try:
        imm = int(arg.split(",")[-1].strip(), 0)
    except ValueError:
        return {}
    out = {}
    for name, lsb, width in _DEPCTR_FIELDS:
        value = (imm >> lsb) & ((1 << width) - 1)
        if name in DEPENDENCY and value != (1 << width) - 1:
            out[name] = value
    return out


def waits_of(text: str, tgt: Target) -> dict[str, int]:
    """Every counter the instruction waits on -> the count it waits down to ({} if it is not a wait).

    `s_waitcnt vmcnt(0) lgkmcnt(1)` -> {'vmcnt': 0, 'lgkmcnt': 1}; gfx12 `s_wait_idle` -> every counter 0;
    `s_wait_alu 0xfffd` -> {'va_vcc': 0}.
    """
    m = C.mnemonic_of(text)
    if m in ("s_waitcnt_depctr", "s_wait_alu"):
        return _depctr(text) if tgt.family != "gfx9" else {}
    if m == "s_wait_idle":
        return dict.fromkeys(tgt.counters, 0)
    return C.parse_wait(text, tgt)


def _writes_sgpr(ops: list[str], m: str) -> bool:
    # VALU that writes a scalar: its destination, or the carry-out of the _co_ forms (v_add_co_u32 v1, vcc, ...)
    return bool(ops) and (bool(_SGPR.match(ops[0])) or ("_co_" in m and len(ops) > 1 and bool(_SGPR.match(ops[1]))))


def _writes_vcc(ops: list[str], m: str) -> bool:
    return bool(ops) and (bool(_VCC.match(ops[0])) or ("_co_" in m and len(ops) > 1 and bool(_VCC.match(ops[1]))))


def events_of(text: str, tgt: Target) -> dict[str, str]:
    """Counter -> event kind the instruction adds to it when issued ({} for most ALU work and for waits).

    Memory kinds: "vmem" (VMEM loads; on gfx9 also stores, which share vmcnt in order; on gfx10+ stores
    on vscnt/storecnt), "lds", "gds", "msg", "export", "param" (LDS parameter loads on expcnt), and the
    out-of-order kinds "smem" and "flat". ALU dependency kinds (gfx10+): "valu", "salu", "vmem" for the
    counters of `s_waitcnt_depctr` / `s_wait_alu`.
    """
    fam = tgt.family
    m = C.mnemonic_of(text)
    cat = C.class_of(text, tgt)
    out: dict[str, str] = {}
    counters = C.counters_incremented(text, tgt)
    for counter in counters:
        if cat == InstClass.FLAT:
            kind = "flat"
        elif cat == InstClass.SMEM:
            kind = "smem"
        elif cat == InstClass.MESSAGE or counter == "kmcnt":
            kind = "msg"
        elif cat in (InstClass.LDS, InstClass.BARRIER):  # GDS/GWS count on both the LDS counter and expcnt
            if counter == "expcnt":
                kind = "gds" if len(counters) > 1 else "param"
            else:
                kind = "gds" if "expcnt" in counters else "lds"
        elif cat == InstClass.EXPORT:
            kind = "export"
        else:
            kind = "vmem"
        out[counter] = kind
    if fam == "gfx9":
        return out
    ops = _operands(text)
    if cat in (InstClass.VALU, InstClass.MFMA):
        if ops and ops[0].startswith("v"):
            out["va_vdst"] = "valu"
        if _writes_sgpr(ops, m):
            out["va_sdst"] = "valu"
        if _writes_vcc(ops, m):
            out["va_vcc"] = "valu"
        if any(_SGPR.match(o) for o in ops[2 if "_co_" in m else 1 :]):
            out["va_ssrc"] = "valu"
    elif cat == InstClass.SALU and ops and _SGPR.match(ops[0]):
        out["sa_sdst"] = "salu"
    elif cat in (InstClass.VMEM_LOAD, InstClass.VMEM_STORE, InstClass.FLAT, InstClass.LDS):
        out["vm_vsrc"] = "vmem"
    return out


def capacity(counter: str) -> int | None:
    """Most operations `counter` can hold, when that bounds what a wait names (None: unbounded).

    The ALU dependency counters are as wide as their depctr field; expcnt (3 bits) is the one memory
    counter LLVM treats as saturating (SIInsertWaitcnts `setScoreUB` keeps at most that many pending). Any
    older operation has retired."""
    if counter in DEPENDENCY:
        return (1 << DEPENDENCY[counter]) - 1
    if counter == "expcnt":  # the same 3-bit field in every family's s_waitcnt
        return (1 << sum(width for _, width in WAITCNT_FIELDS["gfx9"]["expcnt"])) - 1
    return None


# v7, a[0:3], v[12:15]: a VGPR or AGPR operand (not s, not vcc/exec, not a modifier such as `offen`)
_VREG = re.compile(r"(?<![\w.])([va])(?:(\d{1,4})(?![\d\w])|\[(\d{1,4}):(\d{1,4})\])")
# instructions that may reach any VGPR: relative addressing (M0 / gpr-index mode) and calls
_ANY_VGPR = ("v_movrel", "s_set_gpr_idx", "s_swappc", "s_setpc", "s_call")


def vector_registers(text: str) -> frozenset[tuple[str, int]] | None:
    """The VGPRs ("v", n) and AGPRs ("a", n) an instruction names, read or written; None when it may
    reach any of them (relative addressing, calls)."""
    if C.mnemonic_of(text).startswith(_ANY_VGPR):
        return None
    parts = text.strip().split(None, 1)
    return _vregs(parts[1] if len(parts) > 1 else "")


def _vregs(operands: str) -> frozenset[tuple[str, int]]:
    out: set[tuple[str, int]] = set()
    for kind, one, lo, hi in _VREG.findall(operands):
        out.update([(kind, int(one))] if one else ((kind, i) for i in range(int(lo), int(hi) + 1)))
    return frozenset(out)


def load_destination(text: str, tgt: Target) -> frozenset[tuple[str, int]] | None:
    """The VGPRs/AGPRs a VMEM load writes (its first operand); None for anything else, for an atomic (it
    also writes memory) and for a load into LDS (`lds` modifier, `*_load_lds_*`), which other waves read."""
    m = C.mnemonic_of(text)
    if C.class_of(text, tgt) != InstClass.VMEM_LOAD or "lds" in m or "_atomic" in m:
        return None
    ops = _operands(text)
    if not ops or any(w == "lds" for w in ops[-1].split()):
        return None
    return destination_registers(text) or None


def destination_registers(text: str) -> frozenset[tuple[str, int]]:
    """The VGPRs/AGPRs of an instruction's first operand: what a VALU, MFMA or load writes."""
    ops = _operands(text)
    return _vregs(ops[0]) if ops else frozenset()
