#!/usr/bin/env python3
"""Write small synthetic RDNA SQTT streams to tests/fixtures/ (with tests/support/sqtt_encoder.py).

The streams follow docs/sqtt-rdna.md: a HEADER (target SA 0, WGP 0, SIMD 0), the compute registers
that give the kernel entry, then one traced wave and one untraced wave with a handful of instruction
tokens. tests/test_rdna.py derives the expected records from the timing rules, not from this file.

Usage: python3 tools/makers/make_rdna_fixture.py   (rewrites tests/fixtures/rdna_gfx11_tiny.att / _gfx12_)
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from tests.support.sqtt_encoder import RdnaEncoder

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures")
ENTRY = 0x200001006000 + 0x100


def build(generation: int) -> bytes:
    e = RdnaEncoder(generation, dp_rate=1)  # dprate 1
    e.kernel_entry(ENTRY)
    e.advance(10)  # t = 10
    e.wave_start(simd=0, slot=0)  # traced wave, begin 10
    e.wave_start(simd=1, slot=3)  # untraced (SIMD 1), begin 10
    e.advance(10)  # t = 20
    e.inst(0, "smem_rd")  # SMEM at 20, 1 cycle
    e.valu(0, delta=2)  # VALU at 22
    e.advance(4)  # t = 26
    e.wave_ready(0b1)  # wave 0 ready at 26 (gfx11 stamps it 25)
    e.advance(4)  # t = 30
    e.valu(0)  # VALU at 30 after a stall
    e.advance(10)  # t = 40
    e.imm_one(0)  # s_waitcnt-like immediate at 40
    e.advance(10)  # t = 50
    e.wave_end(simd=0, slot=0)  # traced wave ends at 50
    e.wave_end(simd=1, slot=3, delta=3)  # untraced wave ends at 53
    return e.data()


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, gen in (("rdna_gfx11_tiny.att", 11), ("rdna_gfx12_tiny.att", 12)):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(build(gen))
        print("wrote", name)


if __name__ == "__main__":
    main()
