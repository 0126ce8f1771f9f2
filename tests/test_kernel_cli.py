"""`attdec kernel`, `attdec counters` and the hotspots occupancy line, through the command line."""

from __future__ import annotations

import json

import pytest
from conftest import invoke

from tests.conftest import FIXTURES, SHARED, SYNTHETIC_MORE, real_data, shared_path

REQUIRED = {"name", "arch", "vgpr", "agpr", "sgpr", "lds_bytes", "scratch_bytes", "wave_size", "workgroup_size"}


def run(*args):
    return invoke([str(a) for a in args])


def one_line_error(r, *words):
    assert r.exit_code == 1, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("attdec: error:"), r.output
    assert all(w in lines[0] for w in words), lines[0]


def test_kernel_json_shape_and_values():
    r = run("kernel", shared_path("captures", "gfx1100", "sync_run0"), "--format", "json")
    assert r.exit_code == 0, r.output
    kernels = json.loads(r.output)["kernels"]
    assert [k["name"] for k in kernels] == ["custom_lds_sync", "E_32_4"]
    for k in kernels:
        assert set(k) >= REQUIRED and {"theoretical", "limited_by", "achieved_mean"} <= set(k["occupancy"])
    lds_sync, e32 = kernels
    # E_32_4 has a metadata note: the values llvm-readelf prints
    notes = json.loads((FIXTURES / "resources_llvm.json").read_text())["objects"]
    note = next(o["notes"]["E_32_4"] for o in notes.values() if "E_32_4" in o["notes"])
    assert (e32["vgpr"], e32["sgpr"], e32["wave_size"]) == (note[".vgpr_count"], note[".sgpr_count"], 32)
    assert e32["occupancy"]["theoretical"] == 16 and e32["occupancy"]["limited_by"] == "wave slots"
    assert e32["occupancy"]["achieved_mean"] > 0 and e32["flags"]["wgp_mode"] is False
    assert lds_sync["source"] == "kernel descriptor" and lds_sync["rounded"] and lds_sync["lds_bytes"] == 512


def test_kernel_on_bare_code_objects():
    co = shared_path("captures", "gfx1201", "handwritten_run0", "custom_handwritten.co")
    r = run("kernel", co, "--arch", "gfx1201", "--format", "json")
    (k,) = json.loads(r.output)["kernels"]
    assert k["arch"] == "gfx1201" and k["vgpr"] == 24 and k["occupancy"]["theoretical"] == 16
    assert "dispatch" not in k and k["occupancy"]["achieved_mean"] is None
    r = run("kernel", co)  # a minimal container does not name its GPU
    assert r.exit_code == 0 and "give --arch" in r.output
    elf = shared_path("captures", "gfx950", "gemm_run0", "r_32_32_16_2.co")
    r = run("kernel", elf)
    assert r.exit_code == 0 and "8 waves/SIMD, 32 per CU" in r.output and "achieved" not in r.output


def test_kernel_on_ui_output_is_honest():
    root = shared_path("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples", "vec_add")
    r = run("kernel", root, "--format", "json")
    (k,) = json.loads(r.output)["kernels"]
    assert k["lower_bounds"] and k["source"] == "listing (lower bounds)" and k["vgpr"] == 9
    assert k["lds_bytes"] == 0 and k["scratch_bytes"] is None and k["workgroup_size"] is None
    occ = k["occupancy"]
    assert occ["theoretical"] is None and occ["candidates"] and occ["achieved_mean"] > 0
    r = run("kernel", root)
    assert "VGPR       ≥ 9" in r.output and "no code object" in r.output


GFX1100_GEMM_COUNTERS = {
    "SQ_BUSY_CYCLES",
    "SQ_INSTS_VALU",
    "SQ_INSTS_SALU",
    "SQC_LDS_IDX_ACTIVE",
    "SQC_LDS_BANK_CONFLICT",
    "GRBM_GUI_ACTIVE",
    "GL2C_HIT",
    "GL2C_MISS",
}


