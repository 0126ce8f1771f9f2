"""A big blob decoded in windows (attdec.decoders.rdna.windowed, attdec.decoders.gfx9.windowed) gives what the
whole-blob decode gives: `hotspots` and `waves` output, and the blob's waves, occupancy, problems and INFO
records, on every real RDNA and gfx950 capture cut into small windows (many cuts: open waves carried from
window to window)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED, SYNTHETIC_CAPTURES, captures, real_data, shared_path

import attdec
from attdec.analysis.hotspots import hotspots
from attdec.analysis.waves import wave_rows
from attdec.decoders import COMPAT, decode_blob
from attdec.decoders.rdna.windowed import window_size
from attdec.decoders.windowed import WINDOW
from attdec.model import WaveTable
from attdec.model.options import DecodeOptions
from attdec.report import hotspots as hotspots_report
from attdec.report import waves as waves_report
from attdec.sources.capture import load
from attdec.sources.kind import Tracker
from attdec.sources.raw import load_code
from tests.support.sqtt_encoder import Gfx9Encoder, RdnaEncoder

RDNA = sorted(str(p.parent.relative_to(SHARED / "captures")) for p in SHARED.glob("captures/gfx1[12]*/*/oracle.json"))
GFX950 = sorted(str(p.parent.relative_to(SHARED / "captures")) for p in SHARED.glob("captures/gfx950/*/capture.json"))
BIG = "gfx1200/gemm_gfx1200_run0"  # 4 MB of long waves: every window carries open waves
BIGS = [BIG] if real_data("captures", BIG) else []  # collected only where ../shared has it


def _window(rel: str) -> int:
    """Small enough for many cuts (the synthetic captures' blobs are a few hundred bytes)."""
    if rel in SYNTHETIC:
        return 64
    return 256 << 10 if rel == BIG else 1 << 10 if rel in RDNA else 256


SYNTHETIC = {str(p): name for name, p in SYNTHETIC_CAPTURES.items()}


def _path(rel: str):
    """A real capture under ../shared/captures, or a synthetic one (by its path)."""
    return Path(rel) if rel in SYNTHETIC else shared_path("captures", rel)


def _outputs(path, **opts) -> tuple[str, str, int, int]:
    ds = attdec.open(path, jobs=1, **opts)
    hot, waves = io.StringIO(), io.StringIO()
    hotspots_report.print_json([hotspots([d]) for d in ds], 0, hot)
    waves_report.print_json([r for d in ds for r in wave_rows(d)], waves, ds)
    folded = sum(w.folded is not None for d in ds for w in d.waves)
    return hot.getvalue(), waves.getvalue(), folded, sum(len(d.waves) for d in ds)


@pytest.mark.parametrize("rel", [*SYNTHETIC, *RDNA, *BIGS, *GFX950])
def test_hotspots_and_waves_of_windows_equal_whole_blob(rel, monkeypatch):
    monkeypatch.setattr("attdec.decoders.windowed.FOLDED_BLOCK", 3)  # gfx9: folded waves joined from many tables
    path = _path(rel)
    whole_hot, whole_waves, none, n = _outputs(path)
    hot, waves, folded, _ = _outputs(path, fold=True, window=_window(rel))
    assert none == 0
    # every wave folded, into columns (BIG: its 40 kB blobs are decoded whole, their waves folded after)
    assert folded == n and all(isinstance(d.waves, WaveTable) for d in attdec.open(path, jobs=1, fold=True))
    assert (hot, waves) == (whole_hot, whole_waves)
    # a report of totals only: the windows' waves are counted, not kept, and the hotspots are the same
    totals_hot, _, _, kept = _outputs(path, fold="totals", window=_window(rel))
    assert kept == (0 if rel != BIG else n - 64)
    assert totals_hot == whole_hot


def _wave_key(w):
    return (
        w.se, w.cu, w.simd, w.slot, w.begin, w.end, w.seq, w.contexts, w.insts.tobytes(), list(map(tuple, w.timeline))
    )  # fmt: skip


def _assert_same_blob(win, whole):
    assert [_wave_key(w) for w in win.waves] == [_wave_key(w) for w in whole.waves]
    assert np.array_equal(win.occupancy, whole.occupancy)
    assert (win.problems, win.warnings, win.info) == (whole.problems, whole.warnings, whole.info)
    assert (win.code_objects, win.rt_frequency, win.walks) == (whole.code_objects, whole.rt_frequency, whole.walks)


@pytest.mark.parametrize("compat", list(COMPAT))
@pytest.mark.parametrize("rel", [*SYNTHETIC, *RDNA, *GFX950])
def test_blob_records_of_windows_equal_whole_blob(rel, compat, monkeypatch):
    """Waves (every record, unfolded), occupancy, problems, warnings and INFO of each blob, as each decoder
    version decodes it (rocm-7.13: waves in stitch order, gfx12 tokens read only whole; gfx9: the scalar
    model, occupancy rows kept in blocks of 5)."""
    monkeypatch.setattr("attdec.decoders.gfx9.windowed.ROW_BLOCK", 5)
    raws = load(_path(rel), Tracker())
    window = 64 if rel in SYNTHETIC else 512 if rel in RDNA else 128
    for raw, b in [(r, b) for r in raws for b in r.blobs]:
        code = load_code(raw)
        whole = decode_blob(b.data, code.target, code.codemap, b.se, where=b.label, compat=compat)
        win = decode_blob(
            b.data, code.target, code.codemap, b.se, where=b.label, compat=compat, fold=lambda w: w, window=window
        )
        _assert_same_blob(win, whole)


@pytest.mark.parametrize("compat", list(COMPAT))
@pytest.mark.parametrize(
    "cap", captures("gfx1100/gemm_run0", "gfx1200/gemm_run0", "gfx950/gemm_run0", synthetic=("gfx1100",))
)
@pytest.mark.parametrize("damage", ["truncated", "lost sync"])
def test_damaged_blob_problems_keep_whole_blob_offsets(damage, cap, compat):
    """RDNA: a cut and unassigned token ids; gfx9: the first cut (from 13 bytes off) inside a token, and
    packet-loss words mid-blob."""
    raw = load(cap, Tracker())[0]
    code = load_code(raw)
    data = bytearray(raw.blobs[0].data)
    gfx9 = raw.target is not None and raw.target.family == "gfx9"
    if damage == "truncated":
        cut = 13
        tgt = code.target
        while gfx9 and not any("truncated" in p for p in decode_blob(bytes(data[:-cut]), tgt, None, 0).problems):
            cut += 1
        data = data[:-cut]
    else:  # RDNA: unassigned token ids (lost sync); gfx9: MISC PACKET_LOST words
        data[len(data) // 2 : len(data) // 2 + 40] = b"\x00\x40" * 20 if gfx9 else b"\x77" * 40
    data = bytes(data)
    whole = decode_blob(data, code.target, code.codemap, 0, where="x", compat=compat)
    window = 64 if len(data) < 2048 else 128
    win = decode_blob(data, code.target, code.codemap, 0, where="x", compat=compat, fold=lambda w: w, window=window)
    assert win.problems == whole.problems and win.problems
    assert (win.warnings, win.info) == (whole.warnings, whole.info)
    assert [_wave_key(w) for w in win.waves] == [_wave_key(w) for w in whole.waves]


@pytest.mark.parametrize("gen", [11, 12])
def test_synthetic_stream_in_windows(gen):
    """Waves of several slots overlapping every cut, untraced waves, lost packets (occupancy and DATA_LOST),
    same-cycle WAVE_READY, waves cut by the end of the blob and a wave replaced before it ended."""
    e = RdnaEncoder(gen).kernel_entry(0x100000)
    for k in range(40):
        e.advance(8).wave_start(0, k % 4).wave_start(1, k % 3).advance(4)
        for _ in range(3):
            e.valu(k % 4).advance(4).wave_ready(0b1111).valu((k + 1) % 4).imm_one(k % 4, delta=1)
        if k % 7 == 3:
            e.token("TIMESTAMP", pl=1, value=0)
        if k % 5 != 4:  # every fifth wave never ends: its slot's next wave replaces it
            e.advance(4).wave_end(0, k % 4)
        e.wave_end(1, k % 3, delta=2)
    e.advance(8).wave_start(0, 9).valu(9)  # cut by the end
    data = e.data()
    arch = "gfx1100" if gen == 11 else "gfx1200"
    whole = decode_blob(data, arch, None, 0)
    for window in (32, 64, 96):
        win = decode_blob(data, arch, None, 0, fold=lambda w: w, window=window)
        assert [_wave_key(w) for w in win.waves] == [_wave_key(w) for w in whole.waves]
        assert np.array_equal(win.occupancy, whole.occupancy)
        assert (win.problems, win.warnings, win.info) == (whole.problems, whole.warnings, whole.info)
    assert any(i.kind == "DATA_LOST" for i in whole.info) and len(whole.waves) == 41


@pytest.mark.parametrize("cap", captures("gfx1200/gemm_run0", "gfx950/gemm_run0"))
def test_mapped_blob_decodes_as_read(cap, tmp_path):
    """Big blobs are mapped, not read (errors.read_bytes `map_from`): every decode takes the mapping."""
    from attdec.errors import read_bytes

    raw = load(cap, Tracker())[0]
    code = load_code(raw)
    b = raw.blobs[0]
    f = tmp_path / "blob.att"
    f.write_bytes(b.data)
    mapped = read_bytes(f, map_from=1)
    assert not isinstance(mapped, bytes) and mapped[:] == b.data
    for opts in ({}, {"fold": lambda w: w, "window": 1024}):
        opts = {**opts, "window": 64} if "window" in opts and len(b.data) < 4096 else opts
        got = decode_blob(mapped, code.target, code.codemap, b.se, where=b.label, **opts)
        want = decode_blob(b.data, code.target, code.codemap, b.se, where=b.label)
        assert [_wave_key(w) for w in got.waves] == [_wave_key(w) for w in want.waves]
        assert got.problems == want.problems


@pytest.mark.parametrize("cap", captures("gfx1100/gemm_run0", synthetic=("gfx942",)))
def test_folded_waves_cross_to_workers(cap):
    """--jobs: a worker's folded waves come back as columns (sources.parallel) with their record counts."""
    from attdec.sources.parallel import pack_dispatch, unpack_dispatch

    (d,) = attdec.open(cap, jobs=1, fold=True, window=64 if SHARED not in cap.parents else 1024)
    back = unpack_dispatch(pack_dispatch(d))
    assert all(w.folded is not None for w in back.waves)
    assert [vars(r) for r in wave_rows(back)] == [vars(r) for r in wave_rows(d)]


@pytest.mark.parametrize("vectorise_from", [1, None])
@pytest.mark.parametrize("compat", list(COMPAT))
def test_synthetic_gfx9_stream_in_windows(compat, vectorise_from, monkeypatch):
    """Traced waves on every SIMD overlapping the cuts, waves of other CUs running across them (occupancy and
    its entry PCs from two kernels), a time reset re-anchored on a TIMESTAMP and a pair of resets, lost
    packets, an end without a start, waves cut by the end of the blob; each segment through the numpy model
    (vectorise_from 1; 0.1.6 only: rocm-7.13's rules are the scalar model's) or the scalar one."""
    from attdec.decoders import gfx9

    if vectorise_from is not None:
        monkeypatch.setattr(gfx9, "VECTORISE_FROM", vectorise_from)
    e = Gfx9Encoder(target_cu=1).kernel_entry(0x100000)
    e.advance(8).wave_start(3, 0, 0).wave_end(4, 1, 2)  # another CU's wave, running to the end; an end alone
    for k in range(30):
        if k == 10:
            e.kernel_entry(0x200000)
        if k % 9 == 4:
            e.time_reset().advance(4).timestamp(5000 * k + 100, plus4=True)
        if k == 17:
            e.time_reset().time_reset().advance(4)
        if k == 21:
            e.misc(2)  # PACKET_LOST
        simd, slot = k % 4, k % 3
        e.advance(8).wave_start(1, simd, slot).wave_start(2, simd, k % 10).advance(4)
        for _ in range(2 + k % 3):  # placeholders that overlap (the SE-wide phase moves), SALU records timed by it
            e.issue(simd, {slot: 2}).advance(4)
        e.advance(8 + 4 * (k % 3))
        for j in range(2 + k % 3):
            e.inst(simd, slot, (1, 5)[j % 2]).advance(4 * (j % 2))
        e.advance(4).issue(simd, {slot: 3}).advance(8)
        if k % 2:  # the even waves end after the next one: then every traced slot is free
            e.wave_end(1, (k - 1) % 4, (k - 1) % 3).advance(4).wave_end(1, simd, slot)
        e.wave_end(2, simd, k % 10)
    e.advance(8).wave_start(1, 0, 5).issue(0, {5: 2}).advance(4).inst(0, 5, 5)  # cut by the end
    data = e.data()
    whole = decode_blob(data, "gfx950", None, 0, compat=compat)
    assert len(whole.waves) > 20 and any(i.kind == "DATA_LOST" for i in whole.info)
    for window in (16, 40, 100):
        _assert_same_blob(decode_blob(data, "gfx950", None, 0, compat=compat, fold=lambda w: w, window=window), whole)


def test_window_size_is_whole_blob_when_small():
    assert window_size(1 << 20) is None
    assert window_size(2 * WINDOW) is None
    assert window_size(2 * WINDOW + 1) == WINDOW
    assert window_size(5000, 1000) == 992  # whole trace lines
    assert window_size(5000, 8000) is None


def test_progress_moves_window_by_window():
    """A big blob's bar moves as its windows pass (64 KiB units), and ends where a whole-blob decode's does."""
    from attdec.sources.kind import UNIT, raw_weight
    from attdec.sources.parallel import decode_dispatches

    raws = load(shared_path("captures", BIG), Tracker())
    seen: list[int] = []
    tracker = Tracker(lambda label, done, total: seen.append(done), total=sum(map(raw_weight, raws)))
    for ok, _ in decode_dispatches(raws, tracker, DecodeOptions(jobs=1, fold=True, window=256 << 10)):
        assert ok
    big = max(len(b.data) for r in raws for b in r.blobs)
    assert big > 4 * (256 << 10)  # several windows in the biggest blob
    steps = np.diff([0, *seen])
    assert (steps > 0).all() and seen[-1] == tracker.total
    assert len(seen) > sum(len(r.blobs) for r in raws)  # more steps than blobs: windows moved it
    assert steps.max() <= (256 << 10) // UNIT + 2  # no step bigger than a window (and a blob's remainder)
