"""RDNA (gfx10, gfx11, gfx12) SQTT token layouts and INST opcodes, as data (sqtt-format.md §2).

A token is nibble-aligned, read low bits first, and identified by its low 3 to 8 bits. gfx11 is gfx10 plus
overrides and gfx12 is gfx11 plus overrides, as in AMD's table builder (RTD `gfx12/gfx12token.cpp`
`TokenLookupTable` for the gfx12 rows). Field positions are bits within the token, first..last as the
spec writes them. `RdnaFormat` adds the few framing rules that are not layouts.
"""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar

import numpy as np

from attdec.decoders.compat import Rules
from attdec.decoders.packets import Field, Packet, PacketTable, flag
from attdec.model import Category
from attdec.model.record import Frozen
from attdec.model.target import STREAM_FORMATS

F, P = Field, Packet

# ----------------------------------------------------------------------------------------------------
# INST opcodes (sqtt-format.md §2.7; names are AMD's): category and nominal cycles of each
# ----------------------------------------------------------------------------------------------------
DPRATE, DPRATE_DERATE = -1, -2  # cycles that come from the HEADER: dprate, dprate * derate


class Op(Frozen):
    """One INST opcode: its name, record category and cycles. `other_simd`: issued on the traced WGP's
    other SIMD (an INST_OTHER_SIMD record, not a record of a traced wave)."""

    name: str
    category: Category
    cycles: int
    other_simd: bool = False


def _series(first_op: int, prefix: str, n0: int, n1: int, cat: Category, other_simd: bool = False) -> dict[int, Op]:
    """Opcodes `prefix_n0` .. `prefix_n1` from `first_op` on, each taking n cycles."""
    return {first_op + k - n0: Op(f"{prefix}_{k}", cat, k, other_simd) for k in range(n0, n1 + 1)}


C = Category
_COMMON_OPS: dict[int, Op] = {
    0: Op("salu", C.SALU, 1),
    1: Op("smem_rd", C.SMEM, 1),
    2: Op("smem_wr", C.SMEM, 1),
    3: Op("branch_taken", C.JUMP, 1),
    4: Op("branch_not_taken", C.NEXT, 1),
    5: Op("jump", C.SALU, 1),  # s_setpc & co: the next PC comes from NEW_PC
    6: Op("trap", C.CONTEXT, 1),
    7: Op("salu_no_exec", C.SALU, 1),
    8: Op("fatal_halt", C.CONTEXT, 1),
    9: Op("message", C.MESSAGE, 1),
    11: Op("valut_4", C.VALU, 4),
    12: Op("valub_1", C.VALU, 1),
    13: Op("valub_2", C.VALU, 2),
    14: Op("valub_4", C.VALU, 4),
    15: Op("valub_16", C.VALU, 16),
    18: Op("vinterp", C.VALU, 1),
    19: Op("barrier", C.IMMED, 1),
    28: Op("flat_rd_2", C.FLAT, 2),
    **_series(29, "flat_wr", 3, 6, C.FLAT),
    **_series(33, "sgmem_rd", 1, 2, C.VMEM),
    **_series(35, "sgmem_wr", 1, 6, C.VMEM),
    41: Op("lds_rd", C.LDS, 1),
    **_series(42, "lds_wr", 1, 5, C.LDS),
    **_series(47, "buf_rd", 1, 2, C.VMEM),
    **_series(49, "buf_wr", 1, 6, C.VMEM),
    **_series(55, "img_sample", 1, 12, C.VMEM),
    **_series(68, "img_rd", 1, 4, C.VMEM),
    **_series(72, "img_wr", 2, 8, C.VMEM),
    **_series(80, "lds_other_simd", 1, 5, C.LDS, other_simd=True),
    **_series(85, "flat_other_simd", 2, 6, C.FLAT, other_simd=True),
    103: Op("raytrace_8", C.BVH, 8),
    104: Op("raytrace_9", C.BVH, 9),
    105: Op("raytrace_11", C.BVH, 11),
    106: Op("raytrace_12", C.BVH, 12),
    110: Op("lds_dir_load", C.LDS, 1),
    111: Op("lds_param_load", C.LDS, 1),
    114: Op("salu_wr_exec", C.SALU, 1),
    115: Op("valu1_wr_exec", C.VALU, 1),
    116: Op("valu_b2_wr_exec", C.VALU, 2),
    117: Op("rfe", C.SALU, 1),  # return from trap
    119: Op("lds_other_simd_6", C.LDS, 6, other_simd=True),
}
GFX11_OPS: dict[int, Op] = {
    **_COMMON_OPS,
    10: Op("valu_1", C.VALU, DPRATE),
    16: Op("valub_dfdp", C.VALU, 1),
    17: Op("valub_dfdp_derate", C.VALU, 1),
    **_series(90, "vmem_other_simd", 1, 12, C.VMEM, other_simd=True),
    112: Op("subv_loop_begin", C.SALU, 1),
    113: Op("subv_loop_end", C.SALU, 1),
    118: Op("lds_bvh_6", C.LDS, 6),
}
GFX12_OPS: dict[int, Op] = {
    **_COMMON_OPS,
    10: Op("valu_1", C.VALU, 1),
    19: Op("barrier_wait", C.IMMED, 1),
    118: Op("lds_bvh_6", C.BVH, 6),
    120: Op("lds_other_simd_10", C.LDS, 10, other_simd=True),
    121: Op("lds_bvh_10", C.BVH, 10),
    122: Op("barrier_signal", C.MESSAGE, 1),
    135: Op("dyn_vgpr", C.SALU, 1),
    136: Op("try_lock", C.SALU, 1),
    137: Op("unlock", C.SALU, 1),
    138: Op("barrier_join", C.MESSAGE, 1),
    **{140 + k: Op(f"wmma_{8 << k}", C.VALU, 8 << k) for k in range(4)},
    146: Op("valu_dpfp", C.VALU, DPRATE),
    147: Op("valu_derate", C.VALU, DPRATE_DERATE),
    150: Op("icpref", C.SMEM, 1),
    151: Op("kcpref", C.SMEM, 1),
    152: Op("salu_float3", C.SALU, 3),
    153: Op("valu_scl_trans", C.VALU, 1),
    155: Op("salu2", C.SALU, 2),
    156: Op("salu5", C.SALU, 5),
    **_series(188, "vmem_other_simd", 1, 34, C.VMEM, other_simd=True),
    **_series(222, "block_store", 1, 34, C.VMEM),
}
del C

