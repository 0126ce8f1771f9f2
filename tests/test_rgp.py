""".rgp input: the 59 real files of ../shared/rgp against the captures they were written from, RADV-layout and
RDF fixtures written at test time by tests/support/make_rgp.py, the containers' quirks and damaged files."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from conftest import SYNTHETIC_CAPTURES, SYNTHETIC_MORE, captures, invoke, real_data, shared_path

import attdec
from attdec.decoders.userdata import RGP_BIND_PIPELINE, RGP_EVENT, rgp_markers, scan_userdata
from attdec.errors import AttdecError
from attdec.sources import capture, rgp
from attdec.sources.pipeline import kind_of
from attdec.sources.raw import decode_dispatch
from attdec.sources.rgp.container import read_rgp
from tests.support import make_rgp


def _rgp_files() -> list[Path]:
    files = sorted(shared_path("rgp").rglob("*.rgp"))
    assert len(files) == 59
    return files


def _capture_of(f: Path) -> Path:
    return shared_path("captures", f.parent.name, f.stem)


def _raw_key(raws) -> list:
    """What decoding a dispatch depends on: GPU, every SE's bytes, every code object's bytes and load base."""
    return [
        (
            str(r.target),
            sorted((b.se, b.data) for b in r.blobs),
            [(c.data, c.base) for c in r.code_objects],
        )
        for r in raws
    ]


def test_every_shared_rgp_holds_its_captures_dispatches():
    """All 59: the same dispatches, in order, with byte-identical SE blobs and code objects at the same bases and
    the same GPU as the capture folder, so decoding gives the same waves and totals; the 22 files with
    rgptool's padding bug say so in one note."""
    padded = 0
    for f in _rgp_files():
        raws = rgp.load(f)
        assert _raw_key(raws) == _raw_key(capture.load(_capture_of(f))), f
        notes = [p for r in raws for p in r.problems]
        padded += any("padding bug" in p for p in notes)
        assert len(notes) == len(set(notes))  # one note per problem
        if f.parent.name == "gfx1200" and raws[0].target.name == "gfx1200":  # rgptool hard-codes gfx1201's device id
            assert any("0x7550 names gfx1201" in p for p in notes)
    assert padded == 22


def _rgptool_files(*rels: str) -> list:
    """Parameters of a test on files of tinygrad's rgptool: the synthetic captures written in its layout
    (tests/support/make_rgp.py `rgptool`, at test time), then each ../shared/rgp/REL.rgp this machine has."""
    params = [pytest.param(c, id=f"synthetic-{c.name}") for c in (SYNTHETIC_CAPTURES["gfx1100"], SYNTHETIC_MORE)]
    return params + [pytest.param(rel, id=rel) for rel in rels if real_data("rgp", rel + ".rgp")]


def _rgptool_file(param, tmp_path) -> tuple[Path, Path]:
    """(the .rgp file, the capture folder it was written from) of an `_rgptool_files` parameter."""
    if isinstance(param, Path):
        return make_rgp.rgptool(param, tmp_path / f"{param.name}.rgp"), param
    f = shared_path("rgp", param + ".rgp")
    return f, _capture_of(f)


def _summary(dispatches) -> list:
    return [(len(d.waves), sum(c.stall for c in d.code), sum(c.hit for c in d.code), d.arch) for d in dispatches]


@pytest.mark.parametrize("rel", _rgptool_files("gfx1151/gemm_run0", "gfx1201/handwritten_run0"))
def test_decoded_dispatches_equal_the_captures(rel, tmp_path):
    f, cap = _rgptool_file(rel, tmp_path)
    assert _summary(attdec.open(f)) == _summary(attdec.open(cap))
    assert _raw_key(rgp.load(f)) == _raw_key(capture.load(cap))


