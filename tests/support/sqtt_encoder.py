#!/usr/bin/env python3
"""Synthetic SQTT streams for tests, built from attdec's packet tables (attdec/decoders/*/packets.py).

`Gfx9Encoder` writes what a CDNA trace unit would: the 8-byte software header, then 16-bit little-endian
words, every token 1-4 words long (sqtt-format.md §1.3, §3). `RdnaEncoder` writes gfx10/11/12 streams:
nibble-aligned tokens, low bits first, starting with a HEADER (§2). Both keep the time the decoders will
give the next token (`time`), so a test can place tokens at chosen times (`advance`, `at`), and name every
field as the tables do. They do not model the hardware: they exist so that every token type and every
rule can be exercised, while only real captures prove agreement with AMD's decoder.

    python3 -m tests.support.sqtt_encoder OUT.att     # writes the gfx9 demo stream (every token type)
"""

from __future__ import annotations

import struct
import sys

from attdec.decoders.gfx9.packets import GFX9, HEADER, MiscKind
from attdec.decoders.rdna.packets import FORMATS, entry_pc
from attdec.decoders.userdata import (
    ADDR_HI,
    ADDR_LO,
    ID_LO,
    OP_CODEOBJ,
    ROC_MAGIC,
    SIZE_LO,
    TAIL,
    USERDATA_2,
)

COMPUTE_PGM_LO, COMPUTE_PGM_HI = 0x0C, 0x0D


def roc_marker_words(co_id: int, addr: int, size: int, unload: bool = False) -> list[int]:
    """USERDATA_2 words announcing one code-object load (sqtt-format.md §4): activation, then a header
    word (opcode CODEOBJ, type) and a payload word for each part of the marker."""
    words = [ROC_MAGIC]
    for typ, val in (
        (ID_LO, co_id),
        (ADDR_LO, addr & 0xFFFFFFFF),
        (ADDR_HI, addr >> 32),
        (SIZE_LO, size),
        (TAIL, int(unload)),
    ):
        words += [OP_CODEOBJ | typ << 8, val]
    return words


