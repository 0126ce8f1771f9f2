"""attdec.isa.dwarf_tables reads DWARF line tables and inline ranges as pyelftools does (pyelftools, a
dependency, is the reference): the same rows and ranges, so the same LineIndex.source_of at every .text
address, for the real code objects under ../shared and the LLVM-built DWARF 4 and 5 fixtures; damaged
copies of those either read the same or are declined (Unsupported) and read with pyelftools."""

from __future__ import annotations

import bisect
import random
import subprocess
import sys

import pytest

from attdec.isa.codeobj import load_code_object
from attdec.isa.dwarf import LineIndex, _tables_by_pyelftools
from attdec.isa.dwarf_tables import Unsupported, read_tables
from attdec.isa.elf import Elf
from tests.conftest import FIXTURES, ROOT, shared_path

pytest.importorskip("elftools", reason="pyelftools (a dependency, for the DWARF fallback) is the reference")

DWARF_FIXTURES = [FIXTURES / "isa" / "dwarf5_gfx1100.co", FIXTURES / "isa" / "dwarf4_gfx942.co"]


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
    assert rows and any(depth >= 2 for _, _, depth, _ in inlined)
    addresses = text_addresses(data)
    assert same_sources(data, addresses) == []
    assert sum(" -> " in LineIndex.build(data).source_of(a) for a in addresses) > 3


def test_real_code_objects_read_as_pyelftools_reads_them():
    paths = sorted(shared_path("captures").rglob("*.co"))
    assert len(paths) > 50
    for path in paths:
        data = path.read_bytes()
        co = load_code_object(data, str(path))
        assert same_sources(co._elf_bytes, range(co.text_vaddr, co.text_end, 4)) == [], path


@pytest.mark.parametrize("path", DWARF_FIXTURES, ids=lambda p: p.name)
def test_damaged_debug_sections_read_the_same_or_fall_back(path):
    data = path.read_bytes()
    elf = Elf(data, "k.co")
    cells = [i for s in elf.sections if s.name.startswith(".debug_") for i in range(s.offset, s.offset + s.size)]
    addresses = text_addresses(data)
    rng = random.Random(7)
    declined = read = 0
    for _ in range(60):  # tools/dwarf_check.py --mutate runs thousands
        b = bytearray(data)
        for at in rng.sample(cells, rng.randint(1, 3)):
            b[at] = rng.choice([0, 0xFF, b[at] ^ (1 << rng.randrange(8)), rng.randrange(256)])
        try:
            read_tables(bytes(b))
            read += 1
        except Unsupported:
            declined += 1
        assert same_sources(bytes(b), addresses) == [], bytes(b).hex()
    assert read > 10 and declined > 10  # both paths taken


def test_a_source_line_does_not_import_pyelftools():
    code = (
        "import sys; from attdec.isa import load_code_object; "
        f"co = load_code_object(open({str(DWARF_FIXTURES[0])!r}, 'rb').read()); "
        "assert co.source_of(co.text_vaddr); print('elftools' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
