"""Every crasher class of issue 18, and the rules of docs/reliability.md: hostile values are stopped where
they enter (one `attdec: error:` line naming the file and where in it, exit 1), what can be read still is,
and nothing a hostile header claims is allocated."""

from __future__ import annotations

import builtins
import io
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, SYNTHETIC_MORE, captures, cli, one_line_error

from attdec.errors import FormatError, InputError, checked_int, parse_json
from tools.fuzzers import fuzz

DEMO_RAW = ROOT / "attdec" / "data" / "demo_raw"
BASE = "0x7fff00000000"  # where demo_raw's kern.co was loaded


def _lines(r) -> list[str]:
    return [ln for ln in r.stderr.splitlines() if ln.strip()]


# ---- numbers from file names -----------------------------------------------------------------------------
@pytest.mark.parametrize("cmd", [["decode", "--format", "json"], ["hotspots", "--format", "csv"]])
def test_huge_shader_engine_in_a_file_name_is_one_line(tmp_path, cmd):
    blob = tmp_path / "kern_1_se1099511627776.att"
    shutil.copy(DEMO_RAW / "kern_1_se0.att", blob)
    r = cli(*cmd, "--code", f"{DEMO_RAW / 'kern.co'}@{BASE}", blob)
    one_line_error(r, str(blob), "shader engine 1099511627776 is out of range")


def test_huge_shader_engine_in_a_capture_json_is_one_line(tmp_path):
    cap = tmp_path / "cap"
    shutil.copytree(DEMO_RAW, cap)
    doc = json.loads((cap / "capture.json").read_text())
    doc["blobs"][1]["se"] = 1 << 40
    (cap / "capture.json").write_text(json.dumps(doc))
    one_line_error(cli("waves", "--format", "csv", cap), "kern_1_se1.att", "shader engine 1099511627776")


# ---- code objects: ELF fields a reader trusts --------------------------------------------------------------
def _sections(data: bytes) -> dict[str, int]:
    """Section name -> offset of its section header."""
    secs = fuzz.elf_sections(data)
    shstr = secs[struct.unpack_from("<H", data, 0x3E)[0]][3]
    return {data[shstr + name :].split(b"\0", 1)[0].decode(): h for h, name, *_ in secs}


def _patched(data: bytes, at: int, size: int, value: int) -> bytes:
    b = bytearray(data)
    fuzz.put(b, at, size, value)
    return bytes(b)


HUGE = (1 << 63, (1 << 64) - 1, 1 << 40, 0x7FFFFFFF)
SHDR = {"sh_addr": (16, 8), "sh_offset": (24, 8), "sh_size": (32, 8), "sh_entsize": (56, 8), "sh_link": (40, 4)}


@pytest.mark.parametrize("section", [".text", ".symtab", ".dynsym", ".note", ".rodata", ".debug_line", ".strtab"])
@pytest.mark.parametrize("field", sorted(SHDR))
def test_huge_section_fields_are_stopped_where_they_enter(tmp_path, section, field):
    """Offsets, sizes and addresses of 2^63, 2^64-1, 2^40, 2^31-1 (OverflowError and friends before)."""
    data = (DEMO_RAW / "kern.co").read_bytes()
    h = _sections(data)[section]
    off, size = SHDR[field]
    for v in HUGE:
        co = tmp_path / "k.co"
        co.write_bytes(_patched(data, h + off, size, v))
        for cmd in (["disasm"], ["kernel", "--format", "json"]):
            r = cli(*cmd, co)
            assert r.returncode in (0, 1) and "Traceback" not in r.stderr, (field, v, r.stderr)
        r = cli("hotspots", "--format", "csv", "--code", f"{co}@{BASE}", DEMO_RAW / "kern_1_se0.att")
        assert r.returncode in (0, 1, 3) and "Traceback" not in r.stderr, (field, v, r.stderr)
        if r.returncode == 1:
            one_line_error(r, str(co))


def test_huge_symbol_values_are_stopped_where_they_enter(tmp_path):
    data = (DEMO_RAW / "kern.co").read_bytes()
    secs = {s[0]: s for s in fuzz.elf_sections(data)}
    h = _sections(data)[".symtab"]
    _, _, _, off, size = secs[h]
    for sym in range(off, off + size, 24):
        for field_off, field_size in ((8, 8), (16, 8), (6, 2)):  # st_value, st_size, st_shndx
            co = tmp_path / "k.co"
            co.write_bytes(_patched(data, sym + field_off, field_size, (1 << (8 * field_size)) - 1))
            r = cli("hotspots", "--format", "json", "--code", f"{co}@{BASE}", DEMO_RAW / "kern_1_se0.att")
            assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr


