"""Damaged streams (issue 11 part 4): plausibility checks leave out records no valid stream gives, and
tools/oracles/damage_run.py's targets hold on real captures: never fewer correct rows than the 0.1.6 padding rule,
no bogus row a plausibility check could catch, an INFO record whenever a truncation cuts a wave."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import captures, codemap, shared_path

from attdec.decoders.common import BlobResult, drop_implausible
from attdec.model import Category, Wave, WaveState, empty_insts, target


def _wave(slot: int, begin: int, end: int, times: list[int]) -> Wave:
    insts = empty_insts(len(times))
    insts["time"] = times
    return Wave(0, 1, 2, slot, begin, end, insts)


def test_implausible_records_are_left_out_and_named():
    res = BlobResult(0, target("gfx1100"))
    fine = _wave(0, 100, 500, [100, 120, 120, 400])
    back = _wave(1, 100, 500, [110, 130, 90, 200, 600])  # 90: before an earlier record; 600: after the end
    cut = _wave(2, 100, 0, [150, 900])  # a cut wave (end 0): no end to be after
    odd = _wave(16, 100, 500, [150])  # gfx1100 SIMDs have 16 wave slots
    res.waves = [fine, back, cut, odd]
    drop_implausible(res)
    assert res.waves == [fine, back, cut]
    assert back.insts["time"].tolist() == [110, 130, 200]
    assert cut.insts["time"].tolist() == [150, 900] and len(fine.insts) == 4
    assert len(res.problems) == 1
    p = res.problems[0]
    assert "1 before its wave or an earlier record" in p and "1 after its wave ended" in p
    assert "1 in a wave slot the SIMD lacks" in p and "slot 1" in p


def test_valid_waves_are_untouched():
    res = BlobResult(0, target("gfx1201"))
    w = _wave(15, 10, 40, [10, 10, 20, 40])
    res.waves = [w]
    drop_implausible(res)
    assert res.waves == [w] and len(w.insts) == 4 and not res.problems


@pytest.mark.parametrize("capture", captures("gfx950/gemm_run0", "gfx1100/ops_run0", "gfx1201/sync_run0"))
def test_damage_run_targets(capture):
    from tools.oracles import damage_run

    folder = str(capture)
    cases = damage_run.run([folder], 2, 7, True)
    assert len(cases) == 8
    for c in cases:
        assert c["correct"] >= c["padding"], c
        assert c["catchable"] == 0, c
        if c["kind"] == "trunc" and c["cut"]:
            assert "WAVE_INCOMPLETE" in c["info"], c
    assert sum(c["correct"] for c in cases) > 0
    assert np.all([c["correct"] <= c["rows"] for c in cases])


@pytest.mark.skipif(not os.environ.get("ATTDEC_AMD_DECODER"), reason="AMD's decoder library is not part of attdec")
def test_damaged_sample_equals_amds_decoder():
    """With ATTDEC_AMD_DECODER naming a folder that holds AMD's librocprof-trace-decoder.so (0.1.6), a seeded
    sample of damaged blobs decodes to the library's records (tools/oracles/damage_run.py --decoder); skipped
    without it. The rules themselves are tested on synthetic streams below, without the library."""
    from tools.oracles import damage_run

    folders = [str(shared_path("captures", c)) for c in ("gfx950/gemm_run0", "gfx1100/gemm_run0", "gfx1201/sync_run0")]
    cases = damage_run.run(folders, 2, 7, True, os.environ["ATTDEC_AMD_DECODER"])
    assert len(cases) == 24
    assert [c for c in cases if not c["identical"]] == []


# -- damaged streams read as AMD's decoder 0.1.6 reads them (tools/oracles/damage_run.py --decoder) ----------
from attdec.decoders import decode_blob  # noqa: E402
from tests.support.sqtt_encoder import RdnaEncoder  # noqa: E402


def test_unassigned_id_is_an_8_bit_token():
    """0.1.6 reads a token id no table assigns (low nibble 7) as an 8-bit token: the nibble after it is not
    a token start, so an INST id there (low 3 bits 010) does not swallow the VALU after it."""
    e = RdnaEncoder(11).at(8).wave_start(simd=0, slot=0).at(20)
    e.raw(0x27, 8).valu(0, delta=2).at(40).wave_end(simd=0, slot=0)
    res = decode_blob(e.data(), "gfx1100", None, 0)
    (w,) = res.waves
    # the VALU, then the wave's end (a MESSAGE: s_endpgm without code)
    assert [(int(r["time"]), int(r["category"])) for r in w.insts] == [(22, Category.VALU), (23, Category.MESSAGE)]
    assert any("lost sync" in p for p in res.problems)


@pytest.mark.parametrize("vectorised", [True, False])
def test_instruction_after_its_wave_ended_belongs_to_no_wave(vectorised):
    """0.1.6 gives an INST, VALU_INST, IMM_ONE, IMMEDIATE or WAVE_READY token in a slot whose wave has ended
    (stray bits of a damaged stream, or a wave whose start was lost) to no wave: the ended wave keeps its
    records, its timeline and its end."""
    for token in (
        lambda e: e.valu(0).at(60).inst(0, "salu"),
        lambda e: e.imm_one(0),
        lambda e: e.immediate(1),
        lambda e: e.wave_ready(1),
    ):
        e = RdnaEncoder(11).at(8).wave_start(simd=0, slot=0).at(20).valu(0).at(30).wave_end(simd=0, slot=0)
        res = decode_blob(token(e.at(50)).data(), "gfx1100", None, 0, vectorised=vectorised)
        (w,) = res.waves
        assert w.end == 30
        records = [(int(r["time"]), int(r["category"])) for r in w.insts]
        assert records == [(20, Category.VALU), (21, Category.MESSAGE)]
        assert [tuple(t) for t in w.timeline] == [(WaveState.IDLE, 12), (WaveState.EXEC, 10)]


@pytest.mark.parametrize("vectorised", [True, False])
def test_end_of_the_traced_simd_without_a_wave_is_ignored(vectorised):
    """A WAVE_END on the traced SIMD where no wave runs (its start lost in a damaged span) gives 0.1.6 no
    occupancy rows and ends no wave; on another SIMD it gives an end with a start at time 0 first."""
    e = RdnaEncoder(11).at(8).wave_start(simd=0, slot=0).at(20).valu(0).at(30).wave_end(simd=0, slot=0)
    e.at(40).wave_end(simd=0, slot=0).at(44).wave_end(simd=0, slot=3).at(48).wave_end(simd=1, slot=2)
    res = decode_blob(e.data(), "gfx1100", None, 0, vectorised=vectorised)
    (w,) = res.waves
    assert w.end == 30
    occ = [(int(o["simd"]), int(o["slot"]), int(o["start"]), int(o["time"])) for o in res.occupancy]
    assert occ == [(1, 2, 1, 0), (0, 0, 1, 8), (0, 0, 0, 30), (1, 2, 0, 48)]


@pytest.mark.parametrize("vectorised", [True, False])
@pytest.mark.parametrize("generation", [11, 12])
def test_wave_start_ext_starts_no_wave(generation, vectorised):
    """AMD's decoder (0.1.4 to 0.1.6) reads a WAVE_START_EXT token and starts no wave with it (a bit flip
    in a WAVE_START's id makes one): on the traced SIMD its wave's end is then an end without a wave
    (ignored), on another SIMD an end with a start at time 0 before it."""
    arch = {11: "gfx1100", 12: "gfx1201"}[generation]
    for loc, occupancy in [
        ({"simd": 0, "slot": 1}, []),  # the traced SIMD
        ({"simd": 1, "slot": 14, "wgp": 1, "sa": 1}, [(129, 1, 14, 1, 0), (129, 1, 14, 0, 42)]),
    ]:
        e = RdnaEncoder(generation).at(8).wave_start(simd=0, slot=0).at(20).valu(0)
        e.at(30).token("WAVE_START_EXT", count=127, me=1, **loc).at(e.time + 4).inst(0, "salu")
        e.at(e.time + 8).wave_end(**loc).at(e.time + 20).wave_end(simd=0, slot=0)
        res = decode_blob(e.data(), arch, None, 0, vectorised=vectorised)
        assert [(w.simd, w.slot, w.begin, w.end) for w in res.waves] == [(0, 0, 8, 62)]
        occ = [tuple(int(o[k]) for k in ("cu", "simd", "slot", "start", "time")) for o in res.occupancy]
        assert sorted(occ) == sorted([(0, 0, 0, 1, 8), (0, 0, 0, 0, 62), *occupancy])


@pytest.mark.parametrize("generation", [11, 12])
def test_immediate_is_no_skipped_smem_line(generation):
    """In the PC walk an IMMED record may stand for a skipped VALU, memory or waitcnt line, but not for an
    SMEM line (0.1.6 on synthetic streams): at an `s_load_*` line the walk stops, another SMEM line is
    stepped over like any line that does not match. A lost or damaged record makes such a walk."""
    base = 0x7000_0100
    for smem, pcs in [
        ("s_load_b64 s[0:1], s[0:1], null", [0, None, None, None, None]),
        ("s_dcache_inv", [0, 12, 16, 20, 24]),
        ("global_load_b32 v1, v[0:1], off", [0, 4, 16, 20, 24]),  # VMEM: a skipped immediate
    ]:
        lines = [("v_lshlrev_b32_e32 v0, 2, v0", 4), (smem, 8), ("v_mov_b32_e32 v1, v0", 4)]
        lines += [
            ("s_waitcnt lgkmcnt(0)", 4),
            ("s_nop 0", 4),
            ("s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)", 4),
            ("s_endpgm", 4),
        ]
        e = RdnaEncoder(generation).kernel_entry(base).at(8).wave_start(simd=0, slot=0).at(20).valu(0)
        e.at(24).imm_one(0).at(28).inst(0, "message").at(32).inst(0, "message").at(40).wave_end(simd=0, slot=0)
        arch = {11: "gfx1100", 12: "gfx1201"}[generation]
        (w,) = decode_blob(e.data(), arch, codemap(lines, base), 0).waves
        assert [int(p) - base if p else None for p in w.insts["pc"]] == pcs, smem


@pytest.mark.parametrize("vectorised", [True, False])
def test_wave_started_without_a_pc_is_not_walked(vectorised):
    """A WAVE_START with no COMPUTE_PGM write before it (lost in a damaged span) has no entry PC: 0.1.6 then
    walks none of the wave's records, and a NEW_PC after a jump does not give them one either. A wave a
    context restore starts (no entry PC either) takes its PCs from the NEW_PC after its rfe."""
    base = 0x7000_0100
    lines = [("s_mov_b32 s0, 0", 4), ("s_setpc_b64 s[0:1]", 4), ("s_mov_b32 s1, 0", 4), ("s_mov_b32 s2, 0", 4)]
    code = codemap([*lines, ("s_endpgm", 4)], base)

    def pcs(e):
        e.at(e.time + 4).inst(0, "salu").at(e.time + 4).inst(0, "message").at(e.time + 8).wave_end(simd=0, slot=0)
        (w,) = decode_blob(e.data(), "gfx1100", code, 0, vectorised=vectorised).waves
        return [int(p) - base if p else None for p in w.insts["pc"]]

    def started(entry):
        e = RdnaEncoder(11)
        if entry:
            e.kernel_entry(entry)
        e.at(8).wave_start(simd=0, slot=0).at(20).inst(0, "salu").at(24).inst(0, "jump")
        return e.at(28).new_pc(0, base + 12)

    assert pcs(started(base)) == [0, 4, 12, 16, 16]
    assert pcs(started(base + 0x10000)) == [None, None, 12, 16, 16]  # an entry outside the code: from the NEW_PC
    assert pcs(started(0)) == [None] * 5
    restored = RdnaEncoder(11).kernel_entry(base).at(100).wave_start(simd=0, slot=0, count=68).at(110).inst(0, "rfe")
    assert pcs(restored.at(114).new_pc(0, base + 12)) == [12, 16, 16]


def test_gfx12_reads_gfx11_only_shader_data_ids_in_gfx12_layout():
    """gfx12 restates SHADER_DATA and SHADER_DATA_SHORT with 7-bit ids; the ids only gfx11's shorter
    patterns match (0x26, 0x76, ...) stay those tokens in AMD's decoder, read in gfx12's layout (0.1.6 on
    synthetic streams): a damaged byte there swallows what gfx12's token would, and moves time by its delta."""
    from attdec.decoders.rdna.packets import GFX12

    for gfx11_only, gfx12_id, name in [(0x76, 0x46, "SHADER_DATA_SHORT"), (0xF6, 0xC6, "SHADER_DATA_SHORT")]:
        assert GFX12.at(gfx11_only) is GFX12.at(gfx12_id) is GFX12[name]
        got = []
        for low in (gfx11_only, gfx12_id):
            e = RdnaEncoder(12).at(8).wave_start(simd=0, slot=0).at(20)
            e.raw(low, 8).valu(0, delta=2).at(e.time + 20).wave_end(simd=0, slot=0)
            (w,) = decode_blob(e.data(), "gfx1201", None, 0).waves
            got.append((w.begin, w.end, w.insts.tolist()))
        assert got[0] == got[1]
    for gfx11_only, gfx12_id in [(0x26, 0x06), (0xA6, 0x86)]:
        assert GFX12.at(gfx11_only) is GFX12.at(gfx12_id) is GFX12["SHADER_DATA"]


