"""Folded waves as columns (model.WaveTable) and the `waves` rows made from them (analysis.waves.WaveRows):
the same rows, numbering and JSON as from Wave objects, without an object per wave."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from conftest import ROOT, SHARED, SYNTHETIC_CAPTURES, real_data, shared_path

import attdec
from attdec.analysis.waves import WaveRows, wave_columns, wave_rows
from attdec.decoders.windowed import wave_table
from attdec.model import DecoderInfo, Dispatch, Wave, WaveSelection, WaveTable, empty_insts
from attdec.report import waves as rep


def _wave(se, simd, slot, begin, records, path=None):
    """A wave whose record k (k < records) ran at PC 0x100 + 4 * (k % 3), stalled k cycles for k cycles."""
    ins = empty_insts(records)
    ins["pc"] = 0x100 + 4 * (np.arange(records) % 3)
    ins["stall"] = ins["duration"] = np.arange(records)
    timeline = [(1, 5)] * (3 if records or se else 1)  # se 0 without records: fileless
    return Wave(se, 1, simd, slot, begin, begin + 100, ins, timeline, path=path)


def test_table_of_waves_reads_as_them():
    waves = [_wave(1, 0, 2, 10, 5, "a.json"), _wave(0, 1, 0, 20, 0), _wave(1, 0, 2, 30, 1)]
    t = WaveTable.of(waves)
    assert len(t) == 3 and t.records == 6 and t.paths == ["a.json", None, None]
    assert t.waves["latency"].tolist() == [10, 0, 0] and t.waves["stall"].tolist() == [10, 0, 0]
    assert t.waves["fileless"].tolist() == [False, True, False]
    assert t.first.tolist() == [0, 4, 4, 4]  # stalled records only: 1..4 of the first wave
    v = t[0]
    assert (v.se, v.simd, v.slot, v.begin, v.end, v.records, v.path) == (1, 0, 2, 10, 110, 5, "a.json")
    assert v.insts["stall"].tolist() == [1, 2, 3, 4] and int(v.insts["duration"].sum()) == 10
    assert t[1].fileless and not t[2].fileless and [w.begin for w in t] == [10, 20, 30]
    # numbered as merge_results numbers waves: fileless ones out, on from the numbers before
    seq = {(1, 0, 2): 4}
    n = t.numbered(seq)
    assert n.waves["seq"].tolist() == [4, 5] and seq == {(1, 0, 2): 6} and n.paths == ["a.json", None]
    # joined in order, the row offsets carried on
    j = WaveTable.join([t, n])
    assert len(j) == 5 and j.first.tolist() == [0, 4, 4, 4, 8, 8] and j.waves["begin"].tolist() == [10, 20, 30, 10, 30]


def test_selection_filters_a_table_as_its_waves():
    """--se/--simd/--slot/--wave/--cu on folded waves: the columns' mask keeps what the predicate keeps of each
    wave made from its row; an ordinary predicate still sees those waves."""
    waves = [_wave(se, simd, slot, 10 * k, k % 4) for k, (se, simd, slot) in enumerate(
        (se, simd, slot) for se in (0, 1) for simd in (0, 1, 2) for slot in (0, 3))]  # fmt: skip
    t = WaveTable.of(waves).numbered({})
    for asked in ({"se": [1]}, {"simd": [0, 2], "slot": [3]}, {"seq": [0]}, {"cu": [1], "se": [0]}, {"cu": [7]}):
        pick = WaveSelection(**asked)
        by_wave = [w.begin for w in t if pick(w)]
        assert [w.begin for w in t.filter(pick)] == by_wave, asked
        assert pick.mask(t.waves).tolist() == [pick(w) for w in t]
    assert [w.begin for w in t.filter(lambda w: w.begin > 50)] == [w.begin for w in t if w.begin > 50]
    assert not WaveSelection() and WaveSelection(se=[0])


def test_wave_table_of_kept_waves():
    """What a windowed decoder returns: folded waves as a table, whole ones as they are, none as []."""
    whole = [_wave(1, 0, 0, 0, 2)]
    assert wave_table([], list(whole)) == whole
    folded = [Wave(1, 0, 0, 0, 0, 9, empty_insts(1), (), folded=7)]
    t = wave_table([WaveTable.of(folded)], list(folded))
    assert isinstance(t, WaveTable) and t.waves["records"].tolist() == [7, 7]
    assert wave_table([], []) == []


def _same_table(a: WaveTable, b: WaveTable) -> None:
    assert a.waves.tobytes() == b.waves.tobytes() and a.paths == b.paths
    assert (
        a.first.tolist() == b.first.tolist() and a.pc.tolist() == b.pc.tolist() and a.stall.tolist() == b.stall.tolist()
    )


def test_waves_folded_at_once_as_one_by_one():
    """Folder.table (a whole blob's waves, `waves` of a raw capture) makes the table folding wave by wave makes."""
    from attdec.sources.listing import Folder
    from attdec.sources.pipeline import open_raw
    from attdec.sources.raw import decode_blobs, load_code

    decoded_waves: list = []
    synthetic = [_wave(1, 0, 2, 10, 5, "a.json"), _wave(0, 1, 0, 20, 0), _wave(1, 0, 2, 30, 7)]
    synthetic[2].insts["pc"][[1, 4]] = 0  # records without a PC are a row too
    synthetic[2].insts["stall"][::2] *= -1
    synthetic[2].insts["stall"][5] = 2  # with record 2 (-2), at PC 0x108: stalls that sum to 0 leave no row
    caps = [shared_path("captures", "gfx1200", "gemm_run0")] if real_data("captures", "gfx1200") else []
    for raw in open_raw([*SYNTHETIC_CAPTURES.values(), *caps]):
        code = load_code(raw)
        decoded_waves += [res.waves for _, res, _ in decode_blobs(raw, code)]
    for waves in [synthetic, *decoded_waves]:
        one, many = Folder(), Folder()
        _same_table(WaveTable.of([one(w) for w in waves]), many.table(waves))
        assert one.totals() == many.totals() and one.no_pc == many.no_pc


def _samples() -> list:
    """ui_output folders: the demo's, then the real flash_attn one where ../shared has it."""
    params = [pytest.param(ROOT / "attdec" / "data" / "demo", id="demo")]
    flash = ("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "flash_attn_func")
    if real_data(*flash):
        params.append(pytest.param(SHARED.joinpath(*flash, "att_viewer", "small"), id="flash_attn"))
    return params


@pytest.mark.parametrize("path", _samples())
def test_rows_of_table_equal_rows_of_waves(path):
    """A ui_output folder's waves, as objects and as a table: the same rows, in every sort."""
    d = attdec.open(path, jobs=1)[0]
    rows = wave_rows(d)
    assert rows
    t = Dispatch(d.name, d.target, d.kernel, d.code, WaveTable.of(d.waves, keep_lines=True), path=d.path)
    assert [vars(r) for r in wave_rows(t)] == [vars(r) for r in rows]
    for key in ("stall", "begin", "stall_share", "cu"):  # largest first (begin, cu: smallest), then by position
        sign = 1 if key in ("begin", "cu") else -1
        want = sorted(rows, key=lambda r: (sign * getattr(r, key), r.se, r.simd, r.slot, r.wave))
        assert [vars(r) for r in wave_columns(t).sorted(key)] == [vars(r) for r in want]
    assert [vars(r) for r in wave_columns(t).sorted("share")] == [
        vars(r) for r in wave_columns(t).sorted("stall_share")
    ]
    assert [vars(r) for r in wave_columns(t, lambda w: w.simd == rows[0].simd)] == [
        vars(r) for r in rows if r.simd == rows[0].simd
    ]


def test_json_written_row_by_row_is_json_dumps():
    """print_json streams what json.dumps(doc, indent=1) writes, with and without rows, notes and info."""
    d = Dispatch("k#1", "gfx950", "k", waves=WaveTable.of([_wave(1, 0, 2, 10, 5), _wave(1, 1, 0, 30, 4)]))
    for notes, info in (([], []), (["cut"], []), ([], [DecoderInfo("DATA_LOST", 1, 2, 40)]), (["x"], [])):
        d.problems, d.info = list(notes), list(info)
        for rows in (WaveRows.concat([wave_columns(d)]), []):
            out = io.StringIO()
            rep.print_json(rows, out, [d])
            objs = []
            for r in rows:
                o = dict(zip(rep.FIELDS, rep._values(r)))
                o.update(by_type=r.by_type, file=r.path)
                objs.append(o)
            doc: dict = {"waves": objs}
            if d.problems:
                doc["notes"] = [f"k#1: {p}" for p in d.problems]
            if d.info:
                doc["info"] = [{"dispatch": "k#1", "se": 1, "kind": "DATA_LOST", "count": 2, "byte": 40}]
            assert out.getvalue() == json.dumps(doc, indent=1) + "\n"