def test_a_symbol_table_whose_type_was_damaged(tmp_path):
    """sh_type of .symtab made PROGBITS: pyelftools hands back a plain Section (AttributeError before)."""
    data = (DEMO_RAW / "kern.co").read_bytes()
    for name in (".symtab", ".dynsym"):
        co = tmp_path / "k.co"
        co.write_bytes(_patched(data, _sections(data)[name] + 4, 4, 1))
        r = cli("hotspots", "--format", "csv", "--code", f"{co}@{BASE}", DEMO_RAW / "kern_1_se0.att")
        assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
        r = cli("disasm", co)
        assert r.returncode == 0 or (len(_lines(r)) == 1 and "bad ELF" in r.stderr), r.stderr


def test_a_metadata_note_of_the_wrong_shape(tmp_path):
    """amdhsa.kernels an integer, a kernel's .symbol a list: the note's values are checked like a file's."""
    import msgpack

    from attdec.isa import load_code_object

    data = (DEMO_RAW / "kern.co").read_bytes()
    co = load_code_object(data, "k.co")
    for bad in ({"amdhsa.kernels": 7}, {"amdhsa.kernels": [{".symbol": [1], ".name": {"x": 1}}]}):
        packed = msgpack.packb(bad)
        # the note's descriptor replaced in place, padded: same size, so the ELF stays consistent
        start = data.find(msgpack.packb(co.metadata)[:16])
        assert start > 0
        old_len = len(msgpack.packb(co.metadata))
        blob = data[:start] + packed.ljust(old_len, b"\xc0") + data[start + old_len :]
        got = load_code_object(blob, "k.co")
        assert [k.name for k in got.kernels] == [k.name for k in co.kernels]


# ---- JSON ----------------------------------------------------------------------------------------------------
PCS = FIXTURES / "pcs" / "pcsampling"


def test_deeply_nested_json_is_one_line_with_its_position(tmp_path):
    """The issue's case: a PC-sampling folder whose code.json was `[[[[...` thousands deep
    (RecursionError before). 100,000 deep: Python 3.13's json reads 9,999 levels (3.11's 999)."""
    d = tmp_path / "pcs"
    shutil.copytree(PCS, d)
    (d / "code.json").write_text("[" * 100_000 + "]" * 100_000)
    r = cli("hotspots", d, "--by", "line", "--format", "csv", "--top", "0")
    one_line_error(r, str(d / "code.json"), "nested more than 100 levels deep at line 1 column 101")


@pytest.mark.parametrize(
    "text,needle",
    [
        ('{"code": [[1, 2, ' + "9" * 5000 + "]]}", "out of range"),  # more digits than Python converts
        ('{"code": [], "x": 123456789012345678901234567890}', "number '123456789012345678901234567890'"),
        ('{"code": [],\n  "x": NaN}', "NaN at line 2 column 8"),
        ('{"code": [], "x": -Infinity}', "-Infinity at line 1 column 19"),
        ('{"code": [], "x": 1e999}', "number '1e999' at line 1 column 19"),
        ('{"code": [], "code": null}', "duplicate key 'code' at line 1 column 14"),
        ('{"a": {"b": 1,\n"b": 2}}', "duplicate key 'b' at line 2 column 1"),
    ],
)
def test_json_that_attdec_cannot_take_names_file_and_position(tmp_path, text, needle):
    d = tmp_path / "pcs"
    shutil.copytree(PCS, d)
    (d / "code.json").write_text(text)
    one_line_error(cli("hotspots", d, "--format", "csv"), str(d / "code.json"), needle)


def test_parse_json_is_plain_json_loads_on_good_input():
    doc = {"a": [1, -2, 3.5, (1 << 64) - 1, -(1 << 63)], "b": {"c": None, "d": 'x"y'}, "e": [[[]]]}
    assert parse_json(json.dumps(doc), "f") == doc


def test_checked_int_says_what_and_where():
    assert checked_int(5, "wave.simd", "w.json", 0, 7) == 5
    for bad, words in ((True, "bool True"), (1.5, "float 1.5"), (None, "null"), ([1], "a list"), (9, "outside")):
        with pytest.raises(FormatError) as e:
            checked_int(bad, "wave.simd", "w.json", 0, 7)
        assert str(e.value).startswith("w.json: wave.simd is") and words in str(e.value), str(e.value)


# ---- resource bounds: a header promising 2^40 records allocates nothing ----------------------------------
def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_pmc_schedule_promising_2_40_counters():
    from attdec.sources.pmc import unpack_pmc

    before = _peak_mb()
    sched = [{"name": "SQ_WAVES", "block": "SQ", "xcc": 1 << 20, "inst": 1, "se": 1 << 20, "sa": 1, "wgp": 1}]
    sched[0] |= {"off": 0, "size": 8 << 40}
    with pytest.raises(FormatError, match="instances need"):
        unpack_pmc(bytes(64), sched, "p.pmc")
    assert _peak_mb() - before < 50