# Opcodes the wave model treats apart from their category (sqtt-format.md §5.3, §8.2).
OP_JUMP, OP_TRAP, OP_BARRIER, OP_RFE = 5, 6, 19, 117


# ----------------------------------------------------------------------------------------------------
# Token layouts (laid out by hand: one packet per line where it fits)
# ----------------------------------------------------------------------------------------------------
# fmt: off
def _wave_start(name: str, id: int, bits: int) -> Packet:
    return P(name, id, 5, bits, delta=(5, 6), sa=7, simd=(8, 9), wgp=(10, 12), slot=(13, 17), queue=(18, 20),
             pipe=(21, 22), me=23, dispatcher=24, count=(25, 31))


def _wave_start_gfx12(name: str, id: int, bits: int, **ext) -> Packet:
    return P(name, id, 5, bits, delta=(5, 6), sa=7, simd=(8, 9), wgp=(10, 13), slot=(15, 19), pipe=(20, 21),
             me=22, count=(25, 31), **ext)


def _shader_data(name: str, id: int, id_bits: int, bits: int, data_bits: int, gfx12: bool = False) -> Packet:
    if gfx12:
        return P(name, id, id_bits, bits, delta=(7, 9), sa=10, simd=(11, 12), wgp=(13, 16), slot=(17, 21),
                 data=F(22, 21 + data_bits, hex=True), sdt=(22 + data_bits, 23 + data_bits))
    return P(name, id, id_bits, bits, delta=(5, 7), sa=8, simd=(9, 10), wgp=(11, 13), invalid=flag(14), slot=(15, 19),
             data=F(20, 19 + data_bits, hex=True))


def _wave_mask(name: str, id: int) -> Packet:
    return P(name, id, 5, 24, delta=(5, 7), mask=F(8, 23, hex=True))  # bit i: wave slot i of the target SIMD


def _names(ops: dict[int, Op]) -> dict[int, str]:
    return {k: v.name for k, v in ops.items()}


HEADER_VERSION = F(7, 12)  # in every family's HEADER: which family wrote the stream
_HEADER_FIELDS: dict[str, Any] = {
    "version": HEADER_VERSION, "simd": (13, 14), "wgp": (15, 17), "sa": 19, "nsa": 20, "nwgp": (21, 23),
    "wsm": (25, 26), "ucf": flag(27), "dp_rate": (28, 31), "wv20": flag(32), "dp_derate": (33, 35),
}

