"""The vectorised gfx9 pass (decoders/gfx9/vectorised.py) against the scalar reference model: the same
waves, records, timelines, occupancy, realtime samples and problems on every real gfx950 blob and on random
streams from tests/support/sqtt_encoder.py, with and without the rare tokens (context save/restore, traps, XNACK
replays, INST_PC, barriers, packet loss), which the vectorised pass leaves to the scalar model."""

from __future__ import annotations

import json
import random
import zlib

import numpy as np
import pytest

from attdec.decoders import gfx9
from attdec.decoders.gfx9 import vectorised
from attdec.model.target import target
from tests.conftest import SHARED, SYNTHETIC_CAPTURES, codemap, real_data
from tests.support import sqtt_encoder as enc

# INST types the vectorised pass times (SMEM, SALU, VMEM, FLAT, VALU, LDS, JUMP, NEXT, OTHER_MSG, MAI)
COMMON_TYPES = [0, 1, 2, 3, 4, 5, 6, 12, 13, 14, 15, 16, 17, 18, 28]
FIRST_TYPES = [t for t in COMMON_TYPES if t != 15]  # not OTHER_MSG
RARE = ("inst_pc", "pc_type", "trap", "replay", "unknown", "save_context", "context_marker")


@pytest.fixture(autouse=True)
def vectorise_every_blob(monkeypatch):
    """Small blobs go to the scalar model (`VECTORISE_FROM`); here every blob is compared."""
    monkeypatch.setattr(gfx9, "VECTORISE_FROM", 0)


def decode_both(data: bytes, code=None, target_cu=None):
    """(scalar result, vectorised result, whether the vectorised pass ran to the end)."""
    ran = []
    real = vectorised.run_vectorised

    def spy(*a, **k):
        real(*a, **k)
        ran.append(True)

    kw = {"target_cu": target_cu, "where": "t.att"}
    a = gfx9.decode(data, target("gfx950"), code, 0, vectorised=False, **kw)
    vectorised_run, gfx9.run_vectorised = gfx9.run_vectorised, spy
    try:
        b = gfx9.decode(data, target("gfx950"), code, 0, **kw)
    finally:
        gfx9.run_vectorised = vectorised_run
    return a, b, bool(ran)


def assert_same(a, b):
    assert a.problems == b.problems
    assert (a.warnings, a.info, a.code_objects, a.rt_frequency) == (b.warnings, b.info, b.code_objects, b.rt_frequency)
    assert a.shaderdata.tobytes() == b.shaderdata.tobytes() and a.perfevents.tobytes() == b.perfevents.tobytes()
    assert a.realtime == b.realtime
    assert a.bytes_decoded == b.bytes_decoded
    assert a.occupancy.tobytes() == b.occupancy.tobytes()
    assert (a.walks, a.walks_stopped) == (b.walks, b.walks_stopped)
    assert len(a.waves) == len(b.waves)
    for x, y in zip(a.waves, b.waves):
        assert (x.se, x.cu, x.simd, x.slot, x.begin, x.end, x.seq, x.contexts) == (
            y.se, y.cu, y.simd, y.slot, y.begin, y.end, y.seq, y.contexts,
        )  # fmt: skip
        assert x.insts.tobytes() == y.insts.tobytes(), (x, x.insts, y.insts)
        assert [tuple(t) for t in x.timeline] == [tuple(t) for t in y.timeline], x