@pytest.mark.parametrize("sched", [7, "SQ_WAVES", None])
def test_a_pmc_schedule_that_is_no_list_is_one_error(sched):
    from attdec.sources.pmc import unpack_pmc

    with pytest.raises(FormatError, match="PMC schedule is"):
        unpack_pmc(bytes(64), sched, "p.pmc")


def test_a_pickle_frame_promising_2_63_bytes(tmp_path):
    p = tmp_path / "profile.pkl"
    p.write_bytes(b"\x80\x04\x95" + struct.pack("<Q", (1 << 63) - 1) + b"]q\x00.")
    one_line_error(cli("hotspots", p), str(p), "not a readable pickle")


def test_a_zstd_chunk_promising_a_terabyte(tmp_path):
    """An RDF chunk whose index (and zstd frame) claim 2^40 bytes: refused by the cap, not allocated."""
    pytest.importorskip("zstandard")
    from attdec.sources.rgp.container import _zstd

    frame = struct.pack("<I", 0xFD2FB528) + bytes([0xC0, 0x00]) + struct.pack("<Q", 1 << 40) + bytes([1, 0, 0])
    before = _peak_mb()
    with pytest.raises(InputError, match="ATTDEC_MAX_MEMBER_MB"):
        _zstd(frame, 1 << 40, "t.rgp: SqttData 0")
    assert _peak_mb() - before < 50