GFX10 = PacketTable(
    "gfx10",
    [
        P("TIME", 0x8, 4, 8, delta=(4, 7), delta_bias=4),
        P("REG", 0x9, 4, 64, delta=(4, 6), pipe=(7, 8), me=(9, 10), rdp=flag(11), context=(12, 14), cs=flag(15),
          addr=F(16, 31, hex=True), data=F(32, 63, hex=True)),
        P("IMM_ONE", 0xD, 4, 12, delta=(4, 6), slot=(7, 11)),
        P("ALU_EXEC", 0xE, 4, 8, delta=(4, 5), src=(6, 7)),
        P("VMEM_EXEC", 0xF, 4, 8, delta=(4, 5), src=(6, 7)),
        P("INST", 0b010, 3, 20, delta=(4, 6), wave64_hi=flag(7), slot=(8, 12), op=F(13, 19, names=_names(GFX11_OPS))),
        P("VALU_INST", 0b011, 3, 12, delta=(3, 5), wave64_hi=flag(6), slot=(7, 11)),
        _wave_mask("IMMEDIATE", 0x04),
        _wave_mask("WAVE_READY", 0x14),
        _wave_start("WAVE_START", 0x0C, 32),
        _wave_start("WAVE_START_EXT", 0x1C, 48),
        P("WAVE_ALLOC", 0x05, 5, 20, delta=(5, 7)),
        P("WAVE_END", 0x15, 5, 20, delta=(5, 7), sa=8, simd=(9, 10), wgp=(11, 13), slot=(15, 19)),
        _shader_data("SHADER_DATA", 0x06, 5, 52, 32),
        _shader_data("SHADER_DATA_SHORT", 0x16, 5, 28, 8),
        P("TIMESTAMP", 0x01, 7, 64, kind=(14, 15), value=(16, 63)),  # kind 1: time += value; 2: realtime
        P("HEADER", 0x11, 7, 64, **_HEADER_FIELDS),
        P("NEW_PC", 0x21, 7, 64, delta=(8, 10), slot=(11, 15), pc_dw=F(16, 61, hex=True), err=flag(62)),
        P("UTIL_COUNTER", 0x31, 7, 64, delta=(7, 8), cid=(9, 10)),
        P("MISC", 0x51, 7, 24, delta=(7, 15), packet_lost=flag(16), gc_rinse=flag(17), save_context=flag(19),
          tt_stall_begin=flag(20), tt_stall_end=flag(21), didt_stall_begin=flag(22), didt_stall_end=flag(23)),
        P("REG_INIT", 0x71, 7, 64, delta=(7, 9), vmid=(10, 13), pipe=(14, 15), me=(16, 17), kind=(18, 19),
          data=F(20, 51, hex=True), sync_id=(52, 61)),
        P("EVENT", 0x61, 8, 24, delta=(8, 10), bop=flag(11), evtype=(12, 13), pipe=(14, 15), me=(16, 17),
          event=(18, 23)),
        P("EVENT_SYNC", 0xE1, 8, 32, delta=(8, 10)),
        P("NOP", 0x0, 4, 4),  # carries no time; runs of zero bytes are NOPs
    ],
    id_window=8,
)

GFX11 = GFX10.derive(
    "gfx11",
    [
        P("TIMESTAMP", 0x01, 7, 48, pl=flag(8), rt=flag(9), value=(12, 47)),  # rt: realtime sample; pl: packet lost
        P("UTIL_COUNTER", 0x31, 7, 48, delta=(7, 8), cid=(9, 10), spi_busy=(11, 14), vdata0=(15, 18),
          vdata1=(19, 22), sdata0=(23, 26), sdata1=(27, 30), lds0=(31, 34), lds1=(35, 38), exp0=(39, 42),
          exp1=(43, 46), sa=47),
    ],
)

GFX12 = GFX11.derive(
    "gfx12",
    [
        P("INST", 0b010, 3, 20, delta=(3, 5), wave64_hi=flag(6), slot=(7, 11), op=F(12, 19, names=_names(GFX12_OPS))),
        _shader_data("SHADER_DATA", 0x06, 7, 56, 32, gfx12=True),
        _shader_data("SHADER_DATA_SHORT", 0x46, 7, 32, 8, gfx12=True),
        P("EXEC_POPCOUNT1", 0x66, 7, 24, delta=(7, 9)),
        P("EXEC_POPCOUNT3", 0x16, 6, 48, delta=(6, 8)),
        # 72 bits; AMD's reader decodes it from the 64-bit word 8 bits in (past the id)
        P("NEW_PC", 0x21, 7, 72, window=8, delta=(8, 10), slot=(11, 15), pc_dw=F(16, 70, hex=True), err=flag(71)),
        _wave_start_gfx12("WAVE_START", 0x0C, 32),
        # 40 bits, then one 8-bit VGPR/LDS extension byte for each following byte with bit 0 set (§2.4)
        _wave_start_gfx12("WAVE_START_EXT", 0x1C, 40, extlds=flag(32), wg_id=(33, 37), last=flag(38),
                          dyn_vgpr=flag(39)),
        P("WAVE_ALLOC", 0x05, 5, 24, delta=(5, 7)),
        P("WAVE_END", 0x15, 5, 20, delta=(5, 7), sa=8, simd=(9, 10), wgp=(11, 14), slot=(15, 19)),
        P("TIMESTAMP", 0x01, 7, 64, rt=flag(7), pl=flag(8), tl=flag(9), value=(12, 63)),
        P("HEADER", 0x11, 7, 64, **_HEADER_FIELDS, double_buffer=flag(43), exclude_barrier_wait=flag(59)),
    ],
)
# fmt: on


