"""`attdec kernel`, `attdec counters` and the hotspots occupancy line, through the command line."""

from __future__ import annotations

import json

from conftest import invoke

from tests.conftest import FIXTURES, shared_path

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


def test_counters_table_json_csv():
    cap = shared_path("captures", "gfx950", "gemm_run0")
    r = run("counters", cap, "--format", "json")
    (d,) = json.loads(r.output)["dispatches"]
    totals = {c["name"]: c["total"] for c in d["counters"]}
    assert set(totals) == {
        "SQ_BUSY_CYCLES",
        "SQ_INSTS_VALU",
        "SQ_INSTS_SALU",
        "SQ_LDS_IDX_ACTIVE",
        "SQ_LDS_BANK_CONFLICT",
        "GRBM_GUI_ACTIVE",
        "TCC_HIT",
        "TCC_MISS",
    }
    sq = next(c for c in d["counters"] if c["name"] == "SQ_INSTS_VALU")
    assert len(sq["per_se"]) == 32 and sq["per_cu"] == []  # gfx9: SQ counters per XCC and SE only
    r = run("counters", cap)
    assert r.exit_code == 0 and "SQ_INSTS_VALU" in r.output and f"{totals['SQ_INSTS_VALU']:,}" in r.output
    r = run("counters", shared_path("captures", "gfx1100", "gemm_run0"), "--by", "cu", "--format", "csv")
    lines = r.output.strip().splitlines()
    assert lines[0].startswith("dispatch,kernel,counter") and len(lines) == 1 + 5 * 48  # 5 SQ counters x 48 WGPs
    r = run("counters", shared_path("captures", "gfx1100", "sync_run0"))
    assert "totals across dispatches" in r.output


def test_hotspots_header_has_the_occupancy_line():
    r = run("hotspots", shared_path("captures", "gfx1100", "gemm_run0"), "--top", "1")
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.output.splitlines() if ln.strip().startswith("occupancy"))
    assert "VGPR 10" in line and "16 waves/SIMD" in line and "achieved" in line
    r = run("hotspots", shared_path("captures", "gfx1100", "gemm_run0"), "--format", "json")
    k = json.loads(r.output)["kernel_resources"]
    assert k["vgpr"] == 10 and k["occupancy"]["theoretical"] == 16


def test_bad_input_is_one_line(tmp_path):
    one_line_error(run("kernel", tmp_path / "missing"), "no such file")
    bad = tmp_path / "bad.co"
    bad.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(11) + b"\xe0\x00" + bytes(40))
    one_line_error(run("kernel", bad), "bad.co")
    one_line_error(run("counters", tmp_path / "missing"), "no such file")