@pytest.mark.parametrize(
    "size,shown",
    [
        ((11 << 20) // 10, "1.1 MiB, more than the 1 MiB"),
        ((1 << 20) + 1, "1,048,577 bytes, more than the 1,048,576 bytes"),
    ],
)
def test_a_size_just_over_its_cap_reads_differently_from_the_cap(monkeypatch, size, shown):
    """The refusal never prints the same figure for the size and its cap."""
    from attdec.sources.limits import MEMBER

    monkeypatch.setenv("ATTDEC_MAX_MEMBER_MB", "1")
    with pytest.raises(InputError, match=shown):
        MEMBER.check(size, "member", "a.tar")


# ---- archives: caps on what headers claim, links and escapes named ----------------------------------------
def _folder_tar(extra: bytes = b"") -> bytes:
    """A tar stream of TINY's folder followed by `extra` (more headers and data) and the end blocks."""
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        tar.add(TINY, arcname=TINY.name)
        end = tar.offset
    return buf.getvalue()[:end] + extra + bytes(1024)


def _member_header(name: str, size: int) -> bytes:
    import tarfile

    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(tarfile.GNU_FORMAT)


def _bomb(path: Path) -> Path:
    """The issue's archive bomb, cheaply: a real dispatch folder, then a member whose header claims 3 GiB (the
    zeros behind it stop after 1 MiB: no reader may get that far, a 3 GiB one is the same on its header)."""
    import lzma

    path.write_bytes(lzma.compress(_folder_tar(_member_header("zeros.bin", 3 << 30) + bytes(1 << 20)), preset=0))
    return path


def test_an_archive_bomb_is_one_line_in_bounded_time_and_memory(tmp_path):
    """466 KB of .tar.xz holding 3 GiB of zeros: refused on the member's header (< 2 s, < 200 MB RSS)."""
    bomb = _bomb(tmp_path / "bomb.tar.xz")
    code = (  # VmHWM: this process's peak (ru_maxrss would keep the forking pytest's across exec)
        "import re, sys, time\n"
        "from attdec.cli import run\n"
        "t = time.perf_counter()\n"
        "status = run(sys.argv[1:])\n"
        "hwm = re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "print(f'{time.perf_counter() - t:.3f} {hwm}')\n"
        "sys.exit(status)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("ATTDEC_MAX_MEMBER_MB", None)
    r = subprocess.run(
        [sys.executable, "-c", code, "hotspots", str(bomb)], capture_output=True, text=True, env=env, timeout=120
    )
    one_line_error(r, str(bomb), "archive member 'zeros.bin'", "3,072 MiB", "ATTDEC_MAX_MEMBER_MB")
    secs, rss_kb = r.stdout.split()
    assert float(secs) < 2 and int(rss_kb) < 200 * 1024, r.stdout


def test_archive_caps_are_overridable_and_count_what_is_skipped(tmp_path, monkeypatch):
    """A real (streamed) member of zeros that no dispatch needs: over a lowered cap it is refused by name;
    under the cap it is skipped and the dispatch read. The member count and total caps work the same way."""
    import lzma

    arc = tmp_path / "z.tar.xz"
    arc.write_bytes(lzma.compress(_folder_tar(_member_header("pad/zeros.bin", 4 << 20) + bytes(4 << 20)), preset=0))
    monkeypatch.setenv("ATTDEC_MAX_MEMBER_MB", "1")
    one_line_error(cli("hotspots", arc), str(arc), "'pad/zeros.bin': 4 MiB", "ATTDEC_MAX_MEMBER_MB")
    monkeypatch.setenv("ATTDEC_MAX_MEMBER_MB", "8")
    r = cli("waves", "--format", "csv", arc)
    assert r.returncode == 0 and r.stdout.count("\n") == 4, r.stderr
    monkeypatch.setenv("ATTDEC_MAX_ARCHIVE_MB", "2")
    one_line_error(cli("hotspots", arc), str(arc), "members up to 'pad/zeros.bin'", "ATTDEC_MAX_ARCHIVE_MB")
    monkeypatch.delenv("ATTDEC_MAX_ARCHIVE_MB")
    monkeypatch.setenv("ATTDEC_MAX_MEMBERS", "3")
    one_line_error(cli("hotspots", arc), str(arc), "more than the 3 attdec reads of archive members")
    monkeypatch.setenv("ATTDEC_MAX_MEMBERS", "many")
    one_line_error(cli("hotspots", arc), "ATTDEC_MAX_MEMBERS='many' is not a whole number")


def test_links_devices_and_escapes_in_an_archive_are_named_and_not_read(tmp_path):
    import tarfile

    arc = tmp_path / "h.tar.gz"
    hostile = {
        "../escape/code.json": (tarfile.REGTYPE, "outside the archive"),
        "/abs/filenames.json": (tarfile.REGTYPE, "outside the archive"),
        f"{TINY.name}/se9_sm0_sl0_wv0.json": (tarfile.SYMTYPE, "a symbolic link"),
        f"{TINY.name}/hard.json": (tarfile.LNKTYPE, "a hard link"),
        "zero": (tarfile.CHRTYPE, "a character device"),
    }
    with tarfile.open(arc, "w:gz") as tar:
        tar.add(TINY, arcname=TINY.name)
        for name, (kind, _) in hostile.items():
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = "/etc/passwd" if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE) else ""
            data = b"{}" if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    r = cli("hotspots", arc)
    assert r.returncode == 0, r.stderr
    for name, (_, why) in hostile.items():
        assert f"note: archive member {name!r} ({why}) not read" in r.stdout, r.stdout
    assert "waves 3" in r.stdout  # the symlink named like a wave file is not one
    assert not (tmp_path.parent / "escape").exists() and not Path("/abs").exists()


def test_line_ids_of_2_40_are_refused_not_allocated(tmp_path):
    """Analyses size per-line tables by the largest line id (found by the long fuzz run: 4 TiB arrays)."""
    d = tmp_path / "d"
    shutil.copytree(TINY, d)
    code = json.loads((d / "code.json").read_text())
    code["code"][1][2] = 1 << 40
    (d / "code.json").write_text(json.dumps(code))
    one_line_error(cli("waits", d), "code.json", "code[1][2]: line id 1,099,511,627,776 is beyond a listing")
    shutil.copy(TINY / "code.json", d / "code.json")
    w = json.loads((d / "se0_sm0_sl0_wv0.json").read_text())
    w["wave"]["instructions"][0][4] = 1 << 40
    (d / "se0_sm0_sl0_wv0.json").write_text(json.dumps(w))
    r = cli("waves", "--format", "csv", d)  # that wave file is left out, named; the others are read
    assert r.returncode == 0 and "wave.instructions[0][4]: line id 1,099,511,627,776" in r.stderr, r.stderr
    assert r.stdout.count("\nd,") == 2


@pytest.mark.parametrize(
    "text",
    [
        "s_waitcnt " + "9" * 5000,
        "s_waitcnt lgkmcnt(" + "9" * 5000 + ")",
        "s_waitcnt_depctr depctr_va_vdst(" + "9" * 5000 + ")",
        "v_mov_b32 v" + "9" * 5000 + ", s[0:" + "9" * 5000 + "]",
    ],
    ids=["immediate", "named", "depctr", "registers"],
)
def test_instruction_text_with_thousands_of_digits(tmp_path, text):
    """Python refuses to parse integers of over 4,300 digits (ValueError; found by the long fuzz run in a
    code.json's instruction text): such a wait names no counter, it is not a crash."""
    d = tmp_path / "d"
    shutil.copytree(TINY, d)
    code = json.loads((d / "code.json").read_text())
    code["code"][2][0] = text
    (d / "code.json").write_text(json.dumps(code))
    for cmd in ("hotspots", "waits", "kernel"):
        r = cli(cmd, d)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("column,value,needle", [("instructions", 99, "category 99"), ("timeline", 99, "state 99")])
def test_unknown_categories_and_states_leave_the_wave_out(tmp_path, column, value, needle):
    """They index name tables (`timeline` on a fuzzed archive: IndexError): refused where they enter."""
    d = tmp_path / "d"
    shutil.copytree(TINY, d)
    w = json.loads((d / "se0_sm0_sl0_wv0.json").read_text())
    w["wave"][column][0][0 if column == "timeline" else 1] = value
    (d / "se0_sm0_sl0_wv0.json").write_text(json.dumps(w))
    r = cli("timeline", "-o", tmp_path / "t.json", d)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    r = cli("waves", "--format", "csv", d)
    assert r.returncode == 0 and needle in r.stderr and r.stdout.count("\nd,") == 2, r.stderr


# ---- nothing is lost: one failing input or dispatch ------------------------------------------------------
TINY = FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3"


def test_one_bad_dispatch_does_not_lose_the_others(tmp_path):
    for name in ("a", "b", "c"):
        shutil.copytree(TINY, tmp_path / name)
    (tmp_path / "b" / "code.json").write_text('{"code": [')
    r = cli("hotspots", "--format", "json", tmp_path)
    assert r.returncode == 1, r.stderr
    bad = tmp_path / "b" / "code.json"
    assert _lines(r) == [f"attdec: error: {bad}: malformed JSON: Expecting value at line 1 column 11"]
    assert [h["dispatch"] for h in json.loads(r.stdout)["dispatches"]] == ["a", "c"]


def test_one_bad_raw_dispatch_does_not_lose_the_others(tmp_path):
    good, bad = tmp_path / "good", tmp_path / "bad"
    shutil.copytree(DEMO_RAW, good)
    shutil.copytree(DEMO_RAW, bad)
    (bad / "kern.co").write_bytes(b"\x7fELF" + bytes(60))
    r = cli("waves", "--format", "csv", good, bad)
    assert r.returncode == 1 and len(_lines(r)) == 1 and str(bad / "kern.co") in r.stderr, r.stderr
    assert r.stdout.count("\n") > 5  # the good capture's waves
    r = cli("decode", "--format", "json", good, bad)
    assert r.returncode == 1 and len(_lines(r)) == 1 and json.loads(r.stdout), r.stderr


def test_a_single_bad_input_is_still_exactly_one_line(tmp_path):
    shutil.copytree(TINY, tmp_path / "b")
    (tmp_path / "b" / "code.json").write_text("[")
    one_line_error(cli("hotspots", tmp_path / "b"), "code.json", "malformed JSON")
    r = cli("hotspots", tmp_path / "b", tmp_path / "nothing")  # two bad inputs: two lines
    assert r.returncode == 1 and sorted(_lines(r)) == [
        f"attdec: error: {tmp_path / 'b' / 'code.json'}: malformed JSON: Expecting value at line 1 column 2",
        f"attdec: error: {tmp_path / 'nothing'}: no such file or folder",
    ]


# ---- part 6: unreadable files, odd paths, missing wave files ------------------------------------------------
def test_a_device_or_pipe_is_refused_not_read(tmp_path):
    fifo = tmp_path / "k_se0.att"
    os.mkfifo(fifo)
    t0 = time.time()
    one_line_error(cli("decode", "--code", f"{DEMO_RAW / 'kern.co'}@{BASE}", fifo), str(fifo), "not a regular file")
    one_line_error(cli("disasm", "/dev/zero"), "/dev/zero", "not a regular file")
    assert time.time() - t0 < 10


@pytest.mark.parametrize("name", ["with space", "new\nline", "-dash", "--double"])
def test_odd_folder_names(tmp_path, name):
    d = tmp_path / name / TINY.name
    shutil.copytree(TINY, d)
    r = cli("waves", "--format", "csv", "--", d)
    assert r.returncode == 0 and r.stdout.count("\n") == 4, r.stderr
    bad = tmp_path / name / "x"
    shutil.copytree(TINY, bad)
    (bad / "code.json").write_text("{")
    r = cli("waves", "--format", "csv", "--", bad)
    one_line_error(r, "malformed JSON")
    assert "\n" not in name or "new\\x0aline" in r.stderr  # a newline in a path stays on its one line


def test_missing_wave_files_are_named_and_the_rest_read(tmp_path):
    d = tmp_path / "d"
    shutil.copytree(TINY, d)
    (d / "se1_sm2_sl1_wv1.json").unlink()
    (d / "se0_sm0_sl0_wv0.json").unlink()
    r = cli("waves", "--format", "json", d)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["waves"]) == 1
    r = cli("hotspots", d)
    assert "2 wave files listed in filenames.json are missing" in r.stdout


