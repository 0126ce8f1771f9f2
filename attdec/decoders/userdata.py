"""A standalone scanner of an SQTT stream's register writes: code-object markers and kernel entry PCs.

rocprofv3 tells the decoder where code objects were loaded through the trace itself: the ROCm
instrumentation protocol on SQ_THREAD_TRACE_USERDATA_2 (sqtt-format.md §4). This walks the token
framing (RDNA: nibble-aligned tokens of §2.3; gfx9: 16-bit words of §3.1) looking only at register
writes, so raw inputs can get load bases and code-object ids without running a full decoder. It also
latches COMPUTE_PGM_LO/HI, whose value is each dispatch's kernel entry address.
"""

from __future__ import annotations

from dataclasses import dataclass, field

USERDATA_2 = 0xC342
ROC_MAGIC = int.from_bytes(b"\0ROC", "little")
OP_CODEOBJ, OP_AGENT_INFO = 4, 6
# code-object marker payload types
TAIL, SIZE_LO, ADDR_LO, ADDR_HI, SIZE_HI, ID_LO, ID_HI = range(7)
PGM_LO, PGM_HI = 0x0C, 0x0D


@dataclass
class CodeObjectMarker:
    """One code object load (or unload) announced in the trace."""

    id: int
    addr: int
    size: int
    unload: bool = False
    legacy_id: int = 0


@dataclass
class UserdataScan:
    markers: list[CodeObjectMarker] = field(default_factory=list)
    entry_pcs: list[int] = field(default_factory=list)  # kernel entry addresses, in stream order
    realtime_khz: int | None = None
    stopped_at: int | None = None  # byte offset where framing was lost, if it was


class _Protocol:
    """The USERDATA_2 word protocol: activated by `\\0ROC`, then header words each with a payload."""

    def __init__(self, scan: UserdataScan):
        self.scan, self.active, self.pending = scan, False, None
        self.cur: dict[int, int] = {}

    def write(self, value: int) -> None:
        if not self.active:
            self.active = value == ROC_MAGIC
            return
        if self.pending is None:
            op, typ, data20 = value & 0xFF, (value >> 8) & 0xF, value >> 12
            if op == OP_AGENT_INFO and typ == 0:
                self.scan.realtime_khz = data20
            self.pending = (op, typ)
            return
        op, typ = self.pending
        self.pending = None
        if op != OP_CODEOBJ:
            return
        if typ == TAIL:
            c = self.cur
            self.scan.markers.append(
                CodeObjectMarker(
                    id=c.get(ID_LO, 0) | c.get(ID_HI, 0) << 32,
                    addr=c.get(ADDR_LO, 0) | c.get(ADDR_HI, 0) << 32,
                    size=c.get(SIZE_LO, 0) | c.get(SIZE_HI, 0) << 32,
                    unload=bool(value & 1),
                    legacy_id=value >> 2,
                )
            )
            self.cur = {}
        else:
            self.cur[typ] = value


# RDNA token lengths in bits by (family, low bits): (mask, pattern, bits). Checked longest pattern first.
def _rdna_table(gen: int) -> list[tuple[int, int, int]]:
    t = [
        (0xFF, 0x61, 24),
        (0xFF, 0xE1, 32),
        (0x7F, 0x01, {10: 64, 11: 48, 12: 64}[gen]),
        (0x7F, 0x11, 64),
        (0x7F, 0x21, 72 if gen == 12 else 64),
        (0x7F, 0x31, 64 if gen == 10 else 48),
        (0x7F, 0x51, 24),
        (0x7F, 0x71, 64),
    ]
    if gen == 12:
        t += [
            (0x7F, 0x06, 56),
            (0x7F, 0x46, 32),
            (0x7F, 0x66, 24),
            (0x7F, 0x26, 52),
            (0x3F, 0x16, 48),
            (0x3F, 0x36, 28),
        ]
    else:
        t += [(0x1F, 0x06, 52), (0x1F, 0x16, 28)]
    t += [
        (0x1F, 0x04, 24),
        (0x1F, 0x14, 24),
        (0x1F, 0x0C, 32),
        (0x1F, 0x1C, 40 if gen == 12 else 48),
        (0x1F, 0x05, 24 if gen == 12 else 20),
        (0x1F, 0x15, 20),
        (0x07, 0x02, 20),
        (0x07, 0x03, 12),
        (0x0F, 0x00, 4),
        (0x0F, 0x08, 8),
        (0x0F, 0x09, 64),
        (0x0F, 0x0D, 12),
        (0x0F, 0x0E, 8),
        (0x0F, 0x0F, 8),
    ]
    return t


