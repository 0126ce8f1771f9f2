"""Kernel resources from code objects equal what LLVM reports for every code object in ../shared/captures.

The expected values are llvm-readelf-22 --notes (the metadata note) and llvm-objdump-22's `.amdhsa_*`
directives (the kernel descriptor), stored by tools/makers/make_resource_fixtures.py. When Debian's LLVM 22 is
installed the same commands are run again, so a capture added later is checked too; otherwise code objects
the fixture does not have are skipped with the reason.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from attdec.isa import disassemble, load_code_object
from attdec.isa.resources import kernel_resources
from attdec.model.target import target
from tests.conftest import FIXTURES, shared_path
from tools.makers import make_resource_fixtures as llvm_tool

STORED = json.loads((FIXTURES / "resources_llvm.json").read_text())["objects"]
LLVM = llvm_tool.tools("-22")

# metadata-note key -> KernelResources field
NOTE_FIELDS = {
    ".vgpr_count": "vgpr",
    ".agpr_count": "agpr",
    ".sgpr_count": "sgpr",
    ".group_segment_fixed_size": "lds_bytes",
    ".private_segment_fixed_size": "scratch_bytes",
    ".kernarg_segment_size": "kernarg_bytes",
    ".wavefront_size": "wave_size",
    ".max_flat_workgroup_size": "workgroup_size",
    ".uses_dynamic_stack": "dynamic_stack",
    ".sgpr_spill_count": "sgpr_spill",
    ".vgpr_spill_count": "vgpr_spill",
}


def _code_objects():
    caps = shared_path("captures")
    seen = {}
    for p in sorted(caps.glob("*/*/*.co")):
        seen.setdefault(hashlib.sha256(p.read_bytes()).hexdigest(), p)
    return seen


def _expected(sha, path):
    if LLVM is not None:
        return llvm_tool.llvm_facts(path, *LLVM)
    if sha not in STORED:
        pytest.skip(f"{path}: not in tests/fixtures/resources_llvm.json and llvm-readelf-22 is not installed")
    return STORED[sha]


def _arch(path):
    return json.loads((path.parent / "capture.json").read_text())["gfx_arch"]


def test_every_capture_code_object_matches_llvm():
    objects = _code_objects()
    assert len(objects) >= 33  # the shared captures hold 33 distinct code objects
    checked_notes = checked_kds = minimal = 0
    for sha, path in objects.items():
        exp = _expected(sha, path)
        arch = _arch(path)
        co = load_code_object(path.read_bytes(), str(path))
        if co.container != "elf":
            minimal += 1
            assert exp["notes"] == {} and exp["descriptors"] == {}
            continue
        assert sorted(k.name for k in co.kernels) == sorted(exp["notes"]), path
        for k in co.kernels:
            res = co.resources(k, target(arch))
            note = exp["notes"][k.name]
            got = {key: getattr(res, field) for key, field in NOTE_FIELDS.items() if key in note}
            assert got == {key: note[key] for key in got}, f"{path}: {k.name}"
            assert res.source == "metadata note + kernel descriptor" and not res.rounded
            checked_notes += 1
            kd = exp["descriptors"].get(k.name, {})
            if "error" in kd:  # ROCm clang sets the gfx9-only SGPR block count on gfx10+; LLVM 22 refuses
                assert "SGPR_COUNT reserved bits" in kd["error"] and res.arch_vgpr is not None
                continue
            # the descriptor alone, as attdec reads minimal containers: the same fields, register counts granulated
            only = kernel_resources(k.name, {}, k.descriptor, target(arch))
            assert only.vgpr == kd["next_free_vgpr"] and only.vgpr >= res.vgpr, f"{path}: {k.name}"
            assert only.lds_bytes == kd["group_segment_fixed_size"] == res.lds_bytes
            assert only.scratch_bytes == kd["private_segment_fixed_size"] == res.scratch_bytes
            assert only.kernarg_bytes == kd["kernarg_size"]
            assert only.dynamic_stack == bool(kd["uses_dynamic_stack"])
            if "accum_offset" in kd:  # gfx90a+: AGPRs start at accum_offset; the note's count rounds arch VGPRs to 4
                assert only.arch_vgpr == kd["accum_offset"] == -(-max(res.arch_vgpr, 1) // 4) * 4
            if "wavefront_size32" in kd:  # gfx10+
                assert only.wave_size == (32 if kd["wavefront_size32"] else 64) == res.wave_size
                assert only.wgp_mode == bool(kd["workgroup_processor_mode"])
                assert only.sgpr is None  # not in the gfx10+ descriptor
            else:
                assert only.sgpr == kd["next_free_sgpr"] and only.sgpr >= res.sgpr
            checked_kds += 1
    assert checked_notes >= 25 and checked_kds >= 19 and minimal >= 8


def test_registers_named_in_the_code_fit_the_counts():
    """Every register the disassembly names is below the count the code object gives (the minimal
    containers' descriptor counts included, which LLVM cannot read)."""
    import re

    reg = re.compile(r"(?<![\w.])([vs])(?:(\d+)|\[\d+:(\d+)\])")
    for path in _code_objects().values():
        arch = _arch(path)
        co = load_code_object(path.read_bytes(), str(path), arch=arch)
        for k in co.kernels:
            res = co.resources(k, target(arch))
            end = k.entry + k.size if k.size else co.text_end
            top = {"v": -1, "s": -1}
            for ins in disassemble(co.text[k.entry - co.text_vaddr : end - co.text_vaddr], arch, k.entry, lenient=True):
                for kind, one, hi in reg.findall(ins.text.partition(" ")[2]):
                    top[kind] = max(top[kind], int(one or hi))
            assert top["v"] < res.vgpr, f"{path}: v{top['v']} but {res.vgpr} VGPRs"
            if res.sgpr is not None and co.container == "elf":
                assert top["s"] < res.sgpr, f"{path}: s{top['s']} but {res.sgpr} SGPRs"
            if co.container != "elf":
                assert res.source == "kernel descriptor" and "vgpr" in res.rounded and res.vgpr % 8 == 0


def test_unified_agprs_from_metadata_and_descriptor():
    # gfx90a+ metadata: .vgpr_count 65 = align(42 arch VGPRs, 4) + 21 AGPRs (what llc-22 emits for such a kernel)
    meta = {".vgpr_count": 65, ".agpr_count": 21, ".sgpr_count": 65, ".wavefront_size": 64}
    r = kernel_resources("k", meta, None, target("gfx90a"))
    assert (r.vgpr, r.agpr, r.arch_vgpr) == (65, 21, 44)
    r = kernel_resources("k", {".vgpr_count": 42, ".agpr_count": 21}, None, target("gfx908"))  # separate AGPR file
    assert (r.vgpr, r.agpr, r.arch_vgpr) == (42, 21, 42)
    kd = bytearray(64)
    kd[44] = 10  # accum_offset (10 + 1) * 4 = 44
    kd[48] = 8  # granulated VGPRs (8 + 1) * 8 = 72 on gfx90a+
    r = kernel_resources("k", {}, bytes(kd), target("gfx942"))
    assert (r.vgpr, r.arch_vgpr, r.agpr, r.wave_size) == (72, 44, 28, 64)
    assert set(r.rounded) == {"vgpr", "sgpr", "arch_vgpr", "agpr"}


def test_feature_flags_from_e_flags():
    path = shared_path("captures", "gfx950", "gemm_run0", "r_32_32_16_2.co")
    co = load_code_object(path.read_bytes(), str(path))
    r = co.resources(co.kernels[0])
    assert (r.xnack, r.sramecc, r.wgp_mode) == ("any", "any", None)  # e_flags 0x54f


def test_stored_fixture_is_what_llvm_says_now():
    if LLVM is None:
        pytest.skip("llvm-readelf-22/llvm-objdump-22 not installed (Debian llvm-22): the stored fixture is used")
    for sha, path in _code_objects().items():
        if sha in STORED:
            live = llvm_tool.llvm_facts(path, *LLVM)
            assert live == {k: STORED[sha][k] for k in ("notes", "descriptors")}, path
