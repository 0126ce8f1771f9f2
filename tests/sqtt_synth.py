"""Tiny synthetic SQTT streams with register writes, for the userdata scanner and raw-folder tests."""

from __future__ import annotations

from attdec.decoders.userdata import ADDR_HI, ADDR_LO, ID_LO, OP_CODEOBJ, ROC_MAGIC, SIZE_LO, TAIL, USERDATA_2


def roc_marker_words(co_id: int, addr: int, size: int, unload: bool = False) -> list[int]:
    """USERDATA_2 words announcing one code-object load (sqtt-format.md §4)."""
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


class RdnaStream:
    """Builds a nibble-aligned RDNA token stream (low nibble first)."""

    def __init__(self, version: int = 3):
        self.bits, self.n = 0, 0
        self.token(0x11 | version << 7, 64)  # HEADER

    def token(self, value: int, nbits: int):
        self.bits |= (value & ((1 << nbits) - 1)) << self.n
        self.n += nbits
        return self

    def reg(self, addr: int, data: int, cs: bool = False, pipe: int = 0):
        return self.token(0x9 | pipe << 7 | int(cs) << 15 | addr << 16 | data << 32, 64)

    def nop(self):
        return self.token(0, 4)

    def time(self, delta: int = 0):
        return self.token(0x8 | delta << 4, 8)

    def userdata(self, words):
        for w in words:
            self.reg(USERDATA_2, w).time(3)
        return self

    def bytes(self) -> bytes:
        nbytes = (self.n + 7) // 8 + 32  # trailing zero bytes are NOPs
        return self.bits.to_bytes(nbytes, "little")


class Gfx9Stream:
    """Builds a gfx9 stream: 8-byte software header then 16-bit-word tokens."""

    def __init__(self):
        self.out = bytearray((0x11 | 5 << 13 | 0xF << 16).to_bytes(8, "little"))

    def reg(self, addr: int, data: int):
        self.out += (2 | 1 << 15 | addr << 16 | data << 32).to_bytes(8, "little")
        return self

    def reg_cs(self, addr: int, data: int, pipe: int = 0):
        self.out += (5 | pipe << 5 | addr << 9 | data << 16).to_bytes(6, "little")
        return self

    def misc(self, delta: int = 1):
        self.out += (0 | delta << 4).to_bytes(2, "little")
        return self

    def userdata(self, words):
        for w in words:
            self.reg(USERDATA_2, w).misc()
        return self

    def bytes(self) -> bytes:
        return bytes(self.out) + bytes(16)
