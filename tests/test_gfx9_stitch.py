"""gfx9 PC walk on synthesized streams: the entry PC, PC tokens (INST type PC + INST_PC) and the gfx9 rules
of sqtt-format.md §8.4 (barrier entry/exit, swapped neighbours, v_mfma_scale widening)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from attdec.decoders import gfx9
from attdec.decoders.common import CodeMap
from attdec.decoders.compat import DEFAULT, NEWEST
from attdec.model import Category
from attdec.model.target import target
from tests.support import sqtt_encoder as enc

pytest.importorskip("attdec.decoders.stitch", reason="the shared PC walk (stitch.py) has not landed yet")

BASE = 0x7000_0000


def code(*lines):
    """CodeMap from (vaddr, size, text) lines, loaded at BASE."""
    cm = CodeMap()
    cm.add(
        [SimpleNamespace(address=a, size=s, text=t, mnemonic=t.split(" ")[0], target=None) for a, s, t in lines], BASE
    )
    return cm


def run(e, cm, warnings=(), rules=DEFAULT):
    r = gfx9.decode(e.data(), target("gfx950"), cm, 0, where="t.att", rules=rules)
    assert r.problems == [] and [w for w in r.warnings if "WAVE_INCOMPLETE" not in w] == list(warnings)
    (w,) = r.waves
    return [
        (int(x["pc"]) - BASE if x["pc"] else None, Category(x["category"]).name, int(x["time"]), int(x["duration"]))
        for x in w.insts
    ]


def wave(body):
    e = enc.Gfx9Encoder(target_cu=0).kernel_entry(BASE)
    e.wave_start(0, 0, 0)
    body(e)
    e.advance(4).wave_end(0, 0, 0)
    return e


def op(e, itype, gap=4, status=2):
    """One issued instruction of INST type `itype` on SIMD 0 slot 0, `gap` cycles after the previous one."""
    e.advance(gap).issue(0, {0: status})
    if status == 2:
        e.inst(0, 0, itype)
    return e


def test_entry_pc_and_sequential_walk():
    cm = code(
        (0, 8, "s_load_dwordx2 s[0:1], s[4:5], 0x0"),
        (8, 4, "s_mov_b32 s2, 0"),
        (12, 4, "v_mov_b32_e32 v0, 0"),
        (16, 4, "s_waitcnt lgkmcnt(0)"),
        (20, 4, "s_endpgm"),
    )
    e = wave(lambda e: [op(e, 0), op(e, 1), op(e, 5), op(e, 0, status=3), op(e, 15)])
    assert [(p, c) for p, c, _, _ in run(e, cm)] == [
        (0, "SMEM"),
        (8, "SALU"),
        (12, "VALU"),
        (16, "IMMED"),
        (20, "MESSAGE"),
    ]


def test_pc_token_gives_next_record_its_pc():
    cm = code((0, 4, "s_setpc_b64 s[0:1]"), (0x100, 4, "v_mov_b32_e32 v0, 0"), (0x104, 4, "s_endpgm"))

    def body(e):
        op(e, 7)  # the PC type: the next PC comes from INST_PC
        op(e, 5)
        e.inst_pc(0, 0, BASE + 0x100)
        op(e, 15)

    assert [(p, c) for p, c, _, _ in run(wave(body), cm)] == [(0, "SALU"), (0x100, "VALU"), (0x104, "MESSAGE")]


def test_barrier_entry_and_exit_are_one_wait_record():
    """The barrier's entry (MESSAGE) and exit (IMMED) records share its PC and, as AMD's 0.1.6 reports
    them (a rocprofv3 session's wave files), are one IMMED record from the entry to the exit's end."""
    cm = code((0, 4, "v_mov_b32_e32 v0, 0"), (4, 4, "s_barrier"), (8, 4, "v_mov_b32_e32 v1, 0"), (12, 4, "s_endpgm"))
    e = wave(lambda e: [op(e, 5), op(e, 15), op(e, 0, status=3), op(e, 5), op(e, 15)])
    no_barrier = code((0, 4, "v_mov_b32_e32 v0, 0"), (4, 4, "s_sendmsg sendmsg(MSG_INTERRUPT)"))
    walk_stops = [
        "PC walk stopped early in 1 of 1 traced waves, their later records have pc 0 (first: se 0 cu 0 "
        "simd 0 slot 0 at record 2 of 5, after pc 0x70000004)"
    ]
    got, entry_exit = run(e, cm), run(e, no_barrier, walk_stops)[:3]  # the same records, not walked as a barrier
    assert [(p, c) for p, c, _, _ in got] == [(0, "VALU"), (4, "IMMED"), (8, "VALU"), (12, "MESSAGE")]
    (_, _, t_entry, _), (_, _, t_exit, d_exit) = entry_exit[1:]
    assert [c for _, c, _, _ in entry_exit] == ["VALU", "MESSAGE", "IMMED"]
    assert got[1][2:] == (t_entry, t_exit + d_exit - t_entry)
    # the newest source (--compat rocm-7.13) keeps both records on the barrier's PC
    assert [(p, c) for p, c, _, _ in run(e, cm, rules=NEWEST)][:3] == [(0, "VALU"), (4, "MESSAGE"), (4, "IMMED")]


def test_swapped_neighbours_are_reordered_to_match_the_code():
    cm = code(
        (0, 8, "s_load_dword s0, s[4:5], 0x0"),
        (8, 4, "s_mov_b32 s1, 0"),
        (12, 4, "v_mov_b32_e32 v0, 0"),
        (16, 4, "s_endpgm"),
    )
    e = wave(lambda e: [op(e, 0), op(e, 5), op(e, 1), op(e, 15)])  # VALU reported before the SALU
    got = run(e, cm)
    assert [(p, c) for p, c, _, _ in got] == [(0, "SMEM"), (8, "SALU"), (12, "VALU"), (16, "MESSAGE")]
    assert got[1][2] > got[2][2]  # the records keep their own times


def test_mfma_scale_widened_into_a_free_gap():
    cm = code(
        (0, 8, "s_load_dword s0, s[4:5], 0x0"),
        (8, 8, "v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[0:7], v[0:7], a[0:3], v8, v9"),
        (16, 4, "v_mov_b32_e32 v0, 0"),
        (20, 4, "s_endpgm"),
    )
    plain = code(
        (0, 8, "s_load_dword s0, s[4:5], 0x0"),
        (8, 8, "v_mfma_f32_16x16x32_f16 a[0:3], v[0:3], v[0:3], 0"),
        (16, 4, "v_mov_b32_e32 v0, 0"),
        (20, 4, "s_endpgm"),
    )
    e = wave(lambda e: [op(e, 0), op(e, 28, gap=12), op(e, 5, gap=40), op(e, 15)])
    base, scaled = run(e, plain), run(e, cm)
    assert [x[0] for x in scaled] == [0, 8, 16, 20]
    (t, d), (t2, d2) = base[1][2:], scaled[1][2:]
    assert (t2, d2) == (t - 4, d + 8)  # 4 cycles earlier, and 4 more into the free gap after
    assert base[2] == scaled[2]


def test_unfinished_issue_stops_the_walk():
    cm = code((0, 4, "v_mov_b32_e32 v0, 0"), (4, 4, "v_mov_b32_e32 v1, 0"), (8, 4, "s_endpgm"))
    e = enc.Gfx9Encoder(target_cu=0).kernel_entry(BASE).wave_start(0, 0, 0)
    op(e, 5)
    e.advance(4).issue(0, {0: 2})  # never described: no INST token follows
    stopped = (
        "PC walk stopped early in 1 of 1 traced waves, their later records have pc 0 "
        f"(first: se 0 cu 0 simd 0 slot 0 at record 1 of 2, after pc {BASE:#x})"
    )
    got = run(e, cm, warnings=[stopped])
    assert [(p, c) for p, c, _, _ in got] == [(0, "VALU"), (None, "NONE")]