def random_stream(rng: random.Random, steps: int, rare=(), tight: bool = True, entry: int = 0x7F00_0000_1000) -> bytes:
    """Waves on the target CU (0) and elsewhere, ISSUE statuses and INSTs in plausible orders, time
    advancing by small steps (often within the 4..8 cycles where the phase step is in doubt)."""
    e = enc.Gfx9Encoder(target_cu=0)
    e.kernel_entry(entry)
    live: dict[tuple[int, int], int] = {}  # (simd, slot) -> placeholders not described yet
    described: set[tuple[int, int]] = set()  # waves with an INST: their first is never a message (0.1.6
    # drops such a message and the vectorised pass declines the blob)

    def inst_type(k):
        t = rng.choice(COMMON_TYPES if k in described else FIRST_TYPES)
        described.add(k)
        return t

    other: set[tuple[int, int, int]] = set()
    for _ in range(steps):
        r = rng.random()
        plus4 = rng.random() < 0.3
        if r < 0.08:
            simd, slot = rng.randrange(4), rng.randrange(10)
            if (simd, slot) not in live or rng.random() < 0.05:  # sometimes a start on a busy slot
                e.wave_start(0, simd, slot, plus4=plus4)
                if (simd, slot) not in live:
                    described.discard((simd, slot))
                live.setdefault((simd, slot), 0)
        elif r < 0.12:
            loc = (rng.randrange(1, 8), rng.randrange(4), rng.randrange(10))
            if loc in other:
                e.wave_end(*loc, plus4=plus4)
                other.discard(loc)
            else:
                e.wave_start(*loc, plus4=plus4)
                other.add(loc)
        elif r < 0.45:
            simd = rng.randrange(4)
            slots = [s for (d, s) in live if d == simd] or [rng.randrange(10)]
            status = {}
            for s in rng.sample(slots, rng.randint(1, len(slots))):
                status[s] = rng.choice([1, 2, 2, 2, 3])
                if (simd, s) in live and status[s] == 2:
                    live[(simd, s)] += 1
            free = [s for s in range(10) if (simd, s) not in live]
            if free and rng.random() < 0.05:
                status[rng.choice(free)] = rng.choice([1, 2, 3])  # a slot with no wave: ignored
            e.issue(simd, status, plus4=plus4)
            e.advance(4 * rng.randint(1, 2))  # ISSUE events of a wave at one time: the scalar model's
            issued = [s for s, st in status.items() if st == 2 and live.get((simd, s))]
            if tight and issued and rng.random() < 0.6:  # described right away: the phase step in doubt
                live[(simd, issued[0])] -= 1
                e.inst(simd, issued[0], inst_type((simd, issued[0])))
        elif r < 0.8:
            pending = [k for k, v in live.items() if v]
            if pending:
                k = rng.choice(pending)
                live[k] -= 1
                e.inst(*k, inst_type(k), plus4=plus4)
        elif r < 0.86:
            if live:
                k = rng.choice(sorted(live))
                if rng.random() < 0.3 or not live[k]:
                    e.wave_end(0, *k, plus4=plus4)
                    del live[k]
        elif r < 0.87 and rng.random() < 0.3:
            e.misc(2)  # packet loss
        elif r < 0.88:
            e.kernel_entry(entry + 0x100 * rng.randrange(4))
        else:
            e.advance(4 * rng.randint(0, 6 if tight else 40))
        if rare and rng.random() < 0.01:
            what = rng.choice(rare)
            k = rng.choice(sorted(live)) if live else (0, 0)
            if what == "inst_pc":
                e.inst_pc(*k, entry + 0x40)
            elif what in ("pc_type", "trap", "replay", "unknown") and live.get(k):
                live[k] -= 1
                itype = {"pc_type": 7, "trap": 29, "replay": rng.choice(range(19, 25)), "unknown": 9}[what]
                e.inst(*k, itype)
            elif what == "save_context":
                e.misc(6)
            elif what == "context_marker":
                e.wave_start(0, *k, count=70)
            elif what == "inst_no_wave":
                e.inst(rng.randrange(4), rng.randrange(10), 5)
            elif what == "inst_no_placeholder" and k in live and not live[k]:
                e.inst(*k, 5)
            elif what == "time_back":
                e.resync(10**9 + rng.randrange(1000) * 4)
            elif what == "same_time":
                simd, slot = k
                e.issue(simd, {slot: 1}).issue(simd, {slot: 2})
                if k in live:
                    live[k] += 1
    return e.data()


def any_code():
    """Code at random_stream's entry (any: the walk is the same in both models). Without code, an OTHER_MSG
    leaves the blob to the scalar model (it is timed when the wave ends)."""
    return codemap([("s_nop 0", 4)] * 64, 0x7F00_0000_1000)


def test_random_streams_agree_and_mostly_vectorise():
    rng = random.Random(12)
    ran = 0
    code = any_code()
    for i in range(60):
        a, b, v = decode_both(random_stream(rng, rng.randint(1, 600), tight=i % 3 != 0), code)
        assert_same(a, b)
        ran += v
    assert ran >= 54  # the vectorised pass, not its fallback, is what was compared


@pytest.mark.parametrize("rare", [*RARE, "inst_no_wave", "inst_no_placeholder", "time_back", "same_time"])
def test_rare_paths_agree(rare):
    """Streams with a rare token: the vectorised pass declines them (or agrees), the results are the same."""
    rng = random.Random(zlib.crc32(rare.encode()))  # not hash(): salted per process
    declined = 0
    for _ in range(12):
        a, b, v = decode_both(random_stream(rng, 800, rare=(rare,)))
        assert_same(a, b)
        declined += not v
    assert declined > 0


def test_packet_loss_and_ends_without_start_vectorise():
    e = enc.Gfx9Encoder(target_cu=0).wave_end(3, 0, 1).wave_end(0, 1, 1)  # no start: time-0 pair / skipped
    e.wave_start(0, 0, 0).advance(8).issue(0, {0: 2}).advance(4).inst(0, 0, 5).misc(2).wave_end(4, 0, 0)
    e.advance(4).wave_end(0, 0, 0)
    a, b, v = decode_both(e.data())
    assert v and any("lost packets" in p for p in b.problems) and len(b.occupancy) == 4
    assert_same(a, b)


def test_realtime_samples_vectorise():
    e = enc.Gfx9Encoder().reg(0xC342, 0x434F5200).advance(40)
    e.reg(0xC343, 5).reg(0xC343, 0x10).reg(0xC343, 0x7).reg(0xC343, 0x20).reg(0xC343, 9, enable=0)
    a, b, v = decode_both(e.data())
    assert v and b.realtime == [(40, 0x20 | 0x7 << 32)]
    assert_same(a, b)