def test_a_bad_wave_file_is_left_out_with_a_line_naming_it(tmp_path):
    """Part 2: one malformed wave file and one unreadable one; the third wave is still reported."""
    d = tmp_path / "d"
    shutil.copytree(TINY, d)
    bad = d / "se0_sm0_sl0_wv0.json"
    bad.write_text(bad.read_text()[:50])
    gone = d / "se1_sm2_sl1_wv0.json"
    gone.unlink()
    gone.mkdir()  # listed, present, and not a file: reading it fails
    r = cli("waves", "--format", "csv", d)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\nd,") == 1  # the one good wave
    assert f"attdec: warning: {d}: wave file left out: {bad}: malformed JSON" in r.stderr, r.stderr
    assert f"wave file left out: {gone}: " in r.stderr and len(_lines(r)) == 2, r.stderr
    r = cli("hotspots", "--se", "1", d)  # a wave filter reads the wave files; the report notes the two
    assert r.returncode == 0 and r.stdout.count("note: wave file left out") == 2, r.stdout


def _as_nobody(args, tmp_path) -> subprocess.CompletedProcess:
    """`attdec ARGS` as a user that cannot read root's 0o000 files (root reads everything)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path))

    def drop():
        if os.geteuid() == 0:
            os.setgid(65534)
            os.setuid(65534)

    return subprocess.run(
        [sys.executable, "-m", "attdec", *map(str, args)], capture_output=True, text=True, env=env, preexec_fn=drop
    )


def test_unreadable_files_and_folders(tmp_path):
    if os.geteuid() == 0 and not _nobody_can_run(tmp_path):
        pytest.skip("cannot drop to an unprivileged user here")
    tmp_path.chmod(0o755)
    for name in ("a", "b", "c"):
        shutil.copytree(TINY, tmp_path / name)
    for p in [tmp_path, *tmp_path.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    (tmp_path / "b" / "code.json").chmod(0)  # an unreadable file in one dispatch folder
    (tmp_path / "c").chmod(0)  # an unreadable folder
    r = _as_nobody(["waves", "--format", "csv", tmp_path], tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 1, r.stderr
    assert f"attdec: error: {tmp_path / 'b' / 'code.json'}: cannot read: Permission denied" in r.stderr
    assert f"attdec: warning: {tmp_path / 'c'}: cannot read: Permission denied: skipped" in r.stderr
    assert r.stdout.startswith("dispatch,") and r.stdout.count("\na,") == 3  # a's waves, all of them
    r = _as_nobody(["waves", tmp_path / "b" / "code.json"], tmp_path)
    assert r.returncode == 1 and r.stderr.strip() == f"attdec: error: {tmp_path / 'b' / 'code.json'}: permission denied"


def test_unreadable_files_and_folders_simulated(tmp_path, monkeypatch):
    """The same as root, who reads everything: the operating system's refusals simulated where attdec meets
    them (opening a file, listing a folder, os.access)."""
    for name in ("a", "b", "c", "d"):
        shutil.copytree(TINY, tmp_path / name)
    deny_file, deny_dir, deny_named = tmp_path / "b" / "code.json", tmp_path / "c", tmp_path / "d"
    real_open, real_scandir, real_access, real_stat = io.open, os.scandir, os.access, os.stat

    def refuse(path):
        raise PermissionError(13, "Permission denied", str(path))

    def fake_open(p, *a, **k):
        return refuse(p) if isinstance(p, (str, Path)) and Path(p) == deny_file else real_open(p, *a, **k)

    def fake_scandir(p="."):
        return refuse(p) if Path(p) == deny_dir else real_scandir(p)

    def fake_stat(p, *a, **k):
        return refuse(p) if Path(p).parent == deny_dir else real_stat(p, *a, **k)

    for module in (io, builtins):
        monkeypatch.setattr(module, "open", fake_open)
    monkeypatch.setattr(os, "scandir", fake_scandir)
    monkeypatch.setattr(os, "stat", fake_stat)
    # Python 3.10's Path methods call the io.open, os.stat and os.scandir it saw at import, through this object
    accessor = getattr(pathlib, "_normal_accessor", None)
    for name, fake in (("open", fake_open), ("scandir", fake_scandir), ("stat", fake_stat)) if accessor else ():
        monkeypatch.setattr(accessor, name, fake, raising=False)
    monkeypatch.setattr(
        os, "access", lambda p, m, **k: False if Path(p) in (deny_file, deny_named) else real_access(p, m, **k)
    )
    r = cli("waves", "--format", "csv", tmp_path)
    assert "Traceback" not in r.stderr and r.returncode == 1, r.stderr
    assert f"attdec: error: {deny_file}: cannot read: Permission denied" in r.stderr, r.stderr
    assert f"attdec: warning: {deny_dir}: cannot read: Permission denied: skipped" in r.stderr, r.stderr
    assert r.stdout.count("\na,") == 3 and r.stdout.count("\nd,") == 3, r.stdout
    r = cli("waves", "--format", "csv", tmp_path / "a", deny_named)
    assert r.returncode == 1 and _lines(r) == [f"attdec: error: {deny_named}: permission denied"], r.stderr
    assert r.stdout.count("\na,") == 3


def _nobody_can_run(tmp_path) -> bool:
    try:
        return _as_nobody(["--version"], tmp_path).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


# ---- zip, .tar.bz2 and the other archive suffixes: read like .tar.xz, with the same caps ------------------
def _zip(path: Path, members: dict[str, bytes | tuple[bytes, int]], compression=None) -> Path:
    """A zip of TINY's folder plus `members` (bytes, or (bytes, Unix mode) for links and devices)."""
    import zipfile

    compression = zipfile.ZIP_DEFLATED if compression is None else compression
    with zipfile.ZipFile(path, "w", compression) as z:
        for f in sorted(TINY.iterdir()):
            if f"{TINY.name}/{f.name}" not in members:
                z.write(f, f"{TINY.name}/{f.name}")
        for name, value in members.items():
            data, mode = value if isinstance(value, tuple) else (value, 0o100644)
            info = zipfile.ZipInfo(name)
            info.create_system, info.external_attr = 3, mode << 16
            info.compress_type = compression
            z.writestr(info, data)
    return path


