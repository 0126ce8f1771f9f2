"""The code listing the PC walk sees: attdec.isa's disassembly, with undecodable words read the way the
official decoder's ISA source read them for the reference captures.

attdec.isa mirrors llvm-objdump, which prints a word as a 4-byte `.long` when LLVM rejects it (an
unknown opcode, or a known one whose unused operand fields are not zero). The listing behind
oracle.json instead decoded such words by their encoding class: a known opcode keeps its mnemonic and
length, an unknown opcode becomes `s_unknown` / `v_unknown` / `ds_unknown` ... with the encoding's base
length (oracle.json `disassembly.resynced`). The walk depends on both the text (line category) and
the length (next PC), so it needs that reading to follow discover_ops-style kernels.

This belongs in attdec.isa as a disassembly option; it lives here until it moves there.
"""
from __future__ import annotations

import struct

from attdec.isa import decoder as D

UNKNOWN_NAME = {
    "SOP1": "s_unknown", "SOP2": "s_unknown", "SOPC": "s_unknown", "SOPK": "s_unknown", "SOPP": "s_unknown",
    "SMEM": "s_unknown", "VOP1": "v_unknown", "VOP2": "v_unknown", "VOPC": "v_unknown", "VOP3": "v_unknown",
    "VOP3P": "v_unknown", "VOPD": "v_unknown", "VINTERP": "v_unknown", "VINTRP": "v_unknown", "DS": "ds_unknown",
    "FLAT": "flat_unknown", "GLOBAL": "global_unknown", "SCRATCH": "scratch_unknown", "VFLAT": "flat_unknown",
    "VGLOBAL": "global_unknown", "VSCRATCH": "scratch_unknown", "MUBUF": "buffer_unknown",
    "MTBUF": "tbuffer_unknown", "VBUFFER": "buffer_unknown", "MIMG": "image_unknown", "VIMAGE": "image_unknown",
    "VSAMPLE": "image_unknown", "EXP": "exp_unknown", "VEXPORT": "exp_unknown", "LDSDIR": "lds_unknown",
    "VDSDIR": "ds_unknown",
}


class _Lenient:
    """A table view without the "unused operand fields must be zero" rule."""

    def __init__(self, tab):
        self._tab = tab

    def __getattr__(self, name):
        return getattr(self._tab, name)

    def sig(self, enc, op):
        s = self._tab.sig(enc, op)
        return ((),) + tuple(s[1:]) if s else s


def disassemble_for_walk(code: bytes, arch: str, vaddr: int = 0) -> list:
    tab = D.table_for(arch)
    lenient = _Lenient(tab)
    enc_of = D.ENCODING_OF[tab.family]
    n = len(code) // 4
    words = struct.unpack_from(f"<{n}I", code, 0)
    out = []
    i = 0
    while i < n:
        addr = vaddr + 4 * i
        ins = D.decode_one(words, i, n, addr, tab)
        if ins.is_unknown:
            enc = enc_of(words[i])
            if enc is not None:
                again = D.decode_one(words, i, n, addr, lenient)
                if not again.is_unknown:
                    ins = again
                else:
                    size = min(D.BASE_SIZE.get(enc, 8), 4 * (n - i))
                    name = UNKNOWN_NAME.get(enc, "unknown")
                    ins = D.Instruction(addr, size, name, "", name, None, "", enc, tuple(words[i:i + size // 4]))
        out.append(ins)
        i += max(ins.size, 4) // 4
    return out
