"""gfx9 (CDNA) decoder on synthesized streams (tests/support/sqtt_encoder.py): framing, time, the ISSUE/INST
timing model, occupancy, target CU, PC tokens and bad input. Agreement with AMD is tested on real captures in
test_gfx9_real.py; these tests pin the rules of docs/sqtt-gfx9.md one by one."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from attdec.decoders import gfx9
from attdec.decoders.common import CodeMap
from attdec.decoders.gfx9 import splitter
from attdec.decoders.gfx9.packets import INST_PC_TYPE
from attdec.decoders.gfx9.wave import TracedWave
from attdec.errors import FormatError
from attdec.model import Category
from attdec.model.target import target
from tests.support import sqtt_encoder as enc


def decode(e, **kw):
    data = e.data() if isinstance(e, enc.Gfx9Encoder) else e
    return gfx9.decode(data, target("gfx950"), CodeMap(), 0, where="t.att", **kw)


def rows(w):
    return [(int(r["time"]), gfx9_cat(r["category"]), int(r["duration"]), int(r["stall"])) for r in w.insts]


def gfx9_cat(c):
    from attdec.model import Category

    return Category(int(c)).name


def one_wave(setup):
    """A target-CU wave on SIMD 0 slot 0 started at time 0, `setup(e)` in the middle, ended at e.time."""
    e = enc.Gfx9Encoder(target_cu=0)
    e.wave_start(0, 0, 0)
    setup(e)
    end = e.time
    e.wave_end(0, 0, 0)
    r = decode(e)
    assert not r.problems
    (w,) = r.waves
    assert (w.begin, w.end) == (0, end)
    return w


# -- framing ------------------------------------------------------------------------------------------------
def test_every_token_type_splits_with_its_length():
    e = enc.Gfx9Encoder()
    for t in range(16):
        e.token(t, 0xFFFF_FFFF_FFFF_FF00 & ~0x1F if t != 0 else 0)
    words = np.frombuffer(e.data()[8:], "<u2")
    starts, types, trunc = gfx9.split_tokens(words)
    assert types.tolist() == list(range(16))
    assert np.diff(starts).tolist() == gfx9.TOKEN_WORDS[:15].tolist()
    assert trunc is None


def test_token_values_are_little_endian_words():
    e = enc.Gfx9Encoder().token(11, 0x1234_5678_9ABC_DE00).token(13, 0xBEEF_0000).token(5, 0x7654_3210_0000)
    words = np.frombuffer(e.data()[8:], "<u2")
    s, t, _ = gfx9.split_tokens(words)
    v = gfx9.token_values(words, s, t)
    assert [int(x) for x in v] == [0x1234_5678_9ABC_DE0B, 0xBEEF_000D, 0x7654_3210_0005]


def test_header_target_cu_and_format_check():
    assert gfx9.parse_header(enc.header(target_cu=5, version2=5))["target_cu"] == 5
    with pytest.raises(FormatError, match="not a gfx9"):
        gfx9.decode(
            bytes.fromhex("91019068") + bytes(12), target("gfx950"), CodeMap(), 0, where="x.att"
        )  # gfx11 HEADER
    with pytest.raises(FormatError, match="too short"):
        gfx9.decode(b"\x11\x80", target("gfx950"), CodeMap(), 0)


# -- time ---------------------------------------------------------------------------------------------------
def test_bit4_and_misc_deltas_count_4_cycles():
    e = enc.Gfx9Encoder().wave_start(3, 0, 0).misc(0, 7).wave_start(3, 0, 1, plus4=True).wave_end(3, 0, 0, plus4=True)
    o = decode(e).occupancy
    assert o["time"].tolist() == [0, 32, 36]


def test_time_reset_reanchors_on_next_timestamp():
    e = enc.Gfx9Encoder().advance(400).wave_start(3, 0, 0)
    e.resync(10_000_000)  # first resync: lands at time - 4
    assert e.time == 396
    e.wave_start(3, 0, 1).advance(40)
    e.resync(10_000_000 + 1000)  # later resyncs follow the counter
    assert e.time == 1396
    e.wave_start(3, 0, 2)
    assert decode(e).occupancy["time"].tolist() == [400, 396, 1396]


def test_tokens_between_reset_and_timestamp_get_the_new_time():
    e = enc.Gfx9Encoder().advance(400)
    e.time_reset().wave_start(3, 0, 0).timestamp(5000)
    assert decode(e).occupancy["time"].tolist() == [396]


def test_timestamp_without_reset_only_adds_its_delta_and_second_reset_is_dropped():
    e = enc.Gfx9Encoder().timestamp(777, plus4=True).wave_start(3, 0, 0)
    # a TIME_RESET whose scan meets another TIME_RESET first: no resync, the second one (delta 5) vanishes
    e.time_reset().wave_start(3, 0, 1).misc(1, 5).wave_start(3, 0, 2).timestamp(99999)
    assert decode(e).occupancy["time"].tolist() == [4, 4, 4]


# -- ISSUE / INST timing model (§7.2) -----------------------------------------------------------------------
def test_issue_inst_pairing_and_phase():
    def body(e):
        e.advance(8).issue(0, {0: 2}).advance(12).inst(0, 0, 1)  # SALU, phase 15+0+5 -> 20 -> 5 units
        e.advance(4).issue(0, {0: 2}).advance(8).inst(0, 0, 5)  # VALU
        e.advance(4)

    w = one_wave(body)
    # SALU: phase = (15 % 4) + 5 = 8 -> 4 + max(12 - 8, 0) = 8; VALU: phase 3+2 = 5 -> 4 + max(8 - 4, 0) = 8
    assert rows(w) == [(8, "SALU", 8, 0), (24, "VALU", 8, 0)]


def test_stall_moves_record_back_to_stall_start():
    def body(e):
        e.advance(4).issue(0, {0: 2}).inst(0, 0, 5)
        e.advance(4).issue(0, {0: 1}).advance(20).issue(0, {0: 2}).inst(0, 0, 5)
        e.advance(4)

    w = one_wave(body)
    # the stall began at 8, after the previous VALU (4..8): time 8, stall 20, duration >= stall + 4
    assert rows(w)[1] == (8, "VALU", 24, 20)


def test_immediate_waits_from_previous_end():
    def body(e):
        e.advance(4).issue(0, {0: 2}).inst(0, 0, 1)
        e.advance(100).issue(0, {0: 3})
        e.advance(4)

    w = one_wave(body)
    assert rows(w) == [(4, "SALU", 4, 0), (8, "IMMED", 100, 100)]


def test_immediate_trims_overlapping_previous():
    def body(e):
        e.advance(4).issue(0, {0: 2}).advance(40).inst(0, 0, 2)  # VMEM: 4 + 40 = 44 cycles
        e.issue(0, {0: 3})  # an immediate at 44 cuts it
        e.advance(4)

    w = one_wave(body)
    assert rows(w) == [(4, "VMEM", 40, 0), (44, "IMMED", 4, 4)]


def test_message_record_starts_at_previous_end():
    def body(e):
        e.advance(4).issue(0, {0: 2}).inst(0, 0, 5)
        e.advance(60).issue(0, {0: 2}).inst(0, 0, 15)  # s_endpgm

    w = one_wave(body)
    assert rows(w) == [(4, "VALU", 4, 0), (8, "MESSAGE", 60, 0)]


def test_replay_extends_earlier_instruction_and_drops_placeholder():
    def body(e):
        e.advance(4).issue(0, {0: 2}).inst(0, 0, 0)  # SMEM_RD at 4
        e.advance(4).issue(0, {0: 2}).inst(0, 0, 5)  # VALU at 8
        e.advance(4).issue(0, {0: 2}).advance(20).inst(0, 0, 19)  # SMEM_RD_REPLAY at 32
        e.advance(4)

    w = one_wave(body)
    r = rows(w)
    assert [x[1] for x in r] == ["SMEM", "VALU"]
    assert r[0][0] + r[0][2] == 36 and r[0][3] == r[0][2] - 4  # extended to replay time + 4


def test_unknown_inst_types_are_dropped():
    w = one_wave(lambda e: e.advance(4).issue(0, {0: 2}).inst(0, 0, 9).advance(4))
    assert len(w.insts) == 0


def test_inst_without_wave_start_creates_wave_and_unfinished_issue_has_no_category():
    e = enc.Gfx9Encoder(target_cu=0).advance(8).issue(2, {4: 2}).inst(2, 4, 5)  # slot has no wave: ISSUE ignored
    e.advance(4).issue(2, {4: 2})
    r = decode(e)
    (w,) = r.waves
    assert (w.simd, w.slot, w.begin) == (2, 4, 8)
    assert rows(w) == [(12, "NONE", 0, 0)]  # never described by an INST
    assert w.end == 16  # no WAVE_END: last end + 4


def test_other_cu_waves_get_occupancy_only_and_target_cu_override():
    e = enc.Gfx9Encoder(target_cu=16)  # tinygrad odd-SE header: CU 16 does not exist
    e.kernel_entry(0x7000).wave_start(0, 1, 2).advance(4).issue(1, {2: 2}).advance(4).wave_end(0, 1, 2)
    r = decode(e)
    assert r.waves == [] and len(r.occupancy) == 2
    assert r.occupancy["pc"].tolist() == [0x7000, 0x7000]
    r0 = decode(e, target_cu=0)
    assert len(r0.waves) == 1 and rows(r0.waves[0]) == [(4, "NONE", 0, 0)]
    assert (r0.waves[0].cu, r0.waves[0].begin, r0.waves[0].end) == (0, 0, 8)


def test_wave_end_without_start_gives_time0_pair_first_unless_packet_lost():
    e = enc.Gfx9Encoder().advance(8).wave_start(1, 0, 0).advance(4).wave_end(2, 0, 1)
    occ = decode(e).occupancy
    assert [(int(o["cu"]), int(o["start"]), int(o["time"])) for o in occ] == [(2, 1, 0), (1, 1, 8), (2, 0, 0)]
    e2 = enc.Gfx9Encoder().misc(2).wave_end(2, 0, 1)  # PACKET_LOST first
    r = decode(e2)
    assert len(r.occupancy) == 0 and any("(DATA_LOST)" in p for p in r.problems)
    assert [(i.kind, i.count, i.byte) for i in r.info] == [("DATA_LOST", 1, 8)]


def test_context_save_adds_context_record_and_waits_for_pc():
    def body(e):
        e.advance(4).issue(0, {0: 2}).inst(0, 0, 5)
        e.advance(4).misc(6)  # SAVE_CONTEXT
        e.wave_start(0, 0, 0, count=70)  # -> standby, CONTEXT record
        e.advance(4).wave_start(0, 0, 0, count=70)  # -> wait for new PC
        e.advance(40).inst(0, 0, 7)  # PC type ends the wait
        e.advance(4).issue(0, {0: 2}).inst(0, 0, 1).advance(4)

    w = one_wave(body)
    assert rows(w) == [(4, "VALU", 4, 0), (8, "CONTEXT", 48, 0), (56, "SALU", 4, 0)]
    assert w.contexts == 1


def test_inst_pc_fills_pending_pc_slot():
    wv = TracedWave(0, 0, 0, 0, 0x1000)
    wv.issue(2, 4)
    wv.inst(INST_PC_TYPE, 4, 0, [15])  # s_setpc: next record's PC comes from INST_PC
    wv.issue(2, 8)
    wv.new_pc(0x2000)
    assert wv.pc_infos == [[0, 0x1000], [1, 0x2000]]
    wv.new_pc(0x3000)  # no pending slot: opens one at the current record index
    assert wv.pc_infos[-1] == [2, 0x3000]


# -- bad input ----------------------------------------------------------------------------------------------
def test_truncated_blob_keeps_partial_results_and_reports_offset():
    e = enc.demo().inst_pc(0, 0, 0x4000)
    data = e.data()
    cut = data[: len(data) - 3]  # the 8-byte INST_PC loses 3 bytes
    r = decode(cut)
    assert any("truncated token at byte offset" in p for p in r.problems)
    assert len(r.waves) >= 1 and len(r.occupancy) >= 3
    # AMD's reader (0.1.6) reads past the end as if zero bytes followed: the cut token is decoded with its
    # missing bytes 0, exactly as the blob with 8 zero bytes appended
    assert r.bytes_decoded == len(cut)
    padded = decode(cut + bytes(8))
    assert [(w.begin, w.end, w.insts.tolist(), w.timeline) for w in r.waves] == [
        (w.begin, w.end, w.insts.tolist(), w.timeline) for w in padded.waves
    ]
    assert r.occupancy.tolist() == padded.occupancy.tolist()


def test_random_bytes_after_header_finish_quickly():
    rng = random.Random(5)
    for n in (0, 1, 7, 1000, 200_000):
        body = bytes(rng.getrandbits(8) for _ in range(n))
        t0 = time.perf_counter()
        r = decode(enc.header() + body)
        assert time.perf_counter() - t0 < 10
        assert isinstance(r.problems, list)


def test_bad_wave_slot_stops_with_problem():
    e = enc.Gfx9Encoder().wave_start(3, 0, 0).token(10, 12 << 5)  # INST for slot 12
    r = decode(e)
    assert any("slot 12" in p and "byte offset 12" in p for p in r.problems)
    assert len(r.occupancy) == 1


def test_demo_stream_covers_every_token_type():
    words = np.frombuffer(enc.demo().data()[8:], "<u2")
    _, types, _ = gfx9.split_tokens(words)
    assert set(types.tolist()) == set(range(16))
    assert Category.MESSAGE in [int(c) for w in decode(enc.demo()).waves for c in w.insts["category"]]


def test_realtime_from_rocm_instrumentation():
    e = enc.Gfx9Encoder().reg(0xC343, 5).reg(0xC343, 1).reg(0xC343, 2).reg(0xC343, 3)  # not activated: ignored
    e.reg(0xC342, 0x434F5200)  # "\0ROC"
    e.advance(40).reg(0xC343, 5).reg(0xC343, 0x10).reg(0xC343, 0x7).reg(0xC343, 0x20)  # RT_TIMESTAMP + 3 words
    e.advance(40).reg(0xC343, 7).reg(0xC343, 0x5)  # LO32 wraps: high + 1
    e.reg(0xC343, 9, enable=0)  # disabled write: ignored
    assert decode(e).realtime == [(40, 0x20 | 0x7 << 32), (80, 0x5 | 0x8 << 32)]


def test_wave_alloc_with_bad_slot_stops_like_official():
    r = decode(enc.Gfx9Encoder().wave_start(3, 0, 0).wave_alloc(3, 0, 11))
    assert any("WAVE_ALLOC for wave slot 11" in p for p in r.problems)


def _reference_split(words):
    """The plain hop-by-hop walk the vectorized split must reproduce."""
    wl = gfx9.TOKEN_WORDS[words & 15].tolist()
    starts, i = [], 0
    while i < len(words):
        starts.append(i)
        i += wl[i]
    trunc = starts.pop() if i > len(words) else None
    return starts, trunc


@pytest.mark.parametrize(
    ("chunk", "py_walk"), [(splitter.SPLIT_CHUNK, splitter.PY_WALK), (splitter.SPLIT_CHUNK, 0), (1000, 0)]
)
def test_vectorized_split_equals_hop_by_hop_walk(chunk, py_walk, monkeypatch):
    monkeypatch.setattr(splitter, "SPLIT_CHUNK", chunk)
    monkeypatch.setattr(splitter, "PY_WALK", py_walk)
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 4, 5, 511, 512, 513, 999, 1000, 1001, 2003, 30000):
        for k in range(6):
            w = rng.integers(0, 65536, n).astype(np.uint16)
            if k % 2:  # mostly one-word MISC, as real streams are
                w[rng.random(n) < 0.7] &= 0xFFF0
            s, t, trunc = gfx9.split_tokens(w)
            ref, rtrunc = _reference_split(w)
            assert s.tolist() == ref and trunc == rtrunc
            assert t.tolist() == [int(w[i]) & 15 for i in ref]


def _time_stream(rng, n: int, resets: float) -> np.ndarray:
    """n random tokens for the time pass: deltas, INSTs, WAVE_STARTs, TIME_RESETs and TIMESTAMPs (mostly
    rising, some zero or going back), as 16-bit words."""
    words, stamp = [], 1000
    for r in rng.random(n).tolist():
        d = int(rng.integers(0, 256))
        if r < resets:
            words.append(0x2000 | d << 4)  # MISC TIME_RESET
        elif r < 2 * resets:
            stamp = 0 if r < 1.1 * resets else stamp + int(rng.integers(-50, 4000))
            v = max(stamp, 0) << 16 | 1 | (d & 1) << 4
            words += [(v >> s) & 0xFFFF for s in (0, 16, 32, 48)]  # TIMESTAMP
        elif r < 0.7:
            words.append(d << 4)  # MISC TIME
        elif r < 0.85:
            words.append(10 | (d & 1) << 4)  # INST
        else:
            words += [3 | (d & 1) << 4, d]  # WAVE_START
    return np.array(words, np.uint16)


def test_special_tokens_corrected_one_at_a_time_as_in_numpy(monkeypatch):
    """Small blobs correct their times at the resets and TIMESTAMPs in Python, big ones in numpy: the same
    times and end state, from a fresh state and a carried one, over runs of resets, cut ends, zero stamps."""
    rng = np.random.default_rng(11)
    for n in (3, 40, 300, 3000):
        for k in range(8):
            w = _time_stream(rng, n, (0.02, 0.1, 0.3)[k % 3])
            if k % 2:
                w = w[: len(w) - 2]  # a cut TIMESTAMP or WAVE_START, or two whole tokens fewer
            mask, trunc = splitter.token_starts(w)
            for start in ((0, 0, 0, 0), (123, 8, -40, 5000)):
                got = []
                for limit in (1 << 30, 0):
                    monkeypatch.setattr(splitter, "PY_SPECIALS", limit)
                    st = splitter.TimeState()
                    st.carry, st.consumed, st.off, st.base = start
                    at, t = splitter.token_times(w, mask, gfx9.timestamps(w), trunc is not None, state=st)
                    got.append((at.tolist(), t.tolist(), vars(st)))
                assert got[0] == got[1]


def test_token_values_are_each_tokens_words_at_every_length_and_at_the_end():
    rng = np.random.default_rng(3)
    for n in [*range(12), 100, 1001]:
        for _ in range(20):
            w = rng.integers(0, 65536, n).astype(np.uint16)
            s, t, _trunc = gfx9.split_tokens(w)
            want = [sum(int(w[p + j]) << 16 * j for j in range(int(gfx9.TOKEN_WORDS[ty]))) for p, ty in zip(s, t)]
            assert gfx9.token_values(w, s, t).tolist() == want


def test_many_pending_issues_stay_linear():
    """200k ISSUEs then 200k INSTs for one wave: queue pops must not be quadratic."""
    e = enc.Gfx9Encoder(target_cu=0).wave_start(0, 0, 0)
    for _ in range(200_000):
        e.issue(0, {0: 2})
    for _ in range(200_000):
        e.inst(0, 0, 5)
    t0 = time.perf_counter()
    r = decode(e)
    assert time.perf_counter() - t0 < 30
    assert len(r.waves[0].insts) == 200_000


def test_pc_slots_fill_oldest_unknown_first_and_stay_linear():
    wv = TracedWave(0, 0, 0, 0, 0x1000)
    for k in range(3):  # three PC-type instructions, each opening a slot
        wv.issue(2, 4 * k + 4)
        wv.inst(INST_PC_TYPE, 4 * k + 4, 0, [15])
    wv.new_pc(0)  # a zero PC fills nothing for good
    wv.new_pc(0x2000)
    wv.new_pc(0x3000)
    assert wv.pc_infos == [[0, 0x1000], [1, 0x2000], [2, 0x3000], [3, 0]]
    e = enc.Gfx9Encoder(target_cu=0).kernel_entry(0x1000).wave_start(0, 0, 0)
    for _ in range(50_000):
        e.issue(0, {0: 2}).inst(0, 0, 7)
    for _ in range(50_000):
        e.inst_pc(0, 0, 0)
    t0 = time.perf_counter()
    decode(e)
    assert time.perf_counter() - t0 < 30