@pytest.mark.parametrize("name", ["a.zip", "a.tar.bz2", "a.tbz2", "a.tar.gz", "a.tgz", "a.tar", "A.ZIP"])
def test_zip_and_tar_archives_read_like_the_folder(tmp_path, name):
    import tarfile

    arc = tmp_path / name
    if name.lower().endswith(".zip"):
        _zip(arc, {})
    else:
        mode = {"bz2": "w:bz2", "tbz2": "w:bz2", "gz": "w:gz", "tgz": "w:gz"}.get(name.rsplit(".", 1)[1], "w")
        with tarfile.open(arc, mode) as tar:
            tar.add(TINY, arcname=TINY.name)
    for command in (["hotspots", "--format", "json"], ["waves", "--format", "csv"]):  # waves: a second walk
        got, want = cli(*command, arc), cli(*command, TINY)
        assert got.returncode == 0 and got.stdout == want.stdout and got.stdout, got.stderr


def test_a_zip_bomb_by_ratio_is_one_line_before_it_is_inflated(tmp_path, monkeypatch):
    import tracemalloc

    arc = _zip(tmp_path / "bomb.zip", {f"{TINY.name}/code.json": b" " * (64 << 20)})
    assert arc.stat().st_size < 200_000
    tracemalloc.start()
    r = cli("hotspots", arc)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    one_line_error(r, str(arc), f"'{TINY.name}/code.json' expands", "ATTDEC_MAX_RATIO")
    assert peak < 32 << 20  # refused on the central directory's sizes, not after inflating 64 MiB
    monkeypatch.setenv("ATTDEC_MAX_RATIO", "100000")  # raised: read, and found not to be JSON
    r = cli("hotspots", arc)
    assert r.returncode == 1 and "code.json" in r.stderr and "Traceback" not in r.stderr


