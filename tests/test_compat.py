"""AMD's decoder builds (`--compat 0.1.6|0.1.5|0.1.4|rocm-7.13`, attdec.decoders.compat, docs/compat.md):
each rule on which they differ, on a synthetic stream built from the rule (tests/support/sqtt_encoder.py), under
each setting; the three 0.1.6 rules of issue 11 part 3 among them. The expected records are derived by
hand from the rule as docs/compat.md states it, not from attdec's output. Through the CLI too: every
command that decodes takes --compat."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import codemap

from attdec.decoders import COMPAT, CodeMap, decode_blob
from attdec.decoders.compat import DEFAULT, NEWEST, rules_for
from attdec.errors import InputError
from attdec.model import Category, WaveState
from tests.support.sqtt_encoder import Gfx9Encoder, RdnaEncoder, roc_marker_words

ROOT = os.path.join(os.path.dirname(__file__), "..")
BASE = 0x7000_0100
C, S = Category, WaveState


def rows(w):
    return [(int(r["time"]), int(r["duration"]), int(r["stall"]), C(int(r["category"])).name) for r in w.insts]


def timeline(w):
    return [(S(s).name, d) for s, d in w.timeline]


def code(*lines: tuple[str, int]) -> CodeMap:
    """A CodeMap of these (text, size) lines from BASE on."""
    return codemap(lines, BASE)


def test_versions_by_name():
    assert list(COMPAT) == ["0.1.6", "0.1.5", "0.1.4", "rocm-7.13"] and rules_for(None) is DEFAULT is COMPAT["0.1.6"]
    assert rules_for("rocm-7.13") is NEWEST and rules_for(NEWEST) is NEWEST
    # each build differs from the default in its own rules only
    differ = lambda r: {k for k in vars(DEFAULT) if getattr(r, k) != getattr(DEFAULT, k)}
    assert differ(COMPAT["0.1.5"]) == {"gfx11_barrier_from_last_instruction"}
    assert differ(COMPAT["0.1.4"]) == differ(COMPAT["0.1.5"]) | {
        "rdna_time_token_extra",
        "rdna_cu_sa_shift",
        "other_simd_records",
        "stitch_incomplete_without_marker",
    }
    assert "gfx11_barrier_from_last_instruction" not in differ(NEWEST)  # the newest source keeps 0.1.6's
    with pytest.raises(InputError, match="unknown decoder version"):
        rules_for("0.1.3")


# -- part 3, rule 1: gfx9, a wave whose only instruction is s_endpgm ----------------------------------------
def gfx9_wave(body) -> bytes:
    e = Gfx9Encoder(target_cu=0).kernel_entry(0x100000)
    e.advance(8).wave_start(0, 0, 0)
    body(e)
    return e.data()


def test_gfx9_endpgm_only_wave_has_no_record_in_0_1_6():
    # issue at 24 (IDLE 16 since the start at 8), OTHER_MSG described at 32, WAVE_END at 40
    data = gfx9_wave(lambda e: e.advance(16).issue(0, {0: 2}).advance(8).inst(0, 0, 15).advance(8).wave_end(0, 0, 0))
    (w,) = decode_blob(data, "gfx950", None, 0).waves
    # no earlier record: 0.1.6 drops it; the wave is IDLE from the issue to its end (a run of its own)
    assert rows(w) == [] and timeline(w) == [("IDLE", 16), ("IDLE", 16)] and w.end == 40
    # the newest source: a MESSAGE timed like any INST type (4 cycles, the phase rule), no drop
    (w,) = decode_blob(data, "gfx950", None, 0, compat="rocm-7.13").waves
    assert [r[3] for r in rows(w)] == ["MESSAGE"] and w.end == 44  # and WAVE_END + 4


def test_gfx9_endpgm_issued_inside_the_previous_record_has_no_record():
    # a VALU and the s_endpgm issued together at 24: the VALU (24, 4 cycles) ends after the issue
    body = lambda e: e.advance(16).issue(0, {0: 2}).issue(0, {0: 2}).advance(8).inst(0, 0, 5).inst(0, 0, 15)
    (w,) = decode_blob(gfx9_wave(lambda e: (body(e), e.advance(8).wave_end(0, 0, 0))), "gfx950", None, 0).waves
    assert rows(w) == [(24, 4, 0, "VALU")] and timeline(w) == [("IDLE", 16), ("IDLE", 16)]


def test_gfx9_endpgm_after_a_gap_is_a_message_then_idle():
    def body(e):
        e.advance(16).issue(0, {0: 2}).advance(8).inst(0, 0, 1)  # SALU issued at 24
        e.advance(40).issue(0, {0: 2}).advance(8).inst(0, 0, 15).advance(8).wave_end(0, 0, 0)  # s_endpgm at 72

    (w,) = decode_blob(gfx9_wave(body), "gfx950", None, 0).waves
    # the MESSAGE waits from the SALU's end (28) to its issue (72): 4 + 44 cycles; IDLE after it, to 88
    assert rows(w) == [(24, 4, 0, "SALU"), (28, 48, 0, "MESSAGE")]
    assert timeline(w) == [("IDLE", 16), ("EXEC", 4), ("WAIT", 48), ("IDLE", 12)]


# -- part 3, rule 2: gfx12 ds_bvh ----------------------------------------------------------------------------
def test_gfx12_ds_bvh_line_stops_the_walk_in_0_1_6():
    cm = code(
        ("s_mov_b32 s0, 0", 4),
        ("ds_bvh_stack_push4_pop1_rtn_b32 v1, v2, v3, v[4:7]", 8),
        ("v_add_f32_e32 v0, v1, v2", 4),
        ("s_endpgm", 4),
    )
    e = RdnaEncoder(12).kernel_entry(BASE)
    e.at(10).wave_start(simd=0, slot=0).at(20).inst(0, "salu").at(24).inst(0, "lds_bvh_6")  # a BVH record
    data = e.at(40).valu(0).at(50).wave_end(simd=0, slot=0).data()
    old = decode_blob(data, "gfx1200", cm, 0)
    (w,) = old.waves
    # 0.1.6: `ds_` makes the line LDS, the BVH record does not match it: the walk loses the PC there
    assert [int(p) for p in w.insts["pc"]] == [BASE, 0, 0, 0] and old.walks_stopped == 1 and not old.damaged
    (w,) = decode_blob(data, "gfx1200", cm, 0, compat="rocm-7.13").waves
    assert [int(p) - BASE for p in w.insts["pc"]] == [0, 4, 12, 16]  # BVH line: every record matched
    assert [r[3] for r in rows(w)] == ["SALU", "BVH", "VALU", "MESSAGE"]


# -- part 3, rule 3: gfx11 TIMESTAMP cut by the end of the blob ------------------------------------------------
def test_gfx11_timestamp_cut_by_the_end_is_read_zero_padded():
    e = RdnaEncoder(11).at(8).token("TIMESTAMP", rt=1, value=0x123456789).advance(8)
    e.token("TIMESTAMP", rt=1, value=0xABCDEF123)
    full = e.data(pad=0, whole_lines=False)  # HEADER, TIME, TIMESTAMP (time 8), TIME, TIMESTAMP (16): 22 bytes
    assert decode_blob(full, "gfx1100", None, 0).realtime == [(8, 0x123456789), (16, 0xABCDEF123)]
    cut = full[:18]  # the second TIMESTAMP (bytes 16..21) keeps 2 bytes: token bits 0..15
    res = decode_blob(cut, "gfx1100", None, 0)
    assert res.realtime == decode_blob(cut + bytes(8), "gfx1100", None, 0).realtime  # as if 8 zero bytes followed
    # the zero-padded value keeps the value bits present (token bits 12..15); it is below the first sample, so
    # the official realtime helper averages it into that one: that is the last realtime record
    low = 0xABCDEF123 & 0xF
    assert res.realtime == [((8 + 16) // 2, (0x123456789 + low) // 2)]
    assert any("truncated" in p for p in res.problems)


def test_gfx12_token_cut_by_the_end_per_version():
    e = RdnaEncoder(12).kernel_entry(BASE)
    for slot in range(4):
        e.advance(4).wave_start(simd=1, slot=slot, wgp=1)
    data = e.data(pad=0, whole_lines=False)  # 44 bytes; the last WAVE_START (slot 3) is bytes 40..43
    cut = data[:-1]  # it loses its top byte; its slot (bits 15..19) is still there
    starts = lambda r: sorted(int(w) for w in r.occupancy["slot"])
    assert starts(decode_blob(cut, "gfx1200", None, 0)) == [0, 1, 2, 3]  # 0.1.6 reads it zero-padded
    # the newest reader needs the token's whole 64-bit word in the blob: slot 3 (from byte 40) is left out,
    # slot 2 (bytes 35..42) is not
    assert starts(decode_blob(cut, "gfx1200", None, 0, compat="rocm-7.13")) == [0, 1, 2]


# -- part 5: the other rules, both settings ---------------------------------------------------------------------
def test_prefetch_line_per_version():
    cm = code(
        ("s_mov_b32 s0, 0", 4), ("s_prefetch_data s[0:1], 0x0, null, 0", 8), ("v_mov_b32_e32 v0, 0", 4), ("s_endpgm", 4)
    )
    e = RdnaEncoder(12).kernel_entry(BASE).at(10).wave_start(simd=0, slot=0).at(20).inst(0, "salu")
    data = e.at(24).inst(0, "smem_rd").at(30).valu(0).at(40).wave_end(0, 0).data()
    (w,) = decode_blob(data, "gfx1200", cm, 0).waves  # SALU line in 0.1.6: the SMEM record cannot take it
    assert [int(p) for p in w.insts["pc"]] == [BASE, 0, 0, 0]
    (w,) = decode_blob(data, "gfx1200", cm, 0, compat="rocm-7.13").waves
    assert [int(p) - BASE for p in w.insts["pc"]] == [0, 4, 12, 16]


def test_gfx11_barrier_and_valub_16_per_version():
    e = RdnaEncoder(11, dp_rate=3).kernel_entry(BASE).at(10).wave_start(simd=0, slot=0)  # dprate 4
    data = e.at(20).inst(0, "barrier").at(30).inst(0, "valub_16").at(60).wave_end(0, 0).data()
    (w,) = decode_blob(data, "gfx1100", None, 0).waves
    assert rows(w)[:2] == [(20, 1, 0, "IMMED"), (30, 16, 0, "VALU")]
    (w,) = decode_blob(data, "gfx1100", None, 0, compat="rocm-7.13").waves
    assert rows(w)[:2] == [(20, 10, 0, "MESSAGE"), (30, 4, 0, "VALU")]  # the wait up to the next event; dprate


# -- the released builds: 0.1.5 and 0.1.4 (checked on these streams against AMD's binaries of each build) ----
def barrier_wave() -> bytes:
    """gfx11: SALU at 20, s_barrier at 40 (the SALU ended at 21), VALU at 60, WAVE_END at 80."""
    e = RdnaEncoder(11).kernel_entry(BASE).at(10).wave_start(simd=0, slot=0).at(20).inst(0, "salu")
    return e.at(40).inst(0, "barrier").at(60).valu(0).at(80).wave_end(0, 0).data()


def test_gfx11_barrier_waits_from_the_last_instruction_in_0_1_6_only():
    (w,) = decode_blob(barrier_wave(), "gfx1100", None, 0).waves
    # 0.1.6: the barrier's record starts when the SALU ended (21); the 19 cycles since are its stall, a WAIT run
    assert rows(w) == [(20, 1, 0, "SALU"), (21, 20, 19, "IMMED"), (60, 1, 0, "VALU"), (61, 19, 0, "MESSAGE")]
    assert timeline(w) == [("IDLE", 10), ("EXEC", 1), ("WAIT", 20), ("EXEC", 39)]
    (w,) = decode_blob(barrier_wave(), "gfx1100", None, 0, compat="0.1.5").waves
    # 0.1.5: a 1-cycle record at its token, the wave executing throughout
    assert rows(w) == [(20, 1, 0, "SALU"), (40, 1, 0, "IMMED"), (60, 1, 0, "VALU"), (61, 19, 0, "MESSAGE")]
    assert timeline(w) == [("IDLE", 10), ("EXEC", 60)]


def test_time_tokens_advance_4_cycles_more_in_0_1_4():
    # TIME tokens (10 cycles each, field 6): 1 before the start, 1 before the SALU, 2 (16 + 4) before the
    # barrier, 2 before the VALU and 2 before the end; 0.1.4 adds 4 per token: times t + 4 * (tokens so far)
    (w,) = decode_blob(barrier_wave(), "gfx1100", None, 0, compat="0.1.4").waves
    assert (w.begin, w.end) == (10 + 4, 80 + 4 * 8)
    assert rows(w) == [(28, 1, 0, "SALU"), (56, 1, 0, "IMMED"), (84, 1, 0, "VALU"), (85, 27, 0, "MESSAGE")]


@pytest.mark.parametrize(("generation", "arch", "wgp"), [(11, "gfx1100", 2), (12, "gfx1200", 9)])
def test_cu_of_a_second_shader_array_in_0_1_4(generation, arch, wgp):
    e = RdnaEncoder(generation).kernel_entry(BASE).at(10).wave_start(simd=1, slot=3, sa=1, wgp=wgp)
    data = e.at(40).wave_end(1, 3, sa=1, wgp=wgp).data()  # a wave of SA 1 (not the traced WGP): occupancy only
    cus = lambda c: sorted({int(cu) for cu in decode_blob(data, arch, None, 0, compat=c).occupancy["cu"]})
    assert cus("0.1.6") == cus("0.1.5") == [128 + wgp]  # the shader array at bit 7
    assert cus("0.1.4") == [8 + wgp]  # 0.1.4: sa * 8 + wgp (WGP 9 of SA 1 is 17, not an OR)


def test_no_other_simd_records_in_0_1_4():
    e = RdnaEncoder(11).kernel_entry(BASE).at(10).wave_start(simd=0, slot=0).at(20).inst(0, "lds_other_simd_1")
    data = e.at(40).wave_end(0, 0).data()
    assert len(decode_blob(data, "gfx1100", None, 0).other_simd) == 1
    assert len(decode_blob(data, "gfx1100", None, 0, compat="0.1.4").other_simd) == 0  # the record is 0.1.5's


def marked_wave(marker: bool, records: bool = True) -> bytes:
    """A gfx11 wave at BASE, the code object there announced by the ROCm markers or not."""
    e = RdnaEncoder(11)
    if marker:
        e.userdata(roc_marker_words(5, BASE - 0x100, 0x1000))
    e.kernel_entry(BASE).at(100).wave_start(simd=0, slot=0)
    if records:
        e.at(120).inst(0, "salu").at(130).valu(0)
    return e.at(200).wave_end(0, 0).data()


def test_no_code_object_is_stitch_incomplete_where_the_trace_announced_one():
    info = lambda data, c: [(i.kind, i.count) for i in decode_blob(data, "gfx1100", None, 0, compat=c).info]
    # no code to walk: the records keep pc 0; 0.1.5 on say so when the wave's entry lies in an announced code
    # object, 0.1.4 whatever the markers; a wave without records has nothing to stitch
    assert info(marked_wave(True), "0.1.6") == info(marked_wave(True), "0.1.5") == [("STITCH_INCOMPLETE", 1)]
    assert info(marked_wave(False), "0.1.6") == info(marked_wave(False), "0.1.5") == []
    assert info(marked_wave(False), "0.1.4") == [("STITCH_INCOMPLETE", 1)]
    assert info(marked_wave(True, records=False), "0.1.6") == info(marked_wave(True, records=False), "0.1.4") == []
    # with the code, every record gets its pc: nothing to say
    cm = code(("s_mov_b32 s0, 0", 4), ("v_mov_b32_e32 v0, 0", 4), ("s_endpgm", 4))
    for c in COMPAT:
        assert decode_blob(marked_wave(True), "gfx1100", cm, 0, compat=c).info == []


# -- decoding without a code object (0.1.6, 0.1.5 and 0.1.4 alike; checked against each binary) ------------------
def salu_message_then(e, then):
    """SALU issued at 24, an OTHER_MSG issued at 64 (described at 72), then `then` at 100."""
    e.advance(16).issue(0, {0: 2}).advance(8).inst(0, 0, 1).advance(32).issue(0, {0: 2}).advance(8).inst(0, 0, 15)
    then(e.advance(28))
    e.advance(8).wave_end(0, 0, 0)


def test_gfx9_message_without_code_is_timed_only_as_the_last_record():
    cm = code(*[("s_mov_b32 s0, 0", 4)] * 2, ("s_sendmsg sendmsg(MSG_INTERRUPT)", 4), ("s_nop 0", 4), ("s_endpgm", 4))
    immed_after = gfx9_wave(lambda e: salu_message_then(e, lambda e: e.issue(0, {0: 3})))
    (w,) = decode_blob(immed_after, "gfx950", None, 0).waves
    # no code: the message stays a 0-cycle record at its issue (64), the immediate waits from there, then the
    # message is left out and the wave ends IDLE
    assert rows(w) == [(24, 4, 0, "SALU"), (64, 40, 40, "IMMED")]
    assert timeline(w) == [("IDLE", 16), ("EXEC", 40), ("WAIT", 40), ("IDLE", 4)]
    (empty,) = decode_blob(immed_after, "gfx950", CodeMap(), 0).waves  # no code object loaded: the same
    assert rows(empty) == rows(w) and timeline(empty) == timeline(w)
    (w,) = decode_blob(immed_after, "gfx950", cm, 0).waves  # with the code: timed when described
    assert [r[3] for r in rows(w)] == ["SALU", "MESSAGE", "IMMED"]
    salu_after = gfx9_wave(lambda e: salu_message_then(e, lambda e: e.issue(0, {0: 2}).advance(8).inst(0, 0, 1)))
    (w,) = decode_blob(salu_after, "gfx950", None, 0).waves
    assert rows(w) == [(24, 4, 0, "SALU"), (100, 4, 0, "SALU")]
    assert timeline(w) == [("IDLE", 16), ("EXEC", 76), ("IDLE", 16)]  # IDLE from the last record on
    last = gfx9_wave(lambda e: salu_message_then(e, lambda e: None))
    assert rows(decode_blob(last, "gfx950", None, 0).waves[0]) == rows(decode_blob(last, "gfx950", cm, 0).waves[0])


def test_code_object_id_is_the_legacy_id_where_the_marker_sets_it():
    for payload_id, legacy_id, reported in [(5, 0, 5), (0, 7, 7), (5, 7, 7)]:
        words = roc_marker_words(payload_id, BASE - 0x100, 0x1000)
        words[-1] = legacy_id << 2  # the TAIL word: unload flag, then the legacy id from bit 2
        e = RdnaEncoder(11).userdata(words).kernel_entry(BASE).at(100).wave_start(simd=0, slot=0)
        res = decode_blob(e.at(200).wave_end(0, 0).data(), "gfx1100", None, 0)
        assert res.code_object_ids(res.occupancy["pc"]).tolist() == [reported, reported]


def test_amd_pc_is_the_offset_inside_the_announced_code_object():
    """AMD's decoder reports a PC inside an announced code object as (offset from its load address, its id),
    any other PC as (absolute, 0); the JSON rows carry both after attdec's absolute PC."""
    e = RdnaEncoder(11).userdata(roc_marker_words(5, BASE - 0x100, 0x1000)).kernel_entry(BASE)
    res = decode_blob(e.at(100).wave_start(simd=0, slot=0).at(200).wave_end(0, 0).data(), "gfx1100", None, 0)
    outside = BASE + 0xF00  # the first address past the code object
    address, ids = res.amd_pcs([*res.occupancy["pc"].tolist(), outside, 0])
    assert address.tolist() == [0x100, 0x100, outside, 0]
    assert ids.tolist() == [5, 5, 0, 0]


