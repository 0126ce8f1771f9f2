"""gfx9 (CDNA) SQTT token layouts, INST types and MISC subtypes, as data (sqtt-format.md §1.3, §3).

The stream is an 8-byte software header, then 16-bit little-endian words; a token is 1 to 4 words, its
type is the low nibble of its first word and its length depends only on the type. Field positions are
bits within the token (first..last, as the spec and RTD `gfx9/gfx9token.h` write them). Every token but
MISC has a 1-bit delta at bit 4; MISC has 8 bits; a delta unit is 4 cycles (`DELTA_CYCLES`).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from attdec.decoders.packets import Field, Packet, PacketTable, flag
from attdec.model import Category
from attdec.model.record import Frozen

F, P = Field, Packet
HEADER_BYTES = 8
DELTA_CYCLES = 4
OFFICIAL_TIME_BITS = 46  # the official token keeps 46 bits of TIMESTAMP's 48, signed


class MiscKind(IntEnum):
    """MISC subtypes (bits [13..15])."""

    TIME = 0
    TIME_RESET = 1
    PACKET_LOST = 2
    SURF_SYNC = 3
    TT_STALL_BEGIN = 4
    TT_STALL_END = 5
    SAVE_CONTEXT = 6


class IssueStatus(IntEnum):
    """What an ISSUE token says of each wave slot (2 bits a slot)."""

    NOTHING = 0
    STALL = 1
    INST = 2  # an instruction issued; a later INST token says which kind
    IMMED = 3  # an immediate (s_waitcnt, s_nop, ...) issued


class InstType(Frozen):
    """An INST token's type (official `InstType`): the record category it gives the oldest issued
    instruction, and its phase offset (§7.2). No category: the placeholder is deleted; `replay_of`: an XNACK
    replay that extends the last instruction of that type instead."""

    name: str
    category: Category | None
    phase: int = 0
    replay_of: int | None = None


SALU_PHASE, VALU_PHASE, MISC_PHASE = 5, 2, 1
C = Category
INST_TYPES: dict[int, InstType] = {
    0: InstType("SMEM_RD", C.SMEM, SALU_PHASE),
    1: InstType("SALU_32", C.SALU, SALU_PHASE),
    2: InstType("VMEM_RD", C.VMEM),
    3: InstType("VMEM_WR", C.VMEM),
    4: InstType("FLAT_WR", C.FLAT),
    5: InstType("VALU_32", C.VALU, VALU_PHASE),
    6: InstType("LDS", C.LDS, MISC_PHASE),
    7: InstType("PC", C.SALU),  # s_setpc & co: the next instruction's PC comes from INST_PC
    8: InstType("EXPREQ_GDS", None),
    9: InstType("EXPREQ_GFX", None),
    10: InstType("EXPGNT_PAR_COL", None),
    11: InstType("EXPGNT_POS_GDS", None),
    12: InstType("JUMP", C.JUMP, MISC_PHASE),
    13: InstType("NEXT", C.NEXT, MISC_PHASE),
    14: InstType("FLAT_RD", C.FLAT),
    15: InstType("OTHER_MSG", C.MESSAGE, MISC_PHASE),  # s_endpgm, s_sendmsg, s_barrier entry
    16: InstType("SMEM_WR", C.SMEM, SALU_PHASE),
    17: InstType("SALU_64", C.SALU, SALU_PHASE),
    18: InstType("VALU_64", C.VALU, VALU_PHASE),
    19: InstType("SMEM_RD_REPLAY", None, replay_of=0),
    20: InstType("SMEM_WR_REPLAY", None, replay_of=16),
    21: InstType("VMEM_RD_REPLAY", None, replay_of=2),
    22: InstType("VMEM_WR_REPLAY", None, replay_of=3),
    23: InstType("FLAT_WR_REPLAY", None, replay_of=4),
    24: InstType("FLAT_RD_REPLAY", None, replay_of=14),
    25: InstType("FATAL_HALT", None),
    26: InstType("DIDT_STALL_START", None),
    27: InstType("DIDT_STALL_END", None),
    28: InstType("VALU_MAI", C.VALU, VALU_PHASE),
    29: InstType("GO_TO_TRAP", C.CONTEXT),  # stop attributing until the next PC
}
del C
INST_PC_TYPE, INST_GO_TO_TRAP = 7, 29


# fmt: off
def _where(**more) -> dict:
    """The (sh, cu, slot, simd) fields of the wave-addressed tokens (official `group_id`)."""
    return dict(delta=4, sh=5, cu=(6, 9), slot=(10, 13), simd=(14, 15), **more)


def _reg_cs(name: str, id: int) -> Packet:
    # the official decoder reads ME as (field + 1) & 1
    return P(name, id, 4, 48, delta=4, pipe=(5, 6), me=(7, 8), addr=F(9, 15, hex=True), data=F(16, 47, hex=True))


GFX9 = PacketTable(
    "gfx9",
    [
        P("MISC", 0, 4, 16, delta=(4, 11), sh=12, kind=F(13, 15, names={k.value: k.name for k in MiscKind})),
        P("TIMESTAMP", 1, 4, 64, delta=4, timestamp=(16, 63)),  # used only through a TIME_RESET (§3.2)
        P("REG", 2, 4, 64, delta=4, pipe=(5, 6), me=(7, 8), kind=(10, 12), enable=flag(15), addr=F(16, 31, hex=True),
          data=F(32, 63, hex=True)),
        P("WAVE_START", 3, 4, 32, **_where(pipe=(16, 17), me=(18, 19), count=(22, 28), tg=(29, 31))),
        P("WAVE_ALLOC", 4, 4, 16, **_where()),
        _reg_cs("REG_CS", 5),
        P("WAVE_END", 6, 4, 16, **_where()),
        P("EVENT", 7, 4, 16, delta=4),
        P("EVENT_CS", 8, 4, 16, delta=4),
        P("EVENT_GFX1", 9, 4, 16, delta=4),
        P("INST", 10, 4, 16, delta=4, slot=(5, 8), simd=(9, 10),
          kind=F(11, 15, names={k: t.name for k, t in INST_TYPES.items()})),
        P("INST_PC", 11, 4, 64, delta=4, slot=(5, 8), simd=(9, 10), err=flag(15), pc_dw=F(16, 63, hex=True)),
        P("SHADERDATA", 12, 4, 48, **_where(data=F(16, 47, hex=True))),
        P("ISSUE", 13, 4, 32, delta=4, simd=(5, 6), status=F(8, 27, hex=True)),  # 2 bits per wave slot 0..9
        P("PERF", 14, 4, 64, delta=4, sh=5, cu=(6, 9), bank=(10, 11), counter0=(12, 24), counter1=(25, 37),
          counter2=(38, 50), counter3=(51, 63)),
        _reg_cs("REG_CS_PRIV", 15),
    ],
    id_window=4,
)

# The software header in front of every buffer (not a token: no id).
HEADER = P("HEADER", 0, 0, 64, legacy=(0, 12), version2=(13, 15), simd_mask=(16, 19), target_cu=(20, 24), dsa=25,
           seid=(26, 31), double_buffer=flag(32))
# fmt: on

TOKEN_NAMES = tuple(GFX9.at(t).name for t in range(16))  # type: ignore[union-attr]
TOKEN_WORDS = np.array([GFX9.at(t).bits // 16 for t in range(16)], np.int64)  # type: ignore[union-attr]
SLOTS = 10  # wave slots per SIMD; a token naming slot 10..15 makes the official decoder abort
ISSUE_STATUS_BITS = 2


def is_gfx9_header(h: int) -> bool:
    """Whether the first 8 bytes (little-endian) are a gfx9 software header (sqtt-format.md §1.3)."""
    return HEADER["legacy"].get(h) in (0, 0x11) and 4 <= HEADER["version2"].get(h) <= 6