class RdnaFormat(Frozen):
    """One RDNA stream format: its packets, INST opcodes and the framing rules that are not layouts."""

    # one object per format, compared and hashed as itself (a cache key; its `ops` dict has no hash)
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    name: str
    generation: int
    table: PacketTable
    ops: dict[int, Op]
    ready_early: bool  # WAVE_READY is stamped one cycle early and moved ahead of same-cycle tokens (§2.5)
    whole_window: bool  # a token is decoded only if a whole 64-bit word from its start fits in the buffer
    ext_bytes: bool  # WAVE_START_EXT is followed by extension bytes (variable length, §2.4)


FORMATS = {
    10: RdnaFormat("gfx10", 10, GFX10, GFX11_OPS, ready_early=True, whole_window=False, ext_bytes=False),
    11: RdnaFormat("gfx11", 11, GFX11, GFX11_OPS, ready_early=True, whole_window=False, ext_bytes=False),
    12: RdnaFormat("gfx12", 12, GFX12, GFX12_OPS, ready_early=False, whole_window=True, ext_bytes=True),
}
# HEADER version -> the stream format that writes it (sqtt-format.md §1.2)
HEADER_VERSIONS = {1: "gfx10", 2: "gfx10", 3: "gfx11", 4: "gfx12", 5: "gfx12.5"}
VERSION_GENERATION = {v: STREAM_FORMATS[f].generation for v, f in HEADER_VERSIONS.items() if STREAM_FORMATS[f].listed}

# Token types as small integers (the splitter's numpy type column), every family's names in one list.
TOKEN_NAMES = (*dict.fromkeys(p.name for t in (GFX10, GFX11, GFX12) for p in t.rows), "UNKNOWN")
T = {name: i for i, name in enumerate(TOKEN_NAMES)}


@cache
def ops(generation: int, rules: Rules) -> dict[int, Op]:
    """INST opcodes of a generation under a decoder version's rules."""
    table = dict(FORMATS[generation].ops)
    if generation == 11 and rules.gfx11_valub_16_dprate:
        table[15] = Op("valub_16", Category.VALU, DPRATE)
    return table


class Header(Frozen):
    """What the HEADER token tells the decoder (sqtt-format.md §2.6.1)."""

    version: int
    target_cu: int  # (sa << 7) | wgp, the official "cu" of the traced WGP
    target_simd: int
    dprate: int
    derate: int
    exclude_barrier_wait: bool  # gfx12: s_barrier_wait may leave no token (§8.4)

    @classmethod
    def read(cls, word: int, table: PacketTable) -> Header:
        f = table["HEADER"].decode(word)
        code = f["dp_rate"] & (0xF if f["version"] < 3 else 7)
        return cls(
            version=f["version"],
            target_cu=(f["sa"] << 7) | f["wgp"],
            target_simd=f["simd"],
            dprate=(1 << (code - 1)) if code else 1,
            derate=1 << f["dp_derate"],
            exclude_barrier_wait=bool(f.get("exclude_barrier_wait", 0)) and f["version"] == 4,
        )


# Before the first HEADER, the decoders behave as for target WGP 0, SIMD 0 and unit rates.
NO_HEADER = Header(version=0, target_cu=0, target_simd=0, dprate=1, derate=1, exclude_barrier_wait=False)

# Compute register offsets (REG with CS = 1) the decoders latch: the kernel entry is PGM_HI:PGM_LO << 8.
COMPUTE_PGM_LO, COMPUTE_PGM_HI = 0x0C, 0x0D
ADDR_MASK = (1 << 48) - 1


Word = TypeVar("Word", int, np.ndarray)


def entry_pc(pgm_lo: Word, pgm_hi: Word) -> Word:
    """Kernel entry address from the latched COMPUTE_PGM_LO/HI values (sqtt-format.md §4)."""
    return (((pgm_hi << 32) | pgm_lo) << 8) & ADDR_MASK


@cache
def op_columns(generation: int, rules: Rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(category, cycles, other-SIMD flag) of every 8-bit opcode as numpy columns; NONE, 0 and False
    where the opcode is unassigned (the decoders ignore it)."""
    cat = np.full(256, int(Category.NONE), np.int64)
    cyc = np.zeros(256, np.int64)
    other = np.zeros(256, bool)
    for k, op in ops(generation, rules).items():
        cat[k], cyc[k], other[k] = op.category, op.cycles, op.other_simd
    return cat, cyc, other
