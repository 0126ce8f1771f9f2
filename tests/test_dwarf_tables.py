"""attdec.isa.dwarf_tables reads DWARF line tables and inline ranges as pyelftools does (pyelftools, a
dependency, is the reference): the same rows and ranges, so the same LineIndex.source_of at every .text
address, for the real code objects under ../shared, the LLVM-built DWARF 4 and 5 fixtures and the llc-built
objects of tools/makers/make_dwarf_ir_fixtures.py (range lists, two units, 64-bit DWARF); damaged copies either
read the same or are declined (Unsupported) and read with pyelftools."""

from __future__ import annotations

import bisect
import random
import subprocess
import sys

import pytest

from attdec.errors import FormatError
from attdec.isa.codeobj import load_code_object
from attdec.isa.dwarf import LineIndex, _tables_by_pyelftools
from attdec.isa.dwarf_tables import Unsupported, file_path, read_tables
from attdec.isa.elf import Elf
from tests.conftest import FIXTURES, ROOT, SHARED, real_data

pytest.importorskip("elftools", reason="pyelftools (a dependency, for the DWARF fallback) is the reference")

IR = FIXTURES / "isa" / "dwarf_ir"
DWARF_FIXTURES = [FIXTURES / "isa" / "dwarf5_gfx1100.co", FIXTURES / "isa" / "dwarf4_gfx942.co"]
DWARF_FIXTURES += [IR / "k4_O0.o", IR / "k4_O2.o", IR / "k5_O0.o", IR / "k5_O2.o"]


def reference_source_of(data: bytes):
    """source_of as attdec.isa.dwarf computed it before: pyelftools' tables, every inlined range scanned."""
    try:
        rows, inlined = _tables_by_pyelftools(data)
    except Exception:
        rows, inlined = [], []
    rows.sort()
    starts = [r[0] for r in rows]
    inlined.sort(key=lambda t: (t[2], t[0]))

    def source_of(vaddr: int) -> str:
        i = bisect.bisect_right(starts, vaddr) - 1
        loc = rows[i][2] if i >= 0 and vaddr < rows[i][1] else ""
        sites = [site for lo, hi, _, site in inlined if lo <= vaddr < hi and site]
        return " -> ".join(([loc] if loc else []) + sites[::-1])

    return source_of


def same_sources(data: bytes, addresses) -> list[int]:
    """The addresses where LineIndex and the pyelftools reference disagree."""
    new, old = LineIndex.build(data, "k.co"), reference_source_of(data)
    return [a for a in addresses if new.source_of(a) != old(a)]


def text_addresses(data: bytes) -> range:
    co = load_code_object(data, "k.co")
    return range(co.text_vaddr, co.text_end, 4)


@pytest.mark.parametrize("path", DWARF_FIXTURES, ids=lambda p: p.name)
def test_fixtures_are_read_without_pyelftools_and_as_it_reads_them(path):
    data = path.read_bytes()
    rows, inlined = read_tables(data)  # not declined: the fallback would hide a wrong reader
    assert (rows, inlined) == _tables_by_pyelftools(data)
    assert rows and any(depth >= 1 for _, _, depth, _ in inlined)
    addresses = text_addresses(data)
    assert same_sources(data, addresses) == []
    assert sum(" -> " in LineIndex.build(data).source_of(a) for a in addresses) > 3


@pytest.mark.parametrize("name", ["k4_O0.o", "k5_O0.o"])
def test_split_inlines_from_debug_ranges_and_rnglists(name):
    """-O0 splits the inlined helper in three: DWARF 4 lists its ranges in .debug_ranges, DWARF 5 in
    .debug_rnglists through DW_FORM_rnglistx; both read alike (file indices 1- and 0-based)."""
    _, inlined = read_tables((IR / name).read_bytes())
    pieces = [(lo, hi) for lo, hi, depth, site in inlined if (depth, site) == (0, "/src/k.c:6")]
    assert len(pieces) == 3 and pieces == sorted(pieces)
    assert read_tables((IR / "k4_O0.o").read_bytes()) == read_tables((IR / "k5_O0.o").read_bytes())