# ----------------------------------------------------------------------------------------------------------
# RDNA
# ----------------------------------------------------------------------------------------------------------
class RdnaEncoder:
    """Builds an RDNA stream of generation 10, 11 or 12 token by token; `header` fields go to its HEADER
    (target SIMD/WGP/SA, dp_rate code, ...). `time` is the time the decoders give the last token."""

    def __init__(self, generation: int = 11, header: bool = True, **header_fields: int):
        self.fmt = FORMATS[generation]
        self.table = self.fmt.table
        self.value = 0
        self.bits = 0
        self.time = 0
        if header:
            version = {10: 2, 11: 3, 12: 4}[generation]
            self.token("HEADER", **{"version": version, **header_fields})

    # -- raw -------------------------------------------------------------------------------------------------
    def raw(self, value: int, nbits: int) -> RdnaEncoder:
        """Any bits (garbage, an unassigned id): the decoders' time is not tracked for them."""
        assert nbits % 4 == 0 and 0 <= value < (1 << nbits)
        self.value |= value << self.bits
        self.bits += nbits
        return self

    def token(self, name: str, **fields: int) -> RdnaEncoder:
        """One token of type `name` with these fields (the others 0); its delta moves `time`."""
        p = self.table[name]
        self.raw(p.encode(**fields), p.bits)
        if p.delta is not None:
            self.time += fields.get("delta", 0) + p.delta_bias
        elif name == "TIMESTAMP" and "rt" in p and not fields.get("rt"):
            self.time += fields.get("value", 0)
        return self

    def data(self, pad: int = 16, whole_lines: bool = True) -> bytes:
        """The stream, `pad` zero bytes (NOPs) after it, in whole 32-byte lines as the trace unit writes."""
        n = (self.bits + 7) // 8 + pad
        if whole_lines:
            n = (n + 31) // 32 * 32
        return self.value.to_bytes(n, "little")

    # -- time ------------------------------------------------------------------------------------------------
    def nop(self, n: int = 1) -> RdnaEncoder:
        return self.raw(0, 4 * n)

    def advance(self, cycles: int) -> RdnaEncoder:
        """Move time forward by `cycles` (at least 4, or 0) with TIME tokens (4..19 cycles each)."""
        assert cycles == 0 or cycles >= 4
        while cycles:
            step = min(cycles, 19)
            if 0 < cycles - step < 4:  # leave at least 4 for the last TIME token
                step = cycles - 4
            self.token("TIME", delta=step - 4)
            cycles -= step
        return self

    def at(self, t: int) -> RdnaEncoder:
        return self.advance(t - self.time)

    # -- registers -------------------------------------------------------------------------------------------
    def reg(self, addr: int, data: int, cs: bool = False, pipe: int = 0, me: int = 0, delta: int = 0) -> RdnaEncoder:
        return self.token("REG", delta=delta, pipe=pipe, me=me, cs=int(cs), addr=addr, data=data)

    def kernel_entry(self, pc: int, pipe: int = 0, me: int = 0) -> RdnaEncoder:
        """COMPUTE_PGM_LO/HI writes so that waves started on (me, pipe) begin at byte address pc."""
        lo, hi = (pc >> 8) & 0xFFFFFFFF, pc >> 40
        assert entry_pc(lo, hi) == pc, "entry PCs are 256-byte aligned"
        self.reg(COMPUTE_PGM_LO, lo, cs=True, pipe=pipe, me=me)
        return self.reg(COMPUTE_PGM_HI, hi, cs=True, pipe=pipe, me=me)

    def userdata(self, words: list[int]) -> RdnaEncoder:
        """USERDATA_2 writes, a TIME token after each."""
        for w in words:
            self.reg(USERDATA_2, w).token("TIME", delta=3)
        return self

    # -- waves and instructions ------------------------------------------------------------------------------
    def wave_start(self, simd: int, slot: int, wgp: int = 0, sa: int = 0, count: int = 0, **more: int):
        return self.token("WAVE_START", simd=simd, slot=slot, wgp=wgp, sa=sa, count=count, **more)

    def wave_end(self, simd: int, slot: int, wgp: int = 0, sa: int = 0, delta: int = 0) -> RdnaEncoder:
        return self.token("WAVE_END", simd=simd, slot=slot, wgp=wgp, sa=sa, delta=delta)

    def inst(self, slot: int, op: int | str, delta: int = 0) -> RdnaEncoder:
        """INST of opcode `op` (a number or its name in the family's opcode table)."""
        if isinstance(op, str):
            op = next(k for k, v in self.fmt.ops.items() if v.name == op)
        return self.token("INST", slot=slot, op=op, delta=delta)

    def valu(self, slot: int, delta: int = 0) -> RdnaEncoder:
        return self.token("VALU_INST", slot=slot, delta=delta)

    def imm_one(self, slot: int, delta: int = 0) -> RdnaEncoder:
        return self.token("IMM_ONE", slot=slot, delta=delta)

    def immediate(self, mask: int, delta: int = 0) -> RdnaEncoder:
        return self.token("IMMEDIATE", mask=mask, delta=delta)

    def wave_ready(self, mask: int, delta: int = 0) -> RdnaEncoder:
        return self.token("WAVE_READY", mask=mask, delta=delta)

    def new_pc(self, slot: int, pc: int, delta: int = 0) -> RdnaEncoder:
        """NEW_PC: byte address pc (a multiple of 4), stored in dwords."""
        return self.token("NEW_PC", slot=slot, pc_dw=pc >> 2, delta=delta)


# ----------------------------------------------------------------------------------------------------------
# gfx9
# ----------------------------------------------------------------------------------------------------------
def header(
    target_cu: int = 0,
    version2: int = 6,
    simd_mask: int = 0xF,
    seid: int = 0,
    legacy: int = 0x11,
    double_buffer: int = 0,
) -> bytes:
    """The gfx9 software header (§1.3)."""
    h = HEADER.encode(
        legacy=legacy,
        version2=version2,
        simd_mask=simd_mask,
        target_cu=target_cu & 0x1F,
        seid=seid & 0x3F,
        double_buffer=double_buffer,
    )
    return struct.pack("<Q", h)


