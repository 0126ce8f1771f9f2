"""Register writes of an SQTT stream: the ROCm instrumentation protocol, RGP markers and kernel entry PCs.

rocprofv3 tells the decoder where code objects were loaded through the trace itself: the ROCm
instrumentation protocol on SQ_THREAD_TRACE_USERDATA_2/3 (sqtt-format.md §4, §9.1). `RocProtocol` is that
protocol, used by the gfx9 decoder (realtime samples) and by `scan_userdata`, which reads only the register
writes of a blob (`register_writes`: the families' vectorised splitters and packet tables) so that raw
inputs get load bases, code-object ids and kernel entries (the latched COMPUTE_PGM_LO/HI) without running a
full decoder. Mesa and tinygrad write RGP markers to the same registers instead (`rgp_markers`).
"""

from __future__ import annotations

import numpy as np

from attdec.model.record import Record, field

USERDATA_2, USERDATA_3 = 0xC342, 0xC343
ROC_MAGIC = int.from_bytes(b"\0ROC", "little")
# USERDATA_2 header word: opcode [0..7], type [8..11], data20 [12..31]
OP_RT_TIMESTAMP, OP_CODEOBJ, OP_AGENT_INFO, OP_RT_TIMESTAMP_LO32 = 5, 4, 6, 7
AGENT_RT_FREQUENCY_KHZ, AGENT_COUNTER_INTERVAL = 0, 1  # AGENT_INFO types
# code-object marker payload types
TAIL, SIZE_LO, ADDR_LO, ADDR_HI, SIZE_HI, ID_LO, ID_HI = range(7)
PGM_LO, PGM_HI = 0x0C, 0x0D


class CodeObjectMarker(Record):
    """One code object load (or unload) announced in the trace; `id` as AMD's decoder reports it (the
    legacy id in the TAIL word where it is set, else the ID payload)."""

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
        self.counter_interval = 0  # shader cycles between PERF readings (AGENT_INFO COUNTER_INTERVAL), 0: unknown
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
                elif typ == AGENT_COUNTER_INTERVAL:
                    self.counter_interval = data20
            elif opcode == OP_CODEOBJ and data20 == 0:
                self.state = typ
            return
        typ, self.state = self.state, self.WAIT_FOR_HEADER  # one payload word per marker header
        if typ == TAIL:
            c = self._marker
            self.markers.append(
                CodeObjectMarker(
                    # AMD's decoder reports the TAIL's legacy id where it is set (rocprofv3 sessions set only it)
                    id=(value >> 2) or c.get(ID_LO, 0) | c.get(ID_HI, 0) << 32,
                    addr=c.get(ADDR_LO, 0) | c.get(ADDR_HI, 0) << 32,
                    size=c.get(SIZE_LO, 0) | c.get(SIZE_HI, 0) << 32,
                    unload=bool(value & 1),
                    legacy_id=value >> 2,
                )
            )
            self._marker = {}
        else:
            self._marker[typ] = value

    @property
    def rt_frequency(self) -> int | None:
        """The realtime clock's frequency in Hz, as the official RT_FREQUENCY record reports it."""
        return self.realtime_khz * 1000 if self.realtime_khz else None

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


class UserdataScan(Record):
    markers: list[CodeObjectMarker] = field(default_factory=list)
    entry_pcs: list[int] = field(default_factory=list)  # kernel entry addresses, in stream order
    realtime_khz: int | None = None
    stopped_at: int | None = None  # byte offset where framing was lost, if it was
    userdata: list[tuple[int, int, int]] = field(default_factory=list)  # (byte offset, register, value) of USERDATA_2/3


class RegisterWrites(Record):
    """Every register-write token of a stream, as parallel numpy arrays in stream order."""

    offset: np.ndarray  # byte offset of the token (gfx9: from the start of the blob, header included)
    cs: np.ndarray  # bool: a compute-state write (COMPUTE_* block), else a config/userdata register
    me: np.ndarray  # the micro engine (gfx9: the official (field + 1) & 1)
    pipe: np.ndarray
    addr: np.ndarray
    value: np.ndarray
    stopped_at: int | None = None  # byte offset of the first token the framing does not know


def register_writes(data: bytes, gen: int) -> RegisterWrites:
    """The register writes of one SE stream of SQTT generation `gen` (9, 10, 11, 12), read with the
    decoders' own vectorised splitters and packet tables; writes after an unknown token are dropped."""
    from attdec.decoders import family

    return family(f"gfx{gen}", "tokens").register_writes(data, gen)


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


# RGP SQTT markers (Mesa ac_sqtt.h, "RGP SQ thread-tracing markers"): the driver writes each marker's dwords
# to USERDATA_2 and USERDATA_3 in turn; the low 4 bits of the first dword name it. Dword counts by identifier
# (EVENT: 6 with thread dims; USER_EVENT: 1, or 2 + its string for push/trigger/object name).
RGP_EVENT, RGP_BIND_PIPELINE, RGP_USER_EVENT = 0x0, 0xC, 0x5
_RGP_DWORDS = {0x0: 3, 0x1: 4, 0x2: 3, 0x3: 2, 0x4: 2, 0x6: 1, 0x9: 2, 0xC: 3}


class RgpMarker(Record):
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
    sc = _Scanner()
    for off, cs, me, pipe, addr, value in zip(
        w.offset.tolist(), w.cs.tolist(), w.me.tolist(), w.pipe.tolist(), w.addr.tolist(), w.value.tolist()
    ):
        if cs:
            sc.cs_write(me, pipe, addr, value)
        # gfx10 (header version <= 2) carries user data in CS writes too
        if (not cs or gen == 10) and addr in (USERDATA_2, USERDATA_3):
            sc.scan.userdata.append((off, addr, value))
            if addr == USERDATA_2:
                sc.proto.userdata2(value)
    scan = sc.scan
    scan.stopped_at, scan.markers, scan.realtime_khz = w.stopped_at, sc.proto.markers, sc.proto.realtime_khz
    return scan
