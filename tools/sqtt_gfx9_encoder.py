#!/usr/bin/env python3
"""A small gfx9 (CDNA) SQTT stream encoder, written from sqtt-format.md §1.3 and §3 for tests.

It writes what the hardware would: the 8-byte software header, then 16-bit little-endian words, every token
1-4 words long, type in the low nibble. Each token method takes `plus4` (bit 4, the "+4 cycles" delta) and
the `advance()` helper emits MISC TIME tokens so a test can place tokens at chosen times. The encoder does not
model the hardware; it exists so that every token type, ISSUE/INST pairing, time resets and PC tokens can be
exercised, while only real captures prove agreement with AMD's decoder.

    python3 tools/sqtt_gfx9_encoder.py OUT.att     # writes the demo stream used by tests/fixtures
"""

from __future__ import annotations

import struct
import sys

WORDS = {0: 1, 1: 4, 2: 4, 3: 2, 4: 1, 5: 3, 6: 1, 7: 1, 8: 1, 9: 1, 10: 1, 11: 4, 12: 3, 13: 2, 14: 4, 15: 3}


def header(
    target_cu: int = 0,
    version2: int = 6,
    simd_mask: int = 0xF,
    seid: int = 0,
    legacy: int = 0x11,
    double_buffer: int = 0,
) -> bytes:
    """The software header (§1.3)."""
    h = legacy | version2 << 13 | simd_mask << 16 | (target_cu & 0x1F) << 20 | (seid & 0x3F) << 26 | double_buffer << 32
    return struct.pack("<Q", h)


class Encoder:
    """Builds one SE buffer token by token and keeps the decoder-visible time alongside (`self.time`)."""

    def __init__(self, target_cu: int = 0, **hdr):
        self.head = header(target_cu, **hdr)
        self.words: list[int] = []
        self.time = 0  # the time the official decoder will give the next token with no delta
        self.base = 0  # §3.2: set at the first resync

    # -- raw --------------------------------------------------------------------------------------------
    def token(self, ttype: int, value: int = 0, plus4: bool = False) -> Encoder:
        """Any token: `value` holds the fields above the type nibble (bit 4 is set from plus4)."""
        v = (value & ~0x1F) | (ttype & 15) | (0x10 if plus4 else 0)
        if ttype == 0:
            v = value | ttype
        for k in range(WORDS[ttype & 15]):
            self.words.append((v >> (16 * k)) & 0xFFFF)
        if ttype != 0 and plus4:
            self.time += 4
        return self

    def data(self) -> bytes:
        return self.head + struct.pack(f"<{len(self.words)}H", *self.words)

    # -- time -------------------------------------------------------------------------------------------
    def misc(self, misc_type: int = 0, delta: int = 0, sh: int = 0) -> Encoder:
        """MISC: delta in 4-cycle units [4..11], sh [12], subtype [13..15]."""
        assert 0 <= delta <= 255
        self.time += 4 * delta
        return self.token(0, (delta << 4) | (sh << 12) | (misc_type << 13))

    def advance(self, cycles: int) -> Encoder:
        """Move time forward by `cycles` (a multiple of 4) with MISC TIME tokens."""
        assert cycles % 4 == 0 and cycles >= 0
        units = cycles // 4
        while units:
            step = min(units, 255)
            self.misc(0, step)
            units -= step
        return self

    def at(self, t: int) -> Encoder:
        """Advance to absolute time t."""
        return self.advance(t - self.time)

    def time_reset(self, delta: int = 0) -> Encoder:
        return self.misc(1, delta)

    def resync(self, ts: int, delta: int = 0) -> Encoder:
        """TIME_RESET then TIMESTAMP ts; tracks the re-anchored time the way §3.2 describes."""
        self.time_reset(delta)
        self.timestamp(ts)
        if self.base == 0:
            self.base = ts - self.time + 4
        if ts > self.base:
            self.time = (ts - self.base) & ~3
        return self

    def timestamp(self, ts: int, plus4: bool = False) -> Encoder:
        """TIMESTAMP: 48-bit counter at [16..63]. Its own delta is only applied when no TIME_RESET consumes it."""
        return self.token(1, ts << 16, plus4)

    # -- waves ------------------------------------------------------------------------------------------
    @staticmethod
    def _where(cu, simd, slot, sh):
        return (sh << 5) | (cu << 6) | (slot << 10) | (simd << 14)

    def wave_start(self, cu, simd, slot, sh=0, count=0, me=0, pipe=0, tg=0, plus4=False):
        return self.token(3, self._where(cu, simd, slot, sh) | pipe << 16 | me << 18 | count << 22 | tg << 29, plus4)

    def wave_alloc(self, cu, simd, slot, sh=0, plus4=False):
        return self.token(4, self._where(cu, simd, slot, sh), plus4)

    def wave_end(self, cu, simd, slot, sh=0, plus4=False):
        return self.token(6, self._where(cu, simd, slot, sh), plus4)

    # -- instructions -----------------------------------------------------------------------------------
    def issue(self, simd: int, status: dict[int, int], plus4=False):
        """ISSUE: per wave slot 0..9 a 2-bit status (1 stall, 2 instruction, 3 immediate)."""
        v = simd << 5
        for slot, st in status.items():
            v |= (st & 3) << (8 + 2 * slot)
        return self.token(13, v, plus4)

    def inst(self, simd: int, slot: int, itype: int, plus4=False):
        return self.token(10, slot << 5 | simd << 9 | itype << 11, plus4)

    def inst_pc(self, simd: int, slot: int, pc: int, err: int = 0, plus4=False):
        """INST_PC: byte address pc (a multiple of 4), stored in dwords at [16..63]."""
        return self.token(11, slot << 5 | simd << 9 | err << 15 | (pc >> 2) << 16, plus4)

    # -- registers and the rest -------------------------------------------------------------------------
    def reg_cs(self, addr: int, data: int, me: int = 1, pipe: int = 0, priv: bool = False, plus4=False):
        """REG_CS(_PRIV): the official decoder reads ME as (field + 1) & 1, so field 1 means ME 0."""
        return self.token(15 if priv else 5, pipe << 5 | me << 7 | addr << 9 | data << 16, plus4)

    def kernel_entry(self, pc: int, me_field: int = 1, pipe: int = 0):
        """PGM_LO/HI writes so that waves on (me, pipe) start at byte address pc (256-byte aligned)."""
        self.reg_cs(0x0C, (pc >> 8) & 0xFFFFFFFF, me_field, pipe)
        return self.reg_cs(0x0D, (pc >> 40) & 0xFFFFFFFF, me_field, pipe)

    def reg(self, addr: int, data: int, enable: int = 1, plus4=False):
        return self.token(2, enable << 15 | addr << 16 | data << 32, plus4)

    def shaderdata(self, cu, simd, slot, data, plus4=False):
        return self.token(12, self._where(cu, simd, slot, 0) | data << 16, plus4)

    def perf(self, cu, bank, counters=(0, 0, 0, 0), plus4=False):
        v = cu << 6 | bank << 10
        for k, c in enumerate(counters):
            v |= (c & 0x1FFF) << (12 + 13 * k)
        return self.token(14, v, plus4)

    def event(self, kind: int = 7, plus4=False):
        """EVENT (7), EVENT_CS (8), EVENT_GFX1 (9): 16-bit, not decoded by the official decoder."""
        return self.token(kind, 0, plus4)


def demo() -> Encoder:
    """A stream with every token type, two traced waves (ISSUE/INST, stalls, immediates, a PC token), an
    untraced wave on another CU, and a time reset."""
    e = Encoder(target_cu=0)
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