def _counter_captures() -> list:
    """(capture, its counters, SQ_INSTS_VALU's SEs and WGPs, `--by cu` CSV rows, dispatches): the synthetic
    synth_run1 (2 SEs x 2 SAs x 2 WGPs, two dispatches), then the real ones ../shared has."""
    params = [
        pytest.param(
            SYNTHETIC_MORE,
            {"SQ_INSTS_VALU", "SQ_WAVES", "GRBM_GUI_ACTIVE", "GL2C_HIT"},
            (2, 8),
            2 * 2 * 8,
            2,
            id="synthetic",
        )
    ]
    real = {
        "gfx950/gemm_run0": (
            {"SQ_BUSY_CYCLES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT"}
            | {"GRBM_GUI_ACTIVE", "TCC_HIT", "TCC_MISS"},
            (32, 0),  # gfx9: SQ counters per XCC and SE only
            None,
            1,
        ),
        "gfx1100/gemm_run0": (GFX1100_GEMM_COUNTERS, (6, 48), 5 * 48, 1),  # 5 SQ counters x 48 WGPs
        "gfx1100/sync_run0": (GFX1100_GEMM_COUNTERS, (6, 48), None, 2),
    }
    for rel, want in real.items():
        if real_data("captures", rel):
            params.append(pytest.param(SHARED / "captures" / rel, *want, id=rel))
    return params


@pytest.mark.parametrize("cap,names,split,cu_rows,dispatches", _counter_captures())
def test_counters_table_json_csv(cap, names, split, cu_rows, dispatches):
    r = run("counters", cap, "--format", "json")
    ds = json.loads(r.output)["dispatches"]
    assert len(ds) == dispatches
    totals = {c["name"]: c["total"] for c in ds[0]["counters"]}
    assert set(totals) == names
    sq = next(c for c in ds[0]["counters"] if c["name"] == "SQ_INSTS_VALU")
    assert (len(sq["per_se"]), len(sq["per_cu"])) == split
    r = run("counters", cap)
    assert r.exit_code == 0 and "SQ_INSTS_VALU" in r.output and f"{totals['SQ_INSTS_VALU']:,}" in r.output
    assert ("totals across dispatches" in r.output) == (dispatches > 1)
    if cu_rows is not None:
        r = run("counters", cap, "--by", "cu", "--format", "csv")
        lines = r.output.strip().splitlines()
        assert lines[0].startswith("dispatch,kernel,counter") and len(lines) == 1 + cu_rows


def _occupancy_captures() -> list:
    """(capture, VGPRs its kernel's metadata note gives, waves per SIMD that allows on its GPU)."""
    params = [pytest.param(SYNTHETIC_MORE, 4, 16, id="synthetic")]
    if real_data("captures", "gfx1100", "gemm_run0"):
        params.append(pytest.param(SHARED / "captures/gfx1100/gemm_run0", 10, 16, id="gemm"))
    return params


@pytest.mark.parametrize("cap,vgpr,waves", _occupancy_captures())
def test_hotspots_header_has_the_occupancy_line(cap, vgpr, waves):
    r = run("hotspots", cap, "--top", "1")
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.output.splitlines() if ln.strip().startswith("occupancy"))
    assert f"VGPR {vgpr}," in line and f"{waves} waves/SIMD" in line and "achieved" in line
    r = run("hotspots", cap, "--format", "json")
    docs = json.loads(r.output)
    for doc in docs.get("dispatches", [docs]):
        k = doc["kernel_resources"]
        assert k["vgpr"] == vgpr and k["occupancy"]["theoretical"] == waves


def test_bad_input_is_one_line(tmp_path):
    one_line_error(run("kernel", tmp_path / "missing"), "no such file")
    bad = tmp_path / "bad.co"
    bad.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(11) + b"\xe0\x00" + bytes(40))
    one_line_error(run("kernel", bad), "bad.co")
    one_line_error(run("counters", tmp_path / "missing"), "no such file")