class Gfx9Encoder:
    """Builds one gfx9 SE buffer token by token and keeps the decoder-visible time alongside (`time`).
    Each token method takes `plus4` (bit 4, the "+4 cycles" delta); `advance()` emits MISC TIME tokens."""

    def __init__(self, target_cu: int = 0, **hdr):
        self.head = header(target_cu, **hdr)
        self.words: list[int] = []
        self.time = 0  # the time the official decoder will give the next token with no delta
        self.base = 0  # §3.2: set at the first resync

    # -- raw --------------------------------------------------------------------------------------------
    def token(self, ttype: int, value: int = 0, plus4: bool = False) -> Gfx9Encoder:
        """Any token: `value` holds the fields above the type nibble (bit 4 is set from plus4)."""
        v = (value & ~0x1F) | (ttype & 15) | (0x10 if plus4 else 0)
        if ttype == 0:
            v = value | ttype
        p = GFX9.at(ttype & 15)
        for k in range(p.bits // 16):  # type: ignore[union-attr]
            self.words.append((v >> (16 * k)) & 0xFFFF)
        if ttype != 0 and plus4:
            self.time += 4
        return self

    def put(self, name: str, plus4: bool = False, **fields: int) -> Gfx9Encoder:
        """A token of type `name` with these fields, through the packet table."""
        p = GFX9[name]
        return self.token(p.id, p.encode(**fields), plus4)

    def data(self) -> bytes:
        return self.head + struct.pack(f"<{len(self.words)}H", *self.words)

    # -- time -------------------------------------------------------------------------------------------
    def misc(self, misc_type: int = 0, delta: int = 0, sh: int = 0) -> Gfx9Encoder:
        """MISC: delta in 4-cycle units [4..11], sh [12], subtype [13..15]."""
        assert 0 <= delta <= 255
        self.time += 4 * delta
        return self.token(0, GFX9["MISC"].encode(delta=delta, sh=sh, kind=misc_type))

    def advance(self, cycles: int) -> Gfx9Encoder:
        """Move time forward by `cycles` (a multiple of 4) with MISC TIME tokens."""
        assert cycles % 4 == 0 and cycles >= 0
        units = cycles // 4
        while units:
            step = min(units, 255)
            self.misc(MiscKind.TIME, step)
            units -= step
        return self

    def at(self, t: int) -> Gfx9Encoder:
        """Advance to absolute time t."""
        return self.advance(t - self.time)

    def time_reset(self, delta: int = 0) -> Gfx9Encoder:
        return self.misc(MiscKind.TIME_RESET, delta)

    def resync(self, ts: int, delta: int = 0) -> Gfx9Encoder:
        """TIME_RESET then TIMESTAMP ts; tracks the re-anchored time the way §3.2 describes."""
        self.time_reset(delta)
        self.timestamp(ts)
        if self.base == 0:
            self.base = ts - self.time + 4
        if ts > self.base:
            self.time = (ts - self.base) & ~3
        return self

    def timestamp(self, ts: int, plus4: bool = False) -> Gfx9Encoder:
        """TIMESTAMP: 48-bit counter at [16..63]. Its own delta is only applied when no TIME_RESET consumes it."""
        return self.put("TIMESTAMP", plus4, timestamp=ts)

    # -- waves ------------------------------------------------------------------------------------------
    def wave_start(self, cu, simd, slot, sh=0, count=0, me=0, pipe=0, tg=0, plus4=False):
        return self.put("WAVE_START", plus4, cu=cu, simd=simd, slot=slot, sh=sh, count=count, me=me, pipe=pipe, tg=tg)

    def wave_alloc(self, cu, simd, slot, sh=0, plus4=False):
        return self.put("WAVE_ALLOC", plus4, cu=cu, simd=simd, slot=slot, sh=sh)

    def wave_end(self, cu, simd, slot, sh=0, plus4=False):
        return self.put("WAVE_END", plus4, cu=cu, simd=simd, slot=slot, sh=sh)

    # -- instructions -----------------------------------------------------------------------------------
    def issue(self, simd: int, status: dict[int, int], plus4=False):
        """ISSUE: per wave slot 0..9 a 2-bit status (1 stall, 2 instruction, 3 immediate)."""
        v = 0
        for slot, st in status.items():
            v |= (st & 3) << (2 * slot)
        return self.put("ISSUE", plus4, simd=simd, status=v)

    def inst(self, simd: int, slot: int, itype: int, plus4=False):
        return self.put("INST", plus4, slot=slot, simd=simd, kind=itype)

    def inst_pc(self, simd: int, slot: int, pc: int, err: int = 0, plus4=False):
        """INST_PC: byte address pc (a multiple of 4), stored in dwords at [16..63]."""
        return self.put("INST_PC", plus4, slot=slot, simd=simd, err=err, pc_dw=pc >> 2)

    # -- registers and the rest -------------------------------------------------------------------------
    def reg_cs(self, addr: int, data: int, me: int = 1, pipe: int = 0, priv: bool = False, plus4=False):
        """REG_CS(_PRIV): the official decoder reads ME as (field + 1) & 1, so field 1 means ME 0."""
        return self.put("REG_CS_PRIV" if priv else "REG_CS", plus4, pipe=pipe, me=me, addr=addr, data=data)

    def kernel_entry(self, pc: int, me_field: int = 1, pipe: int = 0):
        """PGM_LO/HI writes so that waves on (me, pipe) start at byte address pc (256-byte aligned)."""
        self.reg_cs(COMPUTE_PGM_LO, (pc >> 8) & 0xFFFFFFFF, me_field, pipe)
        return self.reg_cs(COMPUTE_PGM_HI, (pc >> 40) & 0xFFFFFFFF, me_field, pipe)

    def reg(self, addr: int, data: int, enable: int = 1, plus4=False):
        return self.put("REG", plus4, enable=enable, addr=addr, data=data)

    def userdata(self, words: list[int]) -> Gfx9Encoder:
        """USERDATA_2 writes, a MISC TIME token after each."""
        for w in words:
            self.reg(USERDATA_2, w).misc(MiscKind.TIME, 1)
        return self

    def shaderdata(self, cu, simd, slot, data, plus4=False):
        return self.put("SHADERDATA", plus4, cu=cu, simd=simd, slot=slot, data=data)

    def perf(self, cu, bank, counters=(0, 0, 0, 0), plus4=False):
        fields = {f"counter{k}": c & 0x1FFF for k, c in enumerate(counters)}
        return self.put("PERF", plus4, cu=cu, bank=bank, **fields)

    def event(self, kind: int = 7, plus4=False):
        """EVENT (7), EVENT_CS (8), EVENT_GFX1 (9): 16-bit, not decoded by the official decoder."""
        return self.token(kind, 0, plus4)


def demo() -> Gfx9Encoder:
    """A stream with every token type, two traced waves (ISSUE/INST, stalls, immediates, a PC token), an
    untraced wave on another CU, and a time reset."""
    e = Gfx9Encoder(target_cu=0)
    e.kernel_entry(0x1000)
    e.advance(8).wave_start(0, 0, 0).wave_start(0, 1, 3, plus4=True).wave_start(2, 0, 0)
    e.wave_alloc(0, 0, 1).event(7).event(8).event(9).perf(0, 0, (1, 2, 3, 4)).shaderdata(0, 0, 0, 0xABCD)
    e.reg(0xC342, 0x1234).reg_cs(0x12, 0x55, priv=True)
    e.advance(16).issue(0, {0: 2}).inst(0, 0, 1)  # SALU
    e.advance(4).issue(0, {0: 1}).advance(12).issue(0, {0: 2})  # stall, then VALU
    e.advance(4).inst(0, 0, 5)
    e.advance(4).issue(0, {0: 3})  # immediate (s_waitcnt)
    e.issue(1, {3: 2}).inst(1, 3, 7)  # s_setpc-like: PC type
    e.advance(8).issue(1, {3: 2}).inst_pc(1, 3, 0x1100).inst(1, 3, 0)
    e.resync(1_000_000).advance(4)
    e.issue(0, {0: 2}).advance(8).inst(0, 0, 15)  # s_endpgm (OTHER_MSG)
    e.wave_end(0, 0, 0).issue(1, {3: 2}).inst(1, 3, 15).wave_end(0, 1, 3).advance(4).wave_end(2, 0, 0)
    return e


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], "wb") as f:
        f.write(demo().data())