def test_zip_caps_on_size_and_member_count(tmp_path, monkeypatch):
    import zipfile

    arc = _zip(tmp_path / "z.zip", {"pad/zeros.bin": bytes(3 << 20)}, zipfile.ZIP_STORED)
    monkeypatch.setenv("ATTDEC_MAX_MEMBER_MB", "1")  # a member no dispatch needs counts too
    one_line_error(cli("hotspots", arc), str(arc), "'pad/zeros.bin': 3 MiB", "ATTDEC_MAX_MEMBER_MB")
    monkeypatch.delenv("ATTDEC_MAX_MEMBER_MB")
    monkeypatch.setenv("ATTDEC_MAX_ARCHIVE_MB", "2")
    one_line_error(cli("hotspots", arc), str(arc), "members up to 'pad/zeros.bin'", "ATTDEC_MAX_ARCHIVE_MB")
    monkeypatch.delenv("ATTDEC_MAX_ARCHIVE_MB")
    monkeypatch.setenv("ATTDEC_MAX_MEMBERS", "3")  # refused on the end record's count, before the directory
    one_line_error(cli("hotspots", arc), str(arc), "more than the 3 attdec reads of archive members")
    monkeypatch.delenv("ATTDEC_MAX_MEMBERS")
    assert cli("hotspots", arc).returncode == 0


def test_links_and_escapes_in_a_zip_are_named_and_not_read(tmp_path):
    hostile = {
        "../escape/code.json": (b"{}", "outside the archive"),
        "/abs/filenames.json": (b"{}", "outside the archive"),
        "..\\win\\code.json": (b"{}", "outside the archive"),
        f"{TINY.name}/se9_sm0_sl0_wv0.json": ((b"/etc/passwd", 0o120777), "a symbolic link"),
        "fifo": ((b"", 0o010644), "a fifo"),
    }
    arc = _zip(tmp_path / "h.zip", {name: value for name, (value, _) in hostile.items()})
    r = cli("hotspots", arc)
    assert r.returncode == 0, r.stderr
    for name, (_, why) in hostile.items():
        assert f"note: archive member {name!r} ({why}) not read" in r.stdout, r.stdout
    assert "waves 3" in r.stdout
    assert not (tmp_path.parent / "escape").exists() and not Path("/abs").exists()


