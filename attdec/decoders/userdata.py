"""A standalone scanner of an SQTT stream's register writes: code-object markers and kernel entry PCs.

rocprofv3 tells the decoder where code objects were loaded through the trace itself: the ROCm
instrumentation protocol on SQ_THREAD_TRACE_USERDATA_2 (sqtt-format.md §4). This walks the token
framing (RDNA: nibble-aligned tokens of §2.3; gfx9: 16-bit words of §3.1) looking only at register
writes, so raw inputs can get load bases and code-object ids without running a full decoder. It also
latches COMPUTE_PGM_LO/HI, whose value is each dispatch's kernel entry address.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

USERDATA_2, USERDATA_3 = 0xC342, 0xC343
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
    userdata: list[tuple[int, int, int]] = field(default_factory=list)  # (byte offset, register, value) of USERDATA_2/3


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


@dataclass
class RegisterWrites:
    """Every register-write token of a stream, as parallel numpy arrays in stream order."""

    offset: np.ndarray  # byte offset of the token (gfx9: from the start of the blob, header included)
    cs: np.ndarray  # bool: a compute-state write (COMPUTE_* block), else a config/userdata register
    pipe: np.ndarray
    addr: np.ndarray
    value: np.ndarray
    stopped_at: int | None = None  # byte offset of the first token the framing does not know


def register_writes(data: bytes, gen: int) -> RegisterWrites:
    """The register writes of one SE stream of SQTT generation `gen` (9, 10, 11, 12).

    The token framing is the decoders' own vectorised walk (attdec.decoders.rdna / gfx9), so a whole
    multi-megabyte blob is scanned in tens of milliseconds; writes after an unknown token are dropped.
    """
    return _gfx9_writes(data) if gen == 9 else _rdna_writes(data, gen)


@cache
def _rdna_walk(gen: int):
    """(token table, walk lengths, walk marks) of an RDNA generation, from the decoder's encodings."""
    from attdec.decoders import rdna

    fam = rdna.FAMILIES.get(gen)
    if (
        fam is None
    ):  # gfx10 (HEADER version 1-2): gfx11's table with 64-bit TIMESTAMP and UTIL_COUNTER (sqtt-format.md §2.3)
        enc = [*rdna._GFX11, ("TIMESTAMP", 0x01, 7, 64, 0, 0), ("UTIL_COUNTER", 0x31, 7, 64, 7, 2)]
        fam = rdna.Family("gfx10", 2, enc, False)
    return fam.table, fam.walk_len, fam.walk_mark


def _rdna_writes(data: bytes, gen: int) -> RegisterWrites:
    from attdec.decoders import rdna

    table, walk_len, walk_mark = _rdna_walk(gen)
    n = len(data)
    buf = np.zeros(n + 24, np.uint8)
    buf[:n] = np.frombuffer(data, np.uint8)
    mark = rdna.chain_marks(buf, 2 * n, walk_len, walk_mark)
    pos = np.flatnonzero(mark > 0x100)
    typ = table.type[mark[pos] & 0xFF]
    unknown = np.flatnonzero(typ == rdna.T["UNKNOWN"])
    stopped = int(pos[unknown[0]]) // 2 if len(unknown) else None
    reg = pos[typ == rdna.T["REG"]]
    reg = reg[reg * 4 + 64 <= 8 * n]  # a token cut by the end of the data
    if stopped is not None:
        reg = reg[reg < 2 * stopped]
    w = rdna._windows(buf, reg)
    return RegisterWrites(
        reg // 2,
        ((w >> np.uint64(15)) & np.uint64(1)).astype(
            bool
        ),  # REG: pipe [7..8], CS [15], regaddr [16..31], data [32..63]
        ((w >> np.uint64(7)) & np.uint64(3)).astype(np.int64),
        ((w >> np.uint64(16)) & np.uint64(0xFFFF)).astype(np.int64),
        (w >> np.uint64(32)).astype(np.int64),
        stopped,
    )


