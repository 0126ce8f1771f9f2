"""attdec.isa.elf reads code objects as pyelftools does (sections, symbols and notes of every fixture and
capture code object); damaged headers are one FormatError."""

from __future__ import annotations

import io

import pytest

from attdec.errors import FormatError
from attdec.isa.elf import SHT_NOTE, SYMBOL_TABLES, Elf
from tests.conftest import FIXTURES, real_data, shared_path

elffile = pytest.importorskip("elftools.elf.elffile", reason="pyelftools (a dependency, for DWARF) is the reference")
enums = pytest.importorskip("elftools.elf.enums")


def _code(enum: dict, v) -> int:
    """pyelftools gives known values as names."""
    return enum.get(v, v)


def _symbol(s) -> tuple:
    info = _code(enums.ENUM_ST_INFO_TYPE, s["st_info"]["type"])
    return (s.name, s["st_value"], s["st_size"], info, _code(enums.ENUM_ST_SHNDX, s["st_shndx"]))


def _note(n) -> tuple:
    return (n["n_name"], _code(enums.ENUM_NOTE_N_TYPE, n["n_type"]), n["n_descdata"])


@pytest.mark.parametrize("where", ["fixtures", *(["captures"] if real_data("captures") else [])])
def test_sections_symbols_and_notes_match_pyelftools(where):
    found = (FIXTURES / "isa").glob("*.co") if where == "fixtures" else shared_path("captures").glob("*/*/*.co")
    paths = [p for p in sorted(found) if p.read_bytes()[:4] == b"\x7fELF" and p.read_bytes()[18] == 224]
    assert len(paths) >= 2
    for path in paths:
        data = path.read_bytes()
        ours, ref = Elf(data, str(path)), elffile.ELFFile(io.BytesIO(data))
        want = [(s.name, s["sh_addr"], s["sh_offset"], s["sh_size"]) for s in ref.iter_sections()]
        assert [(s.name, s.addr, s.offset, s.size) for s in ours.sections] == want, path
        assert ours.contents(ours.section(".text")) == ref.get_section_by_name(".text").data(), path
        for i, sec in enumerate(ours.sections):
            if sec.type in SYMBOL_TABLES:
                got = [(s.name, s.value, s.size, s.type, s.shndx) for s in ours.symbols(sec)]
                assert got == [_symbol(s) for s in ref.get_section(i).iter_symbols()], (path, sec.name)
            if sec.type == SHT_NOTE:
                got = [(n.name, n.type, n.desc) for n in ours.notes(sec)]
                assert got == [_note(n) for n in ref.get_section(i).iter_notes()], (path, sec.name)


@pytest.mark.parametrize(
    "patch",
    [
        {0x3A: b"\x08\x00"},  # e_shentsize 8
        {0x3C: b"\xff\x00"},  # e_shnum 255: headers past the end
        {0x3E: b"\xfe\x00"},  # e_shstrndx past the headers
        {5: b"\x02"},  # big-endian
    ],
)
def test_damaged_headers_are_one_format_error(patch):
    data = bytearray((FIXTURES / "isa" / "dwarf5_gfx1100.co").read_bytes())
    for at, b in patch.items():
        data[at : at + len(b)] = b
    with pytest.raises(FormatError, match="bad ELF"):
        Elf(bytes(data), "k.co")