def test_64_bit_dwarf_is_declined_and_read_with_pyelftools():
    data = (IR / "k5_dwarf64.o").read_bytes()
    with pytest.raises(Unsupported, match="64-bit"):
        read_tables(data)
    addresses = text_addresses(data)
    assert same_sources(data, addresses) == []
    # (h.h's directory is "inc", relative to the compilation directory /src)
    assert LineIndex.build(data).source_of(0x6C) == "/src/inc/h.h:11 -> /src/inc/h.h:3 -> /src/k.c:6"


def code_objects_in(data: bytes):
    """The AMDGPU ELF code objects embedded in data (an .rgp capture, a pickle), each to the end of data."""
    at = data.find(b"\x7fELF\x02\x01")
    while at >= 0:
        if data[at + 18 : at + 20] == b"\xe0\x00":
            yield data[at:]
        at = data.find(b"\x7fELF\x02\x01", at + 1)


def _code_object_roots() -> list:
    """Folders of code objects, loose or inside .rgp files and profiles: the committed fixtures (the
    synthetic captures' and profiles' among them), then ../shared's where this machine has them."""
    roots = [pytest.param(FIXTURES, id="fixtures")]
    roots += [pytest.param(SHARED / f, id=f) for f in ("captures", "rgp", "tinygrad_profiles") if real_data(f)]
    return roots


@pytest.mark.parametrize("folder", _code_object_roots())
def test_real_code_objects_read_as_pyelftools_reads_them(folder):
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".co", ".rgp", ".pkl"))
    blobs = [b for p in files for b in ([p.read_bytes()] if p.suffix == ".co" else code_objects_in(p.read_bytes()))]
    assert len(blobs) >= 5
    for blob in blobs:
        try:
            co = load_code_object(blob, str(folder))
        except FormatError:
            continue
        assert same_sources(co._elf_bytes, range(co.text_vaddr, co.text_end, 4)) == []


@pytest.mark.parametrize("path", DWARF_FIXTURES, ids=lambda p: p.name)
def test_damaged_debug_sections_read_the_same_or_fall_back(path):
    data = path.read_bytes()
    elf = Elf(data, "k.co")
    cells = [i for s in elf.sections if s.name.startswith(".debug_") for i in range(s.offset, s.offset + s.size)]
    addresses = text_addresses(data)
    rng = random.Random(7)
    declined = read = 0
    for _ in range(30):  # tools/oracles/dwarf_check.py --mutate runs thousands
        b = bytearray(data)
        for at in rng.sample(cells, rng.randint(1, 3)):
            b[at] = rng.choice([0, 0xFF, b[at] ^ (1 << rng.randrange(8)), rng.randrange(256)])
        try:
            read_tables(bytes(b))
            read += 1
        except Unsupported:
            declined += 1
        assert same_sources(bytes(b), addresses) == [], bytes(b).hex()
    assert read > 5 and declined > 5  # both paths taken


def test_a_source_line_does_not_import_pyelftools():
    code = (
        "import sys; from attdec.isa import load_code_object; "
        f"co = load_code_object(open({str(DWARF_FIXTURES[0])!r}, 'rb').read()); "
        "assert co.source_of(co.text_vaddr); print('elftools' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(
    "table,index,expected",
    [
        # DWARF 4: files and directories count from 1; directory 0 is the compilation directory
        ((False, [("k.c", 0)], []), 1, "/build/k.c"),
        ((False, [("h.h", 1)], ["inc"]), 1, "/build/inc/h.h"),  # a relative include directory
        ((False, [("h.h", 1)], ["/usr/include"]), 1, "/usr/include/h.h"),
        ((False, [("/abs/o.c", 1)], ["inc"]), 1, "/abs/o.c"),
        ((False, [("k.c", 0)], []), 2, "?"),
        # DWARF 5: from 0; directory 0 is the compilation directory itself, the others relative to it
        ((True, [("k.c", 0)], ["/cu"]), 0, "/cu/k.c"),
        ((True, [("k.c", 0), ("h.h", 1)], ["/cu", "inc"]), 1, "/build/inc/h.h"),
        ((True, [("h.h", 1)], ["/cu", "/opt/rocm/include"]), 0, "/opt/rocm/include/h.h"),
    ],
)
def test_file_paths_join_relative_directories_to_the_compilation_directory(table, index, expected):
    assert file_path(table, index, "/build") == expected
    # without a compilation directory, a relative one stays relative
    if expected.startswith("/build/"):
        assert file_path(table, index, "") == expected[len("/build/") :]