def _gfx9_writes(data: bytes) -> RegisterWrites:
    from attdec.decoders import gfx9

    end = len(data) - len(data) % 2
    words = (
        np.frombuffer(data, "<u2", (end - gfx9.HEADER_BYTES) // 2, gfx9.HEADER_BYTES) if end > 8 else np.zeros(0, "<u2")
    )
    starts, types, _ = gfx9.split_tokens(words)
    reg = types == gfx9.REG
    regcs = (types == gfx9.REG_CS) | (types == gfx9.REG_CS_PRIV)
    sel = np.flatnonzero(reg | regcs)
    v = gfx9.token_values(words, starts[sel], types[sel])
    is_cs = regcs[sel]
    # REG: enable [15], regaddr [16..31], data [32..63]; REG_CS(_PRIV): pipe [5..6], regaddr [9..15], data [16..47]
    keep = is_cs | ((v >> np.uint64(15)) & np.uint64(1)).astype(bool)
    v, is_cs, sel = v[keep], is_cs[keep], sel[keep]
    addr = np.where(is_cs, (v >> np.uint64(9)) & np.uint64(0x7F), (v >> np.uint64(16)) & np.uint64(0xFFFF))
    value = np.where(is_cs, (v >> np.uint64(16)) & np.uint64(0xFFFFFFFF), v >> np.uint64(32))
    return RegisterWrites(
        gfx9.HEADER_BYTES + 2 * starts[sel].astype(np.int64),
        is_cs,
        np.where(is_cs, (v >> np.uint64(5)) & np.uint64(3), 0).astype(np.int64),
        addr.astype(np.int64),
        value.astype(np.int64),
    )


def _latch_pgm(scan: UserdataScan, pgm: dict, pipe: int, addr: int, value: int) -> None:
    if addr in (PGM_LO, PGM_HI):
        pgm[(pipe, addr)] = value
        if addr == PGM_HI and (pipe, PGM_LO) in pgm:
            pc = ((value << 32 | pgm[(pipe, PGM_LO)]) << 8) & ((1 << 48) - 1)
            if not scan.entry_pcs or scan.entry_pcs[-1] != pc:
                scan.entry_pcs.append(pc)


# RGP SQTT markers (Mesa ac_sqtt.h, "RGP SQ thread-tracing markers"): the driver writes each marker's dwords
# to USERDATA_2 and USERDATA_3 in turn; the low 4 bits of the first dword name it. Dword counts by identifier
# (EVENT: 6 with thread dims; USER_EVENT: 1, or 2 + its string for push/trigger/object name).
RGP_EVENT, RGP_BIND_PIPELINE, RGP_USER_EVENT = 0x0, 0xC, 0x5
_RGP_DWORDS = {0x0: 3, 0x1: 4, 0x2: 3, 0x3: 2, 0x4: 2, 0x6: 1, 0x9: 2, 0xC: 3}


@dataclass
class RgpMarker:
    kind: int  # RGP_EVENT, RGP_BIND_PIPELINE, ... (the identifier)
    offset: int  # byte offset of its first register write
    dwords: list[int]


def rgp_markers(userdata: list[tuple[int, int, int]]) -> list[RgpMarker]:
    """The RGP markers in a stream's USERDATA_2/3 writes (`UserdataScan.userdata`), up to the first dword
    that starts no marker attdec knows. Streams that speak the ROCm protocol (`\\0ROC` first) have none."""
    words = [(off, v) for off, _, v in userdata]
    if words and words[0][1] == ROC_MAGIC:
        return []
    out, i = [], 0
    while i < len(words):
        first = words[i][1]
        kind = first & 0xF
        n: int | None
        if kind == RGP_EVENT:
            n = 6 if first >> 31 else 3
        elif kind == RGP_USER_EVENT:
            n = 1 if (first >> 12) & 0xFF == 1 else 2 + (((words[i + 1][1] if i + 1 < len(words) else 0) + 3) // 4)
        else:
            n = _RGP_DWORDS.get(kind)
        if n is None or i + n > len(words):
            break
        out.append(RgpMarker(kind, words[i][0], [v for _, v in words[i : i + n]]))
        i += n
    return out


def scan_userdata(data: bytes, gen: int) -> UserdataScan:
    """Register-write scan of one SE's blob of SQTT generation `gen` (9, 10, 11, 12)."""
    w = register_writes(data, gen)
    scan = UserdataScan(stopped_at=w.stopped_at)
    proto = _Protocol(scan)
    pgm: dict = {}
    for off, cs, pipe, addr, value in zip(
        w.offset.tolist(), w.cs.tolist(), w.pipe.tolist(), w.addr.tolist(), w.value.tolist()
    ):
        if cs:
            _latch_pgm(scan, pgm, pipe, addr, value)
        elif addr in (USERDATA_2, USERDATA_3):
            scan.userdata.append((off, addr, value))
            if addr == USERDATA_2:
                proto.write(value)
    return scan