def _hotspots_json(*args) -> list:
    r = invoke(["hotspots", "--format", "json", *map(str, args)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output[r.output.index("{") :])
    return [(d["waves"], d["totals"], d["arch"]) for d in doc.get("dispatches", [doc])]


@pytest.mark.parametrize("rel", _rgptool_files("gfx1100/sync_run0", "gfx950/plus_run0"))
def test_hotspots_json_same_totals_and_waves_as_the_capture(rel, tmp_path):
    """Through the CLI: a padding-bug file with a minimal container and two dispatches, a 32-SE gfx9 file,
    and the synthetic captures' two dispatches in one trace per SE."""
    f, cap = _rgptool_file(rel, tmp_path)
    assert kind_of(f).name == "rgp"
    got = _hotspots_json(f)
    assert got == _hotspots_json(cap) and len(got) >= 1


@pytest.mark.parametrize("rel", _rgptool_files("gfx1100/sync_run0"))
def test_decode_takes_an_rgp(rel, tmp_path):
    """`attdec decode FILE.rgp`: the same records as on the capture folder; container repairs are warnings
    (the real file has rgptool's padding bug; the synthetic ones need no repair)."""
    f, cap = _rgptool_file(rel, tmp_path)
    got = invoke(["decode", "--format", "json", str(f)])
    want = invoke(["decode", "--format", "json", str(cap)])
    assert got.exit_code == want.exit_code == 0, got.output
    records = [{k: d[k] for k in ("waves", "occupancy", "realtime")} for d in json.loads(got.stdout)["dispatches"]]
    assert records == [
        {k: d[k] for k in ("waves", "occupancy", "realtime")} for d in json.loads(want.stdout)["dispatches"]
    ]
    repaired = not isinstance(rel, Path)
    assert got.stderr.count("attdec: warning:") == repaired and ("padding bug" in got.stderr) == repaired


def test_concatenated_sessions_and_markers():
    """gemm_gfx1200: each SE's SQTT_DATA holds three dispatches back to back; each session's pipeline-bind
    marker names its code object (md5 hash), one EVENT marker each."""
    f = shared_path("rgp", "gfx1200", "gemm_gfx1200_run0.rgp")
    raws = rgp.load(f)
    cap = json.loads((_capture_of(f) / "capture.json").read_text())
    assert [r.kernel for r in raws] == [d["kernel"] for d in cap["dispatches"]]
    assert [r.name for r in raws] == [f"{d['kernel']}#{d['exec_tag']}" for d in cap["dispatches"]]
    b = raws[2].blobs[0]
    marks = rgp_markers(scan_userdata(b.data, 12).userdata)
    assert [m.kind for m in marks] == [RGP_BIND_PIPELINE, RGP_EVENT]
    assert marks[1].dwords[2] == 2  # cmd_id: the third dispatch
    assert raws[0].target.name == "gfx1200" and raws[0].problems  # device id 0x7550 disagrees, noted


@pytest.mark.parametrize("rel", _rgptool_files("gfx1100/sync_run0"))
def test_info_lists_chunks_and_dispatches(rel, tmp_path):
    f, cap = _rgptool_file(rel, tmp_path)
    meta = json.loads((cap / "capture.json").read_text())
    bases = {k["name"]: k["base"] for k in meta["kernels"]}
    r = invoke(["info", "--format", "json", str(f)])
    assert r.exit_code == 0, r.output
    (doc,) = json.loads(r.output)["inputs"]
    kinds = [c["kind"] for c in doc["chunks"]]
    assert doc["kind"] == "rgp" and doc["container"] == "SQTT file 1.5"
    assert kinds.count("SQTT_DATA") == len({b["se"] for b in meta["blobs"]}) and "CODE_OBJECT_LOADER_EVENTS" in kinds
    db = doc["chunks"][kinds.index("CODE_OBJECT_DATABASE")]
    loader = doc["chunks"][kinds.index("CODE_OBJECT_LOADER_EVENTS")]
    if isinstance(rel, Path):  # whole records: where the sizes put it
        assert loader["offset"] == db["offset"] + db["size"]
    else:
        assert loader["offset"] == 62647  # re-synchronised one byte before where the sizes put it
    assert [d["code_objects"][0]["base"] for d in doc["dispatches"]] == [bases[d["kernel"]] for d in meta["dispatches"]]
    r = invoke(["info", str(f), str(cap)])
    assert r.exit_code == 0 and "PSO_CORRELATION" in r.output and "capture folder" in r.output


# ---- fixtures in the layouts ../shared/rgp has no real example of --------------------------------


@pytest.mark.parametrize("cap", captures("gfx1151/gemm_run0", "gfx1100/sync_run0", synthetic=("gfx1100",)))
def test_radv_layout(tmp_path, cap):
    """Mesa's writer: file 1.6, SQTT after the code objects (rebuilt as PAL ELFs), clock calibration, real
    device id; the chip comes from the device id (a PAL ELF names only a family representative)."""
    f = make_rgp.radv(cap, tmp_path / "radv.rgp")
    parsed = read_rgp(f.read_bytes(), str(f))
    kinds = [c.kind for c in parsed.chunks]
    assert parsed.container == "SQTT file 1.6" and not parsed.problems
    assert kinds.index("CODE_OBJECT_DATABASE") < kinds.index("SQTT_DATA") and "CLOCK_CALIBRATION" in kinds
    got, want = attdec.open(f), attdec.open(cap)
    assert [(len(d.waves), sum(c.stall for c in d.code), d.arch) for d in got] == [
        (len(d.waves), sum(c.stall for c in d.code), d.arch) for d in want
    ]
    assert {d.kernel for d in got} == {"_amdgpu_cs_main"}


@pytest.mark.parametrize("cap", captures("gfx950/plus_run0", synthetic=("gfx1100",)))
@pytest.mark.parametrize("zstd", [False, True])
def test_rdf_container(tmp_path, zstd, cap):
    """RGP 2.x: index at the end, per-chunk headers, zstd data; the exact chip from AsicInfo's gfxip level."""
    if zstd:
        pytest.importorskip("zstandard", reason="the rgp extra (zstandard) is not installed")
    f = make_rgp.rdf(cap, tmp_path / "cap.rgp", zstd=zstd)
    parsed = read_rgp(f.read_bytes(), str(f))
    assert parsed.container == "RDF 3" and not parsed.problems
    assert any(c.compressed for c in parsed.chunks) == zstd
    assert _raw_key(rgp.load(f)) == _raw_key(capture.load(cap))
    assert _summary(attdec.open(f)) == _summary(attdec.open(cap))


@pytest.mark.parametrize("cap", captures("gfx1100/plus_run0", synthetic=("gfx1100",)))
def test_compressed_chunk_without_zstandard_is_one_line(tmp_path, monkeypatch, cap):
    pytest.importorskip("zstandard", reason="writing the fixture needs zstandard")
    f = make_rgp.rdf(cap, tmp_path / "z.rgp", zstd=True)
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard -> ImportError
    r = invoke(["hotspots", str(f)])
    lines = r.output.strip().splitlines()
    assert r.exit_code == 1 and len(lines) == 1 and lines[0].startswith("attdec: error:"), r.output
    assert "pip install 'attdec[rgp]'" in lines[0] and "zstd-compressed" in lines[0] and "z.rgp: " in lines[0]
    r = invoke(["info", str(f)])  # listing the chunks needs no decompression
    assert r.exit_code == 0 and "SqttData (zstd)" in r.output and "zstandard" in r.output


# ---- damage ------------------------------------------------------------------------------------


@pytest.mark.parametrize("cap", captures("gfx1100/gemm_run0", synthetic=("gfx1100",)))
def test_truncated_radv_file_decodes_what_is_left(tmp_path, cap):
    """RADV writes the SQTT data last: cut inside the last SE's data, the other SEs decode in full and the cut
    is one note with byte offsets."""
    data = make_rgp.radv(cap, tmp_path / "r.rgp").read_bytes()
    last = max(c.offset for c in read_rgp(data, "r").chunks)
    cut = min(last + 1000, len(data) - 1)
    raws = rgp.build(read_rgp(data[:cut], "cut.rgp"))
    assert len(raws[0].blobs) == len(capture.load(cap)[0].blobs)
    notes = [p for p in raws[0].problems if "truncated" in p]
    assert len(notes) == 1 and str(last) in notes[0], raws[0].problems
    d = decode_dispatch(raws[0])
    full = attdec.open(cap)[0]
    assert 0 < len(d.waves) <= len(full.waves) and len({w.se for w in d.waves}) == len({w.se for w in full.waves})


@pytest.mark.parametrize("rel", _rgptool_files("gfx1100/gemm_run0"))
def test_truncated_rgptool_file_is_one_line(tmp_path, rel):
    """rgptool writes the code objects last: cut there, one error line."""
    f, _ = _rgptool_file(rel, tmp_path)
    data = f.read_bytes()
    db = next(c for c in read_rgp(data, "r").chunks if c.kind == "CODE_OBJECT_DATABASE")
    p = tmp_path / "cut.rgp"
    p.write_bytes(data[: db.offset + 100])  # inside the first code object
    r = invoke(["hotspots", str(p)])
    assert r.exit_code == 1 and r.output.count("\n") == 1 and "no readable code object" in r.output, r.output
    assert "truncated" in r.output


def _damage_sources(tmp_path) -> list[Path]:
    """Every sixth real file, or files written from the synthetic captures in both layouts when there are none."""
    if real_data("rgp"):
        return _rgp_files()[::6]
    cap = SYNTHETIC_CAPTURES["gfx1100"]
    return [make_rgp.radv(cap, tmp_path / "radv.rgp"), make_rgp.rdf(cap, tmp_path / "rdf.rgp")]


def test_damage_never_gives_a_traceback(tmp_path):
    """Truncations and bit flips of .rgp files: dispatches with notes, or one AttdecError, never anything else."""
    rng = random.Random(7)
    outcomes = {"read": 0, "refused": 0}
    for f in _damage_sources(tmp_path):
        data = f.read_bytes()
        variants = [data[:k] for k in (40, 56, 100, len(data) // 2, len(data) - 1)]
        for _ in range(6):
            b = bytearray(data)
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            variants.append(bytes(b))
        for v in variants:
            try:
                raws = rgp.build(read_rgp(v, f.name))
                outcomes["read"] += 1
                assert all(len(r.problems) == len(set(r.problems)) for r in raws)
            except AttdecError:
                outcomes["refused"] += 1
    assert outcomes["read"] > outcomes["refused"] > 0


@pytest.mark.parametrize("cap", captures(synthetic=("gfx1100",)))
def test_bad_chunk_size_resynchronises_in_a_radv_file(tmp_path, cap):
    """A chunk size made wrong: the reader finds the next chunk that stores its own offset and says so."""
    _resynchronises(make_rgp.radv(cap, tmp_path / "r.rgp").read_bytes())


@pytest.mark.parametrize("rel", _rgptool_files("gfx1100/plus_run0"))
def test_bad_chunk_size_resynchronises(rel, tmp_path):
    _resynchronises(_rgptool_file(rel, tmp_path)[0].read_bytes())


def _resynchronises(src: bytes) -> None:
    f = read_rgp(src, "ok")
    db = next(c for c in f.chunks if c.kind == "CODE_OBJECT_DATABASE")
    bad = bytearray(src)
    bad[db.offset + 8 : db.offset + 12] = (db.size + 40).to_bytes(4, "little")
    g = read_rgp(bytes(bad), "bad")
    assert [c.kind for c in g.chunks] == [c.kind for c in f.chunks]
    assert any("re-synchronised" in p for p in g.problems)
    assert _raw_key(rgp.build(g)) == _raw_key(rgp.build(f))


def test_not_an_rgp(tmp_path):
    p = tmp_path / "x.rgp"
    p.write_bytes(b"\x42\x30\x30\x50" + bytes(20))  # magic, then too short for the header
    r = invoke(["hotspots", str(p)])
    assert r.exit_code == 1 and r.output.count("attdec: error:") == 1 and "truncated" in r.output
