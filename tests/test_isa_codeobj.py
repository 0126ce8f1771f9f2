"""Code objects: DWARF lines and inline chains (LLVM-built fixtures), minimal containers, bad input."""

from __future__ import annotations

import json

import pytest

from attdec.errors import FormatError
from attdec.isa import disassemble, load_code_object
from tests.conftest import FIXTURES

ISA = FIXTURES / "isa"


@pytest.mark.parametrize("name", ["dwarf5_gfx1100.co", "dwarf4_gfx942.co"])
def test_source_lines_and_inline_chains_match_llvm_symbolizer(name):
    expected = json.loads((ISA / "dwarf_expected.json").read_text())[name]
    co = load_code_object((ISA / name).read_bytes(), name)
    assert co.arch == expected["arch"]
    got = {hex(a): co.source_of(a) for a in (int(k, 16) for k in expected["sources"])}
    assert got == expected["sources"]
    assert any(v.count(" -> ") >= 3 for v in got.values())  # the doubly inlined helper
    assert all(
        v.split(" -> ")[0].endswith((":2", ":5", ":7", ":8", ":9", ":10", ":11", ":?")) for v in got.values() if v
    )
    assert "" in got.values()  # the s_code_end padding has no line


def test_elf_kernels_metadata_and_descriptor():
    co = load_code_object((ISA / "dwarf5_gfx1100.co").read_bytes(), "k.co")
    k = co.kernel("kern")
    assert k is not None and k.entry == co.text_vaddr
    r = co.resources(k)
    assert r.wave_size == 32 and r.vgpr and r.sgpr is not None and r.source == "metadata note + kernel descriptor"
    assert co.metadata["amdhsa.target"].endswith("gfx1100")
    assert disassemble(co.text, co.arch, co.text_vaddr)[0].address == k.entry


def test_minimal_container_with_zeroed_identity():
    real = (ISA / "dwarf5_gfx1100.co").read_bytes()
    co = load_code_object(real, "k.co")
    # a tinygrad-style container: zero e_ident/e_machine, section headers only
    import struct

    text = co.text[:64]
    shstr = b"\0.text\0.strtab\0"
    body = bytearray(0x100) + text + shstr
    shoff = len(body)
    body += bytes(64)  # null section
    body += struct.pack("<IIQQQQIIQQ", 1, 1, 6, 0x100, 0x100, len(text), 0, 0, 4, 0)
    body += struct.pack("<IIQQQQIIQQ", 7, 3, 0, 0, 0x100 + len(text), len(shstr), 0, 0, 1, 0)
    struct.pack_into("<Q", body, 0x28, shoff)
    struct.pack_into("<HHH", body, 0x3A, 0, 3, 2)
    mini = load_code_object(bytes(body), "custom_thing.co", arch="gfx1100")
    assert (mini.container, mini.arch, mini.text_vaddr, mini.text) == ("tinygrad-minimal", "gfx1100", 0x100, text)
    assert mini.kernels[0].name == "custom_thing" and mini.source_of(0x100) == ""


def test_garbage_is_a_format_error_not_a_traceback():
    with pytest.raises(FormatError) as e:
        load_code_object(b"\x00" * 80, "junk.co")
    assert "junk.co" in str(e.value)
    with pytest.raises(FormatError):
        load_code_object(b"\x7fELF" + b"\x02\x01\x01" + b"\x00" * 11 + b"\x03\x00\xe0\x00" + b"\xff" * 60, "bad.co")