def test_phase_steps_in_doubt_are_settled_in_stream_order(monkeypatch):
    """Waves issuing back to back: INSTs whose phase step depends on the phase at an earlier INST, both ways."""
    seen = []
    real = vectorised._phase_steps

    def spy(*a):
        steps = real(*a)
        seen.extend(steps)
        return steps

    monkeypatch.setattr(vectorised, "_phase_steps", spy)
    rng = random.Random(3)
    code = any_code()
    for _ in range(20):
        a, b, v = decode_both(random_stream(rng, 2000), code)
        assert v
        assert_same(a, b)
    assert len(seen) > 150 and 0 < sum(seen) < len(seen)


def _captures():
    """The synthetic gfx9 capture and every real gfx950 one."""
    yield SYNTHETIC_CAPTURES["gfx942"]
    if real_data("captures", "gfx950"):
        yield from sorted(p for p in (SHARED / "captures" / "gfx950").iterdir() if (p / "capture.json").exists())


def test_gfx9_capture_blobs_agree_with_code_and_vectorise():
    from attdec.sources.explicit import codemap

    n = 0
    for cdir in _captures():
        cap = json.loads((cdir / "capture.json").read_text())
        for d in cap["dispatches"]:
            codes = [f"{cdir / k['code_object']}@{k['base_hex']}" for k in cap["kernels"] if k["name"] == d["kernel"]]
            code = codemap(codes, cap["gfx_arch"])
            for blob in d["blobs"]:
                data = (cdir / blob).read_bytes()
                for c in (None, code):
                    a, b, v = decode_both(data, c)
                    # without code an OTHER_MSG (every wave's s_endpgm) leaves the blob to the scalar model
                    assert v or c is None, f"{cdir.name}/{blob} fell back to the scalar model"
                    assert_same(a, b)
                    n += len(b.waves)
    assert n > 0


def _gfx9_kernels() -> list:
    """(capture folder, SE0 blob, waves it starts and ends) of a gfx9 capture with one kernel: the demo's
    always, the real gfx950 gemm where ../shared has it."""
    params = [pytest.param(SYNTHETIC_CAPTURES["gfx942"], "kern_1_se0.att", 6, id="synthetic-gfx942")]
    if real_data("captures", "gfx950", "gemm_run0"):
        params.append(pytest.param(SHARED / "captures/gfx950/gemm_run0", "r_32_32_16_2_1_se0.att", 4, id="gemm"))
    return params


def _code(cdir):
    """The capture's kernel's code at its load base, and the kernel's entry address."""
    from attdec.isa import load_code_object
    from attdec.sources.explicit import codemap

    cap = json.loads((cdir / "capture.json").read_text())
    (k,) = cap["kernels"]
    (kern,) = load_code_object((cdir / k["code_object"]).read_bytes()).kernels
    code = codemap([f"{cdir / k['code_object']}@{k['base_hex']}"], cap["gfx_arch"])
    return code, int(k["base_hex"], 16) + kern.entry


@pytest.mark.parametrize("cdir,blob,waves", _gfx9_kernels())
def test_random_streams_with_code_agree(cdir, blob, waves):
    """Random waves walked against a kernel's code (the memoised walk, stopping early or not)."""
    code, entry = _code(cdir)
    rng = random.Random(8)
    walks = 0
    for _ in range(15):
        a, b, v = decode_both(random_stream(rng, 1000, entry=entry), code)
        assert v
        assert_same(a, b)
        walks += b.walks
    assert walks > 0


@pytest.mark.parametrize("cdir,blob,waves", _gfx9_kernels())
def test_repeated_blob_agrees(tmp_path, cdir, blob, waves):
    """SE0's body three times (tools/makers/make_repeated_blob.py): the phase count carries across copies."""
    from tools.makers import make_repeated_blob

    r = make_repeated_blob.make(str(tmp_path / "x3.att"), str(cdir), blob, 3, None)
    code, _ = _code(cdir)
    a, b, v = decode_both(open(r["path"], "rb").read(), code)
    assert v and len(b.waves) == 3 * waves
    assert_same(a, b)


def test_empty_and_tiny_blobs():
    for body in (b"", b"\x00\x00", bytes(6), bytes(7)):
        a, b, _ = decode_both(enc.header() + body)
        assert_same(a, b)


def test_plausible_waves_agrees_with_implausible():
    from attdec.decoders.common import implausible
    from attdec.decoders.gfx9.wave import plausible_waves

    rng = np.random.default_rng(5)
    for _ in range(200):
        counts = rng.integers(0, 5, rng.integers(1, 6))
        order = rng.permutation(len(counts))  # waves' records in some order of the waves
        lo = np.zeros(len(counts), np.int64)
        lo[order] = np.cumsum(counts[order]) - counts[order]
        hi = lo + counts
        time = np.cumsum(rng.integers(-2, 20, counts.sum()))
        begin = rng.integers(-10, 30, len(counts))
        end = np.where(rng.random(len(counts)) < 0.3, 0, rng.integers(0, 200, len(counts)))
        got = plausible_waves(time, lo, hi, begin, end)
        want = [implausible(time[a:b], int(s), int(e)) is None for a, b, s, e in zip(lo, hi, begin, end)]
        assert got.tolist() == want
