"""Columnar output (`--format npz`, `attdec.save`) and the JSON writer (issue 12, target 8): the arrays hold
exactly what the JSON says, open without pickle, and go to files only."""

from __future__ import annotations

import json
import tarfile

import numpy as np
from conftest import FIXTURES, cli, one_line_error, shared_path

import attdec
from attdec.commands.demo import demo_path
from attdec.report.records import write_rows

TINY = FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3"
RAW = demo_path(raw=True)


def load(path):
    d = np.load(path)  # allow_pickle=False: every column is numbers or unicode
    return {k: d[k] for k in d.files}


def test_decode_npz_holds_what_the_json_says(tmp_path):
    p = cli("decode", RAW, "--format", "npz", "-o", tmp_path / "r.npz")
    assert p.returncode == 0 and p.stdout == "", p.stderr
    d = load(tmp_path / "r.npz")
    js = json.loads(cli("decode", RAW, "--format", "json").stdout)["dispatches"]
    waves = [w for disp in js for w in disp["waves"]]
    assert len(d["waves.begin"]) == len(waves) and d["waves.begin"].tolist() == [w["begin_time"] for w in waves]
    cats = d["categories.name"]
    rows = [
        [int(pc), int(t), int(dur), int(st), str(cats[c])]
        for pc, t, dur, st, c in zip(
            d["records.pc"], d["records.time"], d["records.duration"], d["records.stall"], d["records.category"]
        )
    ]
    assert rows == [r for w in waves for r in w["instructions"]]
    for i, w in enumerate(waves):  # first/records delimit each wave's rows; records.wave points back
        first, n = d["waves.first"][i], d["waves.records"][i]
        assert n == len(w["instructions"]) and (d["records.wave"][first : first + n] == i).all()
        assert d["waves.se"][i] == w["se"] and d["waves.slot"][i] == w["wave_id"]
    occ = sorted(zip(*(d[f"occupancy.{k}"].tolist() for k in ("se", "cu", "simd", "slot", "start", "time", "pc"))))
    assert occ == sorted(tuple(o) for disp in js for o in disp["occupancy"])
    assert d["dispatches.name"].tolist() == [disp["name"] for disp in js]


def test_npz_goes_to_a_file_only(tmp_path):
    one_line_error(cli("decode", RAW, "--format", "npz"), "needs a file")
    one_line_error(cli("hotspots", TINY, "--format", "npz", "-o", "-"), "needs a file")
    one_line_error(cli("waves", TINY, "--format", "npz", "-o", tmp_path), "is a directory")
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_hotspots_and_waves_npz_match_their_json(tmp_path):
    assert cli("hotspots", TINY, RAW, "--format", "npz", "-o", tmp_path / "h.npz", "--top", "0").returncode == 0
    h = load(tmp_path / "h.npz")
    js = json.loads(cli("hotspots", TINY, RAW, "--format", "json", "--top", "0").stdout)["dispatches"]
    assert h["rows.key"].tolist() == [r["key"] for d in js for r in d["rows"]]
    assert h["rows.stall"].tolist() == [r["stall"] for d in js for r in d["rows"]]
    assert h["rows.report"].tolist() == [i for i, d in enumerate(js) for _ in d["rows"]]
    assert h["totals.stall"].tolist() == [d["totals"]["stall"] for d in js]
    assert h["by_type.type"].tolist() == [t["type"] for d in js for t in d["by_type"]]
    assert cli("waves", TINY, "--format", "npz", "-o", tmp_path / "w.npz").returncode == 0
    w = load(tmp_path / "w.npz")
    jw = json.loads(cli("waves", TINY, "--format", "json").stdout)["waves"]
    assert w["waves.begin"].tolist() == [x["begin"] for x in jw] and w["waves.stall"].tolist() == [
        x["stall"] for x in jw
    ]


def test_api_save_writes_tables(tmp_path):
    ds = attdec.open(TINY)
    attdec.save(tmp_path / "t.npz", waves=attdec.waves(ds), records=attdec.instructions(ds), occ=attdec.occupancy(ds))
    d = load(tmp_path / "t.npz")
    assert len(d["records.time"]) == 24 and int(d["records.stall"].sum()) == 768
    assert len(d["occ.time"]) == len(ds[0].occupancy) == 6 and d["occ.dispatch"].dtype.kind == "U"
    assert d["waves.dispatch"].tolist() == [ds[0].name] * 3


def test_json_rows_writer_matches_json_dumps():
    rows = [[i, -i * 3, 2**40 + i, '"VALU"'] for i in range(70_000)]  # more than one chunk
    out = []
    write_rows(out.append, [list(c) for c in zip(*rows)])
    assert json.loads("[" + "".join(out) + "]") == [[a, b, c, "VALU"] for a, b, c, _ in rows]
    out = []
    write_rows(out.append, [[], []])
    assert out == []


def test_real_archive_reads_like_the_extracted_folder(tmp_path):
    arc = next(shared_path("ui_output_samples").rglob("*.tar.xz"))
    with tarfile.open(arc) as t:
        t.extractall(tmp_path, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    [a], [f] = attdec.open(arc), attdec.open(tmp_path)
    assert a.wave_count == f.wave_count == 4112 and not a.loaded("waves")
    assert [(c.line, c.hit, c.stall) for c in a.code] == [(c.line, c.hit, c.stall) for c in f.code]
    assert [(w.se, w.slot, w.seq, len(w.insts)) for w in a.waves] == [
        (w.se, w.slot, w.seq, len(w.insts)) for w in f.waves
    ]
