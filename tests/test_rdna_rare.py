"""RDNA tokens no capture has: traps, rfe, context save/restore, MISC save-context, NEW_PC, and the gfx11
barrier rule that differs between AMD decoder versions. Streams come from tests/support/sqtt_encoder.py; every
expected record is derived by hand from the rules (sqtt-format.md §5.3, §7.1; AMD's `gfx10wave.cpp`
`apply_inst` / `complete_wave` and `rdna_sqtt.cpp` WAVE_START cases), not from attdec's output."""

from __future__ import annotations

import pytest
from conftest import codemap

from attdec.decoders import rdna
from attdec.decoders.compat import DEFAULT, Rules
from attdec.model import Category, WaveState
from attdec.model.target import target
from tests.support.sqtt_encoder import RdnaEncoder

ARCH = {11: target("gfx1100"), 12: target("gfx1201")}
ENTRY = 0x7000_0100
S, C = WaveState, Category
SAVE, RESTORE = 66, 68  # WAVE_START counts that mark a context save / restore


def start(gen: int) -> RdnaEncoder:
    """HEADER (target SA 0, WGP 0, SIMD 0), the kernel entry, wave 0 of SIMD 0 started at 10, SALU at 20."""
    e = RdnaEncoder(gen).kernel_entry(ENTRY)
    e.at(10).wave_start(simd=0, slot=0)
    return e.at(20).inst(0, "salu")


def decode(e: RdnaEncoder, gen: int, code=None, rules: Rules = DEFAULT):
    """Decode with the scalar model; the vectorised driver must decline these blobs or agree."""
    data = e.data()
    res = rdna.decode(data, ARCH[gen], code, 0, vectorised=False, rules=rules)
    fast = rdna.decode(data, ARCH[gen], code, 0, vectorised=True, rules=rules)
    assert [w.insts.tobytes() for w in fast.waves] == [w.insts.tobytes() for w in res.waves]
    assert fast.occupancy.tobytes() == res.occupancy.tobytes()
    return res


def rows(wave):
    return [(int(r["time"]), int(r["duration"]), int(r["stall"]), C(int(r["category"])).name) for r in wave.insts]


def timeline(wave):
    return [(S(s).name, d) for s, d in wave.timeline]


@pytest.mark.parametrize("gen", [11, 12])
def test_trap_ignores_the_wave_until_rfe(gen):
    e = start(gen)
    e.at(30).inst(0, "trap")  # a 1-cycle CONTEXT record; the wave is trapped
    e.at(35).valu(0).at(39).imm_one(0).at(43).inst(0, "salu")  # the handler's instructions: ignored
    e.at(50).inst(0, "rfe")  # trap ends: the CONTEXT record covers it (to 50 + 1), a new PC slot opens
    e.at(60).valu(0)
    e.at(70).wave_end(simd=0, slot=0)  # s_endpgm: a MESSAGE from the last record's end
    res = decode(e, gen)
    assert res.problems == []
    (w,) = res.waves
    assert (w.begin, w.end, w.contexts) == (10, 70, 0)
    assert rows(w) == [(20, 1, 0, "SALU"), (30, 21, 0, "CONTEXT"), (60, 1, 0, "VALU"), (61, 9, 0, "MESSAGE")]
    assert timeline(w) == [("IDLE", 10), ("EXEC", 50)]


def _code(lines):
    return codemap(lines, ENTRY - 0x100, 0x100)


@pytest.mark.parametrize("gen", [11, 12])
def test_pc_after_rfe_comes_from_new_pc(gen):
    code = _code(
        [("s_mov_b32 s0, 0", 4), ("s_trap 2", 4), ("s_cbranch_scc0 3", 4), ("v_mov_b32_e32 v0, 0", 4), ("s_endpgm", 4)]
    )

    def stream(new_pc=None):
        e = start(gen).at(30).inst(0, "trap").at(50).inst(0, "rfe")
        if new_pc is not None:
            e.at(55).new_pc(0, new_pc)
        return e.at(60).valu(0).at(70).wave_end(simd=0, slot=0)

    # No NEW_PC: the record after the rfe has an empty PC slot, so the walk goes on from the last line it
    # matched; the branch line there cannot be a VALU, so it stops, and says so (not damage: no exit 3).
    res = decode(stream(), gen, code)
    (w,) = res.waves
    assert [int(p) for p in w.insts["pc"]] == [ENTRY, 0, 0, 0]  # CONTEXT records get no PC
    assert (res.walks, res.walks_stopped, res.damaged) == (1, 1, False)
    assert res.problems == [] and res.warnings == [
        "PC walk stopped early in 1 of 1 traced waves, their later records have pc 0 "
        f"(first: se 0 cu 0 simd 0 slot 0 at record 2 of 4, after pc {ENTRY:#x})"
    ]
    # the handler returns with a NEW_PC: it fills the open slot, and the walk goes on from there
    res = decode(stream(ENTRY + 12), gen, code)
    assert res.problems == res.warnings == [] and (res.walks, res.walks_stopped) == (1, 0)
    (w,) = res.waves
    assert [int(p) for p in w.insts["pc"]] == [ENTRY, 0, ENTRY + 12, ENTRY + 16]