def test_a_damaged_zip_is_one_line(tmp_path):
    import zipfile

    arc = _zip(tmp_path / "d.zip", {}, zipfile.ZIP_STORED)
    data = arc.read_bytes()
    (tmp_path / "cut.zip").write_bytes(data[: len(data) // 2])
    one_line_error(cli("hotspots", tmp_path / "cut.zip"), "cut.zip", "unreadable archive")
    at = data.find(b'"code"')  # a byte of a stored file's data changed: its CRC no longer matches
    assert at > 0
    flipped = bytearray(data)
    flipped[at + 2] ^= 0x20
    (tmp_path / "crc.zip").write_bytes(bytes(flipped))
    r = cli("hotspots", tmp_path / "crc.zip")
    assert r.returncode == 1 and "crc.zip" in r.stderr and "Traceback" not in r.stderr


# ---- error lines carry a position: the file and, in JSON, the path to the value --------------------------
@pytest.mark.parametrize(
    ("damage", "position"),
    [
        (lambda c: c["dispatches"][0]["blobs"].__setitem__(1, "../E_3_1_se2.att"), "dispatches[0].blobs[1]"),
        (lambda c: c["dispatches"][0].__setitem__("kernel", "nope"), "dispatches[0].kernel"),
        (lambda c: c["kernels"][0].pop("base"), "kernels[0].base is missing"),
        (lambda c: c["kernels"][0].__setitem__("base", "0x10"), "kernels[0].base"),
        (lambda c: c["blobs"][0].__setitem__("se", None), "blobs[0].se"),
        (lambda c: c["blobs"][0].pop("file"), "blobs[0].file is missing"),
        (lambda c: c["dispatches"].__setitem__(0, [1]), "dispatches[0] is not an object"),
        (lambda c: c["dispatches"][0].__setitem__("exec_tag", [1]), "dispatches[0].exec_tag"),
        (lambda c: c.__setitem__("pmc", 7), "pmc is int"),
        (lambda c: c["pmc"][0].pop("file"), "pmc[0].file is missing"),
        (lambda c: c["kernels"][0].__setitem__("code_object", "a\0b"), "kernels[0].code_object"),
        (lambda c: c.pop("dispatches"), "dispatches is missing"),
    ],
)
@pytest.mark.parametrize(
    "src",
    [pytest.param(SYNTHETIC_MORE, id="synthetic-with-pmc"), *captures("gfx1100/plus_run0", synthetic=())],
)
def test_a_damaged_capture_json_names_the_json_path(tmp_path, damage, position, src):
    if position.startswith("pmc[0]") and "pmc" not in json.loads((src / "capture.json").read_text()):
        pytest.skip("this capture lists no PMC files")
    cap = tmp_path / "cap"
    shutil.copytree(src, cap)
    cap.chmod(0o755)
    (cap / "capture.json").chmod(0o644)
    doc = json.loads((cap / "capture.json").read_text())
    damage(doc)
    (cap / "capture.json").write_text(json.dumps(doc))
    r = cli("hotspots", cap)
    one_line_error(r, str(cap / "capture.json"), position)
    assert "Error" not in r.stderr  # no wrapped Python exception (KeyError: ...)


def test_a_tinygrad_profile_error_names_the_pickle_and_where_in_it(tmp_path):
    """A program's damaged code object names the profile it is in (not only the program's name), and a
    damaged pickle the byte it was read up to."""
    cap = fuzz._capture_parts(FIXTURES.parent.parent / "attdec" / "data" / "demo_raw")
    co = cap[2].read_bytes()
    events = [
        ("ProfileDeviceEvent", {"device": "AMD", "props": {"gfx_target_version": 90402}}),
        ("ProfileProgramEvent", {"device": "AMD", "name": "k", "lib": co[:64] + bytes(64), "base": 0, "tag": 1}),
        ("ProfileSQTTEvent", {"device": "AMD", "kern": 1, "se": 0, "blob": bytes(64), "itrace": True, "exec_tag": 1}),
    ]
    p = tmp_path / "profile.pkl"
    p.write_bytes(fuzz._tinygrad_pickle(events))
    one_line_error(cli("hotspots", p), f"{p}: k")
    data = fuzz._tinygrad_pickle(events[:1])
    p.write_bytes(data[: len(data) // 2])
    one_line_error(cli("hotspots", p), str(p), "not a readable pickle (read up to byte")
