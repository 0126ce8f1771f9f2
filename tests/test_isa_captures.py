"""The disassembler against llvm-objdump 22's listing of the committed fixture code objects and, when ../shared
is present, of every code object in ../shared/captures.

The LLVM listings are stored in tests/fixtures/isa/fixtures_llvm.json.gz and captures_llvm.json.gz
(tools/makers/make_isa_fixtures.py), so these tests need the code objects but not LLVM.
"""

from __future__ import annotations

import collections
import gzip
import json

import pytest

from attdec.isa import disassemble, load_code_object
from attdec.model import target as resolve_target
from tests.conftest import FIXTURES, ROOT, SHARED

# (listing, the folder its paths are relative to)
ORACLES = [(FIXTURES / "isa" / "fixtures_llvm.json.gz", ROOT), (FIXTURES / "isa" / "captures_llvm.json.gz", SHARED)]


def _entries():
    """Every listed code object this machine has (the fixtures' always, the captures' with ../shared)."""
    found = []
    for oracle, root in ORACLES:
        for entry in json.loads(gzip.open(oracle, "rt").read()):
            if (root / entry["path"]).exists():
                found.append({**entry, "file": root / entry["path"]})
    return found


def _compare(entry):
    path = entry["file"]
    co = load_code_object(path.read_bytes(), str(path), arch=entry["arch"])
    mine = {i.address: i for i in disassemble(co.text, entry["arch"], co.text_vaddr)}
    rows = []
    for addr, size, text, target in entry["instructions"]:
        rows.append((addr, size, text, target, mine.get(addr)))
    return co, rows


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e["path"])
def test_size_mnemonic_and_targets_match_llvm(entry):
    _co, rows = _compare(entry)
    for addr, size, text, target, ins in rows:
        assert ins is not None, f"no instruction starts at {addr:#x} ({text})"
        assert (ins.size, ins.mnemonic) == (size, text.split()[0]), f"{addr:#x}: {ins.text!r} vs {text!r}"
        if target is not None:
            assert ins.target is not None, f"{addr:#x}: branch without target"
            simm = int(text.split()[-1])
            assert ins.target == addr + 4 + 4 * (simm - 65536 if simm >= 32768 else simm)


def test_full_text_agreement_at_least_99_percent_per_arch():
    per = collections.defaultdict(lambda: [0, 0])
    for entry in _entries():
        _, rows = _compare(entry)
        for _addr, _size, text, _target, ins in rows:
            per[entry["arch"]][0] += 1
            per[entry["arch"]][1] += ins is not None and ins.text == text
    for arch, (n, same) in per.items():
        assert same / n >= 0.99, f"{arch}: full text agrees on {same}/{n}"


def test_code_objects_load_with_target_and_kernels():
    for entry in _entries():
        path = entry["file"]
        co = load_code_object(path.read_bytes(), str(path))
        if co.container == "elf":
            assert co.arch == entry["arch"]
            assert co.kernels and all(co.text_vaddr <= k.entry < co.text_end for k in co.kernels)
            assert co.metadata.get("amdhsa.kernels")
        else:
            assert co.arch == "" and co.text_vaddr == 0x100
        assert resolve_target(entry["arch"]).family in ("gfx9", "gfx11", "gfx12")