@pytest.mark.parametrize("gen", [11, 12])
def test_context_save_and_restore(gen):
    e = start(gen)
    e.at(30).wave_start(simd=0, slot=0, count=SAVE)  # save: a CONTEXT record, trapped; occupancy ends
    e.at(40).valu(0)  # ignored: the wave is saved
    e.at(100).wave_start(simd=0, slot=0, count=RESTORE)  # restore: the CONTEXT record covers it; occupancy starts
    e.at(110).inst(0, "rfe")  # the wave runs again
    e.at(120).valu(0).at(130).wave_end(simd=0, slot=0)
    res = decode(e, gen)
    assert res.problems == []
    (w,) = res.waves
    assert (w.begin, w.end, w.contexts) == (10, 130, 2)
    assert rows(w) == [(20, 1, 0, "SALU"), (30, 81, 0, "CONTEXT"), (120, 1, 0, "VALU"), (121, 9, 0, "MESSAGE")]
    assert timeline(w) == [("IDLE", 10), ("EXEC", 110)]
    occ = [tuple(int(x) for x in r) for r in res.occupancy.tolist()]
    assert occ == [(0, 0, 0, 0, 1, 10, ENTRY), (0, 0, 0, 0, 0, 30, ENTRY), (0, 0, 0, 0, 1, 100, ENTRY),
                   (0, 0, 0, 0, 0, 130, ENTRY)]  # fmt: skip


@pytest.mark.parametrize("gen", [11, 12])
def test_misc_save_context_and_a_restore_without_a_start(gen):
    e = start(gen)
    e.at(30).token("MISC", save_context=1)  # every running wave goes to standby
    e.at(40).valu(0).at(50).wave_end(simd=0, slot=0)  # ignored; no s_endpgm MESSAGE for a trapped wave
    # slot 1: a wave saved before the trace began is restored; it starts there, with no PC
    e.at(60).wave_start(simd=0, slot=1, count=RESTORE).at(70).inst(1, "rfe")
    e.at(80).valu(1).at(90).wave_end(simd=0, slot=1)
    res = decode(e, gen)
    w0, w1 = sorted(res.waves, key=lambda w: w.slot)
    assert rows(w0) == [(20, 1, 0, "SALU")] and (w0.end, w0.contexts) == (50, 0)
    assert rows(w1) == [(80, 1, 0, "VALU"), (81, 9, 0, "MESSAGE")]
    assert (w1.begin, w1.end, w1.contexts) == (60, 90, 1)
    occ = [tuple(int(x) for x in r) for r in res.occupancy.tolist()]
    assert occ == [(0, 0, 0, 0, 1, 10, ENTRY), (0, 0, 0, 0, 0, 50, ENTRY), (0, 0, 0, 1, 1, 60, 0),
                   (0, 0, 0, 1, 0, 90, 0)]  # fmt: skip


def test_gfx11_barrier_rule_differs_between_decoder_versions():
    """0.1.6 (the default) leaves s_barrier a plain immediate; the newer rule turns it into a MESSAGE that
    covers the wait, up to the wave's next event."""
    e = start(11).at(30).inst(0, "barrier").at(45).valu(0).at(60).wave_end(simd=0, slot=0)
    (w,) = decode(e, 11).waves
    assert rows(w) == [(20, 1, 0, "SALU"), (21, 10, 9, "IMMED"), (45, 1, 0, "VALU"), (46, 14, 0, "MESSAGE")]
    (w,) = decode(e, 11, rules=Rules(gfx11_barrier_extension=True)).waves
    assert rows(w) == [(20, 1, 0, "SALU"), (21, 24, 9, "MESSAGE"), (45, 1, 0, "VALU"), (46, 14, 0, "MESSAGE")]
    assert timeline(w) == [("IDLE", 10), ("EXEC", 1), ("WAIT", 25), ("EXEC", 14)]


def test_gfx11_valub_16_cycles_differ_between_decoder_versions():
    e = start(11).at(30).inst(0, "valub_16").at(60).wave_end(simd=0, slot=0)
    assert rows(decode(e, 11).waves[0])[1] == (30, 16, 0, "VALU")
    e = RdnaEncoder(11, dp_rate=3).kernel_entry(ENTRY).at(10).wave_start(simd=0, slot=0)  # dprate 2^(3-1)
    e.at(30).inst(0, "valub_16").at(60).wave_end(simd=0, slot=0)
    assert rows(decode(e, 11, rules=Rules(gfx11_valub_16_dprate=True)).waves[0])[0] == (30, 4, 0, "VALU")
