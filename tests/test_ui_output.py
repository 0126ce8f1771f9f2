"""The ui_output reader on synthesized fixtures (tools/makers/make_fixtures.py) and on the real samples.

Hand-derived figures of the `tiny` fixture (3 waves x 8 instructions, see tools/makers/make_fixtures.py):
hits 24; latency A 416 + B 320 + C 176 = 912; stall A 368 + B 272 + C 128 = 768;
idle A 8 + B 8 + C 4 = 20 (gaps before lines 1 and 4 of A, 4 and 8 of B, 4 of C).
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path, PurePosixPath

import numpy as np
import pytest
from conftest import FIXTURES, invoke, shared_path

import attdec
from attdec.errors import FormatError
from attdec.model.totals import aggregate_lines
from attdec.sources.pipeline import resolve

TINY = FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3"


def totals(d):
    return (
        sum(c.hit for c in d.code),
        sum(c.latency for c in d.code),
        sum(c.stall for c in d.code),
        sum(c.idle for c in d.code),
    )


def test_tiny_reads_exact_figures():
    [d] = attdec.open([TINY])
    assert d.name == "ui_output_agent_7_dispatch_3"
    assert d.kernel == "tiny_kernel"
    assert d.arch == "gfx9 (chip unknown)"
    assert totals(d) == (24, 912, 768, 20)
    assert [(w.se, w.simd, w.slot, w.seq, w.begin, w.end) for w in d.waves] == [
        (0, 0, 0, 0, 100, 524),
        (1, 2, 1, 0, 200, 528),
        (1, 2, 1, 1, 600, 780),
    ]
    assert d.waves[0].insts["line"].tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert d.code[5].source == "/src/k.py:7 -> /src/main.py:40"
    assert len(d.occupancy) == 6 and d.realtime and not d.problems


def test_aggregate_matches_code_json_and_subsets():
    [d] = attdec.open([TINY])
    t = aggregate_lines(d.waves).as_dict()
    for c in d.code:
        assert t.get(c.line, (0, 0, 0, 0)) == (c.hit, c.latency, c.stall, c.idle)
    only_c = aggregate_lines([d.waves[2]])
    assert int(only_c.stall.sum()) == 128 and int(only_c.idle.sum()) == 4


def test_early_8_column_layout_and_packed_occupancy():
    [d] = attdec.open([FIXTURES / "early8"])
    assert d.code[0].is_label and d.kernel == "tiny_kernel"
    assert totals(d) == (24, 912, 768, 20)  # Stall/Idle recomputed from the waves
    assert any("no Stall/Idle" in p for p in d.problems)
    [ref] = attdec.open([TINY])
    cols = ["se", "cu", "simd", "slot", "start", "time"]
    ref.occupancy["time"] = ref.occupancy["time"] // 8 * 8  # the packed layout stores time / 8
    assert np.array_equal(np.sort(d.occupancy[cols]), np.sort(ref.occupancy[cols]))


def test_python_writer_layout():
    [d] = attdec.open([FIXTURES / "python31"])
    assert d.kernel == "_tiny_kernel" and totals(d) == (24, 912, 768, 20)
    assert len(d.occupancy) == 6


def test_empty_shells_and_pc_sampling():
    ds = {d.path.rsplit("/", 1)[-1]: d for d in attdec.open([FIXTURES / "empty"])}
    assert ds["ui_output_agent_7_dispatch_9"].code == [] and not ds["ui_output_agent_7_dispatch_9"].waves
    assert ds["ui_output_agent_7_dispatch_9"].kernel == "tiny_kernel"  # from occupancy's table
    z = ds["ui_output_agent_7_dispatch_10"]
    assert len(z.code) == 9 and totals(z) == (0, 0, 0, 0) and not z.waves
    [p] = attdec.open([FIXTURES / "pcs"])
    assert len(p.code) == 9 and not p.waves and "PC-sampling" in p.problems[0]


def test_arch_from_agent_table_only_when_it_fits(tmp_path):
    [d] = attdec.open([FIXTURES / "gfx12"])
    assert d.arch == "gfx1201"
    shutil.copytree(TINY, tmp_path / "run" / TINY.name)
    (tmp_path / "run" / "x_agent_info.csv").write_text(
        '"Agent_Type","Gfx_Target_Version"\n"GPU",110000\n'
    )  # an RDNA chip for a gfxip-9 trace
    assert attdec.open([tmp_path / "run"])[0].arch == "gfx9 (chip unknown)"
    (tmp_path / "run" / "x_agent_info.csv").write_text('"Agent_Type","Gfx_Target_Version"\n"GPU",90010\n"GPU",90010\n')
    assert attdec.open([tmp_path / "run"])[0].arch == "gfx90a"


def test_globs_parents_and_duplicates():
    items = resolve([str(FIXTURES / "empty" / "ui_output_*"), FIXTURES / "empty"])
    assert len(items) == 3


def _tar(path, folder, extra=None):
    with tarfile.open(path, "w:xz") as tar:
        tar.add(folder, arcname=folder.name)
        for name, data in (extra or {}).items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_archive_is_read_in_memory_and_safely(tmp_path):
    arc = tmp_path / "d.tar.xz"
    _tar(arc, TINY, {"../escape/filenames.json": b"{}", "/abs/filenames.json": b"{}"})
    [d] = attdec.open([arc])
    assert totals(d) == (24, 912, 768, 20) and len(d.waves) == 3
    assert d.path == f"{arc}:{TINY.name}"
    assert not (tmp_path.parent / "escape").exists() and not (tmp_path / TINY.name).exists()


@pytest.mark.parametrize("mode", ["w:xz", "w:gz", "w:bz2", "w"])
@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT, tarfile.USTAR_FORMAT])
def test_archive_formats_and_long_names(tmp_path, mode, fmt):
    """The archive walk reads what tarfile writes: every compression, GNU long names, pax paths, ustar
    prefixes; links and unsafe paths are skipped."""
    from attdec.sources.archive import members

    deep = "d" * 90 + "/" + "e" * 60  # ustar splits it into prefix/name; GNU and pax write it whole
    arc = tmp_path / "a.tar"
    with tarfile.open(arc, mode, format=fmt) as tar:
        tar.add(TINY, arcname=f"{deep}/{TINY.name}")
        link = tarfile.TarInfo("link.json")
        link.type, link.linkname = tarfile.SYMTYPE, "x"
        tar.addfile(link)
    got = dict(members(arc, lambda p: p.name == "code.json"))
    assert len(got) == len(list(TINY.iterdir()))
    assert got[PurePosixPath(deep, TINY.name, "code.json")] == (TINY / "code.json").read_bytes()
    assert all(v is None for k, v in got.items() if k.name != "code.json")
    [d] = attdec.open([arc])
    assert totals(d) == (24, 912, 768, 20) and len(d.waves) == 3


def test_damaged_archives_are_one_error(tmp_path):
    arc = tmp_path / "d.tar"
    with tarfile.open(arc, "w") as tar:
        tar.add(TINY, arcname=TINY.name)
    data = arc.read_bytes()
    (tmp_path / "cut.tar").write_bytes(data[:2000])  # ends inside a member
    bad = bytearray(data)
    bad[1024 + 100] ^= 0xFF  # a later header's mode: its checksum no longer matches
    (tmp_path / "sum.tar").write_bytes(bytes(bad))
    for name in ("cut.tar", "sum.tar"):
        code, out = _cli("hotspots", tmp_path / name)
        assert code == 1 and "unreadable archive" in out and out.count("\n") == 1, out


def _cli(*args):
    r = invoke(list(map(str, args)))
    return r.exit_code, r.output


@pytest.mark.parametrize(
    "setup,needle",
    [
        ("missing", "no such file or folder"),
        ("not_ui", "not an input attdec reads"),
        ("bad_json", "code.json: malformed JSON"),
        ("bad_archive", "unreadable archive"),
        ("no_match", "no file or folder matches"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(tmp_path, setup, needle):
    target = tmp_path / "x"
    if setup == "not_ui":
        target.mkdir()
        (target / "readme.txt").write_text("hi")
    elif setup == "bad_json":
        shutil.copytree(TINY, target)
        f = target / "code.json"
        f.write_text(f.read_text()[:-7])
    elif setup == "bad_archive":
        target = tmp_path / "x.tar.xz"
        target.write_bytes(b"\xfd7zXZ\x00garbage")
    elif setup == "no_match":
        target = tmp_path / "nothing*"
    for cmd in [["hotspots"], ["waves"]]:
        code, out = _cli(*cmd, target)
        assert code == 1, out
        assert out.startswith("attdec: error: ") and needle in out and out.count("\n") == 1, out
        assert "Traceback" not in out


def test_malformed_json_names_position(tmp_path):
    shutil.copytree(TINY, tmp_path / "d")
    (tmp_path / "d" / "filenames.json").write_text('{"gfxip": 9,\n "wave_filenames": [}')
    with pytest.raises(FormatError) as e:
        attdec.open([tmp_path / "d"])
    assert "line 2 column" in str(e.value) and str(tmp_path / "d" / "filenames.json") in str(e.value)


def test_missing_listed_wave_is_a_problem_not_an_error(tmp_path):
    shutil.copytree(TINY, tmp_path / "d")
    (tmp_path / "d" / "se1_sm2_sl1_wv1.json").unlink()
    [d] = attdec.open([tmp_path / "d"])
    assert len(d.waves) == 2 and any("missing: se1_sm2_sl1_wv1.json" in p for p in d.problems)


# ---- real samples ------------------------------------------------------------------------------


def test_every_real_sample_matches_code_json():
    root = shared_path("ui_output_samples")
    ds = attdec.open([root])
    att = [d for d in ds if d.waves]
    assert len(ds) == 18 and len(att) == 17
    for d in att:
        t = aggregate_lines(d.waves).as_dict()
        assert all(t.get(c.line, (0, 0, 0, 0)) == (c.hit, c.latency, c.stall, c.idle) for c in d.code), d.name
        assert d.arch == "gfx9 (chip unknown)" and not d.problems, (d.name, d.problems)
    moe = [d for d in ds if d.name == "ui_output_agent_42768_dispatch_39"]
    assert len(moe) == 1 and len(moe[0].waves) == 4112
    assert sum(len(w.insts) for w in moe[0].waves) == 622968


def test_real_wave_begin_end_match_filenames_json():
    d = shared_path("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "vec_add")
    [disp] = attdec.open([d])
    folder = next(d.rglob("filenames.json")).parent
    fn = json.loads((folder / "filenames.json").read_text())
    listed = {}
    for se, a in fn["wave_filenames"].items():
        for simd, b in a.items():
            for slot, c in b.items():
                for wv, (_name, begin, end) in c.items():
                    listed[(int(se), int(simd), int(slot), int(wv))] = (begin, end)
    assert len(listed) == len(disp.waves) == 632
    assert all(listed[(w.se, w.simd, w.slot, w.seq)] == (w.begin, w.end) for w in disp.waves)


@pytest.mark.parametrize(
    "name,body,needle",
    [
        (
            "se0_sm0_sl0_wv0.json",
            {"wave": {"instructions": [[1, 2]]}},
            "wave.instructions[0] has 2 value(s), expected a row of 5",
        ),
        ("se0_sm0_sl0_wv0.json", {"wave": {"instructions": [], "timeline": [[1]]}}, "wave.timeline[0] has 1 value(s)"),
        ("se0_sm0_sl0_wv0.json", {"nothing": 1}, "no 'wave' object"),
        ("occupancy.json", {"0": [["a"]]}, "unknown layout"),
        (
            "code.json",
            {"code": [["s_nop 0", 0, "x", "", 1, 2, 3, 4, 5, 6]]},
            "code[0][2] is str 'x', expected an integer",
        ),
        ("code.json", [1, 2], "not a JSON object"),
        (
            "filenames.json",
            {"wave_filenames": {"0": {"0": {"0": {"0": ["a.json", "b", 1]}}}}},
            "wave_filenames.0.0.0.0: begin/end",
        ),
        ("filenames.json", {"wave_filenames": {"0": [1]}}, "wave_filenames.0 is list, expected an object"),
    ],
)
def test_wrong_json_shapes_are_format_errors(tmp_path, name, body, needle):
    shutil.copytree(TINY, tmp_path / "d")
    (tmp_path / "d" / name).write_text(json.dumps(body))
    # each file is read by what needs it: wave files by `waves`, occupancy.json by `kernel`, the rest always
    cmd = {"se0_sm0_sl0_wv0.json": "waves", "occupancy.json": "kernel"}.get(name, "hotspots")
    r = invoke([cmd, str(tmp_path / "d")])
    if cmd == "waves":  # a bad wave file is left out with a warning naming it; the others are listed
        assert r.exit_code == 0 and needle in r.stderr and name in r.stderr and r.stderr.count("\n") == 1, r.output
        assert r.stdout.startswith("2 waves of"), r.stdout
        return
    assert r.exit_code == 1 and needle in r.output and name in r.output, r.output
    assert r.output.count("\n") == 1


def test_wave_file_without_simd_slot_id_keys_takes_them_from_its_name(tmp_path):
    """se<S>_sm<SIMD>_sl<SLOT>_wv<WAVE>.json: a writer that leaves the keys out still names the file."""
    folder = tmp_path / "d"
    shutil.copytree(FIXTURES / "python31" / "ui_output_att1", folder)
    f = folder / "se1_sm2_sl1_wv1.json"
    doc = json.loads(f.read_text())
    for k in ("simd", "slot", "id"):
        doc["wave"].pop(k, None)
    f.write_text(json.dumps(doc))
    [d] = attdec.open([folder])
    w = next(w for w in d.waves if w.path.endswith("se1_sm2_sl1_wv1.json"))
    assert (w.se, w.simd, w.slot, w.seq) == (1, 2, 1, 1)


def test_folder_without_filenames_json_is_read_from_code_json_and_wave_files(tmp_path):
    for src in (FIXTURES / "python31" / "ui_output_att1", FIXTURES / "gfx12" / "ui_output_agent_8_dispatch_1"):
        folder = tmp_path / src.name
        shutil.copytree(src, folder)
        (folder / "filenames.json").unlink()
        [want] = attdec.open([src])
        [d] = attdec.open([tmp_path])  # found walking the parent too
        assert d.path == str(folder)
        assert attdec.hotspots(d).totals == attdec.hotspots(want).totals
        assert sorted(w.path.rsplit("/", 1)[1] for w in d.waves) == sorted(w.path.rsplit("/", 1)[1] for w in want.waves)
        assert any("no filenames.json" in p for p in d.problems)
        shutil.rmtree(folder)


def test_folder_with_neither_manifest_nor_code_and_waves_is_refused_naming_them(tmp_path):
    folder = tmp_path / "d"
    shutil.copytree(FIXTURES / "python31" / "ui_output_att1", folder)
    (folder / "filenames.json").unlink()
    (folder / "code.json").unlink()
    r = invoke(["hotspots", folder])
    assert r.exit_code != 0 and r.exception is None
    assert r.stderr.count("\n") == 1 and "code.json and wave files" in r.stderr


@pytest.mark.parametrize("hz,want", [(50_000_000, 50_000_000), (None, None), ("abc", "metadata.frequency")])
def test_realtime_frequency_comes_from_realtime_json(tmp_path, hz, want):
    """realtime.json's metadata.frequency is the reference clock's rate: a folder saying 50 MHz reads its
    clock at 50 MHz (each reference tick lasts twice as long as at the 100 MHz default, so the shader clock
    reads half as fast); a folder
    that says nothing keeps the default; a frequency that is not a count is one error naming the field."""
    from attdec.analysis.clock import Clock
    from attdec.model import REALTIME_HZ

    src = Path(attdec.__file__).parent / "data" / "demo" / "ui_output_agent_4242_dispatch_7"
    folder = tmp_path / src.name
    shutil.copytree(src, folder)
    doc = json.loads((folder / "realtime.json").read_text())
    if hz is None:
        del doc["metadata"]
    else:
        doc["metadata"]["frequency"] = hz
    (folder / "realtime.json").write_text(json.dumps(doc))
    if isinstance(want, str):
        with pytest.raises(FormatError, match=want):
            attdec.open(folder)
        code, out = _cli("timeline", folder, "--clock", "realtime", "-o", tmp_path / "t.json")
        assert code == 1 and want in out and out.count("\n") == 1, out
        return
    (d,) = attdec.open(folder)
    assert d.rt_frequency == want
    ghz = Clock(d).ghz()
    (default,) = attdec.open(src)
    assert ghz == pytest.approx(Clock(default).ghz() * ((want or REALTIME_HZ) / REALTIME_HZ))
