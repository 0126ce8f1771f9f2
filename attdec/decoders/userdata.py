"""Register writes of an SQTT stream: the ROCm instrumentation protocol and kernel entry PCs.

rocprofv3 tells the decoder where code objects were loaded through the trace itself: the ROCm
instrumentation protocol on SQ_THREAD_TRACE_USERDATA_2/3 (sqtt-format.md §4, §9.1). `RocProtocol` is that
protocol, used by the gfx9 decoder (realtime samples) and by `scan_userdata`, which reads only the register
writes of a blob (with the families' splitters and packet tables) so that raw inputs get load bases,
code-object ids and kernel entries (the latched COMPUTE_PGM_LO/HI) without running a full decoder.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

USERDATA_2, USERDATA_3 = 0xC342, 0xC343
ROC_MAGIC = int.from_bytes(b"\0ROC", "little")
# USERDATA_2 header word: opcode [0..7], type [8..11], data20 [12..31]
OP_RT_TIMESTAMP, OP_CODEOBJ, OP_AGENT_INFO, OP_RT_TIMESTAMP_LO32 = 5, 4, 6, 7
AGENT_RT_FREQUENCY_KHZ = 0
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


class RocProtocol:
    """The ROCm instrumentation protocol (official `CSRegisterHandler::UpdateRegNoCS`).

    USERDATA_2 carries a "\\0ROC" activation word, then 32-bit header words: agent info (the realtime
    frequency is in the header itself) and code-object markers (a header with data20 = 0 announces one
    32-bit payload word of that type; TAIL completes a load or unload). USERDATA_3 carries realtime
    samples: opcode 5 (RT_TIMESTAMP, 3 words) or 7 (RT_TIMESTAMP_LO32, 1 word), delivered when the last
    word arrives.
    """

    WAIT_FOR_HEADER = -1
    RT_DELTA, RT_HI, RT_LOW = 0, 1, 2

    def __init__(self) -> None:
        self.active = False
        self.state = self.WAIT_FOR_HEADER
        self.realtime_khz: int | None = None
        self.markers: list[CodeObjectMarker] = []
        self._marker: dict[int, int] = {}
        self._count = 0
        self._known = False
        self._values = [0, 0, 0]

    def userdata2(self, value: int) -> None:
        if not self.active:
            if value == ROC_MAGIC:
                self.active = True
                self.state = self.WAIT_FOR_HEADER
            return
        if self.state == self.WAIT_FOR_HEADER:
            opcode, typ, data20 = value & 0xFF, (value >> 8) & 0xF, value >> 12
            if opcode == OP_AGENT_INFO:
                if typ == AGENT_RT_FREQUENCY_KHZ:
                    self.realtime_khz = data20
            elif opcode == OP_CODEOBJ and data20 == 0:
                self.state = typ
            return
        typ, self.state = self.state, self.WAIT_FOR_HEADER  # one payload word per marker header
        if typ == TAIL:
            c = self._marker
            self.markers.append(
                CodeObjectMarker(
                    id=c.get(ID_LO, 0) | c.get(ID_HI, 0) << 32,
                    addr=c.get(ADDR_LO, 0) | c.get(ADDR_HI, 0) << 32,
                    size=c.get(SIZE_LO, 0) | c.get(SIZE_HI, 0) << 32,
                    unload=bool(value & 1),
                    legacy_id=value >> 2,
                )
            )
            self._marker = {}
        else:
            self._marker[typ] = value

    def userdata3(self, t: int, value: int) -> tuple[int, int] | None:
        """A USERDATA_3 word at time t; a complete realtime sample (t, reference clock) or None."""
        if not self.active:
            return None
        if self._count == 0:
            opcode, data20 = value & 0xFF, value >> 12
            if opcode == OP_RT_TIMESTAMP:
                self._count, self._known = data20 or 3, True
            elif opcode == OP_RT_TIMESTAMP_LO32:
                self._count, self._known = data20 or 1, True
                self._values[self.RT_LOW] = self._values[self.RT_DELTA]
            else:
                self._count, self._known = data20, False
            return None
        self._count -= 1
        if not self._known or self._count < 0:
            return None
        v = self._values
        if self._count < 3:
            v[self._count] = value
        if self._count > 0:
            return None
        if v[self.RT_DELTA] < v[self.RT_LOW]:
            v[self.RT_HI] += 1
        return (t, v[self.RT_DELTA] | v[self.RT_HI] << 32)


@dataclass
class UserdataScan:
    markers: list[CodeObjectMarker] = field(default_factory=list)
    entry_pcs: list[int] = field(default_factory=list)  # kernel entry addresses, in stream order
    realtime_khz: int | None = None
    stopped_at: int | None = None  # byte offset where framing was lost, if it was


class _Scanner:
    """What a scan collects from the register writes, in stream order."""

    def __init__(self) -> None:
        self.proto = RocProtocol()
        self.scan = UserdataScan()
        self.pgm: dict[tuple[int, int, int], int] = {}

    def cs_write(self, me: int, pipe: int, addr: int, value: int) -> None:
        """A compute-state write: COMPUTE_PGM_HI completes a kernel entry address."""
        if addr not in (PGM_LO, PGM_HI):
            return
        me &= 1
        self.pgm[(me, pipe, addr)] = value
        lo = self.pgm.get((me, pipe, PGM_LO))
        if addr == PGM_HI and lo is not None:
            pc = ((value << 32 | lo) << 8) & ((1 << 48) - 1)
            if not self.scan.entry_pcs or self.scan.entry_pcs[-1] != pc:
                self.scan.entry_pcs.append(pc)

    def result(self) -> UserdataScan:
        self.scan.markers = self.proto.markers
        self.scan.realtime_khz = self.proto.realtime_khz
        return self.scan


def scan_rdna(data: bytes, gen: int) -> UserdataScan:
    """Register writes of an RDNA blob of generation `gen` (10, 11, 12), up to where framing is lost."""
    from attdec.decoders.rdna.packets import FORMATS, T
    from attdec.decoders.rdna.splitter import split

    fmt = FORMATS[gen]
    tk = split(data, fmt, keep=("REG", "UNKNOWN"))
    sc = _Scanner()
    unknown = np.flatnonzero(tk.type == T["UNKNOWN"])
    n = len(tk.type)
    if len(unknown):
        sc.scan.stopped_at = int(tk.pos[unknown[0]]) // 2
        n = int(unknown[0])
    reg = fmt.table["REG"]
    cs, me, pipe, addr, value = (reg[k] for k in ("cs", "me", "pipe", "addr", "data"))
    for w in tk.word[:n].tolist():
        is_cs = cs.get(w)
        if is_cs:
            sc.cs_write(me.get(w), pipe.get(w), addr.get(w), value.get(w))
        # gfx10 (header version <= 2) carries user data in CS writes too
        if (not is_cs or gen == 10) and addr.get(w) == USERDATA_2:
            sc.proto.userdata2(value.get(w))
    return sc.result()


def scan_gfx9(data: bytes) -> UserdataScan:
    """Register writes of a gfx9 blob (REG for user data, REG_CS / REG_CS_PRIV for the kernel entry)."""
    from attdec.decoders.gfx9.packets import GFX9, HEADER_BYTES, TOKEN_NAMES
    from attdec.decoders.gfx9.splitter import split_tokens, token_values

    sc = _Scanner()
    words = np.frombuffer(data, "<u2", count=max(len(data) - HEADER_BYTES, 0) // 2, offset=HEADER_BYTES)
    starts, types, _cut = split_tokens(words)
    t_reg, t_cs, t_priv = (TOKEN_NAMES.index(k) for k in ("REG", "REG_CS", "REG_CS_PRIV"))
    sel = np.flatnonzero((types == t_reg) | (types == t_cs) | (types == t_priv))
    values = token_values(words, starts[sel], types[sel])
    reg, reg_cs = GFX9["REG"], GFX9["REG_CS"]  # REG_CS_PRIV has REG_CS's layout
    for ty, v in zip(types[sel].tolist(), values.tolist()):
        if ty == t_reg:
            if reg["enable"].get(v) and reg["addr"].get(v) == USERDATA_2:
                sc.proto.userdata2(reg["data"].get(v))
        else:  # the official decoder reads ME as (field + 1) & 1
            me = (reg_cs["me"].get(v) + 1) & 1
            sc.cs_write(me, reg_cs["pipe"].get(v), reg_cs["addr"].get(v), reg_cs["data"].get(v))
    return sc.result()


def scan_userdata(data: bytes, gen: int) -> UserdataScan:
    """Register-write scan of one SE's blob of SQTT generation `gen` (9, 10, 11, 12)."""
    return scan_gfx9(data) if gen == 9 else scan_rdna(data, gen)