def _rdna_lengths(gen: int) -> list[int]:
    """Token length in bits for each value of the low 8 bits (0 = unassigned)."""
    table = _rdna_table(gen)
    out = []
    for b in range(256):
        out.append(next((n for mask, pat, n in table if b & mask == pat), 0))
    return out


def scan_rdna(data: bytes, gen: int) -> UserdataScan:
    scan = UserdataScan()
    proto = _Protocol(scan)
    lengths = _rdna_lengths(gen)
    nbits = len(data) * 8
    pos = 0
    pgm: dict = {}
    after_ext = False
    frm = int.from_bytes
    while pos + 4 <= nbits:
        byte = pos >> 3
        if not pos & 7 and not data[byte] and not after_ext:  # runs of zero bytes are NOPs
            nz = len(data) - len(data[byte:].lstrip(b"\0")) if data[byte + 1 : byte + 2] == b"\0" else byte + 1
            pos = max(nz, byte + 1) * 8
            continue
        win = frm(data[byte : byte + 10], "little") >> (pos & 7)
        low = win & 0xFF
        if gen == 12 and after_ext and low & 1:
            pos += 8  # gfx12 WAVE_START_EXT extension byte
            continue
        n = lengths[low]
        if n == 0:
            scan.stopped_at = byte
            break
        if pos + n > nbits:
            break
        if low & 0xF != 0:  # NOPs do not end the WAVE_START_EXT extension state
            after_ext = gen == 12 and low & 0x1F == 0x1C
        if low & 0xF == 0x9:  # REG: pipe [7..8], CS [15], regaddr [16..31], data [32..63]
            addr, value = (win >> 16) & 0xFFFF, (win >> 32) & 0xFFFFFFFF
            if (win >> 15) & 1:
                _latch_pgm(scan, pgm, (win >> 7) & 3, addr, value)
            elif addr == USERDATA_2:
                proto.write(value)
        pos += n
    return scan


def _latch_pgm(scan: UserdataScan, pgm: dict, pipe: int, addr: int, value: int) -> None:
    if addr in (PGM_LO, PGM_HI):
        pgm[(pipe, addr)] = value
        if addr == PGM_HI and (pipe, PGM_LO) in pgm:
            pc = ((value << 32 | pgm[(pipe, PGM_LO)]) << 8) & ((1 << 48) - 1)
            if not scan.entry_pcs or scan.entry_pcs[-1] != pc:
                scan.entry_pcs.append(pc)


_GFX9_WORDS = (1, 4, 4, 2, 1, 3, 1, 1, 1, 1, 1, 4, 3, 2, 4, 3)  # token length in 16-bit words, by type


def scan_gfx9(data: bytes) -> UserdataScan:
    scan = UserdataScan()
    proto = _Protocol(scan)
    pgm = {}
    pos, end = 8, len(data) - len(data) % 2  # after the 8-byte software header
    while pos + 2 <= end:
        typ = data[pos] & 0xF
        n = _GFX9_WORDS[typ] * 2
        if pos + n > end:
            break
        if typ == 2:  # REG: enable [15], regaddr [16..31], data [32..63]
            tok = int.from_bytes(data[pos : pos + 8], "little")
            if (tok >> 15) & 1 and (tok >> 16) & 0xFFFF == USERDATA_2:
                proto.write(tok >> 32)
        elif typ in (5, 15):  # REG_CS / REG_CS_PRIV: pipe [5..6], regaddr [9..15], data [16..47]
            tok = int.from_bytes(data[pos : pos + 6], "little")
            _latch_pgm(scan, pgm, (tok >> 5) & 3, (tok >> 9) & 0x7F, tok >> 16)
        pos += n
    return scan


def scan_userdata(data: bytes, gen: int) -> UserdataScan:
    """Register-write scan of one SE's blob of SQTT generation `gen` (9, 10, 11, 12)."""
    return scan_gfx9(data) if gen == 9 else scan_rdna(data, gen)
