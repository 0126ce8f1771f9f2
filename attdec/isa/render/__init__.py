"""Operand text, printed the way llvm-objdump 22 prints it.

Operand order, register widths and which field feeds which operand come from the probed signature
tables (`tables/<target>.sig.json.gz`, made by tools/oracles/probe_isa.py); `operands` formats field values
(register names, inline constants, literals), and one renderer per encoding group (`scalar`,
`vector`, `memory`) adds that encoding's modifier bits.
"""

from __future__ import annotations

from attdec.isa.encoding import is_gfx9_vop3p
from attdec.isa.render import memory, scalar, vector
from attdec.isa.render.operands import Inst, Signature, operand_text, parse_signature

__all__ = ["parse_signature", "render"]

# Encoding -> renderer (Inst -> operand text including modifiers).
RENDERERS = {
    "SOPP": scalar.sopp,
    "SOPK": scalar.sopk,
    "SOP1": scalar.sop,
    "SOP2": scalar.sop,
    "SOPC": scalar.sop,
    "SMEM": scalar.smem,
    "VOP1": vector.vop,
    "VOP2": vector.vop,
    "VOPC": vector.vop,
    "VOP3": vector.vop3,
    "VOP3P": vector.vop3p,
    "VINTERP": vector.vinterp,
    "DS": memory.ds,
    "FLAT": memory.flat,
    "GLOBAL": memory.flat,
    "SCRATCH": memory.flat,
    "VFLAT": memory.vflat,
    "VGLOBAL": memory.vflat,
    "VSCRATCH": memory.vflat,
    "MUBUF": memory.mubuf,
    "MTBUF": memory.mtbuf,
    "VBUFFER": memory.vbuffer,
    "MIMG": memory.mimg,
    "VIMAGE": memory.vimage,
    "VSAMPLE": memory.vimage,
    "LDSDIR": memory.ldsdir,
    "VDSDIR": memory.ldsdir,
    # EXP / VEXPORT / VINTRP: operands only
}
EXT_FORMS = ("dpp", "dpp8", "sdwa")


def render(
    mnem: str, enc: str, ext: str, ws: tuple, tab, sub: str | None = None, sig: Signature | None = None
) -> tuple[str, str]:
    """-> (mnemonic as printed, operand text). `ext` names what follows the base encoding ("literal",
    "dpp", "dpp8", "sdwa", ...); `sub` is the VOPD Y mnemonic; `sig` is `Table.sig(enc, op)`."""
    if enc == "VOPD":
        return mnem, vector.vopd_text(mnem, sub or "", ws, tab.family)
    if sig is None:
        return mnem, ""
    if ext == "scale":
        return mnem, vector.mfma_scale(ws, tab)
    if enc == "VOP3P" or (enc == "VOP3" and tab.family == "gfx9" and is_gfx9_vop3p(ws[0])):
        x = Inst(mnem, enc, ext, ws, tab, sig, vector.OPSEL_HI_BITS)
    else:
        x = Inst(mnem, enc, ext, ws, tab, sig)
    if ext in EXT_FORMS:
        return vector.ext_form(x)
    return mnem, RENDERERS.get(enc, operand_text)(x)
