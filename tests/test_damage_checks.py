"""Damage is never silent: what the inputs record about themselves is checked (blob sizes and hashes,
code.json against its wave files, figures against the GPU's limits); each finding is a warning line on
stderr and the command exits 3, "decoded with damage", after printing what it could."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, captures, cli, real_data, shared_path


@pytest.fixture(params=captures("gfx1100/gemm_run0", synthetic=("gfx1100",)))
def capture(tmp_path, request):
    """A writable copy of a capture folder whose capture.json records its blobs' sizes and hashes."""
    out = tmp_path / "cap"
    shutil.copytree(request.param, out)
    for f in out.iterdir():
        f.chmod(0o644)
    return out


def first_blob(capture):
    """The first blob of the first dispatch: (its path, its name)."""
    name = json.loads((capture / "capture.json").read_text())["dispatches"][0]["blobs"][0]
    return capture / name, name


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("attdec: warning:")]


def test_undamaged_capture_exits_0(capture):
    r = cli("hotspots", capture, "--top", "1")
    assert r.returncode == 0, r.stderr
    assert not warnings(r.stderr)


@pytest.mark.parametrize("command", [("hotspots", "--top", "1"), ("waves",), ("kernel",)])
def test_flipped_bytes_warn_and_exit_3(capture, command):
    blob, name = first_blob(capture)
    data = bytearray(blob.read_bytes())
    at = min(1000, len(data) // 2)
    for i in range(10):
        data[at + i] ^= 0x01
    blob.write_bytes(bytes(data))
    r = cli(*command, capture)
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr
    assert any(name in w and "sha256" in w for w in warnings(r.stderr)), r.stderr


def test_cut_blob_names_both_sizes(capture):
    blob, name = first_blob(capture)
    size = blob.stat().st_size
    cut = min(3200, size // 2 // 16 * 16)
    blob.write_bytes(blob.read_bytes()[:cut])
    r = cli("hotspots", capture, "--top", "1")
    assert r.returncode == 3, r.stderr
    line = next(w for w in warnings(r.stderr) if name in w)
    assert f"{cut:,} bytes" in line and f"{size:,}" in line


def test_decode_exits_3_on_a_changed_blob(capture, tmp_path):
    """A blob changed so that it still decodes cleanly (its last byte, in padding) is caught by its hash."""
    blob, _ = first_blob(capture)
    data = bytearray(blob.read_bytes())
    data[-1] ^= 0x80
    blob.write_bytes(bytes(data))
    r = cli("decode", capture, "-o", tmp_path / "out.json", "--format", "json")
    assert r.returncode == 3, r.stderr
    assert any("sha256" in w for w in warnings(r.stderr)), r.stderr


# ---- a ui_output folder whose code.json is not its wave files' ------------------------------------

FLYDSL = ("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples")
FLASH = (*FLYDSL, "flash_attn_func", "att_viewer", "small", "ui_output_agent_32235_dispatch_44")
PA = (*FLYDSL, "pa", "att_viewer", "big", "ui_output_agent_10886_dispatch_209")
MQA = ("ui_output_samples", "jhinpan__flydsl-kernel-profiling", "examples", "pa_mqa_logits_fp4", "att_viewer", "big")


# ui_output folders written by tests/support/uisynth.py: the demo's and two fixtures, each of its own kernel
DEMO_UI = ROOT / "attdec" / "data" / "demo" / "ui_output_agent_4242_dispatch_7"
TINY_UI = FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3"
GFX12_UI = FIXTURES / "gfx12" / "ui_output_agent_8_dispatch_1"


def _folder(where) -> Path:
    return where if isinstance(where, Path) else shared_path(*where)


def _with_code_of(tmp_path, folder, other):
    out = tmp_path / "ui_output_agent_1_dispatch_1"
    shutil.copytree(_folder(folder), out)
    for f in out.iterdir():
        f.chmod(0o644)
    (out / "code.json").write_bytes((_folder(other) / "code.json").read_bytes())
    return out


def _real(*wheres) -> bool:
    return all(real_data(*w) for w in wheres)


SAMPLE_SETS = [pytest.param((DEMO_UI, TINY_UI, GFX12_UI), id="synthetic")]
if _real(FLASH, PA, MQA):
    SAMPLE_SETS.append(pytest.param((FLASH, PA, (*MQA, "ui_output_agent_64914_dispatch_234")), id="real"))
MIXES = [pytest.param(DEMO_UI, TINY_UI, id="synthetic")]
if _real(FLASH, PA):
    MIXES.append(pytest.param(FLASH, PA, id="real"))


@pytest.mark.parametrize("folders", SAMPLE_SETS)
def test_the_samples_as_they_are_exit_0(folders):
    for folder in folders:
        r = cli("waves", _folder(folder))
        assert r.returncode == 0 and not warnings(r.stderr), r.stderr


@pytest.mark.parametrize("folder,other", MIXES)
def test_another_kernels_code_json_is_named_and_loops_does_not_crash(tmp_path, folder, other):
    mixed = _with_code_of(tmp_path, folder, other)
    for command in (("hotspots", "--top", "1"), ("loops",), ("waves",)):
        r = cli(*command, mixed)
        assert r.returncode == 3, r.stderr
        assert "Traceback" not in r.stderr
        assert any("code.json" in w and "another" in w for w in warnings(r.stderr)), r.stderr


@pytest.mark.parametrize("folder", [pytest.param(DEMO_UI, id="synthetic"), *([FLASH] if _real(FLASH) else [])])
def test_a_name_table_without_kernel_names_is_no_evidence(tmp_path, folder):
    """rocprofv3 writes "<code object id> / <address>" where it knew no kernel name: that names no kernel."""
    out = tmp_path / "flash"
    shutil.copytree(_folder(folder), out)
    for f in out.iterdir():
        f.chmod(0o644)
    occ = json.loads((out / "occupancy.json").read_text())
    occ["dispatches"] = dict.fromkeys(occ["dispatches"], "4 / 0x1800")
    (out / "occupancy.json").write_text(json.dumps(occ))
    r = cli("waves", out)
    assert r.returncode == 0 and not warnings(r.stderr), r.stderr


def test_another_dispatchs_code_json_of_the_same_kernel_is_caught_by_its_counts(tmp_path):
    mixed = _with_code_of(
        tmp_path, (*MQA, "ui_output_agent_64914_dispatch_234"), (*MQA, "ui_output_agent_64914_dispatch_236")
    )
    r = cli("waves", mixed)
    assert r.returncode == 3, r.stderr
    (line,) = warnings(r.stderr)
    assert "code.json" in line and "executions" in line


# ---- figures past what the GPU can hold ----------------------------------------------------------


def test_achieved_occupancy_past_the_wave_limit_is_flagged(tmp_path):
    """A blob whose body repeats (tools/makers/make_repeated_blob.py) starts its waves over and over on the same
    SIMDs without ending them: 20 copies make 20 resident waves per SIMD, where gfx950 holds 8."""
    from tools.makers import make_repeated_blob

    cdir = shared_path("captures", "gfx950", "gemm_run0")
    r = make_repeated_blob.make(str(tmp_path / "x20.att"), str(cdir), "r_32_32_16_2_1_se0.att", 20, None)
    blob = ("--arch", r["arch"], "--code", r["code"], r["path"])
    h = cli("hotspots", "--top", "1", *blob)
    assert h.returncode == 3, h.stderr
    header = next(line for line in h.stdout.splitlines() if "achieved" in line)
    assert "IMPOSSIBLE" in header and "at most 8" in header
    assert any("more than the 8 a SIMD of gfx950 holds" in w for w in warnings(h.stderr)), h.stderr
    k = cli("kernel", "--format", "json", *blob)
    assert k.returncode == 3
    assert json.loads(k.stdout)["kernels"][0]["occupancy"]["achieved_over_limit"] == 8


@pytest.mark.parametrize("cap", captures("gfx950/gemm_run0"))
def test_achieved_occupancy_of_a_capture_is_not_flagged(cap):
    k = cli("kernel", "--format", "json", cap)
    assert k.returncode == 0, k.stderr
    assert all(s["occupancy"]["achieved_over_limit"] is None for s in json.loads(k.stdout)["kernels"])


def test_an_export_with_records_without_a_pc_is_not_damage(capture, tmp_path):
    """Records whose PC walk stopped sit on the kernel's label row of the wave files, which code.json does not
    count (rocprofv3 writes it so): the count check compares instruction rows only."""
    blob, _ = first_blob(capture)
    data = bytearray(blob.read_bytes())
    at = min(3000, len(data) // 2)
    for i in range(10):
        data[at + i] ^= 0x55
    blob.write_bytes(bytes(data))
    out = tmp_path / "ex"
    assert cli("export-ui", "-o", out, capture).returncode == 3  # the blob's own damage
    r = cli("waves", out)
    assert r.returncode == 0 and not warnings(r.stderr), r.stderr
