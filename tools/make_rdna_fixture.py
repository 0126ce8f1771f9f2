#!/usr/bin/env python3
"""Write small synthetic RDNA SQTT streams to tests/fixtures/ (token encoder for tests).

The streams follow docs/sqtt-rdna.md: a HEADER (target SA 0, WGP 0, SIMD 0), the compute registers
that give the kernel entry, then one traced wave and one untraced wave with a handful of instruction
tokens. tests/test_rdna.py derives the expected records from the timing rules, not from this file.

Usage: python3 tools/make_rdna_fixture.py   (rewrites tests/fixtures/rdna_gfx11_tiny.att / _gfx12_)
"""

from __future__ import annotations

import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures")


class Stream:
    """Packs tokens nibble-aligned, low bits first (the SQTT bit order)."""

    def __init__(self):
        self.value = 0
        self.bits = 0

    def put(self, value: int, bits: int):
        assert bits % 4 == 0 and value < (1 << bits)
        self.value |= value << self.bits
        self.bits += bits

    def data(self, pad_bytes: int = 16) -> bytes:
        n = (self.bits + 7) // 8 + pad_bytes
        n = (n + 31) // 32 * 32  # the trace unit writes whole 32-byte lines
        return self.value.to_bytes(n, "little")


def header(version: int) -> int:
    dprate_code = 1  # dprate 1
    return 0x11 | (version << 7) | (dprate_code << 28)


def reg_cs(addr: int, data: int, delta: int = 0) -> int:
    return 0x9 | (delta << 4) | (1 << 15) | (addr << 16) | (data << 32)


def time_tok(adv: int) -> int:  # TIME: advances 4..19
    assert 4 <= adv <= 19
    return 0x8 | ((adv - 4) << 4)


def wave_start(gfx12: bool, simd: int, wgp: int, wid: int, delta: int = 0) -> int:
    if gfx12:
        return 0x0C | (delta << 5) | (simd << 8) | (wgp << 10) | (wid << 15)
    return 0x0C | (delta << 5) | (simd << 8) | (wgp << 10) | (wid << 13)


def wave_end(simd: int, wgp: int, wid: int, delta: int = 0) -> int:
    return 0x15 | (delta << 5) | (simd << 9) | (wgp << 11) | (wid << 15)


def inst(gfx12: bool, wid: int, op: int, delta: int = 0) -> int:
    if gfx12:
        return 0b010 | (delta << 3) | (wid << 7) | (op << 12)
    return 0b010 | (delta << 4) | (wid << 8) | (op << 13)


def valu(wid: int, delta: int = 0) -> int:
    return 0b011 | (delta << 3) | (wid << 7)


def imm_one(wid: int, delta: int = 0) -> int:
    return 0xD | (delta << 4) | (wid << 7)


def wave_ready(mask: int, delta: int = 0) -> int:
    return 0x14 | (delta << 5) | (mask << 8)


def build(gfx12: bool) -> bytes:
    s = Stream()
    s.put(header(4 if gfx12 else 3), 64)
    entry = 0x200001006000 + 0x100
    s.put(reg_cs(0x0C, (entry >> 8) & 0xFFFFFFFF), 64)
    s.put(reg_cs(0x0D, entry >> 40), 64)
    s.put(time_tok(10), 8)  # t = 10
    s.put(wave_start(gfx12, 0, 0, 0), 32)  # traced wave, begin 10
    s.put(wave_start(gfx12, 1, 0, 3), 32)  # untraced (SIMD 1), begin 10
    s.put(time_tok(10), 8)  # t = 20
    s.put(inst(gfx12, 0, 1), 20)  # SMEM at 20, 1 cycle
    s.put(valu(0, 2), 12)  # VALU at 22
    s.put(time_tok(4), 8)  # t = 26
    s.put(wave_ready(1), 24)  # wave 0 ready at 26 (gfx11 stamps it 25)
    s.put(time_tok(4), 8)  # t = 30
    s.put(valu(0), 12)  # VALU at 30 after a stall
    s.put(time_tok(10), 8)  # t = 40
    s.put(imm_one(0), 12)  # s_waitcnt-like immediate at 40
    s.put(time_tok(10), 8)  # t = 50
    s.put(wave_end(0, 0, 0), 20)  # traced wave ends at 50
    s.put(wave_end(1, 0, 3, 3), 20)  # untraced wave ends at 53
    return s.data()


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, g12 in (("rdna_gfx11_tiny.att", False), ("rdna_gfx12_tiny.att", True)):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(build(g12))
        print("wrote", name)


if __name__ == "__main__":
    main()