def test_wave_order_per_version():
    """0.1.6 reports the waves that ended by end time, then the ones the blob cut; the newest source
    reports them as it stitches them (a complete wave when its slot starts the next one, the rest at the end,
    slot by slot)."""
    e = RdnaEncoder(11).kernel_entry(BASE)
    e.at(10).wave_start(0, 0).at(14).wave_start(0, 1).at(18).wave_start(0, 2)
    data = e.at(24).wave_end(0, 1).at(30).wave_end(0, 0).at(40).inst(2, "salu").data()  # slot 2 never ends
    order = lambda c: [(w.slot, w.begin) for w in decode_blob(data, "gfx1100", None, 0, compat=c).waves]
    assert order("0.1.6") == [(1, 14), (0, 10), (2, 18)]  # ended ones by end time, then the cut one
    assert order("rocm-7.13") == [(0, 10), (1, 14), (2, 18)]  # no slot restarted: all stitched at the end


# -- the command line ------------------------------------------------------------------------------------------
def attdec(*args):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(ROOT))
    return subprocess.run([sys.executable, "-m", "attdec", *map(str, args)], capture_output=True, text=True, env=env)


def test_decode_compat_option(tmp_path):
    blob = tmp_path / "k_se0.att"
    endpgm_only = lambda e: e.advance(16).issue(0, {0: 2}).advance(8).inst(0, 0, 15).advance(8).wave_end(0, 0, 0)
    blob.write_bytes(gfx9_wave(endpgm_only))
    got = {}
    for c in ("0.1.6", "rocm-7.13"):
        p = attdec("decode", "--arch", "gfx950", blob, "--compat", c, "--format", "json")
        assert p.returncode == 0, p.stderr
        (w,) = json.loads(p.stdout)["dispatches"][0]["waves"]
        got[c] = [r[4] for r in w["instructions"]]
    assert got == {"0.1.6": [], "rocm-7.13": ["MESSAGE"]}
    p = attdec("decode", "--arch", "gfx950", blob, "--compat", "0.1.3")
    assert p.returncode == 2 and "0.1.6" in p.stderr and "0.1.4" in p.stderr  # click lists the choices


@pytest.mark.parametrize("command", ["hotspots", "waves", "waits", "latency", "cfg", "loops", "kernel", "counters"])
def test_every_decoding_command_takes_compat(command):
    help_text = attdec(command, "--help").stdout
    assert "--compat" in help_text and "default" in help_text
    assert all(name in help_text for name in COMPAT)