@pytest.mark.parametrize("vectorised", [True, False])
def test_durations_and_stalls_have_the_c_record_widths(vectorised):
    """A record's duration is the C record's int32 of its cycle count and its stall 24 bits; a timeline
    run's duration an int32 too; the wave's end is taken from the full count. A garbage TIMESTAMP delta
    (as a damaged stream gives) makes a SALU wait 2**32 + 101 cycles from its WAVE_READY (gfx11: stamped
    a cycle early, at 29) to its issue."""
    gap = (1 << 32) + 100
    e = RdnaEncoder(11).at(8).wave_start(simd=0, slot=0).at(20).valu(0).at(30).wave_ready(1)
    e.token("TIMESTAMP", value=gap).inst(0, "salu")
    e.at(e.time + 8).wave_end(simd=0, slot=0)
    (w,) = decode_blob(e.data(), "gfx1100", None, 0, vectorised=vectorised).waves
    issue = 30 + gap
    salu = w.insts[w.insts["category"] == Category.SALU]
    wait = issue - 29  # the stall; the record lasts one cycle more
    assert salu["time"].tolist() == [29]
    assert salu["duration"].tolist() == [int(np.int64(wait + 1).astype(np.int32))] == [102]
    assert salu["stall"].tolist() == [wait % (1 << 24)] == [101]
    assert w.end == issue + 8
    assert all(-(1 << 31) <= d < 1 << 31 for _, d in w.timeline)
